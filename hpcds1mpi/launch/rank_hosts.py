"""Where a launch's ranks land: a layout (one rank per node, or the configuration's ranks per
node) launched through the program's launcher, each rank asked for its host.

Where the node count cannot be read from the environment (a foreign scheduler's job, a host
file, a host option), the launcher decides where ranks go, and may not read what placed it:
MPICH's hydra ignores LSF's and Grid Engine's variables and starts every rank on this host,
so a 2-node configuration ran on one and was recorded as two (s35 tester X2). The kernels'
sweep sees where its ranks are (``measure/driver.check_layout``); a program sweep asks the
launcher, as the 2-rank probe (:mod:`hpcds1mpi.launch.probe`) does: the same tokens, options,
environment and folder, ``sh -c`` in place of the program. Inside an allocation of several
nodes hydra and Open MPI's mpirun fill its slots node after node, and had run a 1-node x
2-rank configuration one rank per node (s36 tester M0): each layout is asked there too. A
host is ``uname -n``, with Slurm's node name where it differs (the test Slurm runs two nodes
on one machine).
"""

from __future__ import annotations

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import LaunchError

#: What each rank prints: its host name, and Slurm's name of its node (empty outside Slurm).
HOST_SCRIPT = 'echo "hpcds1mpi-host $(uname -n) ${SLURMD_NODENAME:-}"'


def layout(nodes: int, per_node: int = 1) -> Configuration:
    """The configuration the host probe launches: ``per_node`` ranks (of one thread) on each
    of ``nodes`` nodes."""
    return Configuration(nodes, per_node, 1)


def parse_hosts(output: str) -> list[str]:
    """The host of each rank that printed a :data:`HOST_SCRIPT` line in ``output`` (after a
    launcher's label such as srun -l's "0: "): ``uname -n``, or ``"n1 on vm"`` where Slurm's
    node name is not the host name's first label."""
    hosts = []
    for line in output.splitlines():
        at = line.find("hpcds1mpi-host ")
        if at < 0:
            continue
        words = line[at:].split()[1:]
        host = words[0] if words else "?"
        slurm = words[1] if len(words) > 1 else ""
        hosts.append(host if not slurm or slurm == host.split(".", 1)[0]
                     else f"{slurm} on {host}")
    return hosts


def rank_hosts(launch, nodes: int, env: dict, cwd: str | None = None,
               timeout: float = 60.0, per_node: int = 1) -> list[str]:
    """The host of each rank of a launch of ``per_node`` ranks on each of ``nodes`` nodes
    through ``launch`` (a :class:`~hpcds1mpi.launch.launchers.Launcher`) in ``env`` and
    folder ``cwd``.

    Raises:
        LaunchError: the launch cannot start, fails or does not end within ``timeout`` s (a
            configuration of that layout would fail the same way).
    """
    from hpcds1mpi.launch.probe import launch_script

    config = layout(nodes, per_node)
    tokens = launch.tokens(config)
    what = f"{nodes}-node launch probe" if per_node == 1 else \
        f"{nodes}-node x {per_node}-rank launch probe"
    code, out, err = launch_script(tokens, HOST_SCRIPT, {**env, **launch.environment(config)},
                                   what, timeout, cwd)
    if code != 0:
        from hpcds1mpi.launch.help_text import launcher_says

        said = launcher_says(err) or launcher_says(out)
        drop = f"drop --nodes {nodes}" if per_node == 1 else (
            f"drop --ranks-per-node {per_node} (in a Slurm allocation, an mpirun has as many "
            f"slots on a node as its tasks per node: salloc --ntasks-per-node={per_node}, or "
            "--launcher srun)")
        layout_words = f"on {nodes} nodes" if per_node == 1 else \
            f"of {nodes} node{'s' if nodes != 1 else ''} x {per_node} ranks"
        raise LaunchError(f"the {what} ({' '.join(tokens)}) failed (exit {code}: {said}); "
                          f"nothing was measured: a run {layout_words} would fail too: "
                          f"check --mpiexec / --launcher-args, or {drop}")
    return parse_hosts(out)
