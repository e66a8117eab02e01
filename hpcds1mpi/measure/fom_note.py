"""The sweep's one note on a ``--fom-regex`` that read no figure of merit.

``--time-regex`` and ``--ranks-regex`` misses fail the run, named with the nearest line; the
figure of merit is optional, so a launch whose ``--fom-regex`` matched nothing, or matched a
text that is no number ("5.0.11"), is kept with an empty ``fom``: said once a sweep (by
:meth:`~hpcds1mpi.measure.readings.Readings.note_once`), where a typo in the regex had lost
the figure of merit of the whole sweep in silence (s40 tester A10).
"""

from __future__ import annotations

import math


def fom_note(pattern, found: dict) -> str:
    """Why a launch that ran has no figure of merit: ``pattern`` (the compiled
    ``--fom-regex``) matched nothing in its output (with the line nearest it,
    ``found["fom_nearest"]``) or matched ``found["fom_text"]``, no number; "" when it read
    one, or none was asked."""
    if pattern is None or math.isfinite(found.get("fom", math.nan)):
        return ""
    from hpcds1mpi.measure.printable import printable

    regex, text = f"--fom-regex '{pattern.pattern}'", found.get("fom_text")
    if text is None:
        near = found.get("fom_nearest")
        said = f"{regex} matched nothing in a launch's output" + (
            f" (the line nearest it: {near!r})" if near else "")
    else:
        said = f"{regex} matched {printable(text.strip()[:40])!r}, not a number"
    return (f"note: {said}: the runs' figure of merit is left empty; fix --fom-regex (its first "
            "group the number) and sweep into a new --out")
