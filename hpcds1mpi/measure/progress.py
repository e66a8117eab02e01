"""The sweep's progress line on stderr (rank 0 only; in-process and external sweeps)."""

from __future__ import annotations

import math
import sys
import time


class Progress:
    """``configs done / total, time left`` on stderr; redrawn in place on a terminal, else a
    line every 10 % (cheap: at most a few writes per second).

    Args:
        total: configurations to run.
        stream: where to write (default ``sys.stderr``).
        enabled: False draws nothing (other ranks, ``--no-progress``).
    """

    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total = max(total, 1)
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.monotonic()
        self._last_draw = 0.0
        self._last_decile = -1

    def update(self, done: int, note: str = "") -> None:
        """Show ``done`` configurations finished, with ``note`` (the one just run)."""
        if not self.enabled:
            return
        now = time.monotonic()
        elapsed = now - self.start
        left = elapsed / done * (self.total - done) if done else float("nan")
        left_text = "?" if math.isnan(left) else _duration(left)
        width = 30
        filled = int(width * done / self.total)
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} configs, "
                f"{left_text} left {note}")
        if self.tty:
            if now - self._last_draw >= 0.2 or done == self.total:
                self.stream.write("\r" + line[:120].ljust(120))
                if done == self.total:
                    self.stream.write("\n")
                self.stream.flush()
                self._last_draw = now
        else:
            decile = int(10 * done / self.total)
            if decile != self._last_decile:
                self.stream.write(line + "\n")
                self.stream.flush()
                self._last_decile = decile


def _duration(seconds: float) -> str:
    """A time left as Slurm writes one (``3-10:30:00`` past a day): ``%H:%M:%S`` of gmtime
    wrapped every 24 h, and 82.5 h left showed "10:30:00 left" (s35 tester T6)."""
    from hpcds1mpi.launch.directives import format_slurm_time

    return format_slurm_time(int(seconds))
