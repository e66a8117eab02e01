"""``--ranks-regex``'s verdict on one launch: its ranks one job, not one job, or a regex to fix.

A launch of N ranks whose program reports another count is not one job (N copies each
reporting 1): the sweep stops and records nothing of it. A regex that matched *nothing*
says nothing of the ranks: the program printed its count in words the regex does not take
(``--ranks-regex 'num_images: (\\d+)'`` over ``images: 2``). That had stopped the sweep
with "its ranks are not one job" although the 2-rank probe had just shown they were (s32
tester X6); :func:`check_rank_count` says the regex matched nothing and shows the output's
lines (:func:`output_lines`) to fix it by. Another count at several ranks in *one* line of
the output is one job's report, where copies would each print theirs (pw.x's "MPI processes
distributed on 1 nodes" at 2 ranks had been blamed on the launcher, s45 tester A3): the regex
reads another number, said with the output's lines holding the ranks. So in several lines none
repeated (a header's and a summary's "1 nodes", s45 tester F8), where copies repeat each of
theirs: both causes are said, the regex first; but lines a word apart with a count of 1 are
copies naming each its host ("rank 0 of 1 on nodeA", "... on nodeB", s46 review RV10), the
launcher's verdict as for copies on one host. Lines are counted only in an output held
whole: in a 64 KiB tail a copy's line may lie before it (s45 review RV5), and the verdict is
the ranks'.
"""

from __future__ import annotations

import math
import re

from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.measure.printable import clipped, printable

#: Lines of the output a regex error shows (the first and last of those with a number).
SHOWN_LINES = 6
#: Characters of each line shown.
LINE_CHARS = 80
#: Lines a --ranks-regex matched read to tell one job's lines from copies' repeats.
MATCHES_READ = 64
#: Bytes short of a full tail at which a stream's text is still taken as cut (:func:`cut_outputs`).
TAIL_SLACK = 64


def output_lines(stdout: str, stderr: str, number: int | None = None) -> str:
    """The program's lines (:func:`~hpcds1mpi.measure.program_lines.kept_lines`, stdout then
    stderr) that hold a number, where a count would be: the first and last
    :data:`SHOWN_LINES` / 2, each escaped and cut, quoted and joined; the last lines of any
    kind where none has a number; "" for no output. With ``number``, only the lines that hold
    that number on its own ("" where none does)."""
    from hpcds1mpi.measure.program_lines import kept_lines

    lines = [ln for text in (stdout, stderr) for ln in kept_lines(text) if ln]
    if number is not None:
        lines = [ln for ln in lines if re.search(rf"(?<![\w.]){number}(?![\w]|\.\d)", ln)]
    shown = [ln for ln in lines if re.search(r"\d", ln)] or lines[-SHOWN_LINES:]
    if len(shown) > SHOWN_LINES:
        shown = shown[:SHOWN_LINES // 2] + ["..."] + shown[-(SHOWN_LINES // 2):]
    return ", ".join(ln if ln == "..." else repr(printable(" ".join(ln.split()))[:LINE_CHARS])
                     for ln in shown)


def matched_lines(pattern, outputs: tuple[str, str], most: int = 2) -> list[str]:
    """The lines of ``outputs`` (stdout, stderr) in which ``pattern`` matched, one per match,
    at most ``most``; [] where the search runs out of time (no evidence either way)."""
    from hpcds1mpi.measure.regex_cost import MATCH_TIMEOUT_S

    text, lines = "\n".join(outputs), []
    try:
        for match in pattern.finditer(text, timeout=MATCH_TIMEOUT_S):
            end = text.find("\n", match.end())
            lines.append(text[text.rfind("\n", 0, match.start()) + 1:
                              end if end >= 0 else None].strip())
            if len(lines) >= most:
                break
    except TimeoutError:
        return []
    return lines


def check_rank_count(readings, found: dict, ranks: int, label: str, tokens: list[str],
                     outputs: tuple[str, str] = ("", "")) -> None:
    """Raise unless the program reported ``ranks`` processes (``found``: its readings,
    :meth:`~hpcds1mpi.measure.readings.Readings.scan`; ``readings`` the sweep's
    :class:`~hpcds1mpi.measure.readings.Readings`; ``outputs``: the ends of its stdout and
    stderr). Only with ``--ranks-regex``.

    No count at 1 rank (nothing to join), or with none of the other readings either (the
    program refused its input) passes: the launch is ``failed`` with the program's reason
    (:meth:`~hpcds1mpi.measure.readings.Readings.time_problem`) and the sweep goes on.

    Raises:
        LaunchError: the program reported another count at several ranks: its ranks are not
            one job.
        ConfigError: it printed its other readings at several ranks but nothing the regex
            matched, or another count at 1 rank (s44 tester M5: ParFORM's workers), or
            another count at several ranks in one line of stdout and stderr, where copies each
            print theirs (s45 tester A3: pw.x's "distributed on 1 nodes" of a 2-rank job): the
            regex is wrong, whatever the ranks were; or in several lines, none repeated (s45
            tester F8): the regex, or else copies (but a count of 1 in lines a word apart is
            copies', the LaunchError, s46 review RV10).
    """
    if readings.ranks is None:
        return
    seen = found["ranks"]
    if seen == ranks:
        return
    regex = f"--ranks-regex '{readings.ranks.pattern}'"
    if math.isnan(seen):
        printed = (readings.time is not None and found.get("time_text") is not None) or \
            (readings.fom is not None and not math.isnan(found.get("fom", math.nan)))
        if ranks == 1 or not printed:
            return
        shown = found.get("lines") or "none"
        raise ConfigError(f"{label}: {regex} matched nothing in the output; fix it: the "
                          f"output's lines were {shown} (nothing was recorded for it)")
    if ranks == 1 and seen > 1:  # or a job of the command's own (s46 tester H5: ff-mpirun)
        raise ConfigError(
            f"{label}: launched 1 rank but the program's output matched {regex} with {seen:g}: "
            "one rank is always one job, so either the command starts an MPI job of its own (a "
            "launcher inside it, as FreeFem++'s ff-mpirun runs mpiexec: sweep the program that "
            "launcher starts instead, not the wrapper) or the regex reads another count "
            "(workers, images, threads); then fix --ranks-regex to read the ranks, or leave it "
            "out (nothing was recorded for it)")
    if ranks == 1:  # one rank is one job whatever the launcher: the regex reads another count
        raise ConfigError(
            f"{label}: launched 1 rank but the program's output matched {regex} with {seen:g}: "
            "one rank is always one job, so the regex reads another count (workers, images, "
            "threads, or workers beside a master rank: ranks - 1); fix --ranks-regex to read the "
            "ranks, or leave it out (nothing was recorded for it)")
    # The count was read from the whole output, ``outputs`` may be its last 64 KiB: a line
    # count is evidence only where they hold it all (s45 review RV5: a copy's line before the
    # window had made two copies read as one job's line, and a right regex was blamed).
    matched = [] if cut_outputs(outputs) else matched_lines(readings.ranks, outputs,
                                                            most=MATCHES_READ)
    if len(matched) == 1:  # one job's (s45 A3)
        raise ConfigError(
            f"{label}: launched {ranks} ranks but the program's output matched {regex} with "
            f"{seen:g} in one line, {_shown(matched[0])}, where {ranks} copies would each print "
            f"theirs: the regex reads another number (nodes, threads, workers); fix it to read "
            f"the ranks ({_lines_to_fix(outputs, ranks)}), or leave it out (nothing was "
            "recorded for it)")
    # s43 tester I1: ranks that each saw a world of 1 are copies, from another MPI's launcher
    # or from a program built without MPI (apbs links libmpi and never starts it)
    how = ("each rank saw a world of 1: either the launcher is not of the MPI the program "
           "starts (give --mpiexec that MPI's launcher) or the program is built without MPI "
           "(sweep it at --ranks-per-node 1, or use a build that starts MPI)"
           if seen == 1 else "use the program's own launcher (--mpiexec) or fix --ranks-regex")
    # s46 review RV10: copies on several nodes print one line each but for the host it names
    # ("rank 0 of 1 on nodeA", "... on nodeB"): a world of 1 in lines a word apart is theirs
    if len(set(map(line_shape, matched))) == len(matched) > 1 and not (
            seen == 1 and one_word_apart(matched)):
        # s45 tester F8: several lines, none repeated, are one job's header and summary as
        # likely as copies (which repeat each line of theirs, its timings aside: LAMMPS's
        # "Loop time of 0.41 on 1 procs" from each of 2 copies): both causes, the regex first
        raise ConfigError(
            f"{label}: launched {ranks} ranks but the program's output matched {regex} with "
            f"{seen:g} in {len(matched)} different lines ({', '.join(map(_shown, matched))}), "
            f"none repeated as {ranks} copies would repeat theirs: most likely the regex "
            f"reads another number (nodes, threads, workers); fix it to read the ranks "
            f"({_lines_to_fix(outputs, ranks)}), or leave it out; else its ranks are not one "
            f"job ({' '.join(tokens[:3])} ...): {how} (nothing was recorded for it)")
    raise LaunchError(
        f"{label}: launched {ranks} rank(s) but the program's output matched {regex} with "
        f"{seen:g}: its ranks are not one job ({' '.join(tokens[:3])} ...); nothing was "
        f"recorded for it: {how}")


def cut_outputs(outputs: tuple[str, str]) -> bool:
    """Whether stdout or stderr in ``outputs`` fills a
    :data:`~hpcds1mpi.measure.program_launch.TAIL` (within the NULs
    :func:`~hpcds1mpi.launch.help_text.launcher_text` drops): a window that may have cut
    lines before it, not the whole stream."""
    from hpcds1mpi.measure.program_launch import TAIL

    return any(len(text.encode("utf-8", "replace")) >= TAIL - TAIL_SLACK for text in outputs)


def line_shape(line: str) -> str:
    """A matched line with its numbers set aside: each copy of a program prints the same line
    with its own timings in it. Not :data:`~hpcds1mpi.measure.repeat_folders._NUMBER`'s mask nor
    :data:`~hpcds1mpi.measure.error_cause._DIGITS`'s: each tells other lines alike (s47)."""
    return re.sub(r"[-+]?\d[\d.eE+-]*", "#", " ".join(line.split()))


def one_word_apart(lines: list[str]) -> bool:
    """Whether ``lines``, their numbers set aside (:func:`line_shape`), hold the same words
    but in one place, where each names a host (:data:`_HOST_LIKE`): copies naming each its own
    host, not a header and a summary ("Job started on 1 node" / "Job finished on 1 node", s46
    review RW5)."""
    words = [line_shape(line).split() for line in lines]
    if len({len(each) for each in words}) != 1:
        return False
    differ = [column for column in zip(*words) if len(set(column)) > 1]
    return len(differ) == 1 and all(map(_HOST_LIKE.search, differ[0]))


#: A word shaped as a host name, not an ordinary word: a number in it (``#`` after
#: :func:`line_shape`), a dot, dash or underscore, or a capital after a small letter ("nodeA").
_HOST_LIKE = re.compile(r"[#._-]|[a-z][A-Z]")


def _shown(line: str) -> str:
    """A matched line as a message quotes it: its blanks joined, escaped, cut at 120."""
    return repr(clipped(printable(" ".join(line.split())), 120))


def _lines_to_fix(outputs: tuple[str, str], ranks: int) -> str:
    """The output's lines to fix a ``--ranks-regex`` by: those holding ``ranks``, else all."""
    held = output_lines(*outputs, number=ranks)
    return (f"the output's lines with {ranks} in them were {held}" if held else
            f"the output's lines were {output_lines(*outputs) or 'none'}")
