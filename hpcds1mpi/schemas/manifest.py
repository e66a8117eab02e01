"""The schema of a model bundle's ``manifest.json`` (written by
:func:`hpcds1mpi.surrogates.bundle.train_bundle`; the layout: ``surrogates/bundle_files.py``).

What prediction reads is required and typed; what only the README or a report reads is
optional (bundles of the same format written before it existed still load); an unknown key is
refused with the list of known ones, as is a manifest that is not a JSON object. A damaged
manifest is one line naming the key, never a traceback later at ``manifest["family"]``.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr

from hpcds1mpi.errors import ModelError

from .base import Schema, validate

FIX = "the bundle is damaged: retrain it with `hpcds1mpi train` (or restore its manifest.json)"

_Number = StrictInt | StrictFloat


class Manifest(Schema):
    """``manifest.json``, key by key."""

    format_version: StrictInt
    created: StrictStr
    feature_spec: dict[StrictStr, Any]
    targets: Annotated[list[StrictStr], Field(min_length=1)]
    workloads: list[StrictStr]
    size_range: dict[StrictStr, Annotated[list[_Number], Field(min_length=2, max_length=2)]]
    machine_ids: list[StrictStr]
    partitions: dict[StrictStr, dict[StrictStr, Any]]
    data_hash: StrictStr
    family: StrictStr
    n_members: Annotated[StrictInt, Field(ge=1)]
    use_embedding: StrictBool
    seed: StrictInt
    embedding: Optional[dict[StrictStr, Any]] = None
    # Optional: read with defaults, or only by the README and reports.
    packages: dict[StrictStr, Any] = {}
    embedding_targets: list[StrictStr] = []
    energy_source: StrictStr = "none"
    sampling: dict[StrictStr, Any] = {}
    metrics: dict[StrictStr, Any] = {}
    n_rows: Annotated[StrictInt, Field(ge=0)] = 0
    dropped_zero_runtime_jobs: Annotated[StrictInt, Field(ge=0)] = 0
    member_trees_and_learning_rate: Optional[list[_Number]] = None
    member_trees: Optional[Annotated[StrictInt, Field(ge=1)]] = None
    member_features: Optional[list[StrictStr]] = None
    use_baseline: StrictBool = False
    sources: list[StrictStr] = []


def check_manifest(manifest: Any, source: str) -> Manifest:
    """A bundle manifest, checked key by key.

    Args:
        manifest: what ``json.loads`` gave.
        source: the manifest file, for the message.

    Raises:
        ModelError: not an object, a key missing, unknown or of the wrong type (one line:
            the file, the key, the fix).
    """
    if not isinstance(manifest, dict):
        raise ModelError(f"{source}: not a JSON object (got {type(manifest).__name__}); {FIX}")
    return validate(Manifest, manifest, source=source, error=ModelError, fix=FIX)
