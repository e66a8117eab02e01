"""What a ``--resume`` of an external-program sweep must share with the file it resumes:
the same ``--command``, readings, ``--setup`` and launcher (:func:`check_resumed`), and no
other program's runs under its ``--label`` (:func:`refuse_other_program`). Used by
:mod:`hpcds1mpi.measure.external`, and by ``tune --program``, whose every trial adds to its
``--out``.
"""

from __future__ import annotations

import os
import shlex

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.sweep_step import ABSENT_IS_NONE  # a file from before --fail-regex: none
from hpcds1mpi.measure.external_plan import format_command
from hpcds1mpi.measure.plan import RunSpec
from hpcds1mpi.records.telemetry.merged_settings import same_launch_value


#: What a resumed file must share with the sweep resuming it: (option, ``launch`` key).
RESUME_SAME = (("--time-regex", "time_regex"), ("--fom-regex", "fom_regex"),
               ("--ranks-regex", "ranks_regex"), ("--output-file", "output_file"),
               ("--fail-regex", "fail_regex"), ("--setup", "setup"))
#: How the sweep launched (:data:`~hpcds1mpi.records.telemetry.merged_settings.LAUNCHER_KEYS`):
#: (option, key). Another launcher (Open MPI 4.1's ORTE for 5's PRRTE, srun for mpirun) binds
#: and wires the ranks otherwise, but the runs' ids do not hold it: a resume under it had
#: measured nothing, "already done" (s40 tester A7).
RESUME_SAME_LAUNCH = (("--launcher", "launcher"), ("--mpiexec", "command"), ("--mpi", "mpi"),
                      ("--launcher-args", "args"))
#: How each command words a refusal: (what resumes the file, the program's option, itself).
WORDS = {"sweep": ("--resume", "--command", "sweep"), "tune": ("--out", "--program", "tune")}


def check_resumed(out: str, program: str, readings, label: str = "external",
                  by: str = "sweep", setup: str | None = None,
                  launched: dict | None = None) -> None:
    """Refuse to resume ``out`` with another program command, other readings, another
    ``setup`` (the pre-step that prepared each configuration's folder) or, given
    ``launched`` (the sweep's launcher as the ``launch`` attribute records it), another
    launcher (:data:`RESUME_SAME_LAUNCH`; a file that records none, from before, is not
    checked) than the file records (its ``plan`` and ``launch`` attributes): ``runtime_s``
    (or which runs are ``failed``) would mean two things in one file, and the file's record
    of what it means would be overwritten. Nor may ``label`` name anything but this program in the file
    (:func:`refuse_other_program`). ``by``: the command resuming it (:data:`WORDS`).

    Raises:
        ConfigError: the command or a reading differs, naming both values and the fix;
            ``label`` names a kernel's runs or another command's in ``out``.
    """
    import json

    from hpcds1mpi.errors import HpcdsError
    from hpcds1mpi.records import telemetry

    if not os.path.isfile(out):
        return
    try:
        store = telemetry.read_snapshot(out)
        attrs = store.attrs
        before_plan = json.loads(attrs.get("plan") or "{}")
        before = json.loads(attrs.get("launch") or "{}")
    except (HpcdsError, OSError, ValueError):
        return  # the writer says what is wrong with the file
    before_plan = before_plan if isinstance(before_plan, dict) else {}
    before = before if isinstance(before, dict) else {}
    now, differ = {**readings.describe(), "setup": setup or ""}, []

    def shown(value) -> str:
        return f"'{value}'" if value else "none"

    resume, command, who = WORDS[by]
    if "command" in before_plan and not same_command(before_plan["command"], program):
        differ.append((command, f"{shown(before_plan['command'])} (now {shown(program)})"))
    for option, key in RESUME_SAME:
        if key in before or (key in ABSENT_IS_NONE and "time_regex" in before):
            if (before.get(key) or "") != now[key]:
                differ.append((option, f"{shown(before.get(key))} (now {shown(now[key])})"))
    for option, key in RESUME_SAME_LAUNCH if launched is not None else ():
        if key in before and not same_launch_value(key, before[key], launched.get(key)):
            differ.append((option, f"{_launch_shown(before[key])} (now "
                                   f"{_launch_shown(launched.get(key))})"))
    if differ:
        raise ConfigError(
            f"{resume} {out}: the file was measured with "
            f"{'; '.join(f'{o} {v}' for o, v in differ)}; its runs would not mean what this "
            f"{who}'s mean: rerun with the same {', '.join(o for o, _ in differ)}, or give a "
            "new --out")
    refuse_other_program(out, store, label, program, resume)


def _launch_shown(value) -> str:
    """A recorded launcher value as a refusal names it (a list of arguments as one line)."""
    if isinstance(value, list):
        value = shlex.join(str(v) for v in value)
    return f"'{value}'" if value else "none"


def same_command(recorded: str, given: str) -> bool:
    """Whether two ``--command`` texts are one command: the same words once split as the sweep
    splits them, however quoted (``'{a,b}' ""`` is ``{a,b} ''``: s39 tester D9); text that
    does not split is compared as text."""
    try:
        return shlex.split(recorded) == shlex.split(given)
    except ValueError:
        return recorded == given


def refuse_other_program(out: str, store, label: str, program: str,
                         resume: str = "--resume") -> None:
    """Refuse to add ``program``'s runs under ``label`` to ``out`` (read as ``store``) when the
    file holds runs of a kernel, or of another command, under that name: a model would learn
    the two as one workload (:mod:`hpcds1mpi.records.run_sources`).

    Raises:
        ConfigError: naming what the file holds under ``label`` and the fix.
    """
    from hpcds1mpi.records.run_sources import KERNEL, SOME_PROGRAM, recorded_programs, shown

    recorded = {source for source in recorded_programs(store).get(label, set()) - {SOME_PROGRAM}
                if source == KERNEL or not same_command(source, program)}
    if recorded:
        other = shown(KERNEL if KERNEL in recorded else sorted(recorded)[0])
    else:
        other = _other_launch(store, label, program)
    if other:
        raise ConfigError(f"{resume} {out}: the file holds runs of {label!r} from {other}; "
                          "this program's runs under the same --label would be learnt as that "
                          "program's: give another --label (or a new --out)")


def _other_launch(store, label: str, program: str) -> str:
    """Words naming a program run of ``label`` in ``store`` that ``program`` did not launch
    (its launch does not end in ``program`` filled in for its size and layout), else "": a
    merged file keeps no plan to read the command from."""
    from hpcds1mpi.records.run_sources import PROGRAM

    for row in store.runs.values():
        if row.get("workload") != label or row.get("kind") != PROGRAM:
            continue
        try:
            launched = shlex.split(str(row.get("command") or ""))
            ours = format_command(program, RunSpec(label, int(row["size"]), Configuration(
                int(row["nodes"]), int(row["ranks_per_node"]), int(row["threads"]),
                str(row["device"]), str(row["precision"]))))
        except (ValueError, KeyError, ConfigError):
            continue  # a row the writer's checks report on
        if launched and launched[-len(ours):] != ours:
            return f"another program (launched as {shlex.join(launched)[:80]!r})"
    return ""


def resumed_label(out: str, program: str) -> str | None:
    """The label under which ``out``'s plans ran ``program``, for a ``--resume`` given no
    ``--label``: a file swept before the label came from the program's file name (s41 tester
    A1) holds its runs as ``external``, which a resume under the new label would measure
    again beside them. None: no such file, or none of its plans ran ``program``."""
    from hpcds1mpi.errors import HpcdsError
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.records.run_sources import plan_commands

    if not os.path.isfile(out):
        return None
    try:
        commands = plan_commands(telemetry.read_snapshot(out).attrs)
    except (HpcdsError, OSError, ValueError):
        return None  # the writer says what is wrong with the file
    return next((label for label, command in commands.items()
                 if same_command(command, program)), None)
