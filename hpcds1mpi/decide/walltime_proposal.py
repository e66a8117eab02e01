"""A proposed walltime (:class:`WalltimeProposal`) and what ``recommend`` says of it: the
``--time`` it asks for, why (tight, capped at the request, raised above kills or to cover the
user's own jobs, the request kept), how sure (measured on held-out jobs and on the user's own),
and the warnings. :func:`~hpcds1mpi.decide.walltime.propose_walltime` makes one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from hpcds1mpi.decide.walltime_evidence import Kills, enough_jobs, no_requests_case
from hpcds1mpi.decide.walltime_stopped import Stopped
from hpcds1mpi.launch.directives import format_pbs_walltime, format_slurm_time, \
    given_time_limit_s


#: Why a request new to the user is kept ({what}: the request, :func:`request_words`).
NOVEL = ("none of your finished jobs asked for {what}, and the history has too few such new "
         "requests to tell how long they run")


def time_limit_text(seconds: float) -> str:
    """``seconds`` as ``--time`` and ``recommend --time-limit`` read it (``[D-]HH:MM:SS``,
    whole minutes rounded up): a bare number is minutes to both (s35 tester T5)."""
    return format_slurm_time(given_time_limit_s(seconds))


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
        coverage: the share of the history's newest ``n_checked`` completed jobs the walltime
            covered: the jobs its tight share and margin were chosen on, so the choice's own
            score, not a check on other jobs; None when too few to measure.
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
        held_to_s: the bound the model's walltime was held to, given no request (and the
            advice above a request), where it held it
            (:func:`~hpcds1mpi.decide.walltime_evidence.hold_to_runs`); None: not held.
        held_words: that bound in words ("2 times the longest of your 15 completed jobs like
            it (130861 s)").
        stopped: the user's jobs like this one stopped while still running (preempted, node
            failed), each counted as a run of at least its elapsed time where the proposal
            was raised to cover the user's jobs, and said
            (:class:`~hpcds1mpi.decide.walltime_stopped.Stopped`); None: none.
        chosen_to: the share of the ``n_checked`` jobs the choice had to cover
            (``coverage`` is at least it where the choice could meet it); None when not
            measured.
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
    held_to_s: float | None = None
    held_words: str = ""
    stopped: Stopped | None = None
    chosen_to: float | None = None  # last: the fields above are also given by position

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
            return [f"walltime: {self.reason}"] + self._unproposed_kill_lines()
        checked = self.coverage is not None
        pct = _percent(self.quantile)
        # The model is checked on completed jobs alone (a killed job's run time is unknown):
        # said so, as 5 killed among the newest 10 were "100 %" (s45 tester F5).
        # The share is the one the walltime was chosen by, on these very jobs: said as such,
        # not as a check (s48 tester P11).
        sure = (f"chosen to cover >= {_percent(self.chosen_to)} % of the newest "
                f"{self.n_checked} completed history jobs: {100 * self.coverage:.1f} % of them "
                "were (not a check on other jobs)" if checked and self.chosen_to is not None
                else f"{100 * self.coverage:.1f} % of the newest {self.n_checked} completed "
                "history jobs were covered" if checked
                else "not checked on held-out jobs (too few history jobs)")
        capped = ""
        if self.request_s:
            capped = (", = the request: capped" if self.time_s >= self.request_s * (1 - 1e-9)
                      else f", under the request of {self.request_s:.0f} s")
        if not self.request_s and self.held_to_s and self.time_s >= self.held_to_s * (1 - 1e-9):
            capped = f", held to {self.held_words}"
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
        elif kills is not None and kills.held_most(self.quantile):
            case = (f"{'kept your request' if self.request_s else 'not raised for kills'}: "
                    f"{kills.n_within} of your {kills.n + kills.n_done} jobs "
                    f"{kills.whose} ran within it, {kills.n} killed at {kills.limit_s:.0f} s "
                    "(TIMEOUT)")
        elif kills is not None:
            case = (f"kept your request, though {kills.jobs()} "
                    f"{'was' if kills.n == 1 else 'were'} killed at {kills.limit_s:.0f} s "
                    "(TIMEOUT)")
        elif self.no_requests:
            case = no_requests_case(self)
        elif self.tight and self.short_request() and self.own_jobs_fit():
            # The model's walltime for jobs like it; the user's own jobs say the request holds.
            case = (f"your request: your own jobs ran within it, where the model, from the "
                    f"history's jobs like it, would ask {self.advised_s():.0f} s")
        elif self.tight and self.short_request():
            walltime = (f"the {pct} % walltime of {self.uncapped_s:.0f} s" if not self.held_to_s
                        else f"the model's walltime, {self.advised_s():.0f} s held to "
                        f"{self.held_words}")
            case = (f"your request is shorter than {walltime}, so fewer jobs like this one "
                    "finish within it")
        elif self.tight and self.model_s is not None:
            whose = (f"your jobs named {self.name!r}" if self.n_name_within is not None else
                     f"your {self.n_like} finished jobs {self.like_what}" if self.like_what else
                     "your finished jobs, all of them alike (a time limit or the job's name "
                     "would tell this job apart)")
            case = f"raised from the model's {self.model_s:.0f} s to cover {pct} % of {whose}"
            if self.stopped is not None:  # counted in that share (walltime_stopped)
                case += (f", {self.stopped.n} stopped while still running counted as runs of "
                         "at least their elapsed time")
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
        limit = given_time_limit_s(self.time_s)  # as the script asks it
        asked = (f"-l walltime={format_pbs_walltime(limit)}" if scheduler == "pbs"
                 else f"--time {self.slurm_time()}")
        # the seconds said are the script's; the proposal's own beside them where they differ
        shown = f"{limit} s{capped}" if abs(limit - self.time_s) < 0.5 else \
            f"{limit} s: the proposed {self.time_s:.0f} s{capped}, rounded up to whole minutes"
        ignored = self.killed_ignored
        counted = kills if kills is not None else self.killed_below
        more = (f"; {counted.n} more killed at their limit" if counted is not None else
                f"; {ignored.n} more killed at their limit, ignored" if ignored else "")
        where = (f"; partition taken as {self.partition_guess!r}, where your jobs ran (the "
                 "job names none)" if self.partition_guess else "")
        lines = [f"walltime: {asked} ({shown}; {case}; {sure})",
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
        if self.stopped is not None:
            lines.append(self.stopped.line())
        if kills is not None and self.partition_limit_s \
                and self.time_s <= kills.run_s * (1 + 1e-9):
            lines.append(f"warning: {kills.jobs()} {'was' if kills.n == 1 else 'were'} "
                         f"killed at {kills.limit_s:.0f} s (TIMEOUT), and the partition allows "
                         f"no more than {self.partition_limit_s:.0f} s: ask a partition with a "
                         "longer limit, or split the job")
        elif kills is not None and self.time_s <= kills.run_s * (1 + 1e-9):
            lines.append(self._kept_under_kills(kills))
        elif (self.request_s and self.point_s and self.point_s > self.request_s
              and not self.own_jobs_fit() and self.advised_s() > self.request_s):
            held = f", held to {self.held_words}" if self.held_to_s else ""
            ask = (f"ask for about {self.advised_s():.0f} s{held} "
                   f"(--time-limit {time_limit_text(self.advised_s())})")
            n, within, what = self._own_jobs()
            if within is not None and within >= n / 2:
                # Most of the user's own jobs ran within it: not "likely killed" (s39 tester
                # C4: said so where 70 of the user's 75 jobs of this name had run within it).
                lines.append(f"warning: {n - within} of your {n} finished {what} ran longer "
                             f"than your request of {self.request_s:.0f} s, and such a run is "
                             f"killed; the model, from the history's jobs like it, would "
                             f"{ask}")
            else:
                lines.append(f"warning: your request of {self.request_s:.0f} s is below the "
                             f"predicted run time of {self.point_s:.0f} s: the job will likely "
                             f"be killed; {ask}")
        return lines

    def _kept_under_kills(self, kills: Kills) -> str:
        """What is said of a request kept at or under the user's like jobs killed at their
        limit, by the share of those jobs it held: the few a walltime is meant to miss, said;
        where most ran within it, how many did not; else the request will likely be killed
        too (s45 tester C1: 3 kills beside 2,790 runs within it were the last)."""
        n, within = kills.n + kills.n_done, kills.n_within
        was = "was" if kills.n == 1 else "were"
        killed = f"killed at {kills.limit_s:.0f} s (TIMEOUT, after up to {kills.run_s:.0f} s)"
        ask = (f"ask for more, about {kills.above():.0f} s "
               f"(--time-limit {time_limit_text(kills.above())})")
        if kills.held_most(self.quantile):
            return (f"walltime: {kills.n} of your {n} jobs {kills.whose} {was} {killed}; "
                    f"{within} ran within it ({_percent(within / n)} %), at least the "
                    f"{_percent(self.quantile)} % a walltime is meant to cover, so "
                    + ("the request stands" if self.request_s else "it is not raised above them"))
        recent = kills.recent_kills(self.quantile) if within is not None else None
        if recent is not None and within >= self.quantile * n:
            # The share held overall, but the newest runs outgrew the request (s45 tester F5).
            newest = ("your newest job" if recent[1] == 1 else
                      f"your {recent[1]} newest jobs" if recent[0] == recent[1] else
                      f"{recent[0]} of your {recent[1]} newest jobs")
            return (f"warning: {newest} {kills.whose} {'was' if recent[0] == 1 else 'were'} "
                    f"{killed}, too many of the newest for the few a "
                    f"{_percent(self.quantile)} % walltime may miss ({within} of your {n} ran "
                    f"within it): a limit of {self.time_s:.0f} s will likely be killed too; "
                    f"{ask}")
        if within is not None and within >= n / 2:
            return (f"warning: {n - within} of your {n} jobs {kills.whose} did not finish "
                    f"within {self.time_s:.0f} s ({kills.n} {killed}), more than the "
                    f"{_percent(1 - self.quantile)} % a {_percent(self.quantile)} % walltime "
                    f"may miss; {ask}")
        return (f"warning: {kills.jobs()} {was} {killed}: a limit of {self.time_s:.0f} s will "
                f"likely be killed too; {ask}")

    def _unproposed_kill_lines(self) -> list[str]:
        """With no proposal, the user's jobs like this one killed at their limit (``killed``):
        the request, at or under them, warned of, as with a proposal (s39 tester C1: a script
        was written with the 1,800-s limit that had killed all 20 of the user's jobs)."""
        kills = self.killed
        if kills is None:
            return []
        was = "was" if kills.n == 1 else "were"
        killed = (f"{kills.jobs()} {was} killed at {kills.limit_s:.0f} s (TIMEOUT, after up "
                  f"to {kills.run_s:.0f} s)")
        ask = f"about {kills.above():.0f} s (--time-limit {time_limit_text(kills.above())})"
        if not self.request_s:
            return [f"warning: {killed}: a job like them needs more than that; ask for {ask}"]
        if self.request_s <= kills.run_s * (1 + 1e-9):
            return [f"warning: {killed}: a limit of {self.request_s:.0f} s will likely be "
                    f"killed too; ask for more, {ask}"]
        return [f"walltime: {killed}: such a job needs more than that, how much is not known; "
                f"your request of {self.request_s:.0f} s is "
                f"{self.request_s - kills.run_s:.0f} s above, and above every kill is {ask}"]

    def advised_s(self) -> float:
        """The walltime a request below it is told to ask for (s): the model's, held to
        ``held_to_s`` (never one ``--time-limit`` refuses, s39 tester C9)."""
        return min(self.uncapped_s or 0.0, self.held_to_s or float("inf"))

    def _own_jobs(self) -> tuple[int, int | None, str]:
        """The user's own jobs measured against the proposal: how many, how many ran within
        it (None: not measured) and which, in words ("jobs named 'x'")."""
        if self.n_name_within is not None:
            return self.n_same_name, self.n_name_within, f"jobs named {self.name!r}"
        what = f"jobs {self.like_what}" if self.like_what else "jobs"
        return self.n_like or self.n_history, self.n_user_within, what

    def own_jobs_fit(self) -> bool:
        """Whether the user's own jobs measured against the proposal (of this name, else like
        it) ran within it in at least ``quantile`` of cases, on enough of them for that share
        to be seen at all: then no request is "too short" (one job is no evidence)."""
        n, within, _ = self._own_jobs()
        return (within is not None and n >= enough_jobs(self.quantile)
                and within >= self.quantile * n)

    def short_request(self) -> bool:
        """Whether the user's request, not the model, set the proposal (it is below the
        walltime the model would propose)."""
        return bool(self.request_s and self.uncapped_s
                    and self.uncapped_s > self.request_s * (1 + 1e-9))
