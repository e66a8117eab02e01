"""What a user's program says about its own run: time, figure of merit, rank count.

Three optional regular expressions, each with one group holding a number, matched against
the program's output — its stdout and stderr, and what it wrote to ``--output-file`` during
the launch:

* ``--time-regex``: the program's own time, s. It becomes ``runtime_s`` (median over repeats);
  the launch's wall time (MPI and interpreter start-up included) stays in ``elapsed_s``. A
  launch whose time is not a positive finite number, is over a year
  (:data:`~hpcds1mpi.schemas.limits.MAX_SECONDS`) or over :data:`WALL_FACTOR` x its own wall
  time + :data:`SLACK_S` is ``failed`` (:meth:`Readings.time_problem`), as is a number
  followed by another unit (``0.040 ms``); one over the wall time (a sum over threads or
  ranks, a unit mistake) stops the sweep, the regex to fix (s46 tester H2);
  a number that is part of a time in several units (``2m54.91s``) is read whole
  (:mod:`.compound_time`).
* ``--fom-regex``: a figure of merit (``fom``), e.g. HPL's Gflop/s.
* ``--fail-regex``: a line that makes a launch which exited 0 ``failed``, the line its reason
  (``--fail-regex 'SCF run NOT converged'``: the program decided its run was fine, the user
  did not); no group needed (:meth:`Readings.fail_problem`).
* ``--ranks-regex``: the number of MPI processes the program reports; a launch whose count is
  not the configuration's ranks is not one job, and the sweep stops with an error
  (:meth:`Readings.check_ranks`). A launch that printed no count is ``failed`` instead, with
  the program's own reason, when it ran 1 rank or printed none of the lines the regexes look
  for (a program that refused its input, e.g. ScaLAPACK's "need TOTMEM"): that says nothing of
  the launcher; one of several ranks that printed its other readings but no count stops the
  sweep saying the regex matched nothing, with the output's lines to fix it by.

A launch (exit 0) whose readings are missing is ``failed`` with the line of its output that
says why (``said``: :func:`~hpcds1mpi.measure.program_launch.reason_line`), see
:meth:`Readings.time_problem`.

**Which match**: each regex takes its *last* match, the output file's part after stderr after
stdout (the program's final report; HPCC appends one result per run); where the time's or the
figure of merit's regex matched several different numbers in one launch, that is said once
(:mod:`.reading_notes`, s47 tester K5 for the figure of merit); but a time matched once per
rank of a launch proven one job is the job's slowest rank's (:mod:`.rank_times`, s48).
:meth:`Readings.scan`
searches from the end backwards in windows of :data:`CHUNK` bytes cut at line ends, stopping
once every regex has matched: memory stays bounded at any output size and nothing is skipped.
A match may span lines up to :data:`OVERLAP` bytes across a window's cut.

**What the launch wrote to ``--output-file``** (:class:`~hpcds1mpi.measure.file_mark.FileMark`, taken before each launch):
a program that *appends* (HPCC's ``hpccoutf.txt``) is read from the old end only, so an
earlier run's number is never taken for this one's; a program that *rewrites* its file
(``> result.txt``: truncated, replaced, or the same length again) is read whole; a file the
launch did not touch is not read at all.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.lock_files import not_regular
from hpcds1mpi.measure.file_mark import FINGERPRINT, FileMark, open_output  # noqa: F401
from hpcds1mpi.measure.printable import clipped, printable
from hpcds1mpi.measure.regex_cost import MATCH_TIMEOUT_S as REGEX_MATCH_TIMEOUT_S
from hpcds1mpi.measure.time_value import SLACK_S, WALL_FACTOR, value_problem  # noqa: F401

#: What the telemetry's plan says ``runtime_s`` is, per choice.
WALL = "launch wall time (s)"
#: Bytes of output searched at once (a line longer than this is cut).
CHUNK = 8 * 2**20
#: How far (bytes, to a line end) a window reaches into the later one: a match spanning lines.
OVERLAP = 2**16
#: The name of ``--fail-regex`` among the patterns: its value is the line it matched.
FAIL = "fail"


#: Longest one search of a program's output by a user's regex may take
#: (:data:`~hpcds1mpi.measure.regex_cost.MATCH_TIMEOUT_S`, there for rank_count too).
MATCH_TIMEOUT_S = REGEX_MATCH_TIMEOUT_S


def compile_regex(text: str | None, option: str, example: str, group: bool = True):
    """``text`` compiled (a ``regex`` pattern), with at least one group unless ``group`` is
    False; None when not given.

    Raises:
        ConfigError: not a regular expression, empty, no group, or too costly to compile.
    """
    from hpcds1mpi.measure.regex_cost import compile_bounded

    if text is None:
        return None
    pattern = compile_bounded(text, option)  # its cost bounded first (s29 tester H1)
    if group and pattern.groups < 1:
        raise ConfigError(f"{option} needs a group, e.g. {example!r}")
    if not group and pattern.search("", timeout=MATCH_TIMEOUT_S) is not None:
        raise ConfigError(f"{option} {text!r} matches an empty line, so every launch would "
                          f"fail; give the words of the line, e.g. {example!r}")
    return pattern


def _found(name: str, pattern, text: str) -> dict:
    """``{name: the first group ("" when it took no part)}`` of ``pattern``'s last match in
    ``text``, for ``--fail-regex`` the line it matched in, stripped ({}: no match); the time's
    as :func:`~hpcds1mpi.measure.time_reading.time_found` reads it."""
    distinct: dict = {}
    last = _last_match(pattern, text, f"--{name}-regex",
                       distinct if name in ("time", "fom") else None)
    if last is None:
        return {}
    if name == FAIL:
        end = text.find("\n", last.end())
        return {name: text[text.rfind("\n", 0, last.start()) + 1:end if end >= 0 else None
                           ].strip()}
    if name == "fom":  # the numbers it matched, said as the time's are (s47 tester K5)
        return {name: last.group(1) or "", "fom_values": list(distinct)}
    if name != "time":
        return {name: last.group(1) or ""}
    from hpcds1mpi.measure.time_reading import time_found

    return time_found(last, list(distinct))


def _last_match(pattern, text: str, option: str = "the regex", distinct: dict | None = None):
    """``pattern``'s last match in ``text`` (None: none); ConfigError (``option`` named)
    when the search runs over :data:`MATCH_TIMEOUT_S`. ``distinct`` gets the first groups'
    different texts (at most 100), in output order."""
    last = None
    try:
        for last in pattern.finditer(text, timeout=MATCH_TIMEOUT_S):
            if distinct is not None and len(distinct) < 100:
                distinct[last.group(1) or ""] = None
    except TimeoutError:
        raise ConfigError(
            f"{option} {pattern.pattern!r} searched the program's output for over "
            f"{MATCH_TIMEOUT_S:g} s: nested repeats such as (a+)+ backtrack without end; "
            "simplify it (e.g. 'time: ([0-9.]+)')") from None
    return last


def _float(text: str | None) -> float:
    """``text`` as a float (NaN: none, or not a number)."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def number(pattern, text: str) -> float:
    """The first group of ``pattern``'s last match in ``text`` as a number (NaN: none)."""
    if pattern is None:
        return math.nan
    last = _last_match(pattern, text)
    value = _float(last.group(1) if last is not None else None)
    return value if math.isfinite(value) else math.nan


def windows(fh, start: int, end: int):
    """The text of ``fh[start:end]`` from the end backwards, window by window: each at most
    :data:`CHUNK` bytes starting at a line start, reaching :data:`OVERLAP` bytes (to a line
    end) into the window after it."""
    cut = end  # where the later window starts
    while cut > start:
        lo = max(start, cut - CHUNK)
        hi = min(end, cut + OVERLAP)
        fh.seek(lo)
        data = fh.read(hi - lo)
        if hi > cut:  # the overlap, up to its last line end
            nl = data.rfind(b"\n", cut - lo, hi - lo)
            data = data[:nl + 1] if nl >= 0 else data[:cut - lo]
        if lo > start:
            nl = data.find(b"\n", 0, cut - lo)
            if 0 <= nl and lo + nl + 1 < cut:
                data, lo = data[nl + 1:], lo + nl + 1
        yield data.decode("utf-8", "replace")
        cut = lo


@dataclass
class Readings:
    """The compiled regexes and the output file of one sweep."""

    time: "regex.Pattern | None" = None
    fom: "regex.Pattern | None" = None
    ranks: "regex.Pattern | None" = None
    output_file: str | None = None
    fail: "regex.Pattern | None" = None
    #: Where notes go (one line each), set by the sweep; the notes said, each once per sweep.
    say: object = field(default=None, repr=False, compare=False)
    said: set = field(default_factory=set, repr=False, compare=False)
    #: Its launches' figure-of-merit readings, for the sweep's closing note (:mod:`.fom_note`).
    fom_launches: object = field(default=None, repr=False, compare=False)
    #: (label, ranks, threads) of launches whose time was kept (:func:`.time_units.over_wall_stop`)
    kept_several: list = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def of(cls, *, time_regex=None, fom_regex=None, ranks_regex=None,
           output_file=None, fail_regex=None) -> "Readings":
        if output_file is not None:
            from hpcds1mpi.launch.program import no_control

            no_control(output_file, "--output-file")
            if not output_file.strip():
                raise ConfigError("--output-file is empty; give the file the program writes")
            if output_file.endswith(("/", "/.", "/..")) or output_file in (".", ".."):
                raise ConfigError(f"--output-file {output_file!r} names a folder; give the "
                                  "file the program writes in it")
        return cls(compile_regex(time_regex, "--time-regex", r"time: ([0-9.eE+-]+) s"),
                   compile_regex(fom_regex, "--fom-regex", r"GFLOPS: ([0-9.]+)"),
                   compile_regex(ranks_regex, "--ranks-regex", r"ranks: (\d+)"),
                   output_file,
                   compile_regex(fail_regex, "--fail-regex", "SCF run NOT converged",
                                 group=False))

    def runtime_source(self) -> str:
        """What ``runtime_s`` holds, for the telemetry's plan and the bundle."""
        return f"program's own time (--time-regex {self.time.pattern})" if self.time else WALL

    def describe(self) -> dict:
        """The readings as the telemetry's ``launch`` attribute records them."""
        return {"runtime": self.runtime_source(),
                "time_regex": self.time.pattern if self.time else "",
                "fom_regex": self.fom.pattern if self.fom else "",
                "ranks_regex": self.ranks.pattern if self.ranks else "",
                "output_file": self.output_file or "",
                "fail_regex": self.fail.pattern if self.fail else ""}

    def output_path(self, cwd: str | None, values: dict) -> str | None:
        """The output file of one launch, placeholders filled, relative to ``cwd``."""
        if not self.output_file:
            return None
        from hpcds1mpi.launch.placeholder_fill import fill

        return os.path.join(cwd or ".", fill(self.output_file, values))

    def check_output_path(self, path: str | None) -> None:
        """Refuse an output file that is a folder, or a FIFO or device (its reading would
        wait forever, s47 tester M2), before anything launches.

        Raises:
            ConfigError: ``path`` is there and is no regular file.
        """
        if path and os.path.isdir(path):
            raise ConfigError(f"--output-file {self.output_file!r}: {path!r} is a folder; "
                              "give the file the program writes in it")
        if path and (kind := not_regular(path)):
            raise ConfigError(f"--output-file {self.output_file!r}: {path!r} is {kind}, not a "
                              "regular file; give the file the program writes its output in")

    def output_lock(self, path: str | None):
        """The launch writing ``path`` alone among processes until its lines are read
        (:func:`~hpcds1mpi.measure.output_lock.output_lock`, s33 tester D6)."""
        from hpcds1mpi.measure.output_lock import output_lock

        return output_lock(path, self.say, self.said)

    def note_once(self, found: dict | None, status: str, error: str,
                  wall_s: float = math.nan, seen: list[str] | None = None,
                  run: tuple[str, bool] = ("", True), launch: tuple = (1, ("", ""))) -> None:
        """Say each note of one launch's reading (:func:`.reading_notes.launch_notes`) once
        per sweep, a note kept to one configuration once per configuration."""
        from hpcds1mpi.measure.reading_notes import launch_notes

        notes = launch_notes(self, found or {}, status, error, wall_s, seen, run, launch)
        for kind, note in notes.items():
            if note and self.say is not None and kind not in self.said:
                self.said.add(kind)
                self.say(note)

    @staticmethod
    def mark(path: str | None) -> FileMark:
        """The output file before a launch (:class:`FileMark`)."""
        return FileMark.of(path)

    @staticmethod
    def new_text(path: str | None, mark: FileMark) -> str:
        """What the launch wrote to its output file (:meth:`FileMark.written_from`), whole:
        for small files and tests; a launch's readings use :meth:`scan`."""
        if not path:
            return ""
        try:
            with open_output(path) as fh:
                start = None if fh is None else mark.written_from(fh)
                if start is None:
                    return ""
                fh.seek(start)
                return fh.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _patterns(self) -> dict:
        return {name: p for name, p in (("time", self.time), ("fom", self.fom),
                                        ("ranks", self.ranks), (FAIL, self.fail))
                if p is not None}

    def _values(self, groups: dict, outputs: tuple = ()) -> dict:
        """The readings of ``groups``; with ``outputs`` (stdout, stderr: a reading is missing)
        ``said``, the program's reason, and, where the count is missing, ``lines``, the lines
        ``--ranks-regex`` is to be fixed by (:func:`~hpcds1mpi.measure.rank_count.output_lines`,
        s32 tester X6)."""
        from hpcds1mpi.measure.program_launch import reason_line
        from hpcds1mpi.measure.rank_count import output_lines
        from hpcds1mpi.measure.regex_miss import nearest_line, program_reason

        fom, ranks = _float(groups.get("fom")), _float(groups.get("ranks"))
        from hpcds1mpi.measure.time_reading import time_value

        return {"time": time_value(groups.get("time")), "time_text": groups.get("time"),
                "time_cut": groups.get("time_cut", ""),
                "time_part": groups.get("time_part", ""),  # of a time read whole (s45 A1)
                "time_values": groups.get("time_values", []),
                "fom": fom if math.isfinite(fom) else math.nan, "fom_text": groups.get("fom"),
                "fom_values": groups.get("fom_values", []),
                "fom_nearest": nearest_line(self.fom.pattern, *outputs) if outputs and self.fom
                is not None and "fom" not in groups else "",
                "ranks": ranks if math.isfinite(ranks) else math.nan,
                # a regex's miss is no reason of the program's (s35 tester A4)
                "said": program_reason(reason_line(*outputs), outputs[0]) if outputs else "",
                "nearest": nearest_line(self.time.pattern, *outputs) if outputs and self.time
                is not None and "time" not in groups else "",
                "lines": output_lines(*outputs) if outputs and self.ranks is not None
                and "ranks" not in groups else "",
                "fail_line": groups.get(FAIL), "time_unit": groups.get("time_unit", "")}

    @staticmethod
    def _reading_missing(names) -> bool:
        """Whether a reading (not ``--fail-regex``, which most launches never match) is
        among ``names``, the patterns that found nothing: only then is the reason read."""
        return any(name != FAIL for name in names)

    def read(self, text: str, stderr: str = "") -> dict:
        """``{"time": s, "time_text": str, "fom": x, "ranks": n, "said": line}`` from one
        launch's output ``text`` (its stdout) and ``stderr`` (NaN / None: not found; ``said``:
        the program's reason line when a regex found nothing, else "")."""
        both = text + "\n" + stderr if stderr else text
        groups = {}
        for name, pattern in self._patterns().items():
            groups.update(_found(name, pattern, both))
        missing = self._reading_missing(n for n in self._patterns() if n not in groups)
        return self._values(groups, (text, stderr) if missing else ())

    def scan(self, streams: list, out_path: str | None = None,
             mark: FileMark | None = None) -> dict:
        """:meth:`read` over the binary files ``streams`` (stdout, stderr), then what the
        launch wrote to ``out_path`` since ``mark``, searched backwards in windows; ``said``
        from the streams' last :data:`~hpcds1mpi.measure.program_launch.TAIL` bytes."""
        from hpcds1mpi.measure.program_launch import stream_tail

        def tails() -> tuple:  # only when a regex found nothing: why the program did not say it
            return tuple(([stream_tail(fh) for fh in streams[:2]] + ["", ""])[:2])

        todo, groups = self._patterns(), {}

        def search(fh, start: int) -> bool:
            for text in windows(fh, start, os.fstat(fh.fileno()).st_size):
                for name, pattern in list(todo.items()):
                    if found := _found(name, pattern, text):
                        groups.update(found)
                        del todo[name]
                if not todo:
                    return True
            return False

        if todo and out_path:
            try:
                with open_output(out_path) as fh:
                    start = None if fh is None else (mark or FileMark()).written_from(fh)
                    if start is not None and search(fh, start):
                        return self._values(groups)
            except OSError:
                pass
        for fh in reversed(streams):
            if todo and search(fh, 0):
                break
        return self._values(groups, tails() if self._reading_missing(todo) else ())

    def time_problem(self, found: dict, wall_s: float, ranks: int = 1, threads: int = 1,
                     label: str = "") -> str:
        """Why one launch (exit 0) of ``ranks`` ranks of ``threads`` threads each is not a
        measurement; "" when it is: its own time cannot be its runtime, or ``--ranks-regex``
        found no count
        (:meth:`check_ranks` let it through: the program refused its input). A reading that
        is missing ends with the program's own reason (``found["said"]``: "need TOTMEM of at
        least 4494136"). A time over the wall time is, with several ranks or threads, most
        likely one summed over them, said first
        (:func:`~hpcds1mpi.measure.time_units.over_wall_problem`); the regex's reading, not
        the program's failure: :meth:`stop_over_wall` ends the sweep on it (``label``: the
        configuration's, which it names)."""
        said = printable(" ".join((found.get("said") or "").split()))  # Fortran's padding
        why = f"; the program said: {clipped(said, 200)}" if said else ""
        if self.time is None:
            if self.ranks is not None and math.isnan(found.get("ranks", math.nan)):
                return (f"exit 0, but --ranks-regex '{self.ranks.pattern}' matched nothing in "
                        f"its output{why}")
            return ""
        regex = f"--time-regex '{self.time.pattern}'"
        text = found.get("time_text")
        if text is None:  # the line it missed, not the program's last (s35 tester A4)
            near = found.get("nearest")
            return (f"exit 0, but {regex} matched no number in its output"
                    + (f" (the line nearest it: {near!r})" if near else "") + why)
        if self.ranks is not None and math.isnan(found.get("ranks", math.nan)):
            return (f"exit 0, but --ranks-regex '{self.ranks.pattern}' matched nothing in its "
                    f"output{why}")
        return value_problem(text, found, wall_s, regex, (ranks, threads, label),
                             self.kept_several)

    @staticmethod
    def stop_over_wall(found: dict | None) -> None:
        """Stop the sweep where :meth:`time_problem` found the launch's own time over its wall
        time (s46 tester H2: it was the program's ``failed`` run, a failure models learn).

        Raises:
            ConfigError: naming the regex to fix (:func:`.time_units.over_wall_stop`)."""
        if found and found.get("over_wall"):
            raise ConfigError(found["over_wall"])

    def fail_problem(self, found: dict) -> str:
        """Why one launch (exit 0) is ``failed`` by ``--fail-regex``: the line it matched;
        "" when it matched none (or none was given)."""
        line = found.get("fail_line") if found else None
        if self.fail is None or line is None:
            return ""
        # the program's line escaped before it is printed or stored (s29 tester H5)
        return (f"exit 0, but its output matched --fail-regex '{self.fail.pattern}': "
                f"{clipped(printable(' '.join(line.split())), 200)}")

    def check_ranks(self, found: dict, ranks: int, label: str, tokens: list[str],
                    outputs: tuple[str, str] = ("", "")) -> None:
        """Raise unless the program reported ``ranks`` processes (only with
        ``--ranks-regex``): :func:`~hpcds1mpi.measure.rank_count.check_rank_count`."""
        from hpcds1mpi.measure.rank_count import check_rank_count

        check_rank_count(self, found, ranks, label, tokens, outputs)
