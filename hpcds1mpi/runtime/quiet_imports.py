"""Third-party libraries imported without their own import-time deprecation warnings.

A user who runs with ``PYTHONWARNINGS=error`` (or ``-W error``) asks that *our* code's warnings
fail; a library that warns about its own imports while being imported then killed the command
with a traceback (s32 tester T3: pytorch_tabnet's ``from scipy.sparse.base import spmatrix``
failed ``train`` and ``learn``; botorch and gpytorch warn that ``torch.jit.script`` is
deprecated, which failed ``mobo``). :func:`import_warnings_ignored` wraps such an import only:
the user's filters hold again for everything that runs after it.
"""

from __future__ import annotations

import contextlib
import warnings

#: What a library says about its own (or its dependencies') future while it is imported.
IMPORT_TIME_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


@contextlib.contextmanager
def import_warnings_ignored():
    """Within the block, :data:`IMPORT_TIME_WARNINGS` are ignored; the filters are restored
    after it. Put only the imports of such a library in it (the first import runs the
    library's code; later ones are lookups in ``sys.modules``)::

        with import_warnings_ignored():
            from pytorch_tabnet.tab_model import TabNetRegressor
    """
    with warnings.catch_warnings():
        for category in IMPORT_TIME_WARNINGS:
            warnings.simplefilter("ignore", category)
        yield
