"""The Python API's arguments, checked as strictly as the CLI's options (``api.py``).

The API passed ``deadline_s=nan`` through (the constraint vanished), ``deadline_s=-1`` gave no
pick and no error, ``size=2**80`` raised OverflowError and ``max_nodes=-1`` an empty list; now
each is one :class:`~hpcds1mpi.errors.ConfigError` naming the argument.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field, StrictStr

from hpcds1mpi.config import DEVICES
from hpcds1mpi.errors import ConfigError

from .base import Count, Joules, Schema, Seconds, Size, validate

Text = Annotated[StrictStr, Field(min_length=1, pattern=r"\S")]


class ApiArguments(Schema):
    """Every argument an API function may be given; each function passes only its own."""

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
    coverage: Annotated[float, Field(ge=0.5, lt=1.0)] = 0.95


def check_api_arguments(function: str, **values) -> None:
    """Raise one ConfigError (``"<function>(): <argument> <what is wrong>; ..."``) for the first
    argument out of its type or range; ints stand for floats (``deadline_s=60``)."""
    import numbers

    floats = ("deadline_s", "energy_budget_j", "time_limit_s", "coverage")

    def plain(key, value):  # numpy scalars as Python numbers; ints stand for floats
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return value
        if isinstance(value, numbers.Integral):
            return float(value) if key in floats else int(value)
        return float(value)

    data = {k: plain(k, v) for k, v in values.items()}
    validate(ApiArguments, data, source=f"{function}()", error=ConfigError,
             fix="see help(hpcds1mpi) for each argument's type and range")
