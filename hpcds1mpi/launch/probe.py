"""The launch probe: proof, before a sweep, that the launcher starts 2 ranks as one job.

The ELF check (:mod:`hpcds1mpi.launch.mpi_family`) cannot see through a wrapper script or
know how a site's ``srun --mpi`` plugin is set up. The probe asks the launcher itself: it
starts 2 ranks of ``sh -c 'echo ...'`` with the same launcher tokens, options and environment
the program will get, and each rank prints the wire-up variables its launcher gave it:

* Open MPI's ``mpirun``: ``OMPI_COMM_WORLD_RANK`` / ``OMPI_COMM_WORLD_SIZE``;
* hydra (MPICH, Intel MPI), ``srun --mpi=pmi2``: ``PMI_RANK`` / ``PMI_SIZE``;
* ``srun --mpi=pmix``: ``PMIX_RANK`` with ``PMIX_NAMESPACE``;
* ``SLURM_PROCID`` / ``SLURM_NTASKS`` (no MPI wire-up by themselves: ``--mpi=none``).

An MPI library joins its ranks into one world only through the wire-up it speaks: Open MPI
through its mpirun's variables or PMIx, the MPICH family through PMI (hydra, pmi2; PMIx where
it was built with it). The variables show what the launcher offers, not what the library can
take: an MPICH built without PMIx under ``srun --mpi=pmix`` sees ``PMIX_RANK`` and starts as
1-rank copies, so that pairing is refused before the probe, by the library's dependencies
(:func:`hpcds1mpi.launch.mpi_family.speaks_pmix`). The probe passes when both ranks came up,
with ranks 0 and 1 of a world of 2 in a wire-up the program's MPI speaks (any MPI wire-up when
the program's MPI is unknown). Compiling nothing, it runs in a fraction of a second; no MPI
library is started, so it cannot tell a broken network (the program's own ``--ranks-regex``
can).
"""

from __future__ import annotations

import os
import re
import subprocess

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch import mpi_family
from hpcds1mpi.launch.mpi_names import FAMILY_NAMES, MPICH, OPENMPI

#: What each rank prints: one line, the wire-ups as name=rank:size.
PROBE_SCRIPT = ('echo "hpcds1mpi-probe ompi=${OMPI_COMM_WORLD_RANK:-}:${OMPI_COMM_WORLD_SIZE:-} '
                'pmi=${PMI_RANK:-}:${PMI_SIZE:-} '
                'pmix=${PMIX_RANK:-}:${PMIX_NAMESPACE:+ns} '
                'slurm=${SLURM_PROCID:-}:${SLURM_NTASKS:-}"')
#: The wire-ups each MPI family may speak (PMIx for MPICH only where its library links
#: libpmix: checked before the probe).
SPEAKS = {OPENMPI: ("ompi", "pmix"), MPICH: ("pmi", "pmix")}
ANY_MPI = ("ompi", "pmi", "pmix")
RANKS = 2


def parse(output: str) -> list[dict[str, tuple[str, str]]]:
    """The probe lines of ``output``: one ``{wire-up: (rank, size)}`` per rank that printed."""
    ranks = []
    for line in output.splitlines():
        at = line.find("hpcds1mpi-probe ")  # after a launcher's label (srun -l's "0: ",
        if at < 0:  # --tag-output's "[1,0]<stdout>:"): s30 verifier V2 D4
            continue
        line = line[at:]
        fields = {}
        for item in line.split()[1:]:
            name, _, value = item.partition("=")
            rank, _, size = value.partition(":")
            fields[name] = (rank, size)
        ranks.append(fields)
    return ranks


def judge(ranks: list[dict], family: str | None) -> tuple[str | None, str]:
    """(the wire-up that makes the 2 ranks one job, or None; what was seen)."""
    seen = "; ".join(" ".join(f"{k}={r}:{s}" for k, (r, s) in f.items() if r or s) or "nothing"
                     for f in ranks) or "no rank printed"
    if len(ranks) != RANKS:
        return None, f"{len(ranks)} rank(s) printed ({seen})"
    for name in SPEAKS.get(family or "", ANY_MPI):
        values = [f.get(name, ("", "")) for f in ranks]
        if sorted(v[0] for v in values) != ["0", "1"]:
            continue
        if name == "pmix" or all(v[1] == str(RANKS) for v in values):
            return name, seen
    return None, seen


def launch_script(tokens: list[str], script: str, env: dict, what: str, timeout: float = 60.0,
                  cwd: str | None = None) -> tuple[int, str, str]:
    """Start ``sh -c script`` under the launch ``tokens`` in its own session, and wait for it
    (``what``: the probe, as messages name it). Shared by the 2-rank probe and the rank-host
    probe (:mod:`hpcds1mpi.launch.rank_hosts`).

    Returns:
        (exit code, stdout, stderr).

    Raises:
        LaunchError: the launcher cannot be started, or did not end within ``timeout``
            seconds (its process group is ended).
    """
    from hpcds1mpi.launch.help_text import launcher_text
    from hpcds1mpi.runtime.processes import die_with_parent, end_group

    argv = [*tokens, "sh", "-c", script]
    try:  # bytes, read as the sweep reads a launch (prterun's NUL; a byte not UTF-8)
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, cwd=cwd,
                                start_new_session=True, preexec_fn=die_with_parent())
    except OSError as exc:
        raise LaunchError(f"cannot start the launcher {tokens[0]}: {exc.strerror}; nothing "
                          "was launched") from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        end_group(proc)
        raise LaunchError(f"the {what} ({' '.join(tokens)}) did not end within {timeout:g} s"
                          f"{_why_waiting(proc)}") from None
    except BaseException:
        end_group(proc)
        raise
    return proc.returncode, launcher_text(out), launcher_text(err)


#: srun's words while Slurm has not given its job or step the nodes yet.
_QUEUED = re.compile(r"queued and waiting for resources|Requested nodes are busy|"
                     r"Job \S+ step creation temporarily disabled", re.IGNORECASE)


def _why_waiting(proc: subprocess.Popen) -> str:
    """Why an ended probe ``proc`` had not finished, and what to do, for its message: srun's
    "queued and waiting for resources" (s36 tester M6: dropped, the message said only that
    it did not end), else the launcher's last line."""
    from hpcds1mpi.launch.help_text import launcher_says, launcher_text

    try:
        out, err = map(launcher_text, proc.communicate(timeout=5))
    except (subprocess.SubprocessError, OSError, ValueError):
        out, err = "", ""
    if (said := next((ln.strip() for ln in (err or "").splitlines() if _QUEUED.search(ln)),
                     "")):
        return (f" ({said[:200]}): Slurm had not given it the nodes yet, so nothing was "
                "measured; see what holds them (squeue), or run the sweep inside an "
                "allocation that has them (salloc)")
    last = launcher_says(err or "") or launcher_says(out or "")
    return (f" ({last[:200]})" if last else " (it said nothing)") + \
        ("; nothing was measured: check that the launcher starts `sh -c` as it would the "
         "program (--mpiexec / --launcher-args), or that the nodes are free")


def run_probe(tokens: list[str], env: dict, family: str | None, timeout: float = 60.0) -> str:
    """Start the probe with ``tokens`` (a 2-rank launch, without the program) and check it.

    Returns:
        One line saying which wire-up joined the ranks.

    Raises:
        LaunchError: the launch failed, or its ranks are not one job of 2 in a wire-up the
            program's MPI speaks.
    """
    code, out, err = launch_script(tokens, PROBE_SCRIPT, env, f"{RANKS}-rank launch probe",
                                   timeout)
    want = FAMILY_NAMES.get(family or "", "an MPI")
    if code != 0:
        from hpcds1mpi.launch.help_text import launcher_says

        said = launcher_says(err) or launcher_says(out)  # not the help text's rule (s29 A5)
        slots = (f"an mpirun has as many slots on a node as the allocation's tasks per node "
                 f"(or its host file's slots): ask for {RANKS} (salloc --ntasks-per-node="
                 f"{RANKS}), use --launcher srun, or " if "not enough slots" in said else "")
        raise LaunchError(f"the {RANKS}-rank launch probe failed (exit {code}: "
                          f"{said}); nothing was measured: {slots}check --mpiexec / "
                          "--launcher-args")
    wire, seen = judge(parse(out), family)
    if wire is None:
        raise LaunchError(f"{' '.join(tokens)} does not start {RANKS} ranks as one job of "
                          f"{want} (probe saw: {seen[:240]}); nothing was measured: "
                          f"{untried(tokens, env, family)}")
    return f"launch probe: {RANKS} ranks joined through {wire} ({seen})"


#: srun's ``--mpi`` plugins each MPI family can be wired up by, the likeliest first.
PLUGINS = {OPENMPI: ("pmix",), MPICH: ("pmi2", "pmix")}


def untried(tokens: list[str], env: dict, family: str | None) -> str:
    """What to try when the launch ``tokens`` did not make one job: what was not tried. Under
    srun, the ``--mpi`` plugins the program's MPI speaks other than the one that failed (not
    "pmix/pmi2" after pmi2 failed); under an mpiexec, the program's own launcher by path."""
    launchers = mpi_family.candidates(family, env, exclude=tokens[0]) if family else []
    own = f"--mpiexec {launchers[0]}" if launchers else "--mpiexec PATH"
    plugins = PLUGINS.get(family or "", ("pmix", "pmi2"))
    if os.path.basename(tokens[0]) == "srun":
        tried = next((t.split("=", 1)[1] for t in tokens if t.startswith("--mpi=")), "none")
        others = [p for p in plugins if not tried.startswith(p)]
        if others:
            return f"pass --mpi {' or --mpi '.join(others)}, or the program's own launcher {own}"
        return f"pick the program's own launcher: {own}"
    return (f"pick the program's own launcher: {own} (or, in a Slurm allocation, --launcher srun "
            f"--mpi {plugins[0]})")


def probe_config() -> Configuration:
    """The configuration the probe launches: 2 ranks on one node, 1 thread each."""
    return Configuration(1, RANKS, 1)
