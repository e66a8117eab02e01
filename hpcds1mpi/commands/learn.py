"""``hpcds1mpi learn``: retrain an existing bundle with newly collected runs.

New runs are added to the bundle's training data (a re-measured ``run_id`` replaces the old
row) and the bundle is retrained with its own settings. Runs from a machine the bundle was not
trained on are refused: telemetry of different machines is never mixed into one model; train a
separate bundle for that machine (``hpcds1mpi train --machine ID``).
"""

from __future__ import annotations

import click


def merge_runs(old, new):
    """Old training rows plus new ones; a ``run_id`` measured again keeps the newest row."""
    import pandas as pd

    old = old.drop(columns=["kept"], errors="ignore")
    merged = pd.concat([old, new], ignore_index=True, sort=False)
    if "run_id" in merged.columns:
        ids = merged["run_id"]
        has_id = ids.notna() & (ids.astype(str) != "")
        dup = has_id & merged.duplicated(subset=["run_id"], keep="last")
        merged = merged[~dup]
    return merged.reset_index(drop=True)


def check_machines(bundle_ids: set, new) -> None:
    """Refuse runs from machines the bundle was not trained on (DataError)."""
    from hpcds1mpi.errors import DataError

    if "machine_id" not in new.columns:
        return
    new_ids = set(new["machine_id"].dropna().astype(str)) - {""}
    foreign = sorted(new_ids - set(bundle_ids))
    if foreign and bundle_ids:
        raise DataError(
            f"new runs come from machine(s) {', '.join(f[:12] for f in foreign)} but the bundle "
            f"was trained on {', '.join(sorted(i[:12] for i in bundle_ids))}; runs of different "
            "machines are never mixed: train a separate bundle with "
            "`hpcds1mpi train --telemetry FILE --machine ID --out DIR`"
        )
    if len(new_ids) > 1 and not bundle_ids:
        raise DataError(f"new runs come from {len(new_ids)} machines; train one bundle per "
                        "machine with `hpcds1mpi train --machine ID`")


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
    from hpcds1mpi.commands.train import read_training_data, summary_lines
    from hpcds1mpi.surrogates.bundle import load_bundle, train_bundle

    bundle = load_bundle(model_dir)
    new = read_training_data(telemetry, jobs)
    check_machines(bundle.machine_ids, new)
    old = bundle.training_data()
    merged = merge_runs(old, new)
    m = bundle.manifest
    emb = (m.get("embedding") or {}).get("params", {})
    rate = sample_rate if sample_rate is not None else m["sampling"]["target_rate"]
    retrained = train_bundle(
        merged, sample_rate=rate, seed=m["seed"] if seed is None else seed,
        family=m["family"], n_members=m["n_members"], use_embedding=m["use_embedding"],
        embedding_params={k: v for k, v in emb.items() if k not in ("seed", "threads")},
        threads=threads, sources=[*m.get("sources", []), *telemetry, *jobs],
        use_baseline=m.get("use_baseline", True), member_trees=m.get("member_trees"),
        member_features=m.get("member_features"),
    )
    target = out or model_dir
    retrained.save(target)
    click.echo(f"added {len(merged) - len(old.index)} new run(s) "
               f"({len(new)} read, {len(old) + len(new) - len(merged)} replaced an old run)")
    for line in summary_lines(retrained, target):
        click.echo(line)
