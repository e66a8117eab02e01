"""A program's own time printed coarsely: said once per sweep, and its noise never stored as 0.

MrBayes's "Analysis completed in 1 seconds" read by ``--time-regex`` was stored as
runtime_s 1.0 with noise 0.0 for a launch of 1.66 s of wall time, without a word (s35 tester
A4). That rule caught whole seconds only: NWChem's ``wall: 0.1s`` (one decimal) was stored as
0.1 s, noise 0.0, for every configuration of launches of 0.12-0.22 s, and recommend answered
"100 ms (100 ms-100 ms), confidence 1.00, auto" (s37 tester G1).

The rule now, for any timer:

* **Its resolution** (:func:`resolution`) is read from the text it printed: one unit of the
  last decimal printed (``0.1`` -> 0.1 s, ``12`` -> 1 s, ``1.25e-01`` -> 0.001 s); where
  :data:`QUANTUM_SEEN` or more values of one configuration all end in zeros past some decimal
  (``1.000000``, ``2.000000``: whole seconds printed with ``%f``), that coarser quantum. Of a
  time in several units, its last field's (a clock's ``00:00:01``: 1 s; s45 tester E2).
* **Coarse** (:func:`is_coarse`) is a resolution over :data:`COARSE_SHARE` (5 %) of the time:
  values printed one tick apart may then be the same within 5 %, and 5 % is what
  recommend's confidence counts as "as good as the best"
  (:data:`~hpcds1mpi.decide.confidence.GOOD_PICK_TOLERANCE`): a timer that cannot resolve
  5 % cannot tell a good pick from a bad one. (A 1-s timer is coarse under 20 s: it was 10 s.)
* **What is done**, whole seconds or not: the note, once per sweep (:func:`coarse_note`),
  and the configuration's ``noise`` stored as the widest spread the printed values allow,
  ``(max - min + resolution) / median`` (:func:`coarse_noise`): repeats that print the same
  tick agree by rounding, not by measurement. ``runtime_s`` stays the program's time (the
  runtime source is one per sweep, recorded in the file's ``launch``); the note says how to
  get the wall time instead.
* **A zero** (MPB's whole-second "0 seconds" at a small size) is a reading under one tick, not
  a failure (s47 tester K1: stored ``failed``, recommend then left out the fastest layout as
  "every run failed"): the launch is ``ok``, its time half the smaller of the timer's
  resolution and the launch's wall time (:func:`below_tick`: the middle of what it may have
  taken), said once per configuration (:func:`zero_note`).
* **A timer that is not coarse** keeps its measured spread, but repeats that all printed one
  value store one tick over their median (:func:`tick_noise`), not 0: they agree to the
  timer's resolution, not exactly (s45 tester B3: MrBayes's 0.23 s, three times, noise 0.0).
"""

from __future__ import annotations

import math
import re

#: A resolution above this share of the time is coarse: the tolerance within which
#: recommend's confidence counts a pick as good (decide.confidence.GOOD_PICK_TOLERANCE; a test
#: keeps the two equal: measuring is not to import the deciding side).
COARSE_SHARE = 0.05
#: At least this many values of one configuration all ending in zeros past a decimal make that
#: decimal's unit the timer's quantum (a timer finer than it ends so by chance once in 10 ** 3).
QUANTUM_SEEN = 3
#: A plain or scientific number as a timer prints it: sign, digits, decimals, exponent.
_NUMBER = re.compile(r"^\s*[+-]?(\d*)(?:[.,](\d*))?(?:[eE]([+-]?\d+))?\s*$")


def _digits(text: str) -> tuple[int, int] | None:
    """(decimals printed, decimals that are not trailing zeros) of ``text`` in seconds, an
    exponent counted in (``1.25e-01``: 3, 3; ``120``: 0, -1); None: no number."""
    m = _NUMBER.match(text or "")
    if m is None or not (m.group(1) or m.group(2)):
        return None
    whole, frac, exp = m.group(1) or "", m.group(2) or "", int(m.group(3) or 0)
    printed = len(frac) - exp
    kept = frac.rstrip("0")
    if kept:
        return printed, len(kept) - exp
    stripped = whole.rstrip("0")
    zeros = len(whole) - len(stripped) if stripped else 0  # "0" is no run of zeros
    return printed, -zeros - exp


def _read(text: str) -> tuple[float, int, int] | None:
    """(seconds per unit, decimals printed, decimals not trailing zeros) of ``text``: of its
    last field where it is a time in several units (a clock's "00:00:01" is read to its
    seconds, 1 s, not as no number: s45 tester E2; "1h 2m" and "1:05h" to their minutes),
    else of the number (:func:`_digits`); None: no number."""
    from hpcds1mpi.measure.compound_time import last_part

    if (last := last_part(text)) is not None:
        digits = _digits(last[0])
        return None if digits is None else (last[1], *digits)
    digits = _digits(text)
    return None if digits is None else (1.0, *digits)


def resolution(texts: list[str]) -> float:
    """The resolution in seconds of the timer that printed ``texts`` (one configuration's
    values, as ``--time-regex`` captured them): a unit of the finest decimal printed, or the
    coarser quantum that :data:`QUANTUM_SEEN` or more values all keep to; NaN: no number."""
    read = [d for d in (_read(t) for t in texts) if d is not None]
    if not read:
        return math.nan
    finest = min(scale * 10.0 ** -printed for scale, printed, _ in read)
    if len(read) < QUANTUM_SEEN:
        return finest
    return max(finest, min(scale * 10.0 ** -kept for scale, _, kept in read))


def is_coarse(tick: float, seconds: float) -> bool:
    """Whether a timer of resolution ``tick`` measures ``seconds`` coarsely (see the module)."""
    return math.isfinite(tick) and (seconds <= 0 or tick > COARSE_SHARE * seconds)


def coarse_noise(times: list[float], texts: list[str]) -> float | None:
    """The ``noise`` of one configuration whose repeats' ``times`` were printed as ``texts``
    by a coarse timer: ``(max - min + resolution) / median``, the widest spread the printed
    values allow; None where the timer is not coarse at their median (or nothing was read),
    NaN where the median is 0 (no share of it is known)."""
    import numpy as np

    if not times or not texts:
        return None
    tick, median = resolution(texts), float(np.median(times))
    if not is_coarse(tick, median):
        return None
    if median <= 0:
        return math.nan
    return float((max(times) - min(times) + tick) / median)


def tick_noise(times: list[float], texts: list[str]) -> float | None:
    """The ``noise`` of one configuration's repeats ``times``, printed as ``texts``:
    :func:`coarse_noise` where the timer is coarse; where it is not but two or more repeats
    printed one value, ``resolution / median``; None otherwise (the measured spread stands)."""
    noise = coarse_noise(times, texts)
    if noise is not None or len(times) < 2 or len(set(times)) > 1:
        return noise
    tick, median = resolution(texts), float(times[0])
    return tick / median if math.isfinite(tick) and median > 0 else None


def _tick_text(tick: float) -> str:
    return f"{tick:g}-s"


def coarse_note(text: str | None, wall_s: float, regex: str,
                seen: list[str] | None = None) -> str:
    """The note for a time ``text`` (as ``regex`` captured it, after the configuration's
    earlier ``seen``) printed coarsely, read from a launch of ``wall_s`` seconds; "" for any
    other."""
    from hpcds1mpi.measure.time_reading import time_value

    if text is None:
        return ""
    tick, value = resolution([*(seen or []), text]), time_value(text)
    if not (math.isfinite(value) and is_coarse(tick, value)):
        return ""
    share = f"{tick / value:.0%} of it" if value > 0 else "more than all of it"
    return (f"note: {regex} read {text.strip()} s of a launch of {wall_s:.2f} s wall time: "
            f"the program's timer has {_tick_text(tick)} resolution, {share} (over "
            f"{COARSE_SHARE:.0%}: under {1 / COARSE_SHARE:.0f} ticks), so its repeats agree by "
            "rounding; their noise is stored as the widest spread the printed values allow "
            "((max - min + resolution) / median), not as measured; give a larger size, a "
            "--time-regex for a finer timer, or drop --time-regex to record the wall time")


def below_tick(text: str, wall_s: float) -> float:
    """The time of a launch of ``wall_s`` seconds whose timer printed a zero ``text``: half
    the smaller of the timer's resolution and ``wall_s``, both bounds of it (see the module);
    0.0 where neither is known."""
    bounds = [b for b in (resolution([text]), wall_s) if math.isfinite(b) and b > 0]
    return min(bounds) / 2 if bounds else 0.0


def zero_note(label: str, found: dict, wall_s: float, regex: str) -> str:
    """The note for a launch of configuration ``label`` (``wall_s`` seconds) whose time
    ``regex`` read as a zero (``found["below_tick"]``, its time :func:`below_tick`'s); "" for
    any other."""
    if not found.get("below_tick"):
        return ""
    text = found.get("time_text") or ""
    return (f"note: {label}: {regex} read {text.strip()!r}, under one tick of the program's "
            f"timer ({_tick_text(resolution([text]))} resolution), in a launch of {wall_s:.2f} s "
            "wall time: the run was faster than its timer shows, not failed; it is kept ok, its "
            f"runtime stored as {found['time']:g} s (half the smaller of the tick and the wall "
            "time), its noise as the widest spread the printed values allow; give a larger "
            "size or a --time-regex for a finer timer, or drop --time-regex to record the wall "
            "time")
