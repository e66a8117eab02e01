"""A time printed in several units (``2m54.91s``, ``1h 2m``, ``1:02:03``), read whole.

Quantum ESPRESSO's pw.x prints its times as ``54.91s`` under a minute, ``2m54.91s`` past one
and ``1h 2m`` past an hour. ``--time-regex '([0-9.]+)s WALL'`` took the seconds part alone:
a launch of 175.6 s was stored ``ok`` at 54.91 s, with no word, and the runtime fell back each
time a size crossed a minute (s45 tester A1). The unit check (:mod:`.time_units`) looks only
after the number, and a time under the wall time is no evidence (a program's own timer
rightly leaves out its start-up): only the text around the number is.

Where the number a group captured is one part of such a time (:func:`compound_text`), the
whole time is read (:func:`duration`): its minutes, hours and days added, as the program
printed them, and a note says so once per sweep (:func:`whole_note`). A group that captured the
whole time (``'PWSCF.*CPU +(.+?) WALL'`` over ``1h 2m``) is read the same way. Refusing it
instead would fail a good run with no regex to offer: pw.x never prints its total in seconds
past a minute. A time read whole still meets the wall-time check (a clock time of day read as a
duration is far over it).

What counts, its parts run from the largest unit down:

* unit letters: ``[N[.N]d] [N[.N]h] [N[.N]m] [N[.N]s]`` (``min``, ``hr``, ``sec`` spelled out
  too), two parts or more, a unit a printer left out as zero skipped (``3d 4s``, ``1h 3s``)
  and a larger part's decimals read (``1.5h 30s``: 5430 s; both were read as their last part,
  s45), blanks, a comma, "and" or a colon between allowed (``3m 3.38s``, ``1h02m03s``,
  ``1d 2h 3m``, ``1 minutes, 5 seconds``, ``1 minutes and 5 seconds``, ``1h:02m:03s``), a
  sentence's full stop after (``1m1.01s.``);
* a clock: ``m:ss``, ``h:mm:ss`` and Slurm's ``d-hh:mm:ss``, its seconds two digits
  (``0:02.35``; GNU time's ``1:01.00elapsed`` and ``1:05s`` with a word or unit right
  after; ``Elapsed:0:01:01`` with a word's colon right before), never inside a longer
  ``a:b:c:d`` or after a date's ``-`` or a ``T``. An hour unit right after a two-field clock
  makes it hours and minutes, as it is written for "1 h 5 min" (``1:05h``, ``1:05 hours``:
  3900 s; it was 65 s): the unit names the clock's first field, as ``1:05 min`` is a minute
  and 5 s;

each part below another under its limit (seconds and minutes under 60, hours under 24 after
days); anything else is no compound time, and the reading is what it was.
"""

from __future__ import annotations

import re

#: What may stand between two parts in unit letters: blanks, a comma, "and", or a colon
#: with no blank ("1 minutes, 5 seconds", "1 minutes and 5 seconds", "1h:02m:03s"; s45 tester
#: F2). A colon and a blank ("2h: 3.5 s") is a label's, not a time's. The colon is tried
#: first: the blanks' empty match would end the time at "1h" of "1h:02m".
_BETWEEN = r"(?::|[ \t]*(?:,[ \t]*)?(?:and[ \t]+)?)"
#: What may not follow a unit letter: another letter, or a decimal's point (a sentence's full
#: stop may, "1m1.01s."; s45 tester F2).
_UNIT_END = r"(?![A-Za-z_]|\.\d)"
#: A part's number: a larger unit's decimals are read too ("1.5h 30s").
_PART = r"\d+(?:\.\d+)?"
#: An hour unit's spellings.
_HOURS = r"h(?:rs?|ours?)?"
#: A time in unit letters; the parts present are checked by :func:`_seconds`, each unit word
#: in a group of its own (``d_word`` ...) so that the time ends where its last one does.
_LETTERS = re.compile(
    rf"(?<![\w.])(?:(?P<d>{_PART})[ \t]*(?P<d_word>d(?:ays?)?){_UNIT_END}{_BETWEEN})?"
    rf"(?:(?P<h>{_PART})[ \t]*(?P<h_word>{_HOURS}){_UNIT_END}{_BETWEEN})?"
    rf"(?:(?P<m>{_PART})[ \t]*(?P<m_word>m(?:ins?|inutes?)?){_UNIT_END}{_BETWEEN})?"
    rf"(?:(?P<s>\d+(?:\.\d+)?)[ \t]*(?P<s_word>s(?:ecs?|econds?)?)(?!\w|\.\d))?")
#: A clock time: ``[d-][h:]m:ss[.f]``, hours' minutes two digits. A word's colon may come
#: right before ("Elapsed:0:01:01") and a word right after ("1:01.00elapsed", GNU time's;
#: s45 tester F1, F2), never a digit's colon before (inside "12:30:45:67") or a digit, colon
#: or decimal after.
_CLOCK = re.compile(
    r"(?<![\w.-])(?<!\d:)(?:(?P<d>\d+)-(?=\d+:\d\d:))?(?:(?P<h>\d+):(?=\d\d:))?(?P<m>\d+):"
    rf"(?P<s>\d\d(?:\.\d+)?)(?![\d_:]|\.\d)(?:[ \t]*(?P<hours>{_HOURS})(?![A-Za-z_]))?")
#: Characters searched either side of the captured number.
NEAR = 64
#: Seconds per unit, the largest first.
_UNITS = (("d", 86400.0), ("h", 3600.0), ("m", 60.0), ("s", 1.0))
#: What a part under a larger one must stay below.
_LIMIT = {"h": 24, "m": 60, "s": 60}


def _parts(match) -> list[tuple[str, str, float]]:
    """(unit, number as printed, seconds per unit) of each part of a :data:`_LETTERS` or
    :data:`_CLOCK` ``match``, the largest first; a two-field clock with an hour unit after it
    read as hours and minutes ("1:05h")."""
    groups = match.groupdict()
    if groups.get("hours") and groups["h"] is None and groups["d"] is None:
        return [("h", groups["m"], 3600.0), ("m", groups["s"], 60.0)]
    return [(unit, groups[unit], scale) for unit, scale in _UNITS if groups[unit] is not None]


def _seconds(match) -> float | None:
    """The seconds of a :data:`_LETTERS` or :data:`_CLOCK` ``match``; None where its parts are
    fewer than two or one under a larger part is over its limit."""
    present = [(unit, float(text), scale) for unit, text, scale in _parts(match)]
    if len(present) < 2:
        return None
    if any(value >= _LIMIT[unit] for unit, value, _ in present[1:]):
        return None
    return sum(value * scale for _, value, scale in present)


def last_part(text: str | None) -> tuple[str, float] | None:
    """The last part of ``text``, a time in several units (:func:`duration`), as printed, and
    its seconds per unit ("1h 2m": "2", 60.0; "1:05h": "05", 60.0); None: no such time."""
    match = _whole(text)
    if match is None:
        return None
    _, printed, scale = _parts(match)[-1]
    return printed, scale


def duration(text: str | None) -> float | None:
    """The seconds of ``text`` when it is, whole, a time in several units ("2m54.91s":
    174.91); None for any other text (a plain number included)."""
    match = _whole(text)
    return None if match is None else _seconds(match)


def _whole(text: str | None):
    """The match of ``text``, whole, as a time in several units; None: it is none."""
    text = (text or "").strip()
    for pattern in (_LETTERS, _CLOCK):
        match = pattern.fullmatch(text)
        if match is not None and _seconds(match) is not None:
            return match
    return None


def compound_text(match) -> str:
    """The whole time in several units that ``match``'s first group is part of, or is
    ("2m54.91s" where it took "54.91"), as printed; "" when there is none (the group took
    a plain number, or no part)."""
    start, end = match.span(1)
    if start < 0 or start == end:
        return ""
    text = match.string
    # its own line, at most NEAR characters either side (a window may be one long line)
    line_start = max(text.rfind("\n", 0, start) + 1, start - NEAR)
    line_end = text.find("\n", end, end + NEAR)
    line_end = min(len(text), end + NEAR) if line_end < 0 else line_end
    for pattern in (_LETTERS, _CLOCK):
        for found in pattern.finditer(text, line_start, line_end):
            if (found.start() <= start and _seconds(found) is not None
                    and end <= _end(found)):
                return text[found.start():_end(found)]
    return ""


def _end(match) -> int:
    """Where the time ``match`` found ends: after its last part, not the blanks or comma that
    may follow one (:data:`_BETWEEN`)."""
    return max((match.end(name) for name in match.re.groupindex if match.start(name) >= 0),
               default=match.start())


def whole_note(part: str, whole: str, regex: str) -> str:
    """The note, said once per sweep, that ``regex`` captured ``part`` of the time ``whole``
    and the whole was read; "" where it captured the whole."""
    if not part or part.strip() == whole.strip():
        return ""
    return (f"note: {regex} captured {part.strip()!r}, a part of the program's time "
            f"{whole!r}: the whole time is read, {duration(whole):g} s (its larger units "
            "added), not the part")
