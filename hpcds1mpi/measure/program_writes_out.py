"""A program that writes the sweep's own telemetry file (``--out``).

A program whose data file was also the ``--out`` (``h5write.py`` writing ``out.h5``) truncated
the telemetry at each launch: every earlier run was lost, and ``--resume`` then found only the
program's HDF5 (s33 tester B1). Two guards: :func:`refuse_named_out`, before anything runs, for
a command (or ``--output-file``) that names the file; :func:`stop_overwritten`, after a launch
that wrote it without naming it (the writer's
:meth:`~hpcds1mpi.records.telemetry.writer.TelemetryWriter.written_by_another`), which keeps
the runs the sweep held in a file beside it (:func:`kept_name`) and stops.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from hpcds1mpi.errors import ConfigError, SweepInterrupted


def _named_paths(words: list[str]) -> list[str]:
    """The words that may name a file: each word, and the value of ``name=value`` /
    ``--opt=value`` words."""
    named = list(words)
    named += [word.split("=", 1)[1] for word in words if "=" in word]
    return [word for word in named if word]


def refuse_named_out(out: str, plan, workdir: str | None, readings=None) -> None:
    """Refuse, before anything runs, a sweep whose program would write ``out``: a word of a
    configuration's command, or its ``--output-file``, that is the ``out`` file, relative to
    the folder the configuration runs in (``--workdir``) or absolute, links resolved.

    Raises:
        ConfigError: naming the word, the configuration's folder and another ``--out``.
    """
    from hpcds1mpi.launch.program import placeholder_values
    from hpcds1mpi.measure.external_plan import format_command
    from hpcds1mpi.measure.workdirs import workdir_of

    target = os.path.realpath(out)
    seen: set[tuple[str, str]] = set()
    for spec in plan.runs:
        cwd = workdir_of(workdir, spec) or "."
        words = _named_paths(format_command(dict(spec.extra)["command"], spec))
        given = [(word, "--command names it") for word in words]
        output = readings.output_path(cwd, placeholder_values(spec.config, spec.size)) \
            if readings is not None else None
        if output:
            given.append((output, "it is the --output-file"))
        for word, how in given:
            if (word, cwd) in seen:
                continue
            seen.add((word, cwd))
            if os.path.realpath(os.path.join(cwd, word)) == target:
                where = f" (run in {cwd})" if workdir else ""
                raise ConfigError(
                    f"--out {out} is a file the program writes: {how} ({word!r}{where}), so "
                    f"each launch would destroy the telemetry; give another --out, e.g. "
                    f"--out {kept_name(out)}")


def kept_name(out: str) -> str:
    """A new file beside ``out`` for the runs a sweep held: ``NAME-hpcds1mpi.h5`` (numbered
    where that exists)."""
    from hpcds1mpi.writers import side_name

    path = Path(out)
    stem = path.stem if path.suffix else path.name
    for n in range(1, 1000):
        name = side_name(stem, after=f"-hpcds1mpi{'' if n == 1 else f'-{n}'}.h5")
        candidate = path.with_name(name)
        if not os.path.lexists(candidate):
            return str(candidate)
    return str(path.with_name(side_name(stem, after=f"-hpcds1mpi-{os.getpid()}.h5")))


def stop_overwritten(writer, row: dict, spec, out: str, how: str) -> None:
    """End the sweep after a launch wrote into its telemetry file ``out`` (``how``: the
    writer's word, "rewrote" / "replaced" / "removed"): the run in flight is recorded
    ``interrupted``, and every run the writer holds is written to :func:`kept_name`'s file,
    ``out`` being left to the program.

    Raises:
        SweepInterrupted: always, one line naming the file that keeps the runs.
    """
    kept_path = kept_name(out)
    row.update(status="interrupted", finished_at=time.time(),
               error=f"the program {how} the telemetry file {out} while this ran; "
                     "--resume runs it again")
    writer.rescue(kept_path, row)
    kept = sum(r["status"] != "interrupted" for r in writer_runs(writer, kept_path))
    raise SweepInterrupted(
        f"the program {how} the telemetry file {out} during {spec.workload} size {spec.size} "
        f"{spec.config.label()} (it writes that file itself; {out} is left to it): the sweep "
        f"stopped, its {kept} finished runs are kept in {kept_path}; give another --out, e.g. "
        f"sweep again with --out {kept_path} --resume")


def writer_runs(writer, kept_path: str) -> list[dict]:
    """The runs of the file the writer's runs were kept in."""
    from hpcds1mpi.records.telemetry import read_snapshot

    return list(read_snapshot(kept_path).runs.values())
