"""Why a walltime cannot be proposed for a user, in words that tell the user what their history
holds (:mod:`hpcds1mpi.decide.walltime`): a user the history does not name (and how it names
its users), a user none of whose jobs completed (what became of them), one with a single
completed job, and the user's kills at their limit, which warn even without a proposal.

"No history" had been said alike for a user absent from the log, one in the wrong form for it
(a login name against an SWF log's numbers) and one whose 82 jobs had all failed or 20 were
all killed at their limit, and the script then kept the very limit that had killed them all
(s39 tester C1, C3, C5).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace

import numpy as np
import pandas as pd

#: A status as the reason counts it ("3 failed, 2 killed at their time limit").
_STATUS_WORDS = {"failed": "failed", "timeout": "killed at their time limit (TIMEOUT)",
                 "oom": "out of memory", "cancelled": "cancelled", "crashed": "crashed",
                 "wrong": "wrong results", "interrupted": "interrupted",
                 "unsupported": "refused"}
#: How many of the history's user names a reason shows.
_SHOWN = 3


def ended_otherwise(hist: pd.DataFrame, rows: np.ndarray) -> str:
    """What became of the jobs ``rows`` (ended, not counted as completed), counted by status
    ("20 killed at their time limit (TIMEOUT), 2 failed"); "" for none."""
    if not rows.any():
        return ""
    status = (hist["status"].astype("string").str.lower() if "status" in hist
              else pd.Series(pd.NA, index=hist.index, dtype="string"))[rows]
    words = status.map(lambda s: _STATUS_WORDS.get(s, "completed with no run time")
                       if isinstance(s, str) else "of no known status")
    counts = words.value_counts()
    run = pd.to_numeric(hist["runtime_s"], errors="coerce")[rows]
    longest = run[(words == _STATUS_WORDS["timeout"]).to_numpy()].max()
    return ", ".join(f"{n} {what}" + (f" after up to {longest:.0f} s"
                                      if what == _STATUS_WORDS["timeout"] and longest > 0
                                      else "") for what, n in counts.items())


def no_user(hist: pd.DataFrame, user: str) -> str:
    """The reason for a user the history does not name: how it names its users (a few of
    them, the nearest to ``user`` first), and to give the user in that form."""
    names = hist["user"].dropna().astype(str) if "user" in hist else pd.Series([], dtype=str)
    names = names[names.str.strip() != ""]
    if names.empty:
        return (f"no user {user!r} in this history: cannot propose; it names no user (give a "
                "log that records who ran each job)")
    counts = names.value_counts()
    near = difflib.get_close_matches(user, list(counts.index), n=1, cutoff=0.6)
    if not near and user.isdigit():  # a bare number for a name that holds it ('user_0171')
        near = [n for n in counts.index
                if re.sub(r"\D", "", n).lstrip("0") == user.lstrip("0")][:1]
    shown = near + [n for n in counts.index[:_SHOWN + 1] if n not in near]
    shown = shown[:_SHOWN]
    form = " (numbers, as in SWF logs)" if all(n.isdigit() for n in counts.index) else ""
    near_words = f"; nearest: {near[0]!r}" if near else ""
    return (f"no user {user!r} in this history: cannot propose; its {len(counts)} users are "
            f"named like "
            f"{', '.join(repr(n) for n in shown)}{form}{near_words}: give the user "
            "(--user) in that form")


def user_reason(hist: pd.DataFrame, user: str, users: np.ndarray, ended: np.ndarray,
                mine: np.ndarray, too_few: str) -> str:
    """Why there is no proposal for ``user`` (``users``: their rows; ``ended``: rows ended by
    the submit time; ``mine``: their completed jobs with a run time ended by then, fewer than
    needed; ``too_few``: the reason for a user with some of those, but too few)."""
    other = ended_otherwise(hist, users & ended & ~mine)
    if mine.any():
        return too_few + (f"; the user's other jobs: {other}" if other else "")
    if not users.any():
        return no_user(hist, user)
    n_ended = int(np.sum(users & ended))
    if not n_ended:
        return (f"none of the {int(users.sum())} jobs of user {user!r} in the history ended "
                "by the submit time: cannot propose")
    return (f"the history has {n_ended} job{'s' if n_ended != 1 else ''} of user {user!r}, "
            f"none completed: {other}; cannot propose from runs that did not finish")


def unproposed_kills(hist: pd.DataFrame, ended_mine: np.ndarray, done_mine: np.ndarray,
                     name_rows: np.ndarray, like_rows: np.ndarray, name: str | None,
                     time_limit_s: float | None, procs, partition,
                     like_what: str = "with this request"):
    """The user's jobs like this one killed at their limit, for a user with too few completed
    jobs to propose from (:class:`~hpcds1mpi.decide.walltime_evidence.Kills`; None: none):
    of this name, else with this request -- given no time limit, with its processors and
    partition at any limit (no completed job says which limit is like it)."""
    from hpcds1mpi.decide.walltime_evidence import killed_at_limit, request_words

    kills = killed_at_limit(hist, ended_mine, done_mine, name_rows, like_rows, name,
                            request_given=True, like_what=like_what)
    if kills is None or time_limit_s or kills.whose.startswith("named"):
        return kills
    return replace(kills, whose=f"with {request_words(None, procs, partition)}")
