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


_TEXTS = ("workload", "partition", "user", "job_name")


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


def check_api_arguments(function: str, *, required: tuple[str, ...] = (), **values) -> None:
    """Raise one ConfigError (``"<function>(): <argument> <what is wrong>; ..."``) for the first
    argument out of its type or range, or one of ``required`` that is None; ints stand for
    floats (``deadline_s=60``)."""
    import numbers

    for key in required:
        if values.get(key) is None:
            raise ConfigError(f"{function}(): {key} is required, got None; "
                              "see help(hpcds1mpi) for each argument's type and range")
    for key, value in values.items():  # a blank name asks nothing (as the CLI refuses it)
        if key in _TEXTS and isinstance(value, str) and not value.strip():
            raise ConfigError(f"{function}(): {key} is blank, got {value!r}; give a name")

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
