"""The schema of a sweep plan (a TOML file, or the same document built from ``sweep``'s flags;
the format: docs/telemetry.md, "Sweep plans").

Settings are typed strictly: ``valid_only = "no"`` is refused, not read as true; counts are
positive integers, times finite seconds, all bounded (:mod:`.limits`). Ranges (``sizes``,
``nodes``, ...) have their own small grammar (``"1..8"``, ``"1,2,4"``, lists) and bounds, checked
by :func:`hpcds1mpi.measure.plan.parse_ints`; here they are only passed through.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import Field, StrictInt, StrictStr, field_validator, model_validator

from hpcds1mpi.errors import ConfigError

from .base import Count, Count0, Flag, Schema, Seconds, Seconds0, validate
from .limits import MAX_SEED
from .sweep_defaults import KERNEL, UNCAPPED, lifts_cap

FIX = "fix it in the plan file (or the sweep flag of the same name)"
#: ``sweep`` flags for external programs; a plan file has no place for them.
PROGRAM_KEYS = ("command", "program", "label", "workdir")


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python number it holds (strict models refuse numpy types)."""
    return value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") else value


class _Ranges(Schema):
    """The ranges a ``[sweep]`` or a ``[[kernel]]`` may give (grammar: ``parse_ints``)."""

    sizes: Any = None
    nodes: Any = None
    ranks_per_node: Any = None
    threads: Any = None
    devices: Any = None
    precisions: Any = None

    @model_validator(mode="before")
    @classmethod
    def _numpy_scalars(cls, data: Any) -> Any:
        return {k: _plain(v) for k, v in data.items()} if isinstance(data, dict) else data


class SweepSettings(_Ranges):
    """``[sweep]``: how every configuration is measured, and ranges for every kernel."""

    min_time: Seconds0 = KERNEL.min_time
    min_repeats: Count = KERNEL.min_repeats
    max_repeats: Count = KERNEL.max_repeats
    warmup: Count0 = KERNEL.warmup
    timeout: Seconds = KERNEL.timeout
    seed: Annotated[StrictInt, Field(ge=0, le=MAX_SEED)] = 0
    valid_only: Flag = False
    check: Flag = True
    snapshot_every: Seconds0 = 30.0
    retry_crashed: Flag = False
    max_attempts: Count = 2
    #: Each problem's configurations measured this many times in turn (seeds seed, seed+1, ...):
    #: a machine whose speed drifts then slows every configuration of a round alike.
    rounds: Annotated[StrictInt, Field(ge=1, le=100)] = 1
    #: Up to this many more rounds, each measuring only the configurations still within
    #: race_within of the problem's best median (hpcds1mpi.measure.race).
    race_rounds: Annotated[StrictInt, Field(ge=0, le=100)] = 0
    race_within: Annotated[float, Field(gt=0, le=1)] = 0.05

    @property
    def lifted_cap(self) -> bool:
        """Whether a ``min_time`` given without ``max_repeats`` lifted the default cap."""
        given = self.model_fields_set
        return lifts_cap(self.min_time if "min_time" in given else None,
                         self.max_repeats if "max_repeats" in given else None)

    @model_validator(mode="after")
    def _repeats(self):
        if self.lifted_cap:  # asked for measured time: the default cap would cut it short (B6)
            object.__setattr__(self, "max_repeats", UNCAPPED)  # not marked given
        if self.min_repeats > self.max_repeats:
            raise ValueError(f"min_repeats {self.min_repeats} > max_repeats {self.max_repeats}: "
                             "contradictory; lower min_repeats or raise max_repeats")
        if self.seed + self.rounds + self.race_rounds - 1 > MAX_SEED:
            raise ValueError(f"seed {self.seed} + rounds {self.rounds} + race_rounds "
                             f"{self.race_rounds} passes the largest seed {MAX_SEED}; lower "
                             "seed or rounds")
        return self


def _plain_option(value: Any) -> bool:
    """Whether ``value`` is what a run's JSON ``extra`` column can hold: true/false, a whole
    or finite number, a word, or a list of those (a TOML date or table raised TypeError)."""
    if isinstance(value, list):
        return all(_plain_option(v) and not isinstance(v, list) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, (bool, int, str))


class KernelEntry(_Ranges):
    """One ``[[kernel]]``: a kernel, its own ranges, its options."""

    name: Annotated[StrictStr, Field(min_length=1)]
    extra: dict[StrictStr, Any] = {}
    corrupt: Flag = False

    @field_validator("extra")
    @classmethod
    def _extra_values(cls, value: dict) -> dict:
        for key, option in value.items():
            if not _plain_option(option):
                raise ValueError(f"option {key} = {option!r} is not true/false, a finite "
                                 "number, a word or a list of those")
        return value


class PlanFile(Schema):
    """A whole plan: ``[sweep]`` and at least one ``[[kernel]]``."""

    sweep: SweepSettings = SweepSettings()
    kernel: Annotated[list[KernelEntry], Field(min_length=1)]


def check_plan_file(doc: dict, path: str) -> PlanFile:
    """A plan file's document, checked (ConfigError naming the file, key and fix)."""
    program_key = next((key for key in PROGRAM_KEYS if isinstance(doc.get("sweep"), dict)
                        and key in doc["sweep"]), None)
    if program_key:  # s31 tester P5: not "no [[kernel]] entries" for a program's plan
        raise ConfigError(f"{path}: [sweep] key {program_key!r} is not a plan setting: plan "
                          "files sweep built-in kernels only; measure a program with "
                          "`hpcds1mpi sweep --command ...` (one sweep per allocation, then "
                          "`hpcds1mpi telemetry merge`)")
    if not doc.get("kernel"):
        if "program" in doc:  # s37 tester K7: was "no [[kernel]] entries; add one"
            raise ConfigError(f"{path}: [[program]] is not a plan table: plan files sweep "
                              "built-in kernels only, and programs cannot be campaigned yet; "
                              "measure a program with `hpcds1mpi sweep --command ...` (one "
                              "sweep per allocation, then `hpcds1mpi telemetry merge`)")
        if isinstance(doc.get("sweep"), dict):  # an unknown [sweep] key is the likelier slip
            sweep_settings(doc["sweep"], source=f"{path}, [sweep]")
        raise ConfigError(f"{path}: no [[kernel]] entries; add one per kernel to sweep")
    return validate(PlanFile, doc, source=path, error=ConfigError, fix=FIX)


def sweep_settings(sweep: dict, source: str = "sweep plan, [sweep]") -> SweepSettings:
    """A plan's ``[sweep]`` table, checked (ConfigError naming the key and the fix)."""
    return validate(SweepSettings, sweep, source=source, error=ConfigError, fix=FIX)


def kernel_entry(entry: dict, source: str = "sweep plan") -> KernelEntry:
    """One ``[[kernel]]`` entry, checked (ConfigError naming the key and the fix)."""
    return validate(KernelEntry, entry, source=source, error=ConfigError, fix=FIX)
