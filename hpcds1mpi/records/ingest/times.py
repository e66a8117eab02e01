"""Time stamps in job logs: the years a job's time may fall in, one format decided per file for
text times, and sacct's local times put into UTC, the job table's one time zone.

sacct prints times as ``SLURM_TIME_FORMAT`` says: ISO ``2026-12-04T16:49:02`` by default
(``standard``), epoch seconds (``%s``), any strftime format a site set (``%d/%m/%y %H:%M``), or
``relative`` (``16:49:02``, ``Ystday 16:49``, ``Tue 16:49``: no date at all). Asked value by
value, pandas guessed: ``04/12/26`` became 12 April in a day-first file whose ``13/11/26`` it
read day-first, and a yearless ``12/04-16:49`` became year 1. Here one format is decided from
all of a file's time values (:func:`decide_format`): ISO, epoch seconds, year-first numbers, or
day/month numbers whose order a day above 12 settles (a 2-digit year first, ``%y-%m-%d``,
too where the dates' spread settles it), used for every value; a value in another
format is counted as a bad time. A file whose times have no year, whose date order cannot be
told, or whose format is none of these is refused in one line that says how to export it.

The job table holds naive UTC times: sacct's ``-P`` times are local to the machine sacct ran
on and are converted with this process's time zone (:func:`local_to_utc`, the ``TZ``
variable), so that a ``-P`` export and a ``--json`` export (epoch seconds) of the same jobs
give the same times.
"""

from __future__ import annotations

import datetime
import os
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from hpcds1mpi.errors import IngestError

if TYPE_CHECKING:
    import pandas as pd

#: The years a job's time may fall in. No batch job ran before the Unix epoch (a converter's
#: year 1 or 0001-01-01 is no date), and pandas' nanosecond times end in April 2262 (a far
#: "placeholder" end such as 2999 is no date either): a time outside is counted and dropped.
FIRST_YEAR, LAST_YEAR = 1970, 2261
#: Epoch seconds of 1970-01-01 and 2262-01-01 (UTC): the same range for epoch values.
_FIRST_S, _END_S = 0, 9_183_110_400

#: What sacct writes for a time that is not set.
BLANK_TIMES = ("", "Unknown", "None", "NaT")

#: The advice of every refusal of a sacct file's times.
STANDARD = "re-run sacct with SLURM_TIME_FORMAT=standard (ISO times, sacct's default)"

_CLOCK = r"(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})[T ]" + _CLOCK)
_YEAR_FIRST = re.compile(r"(\d{4})[/.](\d{1,2})[/.](\d{1,2})[T ,]+" + _CLOCK)
# Day and month in either order, then the year (2 or 4 digits): 04/12/26 16:49, 04.12.2026 ...
_NUMBERS = re.compile(r"(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})[T ,]+" + _CLOCK)
# Epoch seconds (SLURM_TIME_FORMAT=%s): 9 or 10 digits, 1973 to 2286.
_EPOCH = re.compile(r"\d{9,10}")
_HAS_CLOCK = re.compile(r"\d{1,2}:\d{2}")
_HAS_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")

_PATTERNS = {"iso": _ISO, "year-first": _YEAR_FIRST, "numbers": _NUMBERS}
_UNIX = datetime.datetime(1970, 1, 1)

#: Distinct time values beyond which a file's format is decided from an even sample of them.
SAMPLE = 100_000

#: Formats a file's times can be read in, most common first (the order ties are broken in).
FORMATS = ("iso", "epoch", "year-first", "numbers")


@dataclass(frozen=True)
class TimeFormat:
    """How a file writes its times, decided once for all of them.

    Attributes:
        kind: one of :data:`FORMATS`.
        day_first: for ``numbers``, whether the day comes before the month.
        example: a value of the file in this format (for messages).
    """

    kind: str
    day_first: bool = False
    example: str = ""
    #: No value gives seconds (a spreadsheet's ``17.07.2023 11:46``): times are to the minute.
    minutes_only: bool = False
    #: The day-first order comes from the dots, no day above 12 settled it.
    dotted: bool = False
    #: For ``numbers``, a 2-digit year first (``%y-%m-%d``, s46 tester I4).
    year_first: bool = False

    @property
    def is_epoch(self) -> bool:
        return self.kind == "epoch"

    def fields(self, text: str) -> tuple[int, int, int, int, int, int]:
        """(year, month, day, hour, minute, second) of one value.

        Raises:
            ValueError: the value is not in this format, or no real date and time.
        """
        m = _PATTERNS[self.kind].fullmatch(text.strip())
        if not m:
            raise ValueError(f"not in the file's time format {text!r}")
        a, b, c, hour, minute, second = m.groups()
        if self.kind == "numbers":
            if self.year_first:
                a, c = c, a
            day, month = (a, b) if self.day_first or self.year_first else (b, a)
            a, b, c = int(c) if len(c) == 4 else _year(c), month, day
        fields = (int(a), int(b), int(c), int(hour), int(minute), int(second or 0))
        datetime.datetime(*fields)  # ValueError: 31 Feb, 25:00
        return fields


def classify(text: str) -> str:
    """The format one time value is written in: one of :data:`FORMATS`, ``no-year`` (a clock
    time without a year: ``relative``, ``%m/%d-%H:%M``), or ``other``."""
    text = text.strip()
    if _ISO.fullmatch(text):
        return "iso"
    if _EPOCH.fullmatch(text):
        return "epoch"
    if _YEAR_FIRST.fullmatch(text):
        return "year-first"
    if _NUMBERS.fullmatch(text):
        return "numbers"
    if _HAS_CLOCK.search(text) and not _HAS_YEAR.search(text):
        return "no-year"
    return "other"


def decide_format(values: Iterable[str], where: str, advice: str) -> TimeFormat | None:
    """The one format of a file's times, from all of them.

    Args:
        values: the file's time values (blanks and ``Unknown`` are skipped).
        where: how messages name the file (its path).
        advice: what a refusal tells the user to do (e.g. :data:`STANDARD`).

    Returns:
        The format the most values are written in (values in another one are then bad
        times, counted by the reader), or None when the file has no time value.

    Raises:
        IngestError: no value is in a format read here (times without a year, or a format of
            their own), or day/month numbers whose order no value settles, or settles both
            ways.
    """
    texts = list({v.strip() for v in values if isinstance(v, str)} - set(BLANK_TIMES))
    if len(texts) > SAMPLE:
        texts.sort()  # the same sample on every run
    seen: dict[str, list[str]] = {}
    # A big log: the format is the one of an even sample of its values; a date order is still
    # settled by every value (below).
    for text in texts[::len(texts) // SAMPLE + 1]:
        seen.setdefault(classify(text), []).append(text)
    if not seen:
        return None
    known = [k for k in FORMATS if k in seen]
    if not known:
        if "no-year" in seen:
            raise IngestError(f"{where}: the times have no year (e.g. {min(seen['no-year'])!r}: "
                              f"SLURM_TIME_FORMAT=relative, or a format without %Y); {advice}")
        raise IngestError(f"{where}: times in a format not read here (e.g. "
                          f"{min(seen['other'])!r}); {advice}")
    kind = max(known, key=lambda k: len(seen[k]))  # ties: the first of FORMATS
    example = min(seen[kind])
    minutes_only = kind in _PATTERNS and not any(  # group 6: the seconds
        m and m.group(6) is not None for m in map(_PATTERNS[kind].fullmatch, seen[kind]))
    if kind != "numbers":
        return TimeFormat(kind, example=example, minutes_only=minutes_only)
    matches = [(v, _NUMBERS.fullmatch(v)) for v in texts]
    pairs = [(v, int(m.group(1)), int(m.group(2))) for v, m in matches if m]
    days_first = sorted(v for v, a, b in pairs if a > 12 >= b)
    months_first = sorted(v for v, a, b in pairs if b > 12 >= a)
    if days_first and months_first:
        raise IngestError(f"{where}: dates in both orders ({days_first[0]!r} is day-first, "
                          f"{months_first[0]!r} month-first); {advice}")
    if not days_first and not months_first:
        # Dotted dates (17.07.2023) are day-first in every locale that writes them (German,
        # Russian, Czech ... spreadsheets): read so, and said (s36 tester L5).
        dotted = [v for v, m in matches if m and re.match(r"\d{1,2}\.\d{1,2}\.", v)]
        if dotted and len(dotted) == len(pairs):
            return TimeFormat(kind, day_first=True, example=min(dotted),
                              minutes_only=minutes_only, dotted=True)
        raise IngestError(f"{where}: dates such as {example!r} read day-first or month-first "
                          "alike, and no date in the file says which; " + advice)
    year_first = days_first and _year_first_order([m for _, m in matches if m])
    if year_first is None:
        # s46 tester I4: %y-%m-%d writes 2026-12-07 as 26-12-07, whose 26 is no day: a first
        # field above 12 proves day-first only where the dates cannot be read year-first.
        y, mo, d, *_ = TimeFormat(kind, day_first=True).fields(days_first[0])
        a, b, c = _NUMBERS.fullmatch(days_first[0]).groups()[:3]
        sep = days_first[0][len(a)]
        raise IngestError(f"{where}: dates such as {days_first[0]!r} read day-first "
                          f"({y:04d}-{mo:02d}-{d:02d}) or year-first ({_year(a):04d}-{b}-{c}, "
                          f"as SLURM_TIME_FORMAT=%y{sep}%m{sep}%d writes it) alike, and no "
                          "date in the file says which; " + advice)
    return TimeFormat(kind, day_first=bool(days_first) and not year_first,
                      year_first=bool(year_first), example=(days_first or months_first)[0],
                      minutes_only=minutes_only)


def _year(two_digits: str) -> int:
    """strftime's %y: 69-99 are 19xx, 00-68 20xx."""
    year = int(two_digits)
    return year + (1900 if year >= 69 else 2000)


def _year_first_order(matches: list) -> bool | None:
    """For day/month/2-digit-year numbers of a file that a first field above 12 calls
    day-first: False when they are, True when they are year-first (``%y-%m-%d``), None when
    the file cannot tell. The dates' spread decides first — a log's dates span days, not a
    decade: the reading whose dates lie within a tenth of the other's spread — then which
    reading leaves no value that is no date (one corrupt value does not turn a file)."""
    day_first, year_first, bad_day, bad_year = [], [], 0, 0
    for m in matches:
        a, b, c = m.group(1), m.group(2), m.group(3)
        if len(a) != 2 or len(c) != 2:
            return False
        try:
            year_first.append(datetime.date(_year(a), int(b), int(c)))
        except ValueError:
            bad_year += 1
        try:
            day_first.append(datetime.date(_year(c), int(b), int(a)))
        except ValueError:
            bad_day += 1  # a first field above 31
    if day_first and year_first:
        spread_day, spread_year = ((max(d) - min(d)).days for d in (day_first, year_first))
        if spread_day * 10 < spread_year:
            return False
        if spread_year * 10 < spread_day:
            return True
    if bad_day != bad_year and not (bad_day and bad_year):
        return bool(bad_day)
    return None


def describe(fmt: TimeFormat) -> str | None:
    """A report fact on how a file's dates were read, when it is not plain ISO (None)."""
    if fmt.kind != "numbers":
        return None
    if fmt.dotted:
        y, mo, d, h, mi, s = fmt.fields(fmt.example)
        return (f"dates are dotted ({fmt.example!r}), which every locale writing them writes "
                f"day-first: read day-first ({y:04d}-{mo:02d}-{d:02d})")
    order = "year" if fmt.year_first else "day" if fmt.day_first else "month"
    y, mo, d, h, mi, s = fmt.fields(fmt.example)
    return (f"dates are written {order}-first ({fmt.example!r} is {y:04d}-{mo:02d}-{d:02d}): "
            f"every date read {order}-first")


def minutes_fact(fmt: TimeFormat | None) -> str | None:
    """A report fact when a file's times have no seconds (None otherwise): each time, and the
    waits and run times taken from them, may be up to 59 s off (a spreadsheet re-save drops
    them, s36 tester L5)."""
    if fmt is None or not fmt.minutes_only:
        return None
    return (f"times are given to the minute (e.g. {fmt.example!r}: no seconds, as a spreadsheet "
            "writes them): each time, and waits taken from them, may be up to 59 s off; "
            "the original log has them")


def in_range_s(seconds: float) -> bool:
    """Whether epoch seconds fall in :data:`FIRST_YEAR`..:data:`LAST_YEAR`."""
    return _FIRST_S <= seconds < _END_S


def outside_years(values: "pd.Series") -> "pd.Series":
    """Which times of a datetime Series fall outside :data:`FIRST_YEAR`..:data:`LAST_YEAR`
    (NaT: not outside)."""
    import pandas as pd

    first, end = pd.Timestamp(FIRST_YEAR, 1, 1), pd.Timestamp(LAST_YEAR + 1, 1, 1)
    return values.notna() & ((values < first) | (values >= end))


def zone_name() -> str:
    """This process's time zone, as a person would name it (``TZ``, else the zone's names)."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        return tz
    names = dict.fromkeys(time.tzname)
    return "/".join(names)


#: A POSIX TZ rule (``UTC-14``, ``CET-1CEST,M3.5.0,M10.5.0/3``, ``<+0530>-5:30``): a name of
#: three letters or more (or ``<...>``) then an offset; glibc reads it without the database.
_POSIX_RULE = re.compile(r"(?:[A-Za-z]{3,}|<[+-]?[A-Za-z0-9]+>)[+-]?\d{1,2}(?::\d{2}){0,2}"
                         r"(?:(?:[A-Za-z]{3,}|<[+-]?[A-Za-z0-9]+>).*)?")


def check_zone() -> None:
    """Refuse a ``TZ`` that C's time functions would read as UTC without a word: a name the
    zone database does not hold (``Europe/Berln``) that is no POSIX rule either (s35 tester
    T4: it said "read in Europe/Berln" and read UTC, 1 h off).

    Raises:
        IngestError: naming the value and the fix.
    """
    value = os.environ.get("TZ")
    if not value:  # unset: the machine's zone; empty: UTC, as asked
        return
    name = value[1:] if value.startswith(":") else value
    folder = os.environ.get("TZDIR") or "/usr/share/zoneinfo"
    if os.path.isabs(name):
        if os.path.isfile(name):
            return
    elif ".." not in name.split("/") and os.path.isfile(os.path.join(folder, name)):
        return
    if not value.startswith(":") and _POSIX_RULE.fullmatch(value):
        return
    raise IngestError(f"TZ={value!r} is no time zone this machine knows (not in {folder}, "
                      "nor a POSIX rule such as CET-1CEST,M3.5.0,M10.5.0/3): sacct's local "
                      "times would be read as UTC; set TZ to a name from timedatectl "
                      "list-timezones (e.g. TZ=Europe/Berlin), or unset it")


def local_readings(fields: tuple[int, int, int, int, int, int]) -> tuple[float, ...]:
    """Every epoch-seconds reading of a local wall-clock time in this process's time zone,
    earliest first: one, two in the hour a change to winter time repeats (first pass, summer
    time, then second pass), none in the hour a change to summer time skips."""
    guess = time.mktime((*fields, 0, 0, -1))
    return tuple(sorted(t for t in (guess - 3600, guess - 1800, guess, guess + 1800,
                                    guess + 3600) if time.localtime(t)[:6] == tuple(fields)))


def local_to_utc(fields: tuple[int, int, int, int, int, int]) -> tuple[float, bool]:
    """Epoch seconds of a local wall-clock time in this process's time zone, and whether the
    time was ambiguous (the hour a daylight-saving change repeats: the first, summer-time one
    is taken).

    Raises:
        ValueError: a time the clock skips (the hour a change to summer time leaves out).
    """
    matches = local_readings(fields)
    if not matches:
        raise ValueError("a local time the clock skips (daylight saving)")
    return matches[0], len(matches) > 1


class SacctTimes:
    """How to read a sacct text file's times, decided once from all of them
    (:func:`sacct_time_reader`).

    ``times(text, column)`` -> naive UTC datetime, or None for an unset time; a local time
    the autumn clock change repeats is read as its first (summer-time) pass, noted.
    ``times.readings(text, column)`` -> every reading of it, earliest first (two for such a
    time, one otherwise; ``()`` for an unset time), noted nowhere: the job's reader chooses
    (:mod:`.clock_changes`). Both raise ValueError ``bad time in COLUMN '...'`` for a value
    not in the file's format (or skipped by the spring clock change) and ``time in COLUMN
    outside 1970-2261 '...'`` for one out of range.
    """

    def __init__(self, fmt: TimeFormat | None, report):
        self.fmt, self.report = fmt, report
        self._cache: dict[str, tuple[datetime.datetime, ...]] = {}
        self._hours: dict[tuple, tuple[float, ...]] = {}  # local hour -> its UTC starts

    def __call__(self, text: str | None, column: str = "") -> datetime.datetime | None:
        readings = self.readings(text, column)
        if len(readings) > 1:
            self.report.notes["local time in the hour a daylight-saving change repeats: read "
                              "as the first (summer time)"] += 1
        return readings[0] if readings else None

    def readings(self, text: str | None, column: str = "") -> tuple[datetime.datetime, ...]:
        if text is None or text.strip() in BLANK_TIMES:
            return ()
        text = text.strip()
        if text in self._cache:
            return self._cache[text]
        where = f" in {column}" if column else ""
        fmt = self.fmt
        if fmt is None:
            raise ValueError(f"bad time{where} {text!r}")
        if fmt.is_epoch:
            if not _EPOCH.fullmatch(text):
                raise ValueError(f"bad time{where} {text!r}")
            seconds: tuple[float, ...] = (float(text),)
        else:
            try:
                fields = fmt.fields(text)
            except ValueError:
                raise ValueError(f"bad time{where} {text!r}") from None
            if not FIRST_YEAR <= fields[0] <= LAST_YEAR:
                raise ValueError(f"time{where} outside {FIRST_YEAR}-{LAST_YEAR} {text!r}")
            try:
                seconds = self._utc(fields)
            except OverflowError:
                seconds = ()
            if not seconds:
                raise ValueError(f"bad time{where} (skipped by daylight saving) {text!r}")
        if not all(in_range_s(t) for t in seconds):
            raise ValueError(f"time{where} outside {FIRST_YEAR}-{LAST_YEAR} {text!r}")
        # datetimes (the frame's normalise makes them Timestamps): ten times quicker to make.
        stamps = tuple(_UNIX + datetime.timedelta(seconds=t) for t in seconds)
        self._cache[text] = stamps
        return stamps

    def _utc(self, fields: tuple[int, int, int, int, int, int]) -> tuple[float, ...]:
        # Zone offsets change on the hour: one time-zone look-up per local hour, checked.
        hour = fields[:4]
        if hour not in self._hours:
            self._hours[hour] = local_readings((*hour, 0, 0))
        into = fields[4] * 60 + fields[5]
        found = tuple(t + into for t in self._hours[hour]
                      if time.localtime(t + into)[:6] == tuple(fields))
        # None found: a change within the hour (a 30-minute one); asked of the zone itself.
        return found if found and len(found) == len(self._hours[hour]) else \
            local_readings(fields)


def sacct_time_reader(values: Iterable[str], report) -> SacctTimes:
    """How to read a sacct text file's times, decided once from all of them.

    Adds to ``report`` a fact on the time zone (and on a day- or month-first date order).

    Args:
        values: every Submit / Start / End value of the file's job lines.
        report: the file's :class:`~.schema.FileReport` (its path names it in messages).

    Returns:
        The file's :class:`SacctTimes`.

    Raises:
        IngestError: as :func:`decide_format` (advice: :data:`STANDARD`); local times and a
            ``TZ`` the zone database does not know (:func:`check_zone`).
    """
    fmt = decide_format(values, report.path, STANDARD)
    if fmt is not None:
        for said in (describe(fmt), minutes_fact(fmt)):
            if said:
                report.facts.append(said)
        if not fmt.is_epoch:
            check_zone()
            report.facts.append(f"sacct's times are local: read in this machine's time zone "
                                f"({zone_name()}) and stored in UTC; if sacct ran in another "
                                "zone, run ingest with TZ set to that zone")
    return SacctTimes(fmt, report)
