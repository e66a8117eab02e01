"""The model bundle a decision uses: ``--model DIR`` or the one shipped with the package.

``recommend``, ``tune``, the System 1 evaluation and the benchmarks read bundles through
:func:`load_model`, so a missing or corrupt bundle is one line of error text everywhere,
never a traceback. Reading a bundle needs no torch (the embedding runs in numpy).
"""

from __future__ import annotations

import os
from pathlib import Path

from hpcds1mpi import SHIPPED_MODEL
from hpcds1mpi.errors import HpcdsError, ModelError

#: The bundle a decision uses without ``--model`` (:data:`hpcds1mpi.SHIPPED_MODEL`).
DEFAULT_MODEL = SHIPPED_MODEL


def load_model(model_dir: str | os.PathLike | None):
    """Load a bundle; any failure becomes a one-line :class:`ModelError`.

    Args:
        model_dir: the bundle directory; None (only None) for :data:`DEFAULT_MODEL`.

    Returns:
        the :class:`~hpcds1mpi.surrogates.bundle.Bundle`.
    """
    if model_dir is not None and not str(model_dir).strip():  # "" loaded the shipped bundle
        raise ModelError("the model bundle path is empty; pass --model DIR, or leave it out "
                         "for the shipped one (an unset variable?)")  # s37 tester P5
    path = Path(model_dir) if model_dir is not None else DEFAULT_MODEL
    if not path.is_dir():
        if model_dir is None:
            raise ModelError(
                f"no default model shipped at {path}; train one (hpcds1mpi train) and pass "
                "--model DIR")
        if path.exists():  # a file (an .h5, a .json): "not found" misled (s29 tester E6)
            raise ModelError(f"{path}: a file, not a model bundle folder; pass --model DIR, the "
                             "folder `hpcds1mpi train --telemetry FILE --out DIR` wrote")
        raise ModelError(f"model bundle {path} not found; pass --model DIR of a trained bundle")
    try:
        from hpcds1mpi.surrogates.bundle import load_bundle
    except ImportError as exc:
        raise ModelError(f"this installation cannot read model bundles ({exc})") from None
    try:
        return load_bundle(path)
    except HpcdsError:
        raise
    except Exception as exc:  # a corrupt bundle must not print a traceback
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelError(f"cannot read model bundle {path} ({text[:160]}); retrain it with "
                         "hpcds1mpi train or pass another --model") from None
