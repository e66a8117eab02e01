"""The ``--workdir`` folders of a calibration sweep's steps, which its script lists and checks
before its first step (s28 tester Y2: each step of a program swept with ``--workdir
'runs/{size}-{ranks}'`` failed alike, one after another, in folders nobody had made for the
new size)."""

from __future__ import annotations


def is_current_folder(folder: str | None) -> bool:
    """Whether ``folder`` (a ``--workdir`` filled for a configuration) is the folder the job
    is submitted from (``.``, ``./``): nothing to create or check there, no ``cd`` (s30 tester
    N5: a calibration note listed ``.`` among the folders to create)."""
    import os.path

    return bool(folder) and os.path.normpath(folder) == "."


def step_folders(steps, size: int, measure: dict | None) -> dict:
    """What a calibration script says and checks of its steps' ``--workdir`` folders: the
    template's values (``jobscripts/calibration.sbatch.j2``), {} without ``--workdir``.

    Without ``--setup`` the sweep never creates a folder (an empty one would lack the
    program's input, :mod:`~hpcds1mpi.measure.workdirs`), so each step with a missing folder
    failed alike, one after another (s28 tester Y2); the script checks them all before its
    first step instead. With one, each step's sweep creates its folder for the setup. The
    submit folder itself (``--workdir .``) is neither listed nor checked.

    Args:
        steps: the steps as the script measures them
            (:class:`~hpcds1mpi.launch.calibration_script.CalibrationStep`, a program's
            precision already chosen).
        size: the job's size.
        measure: the program's reading options (``{"workdir": ..}``, any subset; None: none).

    Returns:
        ``{"workdir": the template, "step_folders": [shell-quoted folder], "folders_shown":
        "a, b", "folders_where": ", in the folder you submit from", "missing_where": " in
        $PWD"}``, each distinct folder once, in step order; both wheres "" for an absolute
        ``--workdir``, whose folders are themselves wherever the job is submitted from (s29
        V1-2).
    """
    import shlex

    from hpcds1mpi.launch.scripts import comment, where_missing
    from hpcds1mpi.measure.workdirs import folder_of

    workdir = (measure or {}).get("workdir")
    if not workdir:
        return {}
    folders = list(dict.fromkeys(folder_of(workdir, s.config, size) for s in steps))
    folders = [f for f in folders if not is_current_folder(f)]
    if not folders:  # every step runs where the job is submitted
        return {}
    return {"workdir": comment(workdir), "step_folders": [shlex.quote(f) for f in folders],
            "folders_shown": comment(", ".join(folders)),
            "folders_where": where_missing(workdir) and ", in the folder you submit from",
            "missing_where": where_missing(workdir)}
