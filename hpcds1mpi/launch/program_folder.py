"""Where a program path is found: in the folder the program starts in (``--workdir``).

A relative path is resolved by the process that runs it, in its folder: ``--workdir
'runs/{size}-{ranks}'`` with ``../../app`` ran the program while its MPI was read from the
sweep's folder, "not found", and the launcher check was skipped (s33 tester D3). Every reader
of the program (its MPI, a wrapper's text, the fingerprint) takes it from :func:`in_folder`.

The folder a program sweep ran in is recorded (:data:`SWEPT_IN`): without ``--workdir`` the
command's relative arguments were read from it, and a script run from another folder failed
to find them (s37 tester G3: ``nwchem.openmpi nw/h2o-3.nw`` exited 127 in its job).
"""

from __future__ import annotations

import os
from typing import Sequence

#: The key of a program sweep's ``launch`` attribute (and of its rows' column) holding the
#: absolute folder the sweep ran in: ``--workdir`` is relative to it, and without one the
#: program ran there.
SWEPT_IN = "swept_in"


def in_folder(name: str, cwd: str | None) -> str:
    """``name`` as a process started in ``cwd`` finds it: a relative path (one holding a ``/``)
    is taken from there; a bare name (found on PATH) or an absolute path as it is."""
    return os.path.join(cwd, name) if cwd and "/" in name and not os.path.isabs(name) else name


def relative_paths(tokens: Sequence[str], folder: str | None = None) -> list[str]:
    """The arguments of a program command (``tokens``, the program first, placeholders
    filled) that are paths read from the folder it starts in: a relative path holding a
    ``/`` (``nw/h2o-3.nw``, ``-s ../../md.tpr``, ``--in=cases/a.inp``), and, where ``folder``
    is given and readable here, any other argument naming a file or folder in it (``h2o.nw``).
    The program itself counts only as a relative path (a bare name is found on PATH)."""
    found = []
    for i, token in enumerate(tokens):
        value = token.split("=", 1)[1] if token.startswith("-") and "=" in token else token
        if not value or value.startswith("-") or os.path.isabs(value) or "://" in value:
            continue
        if "/" in value or (i and folder and "\0" not in value
                            and os.path.exists(os.path.join(folder, value))):
            found.append(value)
    return list(dict.fromkeys(found))
