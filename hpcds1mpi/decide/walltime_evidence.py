"""The user's own jobs as evidence for a walltime proposal (:mod:`hpcds1mpi.decide.walltime`):
jobs killed at their time limit, the jobs like the one proposed for, the partition a job that
names none runs in, and why a history is too thin to learn from.

The model learns only from completed jobs (a killed job's run time is not how long its work
takes); these jobs still say something the proposal must not contradict: a TIMEOUT run needed
more than its limit (unless far beyond every completed run like it, or, where none like it
completed, beyond every completed run of the user's and the proposal, or beyond a year: a hung
run, or another job), and a request the user's own like jobs finished within is no "too short" request.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from hpcds1mpi.schemas.limits import MAX_SECONDS

#: A killed job's run time is only known to exceed its limit: a retry asks for this many times
#: its longest kill, so repeated kills cost a geometric series, not one more minute each time.
KILL_GROWTH = 2.0
#: A TIMEOUT run within this share of its limit hit it (a DEADLINE kill may come earlier).
HIT_SHARE = 0.99
#: A kill over this many times the longest completed run like it is out of line (a hung run,
#: or another job under the same name: 30,000,000 s beside runs of at most 89 s had proposed
#: 694 days): said, not obeyed. A raise above a kill goes no higher than this many times that
#: run either.
OUT_OF_LINE = 10.0
#: Given no request, a proposal goes no higher than this many times the longest completed run
#: of the user's jobs like it (of this name, else all): the model's walltime for a job
#: without the request it learned from had no bound (s39 tester C9: 449 days for a user whose
#: longest run was 1.5 days; each of 13 Eagle users got 296.8 times their longest run).
UNREQUESTED_GROWTH = 2.0
#: No raise above a kill asks more, and a kill beyond it is out of line, whatever the runs:
#: the longest time a record may hold (a year).
MOST_EVER_S = MAX_SECONDS


@dataclass
class Kills:
    """The user's jobs like this one killed at their time limit (TIMEOUT) by the submit time.

    Attributes:
        n: how many.
        limit_s: the longest limit that killed one (s).
        run_s: the longest such run (s): the job needs more than this.
        whose: the jobs, as the lines name them ("named 'x'", or "with this request").
        n_done: the user's completed jobs like this one (the same jobs, not killed).
        longest_done_s: the longest of their runs (s); None when there are none.
        n_any: the user's completed jobs of any kind.
        longest_any_s: the longest of their runs (s); None when there are none.
        proposed_s: the proposal before the kills were heeded (s; set by :func:`heed_kills`).
        n_within: of the ``n_done`` completed jobs, how many ran within the request, or,
            given none, within the proposal (None: not measured).
        kill_ranks: where each kill stands among those jobs and the kills, newest first by
            end time (0: the newest).
    """

    n: int
    limit_s: float
    run_s: float
    whose: str
    n_done: int = 0
    longest_done_s: float | None = None
    n_any: int = 0
    longest_any_s: float | None = None
    proposed_s: float | None = None
    n_within: int | None = None
    kill_ranks: tuple[int, ...] = ()

    def held_most(self, quantile: float) -> bool:
        """Whether the request held at least ``quantile`` of the user's jobs like these, the
        kills counted as runs past it, on enough of them for that share to be seen at all
        (:func:`enough_jobs`), and the newest of them were not killed too often
        (:meth:`recent_kills`): the kills are then the few a walltime is meant to miss, not a
        sign that the request is short (s45 tester C1: 3 kills beside 2,790 runs within the
        request were "will likely be killed too; ask for about 2x")."""
        n = self.n + self.n_done
        return (self.n_within is not None and n >= enough_jobs(quantile)
                and self.n_within >= quantile * n and self.recent_kills(quantile) is None)

    def recent_kills(self, quantile: float) -> tuple[int, int] | None:
        """``(kills, jobs)``: the most newest jobs like these (up to :func:`enough_jobs`)
        among which so many kills show the request holds less than ``quantile`` of them now
        (:func:`shown_short`); None where none do. Runs grow: 100 runs within the request,
        then the user's 5 newest killed, had said the request "stands" (s45 tester F5)."""
        newest = sorted(r for r in self.kill_ranks if r < enough_jobs(quantile))
        shown = [(k + 1, r + 1) for k, r in enumerate(newest)
                 if shown_short(k + 1, r + 1, quantile)]
        return shown[-1] if shown else None

    def judged_by_s(self) -> float | None:
        """The run the kills are judged by (s): the longest completed run like them; without
        one, the longer of the user's longest completed run of any kind and the proposal (a
        kill with no completed like-run had proposed 694 days); None without either."""
        if self.longest_done_s:
            return self.longest_done_s
        return max(self.longest_any_s or 0.0, self.proposed_s or 0.0) or None

    def most_s(self) -> float:
        """The most a raise above the kills may ask (s): ``OUT_OF_LINE`` times
        :meth:`judged_by_s`, never over :data:`MOST_EVER_S`."""
        judged = self.judged_by_s()
        return min(OUT_OF_LINE * judged, MOST_EVER_S) if judged else MOST_EVER_S

    def out_of_line(self) -> bool:
        """Whether the kills are beyond :meth:`most_s` (far beyond every completed run like
        them, or beyond a year)."""
        return self.run_s > self.most_s() * (1 + 1e-9)

    def above(self) -> float:
        """A walltime above every kill (s): ``KILL_GROWTH`` times the longest, held to
        :meth:`most_s` (above the kill still, as the kill is not out of line)."""
        return min(KILL_GROWTH * self.run_s, self.most_s())

    def held_to_runs(self) -> bool:
        """Whether :meth:`most_s`, not ``KILL_GROWTH``, set :meth:`above`."""
        return self.above() < KILL_GROWTH * self.run_s * (1 - 1e-9)

    def jobs(self) -> str:
        """The killed jobs as a line names them ("your 2 jobs named 'x'")."""
        return f"your {self.n} job{'s' if self.n != 1 else ''} {self.whose}"

    def ignored_line(self) -> str:
        """The line saying these kills were out of line and not obeyed."""
        return (f"walltime: ignored {self.jobs()} killed at {self.limit_s:.0f} s (TIMEOUT): "
                f"over {self.bound_words()}, more likely a hung run or another job than what "
                "this one needs; give --time-limit if it does need that long")

    def bound_words(self) -> str:
        """:meth:`most_s` as a line says it ("10 times the longest of ...")."""
        judged = self.judged_by_s()
        if not judged or OUT_OF_LINE * judged > MOST_EVER_S:
            return f"{MOST_EVER_S / 86400:.0f} days, the longest time a job record may hold"
        return f"{OUT_OF_LINE:.0f} times {self.done_words()}"

    def done_words(self) -> str:
        """The run they are judged by (:meth:`judged_by_s`), as a line says it."""
        if self.longest_done_s:
            return (f"the longest of your {self.n_done} completed "
                    f"job{'s' if self.n_done != 1 else ''} like it ({self.longest_done_s:.0f} s)")
        if (self.longest_any_s or 0.0) >= (self.proposed_s or 0.0):
            return (f"the longest of your {self.n_any} completed "
                    f"job{'s' if self.n_any != 1 else ''} of any kind "
                    f"({self.longest_any_s:.0f} s; none like it completed)")
        return f"the proposal of {self.proposed_s:.0f} s (none of your jobs like it completed)"


def _numbers(hist: pd.DataFrame, col: str) -> np.ndarray:
    if col not in hist:
        return np.full(len(hist), np.nan)
    return pd.to_numeric(hist[col], errors="coerce").to_numpy(dtype=float)


def _equals(hist: pd.DataFrame, col: str, value) -> np.ndarray:
    """Rows whose ``col`` is ``value`` (all rows when ``value`` is None: not asked)."""
    if value is None:
        return np.ones(len(hist), bool)
    if col not in hist:
        return np.zeros(len(hist), bool)
    if isinstance(value, str):
        return (hist[col].astype("string") == value).fillna(False).to_numpy()
    return np.isclose(_numbers(hist, col), float(value))


def same_request(hist: pd.DataFrame, time_limit_s, procs, partition) -> np.ndarray:
    """Rows that asked what the job asks (time limit, processors, partition; a part not given
    matches any); none when none is given (nothing to compare)."""
    if time_limit_s is None and procs is None and partition is None:
        return np.zeros(len(hist), bool)
    return (_equals(hist, "time_limit_s", time_limit_s) & _equals(hist, "req_procs", procs)
            & _equals(hist, "partition", partition))


def like_rows(hist: pd.DataFrame, users: np.ndarray, done: np.ndarray, time_limit_s, procs,
              partition) -> tuple[np.ndarray, str]:
    """The user's rows (``users``) like the job, and how the lines name them: those with this
    request; where none of the user's completed jobs (``done``) asked it -- other processors,
    another partition, or a history that records no processor count (no ReqCPUS) -- those
    with this time limit. The coverage and the kills both read these rows, so a job counted
    as like this one for the one is like it for the other."""
    like = users & same_request(hist, time_limit_s, procs, partition)
    if (time_limit_s and not np.any(like & done)
            and (procs is not None or partition is not None)):
        return users & same_request(hist, time_limit_s, None, None), "with this time limit"
    return like, "with this request"


def request_words(time_limit_s, procs, partition) -> str:
    """The request as a line says it ("60 s, 2 processors and partition 'debug'")."""
    parts = [f"{time_limit_s:.0f} s" if time_limit_s else "",
             f"{procs} processor{'s' if procs != 1 else ''}" if procs else "",
             f"partition {partition!r}" if partition else ""]
    parts = [p for p in parts if p]
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts \
        else "this request"


def new_in_request(hist: pd.DataFrame, mine: np.ndarray, time_limit_s, procs,
                   partition) -> str:
    """What of a request none of the user's finished jobs ``mine`` asked for, in words, for a
    request the model found new to the user. A part not given (``procs`` None) is no part of
    any finished job's request: where the given parts alone match some, what is new is what
    was left out, said so ("7200 s and partition '1' with no processor count"), not the given
    parts 105 of the user's jobs had asked for (s37 tester P9)."""
    given = request_words(time_limit_s, procs, partition)
    left_out = [words for value, words in ((time_limit_s, "time limit"),
                                           (procs, "processor count"),
                                           (partition, "partition")) if value is None]
    if not left_out or not np.any(mine & same_request(hist, time_limit_s, procs, partition)):
        return given
    return (f"{given} with no {' or '.join(left_out)} (give the job's "
            f"{' and '.join(left_out)} to compare it with your jobs)")


def enough_jobs(quantile: float) -> int:
    """Fewest jobs for a share ``quantile`` of them to be seen at all (``1 / (1 - q)``)."""
    return int(np.ceil(1.0 / (1.0 - quantile) - 1e-9))


def shown_short(n_over: int, n: int, quantile: float, level: float = 0.05) -> bool:
    """Whether ``n_over`` of ``n`` runs past a walltime show it covers less than ``quantile``
    of such runs, on fewer runs than :func:`enough_jobs` too: so many over it would be
    unlikely (below ``level``) if it did (8 of a user's 11 jobs with a request ran past a
    58-s proposal said to cover 95 %: s39 tester C2)."""
    if n_over <= 0:
        return False
    from scipy.stats import binom

    return bool(binom.sf(n_over - 1, n, 1.0 - quantile) < level)


def raise_to_cover(proposal, runs: np.ndarray, time_limit_s: float | None) -> None:
    """Raise ``proposal`` (a :class:`~hpcds1mpi.decide.walltime.WalltimeProposal`) where the
    user's finished jobs ``runs`` (s; those of this name, or all of them) show it covers less
    than its ``quantile`` of them: the model describes the job by its request, and a request
    new to the history (the layout ``recommend`` picked, a partition the history never names)
    or none at all gives it nothing of this job's own to go on. Raised only on enough of them
    for that quantile to be seen at all (:func:`enough_jobs`), or where so many ran past it
    that it cannot cover that quantile (:func:`shown_short`)."""
    enough = len(runs) >= enough_jobs(proposal.quantile)
    covered = np.sum(runs <= proposal.time_s * (1 + 1e-9))
    short = (enough and covered < proposal.quantile * len(runs)) or shown_short(
        len(runs) - int(covered), len(runs), proposal.quantile)
    if short and proposal.tight:
        floor = float(np.quantile(runs, proposal.quantile, method="higher"))
        proposal.model_s = proposal.time_s
        proposal.uncapped_s = max(proposal.uncapped_s or 0.0, floor)
        proposal.time_s = min(floor, float(time_limit_s)) if time_limit_s else floor


def hold_to_runs(proposal, runs: np.ndarray, time_limit_s: float | None,
                 partition_limit_s: float | None) -> None:
    """Hold ``proposal`` (a :class:`~hpcds1mpi.decide.walltime.WalltimeProposal`) given no
    request to :data:`UNREQUESTED_GROWTH` times the longest of the user's completed ``runs``
    like it (s), never over a year (what ``--time-limit`` takes) or the partition's limit; a
    given request is the user's own bound, and only the advice above it is held so
    (``held_to_s``: never a ``--time-limit`` the command refuses)."""
    most, words = MOST_EVER_S, f"{MOST_EVER_S / 86400:.0f} days, the longest time a job may ask"
    if len(runs) and UNREQUESTED_GROWTH * float(np.max(runs)) < most:
        most = UNREQUESTED_GROWTH * float(np.max(runs))
        words = (f"{UNREQUESTED_GROWTH:g} times the longest of your {len(runs)} completed "
                 f"job{'s' if len(runs) != 1 else ''} like it ({float(np.max(runs)):.0f} s)")
    if partition_limit_s and partition_limit_s < most:
        most, words = float(partition_limit_s), "the partition's limit"
    if (proposal.uncapped_s or 0.0) > most * (1 + 1e-9) or (
            not time_limit_s and proposal.time_s > most * (1 + 1e-9)):
        proposal.held_to_s, proposal.held_words = most, words
    if not time_limit_s:
        proposal.time_s = min(proposal.time_s, most)
        proposal.uncapped_s = min(proposal.uncapped_s or most, most)


def killed_at_limit(hist: pd.DataFrame, ended: np.ndarray, done: np.ndarray,
                    name_rows: np.ndarray, like: np.ndarray, name: str | None,
                    request_given: bool, like_what: str = "with this request",
                    request_s: float | None = None) -> Kills | None:
    """The kills among the user's jobs ended by the submit time (``ended``; ``done``: those
    completed) like this one: of this name (``name_rows``) where the history knows it, else
    those ``like`` it (:func:`like_rows`, named ``like_what``) -- where no request was given,
    at a time limit that the user's completed jobs like it asked for (none such: no kill is
    like it). ``request_s``: the request the completed ones are measured against, or, given
    none, the proposal (``Kills.n_within``)."""
    status = hist["status"].astype("string").str.lower() if "status" in hist \
        else pd.Series(pd.NA, index=hist.index, dtype="string")
    raw = hist["state_raw"].astype("string").str.upper() if "state_raw" in hist \
        else pd.Series(pd.NA, index=hist.index, dtype="string")
    timeout = ((status == "timeout") | raw.str.startswith("TIMEOUT")).fillna(False).to_numpy()
    limit, run = _numbers(hist, "time_limit_s"), _numbers(hist, "runtime_s")
    hit = timeout & (limit > 0) & ~(run < HIT_SHARE * limit)  # a missing run: killed at limit
    named = name is not None and bool(np.any(ended & name_rows))
    like = name_rows if named else like
    rows = ended & hit & like
    if not named and not request_given:
        # "Any time limit" is no likeness: a kill at a limit none of the completed jobs like
        # it asked for is another job's.
        rows &= np.isin(limit, limit[done & like & (limit > 0)])
    if not rows.any():
        return None
    runs = np.fmax(run[rows], limit[rows])  # the kill came at the limit, or after it
    whose = (f"named {name!r}" if named else like_what if request_given
             else "with the time limit your completed jobs like it asked for")
    done_like = done & like & ~np.isnan(run)
    done_runs = run[done_like]
    any_runs = run[done & ~np.isnan(run)]  # what bounds a kill no completed like-run does
    return Kills(int(rows.sum()), float(np.max(limit[rows])), float(np.max(runs)), whose,
                 n_done=len(done_runs),
                 longest_done_s=float(np.max(done_runs)) if len(done_runs) else None,
                 n_any=len(any_runs),
                 longest_any_s=float(np.max(any_runs)) if len(any_runs) else None,
                 n_within=int(np.sum(done_runs <= request_s * (1 + 1e-9))) if request_s
                 else None, kill_ranks=_newest_first(hist, done_like | rows, rows))


def _newest_first(hist: pd.DataFrame, jobs: np.ndarray, kills: np.ndarray) -> tuple[int, ...]:
    """Where each of ``kills`` stands among ``jobs`` (rows of ``hist``), newest end first
    (0: the newest; a job of no known end last)."""
    from hpcds1mpi.surrogates.submit_features import end_times

    rows = np.flatnonzero(jobs)
    ends = end_times(hist).to_numpy(dtype="datetime64[ns]")[rows].astype(np.int64)  # NaT: least
    order = rows[np.argsort(ends, kind="stable")[::-1]]
    return tuple(int(r) for r in np.flatnonzero(kills[order]))


def heed_kills(proposal, kills: Kills | None, time_limit_s: float | None,
               partition_limit_s: float | None) -> None:
    """Raise ``proposal`` (a :class:`~hpcds1mpi.decide.walltime.WalltimeProposal`) above
    ``kills`` (:meth:`Kills.above`, within the request and the partition's limit), or keep a
    request at or under them, or ignore kills out of line with the completed runs like them;
    each said (:meth:`~hpcds1mpi.decide.walltime.WalltimeProposal.lines`)."""
    if kills is None:
        return
    kills = replace(kills, proposed_s=proposal.time_s)  # judges kills no like-run can
    if proposal.time_s > kills.run_s * (1 + 1e-9):
        # Above the kills already: said, with what they would need (s37 tester J11: given no
        # request the same job got 637 s and no word of 3 kills after 630 s, given its 600-s
        # request "ask for about 1260 s").
        if not kills.out_of_line():
            proposal.killed_below = kills
        return
    if kills.out_of_line():  # obeyed, one hung run had proposed 694 days
        proposal.killed_ignored = kills
        return
    proposal.killed = kills
    if not time_limit_s and kills.held_most(proposal.quantile):
        # Given no request, the proposal held the share it is meant to of the user's like
        # jobs, the kills counted past it: they are the few it is meant to miss, said, not
        # doubled (as a request is kept so: s45 tester C1, F5; s46).
        return
    if time_limit_s and time_limit_s <= kills.run_s * (1 + 1e-9):
        # The user's own request, at or under a kill: going lower only kills sooner.
        proposal.time_s, proposal.tight = float(time_limit_s), False
        return
    proposal.killed_from_s = proposal.time_s
    proposal.time_s = min(kills.above(), float(time_limit_s)) if time_limit_s \
        else kills.above()
    if partition_limit_s and partition_limit_s < proposal.time_s:
        proposal.time_s, proposal.partition_limit_s = float(partition_limit_s), partition_limit_s


def default_partition(hist: pd.DataFrame, mine: np.ndarray, named: np.ndarray) -> str | None:
    """The partition a job that names none runs in, where the user's finished jobs of this
    name (else all of them) ran in one alone: the scheduler's default took them too, or the
    user keeps to it; None where they ran in several or the log names none."""
    if "partition" not in hist:
        return None
    for rows in (named, mine):
        if rows.any():
            parts = hist.loc[rows, "partition"].astype("string").dropna().unique()
            return str(parts[0]) if len(parts) == 1 and str(parts[0]) else None
    return None


def too_thin(hist: pd.DataFrame, done: np.ndarray, completed: np.ndarray,
             end: pd.Series, need: int) -> str:
    """Why a history with fewer than ``need`` usable jobs (``done``: completed with a run
    time, ended by the submit time) cannot teach run times, and what to do."""
    no_end = int(np.sum(completed & end.isna().to_numpy()))
    other = int(np.sum(~completed))
    why = [f"{no_end} completed jobs have no start or end time, so none is known to have "
           "ended before this job (ingest a log that records Start and End)" if no_end else "",
           f"{other} jobs did not complete (failed, killed, cancelled) and do not count"
           if other else ""]
    return (f"cannot propose: the history has {int(done.sum())} completed jobs with a known "
            f"end, need at least {need} to learn run times"
            + "".join(f"; {w}" for w in why if w) + "; give a longer history of completed jobs")


#: A history whose jobs record no requested time (an SWF log with field 9 -1 on every line):
#: the model learned from none, and a job's request cannot be judged against it (s38 C9).
NO_REQUESTS = ("the history records no requested time (no job has a time limit: in an SWF log, "
               "field 9 is -1 on every line)")


def records_requests(hist: pd.DataFrame) -> bool:
    """Whether any job of ``hist`` has a requested time (``time_limit_s`` > 0)."""
    return bool((_numbers(hist, "time_limit_s") > 0).any())


def no_requests_case(proposal) -> str:
    """Why the walltime is what it is, for a history with no requested time (``NO_REQUESTS``):
    the request kept, or the model's walltime learnt from run times alone."""
    pct = f"{100 * proposal.quantile:g}"
    if proposal.request_s and proposal.time_s >= proposal.request_s * (1 - 1e-9):
        return (f"kept your request: {NO_REQUESTS}, so a request cannot be judged against it; "
                f"the model's {pct} % walltime would be {proposal.uncapped_s:.0f} s")
    return (f"{NO_REQUESTS}: the model learned from run times alone, meant to cover about "
            f"{pct} % of such jobs")
