"""How many nodes a program sweep's launcher can start ranks on from here, checked before
anything launches.

:func:`reachable_nodes` reads it from the environment alone (nothing is run): a Slurm
allocation's node count for any launcher; ``srun`` outside an allocation asks Slurm for its
own (unknown here); an ``mpiexec`` outside one starts ranks on this machine only, unless a
host file or host list (its options, Open MPI's / hydra's variables, a PBS / LSF / SGE job)
says where else. :func:`check_nodes_reachable` refuses a plan with configurations on more
nodes than that (s29 tester A8: ``--nodes 2`` on one machine failed every run with Open MPI's
"more processes than the ppr", where hydra would have run both "nodes" on this one).
"""

from __future__ import annotations

import os
import re

from hpcds1mpi.errors import ConfigError

#: mpiexec options that name the hosts ranks start on (Open MPI's and hydra's spellings).
_HOST_OPTION = re.compile(r"--?(H|host|hosts|hostfile|machinefile|machine|"
                          r"default-hostfile|f)(=.*)?", re.S)
#: A Slurm node count as Slurm writes it: ASCII digits only (s29 tester H4: ``isdigit()``
#: took "²" and "٣", and 5,000 digits overran int()'s limit, each a traceback).
_NODE_COUNT = re.compile(r"[0-9]{1,9}")
#: A job id fit to quote in a one-line message (array and het jobs: 12_3, 12+0).
_JOB_ID = re.compile(r"[0-9A-Za-z_.+-]{1,40}")
#: Bounds on reading $PBS_NODEFILE (s29 tester H3: /dev/zero grew memory without end): a
#: node file has one line per slot, so a million slots fit in 32 MiB.
NODEFILE_MAX_BYTES = 32 << 20
NODEFILE_MAX_LINE = 512  # a host name is at most 253 characters
NODEFILE_MAX_HOSTS = 100_000
#: Variables through which an mpiexec finds hosts beyond this one (a batch job's host file).
_HOST_VARIABLES = ("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_prte_default_hostfile",
                   "PRTE_MCA_prte_default_hostfile", "HYDRA_HOST_FILE", "LSB_DJOB_HOSTFILE",
                   "LSB_HOSTS", "PE_HOSTFILE", "COBALT_NODEFILE")


def reachable_nodes(launch, env: dict | None = None) -> tuple[int, str] | None:
    """(the most nodes ``launch`` can start ranks on from here, what holds them, as said in
    a sentence); None where this cannot be told (srun outside an allocation, an mpiexec
    given hosts, a Slurm job id without its node count).

    Raises:
        ConfigError: a Slurm allocation whose node count is not a positive number; a
            ``$PBS_NODEFILE`` that is not a regular file or is too large to be a node file.
    """
    env = os.environ if env is None else env
    if "SLURM_JOB_ID" in env:
        name = "SLURM_JOB_NUM_NODES" if env.get("SLURM_JOB_NUM_NODES") else "SLURM_NNODES"
        count = env.get(name)
        if not count:
            return None  # a job id alone (a copied environment): not told
        # Refused, not taken as unknown: a job whose count is garbled would otherwise launch
        # a sweep that is never checked (s29 tester H4; 0 nodes is no allocation either).
        if not _NODE_COUNT.fullmatch(count.strip()) or int(count) == 0:
            raise ConfigError(f"{name}={_shown(count)} is no node count; run the sweep in a "
                              "Slurm allocation that sets it (salloc -N ...), or unset "
                              f"SLURM_JOB_ID and {name} outside one")
        job = env["SLURM_JOB_ID"].strip()
        return int(count), (f"this Slurm allocation ({job}) has" if _JOB_ID.fullmatch(job)
                            else "this Slurm allocation has")
    if getattr(launch, "name", "") == "srun":
        return None  # srun outside an allocation asks Slurm for its own nodes
    # The host variables and options are only tested, never opened: mpiexec reads them.
    if any(_HOST_OPTION.fullmatch(str(word)) for word in getattr(launch, "args", ())) or \
            any(env.get(name) for name in _HOST_VARIABLES):
        return None
    if env.get("PBS_NODEFILE"):
        hosts = _count_hosts(env["PBS_NODEFILE"])
        return None if hosts is None else (hosts, "this PBS job has")
    return 1, "this machine, outside any allocation, is"


def _shown(value: str, most: int = 40) -> str:
    """``value`` quoted for a one-line message, cut short (s29 tester H4: 5,000 digits)."""
    return repr(value) if len(value) <= most else \
        f"{value[:most]!r}... ({len(value)} characters)"


def _count_hosts(path: str) -> int | None:
    """The distinct host names in the PBS node file ``path``, read in bounded memory; None
    where it cannot be read (not told, as before).

    Raises:
        ConfigError: ``path`` is no regular file (a FIFO would block, /dev/zero never end) or
            is beyond :data:`NODEFILE_MAX_BYTES`, a line beyond :data:`NODEFILE_MAX_LINE`,
            more than :data:`NODEFILE_MAX_HOSTS` hosts.
    """
    import stat

    def refuse(why: str) -> ConfigError:
        return ConfigError(f"PBS_NODEFILE={_shown(path, 300)} {why}; point it at the PBS job's node "
                           "file, or unset PBS_NODEFILE outside a PBS job")

    try:  # stat first, then open without blocking and check again (it may have been swapped)
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise refuse("is not a regular file")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):  # missing, unreadable, a NUL in the name: not told
        return None
    hosts: set[bytes] = set()
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise refuse("is not a regular file")
        rest, total = b"", 0
        while True:
            chunk = os.read(fd, 1 << 20)
            total += len(chunk)
            if total > NODEFILE_MAX_BYTES:
                raise refuse(f"is over {NODEFILE_MAX_BYTES >> 20} MiB, too large for a node "
                             "file")
            *lines, rest = (rest + chunk).split(b"\n")
            if not chunk:
                lines.append(rest)  # the last line, without its line break
            if any(len(line) > NODEFILE_MAX_LINE for line in (*lines, rest)):
                raise refuse(f"has a line over {NODEFILE_MAX_LINE} bytes, no host name")
            hosts.update(line.strip() for line in lines)  # bytes: any encoding counts
            hosts.discard(b"")
            if len(hosts) > NODEFILE_MAX_HOSTS:
                raise refuse(f"names more than {NODEFILE_MAX_HOSTS:,} hosts, too many for a "
                             "node file")
            if not chunk:
                return len(hosts)
    except OSError:
        return None
    finally:
        os.close(fd)


def check_nodes_reachable(plan, launch, env: dict | None = None) -> None:
    """Refuse, before anything launches, a plan with configurations on more nodes than
    :func:`reachable_nodes` says the launcher can reach (every one of them would fail, or,
    under hydra, run on fewer nodes than recorded).

    Raises:
        ConfigError: one line naming the node counts asked and held, and what to do.
    """
    reach = reachable_nodes(launch, env)
    asked = sorted({spec.config.nodes for spec in plan.runs})
    if reach is None or not asked or asked[-1] <= reach[0]:
        return
    held, holder = reach
    most = asked[-1]
    shown = ",".join(str(n) for n in asked)
    fewer = [n for n in asked if n <= held]
    drop = (f"sweep --nodes {','.join(str(n) for n in fewer)} only" if fewer
            else f"drop --nodes {shown}")
    raise ConfigError(f"--nodes {shown} asks for {most} nodes but {holder} {held} node"
                      f"{'s' if held != 1 else ''}: run the sweep inside `salloc -N {most}` "
                      f"(or your cluster's allocation of {most} nodes), or {drop}")
