"""A program's own time read in whole seconds: a coarse measurement, said once per sweep.

MrBayes's "Analysis completed in 1 seconds" read by ``--time-regex`` was stored as
runtime_s 1.0 with noise 0.0 for a launch of 1.66 s of wall time, without a word (s35 tester
A4): a timer of 1-s resolution measures a run under :data:`FINE_S` seconds to within 10 % or
worse, and its repeats agree because they are rounded alike. The note says so with the ways
out: a larger size, a finer timer's regex, or the launch's wall time.
"""

from __future__ import annotations

import re

#: A time of whole seconds: digits only.
WHOLE = re.compile(r"^\s*\d+\s*$")
#: Below this many seconds a 1-s timer's rounding is 10 % or more of the time.
FINE_S = 10


def coarse_note(text: str | None, wall_s: float, regex: str) -> str:
    """The note for a time ``text`` (as ``regex`` captured it) of whole seconds under
    :data:`FINE_S`, read from a launch of ``wall_s`` seconds; "" for any other."""
    if text is None or not WHOLE.match(text) or int(text) >= FINE_S:
        return ""
    return (f"note: {regex} read whole seconds ({text.strip()} s of a launch of {wall_s:.2f} s "
            f"wall time): the program's timer has 1-s resolution, so runs under {FINE_S} s are "
            "measured coarsely and their repeats agree by rounding; give a larger size, a "
            "--time-regex for a finer timer, or drop --time-regex to record the wall time")
