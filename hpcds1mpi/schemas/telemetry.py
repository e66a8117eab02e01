"""The schema of a telemetry file's attributes (the HDF5 layout: ``records/telemetry/layout.py``).

h5py gives numpy scalars and bytes; they are made plain first, then checked strictly:
``schema_version`` an integer (``"abc"`` was a ValueError traceback), ``attempts`` the JSON list
of ``[machine_id, run_id, starts]`` the writer stores, ``plan`` JSON text, times finite.
Attributes this version does not know are kept as they are (a newer writer's survive).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Optional

from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr,
                      field_validator, model_validator)

from hpcds1mpi.errors import TelemetryError

from .base import validate
from .limits import MAX_COUNT

FIX = ("the file was changed outside hpcds1mpi: restore it from a copy, or sweep again into a "
       "new file")


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if type(value).__module__ == "numpy" and hasattr(value, "item") and \
            getattr(value, "ndim", 0) == 0:
        return value.item()
    return value


class TelemetryAttrs(BaseModel):
    """A telemetry file's attributes: the ones this version reads, typed; any others kept."""

    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="allow")

    format: StrictStr
    schema_version: StrictInt
    attempts: list[tuple[StrictStr, StrictStr, Annotated[StrictInt, Field(ge=1, le=MAX_COUNT)]]] = []
    plan: Optional[StrictStr] = None
    created_at: Optional[Annotated[float, Field(ge=0)]] = None
    last_launch_ranks: Optional[Annotated[StrictInt, Field(ge=1, le=MAX_COUNT)]] = None
    sweep_complete: Optional[StrictBool | Annotated[StrictInt, Field(ge=0, le=1)]] = None

    @model_validator(mode="before")
    @classmethod
    def _plain_values(cls, data: Any) -> Any:
        return {str(k): _plain(v) for k, v in data.items()} if isinstance(data, dict) else data

    @field_validator("attempts", mode="before")
    @classmethod
    def _attempts_json(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not JSON ({exc.msg})") from None
        if isinstance(value, list):  # JSON has no tuples; strict mode wants one per item
            value = [tuple(item) if isinstance(item, list) else item for item in value]
        return value

    @field_validator("plan")
    @classmethod
    def _plan_json(cls, value: Optional[str]) -> Optional[str]:
        if value is not None:
            try:
                json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not JSON ({exc.msg})") from None
        return value


def check_attrs(attrs: dict, source: str) -> TelemetryAttrs:
    """A telemetry file's attributes, checked (:class:`TelemetryAttrs`).

    Raises:
        TelemetryError: one line naming the file, the attribute and what to do.
    """
    return validate(TelemetryAttrs, attrs, source=source, error=TelemetryError, fix=FIX)
