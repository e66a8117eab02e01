"""The Python API's arguments, checked as strictly as the CLI's options (``api.py``).

The API passed ``deadline_s=nan`` through (the constraint vanished), ``deadline_s=-1`` gave no
pick and no error, ``size=2**80`` raised OverflowError and ``max_nodes=-1`` an empty list; now
each is one :class:`~hpcds1mpi.errors.ConfigError` naming the argument. The arguments a
schema cannot type (a program as a command line, path or list; configurations as objects or
dicts) are normalised by :func:`program_argument` and :func:`configurations_argument`, and
:func:`api_wording` says the decide layer's errors with the arguments' names, not the CLI's.
"""

from __future__ import annotations

import numbers
import os
from contextlib import contextmanager
from typing import Annotated, Iterable, Literal, Mapping, Optional

from pydantic import Field, StrictStr

from hpcds1mpi.config import DEVICES, Configuration
from hpcds1mpi.errors import ConfigError, HpcdsError

from .base import Count, Joules, Schema, Seconds, Size, validate
from .limits import MAX_COUNT, MAX_MEMORY_GB

Text = Annotated[StrictStr, Field(min_length=1, pattern=r"\S")]
#: The share of jobs a walltime is meant to cover.
Share = Annotated[float, Field(ge=0.5, lt=1.0)]
#: A job's requested memory (GB), in the job table's range (``schemas.jobs.JOB_RANGES``).
JobMemoryGB = Annotated[float, Field(ge=0.0, le=MAX_MEMORY_GB * MAX_COUNT)]


_TEXTS = ("workload", "partition", "user", "job_name", "account")


class ApiArguments(Schema):
    """Every argument an API function may be given; each function passes only its own (said
    to the user in ``api.ARGUMENT_RANGES``: keep the two alike)."""

    workload: Optional[Text] = None
    size: Optional[Size] = None
    objective: Literal["time", "energy", "edp", "balanced"] = "time"
    max_nodes: Optional[Count] = None
    deadline_s: Optional[Seconds] = None
    energy_budget_j: Optional[Joules] = None
    device: Optional[Literal[DEVICES]] = None  # the one list of devices (config.py)
    partition: Optional[Text] = None
    user: Optional[Text] = None
    job_name: Optional[Text] = None
    nodes: Optional[Count] = None
    procs: Optional[Count] = None
    time_limit_s: Optional[Seconds] = None
    partition_limit_s: Optional[Seconds] = None  # decide.walltime.propose_walltime's
    account: Optional[Text] = None  # decide.walltime.propose_walltime's (s46)
    mem_req_gb: Optional[JobMemoryGB] = None  # decide.walltime.propose_walltime's (s46)
    coverage: Share = 0.95
    quantile: Share = 0.95  # decide.walltime.propose_walltime's name for coverage


def check_api_arguments(function: str, *, required: tuple[str, ...] = (), **values) -> None:
    """Raise one ConfigError (``"<function>(): <argument> <what is wrong>; ..."``) for the first
    argument out of its type or range, or one of ``required`` that is None; ints stand for
    floats (``deadline_s=60``)."""
    import numbers

    for key in required:
        if values.get(key) is None:
            raise ConfigError(f"{function}(): {key} is required, got None; "
                              "see help(hpcds1mpi.api) for each argument's type and range")
    for key, value in values.items():  # a blank name asks nothing (as the CLI refuses it)
        if key in _TEXTS and isinstance(value, str) and not value.strip():
            raise ConfigError(f"{function}(): {key} is blank, got {value!r}; give a name")

    floats = ("deadline_s", "energy_budget_j", "time_limit_s", "partition_limit_s", "coverage",
              "quantile", "mem_req_gb")

    def plain(key, value):  # numpy scalars as Python numbers; ints stand for floats
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return value
        if isinstance(value, numbers.Integral):
            return float(value) if key in floats else int(value)
        return float(value)

    data = {k: plain(k, v) for k, v in values.items()}
    validate(ApiArguments, data, source=f"{function}()", error=ConfigError,
             fix="see help(hpcds1mpi.api) for each argument's type and range")


def submit_time_argument(value, function: str = "propose_walltime"):
    """``value`` as a :class:`pandas.Timestamp` (a date and time as text, a ``datetime``,
    ``date`` or ``numpy.datetime64``; None stays None: not given), or one ConfigError naming
    ``function()``: "yesterday" was a pandas DateParseError traceback (s45 tester C3), and a
    number is no time (pandas reads it as nanoseconds after 1970). A time with a zone is put
    onto naive UTC, the clock ingest stores job times in (compared with them, it was a
    TypeError traceback: s45 tester F9)."""
    import datetime

    import numpy as np
    import pandas as pd

    if value is None:
        return None
    fix = "give a date and time such as '2014-08-01 12:00' or a datetime"
    if not isinstance(value, (str, datetime.date, np.datetime64)):
        raise ConfigError(f"{function}(): submit_time must be a date and time, got "
                          f"{type(value).__name__}; {fix}")
    try:
        stamp = pd.Timestamp(value)
    except (ValueError, TypeError, OverflowError):
        stamp = pd.NaT
    if pd.isna(stamp):
        raise ConfigError(f"{function}(): submit_time {value!r} is not a date and time "
                          f"pandas reads; {fix}")
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return stamp


#: The CLI options that shared error texts name, as the API's arguments (the decide layer's
#: messages are written for the command line; the API and HTTP say them in their own words).
API_NAMES = {"--size": "size", "--workload": "workload", "--partition": "partition",
             "--device": "device", "--objective": "objective", "--max-nodes": "max_nodes",
             "--deadline": "deadline_s", "--energy-budget": "energy_budget_j",
             "--emit": "the scheduler", "--cluster": "cluster", "--nodes": "nodes",
             "--model": "the model"}


def reworded(text: str, names: dict[str, str]) -> str:
    """``text`` with each CLI option it names (``--deadline``, ``--cluster FILE``) replaced by
    its name in ``names`` (longest option first, so ``--max-nodes`` is never read as
    ``--nodes``); an option ``names`` lacks stays as it is."""
    import re

    def one(match):
        return names.get(match.group(1), match.group(0))

    return re.sub(r"(--[a-z][a-z-]*)(?: (?:FILE|DIR|N|S|J))?(?![a-z-])", one, text)


@contextmanager
def api_wording():
    """The decide layer's errors in the API's words: its arguments, not the CLI's options
    (``relax deadline_s``, not ``relax --deadline``); same error type, one line."""
    try:
        yield
    except HpcdsError as exc:
        text = reworded(str(exc), API_NAMES)
        if text == str(exc):
            raise
        try:
            again = type(exc)(text)
        except Exception:  # noqa: BLE001 - an error type built otherwise: as it came
            raise exc from None
        raise again from None


def program_argument(program, function: str = "script") -> str | list[str] | None:
    """``program`` as ``emit_script`` takes it (a command line, a token list or None), or one
    ConfigError naming ``function()``: an int, a float, bytes or a dict was iterated or
    refused with a TypeError."""
    def token(value) -> bool:  # a number stands for itself ("./app", 128)
        return isinstance(value, (str, os.PathLike)) or (
            isinstance(value, numbers.Real) and not isinstance(value, bool))

    if program is None or isinstance(program, str):
        return program
    if isinstance(program, os.PathLike):
        return [os.fspath(program)]
    if isinstance(program, (list, tuple)):
        bad = next((i for i, t in enumerate(program) if not token(t)), None)
        if bad is None:
            return [os.fspath(t) if isinstance(t, os.PathLike) else str(t) for t in program]
        raise ConfigError(f"{function}(): program[{bad}] must be a string, a path or a number, got "
                          f"{type(program[bad]).__name__}")
    raise ConfigError(f"{function}(): program must be a command line (str), a path, a list of its "
                      f"arguments, or None for the workload's kernel, got "
                      f"{type(program).__name__}")


def configurations_argument(configs) -> list[Configuration]:
    """``configs`` as Configuration objects; one ConfigError naming the first that is not one
    (or a dict of its fields)."""
    if isinstance(configs, (Configuration, Mapping, str, bytes)) or not isinstance(
            configs, Iterable):
        raise ConfigError(f"predict(): configs must be a list of Configuration objects or "
                          f"dicts of their fields, got {type(configs).__name__}")
    out = []
    for i, c in enumerate(configs):
        if isinstance(c, Configuration):
            out.append(c)
            continue
        if not isinstance(c, Mapping):
            raise ConfigError(f"predict(): configs[{i}] must be a Configuration or a dict of "
                              f"its fields, got {type(c).__name__}")
        unknown = sorted(map(str, set(c) - set(Configuration.__dataclass_fields__)))
        if unknown:
            raise ConfigError(f"predict(): configs[{i}] has unknown key {unknown[0]!r} "
                              f"(known: {', '.join(Configuration.__dataclass_fields__)})")
        try:
            out.append(Configuration(**c))
        except ConfigError as exc:
            raise ConfigError(f"predict(): configs[{i}]: {exc}") from None
    return out
