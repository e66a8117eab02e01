"""How many nodes a program sweep's launcher can start ranks on from here, checked before
anything launches.

:func:`reachable_nodes` reads it from the environment alone (nothing is run): a Slurm
allocation's node count for any launcher; ``srun`` outside an allocation asks Slurm for its
own (unknown here); an ``mpiexec`` outside one starts ranks on this machine only, unless a
host file or host list (its options, Open MPI's / hydra's / Intel MPI's variables, Open MPI's
installation defaults, a PBS / Flux / LSF / SGE / Cobalt job) says where else.
:func:`check_nodes_reachable` refuses a plan with configurations on more nodes than that
(s29 tester A8: ``--nodes 2`` on one machine failed every run with Open MPI's "more processes
than the ppr", where hydra would have run both "nodes" on this one). It refuses only where
it knows: any host source it does not count means "cannot tell", no check (s29 R3: Intel
MPI's, Flux's, LSF's host lists and Open MPI's default host file refused sweeps that ran).
"""

from __future__ import annotations

import glob
import os
import re
import shutil

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.foreign_jobs import host_variables

#: mpiexec options that name the hosts ranks start on (Open MPI's and hydra's spellings), or
#: read options from a file that may (a config file, Open MPI's ``--tune``/``-am`` files).
_HOST_OPTION = re.compile(r"--?(H|host|hosts|hostfile|machinefile|machine|default-hostfile|"
                          r"add-host|add-hostfile|rankfile|rf|dvm|dvm-uri|f|configfile|"
                          r"tune|am)(=.*)?", re.S)
#: Open MPI's options that set one MCA parameter (``--mca NAME VALUE``) ...
_MCA_OPTION = re.compile(r"--?(mca|gmca|omca|prtemca|pmixmca)", re.S)
#: ... and the parameters among them that give hosts, files of parameters, or a node source:
#: ``orte_default_hostfile``, ``prte_default_dash_host``, ``mca_base_param_files``, ``ras``.
_MCA_HOSTS = re.compile(r"\w*(hostfile|dash_host|param_files)|ras(_\w*)?", re.S)
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
#: Variables through which hydra's and Intel MPI's mpiexec find hosts beyond this one (s29
#: R3); another scheduler's job and hosts are told by :func:`~hpcds1mpi.foreign_jobs.host_variables`.
_HYDRA_HOST_VARIABLES = ("HYDRA_HOST_FILE", "I_MPI_HYDRA_HOST_FILE", "I_MPI_HYDRA_HOSTS")
#: Open MPI's / PRRTE's variables of :data:`_MCA_HOSTS` parameters.
_MCA_VARIABLE = re.compile(r"(OMPI|PRTE)_MCA_(" + _MCA_HOSTS.pattern + ")", re.S)
#: Open MPI's (up to 4.x) and PRRTE's (5.x) installation files that may give hosts, in its
#: sysconfdir (PREFIX/etc; a distribution's /etc/openmpi*) or a user's ~/.openmpi, ~/.prte.
_DEFAULT_HOSTFILES = ("openmpi-default-hostfile", "prte-default-hostfile")
_PARAM_FILES = ("openmpi-mca-params.conf", "prte-mca-params.conf", "mca-params.conf")
#: The most of such a file that is read (a real one is a few KB): a longer one, not told.
INSTALL_FILE_MAX_BYTES = 1 << 20


def reachable_nodes(launch, env: dict | None = None) -> tuple[int, str] | None:
    """(the most nodes ``launch`` can start ranks on from here, what holds them, as said in
    a sentence); None where this cannot be told (srun outside an allocation, an mpiexec
    given hosts, a Slurm job id without its node count).

    Raises:
        ConfigError: a Slurm allocation whose node count is not a positive number; a
            ``$PBS_NODEFILE`` that is not a regular file or is too large to be a node file.
    """
    reach = _reach(launch, os.environ if env is None else env)
    return None if isinstance(reach, str) else reach


def _reach(launch, env) -> tuple[int, str] | str:
    """:func:`reachable_nodes`'s answer, or, where it cannot be told, what made it so (the
    variables, options or files, for a refusal of :func:`check_nodes_landed`)."""
    from hpcds1mpi.slurm_allocation import leftover_job

    # a leftover job id's SLURM_NNODES is no node count (s32 T4; the sweep says the note)
    if "SLURM_JOB_ID" in env and not leftover_job(env):
        name = "SLURM_JOB_NUM_NODES" if env.get("SLURM_JOB_NUM_NODES") else "SLURM_NNODES"
        count = env.get(name)
        if not count:
            return "SLURM_JOB_ID without SLURM_JOB_NUM_NODES"  # a copied environment
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
        return "srun outside an allocation"  # srun asks Slurm for its own nodes
    # The host variables and options are only tested, never opened: mpiexec reads them.
    args = tuple(str(w) for w in getattr(launch, "args", ()))
    if _names_hosts(args):
        return "the launcher's host options"
    # PBS_NODEFILE is counted below; the other schedulers' host sources are not read here
    named = [name for name in _HYDRA_HOST_VARIABLES if env.get(name)] \
        + host_variables(env, counted=("PBS_NODEFILE",)) + sorted(
            name for name, value in env.items() if _MCA_VARIABLE.fullmatch(name) and value)
    if named:
        return ", ".join(_shown(name) if len(name) > 40 else name for name in named[:4]) + \
            (", ..." if len(named) > 4 else "")
    if env.get("PBS_NODEFILE"):
        hosts = _count_hosts(env["PBS_NODEFILE"])
        return "PBS_NODEFILE (unreadable)" if hosts is None else (hosts, "this PBS job has")
    if getattr(launch, "name", "") == "mpiexec" and type(launch).__name__ != "HydraMpiexec" \
            and _open_mpi_defaults_name_hosts(getattr(launch, "command", "mpiexec"), env):
        return "Open MPI's installation files"  # its default host file or MCA parameters
    return 1, "this machine, outside any allocation, is"


def _names_hosts(args: tuple[str, ...]) -> bool:
    """Whether launcher options ``args`` name hosts: a host option, or an MCA parameter of
    :data:`_MCA_HOSTS` (``--mca orte_default_hostfile FILE``, s29 R3)."""
    return any(_HOST_OPTION.fullmatch(word) or (
        _MCA_OPTION.fullmatch(word) and i + 1 < len(args) and _MCA_HOSTS.fullmatch(args[i + 1]))
        for i, word in enumerate(args))


def _open_mpi_defaults_name_hosts(command: str, env) -> bool:
    """Whether the Open MPI installation of ``command`` (a path, or a name on ``$PATH``), or
    the user's own MCA files, may give hosts: a default host file with a host line, or an MCA
    parameter file setting a :data:`_MCA_HOSTS` parameter (s29 R3). A missing, unreadable or
    irregular file is skipped; one over :data:`INSTALL_FILE_MAX_BYTES` counts as giving hosts
    (not told)."""
    path = command if "/" in command else shutil.which(command, path=env.get("PATH"))
    dirs = [env.get("OPAL_SYSCONFDIR"),
            *(os.path.join(env[v], "etc") for v in ("OPAL_PREFIX", "PRTE_PREFIX") if env.get(v))]
    if path:  # PREFIX/bin/mpirun -> PREFIX/etc, through a link farm's link too
        real = os.path.realpath(path)
        dirs += [os.path.join(os.path.dirname(os.path.dirname(p)), "etc") for p in (path, real)]
        if real.startswith("/usr/"):  # a distribution's build: sysconfdir /etc/openmpi*
            dirs += ["/etc/openmpi", *sorted(glob.glob("/etc/openmpi-*"))]
    home = env.get("HOME")
    users = [os.path.join(home, ".openmpi"), os.path.join(home, ".prte")] if home else []
    for folder in dict.fromkeys(d for d in dirs if d):
        for name in _DEFAULT_HOSTFILES:
            text = _small_text(os.path.join(folder, name))
            if text is None or any(line.split("#", 1)[0].strip() for line in text.splitlines()):
                return True
    for folder in dict.fromkeys([*(d for d in dirs if d), *users]):
        for name in _PARAM_FILES:
            text = _small_text(os.path.join(folder, name))
            if text is None or any(
                    _MCA_HOSTS.fullmatch(line.split("=", 1)[0].strip())
                    for line in text.splitlines() if "=" in line and
                    not line.lstrip().startswith("#")):
                return True
    return False


def _small_text(path: str) -> str | None:
    """The text of installation file ``path``, "" where it is not read (missing, unreadable,
    no regular file), None where it is over :data:`INSTALL_FILE_MAX_BYTES` (not told)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        data = os.read(fd, INSTALL_FILE_MAX_BYTES + 1)
    except OSError:
        return ""
    finally:
        os.close(fd)
    return None if len(data) > INSTALL_FILE_MAX_BYTES else data.decode("utf-8", "replace")


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
    # Read for every plan, one node too: a PBS_NODEFILE that is a FIFO is refused here, not
    # left to hang the launcher (s29 tester H3).
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
    # Host names help only outside an allocation, where a host file makes it "not told"
    # (s29 R3); inside one, the allocation's count is what the launcher reaches.
    hosts = (', or name the hosts: --launcher-args "--hostfile FILE"'
             if holder.startswith("this machine") else "")
    raise ConfigError(f"--nodes {shown} asks for {most} nodes but {holder} {held} node"
                      f"{'s' if held != 1 else ''}: run the sweep inside `salloc -N {most}` "
                      f"(or your cluster's allocation of {most} nodes){hosts}, or {drop}")


#: Layouts whose ranks landed as asked in this process: key -> each rank's host.
_LANDED: dict[tuple, list[str]] = {}


def _landing_fixes(launch, env: dict) -> str:
    """What to do where a layout's ranks landed elsewhere: drop the launcher options' placement
    (only where there are any), launch with srun inside a Slurm allocation, or give the
    launcher the hosts (a PBS job's ``$PBS_NODEFILE``). s36 review 6: it named
    ``--launcher-args`` and srun whatever the launcher was given and wherever it ran."""
    import shlex

    from hpcds1mpi.slurm_allocation import leftover_job

    args = tuple(str(w) for w in getattr(launch, "args", ()))
    fixes = [f"drop the placement options from --launcher-args (or the cluster file's "
             f"launcher_args: {_shown(shlex.join(args), 60)})"] if args else []
    if "SLURM_JOB_ID" in env and not leftover_job(env):
        fixes.append("launch with srun inside the Slurm allocation (--launcher srun), which "
                     "places the ranks as asked")
    elif not _names_hosts(args):
        hosts = "$PBS_NODEFILE" if env.get("PBS_NODEFILE") else "FILE"
        fixes.append(f'give the launcher the job\'s hosts (--launcher-args "--hostfile '
                     f'{hosts}")')
    return ", or ".join(fixes)


def check_nodes_landed(plan, launch, env: dict | None = None, cwd_of=None) -> list[str]:
    """Where an mpiexec may start ranks on more than one node — a Slurm allocation (or PBS
    job) of several nodes, or where :func:`reachable_nodes` cannot tell the count — find out
    where the ranks of each layout of ``plan`` land before any run is recorded under it: one
    launch of each layout (nodes x ranks per node, above one rank) through ``launch`` in
    ``env`` and the folder ``cwd_of(spec)`` of its first run
    (:func:`hpcds1mpi.launch.rank_hosts.rank_hosts`), which must land on as many hosts as its
    nodes, as many ranks on each as its ranks per node. s35 tester X2: in an LSF job's
    variables hydra started both ranks of ``--nodes 2`` on this host, recorded as 2 nodes;
    s36 tester M0: in ``salloc -N2 --ntasks-per-node=1`` hydra and mpirun ran a 1-node x 2-rank
    configuration one rank per node, recorded as 1 node. srun is not asked: it is given the
    nodes and tasks per node it asks Slurm for, or fails.

    Returns:
        One line per layout probed, saying the hosts seen.

    Raises:
        ConfigError: a layout whose ranks landed elsewhere, in one line naming the hosts,
            what left the placement to the launcher and what to do.
        LaunchError: a probe launch failed (a run of that layout would fail too).
    """
    from collections import Counter

    from hpcds1mpi.launch.rank_hosts import layout, rank_hosts

    env = dict(os.environ if env is None else env)
    reach = _reach(launch, env)
    if getattr(launch, "name", "") == "srun" or (not isinstance(reach, str) and reach[0] <= 1):
        return []  # one node reached: every rank lands on it
    told = not isinstance(reach, str)
    held = f"{reach[1]} {reach[0]} nodes" if told else \
        f"{reach} left the node count to the launcher"
    where = f"{held}, where the launcher places them" if told else held
    first = {}  # (nodes, ranks per node) -> its first run: one probe per layout per sweep
    for spec in plan.runs:
        first.setdefault((spec.config.nodes, spec.config.ranks_per_node), spec)
    lines, landed = [], []
    for nodes, per_node in sorted(k for k in first if k[0] * k[1] > 1):
        cwd = cwd_of(first[nodes, per_node]) if cwd_of else None
        # tune --program sweeps once per trial: a layout that landed is not asked again
        key = (tuple(launch.tokens(layout(nodes, per_node))), cwd, tuple(sorted(env.items())))
        earlier = key in _LANDED
        ranks = _LANDED[key] if earlier else rank_hosts(launch, nodes, env, cwd,
                                                         per_node=per_node)
        counts = Counter(ranks)
        hosts = sorted(counts)
        shown = ", ".join((_shown(h, 60) if len(h) > 60 else h) + (
            f": {counts[h]}" if per_node > 1 else "") for h in hosts[:4]) + \
            (", ..." if len(hosts) > 4 else "")
        each = "one" if per_node == 1 else str(per_node)
        what = f"a launch of {nodes * per_node} ranks, {each} per node, landed on " \
               f"{len(hosts)} host{'s' if len(hosts) != 1 else ''} ({shown or 'none'})"
        if not told and len(hosts) < nodes:
            fewer = ",".join(str(n) for n in sorted({1, *landed}))
            raise ConfigError(
                f"--nodes {nodes}: {what}; {reach} left the node count unknown, so nothing is "
                f"recorded as {nodes} nodes: run the sweep inside the allocation with a "
                "launcher that reads it, give the hosts to the launcher (--launcher-args "
                f"\"--hostfile FILE\"), or sweep --nodes {fewer} only")
        if len(hosts) != nodes or set(counts.values()) != {per_node}:
            raise ConfigError(
                f"--nodes {nodes} --ranks-per-node {per_node}: {what}; "
                f"{held}, so nothing is recorded as "
                f"{nodes} node{'s' if nodes != 1 else ''} x {per_node} rank"
                f"{'s' if per_node != 1 else ''}: {_landing_fixes(launch, env)}")
        _LANDED[key] = ranks
        landed.append(nodes)
        named = f"{nodes}-node" if per_node == 1 else f"{nodes}-node x {per_node}-rank"
        lines.append(f"{named} launch probe: its ranks landed on {len(hosts)} host"
                     f"{'s' if len(hosts) != 1 else ''} ({shown}); {where}"
                     + (" (checked earlier in this run)" if earlier else ""))
    return lines
