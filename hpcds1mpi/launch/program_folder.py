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
import re
from typing import Sequence

#: The key of a program sweep's ``launch`` attribute (and of its rows' column) holding the
#: absolute folder the sweep ran in: ``--workdir`` is relative to it, and without one the
#: program ran there.
SWEPT_IN = "swept_in"


def in_folder(name: str, cwd: str | None) -> str:
    """``name`` as a process started in ``cwd`` finds it: a relative path (one holding a ``/``)
    is taken from there; a bare name (found on PATH) or an absolute path as it is."""
    return os.path.join(cwd, name) if cwd and "/" in name and not os.path.isabs(name) else name


#: An option or a setting that names its value: ``--in=x``, ``-i=x``, ``LD_LIBRARY_PATH=/x``,
#: ``input=case/a.in`` (``env``'s settings and programs' key=value arguments).
_NAMED_VALUE = re.compile(r"^(?:-+[^=]+|[A-Za-z_][A-Za-z0-9_.-]*)=")


def argument_value(token: str) -> str:
    """The part of a command's argument that may be a path: the value of ``--in=x`` or of a
    ``KEY=value`` setting, else the argument itself (s44 tester P1: ``env
    LD_LIBRARY_PATH=/opt/x/lib`` had been checked by the job as the missing input
    ``LD_LIBRARY_PATH=/opt/x/lib``, a relative path holding a ``/``, and the job stopped)."""
    named = _NAMED_VALUE.match(token)
    return token[named.end():] if named else token


def relative_paths(tokens: Sequence[str], folder: str | None = None) -> list[str]:
    """The arguments of a program command (``tokens``, the program first, placeholders
    filled) that are paths read from the folder it starts in: a relative path holding a
    ``/`` (``nw/h2o-3.nw``, ``-s ../../md.tpr``, ``--in=cases/a.inp``), and, where ``folder``
    is given and readable here, any other argument naming a file or folder in it (``h2o.nw``).
    The program itself counts only as a relative path (a bare name is found on PATH)."""
    found = []
    for i, token in enumerate(tokens):
        value = argument_value(token)
        if not value or value.startswith("-") or os.path.isabs(value) or "://" in value:
            continue
        if "/" in value or (i and folder and "\0" not in value
                            and os.path.exists(os.path.join(folder, value))):
            found.append(value)
    return list(dict.fromkeys(found))
