"""``tune --submit``: the same tune written as a Slurm job script and sbatched (from a login node).

The job runs ``hpcds1mpi tune`` with the arguments it was given here, ``--submit`` and
``--force`` left out (:func:`tune_args`): every other option, ``--fail-regex`` and the reading
options included, reaches the runs the job makes. The script is rendered by the one renderer of
the ``jobscripts/`` templates (:func:`hpcds1mpi.launch.scripts.render_tune`).
"""

from __future__ import annotations

import sys

#: tune's own flags that say how to start it here, never passed to the job.
SUBMIT_FLAGS = ("--submit", "--force")


def tune_args(argv: list[str]) -> list[str]:
    """``tune``'s arguments in ``argv`` (after the ``tune`` word) without :data:`SUBMIT_FLAGS`."""
    args = list(argv)
    if "tune" in args:
        args = args[args.index("tune") + 1:]
    return [a for a in args if a not in SUBMIT_FLAGS]


def submit(args: list[str], nodes: int, cores: int, partition, job_name: str,
           time_min: int, cluster=None, force: bool = False) -> tuple[str, str]:
    """Write a job script that runs ``hpcds1mpi tune ARGS`` and sbatch it; return (the job
    id, the script's path). A file of that name hpcds1mpi did not write is kept unless
    ``force``.

    Raises:
        SchedulerError: no sbatch on PATH, or sbatch refused the script (exit 1).
        OutputError: a file of the script's name that hpcds1mpi did not write, without
            ``force`` (exit 2).
    """
    import shutil
    import subprocess
    from pathlib import Path

    from hpcds1mpi.atomic import check_output_file, write_text
    from hpcds1mpi.errors import SchedulerError
    from hpcds1mpi.launch.scripts import check_replace_script, render_tune

    path = check_output_file(Path(f"{job_name}.sbatch"), "tune job script")
    check_replace_script(path, force=force, what="job script",
                         option="folder to submit from")
    if shutil.which("sbatch") is None:
        raise SchedulerError("sbatch not found on PATH: --submit needs a Slurm login node "
                             "(or run tune inside an allocation yourself)")
    exe = Path(sys.executable).parent / "hpcds1mpi"
    script = render_tune(args, partition, nodes=nodes, cores=cores, time_limit_s=time_min * 60,
                         job_name=job_name, exe=str(exe) if exe.exists() else "hpcds1mpi",
                         bin_dir=str(exe.parent), cluster=cluster)
    write_text(path, script, "tune job script")
    proc = subprocess.run(["sbatch", "--parsable", str(path)], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        raise SchedulerError(f"sbatch refused {path}: "
                             f"{(proc.stderr.strip().splitlines() or ['no message'])[-1]}")
    return proc.stdout.strip().split(";")[0], str(path)
