"""Run time and walltime prediction on a real job log, side by side with the classic baselines.

Run::

    python analysis/runtime_eval.py LOG [--split chronological|users|random] [--in-flight]
        [--json OUT [--force]]

``LOG`` is any job log ``read_job_log`` reads (SWF, sacct, Eagle CSV, PM100 parquet ...).
Jobs kept as in ``../shared/data/joblogs/README.md``: completed or unknown status, run time
> 0, requested time > 0; in a log that names users, only jobs that name theirs (a job without
one has no history to predict from, and is no one's history: said in a note). Splits: ``chronological`` (default; the first 80 % by submit time
train, the last 20 % test), ``users`` (20 % of the users, drawn at random, are never seen in
training) and ``random`` (20 % of jobs; a reference only: a deployed predictor never sees the
future). The submission features of every job are computed on the whole log, which is safe:
each uses only jobs finished by its submit time (and, ``--in-flight``, the starts of those
running then).

Rows (each scored on the same test jobs, in the same run):

- ``ours``: :class:`~hpcds1mpi.surrogates.job_runtime.RuntimePredictor` as shipped (point and
  calibrated walltime) from the finished history, as ``recommend --history`` fits it;
  ``--in-flight`` adds the user's jobs running at each submission (their count and how long
  they had run: what a scheduler knows then, never their run times), which a history of
  finished jobs does not hold;
- ``users_request``: the user's requested time (point and walltime);
- ``last_two``: the mean of the user's last two run times (Tsafrir et al. 2007), capped at the
  request, as the joblogs README measured it: the user's two previous *submitted* kept jobs,
  whether or not they had finished (so it peeks at run times a scheduler could not know yet);
- ``last_two_finished``: the same from the last two jobs that had finished by submission;
- ``twice_last_five``: walltime = twice the longest of the user's last five run times, capped
  at the request (README's rule, previous submitted jobs); the point value is that walltime;
- ``twice_last_five_finished``: the same rule from the last five jobs finished by submission.

Metrics: ``accuracy`` = mean of min/max of predicted and actual, ``median_ape`` (%),
``kill_rate`` = share of test jobs whose walltime is below their run time, ``over_request`` =
median of walltime / actual. A user or job without history falls back to the request.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).resolve().parent / "results"
SPLITS = ("chronological", "users", "random")
TEST_SHARE = 0.2
#: Fewer test jobs than this score noise, not a method: refused (s31 tester R5: 15 were
#: scored, as the README said they would not be).
MIN_TEST = 30
#: The kept jobs a split needs to leave MIN_TEST to test.
MIN_KEPT = int(np.ceil(MIN_TEST / TEST_SHARE))


def kept_jobs(table: pd.DataFrame) -> np.ndarray:
    """Positions of the jobs the README keeps, in submit order (ties in a total order of
    their content, not the table's: :func:`~hpcds1mpi.surrogates.submit_features.
    submit_order`, s39 tester C10). A job
    whose user a log naming users does not name is left out: it has no history to predict
    from, and as 30 % of the training jobs (Gaia, user -1 on 30 % of its lines) such jobs
    taught the walltime's regressions that agreeing candidates mean "far below the request":
    63 % of the other test jobs were killed (s38 tester C3)."""
    from hpcds1mpi.surrogates.submit_features import (completed_mask, submit_order,
                                                      submit_times, unnamed_users)

    limit = pd.to_numeric(table["time_limit_s"], errors="coerce").to_numpy()
    sub = submit_times(table)
    keep = np.flatnonzero(completed_mask(table) & (limit > 0) & sub.notna().to_numpy()
                          & ~unnamed_users(table))
    return submit_order(table, keep)


def _too_few_kept(table: pd.DataFrame, kept: int) -> str:
    """Why a log has too few jobs to evaluate: a field no completed job has (no longer log
    helps then: s36 tester L6, a log without requested times was told "use a longer log"),
    else its length."""
    from hpcds1mpi.surrogates.submit_features import completed_mask, submit_times

    done = completed_mask(table)
    finished = completed_mask(table.assign(runtime_s=1.0))  # the status alone
    if finished.any() and not done.any():  # s46 tester I5: a renamed ElapsedRaw column
        return (f"none of the {int(finished.sum())} completed jobs has a run time: this log "
                "cannot be evaluated (the predictor learns from them); give a log with one "
                "(sacct's ElapsedRaw or Elapsed, SWF field 4)")
    limit = pd.to_numeric(table["time_limit_s"], errors="coerce").to_numpy()
    lacking = [what for what, has in (("a requested time", limit > 0),
                                      ("a submit time", submit_times(table).notna().to_numpy()))
               if done.any() and not (done & has).any()]
    if lacking:
        return (f"none of the {int(done.sum())} completed jobs has {' or '.join(lacking)}: "
                "this log cannot be evaluated (the predictor learns from them)")
    return (f"only {kept} jobs are completed with a run time, a requested time and a submit "
            f"time: too few to evaluate (need {MIN_KEPT}, so that {100 * TEST_SHARE:.0f} % of "
            f"them make {MIN_TEST} test jobs); use a longer log")


def split_jobs(table: pd.DataFrame, kept: np.ndarray, split: str, seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) positions into ``table``, both in submit order. Chronological: the
    first 80 % of the kept jobs by submit time, less those not finished by the first test
    job's submission (all of them when the log has no end times), train; the last 20 % test."""
    n = len(kept)
    if split == "chronological":
        from hpcds1mpi.surrogates.submit_features import end_times, submit_times

        cut = int(n * (1 - TEST_SHARE))
        train, test = kept[:cut], kept[cut:]
        # Train on what had finished when the first test job came: a job submitted before it
        # but still running then (the rest of a batch) taught nothing yet.
        first = submit_times(table).iloc[test[0]]
        end = end_times(table).iloc[train]
        if end.isna().all():
            return train, test  # no end times at all (the PM100 subset): cannot tell
        return train[(end <= first).to_numpy()], test
    rng = np.random.default_rng(seed)
    if split == "random":
        test = np.zeros(n, bool)
        test[rng.choice(n, int(round(n * TEST_SHARE)), replace=False)] = True
    else:
        users = (table["user"] if "user" in table else pd.Series("", index=table.index)
                 ).astype("string").fillna("").to_numpy(dtype=object)[kept]
        distinct = np.unique(users[users != ""])
        if len(distinct) < 5:
            from hpcds1mpi.errors import DataError

            said = (f"{len(distinct)} distinct user(s) in this log" if len(distinct) else
                    "no job in this log names its user")
            raise DataError(f"{said}: too few to hold users out; use --split chronological")
        held = rng.choice(distinct, max(1, int(round(len(distinct) * TEST_SHARE))),
                          replace=False)
        test = np.isin(users, held)
    return kept[~test], kept[test]


def _refuse_too_few_to_test(n_kept: int, test: np.ndarray, split: str) -> None:
    """Refuse a split whose test part is under :data:`MIN_TEST` jobs (the users split: the
    users held out may have few jobs)."""
    if len(test) >= MIN_TEST:
        return
    from hpcds1mpi.errors import DataError

    fix = ("use another --seed or --split chronological" if split == "users" else
           "use a longer log")
    raise DataError(f"the {split} split leaves {len(test)} test jobs of the {n_kept} kept: "
                    f"need at least {MIN_TEST} to score; {fix}")


def _refuse_too_few_to_train(n_kept: int, train: np.ndarray, split: str) -> None:
    """Refuse a split that leaves the predictor too few jobs to learn from, saying why: on a
    short chronological log the training jobs still running when the test part starts are
    left out (its fit said "0 finished jobs with a run time" of a log where all had)."""
    from hpcds1mpi.errors import DataError
    from hpcds1mpi.surrogates.job_runtime import MIN_TRAIN

    if len(train) >= MIN_TRAIN:
        return
    if split == "chronological":
        part = int(n_kept * (1 - TEST_SHARE))
        raise DataError(
            f"of the {part} training jobs (the first {100 * (1 - TEST_SHARE):.0f} % by submit "
            f"time) only {len(train)} had finished when the first test job was submitted (the "
            f"others were still running, their run times not known yet): need at least "
            f"{MIN_TRAIN}; use a longer log, or --split random (a reference only)")
    raise DataError(f"the {split} split leaves {len(train)} training jobs: need at least "
                    f"{MIN_TRAIN}; use another --seed or --split chronological")


def baselines(table: pd.DataFrame, kept: np.ndarray, feats: pd.DataFrame) -> dict[str, tuple]:
    """(point, walltime) of each baseline for every kept job (aligned with ``kept``)."""
    from hpcds1mpi.surrogates.submit_features import history_users

    k = table.iloc[kept]
    run = k["runtime_s"].to_numpy(dtype=float)
    req = k["time_limit_s"].to_numpy(dtype=float)
    # A job whose user the log does not name has no user history: its request.
    by_user = pd.Series(run).groupby(history_users(table).iloc[kept].to_numpy())
    prev = [by_user.shift(i).to_numpy() for i in range(1, 6)]

    def two(p1, p2):
        out = np.where(np.isnan(p2), np.where(np.isnan(p1), req, p1), (p1 + p2) / 2)
        return np.minimum(out, req)

    last_two = two(prev[0], prev[1])
    f = feats.iloc[kept]
    fin = two(np.exp(f["user_last1"].to_numpy()), np.exp(f["user_last2"].to_numpy()))
    longest = np.nanmax(np.where(np.isnan(np.vstack(prev)), -np.inf, np.vstack(prev)), axis=0)
    twice = np.where(np.isfinite(longest), np.minimum(2 * longest, req), req)
    done5 = np.exp(f["user_max5"].to_numpy())
    twice_fin = np.where(np.isfinite(done5), np.minimum(2 * done5, req), req)
    return {"users_request": (req, req), "last_two": (last_two, last_two),
            "last_two_finished": (fin, fin), "twice_last_five": (twice, twice),
            "twice_last_five_finished": (twice_fin, twice_fin)}


#: A test part whose largest batch (one user's jobs submitted in the same second: a job
#: array) holds more than this share, or that has fewer than MIN_BATCHES batches, is one case
#: rather than a sample, and the evaluation says so.
MAX_BATCH_SHARE = 0.5
MIN_BATCHES = 10


def test_part(table: pd.DataFrame, feats: pd.DataFrame, test: np.ndarray) -> dict:
    """What the test part is made of: its users, its batches (a user's jobs submitted in the
    same second) and the share of *novel* jobs (no finished job of their own request, so
    their history is the user's other requests'); ``warning`` says when it is one case."""
    from hpcds1mpi.surrogates.submit_features import end_times, submit_times, unnamed_users
    from hpcds1mpi.surrogates.walltime_model import novel_mask

    user = (table["user"] if "user" in table else pd.Series("", index=table.index)
            ).astype("string").fillna("").to_numpy(dtype=object)[test]
    sub = submit_times(table).iloc[test].dt.floor("s").astype("string").fillna("")
    batch = pd.Series(user).str.cat(sub.to_numpy(dtype=object), sep="|")
    counts = batch.value_counts()
    out = {"n_users": int(len(set(user))), "n_batches": int(len(counts)),
           "largest_batch_share": float(counts.iloc[0] / len(test)),
           "novel_share": float(np.mean(novel_mask(feats.iloc[test])))}
    out["warning"] = ""
    # A log without users (Theta): the user baselines' "user" is the whole machine (s36 L9).
    out["note"] = ("no job names its user: the user baselines (last_two, twice_last_five) "
                   "take the whole log as one user's history" if not any(user) else "")
    unnamed = int(unnamed_users(table).sum())
    if unnamed:  # some jobs' users unknown (SWF -1 on some lines): nobody's (s38 tester C3)
        out["note"] = (f"{unnamed} of the {len(table)} jobs name no user (the others do): "
                       "left out of training and test, and of every user's history")
    if end_times(table).isna().all():  # s38 tester C6: printed as if methods' results
        said = ("no job has a start or end time (in an SWF log: the wait, field 3, is -1 on "
                "every line): no job is known to have finished before another was "
                "submitted, so the finished-only baselines are the request and ours learns "
                "from the request alone")
        out["note"] = f"{out['note']}; {said}" if out["note"] else said
    if out["largest_batch_share"] > MAX_BATCH_SHARE or out["n_batches"] < MIN_BATCHES:
        out["warning"] = (
            f"the test part is {len(test)} jobs in {out['n_batches']} batch(es) of "
            f"{out['n_users']} user(s), the largest {100 * out['largest_batch_share']:.0f} % of "
            "it (jobs submitted in the same second): one case, not a sample; "
            f"{100 * out['novel_share']:.0f} % have no finished job of their own request")
    return out


def scores(point: np.ndarray, wall: np.ndarray, actual: np.ndarray) -> dict:
    """Accuracy and median APE of the point value, kill rate and over-request of the walltime."""
    return {"accuracy": float(np.mean(np.minimum(point, actual) / np.maximum(point, actual))),
            "median_ape": float(np.median(np.abs(point - actual) / actual) * 100),
            "kill_rate": float(np.mean(wall < actual)),
            "over_request": float(np.median(wall / actual)),
            # Beside the median, so that a median trick is not mistaken for a better method.
            "over_request_p75": float(np.percentile(wall / actual, 75)),
            "over_request_p90": float(np.percentile(wall / actual, 90)),
            "over_request_mean": float(np.mean(wall / actual))}


def evaluate(table: pd.DataFrame, split: str = "chronological", seed: int = 0,
             predictor_args: dict | None = None, in_flight: bool = False) -> dict:
    """Train the shipped predictor on the training part of ``table``, score it and the
    baselines on the test part; the result dict ``--json`` writes. ``in_flight``: the
    features include the jobs running at each submission (what a scheduler knows; a history
    of finished jobs asked about "now", as ``recommend --history``, does not)."""
    from hpcds1mpi.surrogates.job_runtime import RuntimePredictor
    from hpcds1mpi.surrogates.submit_features import submit_features, submit_times

    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    t0 = time.perf_counter()
    table = table.reset_index(drop=True)
    kept = kept_jobs(table)
    if len(kept) < MIN_KEPT:
        from hpcds1mpi.errors import DataError

        raise DataError(_too_few_kept(table, len(kept)))
    feats = submit_features(table, in_flight=in_flight)
    train, test = split_jobs(table, kept, split, seed)
    _refuse_too_few_to_test(len(kept), test, split)
    _refuse_too_few_to_train(len(kept), train, split)
    t_feat = time.perf_counter() - t0
    run = table["runtime_s"].to_numpy(dtype=float)
    sub = submit_times(table).to_numpy()
    model = RuntimePredictor(**(predictor_args or {}))
    model.fit(feats.iloc[train], run[train], order=sub[train])
    t_fit = time.perf_counter() - t0 - t_feat
    actual = run[test]
    wall, tight = model.walltime_tight(feats.iloc[test])
    out = {"ours": scores(model.predict(feats.iloc[test]), wall, actual)}
    out["ours"]["calibration_coverage"] = model.calibration_coverage_
    out["ours"]["tight_share"] = float(np.mean(tight))
    out["ours"]["method"] = {"point": model.mode_, "candidates": model.candidates_,
                             "validation_accuracy": model.validation_,
                             "walltime": model.walltime_.describe()}
    pos = {p: i for i, p in enumerate(kept)}
    rows = np.array([pos[p] for p in test])
    for name, (point, wall) in baselines(table, kept, feats).items():
        out[name] = scores(point[rows], wall[rows], actual)
    out["test_part"] = test_part(table, feats, test)
    out.update({"split": split, "n_jobs": int(len(table)), "n_kept": int(len(kept)),
                "n_train": int(len(train)), "n_test": int(len(test)),
                "coverage_target": model.coverage, "in_flight": bool(in_flight),
                "seconds": round(time.perf_counter() - t0, 2),
                "seconds_features": round(t_feat, 2), "seconds_fit": round(t_fit, 2),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})
    return out


ROWS = ("ours", "users_request", "last_two", "last_two_finished", "twice_last_five",
        "twice_last_five_finished")


def table_lines(result: dict) -> list[str]:
    """The side-by-side text table of one result."""
    lines = [f"{'':24s} {'accuracy':>9s} {'medAPE %':>9s} {'killed %':>9s} {'over-req':>9s}"]
    for name in ROWS:
        r = result[name]
        lines.append(f"{name:24s} {r['accuracy']:9.3f} {r['median_ape']:9.1f} "
                     f"{100 * r['kill_rate']:9.2f} {r['over_request']:8.2f}x")
    lines.append(f"split {result['split']}: {result['n_train']} train, {result['n_test']} test "
                 f"jobs ({result['n_kept']} kept of {result['n_jobs']}); "
                 f"{result['seconds']:.1f} s, peak RSS {result['peak_rss_mb']} MB")
    if result.get("in_flight"):
        lines.append("features: with the jobs running at each submission (--in-flight; "
                     "recommend --history has the finished jobs only)")
    if result.get("test_part", {}).get("note"):
        lines.append(f"note: {result['test_part']['note']}")
    if result.get("test_part", {}).get("warning"):
        lines.append(f"warning: {result['test_part']['warning']}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """The command line: read LOG, evaluate, print, optionally write JSON."""
    from hpcds1mpi.errors import HpcdsError
    from hpcds1mpi.records.ingest.job_logs import read_jobs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="a job log of any supported format, or a job table written "
                    "by hpcds1mpi ingest")
    ap.add_argument("--split", choices=SPLITS, default="chronological")
    ap.add_argument("--json", dest="json_out", help="write the scores here")
    ap.add_argument("--force", action="store_true",
                    help="replace a --json file already there")
    ap.add_argument("--seed", type=int, default=0, help="of the users / random split")
    ap.add_argument("--coverage", type=float, default=0.95,
                    help="share of jobs the proposed walltime should cover (default 0.95)")
    ap.add_argument("--in-flight", action="store_true",
                    help="add the jobs running at each submission (how many, how long they had "
                         "run: a scheduler's view) to the features; recommend --history, "
                         "fitted on finished jobs, has no such view")
    args = ap.parse_args(argv)
    # Every check on the options before the log is read (Curie takes a minute to read).
    if not 0.5 <= args.coverage < 1:
        print(f"error: --coverage must be in [0.5, 1), got {args.coverage}", file=sys.stderr)
        return 2
    out_path = Path(args.json_out) if args.json_out else None
    try:
        if out_path is not None:
            from hpcds1mpi.analysis.h1_results import check_files
            from hpcds1mpi.atomic import check_output_file
            from hpcds1mpi.errors import OutputError

            check_output_file(out_path, "scores")
            if out_path.exists() and Path(args.log).exists() and \
                    out_path.resolve() == Path(args.log).resolve():
                raise OutputError(f"--json {out_path} is the log itself; choose another path "
                                  "for the scores")
            # the analyses' one rule: any file there replaced only with --force (RX9)
            check_files([out_path], args.force, "--json", "scores")
        table, report = read_jobs(args.log, what="log")
    except HpcdsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    for line in report.lines():
        print(line)
    try:
        result = evaluate(table, args.split, args.seed, {"coverage": args.coverage},
                          in_flight=args.in_flight)
    except HpcdsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    result["log"] = Path(args.log).name
    for line in table_lines(result):
        print(line)
    if out_path is not None:
        from hpcds1mpi.atomic import atomic_path

        try:
            with atomic_path(out_path, "scores") as tmp:
                Path(tmp).write_text(json.dumps(result, indent=2) + "\n")
        except HpcdsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
