"""Times shown to the user or stored for later, each naming its zone (s35 tester T7).

One rule: a time is UTC, shown as the telemetry journal shows one (``2026-12-06 01:59:00
UTC``) and stored as ISO 8601 with its offset (``2026-12-06T01:59:00+00:00``). ``tune`` had
said "measured 2026-12-06 14:59" in local time beside the journal's UTC notes, and the failure
history stored local time with no zone. A stored time with no zone, as earlier versions wrote
it, is local time.
"""

from __future__ import annotations

import datetime
import time


def utc_text(seconds: float, with_seconds: bool = True) -> str:
    """``seconds`` since the epoch as ``YYYY-MM-DD HH:MM[:SS] UTC``.

    Raises:
        TypeError, ValueError, OverflowError, OSError: not a time gmtime can give.
    """
    return time.strftime("%Y-%m-%d %H:%M" + (":%S" if with_seconds else "") + " UTC",
                         time.gmtime(seconds))


def stored_now() -> str:
    """Now, to be stored: ISO 8601 in UTC with its offset, whole seconds."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def stored_as_utc_text(text: str) -> str:
    """A stored ISO 8601 time as :func:`utc_text` shows it; one with no zone is local time
    (as written before zones were stored). Text that is no such time is returned as it is."""
    try:
        when = datetime.datetime.fromisoformat(text.strip())
        return utc_text(when.astimezone(datetime.timezone.utc).timestamp())
    except (AttributeError, TypeError, ValueError, OverflowError, OSError):
        return text
