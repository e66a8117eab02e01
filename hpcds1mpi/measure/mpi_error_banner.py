"""Open MPI's error-handler banner: the lines ``MPI_ERRORS_ARE_FATAL`` prints, read as one reason.

When an MPI call fails under the default error handler, Open MPI's library writes, from each
rank that hit it (``[host:pid] `` before each line when it cannot aggregate them)::

    [vm:27326] *** An error occurred in MPI_Win_create
    [vm:27326] *** reported by process [105381889,0]
    [vm:27326] *** on communicator MPI COMMUNICATOR 3 DUP FROM 0
    [vm:27326] *** MPI_ERR_WIN: invalid window
    [vm:27326] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
    [vm:27326] ***    and potentially your MPI job)

and for a call made outside MPI's lifetime::

    *** The MPI_Comm_rank() function was called after MPI_FINALIZE was invoked.
    *** This is disallowed by the MPI standard.
    *** Your MPI job will now abort.

Read line by line, each line was a launcher's log line or boilerplate, and the reason was the
banner's last line, "[vm:26902] ***    and potentially your MPI job)" (s32 tester X4).
:func:`banner_messages` gives each banner's message whole: "An error occurred in
MPI_Win_create: MPI_ERR_WIN: invalid window". A banner that names no error (Open MPI's
aborted ``MPI_Init``: "on a NULL communicator" only) gives none: its help text says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A banner line: the process's "[host:pid] " prefix (which keeps the lines of ranks that write
#: at once apart), then "*** " and the text.
BANNER_LINE = re.compile(r"^(?P<process>\[[\w.-]+:\d+\]\s*)?\*\*\*\s?(?P<text>.*)$")
#: The first line of a banner: the failed call, or the call made outside MPI's lifetime.
BANNER_START = re.compile(r"^An error occurred in (?P<call>\w+)$|"
                          r"^(?P<outside>The \w+\(\) function was called (?:before|after) "
                          r"\w+ (?:was invoked|started)\.?)$")
#: A banner's lines that say nothing of the error: who reported it, on which communicator
#: (window, file, session), that errors are fatal, that the MPI standard forbids the call.
BANNER_BOILERPLATE = re.compile(r"^(reported by process\b|on (a NULL )?(communicator|win(dow)?|"
                                r"file|session)\b|MPI_ERRORS_ARE_FATAL\b|"
                                r"This is disallowed by the MPI standard)", re.IGNORECASE)
#: A banner's last line.
BANNER_END = re.compile(r"^(and potentially your MPI job\)|Your MPI job will now abort\.?)$",
                        re.IGNORECASE)
#: Lines from a banner's first to its last at most: Open MPI writes six, other ranks' lines
#: may come between; a line further down is not this banner's.
BANNER_REACH = 32


@dataclass(frozen=True)
class BannerMessage:
    """One banner: ``first`` (the index of its first line), ``lines`` (the indices of all its
    lines, which may be interleaved with other ranks' lines) and ``message``."""

    first: int
    lines: frozenset
    message: str


def banner_messages(lines: list[str]) -> list[BannerMessage]:
    """The error banners of ``lines`` (stripped lines of a stream, rank tags removed) that name
    their error, in order: "An error occurred in <call>: <error class line>", or the call made
    outside MPI's lifetime ("The MPI_Comm_rank() function was called after MPI_FINALIZE was
    invoked.")."""
    found, open_ = [], {}  # open_: process prefix -> (first, indices, start match, messages)
    for i, line in enumerate(lines):
        banner = BANNER_LINE.match(line)
        if banner is None:
            continue
        process, text = (banner.group("process") or "").strip(), banner.group("text").strip()
        if start := BANNER_START.match(text):
            _close(open_.pop(process, None), found)
            open_[process] = (i, {i}, start, [])
            continue
        if (current := open_.get(process)) is None:
            continue
        first, indices, start, said = current
        if i - first >= BANNER_REACH:
            _close(open_.pop(process), found)
            continue
        indices.add(i)
        if BANNER_END.match(text):
            _close(open_.pop(process), found)
        elif text and not BANNER_BOILERPLATE.match(text):
            said.append(text)
    for current in open_.values():
        _close(current, found)
    return sorted(found, key=lambda banner: banner.first)


def _close(current, found: list) -> None:
    """Add the banner ``current`` (None: none) to ``found`` when it names its error."""
    if current is None:
        return
    first, indices, start, said = current
    if start.group("outside"):
        message = start.group("outside")
    elif said:
        message = f"An error occurred in {start.group('call')}: {'; '.join(said)}"
    else:
        return
    found.append(BannerMessage(first, frozenset(indices), message))
