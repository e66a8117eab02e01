"""The sweep's notes on a ``--fom-regex`` that read no figure of merit.

``--time-regex`` and ``--ranks-regex`` misses fail the run, named with the nearest line; the
figure of merit is optional, so a launch whose ``--fom-regex`` matched nothing, or matched a
text that is no number ("5.0.11"), is kept with an empty ``fom``: said once a sweep (by
:meth:`~hpcds1mpi.measure.readings.Readings.note_once`), where a typo in the regex had lost
the figure of merit of the whole sweep in silence (s40 tester A10).

A program may print its figure of merit in only some launches (Gerris's timing line, s43
tester G3): a run's ``fom`` is the median of its launches that printed one, so a miss loses
nothing where the run's other launches read it. :class:`FomLaunches` counts every launch's
reading, and :func:`fom_summary`, said at the sweep's end, tells how many launches printed no
match and which runs were left without a figure; only where no launch read one does it say to
fix the regex. The first miss is said as it happens (a typo shows at the first launch), as
that launch's, not as the sweep's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: The most configurations named in the summary.
NAMED = 4


@dataclass
class FomLaunches:
    """Per run label, [launches that read a figure, launches that did not], of the launches
    its row's ``fom`` is the median of (warm-ups left out); ``read`` / ``missed``: every launch,
    warm-ups too; ``no_number``: of the missed, those whose regex matched a text that is no
    number (the program printed the line: the regex's group is to fix, s43 review R9)."""

    runs: dict = field(default_factory=dict)
    read: int = 0
    missed: int = 0
    no_number: int = 0

    def add(self, run: str, counted: bool, has_fom: bool, found: dict | None = None) -> None:
        """One ``ok`` launch of ``run``; ``counted``: not a warm-up; ``found``: its readings."""
        self.read, self.missed = self.read + has_fom, self.missed + (not has_fom)
        self.no_number += not has_fom and (found or {}).get("fom_text") is not None
        if counted:
            self.runs.setdefault(run, [0, 0])[0 if has_fom else 1] += 1


def fom_note(pattern, found: dict, run: str = "", launches: FomLaunches | None = None) -> str:
    """Why the launch of ``run`` that ran has no figure of merit: ``pattern`` (the compiled
    ``--fom-regex``) matched nothing in its output (with the line nearest it,
    ``found["fom_nearest"]``) or matched ``found["fom_text"]``, no number; "" when it read
    one, or none was asked, or it matched nothing where an earlier launch of the sweep
    (``launches``) read one (the sweep's end says it: :func:`fom_summary`)."""
    if pattern is None or math.isfinite(found.get("fom", math.nan)):
        return ""
    from hpcds1mpi.measure.printable import printable

    regex, text = f"--fom-regex '{pattern.pattern}'", found.get("fom_text")
    where = f" of {run}" if run else ""
    if text is not None:
        return (f"note: {regex} matched {printable(text.strip()[:40])!r}, not a number, in a "
                f"launch{where}: that launch has no figure of merit; fix --fom-regex (its "
                "first group the number) and sweep into a new --out")
    if launches is not None and launches.read:
        return ""
    near = found.get("fom_nearest")
    return (f"note: {regex} matched nothing in the output of a launch{where}"
            + (f" (the line nearest it: {near!r})" if near else "")
            + ": that launch has no figure of merit; if no launch prints a match, fix "
            "--fom-regex (its first group the number) and sweep into a new --out (the "
            "sweep's end says how many launches printed none)")


def fom_summary(pattern, launches: FomLaunches | None) -> str:
    """The sweep's closing line on the launches whose ``--fom-regex`` read no number; ""
    when every launch read one, or none was asked."""
    if pattern is None or launches is None or not launches.missed:
        return ""
    regex, total = f"--fom-regex '{pattern.pattern}'", launches.read + launches.missed
    if not launches.read:
        return (f"note: {regex} read a number in none of the sweep's {total} launches: every "
                "run's figure of merit is left empty; fix --fom-regex (its first group the "
                "number) and sweep into a new --out")
    short = {run: n for run, n in launches.runs.items() if n[1]}
    named = "; ".join(f"{run}: {n[1]} of {sum(n)}" for run, n in list(short.items())[:NAMED])
    more = f"; and {len(short) - NAMED} more" if len(short) > NAMED else ""
    empty = [run for run, n in short.items() if not n[0]]
    said = f"note: {regex} read no number in {launches.missed} of the sweep's {total} launches"
    said += f" ({named}{more})" if named else " (warm-ups only)"
    kept = ("" if len(empty) == len(short) else
            "a run's figure of merit is the median of its launches that printed one")
    if empty:
        shown = "; ".join(empty[:NAMED]) + (f"; and {len(empty) - NAMED} more"
                                            if len(empty) > NAMED else "")
        gone = (f"{len(empty)} run{'s' if len(empty) > 1 else ''} printed none and "
                f"{'have' if len(empty) > 1 else 'has'} no figure of merit ({shown})")
        kept = f"{kept}; {gone}" if kept else gone
    else:
        kept += ", so every run has one"
    if launches.no_number:  # the line was printed: the regex's group read no number there
        why = (f"{launches.no_number} of them matched a text that is no number: fix "
               "--fom-regex's first group (the number alone)")
        if launches.no_number < launches.missed:
            why += "; the others printed no match"
        return f"{said}: {kept}; {why}"
    return (f"{said}: {kept}; the regex reads the others, so the program did not print it "
            "every time")
