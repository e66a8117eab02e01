"""``hpcds1mpi learn``: retrain an existing bundle with newly collected runs.

New runs are added to the bundle's training data (a re-measured ``run_id`` replaces the old
row) and the bundle is retrained with its own settings. Runs from a machine the bundle was not
trained on are refused: telemetry of different machines is never mixed into one model; train a
separate bundle for that machine (``hpcds1mpi train --machine ID``).
"""

from __future__ import annotations

import click


@click.command(name="learn")
@click.option("--model", "model_dir", required=True, type=click.Path(),
              help="Existing bundle directory.")
@click.option("--telemetry", "telemetry", multiple=True, type=click.Path(),
              help="New sweep / tune telemetry (.h5); repeatable.")
@click.option("--jobs", "jobs", multiple=True, type=click.Path(),
              help="New job table (.parquet); repeatable.")
@click.option("--out", default=None, type=click.Path(),
              help="Where to write the retrained bundle (default: replace --model).")
@click.option("--sample-rate", default=None, type=float,
              help="Sampling rate (default: the bundle's).")
@click.option("--seed", default=None, type=int, help="Seed (default: the bundle's).")
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1, 256))
def command(model_dir, telemetry, jobs, out, sample_rate, seed, threads):
    """Retrain a bundle on newly collected runs (kept per machine)."""
    from hpcds1mpi.commands.train import summary_lines
    from hpcds1mpi.records.training import TrainingData, read_frames
    from hpcds1mpi.surrogates.bundle import load_bundle, train_bundle

    bundle = load_bundle(model_dir)
    m = bundle.manifest
    new = read_frames(telemetry, jobs)
    old = TrainingData.from_frame(bundle.training_data(), sources=m.get("sources", []))
    merged = old.merge(new, machines=bundle.machine_ids, sources=[*telemetry, *jobs])
    emb = (m.get("embedding") or {}).get("params", {})
    rate = sample_rate if sample_rate is not None else m["sampling"]["target_rate"]
    retrained = train_bundle(
        merged, sample_rate=rate, seed=m["seed"] if seed is None else seed,
        family=m["family"], n_members=m["n_members"], use_embedding=m["use_embedding"],
        embedding_params={k: v for k, v in emb.items() if k not in ("seed", "threads")},
        threads=threads, use_baseline=m.get("use_baseline", True),
        member_trees=m.get("member_trees"), member_features=m.get("member_features"),
    )
    target = out or model_dir
    retrained.save(target)
    click.echo(f"added {len(new) - merged.replaced} new run(s) "
               f"({len(new)} read, {merged.replaced} replaced an old run)")
    for line in summary_lines(retrained, target):
        click.echo(line)
