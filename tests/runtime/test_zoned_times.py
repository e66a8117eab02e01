"""Times shown or stored name their zone: UTC, as the telemetry journal writes its own; a
stored time without a zone (as written before) is local time (s35 tester T7)."""

from __future__ import annotations

import contextlib
import datetime
import os
import time

from hpcds1mpi.runtime.zoned_times import stored_as_utc_text, stored_now, utc_text


@contextlib.contextmanager
def local_zone(zone: str = "Pacific/Chatham"):
    """The process's local time zone set to ``zone`` (Chatham: +13:45 in December, a zone
    whose offset no slip of whole hours hides), restored after."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


def test_a_time_is_shown_in_utc_and_says_so():
    with local_zone():
        assert time.localtime(0).tm_hour == 12  # the zone took: Chatham in January, +12:45
        assert utc_text(1796519685.5) == "2026-12-06 01:14:45 UTC"
        assert utc_text(1796519685.5, with_seconds=False) == "2026-12-06 01:14 UTC"


def test_a_stored_time_names_its_zone_and_an_old_one_is_read_as_local():
    with local_zone():
        now = stored_now()
        assert now.endswith("+00:00")
        read = datetime.datetime.fromisoformat(now)
        assert abs(read.timestamp() - time.time()) < 5
        # written before zones were stored: local time, here 13:45 ahead of UTC
        assert stored_as_utc_text("2026-12-06T14:59:00") == "2026-12-06 01:14:00 UTC"
        assert stored_as_utc_text("2026-12-06T14:59:00+13:45") == "2026-12-06 01:14:00 UTC"
        assert stored_as_utc_text("2026-12-06T01:14:00Z") == "2026-12-06 01:14:00 UTC"
        assert stored_as_utc_text("last Tuesday") == "last Tuesday"
