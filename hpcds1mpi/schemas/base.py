"""The schemas' common ground: the strict base model, the shared field types, and
:func:`validate`, the one helper that turns pydantic's verdict into a one-line project error."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictInt,
                      StrictStr, ValidationError, model_validator)
from pydantic_core import PydanticCustomError

from hpcds1mpi.errors import HpcdsError

from .limits import (MAX_COUNT, MAX_GPUS_PER_NODE, MAX_JOULES, MAX_MEMORY_GB, MAX_SECONDS,
                     MAX_SIZE, MAX_WATTS)

__all__ = ["Count", "Count0", "Flag", "GPUCount", "Joules", "MemoryGB", "Name", "Schema", "Seconds",
           "Seconds0", "Size", "Watts", "describe", "key_path", "validate"]


class Schema(BaseModel):
    """A strict model: no coercion (``"no"`` is not a bool, ``4.5`` not an int), no NaN or
    infinity, and an unknown key is refused with the list of known ones."""

    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = {f.alias or name for name, f in cls.model_fields.items()}
            unknown = [str(k) for k in data if k not in known]
            if unknown:
                raise PydanticCustomError(
                    "unknown_key", "unknown key {key}",
                    {"key": unknown[0], "known": ", ".join(
                        f.alias or name for name, f in cls.model_fields.items())})
        return data


# Field types shared by the schemas (bounds: limits.py).
Count = Annotated[StrictInt, Field(gt=0, le=MAX_COUNT)]
Count0 = Annotated[StrictInt, Field(ge=0, le=MAX_COUNT)]
GPUCount = Annotated[StrictInt, Field(ge=0, le=MAX_GPUS_PER_NODE)]
Size = Annotated[StrictInt, Field(gt=0, le=MAX_SIZE)]
MemoryGB = Annotated[float, Field(gt=0, le=MAX_MEMORY_GB)]
Watts = Annotated[float, Field(ge=0, le=MAX_WATTS)]
Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS)]
Seconds0 = Annotated[float, Field(ge=0, le=MAX_SECONDS)]
Joules = Annotated[float, Field(gt=0, le=MAX_JOULES)]
Flag = StrictBool
Name = StrictStr


def key_path(loc: tuple) -> str:
    """pydantic's error location as a key path: ``clusters.a.partitions.cpu.memory_gb``,
    ``kernel[1].sizes`` (list positions in brackets)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_KINDS = {"int_type": "an integer", "int_from_float": "an integer", "int_parsing": "an integer",
          "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
          "bool_parsing": "true or false", "string_type": "a string", "list_type": "a list",
          "dict_type": "a table", "model_type": "a table", "model_attributes_type": "a table",
          "finite_number": "a finite number (not nan or inf)", "tuple_type": "a list"}


def describe(error: dict) -> str:
    """One pydantic error (an entry of ``ValidationError.errors()``) in our words."""
    kind, loc, ctx = error["type"], tuple(error["loc"]), error.get("ctx") or {}
    where = key_path(loc)
    got = f", got {_shown(error.get('input'))}" if "input" in error else ""
    if kind == "unknown_key":
        key = ".".join(filter(None, [where, ctx["key"]]))
        return f"unknown key {key} (known: {ctx['known']})"
    if kind == "extra_forbidden":
        return f"unknown key {where}"
    if kind == "missing":
        parent = key_path(loc[:-1])
        return f"{parent} is missing required key {loc[-1]!r}" if parent else \
            f"missing required key {loc[-1]!r}"
    if kind in _KINDS:
        return f"{where} must be {_KINDS[kind]}{got}"
    bounds = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<",
              "less_than_equal": "<="}
    if kind in bounds:
        limit = next(iter(ctx.values()))
        return f"{where} must be {bounds[kind]} {limit:g}{got}" if isinstance(limit, float) \
            else f"{where} must be {bounds[kind]} {limit}{got}"
    if kind == "literal_error":
        return f"{where} must be {ctx.get('expected', 'one of the listed values')}{got}"
    if kind == "too_short":
        return f"{where} must have at least {ctx.get('min_length')} item(s){got}"
    if kind == "too_long":
        return f"{where} must have at most {ctx.get('max_length')} item(s){got}"
    message = str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    return f"{where}: {message}" if where else message


def validate(model: type[BaseModel], data: Any, *, source: str, error: type[HpcdsError],
             fix: str) -> BaseModel:
    """``data`` checked against ``model``, or ``error`` with one line.

    Args:
        model: the schema.
        data: what was read (a TOML document, a JSON manifest, file attributes).
        source: what the data came from, first in the message (a file path).
        error: the :class:`~hpcds1mpi.errors.HpcdsError` subclass to raise.
        fix: what the user should do, last in the message (``"fix it in the cluster file"``).

    Returns:
        The validated model instance.

    Raises:
        error: ``"<source>: <key path> <what is wrong>; <fix>"``, the first problem found,
            with how many more there are.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = exc.errors(include_url=False)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise error(f"{source}: {describe(problems[0])}{more}; {fix}") from None
