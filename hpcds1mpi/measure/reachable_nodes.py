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
_HOST_OPTION = re.compile(r"^--?(H|host|hosts|hostfile|machinefile|machine|"
                          r"default-hostfile|f)(=.*)?$")
#: Variables through which an mpiexec finds hosts beyond this one (a batch job's host file).
_HOST_VARIABLES = ("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_prte_default_hostfile",
                   "PRTE_MCA_prte_default_hostfile", "HYDRA_HOST_FILE", "LSB_DJOB_HOSTFILE",
                   "LSB_HOSTS", "PE_HOSTFILE", "COBALT_NODEFILE")


def reachable_nodes(launch, env: dict | None = None) -> tuple[int, str] | None:
    """(the most nodes ``launch`` can start ranks on from here, what holds them, as said in
    a sentence); None where this cannot be told (srun outside an allocation, an mpiexec
    given hosts, a Slurm job id without its node count).

    Raises:
        ConfigError: a Slurm allocation whose node count is not a number.
    """
    env = os.environ if env is None else env
    if "SLURM_JOB_ID" in env:
        count = env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES")
        if count is None:
            return None  # a job id alone (a copied environment): not told
        if not count.strip().isdigit():
            raise ConfigError(f"SLURM_JOB_NUM_NODES={count!r} is no node count; run the sweep "
                              "in a Slurm allocation that sets it (salloc -N ...)")
        return int(count), f"this Slurm allocation ({env['SLURM_JOB_ID']}) has"
    if getattr(launch, "name", "") == "srun":
        return None  # srun outside an allocation asks Slurm for its own nodes
    if any(_HOST_OPTION.match(word) for word in getattr(launch, "args", ())) or \
            any(env.get(name) for name in _HOST_VARIABLES):
        return None
    if env.get("PBS_NODEFILE"):
        try:
            with open(env["PBS_NODEFILE"], encoding="utf-8", errors="replace") as fh:
                hosts = {ln.strip() for ln in fh} - {""}
        except OSError:
            return None
        return len(hosts), "this PBS job has"
    return 1, "this machine, outside any allocation, is"


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
