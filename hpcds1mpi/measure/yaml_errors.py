"""A YAML error document in a program's output, read as the reason it gives (ABINIT's
"--- !ERROR" with its ``message:`` block): :func:`yaml_documents`, which
:func:`~hpcds1mpi.measure.program_launch.reason_line` and
:mod:`~hpcds1mpi.measure.convergence` read."""

from __future__ import annotations

import re

#: The header of a YAML error document (ABINIT's "--- !ERROR", "--- !BUG"): its message
#: block is the reason, not the header (which had been the whole reason: "--- !ERROR").
ERROR_DOCUMENT = re.compile(r"^--- !(\w*(ERROR|BUG|FATAL)\w*)\s*$", re.IGNORECASE)
#: A document's message key: ``message: |`` (a block under it) or ``message: text``.
MESSAGE_KEY = re.compile(r"^(\s*)message:\s*(?:[|>][-+]?\s*)?(.*)$")
#: Lines of a document's message block a reason joins.
MESSAGE_LINES = 2
#: Lines of a document searched for its message (its keys come first).
DOCUMENT_LINES = 60


def yaml_documents(text: str, tag: re.Pattern = ERROR_DOCUMENT) -> list[str]:
    """The reason each YAML error document in ``text`` gives: its tag and the first
    :data:`MESSAGE_LINES` lines of its ``message:`` ("ERROR: The input keyword "ecut" is
    compulsory ! Action: add a value for "ecut" in the input file."); a document without a
    message gives nothing. A document ends at "..." or at the next "---". ``tag``: the
    header of the documents read (group 1 the tag; ABINIT's "--- !ScfConvergenceWarning")."""
    found, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if not (header := tag.match(line.strip())):
            continue
        for j in range(i + 1, min(len(lines), i + DOCUMENT_LINES)):
            if lines[j].strip() == "..." or lines[j].startswith("---"):
                break
            if key := MESSAGE_KEY.match(lines[j]):
                indent, said = len(key.group(1)), [key.group(2).strip()]
                for nxt in lines[j + 1:j + 2 + MESSAGE_LINES]:  # the block: lines indented
                    # under the key, as many as are joined (not the rest of the output, s29 H2)
                    if not nxt.strip() or len(nxt) - len(nxt.lstrip()) <= indent:
                        break
                    said.append(nxt.strip())
                if message := " ".join([ln for ln in said if ln][:MESSAGE_LINES]):
                    found.append(f"{header.group(1)}: {message}")
                break
    return found
