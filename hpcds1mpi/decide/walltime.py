"""The walltime (``--time``) to request for a job, from a history of finished jobs.

:func:`propose_walltime` learns :class:`~hpcds1mpi.surrogates.job_runtime.RuntimePredictor`
from a job table (``ingest`` of ``sacct``, an SWF log ...) and proposes the calibrated upper
quantile of the job's run time, capped at the user's request when one is given (and the
request itself where the job, described without it, needs more). How sure it
is comes from the history itself (measured, not assumed) with one model: the share covered of
its own newest calibration jobs, held out from the choice of the per-job policy (:mod:`~hpcds1mpi.surrogates.walltime_policy`: tight where the
model is sure, the request kept where it is not).

Where it cannot know — the history has too few completed jobs with a known end to learn from,
or the user fewer than :data:`MIN_USER_JOBS` of them — it proposes nothing and says so
(``reason``: why, and what to do); it never falls back to a made-up default. The user's own
jobs check what it says (:mod:`~hpcds1mpi.decide.walltime_evidence`): a job killed at its
limit (TIMEOUT) needed more than it, and a request their like jobs finished within is not
called short.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from hpcds1mpi.decide.walltime_evidence import (Kills, enough_jobs, no_requests_case,
                                                records_requests)
from hpcds1mpi.errors import DataError
from hpcds1mpi.launch.directives import format_pbs_walltime, format_slurm_time

#: Fewest finished jobs of the user the history must hold to propose anything.
MIN_USER_JOBS = 2
NO_HISTORY = "no history for this user/job: cannot propose"
#: Why a request new to the user is kept ({what}: the request, :func:`request_words`).
NOVEL = ("none of your finished jobs asked for {what}, and the history has too few such new "
         "requests to tell how long they run")


def time_limit_text(seconds: float) -> str:
    """``seconds`` as ``--time`` and ``recommend --time-limit`` read it (``[D-]HH:MM:SS``,
    whole minutes rounded up): a bare number is minutes to both (s35 tester T5)."""
    return format_slurm_time(60 * int(np.ceil(round(seconds, 3) / 60.0)))


def _percent(share: float) -> str:
    """A share as a percentage, with a decimal where a whole number would round it away
    (0.999 is 99.9 %, not 100 %)."""
    pct = 100 * share
    return f"{pct:.0f}" if abs(pct - round(pct)) < 1e-9 else f"{pct:.1f}"


@dataclass
class WalltimeProposal:
    """A proposed walltime and how sure it is.

    Attributes:
        time_s: the ``--time`` to request (s); None when it cannot propose.
        quantile: the share of jobs like this one the walltime is meant to cover.
        coverage: the share of the history's newest jobs the method covered when trained on
            the older ones (measured); None when too few to check.
        n_checked: how many jobs ``coverage`` was measured on.
        n_history: finished jobs of this user in the history.
        n_same_name: of those, with this job name (0 when no name was given).
        point_s: the predicted run time (s, modelled: the best single candidate of the
            job's history, see :class:`~hpcds1mpi.surrogates.job_runtime.RuntimePredictor`).
        request_s: the user's own request it was capped at (None when not given).
        n_train: jobs the proposing model learned from.
        reason: why there is no proposal ("" when there is one).
        tight: True where the model is sure of this job (a narrow predicted run-time tail:
            a tight calibrated proposal); False where it is not and the request is kept.
        novel: True where no finished job of the user had this request (time, processors,
            partition) -- its history is borrowed from the user's other requests -- and the
            history holds too few such jobs to calibrate them apart: the request is kept.
        uncapped_s: the walltime the model would propose without the request (s); above
            ``request_s`` the request is what is proposed, and it covers fewer jobs like this
            one than ``quantile`` says.
        name: the job name whose history ``n_same_name`` counts (None: not given).
        n_name_within: of the user's ``n_same_name`` finished jobs of this name, how many ran
            within ``time_s`` (measured; None when there are none).
        model_s: the model's own walltime where the user's jobs of this name (or, for a
            job given without its request and no name the history knows, all the user's
            jobs) showed it too short to cover ``quantile`` of them and the proposal was
            raised to do so (s); None when it was not raised.
        n_user_within: for a job given without its request and no name the history knows,
            or one whose request the model called short, of the user's ``n_like`` finished
            jobs, how many ran within ``time_s`` (measured; None otherwise).
        n_like: how many jobs ``n_user_within`` counts from (None: ``n_history``).
        like_what: which of the user's jobs those are ("" all of them, or "with this
            request").
        novel_what: the request new to the user, in words (``novel``).
        partition_guess: the partition taken for a job given none (where the user's jobs
            ran: a script naming no partition runs in the default one); None: not guessed.
        killed: the user's jobs like this one (of this name, else with this request, else
            at a limit its completed like jobs asked) killed at their time limit (TIMEOUT),
            where the proposal would not have been above them
            (:class:`~hpcds1mpi.decide.walltime_evidence.Kills`); None: no such kill.
        killed_from_s: the walltime before it was raised above those kills (None: not).
        killed_below: such kills the proposal is already above (a killed job is known only to
            need more than its run): said, with what a raise above them would ask; None: none.
        killed_ignored: such kills far beyond every completed run like them
            (:meth:`~hpcds1mpi.decide.walltime_evidence.Kills.out_of_line`): said, not
            obeyed; None: none.
        partition_limit_s: the partition's time limit a raise above kills was held to (None:
            not known, or not what held it).
        no_requests: the history records no requested time (said: ``no_requests_case``).
    """

    time_s: float | None
    quantile: float
    coverage: float | None = None
    n_checked: int = 0
    n_history: int = 0
    n_same_name: int = 0
    point_s: float | None = None
    request_s: float | None = None
    n_train: int = 0
    reason: str = ""
    tight: bool = True
    novel: bool = False
    uncapped_s: float | None = None
    name: str | None = None
    n_name_within: int | None = None
    model_s: float | None = None
    n_user_within: int | None = None
    n_like: int | None = None
    like_what: str = ""
    novel_what: str = ""
    partition_guess: str | None = None
    killed: Kills | None = None
    killed_from_s: float | None = None
    killed_below: Kills | None = None
    killed_ignored: Kills | None = None
    partition_limit_s: float | None = None
    no_requests: bool = False

    def to_dict(self) -> dict:
        """Plain dict (JSON-ready), with ``time`` as Slurm writes it."""
        out = asdict(self)
        out["time"] = self.slurm_time()
        return out

    def slurm_time(self) -> str | None:
        """``time_s`` as ``--time`` takes it (``[D-]HH:MM:SS``, rounded up to a minute)."""
        return None if self.time_s is None else time_limit_text(self.time_s)

    def lines(self, scheduler: str = "slurm") -> list[str]:
        """What ``recommend`` prints about it, the walltime as ``scheduler``'s script asks for
        it (``--time`` for Slurm, ``-l walltime=`` for PBS)."""
        if self.time_s is None:
            return [f"walltime: {self.reason}"]
        checked = self.coverage is not None
        pct = _percent(self.quantile)
        sure = (f"{100 * self.coverage:.1f} % of the newest {self.n_checked} history jobs "
                "were covered" if checked
                else "not checked on held-out jobs (too few history jobs)")
        capped = ""
        if self.request_s:
            capped = (", = the request: capped" if self.time_s >= self.request_s * (1 - 1e-9)
                      else f", under the request of {self.request_s:.0f} s")
        kills = self.killed
        if kills is not None and self.time_s > kills.run_s * (1 + 1e-9):
            held = (f", held to the partition's limit of {self.partition_limit_s:.0f} s"
                    if self.partition_limit_s else
                    f", held to {kills.bound_words()}"
                    if kills.held_to_runs() else "")
            case = (f"raised from {self.killed_from_s:.0f} s above the {kills.limit_s:.0f} s "
                    f"limit that killed {kills.jobs()} (TIMEOUT): a killed job is only "
                    f"known to need more than its {kills.run_s:.0f} s{held}")
        elif kills is not None and self.partition_limit_s:
            case = (f"the partition's limit, though {kills.jobs()} "
                    f"{'was' if kills.n == 1 else 'were'} killed at {kills.limit_s:.0f} s "
                    "(TIMEOUT): it allows no more")
        elif kills is not None:
            case = (f"kept your request, though {kills.jobs()} "
                    f"{'was' if kills.n == 1 else 'were'} killed at {kills.limit_s:.0f} s "
                    "(TIMEOUT)")
        elif self.no_requests:
            case = no_requests_case(self)
        elif self.tight and self.short_request() and self.own_jobs_fit():
            # The model's walltime for jobs like it; the user's own jobs say the request holds.
            case = (f"your request: your own jobs ran within it, where the model, from the "
                    f"history's jobs like it, would ask {self.uncapped_s:.0f} s")
        elif self.tight and self.short_request():
            case = (f"your request is shorter than the {pct} % walltime "
                    f"of {self.uncapped_s:.0f} s, so fewer jobs like this one finish within it")
        elif self.tight and self.model_s is not None:
            whose = f"your jobs named {self.name!r}" if self.n_name_within is not None else \
                "your finished jobs, all of them alike (a time limit or the job's name would " \
                "tell this job apart)"
            case = f"raised from the model's {self.model_s:.0f} s to cover {pct} % of {whose}"
        elif self.tight and checked and not self.request_s:
            # The held-out jobs were judged with their requests; this one was given none.
            case = (f"meant to cover about {pct} % of such jobs; given no "
                    "time limit, the model judged it without the request it learned from")
        elif self.tight and checked:
            case = f"tight: about {pct} % of such jobs finished within it"
        elif self.tight:  # nothing held out to check it on: what it aims at, not a result
            case = f"tight: meant to cover about {pct} % of such jobs"
        else:
            case = "unsure: kept your request because " + (
                NOVEL.format(what=self.novel_what or "this time, processors and partition")
                if self.novel else "jobs like this one too often ran past a shorter "
                "walltime (their run times are spread out)")
        if self.n_name_within is not None:  # measured on the jobs the user knows best
            sure += (f"; {self.n_name_within} of your {self.n_same_name} finished jobs named "
                     f"{self.name!r} ran within it")
        elif self.n_user_within is not None and kills is None:  # the kills say more
            like = f" {self.like_what}" if self.like_what else ""
            sure += (f"; {self.n_user_within} of your {self.n_like or self.n_history} finished "
                     f"jobs{like} ran within it")
        minutes = int(np.ceil(round(self.time_s, 3) / 60.0))  # as slurm_time rounds it
        asked = (f"-l walltime={format_pbs_walltime(minutes * 60)}" if scheduler == "pbs"
                 else f"--time {self.slurm_time()}")
        ignored = self.killed_ignored
        counted = kills if kills is not None else self.killed_below
        more = (f"; {counted.n} more killed at their limit" if counted is not None else
                f"; {ignored.n} more killed at their limit, ignored" if ignored else "")
        where = (f"; partition taken as {self.partition_guess!r}, where your jobs ran (the "
                 "job names none)" if self.partition_guess else "")
        lines = [f"walltime: {asked} ({self.time_s:.0f} s{capped}; {case}; {sure})",
                 f"walltime: predicted run time {self.point_s:.0f} s (modelled), from "
                 f"{self.n_history} finished jobs of the user ({self.n_same_name} with this "
                 f"name{more}), a model of {self.n_train} jobs{where}"]
        if ignored is not None:
            lines.append(ignored.ignored_line())
        below = self.killed_below
        if below is not None:
            lines.append(f"walltime: {below.jobs()} {'was' if below.n == 1 else 'were'} killed "
                         f"at {below.limit_s:.0f} s (TIMEOUT, after up to {below.run_s:.0f} s): "
                         f"such a job needs more than that, how much is not known; "
                         f"{self.time_s:.0f} s is {self.time_s - below.run_s:.0f} s above, and "
                         f"above every kill is about {below.above():.0f} s "
                         f"(--time {time_limit_text(below.above())})")
        if kills is not None and self.partition_limit_s \
                and self.time_s <= kills.run_s * (1 + 1e-9):
            lines.append(f"warning: {kills.jobs()} {'was' if kills.n == 1 else 'were'} "
                         f"killed at {kills.limit_s:.0f} s (TIMEOUT), and the partition allows "
                         f"no more than {self.partition_limit_s:.0f} s: ask a partition with a "
                         "longer limit, or split the job")
        elif kills is not None and self.time_s <= kills.run_s * (1 + 1e-9):
            lines.append(f"warning: {kills.jobs()} {'was' if kills.n == 1 else 'were'} "
                         f"killed at {kills.limit_s:.0f} s (TIMEOUT, after up to "
                         f"{kills.run_s:.0f} s): a limit of {self.time_s:.0f} s will likely be "
                         f"killed too; ask for more, about {kills.above():.0f} s "
                         f"(--time-limit {time_limit_text(kills.above())})")
        elif (self.request_s and self.point_s and self.point_s > self.request_s
              and not self.own_jobs_fit()):
            lines.append(f"warning: your request of {self.request_s:.0f} s is below the "
                         f"predicted run time of {self.point_s:.0f} s: the job will likely be "
                         f"killed; ask for about {self.uncapped_s:.0f} s "
                         f"(--time-limit {time_limit_text(self.uncapped_s)})")
        return lines

    def own_jobs_fit(self) -> bool:
        """Whether the user's own jobs measured against the proposal (of this name, else like
        it) ran within it in at least ``quantile`` of cases, on enough of them for that share
        to be seen at all: then no request is "too short" (one job is no evidence)."""
        if self.n_name_within is not None:
            n, within = self.n_same_name, self.n_name_within
        else:
            n, within = self.n_like or self.n_history, self.n_user_within
        return (within is not None and n >= enough_jobs(self.quantile)
                and within >= self.quantile * n)

    def short_request(self) -> bool:
        """Whether the user's request, not the model, set the proposal (it is below the
        walltime the model would propose)."""
        return bool(self.request_s and self.uncapped_s
                    and self.uncapped_s > self.request_s * (1 + 1e-9))


def too_few_user_jobs(n: int) -> str:
    """The reason when the user has ``n`` finished jobs, some but fewer than
    :data:`MIN_USER_JOBS` (one job is not "no history": it says how many and why not)."""
    return (f"only {n} finished job{'s' if n != 1 else ''} of this user in the history by the "
            f"submit time (need at least {MIN_USER_JOBS}): cannot propose")


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
        DataError: the history lacks ``user`` or ``runtime_s`` (too few completed jobs to
            learn from is a proposal with its ``reason``: the recommendation stands without).
    """
    from hpcds1mpi.surrogates.job_runtime import MIN_TRAIN, RuntimePredictor
    from hpcds1mpi.surrogates.submit_features import (completed_mask, end_times,
                                                      feature_groups, submit_features,
                                                      submit_order, unnamed_users, GROUPS)
    from hpcds1mpi.records.ingest.log_ids import user_of_several_logs
    from hpcds1mpi.surrogates.walltime_model import novel_mask

    from hpcds1mpi.decide.walltime_evidence import (default_partition, heed_kills,
                                                    killed_at_limit, new_in_request,
                                                    raise_to_cover, same_request, too_thin)

    missing = [c for c in ("user", "runtime_s") if c not in history.columns]
    if missing:
        raise DataError(f"the history job table lacks {', '.join(missing)}: give an "
                        "ingested job table (hpcds1mpi ingest)")
    hist = history.reset_index(drop=True)
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
    if mine.sum() < MIN_USER_JOBS:
        proposal.reason = (too_few_user_jobs(int(mine.sum())) if mine.any() else
                           user_of_several_logs(hist, str(user)) or NO_HISTORY)
        return proposal
    if partition is None:  # a script naming no partition runs where the default puts it
        partition = default_partition(hist, mine, same)
        proposal.partition_guess = partition
    job = _job_row(hist, {"user": str(user), "workload": workload, "account": account,
                          "partition": partition, "req_nodes": nodes, "nodes": nodes,
                          "req_procs": procs, "time_limit_s": time_limit_s,
                          "mem_req_gb": mem_req_gb, "submit_time": submit_time})
    # The history's features only for a fit (the new job cannot change a finished job's), the
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

    # One fit: how sure comes from the model's own held-out check (the newest half of its
    # calibration slice, scored with the policy chosen on the older half), not a second model.
    # The fit is a function of the history alone: kept in the user's cache (s34 tester S4).
    from hpcds1mpi.decide.walltime_cache import cached_fit

    def fit():
        feats = submit_features(hist, groups).iloc[rows]
        return RuntimePredictor(**args).fit(feats, run[rows])

    model = cached_fit(hist, groups, rows, args, fit)
    wm = model.walltime_
    check = wm.held_out_coverage()
    if check is not None and model.n_calibration_ >= 20:
        proposal.coverage = float(check)
        proposal.n_checked = int(model.n_calibration_ - model.n_calibration_ // 2)
    own = (hist["user"].astype("string").fillna("") == str(user)).to_numpy()
    last = submit_features(pd.concat([hist[own], job], ignore_index=True), groups).iloc[[-1]]
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
    runs = None  # the user's own jobs the proposal is measured on, and said to be
    if named or not time_limit_s:
        # The user's own finished jobs of this name, or (no request to judge the job by and no
        # name the history knows) all of them, are the evidence: a proposal of 2,663 s had said
        # 95 % "finished within it" where 16 of the user's 47 jobs had.
        runs = run[:len(hist)][same if named else mine]
        raise_to_cover(proposal, runs, time_limit_s)
        if not time_limit_s and proposal.point_s and proposal.time_s < proposal.point_s:
            # Two fits can disagree: a walltime under the job's own predicted run time would
            # kill about half of such jobs, whatever its quantile says.
            proposal.time_s = proposal.point_s
    like = users & same_request(hist, time_limit_s, procs, partition)
    if runs is None and proposal.short_request():
        # "Your request is too short" is the model's word against the user's own jobs (a
        # Gaia user's 7,200-s request, called short of 9,912 s, held 2,790 of their 2,802):
        # measured on those with this request where enough for the quantile, else all.
        like_done = like & done
        use_like = like_done.sum() >= enough_jobs(proposal.quantile)
        runs = run[:len(hist)][like_done if use_like else mine]
        proposal.like_what = "with this request" if use_like else ""
        proposal.n_like = len(runs)
    # A job killed at its limit needed more than it: the proposal must not stay at or under
    # such a kill of the user's jobs of this name (or with this request) unsaid.
    kills = killed_at_limit(hist, users & ended, mine, name_rows, like, workload,
                            request_given=bool(time_limit_s))
    heed_kills(proposal, kills, time_limit_s, partition_limit_s)
    if runs is not None:
        within = int(np.sum(runs <= proposal.time_s * (1 + 1e-9)))
        if named:
            proposal.name, proposal.n_name_within = str(workload), within
        else:
            proposal.n_user_within = within
    return proposal

