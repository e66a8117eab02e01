"""A model bundle's README.txt: what the bundle is, how it was trained, where energy came from.

:func:`readme_text` writes it from the manifest (:func:`~.bundle_files.write_bundle` stores it);
the files and format of a bundle: :mod:`.bundle_files`.
"""

from __future__ import annotations

#: The command that measures a bundle's held-out accuracy, as an installed package and a
#: checkout both run it (``analysis/h1_eval.py`` is a path only a checkout has: s38 tester B6).
HELD_OUT_COMMAND = "python -m hpcds1mpi.analysis.h1_eval"


def _ranking_line(manifest: dict) -> str:
    """What the members of the System 1 targets learn (surrogates/ranking.py)."""
    rank = (manifest.get("metrics") or {}).get("ranking") or {}
    centred = rank.get("centred_targets") or []
    neighbours = rank.get("size_neighbours") or {}
    if not centred and not rank.get("recipe") and not neighbours.get("weight"):
        return ""
    line = (f"Ranking: {', '.join(centred)} members learn the order within a problem (each "
            "problem's mean taken out, put back from problem_levels.json)" if centred else
            "Ranking: the members regress absolute log values")
    if rank.get("denoise"):
        line += "; rows weighed by 1 / (1 + measured noise)"
    if neighbours.get("weight"):
        line += (f"; predictions corrected by {neighbours['weight']:g} x the out-of-fold "
                 "residuals measured at the neighbouring sizes (surrogates/size_neighbours.py)")
    if rank.get("recipe"):
        line += f"; recipe {rank['recipe']!r}"
        if rank.get("chosen_by"):
            line += f", chosen by {rank['chosen_by']}"
    return line + ".\n"


def readme_text(manifest: dict) -> str:
    """The README.txt of a bundle with ``manifest``; it starts with
    :data:`~.bundle_files.BUNDLE_README_TITLE`, which :func:`~.bundle_files.is_bundle` checks."""
    src = manifest.get("energy_source", "none")
    energy_line = (
        "Energy predictions were trained on MODELLED energy (no RAPL/NVML/Slurm meter on the "
        "training machine): they reproduce the power model, not a measurement."
        if src == "modelled" else f"Energy predictions were trained on energy from: {src}."
    )
    s = manifest.get("sampling", {})
    return (
        "hpcds1mpi model bundle (format {fmt})\n\n"
        "Trained {when} on {n} rows ({kept} kept by intelligent sampling at target rate "
        "{rate}, achieved {ach:.3f}, seed {seed}).\n"
        "Family: {fam} x {k} members (Bayesian bootstrap over problems, {trees} trees each); "
        "TabNet embedding: {emb}; member features: {mf}.\n"
        "Sources: {src}.\n"
        "Targets: {targets}.\n{ranking}{energy}\n"
        "Training-data SHA-256: {h}\n"
        "Metrics in manifest.json are in-sample; held-out accuracy: {held_out}.\n"
    ).format(held_out=HELD_OUT_COMMAND, fmt=manifest["format_version"], when=manifest["created"],
             n=s.get("n_total"), kept=s.get("n_kept"), rate=s.get("target_rate"),
             ach=s.get("achieved_rate", float("nan")), seed=s.get("seed"),
             fam=manifest["family"], k=manifest["n_members"],
             trees=(manifest.get("member_trees_and_learning_rate") or ["?"])[0],
             mf=(f"{len(manifest['member_features'])} problem/knob features"
                 if manifest.get("member_features") else "all"),
             src=", ".join(manifest.get("sources") or []) or "not recorded",
             emb="yes" if manifest.get("use_embedding") else "no",
             targets=", ".join(manifest["targets"]), energy=energy_line,
             ranking=_ranking_line(manifest),
             h=manifest["data_hash"])


__all__ = ["readme_text"]
