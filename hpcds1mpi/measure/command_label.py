"""The workload label a program's command is measured under, one rule for ``sweep --command``
and ``tune --program``: ``--label``; else the label the ``--out`` file already runs this very
command under; else the one a ``--model`` knows it as; else the program's file name
(:func:`~hpcds1mpi.launch.program_label.program_label`).

Only ``sweep --resume`` had kept the file's label: tune, which always adds to its ``--out``,
named ``python3 app.py`` after ``app.py`` where an older tune had named it ``python3``, so one
program's runs split over two workloads, measured configurations were measured again and a
model knowing it as ``python3`` went unused, silently (s41 review F7).
"""

from __future__ import annotations


def command_label(program: str, label: str | None, out: str | None = None,
                  model_label: str | None = None, model: str = "",
                  name_said: bool = True) -> tuple[str, list[str]]:
    """The workload label of ``program`` and the lines saying it (none for a given ``label``):
    the label ``out`` (a telemetry file or None) records this command under, else
    ``model_label``, the workload the ``--model`` ``model`` measured this command as, else one
    built from the program's file name (said where ``name_said``, or where it was changed:
    tune's first line names its workload anyway).

    Raises:
        ConfigError: a bad ``--label``, or a file name a label cannot take.
    """
    from hpcds1mpi.launch.program_label import program_label
    from hpcds1mpi.launch.script_placeholders import split_command
    from hpcds1mpi.measure.external_resume import resumed_label

    if label is None and out and (recorded := resumed_label(out, program)):
        return recorded, [f"workload label {recorded!r}, as {out} records this command: give "
                          "--label NAME for another"]
    if label is None and model_label:
        return model_label, [f"workload label {model_label!r}, as the model {model} measured "
                             "this command: give --label NAME for another"]
    said: list[str] = []
    built = program_label(split_command(program), label, said.append)
    if label is None and not said and name_said:
        said.append(f"workload label {built!r}, the program's file name: give --label NAME "
                    "for another")
    return built, said
