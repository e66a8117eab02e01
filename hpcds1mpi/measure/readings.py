"""What a user's program says about its own run: time, figure of merit, rank count.

Three optional regular expressions, each with one group holding a number, matched against
the program's output — its stdout and stderr, and the part of ``--output-file`` written
during the launch (HPCC writes ``hpccoutf.txt``, appending):

* ``--time-regex``: the program's own time, s. It becomes ``runtime_s`` (median over repeats);
  the launch's wall time (MPI and interpreter start-up included) stays in ``elapsed_s``.
* ``--fom-regex``: a figure of merit (``fom``), e.g. HPL's Gflop/s.
* ``--ranks-regex``: the number of MPI processes the program reports; a launch whose count is
  not the configuration's ranks is not one job, and the sweep stops with an error.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from hpcds1mpi.errors import ConfigError, LaunchError

#: What the telemetry's plan says ``runtime_s`` is, per choice.
WALL = "launch wall time (s)"


def compile_regex(text: str | None, option: str, example: str) -> re.Pattern | None:
    """``text`` compiled, with at least one group; None when not given.

    Raises:
        ConfigError: not a regular expression, or no group.
    """
    if text is None:
        return None
    try:
        pattern = re.compile(text, re.MULTILINE)
    except re.error as exc:
        raise ConfigError(f"{option}: {exc}") from None
    if pattern.groups < 1:
        raise ConfigError(f"{option} needs a group, e.g. {example!r}")
    return pattern


def number(pattern: re.Pattern | None, text: str) -> float:
    """The first group of ``pattern``'s last match in ``text`` as a number (NaN: none)."""
    if pattern is None:
        return math.nan
    matches = list(pattern.finditer(text))
    if not matches:
        return math.nan
    try:
        value = float(matches[-1].group(1))
    except (TypeError, ValueError):
        return math.nan
    return value if math.isfinite(value) else math.nan


@dataclass
class Readings:
    """The compiled regexes and the output file of one sweep."""

    time: re.Pattern | None = None
    fom: re.Pattern | None = None
    ranks: re.Pattern | None = None
    output_file: str | None = None

    @classmethod
    def of(cls, *, time_regex=None, fom_regex=None, ranks_regex=None,
           output_file=None) -> "Readings":
        if output_file is not None:
            from hpcds1mpi.launch.program import no_control

            no_control(output_file, "--output-file")
            if not output_file.strip():
                raise ConfigError("--output-file is empty; give the file the program writes")
        return cls(compile_regex(time_regex, "--time-regex", r"time: ([0-9.eE+-]+) s"),
                   compile_regex(fom_regex, "--fom-regex", r"GFLOPS: ([0-9.]+)"),
                   compile_regex(ranks_regex, "--ranks-regex", r"ranks: (\d+)"),
                   output_file)

    def runtime_source(self) -> str:
        """What ``runtime_s`` holds, for the telemetry's plan and the bundle."""
        return f"program's own time (--time-regex {self.time.pattern})" if self.time else WALL

    def output_path(self, cwd: str | None, values: dict) -> str | None:
        """The output file of one launch, placeholders filled, relative to ``cwd``."""
        if not self.output_file:
            return None
        name = self.output_file
        for key, value in values.items():
            name = name.replace("{" + key + "}", str(value))
        return os.path.join(cwd or ".", name)

    @staticmethod
    def mark(path: str | None) -> int:
        """Where the output file ends before a launch (0: none yet)."""
        try:
            return os.path.getsize(path) if path else 0
        except OSError:
            return 0

    @staticmethod
    def new_text(path: str | None, start: int) -> str:
        """What the launch wrote to its output file (from ``start``; all if it shrank)."""
        if not path:
            return ""
        try:
            with open(path, "rb") as fh:
                if os.fstat(fh.fileno()).st_size >= start:
                    fh.seek(start)
                return fh.read(8 * 2**20).decode("utf-8", "replace")
        except OSError:
            return ""

    def read(self, text: str) -> dict:
        """``{"time": s, "fom": x, "ranks": n}`` from one launch's output (NaN: not found)."""
        return {"time": number(self.time, text), "fom": number(self.fom, text),
                "ranks": number(self.ranks, text)}

    def check_ranks(self, found: dict, ranks: int, label: str, tokens: list[str]) -> None:
        """Raise :class:`LaunchError` unless the program reported ``ranks`` processes.

        Only with ``--ranks-regex``: a launch of ``ranks`` ranks whose program reports
        another count (or none) is not one job; nothing of it is recorded.
        """
        if self.ranks is None:
            return
        seen = found["ranks"]
        if seen == ranks:
            return
        said = "nothing" if math.isnan(seen) else f"{seen:g}"
        raise LaunchError(
            f"{label}: launched {ranks} rank(s) but the program's output matched "
            f"--ranks-regex '{self.ranks.pattern}' with {said}: its ranks are not one job "
            f"({' '.join(tokens[:3])} ...); nothing was recorded for it: use the program's own "
            "launcher (--mpiexec) or fix --ranks-regex")
