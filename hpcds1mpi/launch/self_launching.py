"""A program that starts its own ranks: refused as the program of a sweep's launcher.

Under ``mpiexec -n R`` each rank of such a program starts a whole job again: a wrapper script
running ``mpiexec -n 2 ./app`` ran 2 ranks in its "1-rank" runs and 2x2 in its 2-rank runs,
all recorded ok (s33 tester D5); ``torchrun --nproc_per_node 2`` under ``mpiexec -n 2`` was two
independent gloo jobs (s33 tester D4). :func:`check_self_launching` refuses, before anything
runs: an MPI launcher given as the program, a shell wrapper whose command starts one
(:func:`~hpcds1mpi.launch.wrapper_program.launching_line`), and a launcher of its own that is
not MPI (PyTorch's ``torchrun`` / ``python -m torch.distributed.run``, ``accelerate launch``,
``deepspeed``, ``horovodrun``) at more than one rank per node: each starts its processes itself,
so it is swept with one rank per node.
"""

from __future__ import annotations

import os
import shutil

from hpcds1mpi.errors import ConfigError

#: Launchers that start their processes themselves, by a rendezvous of their own.
OWN_LAUNCHERS = {"torchrun": "PyTorch's launcher", "deepspeed": "DeepSpeed's launcher",
                 "horovodrun": "Horovod's launcher"}
#: The same started as ``python -m MODULE``.
OWN_LAUNCHER_MODULES = {"torch.distributed.run": "PyTorch's launcher",
                        "torch.distributed.launch": "PyTorch's launcher",
                        "accelerate.commands.launch": "Accelerate's launcher",
                        "deepspeed.launcher.runner": "DeepSpeed's launcher"}


def own_launcher(tokens: list[str]) -> str | None:
    """What non-MPI launcher ``tokens`` (past exec wrappers) starts: "torchrun (PyTorch's
    launcher)"; None where none."""
    from hpcds1mpi.launch.python_mpi_use import python_target
    from hpcds1mpi.launch.shebang import PYTHON_NAME

    name = os.path.basename(tokens[0]) if tokens else ""
    if name in OWN_LAUNCHERS:
        return f"{name} ({OWN_LAUNCHERS[name]})"
    if name == "accelerate" and tokens[1:2] == ["launch"]:
        return "accelerate launch (Accelerate's launcher)"
    if PYTHON_NAME.match(name) and (target := python_target(tokens[1:])) \
            and target[0] == "module" and target[1] in OWN_LAUNCHER_MODULES:
        return f"python -m {target[1]} ({OWN_LAUNCHER_MODULES[target[1]]})"
    return None


def check_self_launching(tokens: list[str], env: dict, cwd: str | None = None,
                         ranks_per_node: int = 1, option: str = "--command",
                         under: str = "the sweep's launcher") -> None:
    """Refuse a program that starts its own ranks (see the module docstring); ``tokens``: the
    program's words past exec wrappers, started in ``cwd``; ``ranks_per_node``: the most any
    run asks for; ``under``: the launcher that starts it, as the refusal names it.

    Raises:
        ConfigError: one line naming what starts the ranks and what to sweep instead.
    """
    from hpcds1mpi.launch.program_folder import in_folder
    from hpcds1mpi.launch.wrapper_program import LAUNCHERS, launching_line, unwrapped

    if not tokens:
        return
    name = os.path.basename(tokens[0])
    if LAUNCHERS.match(name) and not own_launcher(tokens):
        raise ConfigError(f"{option} starts the launcher {name}: "
                          f"{'the sweep' if option == '--command' else under} launches the "
                          "program itself at each rank count; give the program it launches "
                          f"(e.g. {option} './app {{size}}')")
    programs = [tokens]  # the command, and the program its wrappers run
    if (found := unwrapped(tokens, env, cwd)) and found[1]:
        programs.append(found[0])
    for words in programs:
        head = words[0]
        path = in_folder(head, cwd) if "/" in head else shutil.which(head, path=env.get("PATH"))
        line = launching_line(path) if path and os.path.isfile(path) else None
        if line and not own_launcher(line.split()):
            raise ConfigError(
                f"{option}: {os.path.basename(path)} starts its own ranks ({line!r}), so under "
                f"{under} each rank would start that job again; "
                f"{'sweep' if option == '--command' else 'give'} the program it launches "
                "instead (its command, without the launcher)")
        what = own_launcher(words) or (own_launcher(line.split()) if line else None)
        if what and ranks_per_node > 1:
            raise ConfigError(
                f"{option} starts {what}, which starts its processes itself (not through MPI): "
                f"under the sweep's launcher each of the {ranks_per_node} ranks per node would "
                "be a job of its own; sweep it with --ranks-per-node 1 and give its process "
                "count in its own options")


def ranks_in_folder(ranks: tuple[list[str], dict] | None, cwd: str | None
                    ) -> tuple[list[str], dict] | None:
    """:func:`~hpcds1mpi.launch.rank_program.rank_program`'s reading with its relative program
    path taken from ``cwd``, the folder it runs in (s33 tester D3: the fingerprint read
    ``../../app`` from the sweep's folder)."""
    from hpcds1mpi.launch.program_folder import in_folder

    if not ranks or not ranks[0]:
        return ranks
    return [in_folder(ranks[0][0], cwd), *ranks[0][1:]], ranks[1]


def check_script_program(program: list[str], folder: str | None, ranks_per_node: int = 1
                         ) -> None:
    """Refuse a job script's ``program`` (the launch line's words from the program on) that
    starts its own ranks, by the sweep's rule (:func:`check_self_launching`): under the
    script's launcher it is a launcher in a launcher (s46 tester H8: ``mpirun -n 1 ff-mpirun
    ...`` failed "mpiexec does not support recursive calls"). A relative path is read in
    ``folder``, where the job runs it, only where that is an absolute folder of this machine.

    Raises:
        ConfigError: one line naming what starts the ranks and what to give instead.
    """
    from hpcds1mpi.launch.exec_wrappers import program_past_wrappers
    from hpcds1mpi.launch.own_install import runs_own_command

    if not program or runs_own_command(program):
        return
    try:
        tokens, name, env = program_past_wrappers(list(program), None, "--program")
    except ConfigError:
        return  # refused where the launch line is checked, in its own words
    cwd = folder if folder and os.path.isabs(folder) and os.path.isdir(folder) else None
    if cwd is None and "/" in name and not os.path.isabs(name):
        return  # a folder not here: the file the job runs is not the one here
    check_self_launching(tokens, env or dict(os.environ), cwd, ranks_per_node, "--program",
                         "the job script's launcher")
