"""The walltime (``--time``) to request for a job, from a history of finished jobs.

:func:`propose_walltime` learns :class:`~hpcds1mpi.surrogates.job_runtime.RuntimePredictor`
from a job table (``ingest`` of ``sacct``, an SWF log ...) and proposes the calibrated upper
quantile of the job's run time, capped at the user's request when one is given (and the
request itself where the job, described without it, needs more). What it says of how sure
it is comes from the history itself with one model: the share it covered of the newest
calibration jobs its tight share and margin were chosen on
(:mod:`~hpcds1mpi.surrogates.walltime_policy`, :mod:`~hpcds1mpi.surrogates.walltime_gate`:
tight where the model is sure, the request kept where it is not), said as the score it was
chosen by, not as a check on other jobs.

Where it cannot know — the history has too few completed jobs with a known end to learn from,
or the user fewer than :data:`MIN_USER_JOBS` of them — it proposes nothing and says so
(``reason``: why, and what to do); it never falls back to a made-up default. The user's own
jobs check what it says (:mod:`~hpcds1mpi.decide.walltime_evidence`): a job killed at its
limit (TIMEOUT) needed more than it, and a request their like jobs finished within is not
called short.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hpcds1mpi.decide.walltime_evidence import enough_jobs, records_requests
from hpcds1mpi.decide.walltime_proposal import NOVEL, WalltimeProposal  # noqa: F401 - API
from hpcds1mpi.errors import DataError

#: Fewest finished jobs of the user the history must hold to propose anything.
MIN_USER_JOBS = 2


def too_few_user_jobs(n: int) -> str:
    """The reason when the user has ``n`` finished jobs, some but fewer than
    :data:`MIN_USER_JOBS` (one job is not "no history": it says how many and why not)."""
    return (f"only {n} finished job{'s' if n != 1 else ''} of this user in the history by the "
            f"submit time (need at least {MIN_USER_JOBS}): cannot propose")


def dropped_jobs_said(notes: list[str]) -> list[str]:
    """What to tell of a history's reading ``notes`` (``read_job_table``'s, a frame's row
    checks'): its first line (what was read) and each line saying jobs were dropped (stripped),
    ``[]`` where none was dropped. ``recommend --history`` and the API's ``propose_walltime``
    both say it."""
    dropped = [line.strip() for line in notes[1:] if line.lstrip().startswith("dropped")]
    return [notes[0], *dropped] if dropped else []


def _job_row(history: pd.DataFrame, job: dict) -> pd.DataFrame:
    """The job to propose for as one job-table row (not finished, no run time)."""
    row = {c: pd.NA for c in history.columns}
    row.update({"status": pd.NA, "state_raw": "to submit", "runtime_s": np.nan,
                "end_time": pd.NaT, "start_time": pd.NaT})
    row.update({k: v for k, v in job.items() if v is not None})
    return pd.DataFrame([row])


def propose_walltime(history: pd.DataFrame, user: str, *, workload: str | None = None,
                     account: str | None = None, partition: str | None = None,
                     nodes: int | None = None, procs: int | None = None,
                     time_limit_s: float | None = None, mem_req_gb: float | None = None,
                     submit_time=None, quantile: float = 0.95, predictor_args: dict | None = None,
                     partition_limit_s: float | None = None) -> WalltimeProposal:
    """Propose ``--time`` for a job of ``user`` from a history job table.

    Args:
        history: a job table (:data:`hpcds1mpi.records.ingest.JOB_COLUMNS`); jobs of every
            user help the model, the user's own give the job its history features.
        user: whose job it is.
        workload, account, partition, nodes, procs, time_limit_s, mem_req_gb: what the job
            requests (None: not known); ``time_limit_s`` also caps the proposal.
        submit_time: when it is submitted (default: just after the history's last end); only
            jobs finished by then count.
        quantile: the share of jobs like it the walltime should cover.
        predictor_args: keyword arguments of ``RuntimePredictor`` (tests cap the trees).
        partition_limit_s: the partition's time limit (s; None: not known): a raise above the
            user's killed jobs goes no higher.

    Returns:
        WalltimeProposal; ``time_s`` None with ``reason`` when it cannot propose.

    Raises:
        ConfigError: a wrong argument, as :func:`hpcds1mpi.propose_walltime` refuses it.
        DataError: the history lacks ``user`` or ``runtime_s`` (too few completed jobs to
            learn from is a proposal with its ``reason``: the recommendation stands without).
    """
    from hpcds1mpi.schemas.api_args import check_api_arguments, submit_time_argument

    # The package's checks, not a copy (s45 tester C3: a -5-s request came back as a -5-s
    # walltime, "3600" and "01:00:00" were tracebacks).
    check_api_arguments("propose_walltime", required=("user",), user=user, workload=workload,
                        partition=partition, nodes=nodes, procs=procs,
                        time_limit_s=time_limit_s, quantile=quantile,
                        partition_limit_s=partition_limit_s, account=account,
                        mem_req_gb=mem_req_gb)  # s46: those two were taken unchecked
    submit_time = submit_time_argument(submit_time)
    from hpcds1mpi.surrogates.job_runtime import MIN_TRAIN, RuntimePredictor
    from hpcds1mpi.surrogates.submit_features import (completed_mask, end_times,
                                                      feature_groups, submit_features,
                                                      submit_order, unnamed_users, GROUPS)
    from hpcds1mpi.records.ingest.log_ids import user_of_several_logs
    from hpcds1mpi.surrogates.walltime_model import novel_mask

    from hpcds1mpi.decide.walltime_evidence import (default_partition, heed_kills,
                                                    hold_to_runs, killed_at_limit,
                                                    like_rows, new_in_request,
                                                    raise_to_cover, too_thin)
    from hpcds1mpi.decide.walltime_stopped import stopped_like, stopped_runs
    from hpcds1mpi.decide.walltime_unproposed import unproposed_kills, user_reason

    missing = [c for c in ("user", "runtime_s") if c not in history.columns]
    if missing:
        raise DataError(f"the history job table lacks {', '.join(missing)}: give an "
                        "ingested job table (hpcds1mpi ingest)")
    hist = history.reset_index(drop=True)
    user = str(user).strip()  # a stray space is no other user (s39 tester C5)
    end = end_times(hist)
    if submit_time is None:
        last = end.max()
        submit_time = (last if pd.notna(last) else pd.Timestamp.now()) + pd.Timedelta(seconds=1)
    submit_time = pd.Timestamp(submit_time)
    completed = completed_mask(hist)
    ended = (end <= submit_time).to_numpy()
    done = completed & ended
    users = (hist["user"].astype("string") == str(user)).fillna(False).to_numpy()
    mine = done & users
    name_rows = ((hist["workload"].astype("string") == str(workload)).fillna(False).to_numpy()
                 if workload is not None and "workload" in hist else np.zeros(len(hist), bool))
    same = mine & name_rows
    proposal = WalltimeProposal(None, quantile, n_history=int(mine.sum()),
                                n_same_name=int(np.sum(same)), request_s=time_limit_s)
    if done.sum() < MIN_TRAIN:  # the recommendation stands without a walltime: said, not fatal
        proposal.reason = too_thin(hist, done, completed, end, MIN_TRAIN)
        return proposal
    if mine.sum() < MIN_USER_JOBS:  # said with what the user's jobs did (s39 tester C1, C3, C5)
        proposal.reason = ("" if users.any() else user_of_several_logs(hist, user)) or \
            user_reason(hist, user, users, ended, mine, too_few_user_jobs(int(mine.sum())))
        # No coverage to agree with: kills with this request, else with this time limit.
        like, like_what = like_rows(hist, users, users & ended, time_limit_s, procs,
                                    partition)
        proposal.killed = unproposed_kills(hist, users & ended, mine, name_rows, like,
                                           workload, time_limit_s, procs, partition,
                                           like_what)
        return proposal
    if partition is None:  # a script naming no partition runs where the default puts it
        partition = default_partition(hist, mine, same)
        proposal.partition_guess = partition
    job = _job_row(hist, {"user": str(user), "workload": workload, "account": account,
                          "partition": partition, "req_nodes": nodes, "nodes": nodes,
                          "req_procs": procs, "time_limit_s": time_limit_s,
                          "mem_req_gb": mem_req_gb, "submit_time": submit_time})
    # Without the jobs in flight: a history of finished jobs does not hold those running when
    # this job is submitted, and "none running" would be a guess (runtime_eval measures this
    # model; --in-flight the other). The history's features only for a fit (the new job cannot change a finished job's), the
    # new job's from its user's rows alone (s36: ~6 s of Curie's 8.6 s went to the whole table)
    either = set(feature_groups(hist)) | set(feature_groups(job))
    groups = tuple(g for g in GROUPS if g in either)
    run = hist["runtime_s"].to_numpy(dtype=float)
    # Jobs whose user the history does not name (SWF user -1 of some lines) have no history
    # of their own: learnt from, they teach that agreeing candidates mean the request.
    rows = np.flatnonzero(done & ~unnamed_users(hist))
    rows = submit_order(hist, rows)  # a total order: ties not in the file's line order
    # A proposal should take seconds: the point run time shown beside it is the best single
    # history candidate (validated on the newest jobs), not the evaluation's classifier over
    # them (tens of seconds on a 40k-job history); the walltime itself does not use either.
    args = {"coverage": quantile, "choose": "single", **(predictor_args or {})}

    # One fit, not a second model for a check: how sure is what the fit's own choice scored
    # on its newest calibration jobs. The fit is a function of the history alone: kept in the
    # user's cache (s34 tester S4).
    from hpcds1mpi.decide.walltime_cache import cached_fit

    def fit():
        feats = submit_features(hist, groups, in_flight=False).iloc[rows]
        return RuntimePredictor(**args).fit(feats, run[rows])

    def fitted(model) -> bool:  # a cache file can unpickle to anything
        return isinstance(model, RuntimePredictor) and all(
            hasattr(model, a) for a in ("walltime_", "n_calibration_", "n_train_"))

    model = cached_fit(hist, groups, rows, args, fit, fitted)
    wm = model.walltime_
    check = wm.chosen_coverage(model.n_calibration_)
    if check is not None and model.n_calibration_ >= 20:
        proposal.coverage, proposal.n_checked, proposal.chosen_to = (
            float(check[0]), int(check[1]), float(check[2]))
    own = (hist["user"].astype("string").fillna("") == str(user)).to_numpy()
    last = submit_features(pd.concat([hist[own], job], ignore_index=True), groups,
                           in_flight=False).iloc[[-1]]
    wall, tight = model.walltime_tight(last)
    proposal.time_s = float(wall[0])
    proposal.tight = bool(tight[0]) or not time_limit_s
    # Why a request was kept: a request new to the user, too rare in the history to calibrate
    # (no request given: nothing was kept).
    proposal.novel = (bool(novel_mask(last)[0]) and wm.novel_k_ is None
                      and not proposal.tight)
    if proposal.novel:  # what of the request is new to the user (s37 tester P9)
        proposal.novel_what = new_in_request(hist, mine, time_limit_s, procs, partition)
    # The same job without its request: what the model says when the request does not cap
    # it (a request shorter than that is the user's to change, and is said so).
    free = last.assign(log_limit=np.nan) if "log_limit" in last else last
    proposal.uncapped_s = float(model.walltime(free)[0])
    proposal.point_s = float(model.predict(free)[0])
    if time_limit_s:
        if proposal.time_s >= float(time_limit_s) * (1 - 1e-9):  # the request itself, not
            proposal.time_s = float(time_limit_s)  # its exp(log()) 7199.99..: s37 tester P9
        if proposal.short_request():
            # The row with the request as a feature can come out far below the request while
            # the job alone needs more than it (a backtested job ran 16,573 s of an 18,000 s
            # request and was proposed 15,772 s): going below a request already too short
            # only kills more jobs like it, so the request is kept.
            proposal.time_s = float(time_limit_s)
    proposal.n_train, proposal.no_requests = model.n_train_, not records_requests(hist)
    named = bool(np.any(same))
    # The user's jobs like this one: the coverage and the kills read the same ones (s43
    # tester H5: 306 kills at the very limit asked were "unlike" a 2-processor job while
    # the coverage counted the same user's jobs "with this time limit").
    like, like_what = like_rows(hist, users, done, time_limit_s, procs, partition)
    # Runs stopped while still running (preempted, node failed), like this job as the runs
    # the coverage reads are: each ran at least its elapsed time (s43 tester H2).
    stopped = users & ended & (name_rows if named else like if time_limit_s
                               else np.ones(len(hist), bool))
    cut = stopped_runs(hist, stopped)
    runs = None  # the user's own jobs the proposal is measured on, and said to be
    if named or not time_limit_s:
        # The user's own finished jobs of this name, or (no request to judge the job by and no
        # name the history knows) all of them, are the evidence: a proposal of 2,663 s had said
        # 95 % "finished within it" where 16 of the user's 47 jobs had.
        runs = run[:len(hist)][same if named else mine]
        raise_to_cover(proposal, np.concatenate([runs, cut]), time_limit_s)
        if not time_limit_s and proposal.point_s and proposal.time_s < proposal.point_s:
            # Two fits can disagree: a walltime under the job's own predicted run time would
            # kill about half of such jobs, whatever its quantile says.
            proposal.time_s = proposal.point_s
    hold_to_runs(proposal, run[:len(hist)][same if named else mine], time_limit_s,
                 partition_limit_s)
    if runs is None and proposal.short_request():
        # "Your request is too short" is the model's word against the user's own jobs (a
        # Gaia user's 7,200-s request, called short of 9,912 s, held 2,790 of their 2,802):
        # measured on those with this request where enough for the quantile, else all.
        like_done = like & done
        use_like = like_done.sum() >= enough_jobs(proposal.quantile)
        runs = run[:len(hist)][like_done if use_like else mine]
        proposal.like_what = like_what if use_like else ""
        proposal.n_like = len(runs)
    elif runs is None and proposal.tight and proposal.time_s < float(time_limit_s):
        # A tight proposal under the request is the model's word for jobs like it; the user's
        # own finished jobs with this very request check it (s39 tester C2: "about 95 %"
        # where 994 of the user's 1,309 had run within it, and 118 of the next 147).
        # A request new to the user (other processors): their jobs with this time limit.
        own_like, proposal.like_what = like & done, like_what
        runs = run[:len(hist)][own_like]
        raise_to_cover(proposal, np.concatenate([runs, cut]), time_limit_s)
        proposal.n_like = len(runs)
        runs = runs if len(runs) else None  # none to measure on: nothing said
    # A job killed at its limit needed more than it: the proposal must not stay at or under
    # such a kill of the user's jobs of this name (or with this request) unsaid.
    kills = killed_at_limit(hist, users & ended, mine, name_rows, like, workload,
                            request_given=bool(time_limit_s), like_what=like_what,
                            request_s=time_limit_s or proposal.time_s)  # no request: its own
    heed_kills(proposal, kills, time_limit_s, partition_limit_s)
    proposal.stopped = stopped_like(hist, stopped, f"named {workload!r}" if named
                                    else like_what if time_limit_s else "", proposal.time_s)
    if runs is not None:
        within = int(np.sum(runs <= proposal.time_s * (1 + 1e-9)))
        if named:
            proposal.name, proposal.n_name_within = str(workload), within
        else:
            proposal.n_user_within = within
    return proposal

