"""A fitted walltime model kept in the user's cache, so that ``recommend --history`` on the same
history fits it once: Curie's 280k jobs cost 37 s of fitting on every call (s34 tester S4).

The key is what the fit is a function of: the history's columns that the submission features
read (hashed from the frame itself, so a copied or renamed log hits and an edited one misses),
the feature groups, which of its rows it learns from, the predictor's arguments, and the code
and library versions that fit it — so a hit needs no features of the history at all (s36: they
were ~6 s of Curie's 8.6 s). The file is a pickle,
and unpickling runs code: one is read only when this user owns it and no one else can write it
or its folder. Anything else — no cache folder, another user's file, a damaged one, one that
unpickles to something other than a fitted model — is fitted anew; a cache that cannot be
written costs the next call a fit, never the answer.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

__all__ = ["cached_fit", "KEEP"]

#: How many fitted models the cache keeps (the least recently used go first): a model of a
#: 280k-job history is a few MB.
KEEP = 4
_FOLDER = "walltime-models"


def cached_fit(history, groups: tuple[str, ...], rows, args: dict,
               fit: Callable[[], object], fitted: Callable[[object], bool] | None = None):
    """``fit()``'s model, read from the cache when one was fitted on the same ``rows`` (positions)
    of the same ``history`` with the same feature ``groups`` and ``args`` by this code; else
    fitted and kept. ``fitted`` says whether what a file unpickled to is such a model (None:
    anything is): a file that unpickles to something else is fitted anew, as a damaged one is
    (s39 tester C6: a dict in its place had ended ``recommend`` in a traceback)."""
    from hpcds1mpi.user_cache import cache_dir

    root = cache_dir()
    if root is None:
        return fit()
    folder = root / _FOLDER
    try:
        path = folder / f"{_key(history, groups, rows, args)}.pkl"
    except (TypeError, ValueError):  # a column pandas cannot hash: no cache, the same answer
        return fit()
    model = _read(path)
    if model is not None and (fitted is None or fitted(model)):
        return model
    model = fit()
    _write(folder, path, model)
    return model


def _key(history, groups, rows, args: dict) -> str:
    import numpy as np
    import pandas as pd

    from hpcds1mpi.digests import sha256
    from hpcds1mpi.surrogates.submit_features import INPUT_COLUMNS

    read = history[[c for c in INPUT_COLUMNS if c in history.columns]]
    digest = sha256(_code_stamp().encode())
    digest.update(repr(sorted(args.items())).encode())
    digest.update(repr((list(read.columns), [str(t) for t in read.dtypes], list(groups),
                        len(read))).encode())
    digest.update(pd.util.hash_pandas_object(read, index=False).to_numpy().tobytes())
    digest.update(np.ascontiguousarray(rows, dtype=np.int64).tobytes())
    return digest.hexdigest()[:32]


def _code_stamp() -> str:
    """What fits the model: this package's version, the surrogates' sources and the proposal's
    own (which features it asks for: s49 review) (hashed), and the versions of the libraries
    that fit and hold it."""
    import lightgbm
    import numpy
    import pandas
    import sklearn

    import hpcds1mpi
    from hpcds1mpi.digests import sha256
    from hpcds1mpi import surrogates

    digest = sha256()
    sources = sorted(Path(surrogates.__file__).resolve().parent.glob("*.py"))
    for source in sources + [Path(__file__).resolve().with_name("walltime.py")]:
        digest.update(source.name.encode() + source.read_bytes())
    return "|".join([hpcds1mpi.__version__, digest.hexdigest(), lightgbm.__version__,
                     numpy.__version__, pandas.__version__, sklearn.__version__])


def _private(st: os.stat_result, kind: int) -> bool:
    """Whether ``st`` is of ``kind``, this user's, and writable by no one else."""
    return (stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.geteuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _read(path: Path):
    """The model pickled at ``path``, or None. Checked through descriptors, not names: the
    folder opened without following a link, the file opened in it without following one, both
    this user's and writable by no one else (s35 review 3: a folder swapped between a check by
    name and the open would have had another user's pickle run). What another user can swap
    in under a shared root is theirs, and no one else can write into this user's folder."""
    import pickle

    folder_fd = fd = None
    try:
        folder_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder_fd)
        if not (_private(os.fstat(folder_fd), stat.S_IFDIR)
                and _private(os.fstat(fd), stat.S_IFREG)):
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = None  # the file object closes it
            model = pickle.load(fh)
        os.utime(path.name, dir_fd=folder_fd, follow_symlinks=False)  # recently used
    except Exception:  # noqa: BLE001 - a cache: missing, damaged or from another version
        return None
    finally:
        for descriptor in (fd, folder_fd):
            if descriptor is not None:
                os.close(descriptor)
    return model


def _write(folder: Path, path: Path, model) -> None:
    import pickle
    import tempfile

    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(os.lstat(folder), stat.S_IFDIR):
            return  # someone else's folder (a shared HPCDS1MPI_CACHE): keep nothing there
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".pkl")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(model, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        _prune(folder)
    except (OSError, pickle.PicklingError):  # full or read-only: the next call fits again
        return


def _prune(folder: Path) -> None:
    """Keep the :data:`KEEP` most recently used models; a temporary an hour old was left by a
    killed writer."""
    import time

    kept, gone = [], []
    for entry in folder.glob("*.pkl"):
        try:
            mtime = entry.stat().st_mtime_ns
        except OSError:
            continue
        if not entry.name.startswith("."):
            kept.append((mtime, entry))
        elif mtime < time.time_ns() - 3600 * 10**9:
            gone.append(entry)
    for entry in gone + [entry for _, entry in sorted(kept, reverse=True)[KEEP:]]:
        try:
            entry.unlink()
        except OSError:
            continue
