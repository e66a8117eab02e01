"""Where a program path is found: in the folder the program starts in (``--workdir``).

A relative path is resolved by the process that runs it, in its folder: ``--workdir
'runs/{size}-{ranks}'`` with ``../../app`` ran the program while its MPI was read from the
sweep's folder, "not found", and the launcher check was skipped (s33 tester D3). Every reader
of the program (its MPI, a wrapper's text, the fingerprint) takes it from :func:`in_folder`.
"""

from __future__ import annotations

import os


def in_folder(name: str, cwd: str | None) -> str:
    """``name`` as a process started in ``cwd`` finds it: a relative path (one holding a ``/``)
    is taken from there; a bare name (found on PATH) or an absolute path as it is."""
    return os.path.join(cwd, name) if cwd and "/" in name and not os.path.isabs(name) else name
