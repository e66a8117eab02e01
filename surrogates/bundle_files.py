"""The files of a model bundle: its directory layout, format version, and reading / writing them.

Layout of ``model/``::

    manifest.json          format version, package versions, feature spec, targets, workloads,
                           size ranges, machine ids, partitions, energy source, sampling record,
                           metrics, training-data hash, embedding configuration
    embedding.npz          TabNet encoder weights as numpy arrays (prediction needs no torch)
    members.pkl            per-target ensemble members (scikit-learn-style estimators)
    training_data.parquet  every training row offered (``kept`` marks the sampled ones)
    training_matrix.npy    [features, embedding] of those rows (float32), for the guard
    training_frame.npz     those rows' frame and launch columns as numpy arrays, what recommend
                           reads of them (``training_frame_file.py``)
    measured_levels.json   per workload, the knob levels it ran at (``levels.py``: a user's
                           program is offered only those)
    problem_levels.json    per centred target, each workload's problem level against log size,
                           and each workload's measured repeat noise (``ranking.py``; absent:
                           the members regress absolute values, confidence without noise)
    size_neighbours.npz    out-of-fold residuals of the measured configurations per size, when
                           trained with the measured-neighbours correction (``size_neighbours.py``)
    README.txt             what the bundle is, how it was trained, where energy came from
                           (``bundle_readme.py``)

The manifest's ``files`` records the SHA-256 of every file the model is read from
(:data:`HASHED_FILES`); :func:`read_bundle` compares them before it unpickles anything, so a
bundle whose files come from two trainings (another bundle's ``members.pkl`` copied in) is
refused instead of answering. This catches mix-ups and damage, not a hostile author (who can
write matching hashes): a bundle is code (pickle) and must come from someone you trust; a
folder other users could have written is refused before anything in it is read
(:mod:`.bundle_trust`). Bundles written before the hashes (no ``files``) load unchecked.

:func:`write_bundle` writes them, :func:`read_bundle` reads the model and manifest back and
refuses other format versions; :class:`~hpcds1mpi.surrogates.bundle.Bundle` wraps the two.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import numpy as np

from hpcds1mpi.digests import sha256_file
from hpcds1mpi.errors import ModelError

from .bundle_readme import readme_text
from .levels import LEVELS_FILE, levels_from_frame, write_levels
from .models import SurrogateModel
from .ranking import ProblemLevels
from .training_frame_file import (FRAME_COLUMNS, LAUNCH_COLUMNS, TRAINING_FRAME,  # noqa: F401
                                  read_training_columns, read_training_frame,
                                  write_training_frame)

if TYPE_CHECKING:  # pragma: no cover - pandas is imported where a DataFrame is made
    import pandas as pd

BUNDLE_FORMAT = 1
MANIFEST = "manifest.json"
TRAINING_DATA = "training_data.parquet"
PROBLEM_LEVELS = "problem_levels.json"
TRAINING_MATRIX = "training_matrix.npy"
README = "README.txt"
SIZE_NEIGHBOURS = "size_neighbours.npz"
BUNDLE_README_TITLE = "hpcds1mpi model bundle"
#: Every file a bundle folder may hold: what :func:`write_bundle` writes, and the calibrations
#: stored beside it (``decide/confidence.py``, ``decide/guard.py``).
BUNDLE_FILES = frozenset({MANIFEST, "embedding.npz", "members.pkl", TRAINING_DATA,
                          TRAINING_MATRIX, TRAINING_FRAME, LEVELS_FILE, PROBLEM_LEVELS, README,
                          SIZE_NEIGHBOURS,
                          "system1_calibration.json",
                          "guard_calibration.json"})
#: The files whose SHA-256 the manifest records (``files``): everything the model or the
#: guard reads. Not the manifest itself, its README, nor the calibrations: those are written
#: into the folder after the manifest (``learn``, ``eval_system1 --write-calibration``; one
#: may be deleted to be computed again), and their readers refuse impossible values
#: (``decide/confidence.py``, ``decide/guard.py``).
HASHED_FILES = ("embedding.npz", "members.pkl", PROBLEM_LEVELS, SIZE_NEIGHBOURS, TRAINING_DATA,
                TRAINING_MATRIX, TRAINING_FRAME, LEVELS_FILE)
RESTORE = "retrain it (`hpcds1mpi train`) or restore it"


def default_bundle_path() -> Path:
    """Where the bundle shipped with the package lives (``hpcds1mpi/data/default_model``)."""
    from hpcds1mpi import SHIPPED_MODEL

    return SHIPPED_MODEL


def is_bundle(path: str | os.PathLike) -> bool:
    """Whether folder ``path`` holds a bundle this tool wrote (any format version).

    Ours: a ``manifest.json`` that is a JSON object with ``format_version``, ``targets`` and
    ``feature_spec``, a README (if any) that says it is a bundle, and no file that a bundle
    does not have. Only such a folder may be replaced (``train --force``, ``learn``).
    """
    path = Path(path)
    try:
        manifest = json.loads((path / MANIFEST).read_text())
        names = {p.name for p in path.iterdir()}
        readme = (path / README).read_text() if README in names else BUNDLE_README_TITLE
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    if not isinstance(manifest, dict) or not {"format_version", "targets",
                                              "feature_spec"} <= manifest.keys():
        return False
    extra = {n for n in names - BUNDLE_FILES if not n.startswith(".hpcds1mpi-tmp-")}
    return readme.startswith(BUNDLE_README_TITLE) and not extra


def write_bundle(path: Path, model: SurrogateModel, manifest: dict, data: "pd.DataFrame | None",
                 matrix: np.ndarray | None) -> None:
    """Write the bundle files into the folder ``path`` (a new, empty one: ``Bundle.save`` fills
    a temporary folder and swaps it in whole).

    Args:
        path: the bundle directory.
        model: the fitted surrogate.
        manifest: the manifest; its ``embedding`` entry is set here.
        data: the training rows (with ``kept``); None: the caller has put the training files
            (rows, matrix, measured levels) there already (their hashes are recorded too).
        matrix: (n_train, f + d) float32 training matrix, written with ``data``.
    """
    if model.embedding_ is not None:
        arrays, meta = model.embedding_.to_arrays()
        np.savez(path / "embedding.npz", **arrays)
        manifest["embedding"] = meta
    else:
        manifest["embedding"] = None
    with open(path / "members.pkl", "wb") as fh:
        pickle.dump(model.members_, fh, protocol=pickle.HIGHEST_PROTOCOL)
    if model.levels_ or model.noise_:
        (path / PROBLEM_LEVELS).write_text(json.dumps(
            {"levels": {t: lv.as_dict() for t, lv in model.levels_.items()},
             "workload_noise": model.noise_}))
    if getattr(model, "size_neighbours_", None) is not None:
        np.savez(path / SIZE_NEIGHBOURS, **model.size_neighbours_.to_arrays())
    if data is not None:
        with open(path / TRAINING_DATA, "wb") as fh:  # a file, not a path: see read_training_rows
            data.to_parquet(fh, index=False)
        np.save(path / TRAINING_MATRIX, matrix)
        write_levels(path, levels_from_frame(data))
        write_training_frame(path, data)
    manifest["files"] = file_hashes(path)
    with open(path / MANIFEST, "w") as fh:
        json.dump(manifest, fh, indent=2, default=_json_default)
    (path / README).write_text(readme_text(manifest))


def read_training_rows(path: Path, columns: "tuple[str, ...] | None" = None) -> "pd.DataFrame":
    """The training rows stored in bundle directory ``path``: every column, or those of
    ``columns`` the file has.

    Raises:
        ModelError: the file is unreadable.
    """
    import pandas as pd

    try:
        # an open file: pandas and pyarrow expand a path's leading "~" to $HOME, and a bundle
        # folder named "~" (``--out=~/m``, which bash leaves as it is) must be that folder
        with open(path / TRAINING_DATA, "rb") as fh:
            if columns is not None:
                import pyarrow.parquet as pq

                names = set(pq.read_schema(fh).names)
                columns = [c for c in columns if c in names]
            return pd.read_parquet(fh, columns=columns)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise ModelError(f"{path}: training data unreadable ({exc}); "
                         "retrain with `hpcds1mpi train`") from None


def read_training_matrix(path: Path) -> np.ndarray | None:
    """The stored training matrix of bundle directory ``path``; None when there is none.

    Raises:
        ModelError: the file is there but unreadable (cut short, empty, a folder): one line
            naming it (an empty file's EOFError would read as Ctrl-C to the CLI).
    """
    file = Path(path) / TRAINING_MATRIX
    if not file.exists() and not file.is_symlink():
        return None
    try:
        matrix = np.load(file, allow_pickle=False)
    except (OSError, ValueError, EOFError, RuntimeError) as exc:
        raise ModelError(f"bundle {path}: {TRAINING_MATRIX} is unreadable "
                         f"({type(exc).__name__}: {_first_line(exc)}); {RESTORE}") from None
    if not isinstance(matrix, np.ndarray) or matrix.ndim != 2:
        raise ModelError(f"bundle {path}: {TRAINING_MATRIX} is not a 2-D matrix; {RESTORE}")
    return matrix


def file_hashes(path: Path) -> dict[str, str]:
    """SHA-256 of each of :data:`HASHED_FILES` in folder ``path`` (those present)."""
    return {name: sha256_file(path / name) for name in HASHED_FILES if (path / name).is_file()}


def check_file_hashes(path: Path, manifest: dict) -> None:
    """Refuse a bundle whose files are not the ones its manifest recorded: a file changed,
    missing, or present where the manifest recorded none. Called before anything is
    unpickled. A manifest without ``files`` (written before the hashes) is not checked.

    Raises:
        ModelError: one line naming the bundle and the first file that does not match.
    """
    recorded = manifest.get("files")
    if recorded is None:
        return
    for name in HASHED_FILES:
        file = path / name
        present = file.exists() or file.is_symlink()
        if name not in recorded and not present:
            continue
        if name in recorded and not present:
            raise ModelError(f"bundle {path}: {name} is missing (its manifest records it): "
                             "retrain (`hpcds1mpi train`) or restore it")
        try:
            same = name in recorded and sha256_file(file) == recorded[name]
        except OSError:  # a folder, a link loop, unreadable
            same = False
        if not same:
            raise ModelError(f"bundle {path}: {name} does not match its manifest: retrain "
                             "(`hpcds1mpi train`) or restore it")


def refuse_unreadable_files(path: Path) -> None:
    """Refuse, before any file is read, a bundle with a file this user may not read: it is a
    permission to ask for, not a bundle to retrain (s34 tester U5: a 0600 manifest read as
    "unreadable ...; retrain the bundle").

    Raises:
        ModelError: one line naming the first such file, whose it is and what to do.
    """
    from hpcds1mpi.runtime.denied_access import denied_line

    try:
        entries = sorted(os.scandir(path), key=lambda entry: entry.name)
    except OSError:
        return  # the folder itself: read_bundle's own reads say what is wrong
    for entry in entries:
        if entry.name != README and entry.is_file() and not os.access(entry.path, os.R_OK):
            raise ModelError(denied_line(entry.path, "model bundle file"))


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()
    return text[0][:160] if text else ""


def read_bundle(path: str | os.PathLike | None = None) -> tuple[SurrogateModel, dict, Path]:
    """The fitted model and manifest of a bundle directory, without retraining.

    Args:
        path: the bundle directory; None reads the bundle shipped with the package
            (:func:`default_bundle_path`).

    Returns:
        (model, manifest, the directory).

    Raises:
        ModelError: missing directory or files, or a different bundle format version.
    """
    from .features import FEATURE_FORMAT, FeatureSpec

    path = Path(path) if path is not None else default_bundle_path()
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise ModelError(f"{path}: not a model bundle (no {MANIFEST}); train one with "
                         "`hpcds1mpi train --telemetry FILE --out DIR`")
    from .bundle_trust import check_bundle_permissions

    check_bundle_permissions(path)  # before anything is read: pickles run code
    refuse_unreadable_files(path)
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8 text at all
        raise ModelError(f"{manifest_path}: unreadable ({exc}); retrain the bundle") from None
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if type(version) is not int:  # "1" or 1.0 or true is not format 1
        raise ModelError(f"{manifest_path}: format_version is {version!r}, not a whole number; "
                         "the manifest is damaged: retrain with `hpcds1mpi train`")
    if version != BUNDLE_FORMAT:
        raise ModelError(f"{path}: bundle format {version} but this hpcds1mpi reads format "
                         f"{BUNDLE_FORMAT}; retrain with `hpcds1mpi train`")
    from hpcds1mpi.schemas.manifest import check_manifest_fast

    # every key typed: one line, not a KeyError (pydantic only when something is wrong)
    check_manifest_fast(manifest, str(manifest_path))
    spec = FeatureSpec.from_dict(manifest["feature_spec"])
    if spec.format != FEATURE_FORMAT:
        raise ModelError(f"{path}: feature format {spec.format} but this hpcds1mpi builds "
                         f"format {FEATURE_FORMAT}; retrain with `hpcds1mpi train`")
    model = SurrogateModel(family=manifest["family"], n_members=manifest["n_members"],
                           use_embedding=manifest["use_embedding"], seed=manifest["seed"],
                           use_baseline=manifest.get("use_baseline", False),
                           member_features=manifest.get("member_features"))
    model.spec_ = spec
    model.targets_ = list(manifest["targets"])
    model.n_features_in_ = len(spec.names)
    check_file_hashes(path, manifest)  # before any pickle is read
    try:
        if manifest.get("embedding"):
            from .embedding import TabNetEmbedding  # only a bundle with one (numba, tabnet)

            with np.load(path / "embedding.npz") as npz:
                arrays = {k: npz[k] for k in npz.files}
            model.embedding_ = TabNetEmbedding.from_arrays(arrays, manifest["embedding"])
        else:
            model.embedding_ = None
        with open(path / "members.pkl", "rb") as fh:
            model.members_ = pickle.load(fh)
        check_members(model.members_, model.targets_, path)
        if (path / PROBLEM_LEVELS).is_file():
            levels = json.loads((path / PROBLEM_LEVELS).read_text())
            model.levels_ = {t: ProblemLevels.from_dict(v)
                             for t, v in levels["levels"].items()}
            model.noise_ = {str(w): float(v) for w, v in levels["workload_noise"].items()}
        if (path / SIZE_NEIGHBOURS).is_file():
            from .size_neighbours import SizeNeighbours

            with np.load(path / SIZE_NEIGHBOURS, allow_pickle=False) as npz:
                model.size_neighbours_ = SizeNeighbours.from_arrays(npz)
        if not (path / TRAINING_DATA).is_file():
            raise OSError(f"{TRAINING_DATA} missing")
    except (OSError, pickle.UnpicklingError, EOFError, KeyError, ValueError, OverflowError,
            TypeError, AttributeError, IndexError, ImportError) as exc:  # a damaged pickle
        raise ModelError(f"{path}: bundle is incomplete or damaged ({type(exc).__name__}: "
                         f"{exc}); retrain with `hpcds1mpi train`") from None
    return model, manifest, path


def check_members(members, targets: list[str], path: Path) -> None:
    """Refuse an unpickled ``members.pkl`` that is not each manifest target's list of fitted
    members (a hash only says the file is the one recorded, not what it holds).

    Raises:
        ModelError: one line naming the bundle and what the file holds instead.
    """
    def refuse(holds: str) -> NoReturn:
        raise ModelError(f"cannot read model bundle {path}: members.pkl holds {holds}, not "
                         f"a list of fitted members for each of {', '.join(targets)}; {RESTORE}")

    if not isinstance(members, dict):
        refuse(f"a value of type {type(members).__name__}")
    if set(members) != set(targets):
        named = ", ".join(repr(k)[:40] for k in list(members)[:8])  # one short line
        refuse(f"members for {named or 'no target'}")
    for target, fitted in members.items():
        if not isinstance(fitted, list):
            refuse(f"a value of type {type(fitted).__name__} for {target}")
        if not fitted:
            refuse(f"no member for {target}")
        odd = next((m for m in fitted if not any(callable(getattr(m, name, None)) for name in
                                                  ("predict", "predict_proba"))), None)
        if odd is not None:
            refuse(f"a {target} member of type {type(odd).__name__}, which cannot predict")


def _json_default(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


__all__ = ["BUNDLE_FILES", "BUNDLE_FORMAT", "FRAME_COLUMNS", "HASHED_FILES", "LAUNCH_COLUMNS",
           "LEVELS_FILE", "MANIFEST", "TRAINING_FRAME", "check_file_hashes", "check_members",
           "default_bundle_path", "file_hashes", "is_bundle", "read_bundle",
           "read_training_columns", "read_training_frame", "read_training_matrix",
           "read_training_rows", "write_bundle", "write_training_frame"]
