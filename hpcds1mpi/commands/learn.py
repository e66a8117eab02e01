"""``hpcds1mpi learn``: retrain an existing bundle with newly collected runs.

A configuration measured again (a ``tune`` around a sweep's pick, the plan swept once more) is
kept beside its earlier measurement and both are learnt; a run read again (the same file
learnt twice) or retried by its sweep keeps the newest row
(:mod:`~hpcds1mpi.records.remeasured_runs` says why). Repeats that disagree beyond their
measured noise are named, one warning each: the machine's load differed between them.

New runs are added to the bundle's training data and the bundle is retrained with its own
settings, its System 1 ranking recipe included (the targets it centred, focus, denoising:
``surrogates/ranking_cv.settings_of``). Runs from a machine the bundle was not trained on are
refused: telemetry of different machines is never mixed into one model; the
refusal gives the ``train`` command for a separate bundle of that machine (a calibration sweep
on a partition the model was not trained on measures such a machine). Runs of the bundle's
machine under another name for its partition (same hardware and MPI library) are that
machine's, learnt under the trained partition's name (:mod:`hpcds1mpi.measure.same_machine`).

The bundle shipped inside the package is never rewritten (``--out`` is asked for). The new
members get a guard calibration of their own (computed, as ``recommend`` would on first use);
System 1's confidence calibration, fitted on the old members' held-out picks, is not carried
over: the note says how to fit it again (``analysis/eval_system1.py --write-calibration``).
"""

from __future__ import annotations

import click

from hpcds1mpi.schemas.numbers import FRACTION, SEED
from hpcds1mpi.schemas.paths import BUNDLE_IS_CODE, NonEmptyPath


@click.command(name="learn")
@click.option("--model", "model_dir", required=True, type=NonEmptyPath(),
              help="Existing bundle directory. " + BUNDLE_IS_CODE)
@click.option("--telemetry", "telemetry", multiple=True, type=NonEmptyPath(),
              help="New sweep / tune telemetry (.h5); repeatable.")
@click.option("--jobs", "jobs", multiple=True, type=NonEmptyPath(),
              help="New job table (.parquet); repeatable.")
@click.option("--out", default=None, type=NonEmptyPath(),
              help="Where to write the retrained bundle (default: replace --model).")
@click.option("--sample-rate", default=None, type=FRACTION,
              help="Sampling rate (default: the bundle's).")
@click.option("--seed", default=None, type=SEED, help="Seed (default: the bundle's).")
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1, 256))
@click.option("--force", is_flag=True,
              help="Replace an existing bundle at --out (only a hpcds1mpi bundle is replaced).")
def command(model_dir, telemetry, jobs, out, sample_rate, seed, threads, force):
    """Retrain a bundle on newly collected runs (kept per machine)."""
    from hpcds1mpi.runtime.address_space import check_room

    check_room("learn")  # before torch and scipy load (s36 tester E4: a hang under ulimit -v)
    from pathlib import Path

    from hpcds1mpi.atomic import check_output_dir
    from hpcds1mpi.commands.train import summary_lines
    from hpcds1mpi.decide import confidence, guard
    from hpcds1mpi.records.machines import refuse_foreign_machines
    from hpcds1mpi.records.training import TrainingData, read_frames
    from hpcds1mpi.surrogates.bundle import is_bundle, load_bundle, train_bundle
    from hpcds1mpi.surrogates.ranking_cv import recorded_recipe, settings_of

    target = out or model_dir
    _refuse_the_package(target, given=out is not None)
    from hpcds1mpi.output_paths import refuse_inside_model

    refuse_inside_model(out, model_dir, what="bundle")  # a bundle in its own input (M11)
    from hpcds1mpi.cli import refuse_non_utf8
    from hpcds1mpi.errors import DataError, OutputError

    refuse_non_utf8(telemetry, "--telemetry", "the bundle records it as UTF-8 text", DataError)
    refuse_non_utf8(jobs, "--jobs", "pyarrow reads UTF-8 names only", DataError)
    if out:
        refuse_non_utf8(out, "--out", "pyarrow writes the bundle's tables under UTF-8 names "
                        "only", OutputError)
    bundle = load_bundle(model_dir)
    in_place = Path(target).resolve() == Path(model_dir).resolve()
    # Replacing --model is what learn is for; any other existing bundle needs --force.
    check_output_dir(target, ours=is_bundle, force=force or in_place,
                     option="--out" if out else "--model")  # the option that named it
    if in_place:  # locked now: read it again, so a learn that finished meanwhile is kept
        bundle = load_bundle(model_dir)
    m = bundle.manifest
    new = read_frames(telemetry, jobs)
    for line in new.attrs.get("left_out", []):  # runs that are no measurement
        click.echo(f"note: {line}", err=True)
    launchers, untold = {}, {}
    if telemetry:  # the same machine under another partition name is that machine (s33 B6)
        from hpcds1mpi.measure.launcher_fingerprints import launcher_fingerprinted
        from hpcds1mpi.measure.same_machine import (learnt_as_known, machines_of,
                                                    renamed_machines, untold_machines)

        machines = machines_of(telemetry)
        new, renamed = learnt_as_known(new, renamed_machines(
            machines, bundle.machine_ids, bundle.partitions))
        for line in renamed:
            click.echo(f"note: {line}", err=True)
        # The bundle's id may be this machine's by an older launcher fingerprint (s34 O4).
        launchers = launcher_fingerprinted(machines, bundle.machine_ids, bundle.partitions)
        # ... or differ from it in a CPU generation one record does not say (s38 tester K2)
        untold = untold_machines(machines, bundle.machine_ids, bundle.partitions)
    # Before merge checks it again: here the refusal can name the files in its train command.
    refuse_foreign_machines(bundle.machine_ids, new, files=telemetry, launchers=launchers,
                            untold=untold)
    old = TrainingData.from_frame(bundle.training_data(), sources=m.get("sources", []))
    merged = old.merge(new, machines=bundle.machine_ids, sources=[*telemetry, *jobs])
    from hpcds1mpi.surrogates.levels import refuse_mixed_runtimes

    refuse_mixed_runtimes(merged.frame)  # one program timed two ways: a model of neither
    emb = (m.get("embedding") or {}).get("params", {})
    rate = sample_rate if sample_rate is not None else m["sampling"]["target_rate"]
    from hpcds1mpi.runtime.library_stops import stops_through_libraries

    with stops_through_libraries():  # a stop inside xgboost's callback (s33 tester C4)
        retrained = train_bundle(
            merged, sample_rate=rate, seed=m["seed"] if seed is None else seed,
            family=m["family"], n_members=m["n_members"], use_embedding=m["use_embedding"],
            embedding_params={k: v for k, v in emb.items() if k not in ("seed", "threads")},
            threads=threads, use_baseline=m.get("use_baseline", True),
            member_trees=m.get("member_trees"), member_features=m.get("member_features"),
            member_learning_rate=m.get("member_learning_rate"),
            **settings_of(m),
        )
    kept = recorded_recipe(m)
    if kept:  # the recipe is kept, not chosen again: say where it came from
        retrained.manifest["metrics"]["ranking"].update(
            {**kept, "carried_over_by": "hpcds1mpi learn"})
    # The old bundle stays whole until the new one is complete (temporary folder, swapped in);
    # the old calibrations describe the old members, so none is carried over.
    had = {name for name in (confidence.CALIBRATION_FILE, guard.CALIBRATION_FILE)
           if (Path(model_dir) / name).is_file()}
    retrained.save(target)
    if guard.CALIBRATION_FILE in had:  # cheap (distances, no training): ship a fresh one
        guard.write_calibration(retrained, target)
    click.echo(f"added {len(new) - merged.replaced} new run(s) ({len(new)} read, "
               f"{merged.replaced} replaced an old record of the same run, {merged.repeated} "
               "measured a configuration again: kept beside the earlier measurement)")
    _warn_disagreements(merged.disagreements)
    for line in summary_lines(retrained, target):
        click.echo(line)
    from hpcds1mpi.measure.thread_use import idle_threads_notes
    from hpcds1mpi.surrogates.levels import mixed_commands, read_levels

    levels = read_levels(target) or {}
    # new runs of another command line; a program that ignored its threads
    for line in mixed_commands(levels) + idle_threads_notes(levels):
        click.echo(line)
    if guard.CALIBRATION_FILE in had:
        click.echo(f"guard calibration recomputed for the new members ({guard.CALIBRATION_FILE})")
    if confidence.CALIBRATION_FILE in had:
        click.echo(f"note: {confidence.CALIBRATION_FILE} was fitted on the old members and is "
                   "not carried over (confidence is uncalibrated until refitted): python -m "
                   f"hpcds1mpi.analysis.eval_system1 --model {target} --telemetry FILE.h5 "
                   "--write-calibration")


#: Disagreeing repeats named one by one; the rest are counted.
SHOWN_DISAGREEMENTS = 10


def _warn_disagreements(lines) -> None:
    """Name (on stderr) the repeated configurations whose measurements disagree beyond their
    noise: averaged in silence, a loaded machine would look like a model's error."""
    for line in lines[:SHOWN_DISAGREEMENTS]:
        click.echo(f"warning: {line}", err=True)
    if len(lines) > SHOWN_DISAGREEMENTS:
        click.echo(f"warning: and {len(lines) - SHOWN_DISAGREEMENTS} more configuration(s) "
                   "measured again disagree beyond their noise", err=True)


def _refuse_the_package(target, *, given: bool) -> None:
    """Refuse to write into the package's own folder (the shipped bundle is data of the
    install, shared by every user and tracked by its version control)."""
    from pathlib import Path

    import hpcds1mpi
    from hpcds1mpi.errors import ConfigError

    package = Path(hpcds1mpi.__file__).resolve().parent
    if Path(target).resolve().is_relative_to(package):
        flag = "--out" if given else "--model without --out"
        raise ConfigError(f"learn would rewrite {target} inside the installed hpcds1mpi "
                          f"package ({flag}); pass --out DIR for the retrained bundle")
