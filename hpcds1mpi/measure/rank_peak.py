"""Each rank's peak memory and CPU time where its ranks are not the sweep's children, read by
the rank's own parent.

Under ``--launcher srun`` the ranks are ``slurmstepd``'s children, not the sweep's, so neither
the sweep's ``RUSAGE_CHILDREN`` nor its process tree sees them, and Slurm's accounting samples
them (``jobacct_gather``) only every ``JobAcctGatherFrequency``: a step that ends before the
first sample has no ``MaxRSS`` at all (:mod:`~hpcds1mpi.measure.slurm_accounting`). Inside an
allocation an ``mpirun`` / ``mpiexec`` starts its daemons through ``srun`` (Open MPI's
``orted``, hydra's ``hydra_pmi_proxy`` under its Slurm bootstrap), so their ranks are
slurmstepd's grandchildren, and a step's ``MaxRSS`` is the daemon's task: the daemon's own
memory (15 MB for ``orted``) added to its ranks' (s38 tester A5: dgord recorded 58 MB for its
40 MB). So each such rank runs under this file, a wrapper run as a script by the sweep's own
Python (``python -I -S rank_peak.py -- program args``: no site, no PYTHONPATH, the standard
library only, about 10 ms and 8 MB of its own): it forks and execs the rank and, when it ends,
writes the rank's ``ru_maxrss`` and CPU time from ``wait4`` on one line to its stderr
(:data:`MARK`); srun, ``orted`` and hydra's proxy bring every rank's stderr back from every
node, and the sweep takes those lines out of the program's stderr before anything else reads it
(:func:`take_reports`). A launcher's ranks on this node outside an allocation are the sweep's
descendants, sampled in its own tree (:mod:`~hpcds1mpi.measure.launch_tree`): not wrapped.

Why this way, measured on the test Slurm (Slurm 22.05, session 38, K4): its plugins are
``proctrack/linuxproc``, ``task/affinity`` and ``jobacct_gather/linux`` at 1 s, so a step has
no cgroup whose ``memory.peak`` could be read; where a site's cgroup plugin gives one, it is the
whole step's on that node (the ranks together, daemons included) and it is removed when the step
ends, before the sweep could read it. ``sacct``'s ``MaxRSS`` is sampled, so a 0.2 s program that
holds 80 MB had none, however the sampling is set (1 s is Slurm's shortest). ``wait4``'s
``ru_maxrss`` is the kernel's own high-water mark of the rank and of the children it waited for,
exact however short the rank, and needs nothing of the site: no cgroup, no accounting, no shared
folder (the report travels on stderr), only the sweep's Python reachable on the compute nodes,
as it is where the sweep's folder is shared.

The wrapper does not change the rank: its environment, open descriptors (the ``PMI_FD`` of
srun's pmi2 plugin), stdin and signal dispositions pass unchanged (Python's own ignored SIGPIPE
and SIGXFSZ set back); its own memory is not counted (``wait4`` reports the child's); it exits
with the rank's status, or dies of the rank's signal (without a core of its own), so the
launcher and the sweep read the rank's end as before. A signal sent to the wrapper is passed to
the rank, except its parent's: slurmstepd signals every process of the step (srun's Ctrl-C,
``scancel``, a time limit), ``orted`` and hydra's proxy the process group each rank leads (the
wrapper's, which the rank shares), so the rank has it already and would otherwise get it twice.
"""

from __future__ import annotations

import os
import signal
import sys

#: The start of a wrapper's report line on the rank's stderr.
MARK = "hpcds1mpi-rank-peak: "
#: The signals the wrapper passes to the rank (SIGKILL and SIGSTOP cannot be caught).
FORWARDED = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGUSR1,
             signal.SIGUSR2, signal.SIGALRM, signal.SIGCONT, signal.SIGXCPU)
#: This file, which the ranks run (not a ``.pyc``).
WRAPPER = os.path.abspath(__file__)
#: The variable that turns the wrapper off (``0``): memory is then Slurm's accounting's.
SWITCH = "HPCDS1MPI_RANK_WRAPPER"


class RankReports:
    """What the wrappers of one launch reported: ``count`` ranks, the largest ``peak_mb`` (MB;
    NaN when none), their CPU seconds summed (``cpu_s``) and the launcher they ran ``under``
    (its command's name: ``srun``, ``mpirun.openmpi``)."""

    def __init__(self, count: int = 0, peak_mb: float = float("nan"), cpu_s: float = 0.0,
                 under: str = "srun"):
        self.count, self.peak_mb, self.cpu_s, self.under = count, peak_mb, cpu_s, under

    def source(self, ranks: int) -> str:
        """The telemetry's ``peak_rss_source`` for these reports of a launch of ``ranks``."""
        whole = ("" if self.count >= ranks else
                 f": {self.count} of {ranks} ranks reported (the others ended without)")
        return f"rank wrapper under {self.under} (wait4 ru_maxrss, the largest rank){whole}"


def wrapped(launcher: str, launch_tokens: list[str], program: list[str],
            in_allocation: bool = False) -> list[str]:
    """The tokens that run ``program`` under ``launch_tokens``: each rank under the wrapper
    where ``launcher`` is ``srun`` (its ranks are slurmstepd's) or, ``in_allocation`` (a Slurm
    allocation the sweep runs in), any launcher (an ``mpirun`` starts its daemons, and so its
    ranks, through srun); else as given (the ranks are the sweep's descendants)."""
    if not (launcher == "srun" or in_allocation) or not sys.executable:
        return [*launch_tokens, *program]
    return [*launch_tokens, sys.executable, "-I", "-S", WRAPPER, "--", *program]


def unreachable(nodes: int, timeout: float = 60.0) -> str:
    """Why the wrapper cannot run the ranks of a sweep on ``nodes`` nodes ("" where it can):
    ``HPCDS1MPI_RANK_WRAPPER=0``, or one task per node under ``srun`` that cannot start the
    sweep's Python with this file (a venv not on the compute nodes: every wrapped launch would
    fail, s38 review 1a). Asked once per sweep, about a second."""
    import shlex
    import shutil
    import subprocess

    if os.environ.get(SWITCH, "1") == "0":
        return f"{SWITCH}=0"
    srun = shutil.which("srun")
    if srun is None:
        return "no srun on PATH to ask the nodes"
    cmd = [srun, f"--nodes={nodes}", f"--ntasks={nodes}", "--ntasks-per-node=1",
           sys.executable, "-I", "-S", WRAPPER, "--", "true"]
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{shlex.join(cmd)}: {exc}"
    if done.returncode == 0:
        return ""
    last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    return f"{shlex.join(cmd)} failed: {last[:200]}"


def wrapping(launcher: str, in_allocation: bool, nodes: int, say=None) -> bool:
    """Whether a sweep's launches run their ranks under the wrapper: where :func:`wrapped`
    would, and where it reaches the ``nodes`` nodes (:func:`unreachable`; said once where not)."""
    if not (launcher == "srun" or in_allocation):
        return False
    why = unreachable(nodes)
    if why and say:
        say(f"the ranks run without their peak's wrapper ({why}): their memory is Slurm's "
            "accounting's sample, and a step shorter than its first sample has none")
    return not why


def is_wrapped(tokens: list[str]) -> bool:
    """Whether ``tokens`` run their ranks under the wrapper (:func:`wrapped`)."""
    return WRAPPER in tokens


def take_reports(err_fh, under: str = "srun") -> RankReports:
    """The wrappers' reports in the binary file ``err_fh`` (a launch's stderr, the ranks run
    ``under`` that launcher), which is rewritten without them: a report line goes whole (one
    srun ``--label`` put before it too); one written after the program's last, unfinished line
    leaves that line as it was."""
    import re
    import shutil
    import tempfile

    report = re.compile(re.escape(MARK).encode() + rb"maxrss_kib=(\d+) cpu_s=(\d+(?:\.\d*)?)\n?\Z")
    label = re.compile(rb"\s*\d+: ")
    found = RankReports(under=under)
    err_fh.seek(0)
    with tempfile.TemporaryFile() as kept:
        for line in iter(lambda: err_fh.readline(2**22), b""):
            if (match := report.search(line)) is None:
                kept.write(line)
                continue
            peak_mb = int(match.group(1)) / 1024
            found = RankReports(found.count + 1, peak_mb if found.count == 0 else
                                max(found.peak_mb, peak_mb), found.cpu_s + float(match.group(2)),
                                under)
            if not label.fullmatch(before := line[:match.start()]):
                kept.write(before)
        if found.count:
            kept.seek(0)
            err_fh.seek(0)
            err_fh.truncate()
            shutil.copyfileobj(kept, err_fh)
    return found


def _run_rank(program: list[str], mask: set) -> None:
    """The forked child: the signal state the wrapper had before Python, then the rank."""
    for signum in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them; exec keeps that
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    try:
        os.execvp(program[0], program)
    except OSError as exc:  # as slurmstepd says it, so the sweep reads a program not started
        os.write(2, f"{MARK.split(':')[0]}: error: execve(): {program[0]}: "
                    f"{exc.strerror}\n".encode(errors="replace"))
        os._exit(127 if isinstance(exc, FileNotFoundError) else 126)


def main(argv: list[str]) -> int:
    """Run ``argv`` (after a leading ``--``) as the rank, report its peak, end as it ended."""
    program = argv[1:] if argv[:1] == ["--"] else argv
    if not program:
        os.write(2, b"usage: rank_peak.py -- PROGRAM [ARGS...]\n")
        return 2
    watched = {signal.SIGCHLD, *FORWARDED}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, watched)  # before the fork: none is lost
    parent = os.getppid()
    pid = os.fork()
    if pid == 0:
        _run_rank(program, mask)
    while True:
        info = signal.sigwaitinfo(watched)
        if info.si_signo == signal.SIGCHLD:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
        elif info.si_pid != parent:
            try:
                os.kill(pid, info.si_signo)
            except ProcessLookupError:
                pass
    try:
        os.write(2, f"{MARK}maxrss_kib={usage.ru_maxrss} "
                    f"cpu_s={usage.ru_utime + usage.ru_stime:.6f}\n".encode())
    except OSError:
        pass  # stderr closed: the rank's end still stands
    if os.WIFSIGNALED(status):
        import resource

        signum = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        try:
            signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL, SIGSTOP: default already
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)
        return 128 + signum
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def without_reports(text: str) -> str:
    """``text`` (a launch's stderr, as read) without the wrappers' report lines: the output
    of a launch killed at its timeout, read before :func:`take_reports` rewrote the file."""
    return "".join(ln for ln in text.splitlines(keepends=True) if MARK not in ln)
