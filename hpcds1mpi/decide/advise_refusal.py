"""Why ``advise --rewrite`` writes nothing although a layout is recommended (one line each).

Lines too long to read: what they ask for is not known, so a rewrite could ask twice (a long
``select`` kept beside an added one). No launch line recognised: the program may start its own
ranks (GPAW's ``gpaw -P 2``), whose count new directives do not change, so a rewritten layout
fails with "not enough slots" (s29 tester B1); a rewrite that keeps the layout (the time
limit, the partition) is still written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.script_reading import MAX_LINE_CHARS, unread_lines

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.launch.job_script import JobScript


def rewrite_refusal(script: "JobScript", asked: "Configuration", picked: "Configuration"
                    ) -> str:
    """Why the rewrite of ``script`` from the ``asked`` layout to ``picked`` is refused, or
    "" when it may be written."""
    unread = unread_lines(script)
    if unread:
        many = len(unread) > 1
        return (f"--rewrite refused: line{'s' if many else ''} "
                f"{', '.join(map(str, unread[:5]))} {'are' if many else 'is'} over "
                f"{MAX_LINE_CHARS:,} characters and not read, so a rewrite cannot know what it "
                "changes; shorten the line (fewer select chunks, a shorter argument list) and "
                "run advise again")
    kept = (asked.nodes, asked.ranks_per_node, asked.threads)
    if script.launch is None and kept != (picked.nodes, picked.ranks_per_node, picked.threads):
        from hpcds1mpi.launch.script_unlaunched import layout_refusal

        return layout_refusal(script)
    return ""
