"""One launch of a user's program: started in its own session, watched, classified.

:func:`launch_once` runs a command line once (its process group killed on a timeout or when
the sweep is interrupted), measuring the memory and CPU time of the program's ranks
(:mod:`hpcds1mpi.measure.ranks_usage`: never the launcher's);
:func:`launch_problem` tells a launcher that could not start the program (an error of the
sweep, never a measurement) from a program that failed (a measurement), as
:func:`options_refused` tells a launcher that refused its own options; :func:`classify` gives
a launch's status: ``ok``, ``failed``, ``timeout``, ``oom``, ``unsupported`` (srun refused
the step: :data:`SRUN_REFUSED`) or ``interrupted`` (refused as the allocation ends:
:data:`ALLOCATION_ENDING`), and :func:`reason_line` the
line of the output that says why (the program's error, not its MPI's abort banner).

``oom`` takes evidence (:mod:`~hpcds1mpi.measure.oom_evidence`): an out-of-memory word, or a
SIGKILL (exit 137, a launcher's report of a rank killed by signal 9, sh's "Killed") whose ranks'
peak neared the memory available; a SIGKILL without is ``failed`` ("killed by signal 9 (not
known to be memory: ...)"). The word "killed" in passing is no sign: Open MPI's "not able to
guarantee that all other processes were killed!", a program's "0 stray processes killed". Nor
is exit 137 or "Killed" where the launcher says a task was never launched or another task
failed first (srun kills the rest: :data:`LAUNCH_FAILED`, :data:`TASK_FAILED`).

The program's stdin is ``/dev/null``: a measurement never reads the user's terminal (a program
that reads its input from stdin, ``pw.x < in``, would otherwise wait there until ``--timeout``,
and a launcher such as ``mpirun`` forwards its stdin to rank 0).

The program's output is never held whole: it goes to temporary files, which ``scan`` reads
(:meth:`~hpcds1mpi.measure.readings.Readings.scan`, in bounded windows) before they close; the
result keeps only the last :data:`TAIL` bytes of stdout and stderr, which is all
:func:`classify` and :func:`launch_problem` read.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import tempfile
import time

from hpcds1mpi.config import OK
from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch.help_text import RULE_LINE, help_titles
from hpcds1mpi.measure.oom_evidence import KILL_LINES, OOM_KILLER, OOM_WORDS, killed
from hpcds1mpi.measure.printable import clipped
from hpcds1mpi.measure.program_lines import NO_ERROR, SPECIFIC_LINE, program_lines, with_message
from hpcds1mpi.measure.yaml_errors import yaml_documents
from hpcds1mpi.runtime.processes import die_with_parent, end_group

#: Bytes of stdout and of stderr a launch's result keeps (their ends).
TAIL = 64 * 2**10


def stream_tail(fh, tail: int = TAIL, end: int | None = None) -> str:
    """The last ``tail`` bytes of the binary file ``fh`` (a launch's stdout or stderr), up to
    ``end`` where given, as :func:`~hpcds1mpi.launch.help_text.launcher_text` reads them:
    without prterun's closing NUL, which had been the reason of every MPI_Abort under it (s40
    tester A1)."""
    from hpcds1mpi.launch.help_text import launcher_text

    size = fh.seek(0, 2) if end is None else end
    fh.seek(start := max(0, size - tail))
    return launcher_text(fh.read(size - start))


def launch_once(tokens: list[str], env: dict, timeout: float, cwd: str | None = None,
                scan=None, program: str = "", ranks: int = 1, accounting=None,
                ranks_per_node: int = 0) -> dict:
    """Run ``tokens`` once in a session of its own; return exit code, wall seconds, the
    program's ranks' CPU seconds and peak memory with its source
    (:func:`~hpcds1mpi.measure.ranks_usage.ranks_usage`: ``program`` is the program's first
    token, ``tokens[0]`` when not given, ``ranks`` its ranks, ``accounting`` the allocation's
    :class:`~hpcds1mpi.measure.slurm_accounting.StepAccounting` or None: asked after the
    launch, only where its tree showed srun; ``ranks_per_node`` the layout's, which divides a
    launcher daemon's task; ranks run under :mod:`~hpcds1mpi.measure.rank_peak`'s wrapper
    (srun's, an mpirun's inside an allocation) report their own peak, their lines taken out
    of stderr), the last
    :data:`TAIL` bytes of stdout and stderr, ``found``: ``scan([stdout, stderr])`` called
    on the whole output (binary files) before it is dropped (None without ``scan``), and
    ``ranks`` (for :func:`classify`'s hint); of a launch killed at ``timeout``,
    ``before_kill``: the ends of stdout and stderr as they were before the kill.

    Raises:
        LaunchError: the launch could not start (launcher or program missing, not executable).
        BaseException: whatever interrupts the wait (KeyboardInterrupt, the SIGTERM handler's
            SweepInterrupted) passes on after the program's whole process group is killed.
    """
    from hpcds1mpi.measure import rank_peak
    from hpcds1mpi.measure.launch_tree import TreeSampler, program_names
    from hpcds1mpi.measure.ranks_usage import ranks_usage

    names = program_names(program or (tokens[:1] or [""])[0], env, cwd)  # bare: tokens[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile() as out_fh, tempfile.TemporaryFile() as err_fh:
        start, launch_start = time.perf_counter(), time.time()  # its job steps start after
        try:
            proc = subprocess.Popen(tokens, stdin=subprocess.DEVNULL, stdout=out_fh,
                                    stderr=err_fh, env=env, cwd=cwd, start_new_session=True,
                                    preexec_fn=die_with_parent())
        except OSError as exc:
            raise LaunchError(f"cannot start {tokens[0]}: {exc.strerror}; nothing was "
                              "recorded for this configuration (check the launcher and "
                              "--command)") from None
        sampler = TreeSampler(proc.pid, names)
        timed_out = False
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:  # what it wrote before the kill (hang_cause)
            timed_out = [os.fstat(fh.fileno()).st_size for fh in (out_fh, err_fh)]
            end_group(proc)
            code = proc.returncode if proc.returncode is not None else -9
        except BaseException:
            end_group(proc)  # Ctrl-C / SIGTERM of the sweep: no orphan of the user's
            sampler.stop()
            raise
        wall = time.perf_counter() - start
        tree = sampler.stop()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        before_kill = timed_out and tuple(rank_peak.without_reports(stream_tail(fh, end=n))
                                          for fh, n in zip((out_fh, err_fh), timed_out))
        # each rank's own peak, from its wrapper (srun, an mpirun's daemons); its lines leave
        # the stderr read
        reports = rank_peak.take_reports(err_fh, os.path.basename(tokens[0])) \
            if rank_peak.is_wrapped(tokens) else None
        stdout, stderr = stream_tail(out_fh), stream_tail(err_fh)
        found = scan([out_fh, err_fh]) if scan is not None else None
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss, cpu, rss_source = ranks_usage(tree, cpu, ranks, accounting, launch_start,
                                       ranks_per_node=ranks_per_node, reports=reports)
    return {"exit_code": code, "wall_s": wall, "cpu_s": cpu, "stdout": stdout, "stderr": stderr,
            "timed_out": bool(timed_out), "rss_mb": rss if rss > 0 else float("nan"),
            "before_kill": before_kill or None, "rss_source": rss_source, "found": found, "ranks": ranks,
            "ranks_per_node": ranks_per_node, "rank_launcher": tree.rank_launcher}


#: What a launcher prints when it could not start the program on a node (hydra, srun).
LAUNCHER_NOT_STARTED = re.compile(r"execvp error|execve\(\)")
#: What a shell-like launcher prints with exit 126 / 127.
NOT_STARTED = re.compile(r"\bcommand not found\b|No such file or directory|Permission denied|"
                         r"cannot execute", re.IGNORECASE)


def launch_problem(result: dict) -> str:
    """The reason the launcher could not start the program ("" when it started): a launcher's
    execvp / execve error, or exit 126 / 127 with "not found" / "cannot execute" words."""
    if result["timed_out"] or result["exit_code"] == 0:
        return ""
    tail = result["stderr"][-4000:]
    match = LAUNCHER_NOT_STARTED.search(tail)
    if match is None and result["exit_code"] in (126, 127):
        match = NOT_STARTED.search(tail)
    if match is None:
        return ""
    return _first_line(tail, re.compile(re.escape(match.group(0)))) or match.group(0)


#: A launcher's refusal of its own command line, as the launcher itself prints it last, having
#: started nothing: hydra's (MPICH's, Intel MPI's) error stack ending "[mpiexec@vm] main
#: (mpiexec.c:49): error parsing parameters" (its cause on the stack's first line:
#: "unrecognized argument no-such"); Open MPI's / PRRTE's '<its argv[0]>: Error: unknown
#: option "--x"' then "Type '<argv[0]> --help' for usage."; srun's "srun: unrecognized option
#: '--x'" then 'Try "srun --help" for more information'.
_HYDRA_REFUSED = re.compile(r"\[mpiexec@[^\]\s]+\]\s+\S+\s+\([^()\s]+:\d+\):\s*"
                            r"(error parsing parameters|unable to parse user arguments)")
_OPEN_MPI_REFUSED = re.compile(r"(\S+): Error: unknown option\b.*")
_OPEN_MPI_HINT = re.compile(r"Type '\S+ --help' for usage\.")
_SRUN_REFUSED = re.compile(r"srun: (unrecognized|invalid) option\b.*")
_SRUN_HINT = re.compile(r'Try "srun --help" for more information\.?')


def options_refused(result: dict, launcher: str = "") -> str:
    """Why ``launcher`` (the launch's first token) refused its own options ("" when it did
    not): the cause of hydra's error stack, else the refusing line. s36 tester M3: hydra's
    refusal of a duplicate ``-n`` was recorded as the program's ``failed`` run, with a runtime
    and an energy. Only the launcher's own refusal counts, as it prints it, at the end of its
    output (s36 review 5: a program that printed "error parsing parameters", or a wrapper whose
    own srun refused an option, had stopped the whole sweep): hydra's stack lines, an Open
    MPI launcher's line under the name it was run by, srun's where the launcher is srun."""
    from hpcds1mpi.launch.help_text import HYDRA_STACK
    from hpcds1mpi.measure.printable import printable

    if result["timed_out"] or result["exit_code"] == 0:
        return ""
    lines = [ln.strip() for ln in result["stderr"][-4000:].splitlines() if ln.strip()]
    if not lines:
        return ""
    if _HYDRA_REFUSED.fullmatch(lines[-1]):
        stack = len(lines) - 1
        while stack > 0 and HYDRA_STACK.match(lines[stack - 1]):
            stack -= 1
        match = HYDRA_STACK.match(lines[stack])
        return clipped(printable(f"[{match.group(1)}] {match.group(2)}", keep="\t"), 300)
    name = os.path.basename(launcher)
    for refused, hint in ((_OPEN_MPI_REFUSED, _OPEN_MPI_HINT), (_SRUN_REFUSED, _SRUN_HINT)):
        found = lines[-2] if len(lines) > 1 and hint.fullmatch(lines[-1]) else lines[-1]
        if (match := refused.fullmatch(found)) and name == (
                os.path.basename(match.group(1)) if refused is _OPEN_MPI_REFUSED else "srun"):
            return clipped(printable(found, keep="\t"), 300)
    return ""


def _first_line(text: str, pattern: re.Pattern) -> str:
    """The first line of ``text`` that ``pattern`` finds, stripped, escaped (printed and
    stored: never obeyed by the terminal, s29 tester H5) and cut at 300; "" when none."""
    from hpcds1mpi.measure.printable import printable

    line = next((ln.strip() for ln in text.splitlines() if pattern.search(ln)), "")
    return clipped(printable(line, keep="\t"), 300)


#: Words of a program's own error message: LAMMPS's "ERROR on proc 0: Cannot open input
#: script", Python's "ValueError: ...", a C program's "fatal: ...", and a solver's statement
#: that it gave up: Quantum ESPRESSO's "convergence NOT achieved after 2 iterations: stopping",
#: CP2K's "SCF run NOT converged", "did not converge", "diverged".
ERROR_WORDS = re.compile(r"\berror\b|\w+Error\b|\bfatal\b|\bexception\b|\babort|\bcannot\b|"
                         r"\bcan't\b|\bcould not\b|\bunable to\b|\bno such\b|\bnot found\b|"
                         r"\binvalid\b|\bfailed\b|\bnot (achieved|converged?|reached)\b|"
                         r"\b(did|does) not converge|\bno convergence\b|"
                         r"\bdiverg(ed|es|ing|ence)\b", re.IGNORECASE)
#: A hoc interpreter's error joined to its location (:data:`.program_lines.NEAR_LINE`).
HOC_ERROR = re.compile(r"^(?!warning)\S+: \S.* near line \d+$", re.IGNORECASE)
#: A line with a word: not a caret under an echoed source line ("          ^"), no reason.
WORDS = re.compile(r"[^\W_]")
#: A crash as the launcher reports it (Open MPI: "exited on signal 11 (Segmentation fault)";
#: hydra: "KILLED BY SIGNAL: 11 (Segmentation fault)"): the reason even inside its help text.
CRASH_WORDS = re.compile(r"\bsignal:? \d+|Segmentation fault|core dumped|Bus error",
                         re.IGNORECASE)

#: hydra's line naming how a process ended, on stdout: "YOUR APPLICATION TERMINATED WITH THE
#: EXIT STRING: Segmentation fault (signal 11)"; a program's own stdout is not read for crash
#: words (its "signal 9 handler installed" is no crash).
HYDRA_CRASH = re.compile(r"TERMINATED WITH THE EXIT STRING:.*(?:signal:? \d+|Segmentation fault|"
                         r"Bus error)", re.IGNORECASE)

def _titled(lines: list[str], pattern: re.Pattern) -> list[str]:
    """The lines of ``lines`` that match ``pattern`` and do not report zero errors, each with
    its message (:func:`~hpcds1mpi.measure.program_lines.with_message`); a message line is
    not found again on its own (QE's "file Si.UPF not found" under its "Error in routine
    readpp (1):")."""
    return [text for _, text in _titled_at(lines, pattern.search)]


def _titled_at(lines: list[str], matches) -> list[tuple[int, str]]:
    """:func:`_titled` of the lines ``matches`` accepts, each with its index."""
    found, used = [], -1
    for i, ln in enumerate(lines):
        if i > used and matches(ln) and not NO_ERROR.search(ln):
            text, used = with_message(lines, i)
            found.append((i, text))
    return found


def _specific(lines: list[str]) -> list[str]:
    """The :data:`SPECIFIC_LINE` lines of ``lines``, each with its message."""
    return _titled(lines, SPECIFIC_LINE)


def _errors(lines: list[str]) -> list[tuple[int, str]]:
    """The lines of ``lines`` with an error word, or error lines without one
    (:func:`~hpcds1mpi.measure.error_cause.error_line`: NWChem's "Attempting to read a basis set
    from a non-existing file:", s37 tester G5), each with its message and index: before, a
    title's message was kept only where its own line had an error word, and then alone."""
    from hpcds1mpi.measure.error_cause import error_line

    return _titled_at(lines, lambda ln: ERROR_WORDS.search(ln) or error_line(ln))


def _box_errors(boxes: list) -> list[str]:
    """The message of each of a stream's framed ``boxes`` whose inside has an error word, its
    tag included (CP2K's "[ABORT]" box: "non-compatible end of section SCF, File:
    'syn-150.inp', Line: 19, ..." has none of its own); as specific as a runtime's error line:
    before, a line of the box was found on its own, half a sentence or "* [ABORT] ... *"."""
    return [box.message for box in boxes
            if box.message and ERROR_WORDS.search(box.inner) and not NO_ERROR.search(box.inner)]


def reason_line(stdout: str, stderr: str) -> str:
    """The one line that says why a launch failed: the most specific error the program wrote
    (a YAML error document's message, :func:`yaml_documents`: ABINIT's "--- !ERROR"; an
    error's framed box or section, :func:`_box_errors`: CP2K's "[ABORT]", PETSc's "Error
    Message" section, not its option table (s29 tester C4); :data:`SPECIFIC_LINE`:
    gfortran's runtime error, an assert, GROMACS's fatal error; a hoc error joined to its
    location, :data:`HOC_ERROR`, s46 tester G3); else
    a crash the launcher reports; else the program's last error message (stderr, then stdout:
    LAMMPS writes its ERROR to stdout; a stderr line that restates one of stdout's, a
    runtime's copy such as ARMCI's, left for stdout's; of one report's lines, the one that
    says a file it names is missing: :mod:`~hpcds1mpi.measure.error_cause`, s37 tester G5);
    else a Fortran stop code with the program's last line
    before it (:func:`~hpcds1mpi.measure.stop_code.stop_reason`: "usage: heat N; ERROR STOP
    2", not the MPI_ABORT help text under it, s32 tester X5); else its last line on stderr;
    else the title of the first Open MPI help text
    (:func:`~hpcds1mpi.launch.help_text.help_titles`: its first paragraph); else the last text
    line of stderr, then of stdout; never a line without a word (a caret). Never a line every
    failure prints
    (:data:`~hpcds1mpi.measure.program_lines.GENERIC_LINE`, an MPI's abort banner's
    boilerplate: its error is one line, "An error occurred in MPI_Win_create: MPI_ERR_WIN:
    invalid window", s32 tester X4; Open MPI's help text) before those last two: a bare
    "STOP 2" loses to the program's own "convergence NOT achieved" on stdout. Its control
    characters are
    escaped (:func:`~hpcds1mpi.measure.printable.printable`, tabs kept): the line is printed
    and stored, and a program's ``\\x1b]0;...`` had set the terminal's title (s29 tester H5).

    Before, the last non-blank stderr line was taken: under Open MPI's mpirun that is a rule
    of dashes or "Set MCA parameter orte_base_help_aggregate", whatever the program said; and
    then the last error line: gfortran's "Error termination. Backtrace:" below its real error."""
    from hpcds1mpi.measure.error_cause import cause_first, restates
    from hpcds1mpi.measure.framed_boxes import framed_boxes
    from hpcds1mpi.measure.printable import printable
    from hpcds1mpi.measure.rank_tags import untagged
    from hpcds1mpi.measure.stop_code import stop_reason

    # hydra (MPICH's, the wheel's) writes its "EXIT STRING: Segmentation fault (signal 11)"
    # banner to stdout: read there where stderr names no crash (s39 tester B1)
    crashes = [ln.strip() for ln in stderr.splitlines() if CRASH_WORDS.search(ln)] or \
        [ln.strip() for ln in stdout.splitlines() if HYDRA_CRASH.search(ln)]
    # stripped, tags kept (PETSc's sections need them); boxes found once per stream, not
    # twice (s29 tester H2)
    lines = [[ln.strip() for ln in s.splitlines()] for s in (stderr, stdout)]
    boxes = [framed_boxes(ls) for ls in lines]
    err, out = program_lines(lines[0], boxes[0]), program_lines(lines[1], boxes[1])
    texts = [[ln.strip() for ln in stream.splitlines()
              if ln.strip() and not RULE_LINE.match(ln)] for stream in (stderr, stdout)]
    helps = help_titles(stderr) or help_titles(stdout)
    stopped = stop_reason([[untagged(ln) for ln in ls] for ls in lines], [err, out])
    err_errors, out_errors = _errors(err), _errors(out)
    if err_errors and out_errors and restates(err_errors[-1][1], [t for _, t in out_errors]):
        err_errors = []  # a runtime's copy of the program's own account (ARMCI's: s37 G5)
    # a hoc error with its location joined ("nrniv: hhx is not a MECHANISM near line 1"):
    # named by the program, over the source line it echoes and its caret (s46 tester G3)
    err_spec = _specific(err) + [ln for ln in err if HOC_ERROR.search(ln)]
    for found in (err_spec + yaml_documents(stderr) + _box_errors(boxes[0]),
                  _specific(out) + yaml_documents(stdout) + _box_errors(boxes[1]), crashes,
                  *([t for _, t in cause_first(*e)] for e in ((err_errors, err), (out_errors,
                                                                              out))),
                  [stopped] if stopped else [],
                  [ln for ln in err if WORDS.search(ln)], helps[:1],
                  *([ln for ln in t if WORDS.search(ln)] for t in texts)):  # no bare caret
        if found:  # the program's text, never obeyed by the terminal (s29 tester H5)
            return printable(found[-1], keep="\t")
    return ""


def classify(result: dict, timeout: float, memory_mb: float | None = None) -> tuple[str, str]:
    """(status, error text) of one launch (exit 0 with output ending in the program's error,
    :func:`~hpcds1mpi.measure.ending_error.ending_error`, or closing with its word that it
    ended abnormally, :mod:`.abnormal_ending`, is ``failed``); a failure of a launch of several
    ranks (``result["ranks"]``) whose program says it ran as 1 process gets a hint that its
    launcher is not of its MPI (:func:`~hpcds1mpi.measure.singleton_ranks.singleton_hint`), as
    does one whose output shows it failed in ``MPI_Init``
    (:func:`~hpcds1mpi.measure.init_failure.init_failure_hint`). ``memory_mb``: MiB available
    to a node's ranks, which a SIGKILL's peak is judged by (:func:`.oom_evidence.killed`)."""
    from hpcds1mpi.measure.init_failure import init_failure_hint
    from hpcds1mpi.measure.singleton_ranks import singleton_hint

    code = result["exit_code"]
    if result["timed_out"]:  # its output read too: an error before a hang (s47 tester L2)
        from hpcds1mpi.measure.hang_cause import timed_out

        return timed_out(result, timeout)
    if code != 0 and (refusal := _first_line(result["stderr"][-20000:], SRUN_REFUSED)):
        if ALLOCATION_ENDING.search(refusal):  # the job's end, not the configuration's
            return "interrupted", (f"{REFUSED} ({refusal}): the Slurm allocation is ending; "
                                   "--resume inside a new allocation runs it again")
        return "unsupported", (f"{REFUSED} ({refusal}); the program never ran, so no model "
                               "learns this as its failure: --resume in an allocation that "
                               "holds the configuration runs it again")
    text = result["stdout"][-20000:] + "\n" + result["stderr"][-20000:]
    if code == 0:  # its own error last or a trailer saying it ended abnormally: failed
        from hpcds1mpi.measure.abnormal_ending import exit_0_failure

        said = exit_0_failure(result["stdout"], result["stderr"])
        return ("failed", said) if said else (OK, "")
    # a program that said nothing readable (only rules of asterisks): not "exit code 1: "
    last = clipped(reason_line(result["stdout"], result["stderr"]), 300) or "no message read"
    if hint := singleton_hint(text, result.get("ranks", 1)) or init_failure_hint(text):
        last = f"{last} ({hint})"  # after the cut: kept whole; MPI_Init's: s35 tester A1
    if OOM_WORDS.search(text):
        return "oom", f"exit code {code} (out of memory): {last}"
    if launch := _launch_failed(result["stderr"][-20000:] + "\n" + result["stdout"][-20000:]):
        return "failed", f"exit code {code}: {launch}"
    if OOM_KILLER.search(text) and not TASK_FAILED.search(text):  # the kernel's OOM killer
        return "oom", f"exit code {code} (out of memory): {last}"
    if (code in (137, -9) or KILL_LINES.search(text)) and not TASK_FAILED.search(text):
        return killed(result, code, last, memory_mb)  # oom only near the memory (s46 G1, H1)
    return "failed", f"exit code {code}: {last}"


#: A launcher's report that a task was never started: srun's "error: task 0 launch failed:
#: Unspecified error" / "Unable to launch step" / "Task launch for StepId=7.0 failed on node
#: n2"; the tasks it then kills ("task 1: Killed", exit 137) are no sign of memory.
LAUNCH_FAILED = re.compile(r"\blaunch failed\b|\bunable to launch\b|"
                           r"\btask launch for \S+ failed\b", re.IGNORECASE)
#: srun's report of a task that failed on its own, before it killed the others (exit 137).
TASK_FAILED = re.compile(r"\btask \d+: Exited with exit code [1-9]")


#: srun's refusal of a step or job before any rank starts, Slurm's answer and never the
#: program's ("Unable to create step for job 7: More processors requested than permitted",
#: "Unable to allocate resources: Requested node configuration is not available"): the run is
#: ``unsupported``, which no model learns from, and ``--resume`` tries it again (s31 tester P4).
SRUN_REFUSED = re.compile(r"\bsrun: error: Unable to (create step|allocate resources)\b")
#: Slurm's words in a refusal (:data:`SRUN_REFUSED`) for an allocation that is ending (its
#: time limit passed, cancelled, revoked), not for a configuration it cannot hold: the run is
#: ``interrupted`` (s33 tester A8: recorded ``unsupported``, the sweep went on and exited 0).
ALLOCATION_ENDING = re.compile(r"already completing or completed|\bhas expired\b|"
                               r"\bhas been revoked\b|\bInvalid job id\b", re.IGNORECASE)
#: The start of a refused run's reason (:func:`refused_by_launcher`).
REFUSED = "srun refused to start it"


def refused_by_launcher(row: dict) -> bool:
    """Whether a recorded run is srun's refusal (:data:`SRUN_REFUSED`): never settled, so
    ``--resume`` launches it again (another allocation may hold it)."""
    return row.get("status") == "unsupported" and str(row.get("error", "")).startswith(REFUSED)


def _launch_failed(text: str) -> str:
    """The first line of ``text`` saying a task was never launched (:data:`LAUNCH_FAILED`),
    escaped and cut for a reason; "" when none does. Before, srun's exit 137 after a failed
    pmix launch was "oom" (s29 V1-1)."""
    return _first_line(text, LAUNCH_FAILED)
