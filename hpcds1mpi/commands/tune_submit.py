"""``tune --submit``: the same tune written as a Slurm job script and sbatched (from a login node).

The job runs ``hpcds1mpi tune`` with the arguments it was given here, the ``--submit`` and
``--force`` flags left out (:func:`tune_args`; an option's value that reads so is kept): every
other option, ``--fail-regex`` and the reading options included, reaches the runs the job
makes. The script is rendered by the one renderer of
the ``jobscripts/`` templates (:func:`hpcds1mpi.launch.scripts.render_tune`).
"""

from __future__ import annotations

import sys

#: tune's own flags that say how to start it here, never passed to the job.
SUBMIT_FLAGS = ("--submit", "--force")


def tune_args(argv: list[str], params=None) -> list[str]:
    """``tune``'s arguments in ``argv`` (after the ``tune`` word) without :data:`SUBMIT_FLAGS`.

    Walked with tune's own option declarations (``params``; default: the running click
    command's, tune's when it calls this): an option's value is kept even when it reads
    "--submit" (s29 tester H6: ``--fail-regex --submit`` lost its pattern and the job ran
    ``--fail-regex --budget``); ``--opt=value`` is one word; all after ``--`` is kept.
    """
    if params is None:  # tune's, from the command running (importing it would be a loop)
        import click

        params = click.get_current_context().command.params
    values = {opt: p.nargs for p in params if not getattr(p, "is_flag", False)
              and not getattr(p, "count", False) for opt in (*p.opts, *p.secondary_opts)}
    args = list(argv)
    if "tune" in args:
        args = args[args.index("tune") + 1:]
    kept, i = [], 0
    while i < len(args):
        word = args[i]
        if word == "--":
            return kept + args[i:]
        if word in values:  # the option and its values, whatever they read
            kept += args[i:i + 1 + values[word]]
            i += 1 + values[word]
            continue
        if word not in SUBMIT_FLAGS:
            kept.append(word)
        i += 1
    return kept


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

    import click

    from hpcds1mpi.atomic import check_output_file, write_text
    from hpcds1mpi.errors import SchedulerError
    from hpcds1mpi.launch.scripts import check_replace_script, render_tune
    from hpcds1mpi.places import default_queue_note, is_this_machine

    path = check_output_file(Path(f"{job_name}.sbatch"), "tune job script")
    check_replace_script(path, force=force, what="job script",
                         option="folder to submit from")
    if shutil.which("sbatch") is None:
        raise SchedulerError("sbatch not found on PATH: --submit needs a Slurm login node "
                             "(or run tune inside an allocation yourself)")
    exe = Path(sys.executable).parent / "hpcds1mpi"
    # s34 tester U4: with no cluster file and no allocation the partition is this machine,
    # 'local', which sbatch refuses: the script names none (as recommend's), said once.
    default_queue = cluster is None and is_this_machine(None)
    notes = [default_queue_note(partition, "slurm", "the tune job script names")] \
        if default_queue else []
    script = render_tune(args, partition, nodes=nodes, cores=cores, time_limit_s=time_min * 60,
                         job_name=job_name, exe=str(exe) if exe.exists() else "hpcds1mpi",
                         bin_dir=str(exe.parent), cluster=cluster,
                         default_queue=default_queue, notes=notes)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    write_text(path, script, "tune job script")
    proc = subprocess.run(["sbatch", "--parsable", str(path)], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        raise SchedulerError(f"sbatch refused {path}: "
                             f"{(proc.stderr.strip().splitlines() or ['no message'])[-1]}")
    return proc.stdout.strip().split(";")[0], str(path)
