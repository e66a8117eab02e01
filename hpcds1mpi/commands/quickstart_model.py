"""Whether quickstart's model is up to date with its sweep, so that a rerun with nothing new
neither retrains nor relearns (s37 tester K3: every rerun trained again, minutes for nothing).

After the model step succeeds, quickstart records in its folder's mark file what the model
was made from: the sweep's runs and machines (a digest of their values, not of the file's
bytes, which a resume may rewrite unchanged), the bundle's manifest (its SHA-256: a ``learn``
or ``train`` since then changes it), the model format and hpcds1mpi version, and the outputs
made from it. A rerun skips the model step only when all of these still hold and every file
the bundle is read from matches its manifest's hash; anything else (new runs, another
version, a missing, damaged or replaced bundle, no record: a folder from before, or a run
stopped before its end) trains or learns as before. The recommendation is made again unless
the script, recommendation and plot are also as that run wrote them.
"""

from __future__ import annotations

import json
from pathlib import Path

#: The line of the mark file that holds the record (one JSON object after it).
RECORD_PREFIX = "model made from: "


def read_record(mark: Path) -> dict | None:
    """The record in quickstart's mark file, or None (no file, no record, unreadable)."""
    try:
        lines = mark.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        if line.startswith(RECORD_PREFIX):
            try:
                record = json.loads(line[len(RECORD_PREFIX):])
            except json.JSONDecodeError:
                return None
            return record if isinstance(record, dict) else None
    return None


def record_line(model: Path, telemetry: Path, outputs: list[Path]) -> str:
    """The mark file's line recording that ``model`` was made from ``telemetry`` as it is now,
    and ``outputs`` (the script, recommendation and plot) from ``model``; "" where that cannot
    be read (no record: the next rerun makes everything again)."""
    from hpcds1mpi.digests import sha256_file

    try:
        record = {**_state(model, telemetry),
                  "outputs": {path.name: sha256_file(path) for path in outputs}}
    except Exception:  # an unreadable telemetry or bundle: nothing to trust later
        return ""
    return RECORD_PREFIX + json.dumps(record, sort_keys=True) + "\n"


def is_up_to_date(record: dict | None, model: Path, telemetry: Path) -> bool:
    """Whether ``model`` is still what quickstart made from ``telemetry`` as it is now (the
    ``record`` of the run that made it) and whole."""
    if not record:
        return False
    try:
        now = _state(model, telemetry)
        return all(record.get(key) == value for key, value in now.items()) \
            and _bundle_whole(model)
    except Exception:  # anything unreadable is something changed: train or learn again
        return False


def outputs_unchanged(record: dict | None, outputs: list[Path]) -> bool:
    """Whether each of ``outputs`` is as the run of ``record`` wrote it (none missing)."""
    from hpcds1mpi.digests import sha256_file

    written = (record or {}).get("outputs") or {}
    try:
        return all(path.is_file() and written.get(path.name) == sha256_file(path)
                   for path in outputs)
    except OSError:
        return False


def _state(model: Path, telemetry: Path) -> dict:
    from hpcds1mpi.digests import sha256_file
    from hpcds1mpi.surrogates.bundle_files import BUNDLE_FORMAT, MANIFEST
    from hpcds1mpi.surrogates.bundle_manifest import package_versions

    return {"runs": _telemetry_digest(telemetry), "manifest": sha256_file(model / MANIFEST),
            "format": BUNDLE_FORMAT, "hpcds1mpi": package_versions()["hpcds1mpi"]}


def _telemetry_digest(telemetry: Path) -> str:
    """SHA-256 of the sweep's runs and machines tables, value by value."""
    import hashlib

    import pandas as pd

    from hpcds1mpi.records.telemetry import read_machines, read_runs

    h = hashlib.sha256()
    for frame in (read_runs(telemetry), read_machines(telemetry)):
        h.update("\0".join(frame.columns).encode())
        h.update(pd.util.hash_pandas_object(frame.astype(str), index=False).to_numpy()
                 .tobytes())
    return h.hexdigest()


def _bundle_whole(model: Path) -> bool:
    """Whether ``model`` is a bundle of this format whose files are the ones its manifest
    recorded (one without hashes, from before them, is not taken as whole: trained again)."""
    from hpcds1mpi.errors import ModelError
    from hpcds1mpi.surrogates.bundle_files import (BUNDLE_FORMAT, MANIFEST, check_file_hashes,
                                                   is_bundle)

    if not is_bundle(model):
        return False
    manifest = json.loads((model / MANIFEST).read_text())
    if manifest.get("format_version") != BUNDLE_FORMAT or not manifest.get("files"):
        return False
    try:
        check_file_hashes(model, manifest)
    except ModelError:
        return False
    return True
