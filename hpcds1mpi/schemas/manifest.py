"""The schema of a model bundle's ``manifest.json`` (written by
:func:`hpcds1mpi.surrogates.bundle.train_bundle`; the layout: ``surrogates/bundle_files.py``).

What prediction reads is required and typed; what only the README or a report reads is
optional (bundles of the same format written before it existed still load); an unknown key is
refused with the list of known ones, as is a manifest that is not a JSON object. A damaged
manifest is one line naming the key, never a traceback later at ``manifest["family"]``.

Loading a bundle (every ``recommend``) checks the manifest with :func:`manifest_is_sound`, a
few dictionary and type tests of every key that accept only what the pydantic schema
(:data:`Manifest`, built on first use: importing pydantic cost a cold ``recommend`` 0.13 s)
accepts; anything they cannot confirm goes to the schema, which says what is wrong
(:func:`check_manifest_fast`).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Callable

from hpcds1mpi.errors import ModelError

FIX = "the bundle is damaged: retrain it with `hpcds1mpi train` (or restore its manifest.json)"


@lru_cache(maxsize=1)
def _manifest_class():
    """The pydantic schema (defined here, not at import: see the module docstring)."""
    from typing import Annotated, Optional

    from pydantic import (AfterValidator, Field, StrictBool, StrictFloat, StrictInt, StrictStr,
                          model_validator)

    from .base import Schema

    _Number = StrictInt | StrictFloat
    _HEX64 = r"^[0-9a-f]{64}$"

    class Manifest(Schema):
        """``manifest.json``, key by key."""

        format_version: StrictInt
        created: StrictStr
        feature_spec: dict[StrictStr, Any]
        targets: Annotated[list[StrictStr], Field(min_length=1)]
        workloads: list[StrictStr]
        size_range: dict[StrictStr, Annotated[list[_Number], Field(min_length=2, max_length=2),
                                              AfterValidator(_smallest_first)]]
        machine_ids: list[StrictStr]
        partitions: dict[StrictStr, dict[StrictStr, Any]]
        data_hash: StrictStr
        family: StrictStr
        n_members: Annotated[StrictInt, Field(ge=1)]
        use_embedding: StrictBool
        seed: StrictInt
        # Required (null without an embedding): without it the members, trained on
        # [features, embedding], would be fed the features alone.
        embedding: Optional[dict[StrictStr, Any]]
        # SHA-256 of each model file (``bundle_files.HASHED_FILES``); absent in bundles
        # written before it (they load unchecked).
        files: Optional[dict[StrictStr, Annotated[StrictStr, Field(pattern=_HEX64)]]] = None
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
        member_learning_rate: Optional[Annotated[StrictFloat, Field(gt=0, le=1)]] = None
        member_features: Optional[list[StrictStr]] = None
        use_baseline: StrictBool = False
        sources: list[StrictStr] = []
        # workload -> the stamps of the inputs its runs read (``surrogates/measured_inputs``)
        measured_inputs: dict[StrictStr, dict[StrictStr, Any]] = {}

        @model_validator(mode="after")
        def _embedding_when_used(self):
            if self.use_embedding and self.embedding is None:
                raise ValueError("embedding is null but use_embedding is true (the members "
                                 "were trained on the embedding too)")
            return self

    Manifest.__module__ = __name__
    return Manifest


def _smallest_first(pair: list) -> list:
    """A workload's ``size_range`` [smallest, largest]: reversed, recommend sent a size between
    them from one edge to the other until RecursionError (s47 tester M5)."""
    if pair[0] > pair[1]:
        raise ValueError(f"[{pair[0]:g}, {pair[1]:g}] is reversed: the smallest measured size "
                         "comes first")
    return pair


def __getattr__(name: str):
    # ``from hpcds1mpi.schemas.manifest import Manifest`` still works; it imports pydantic.
    if name == "Manifest":
        return _manifest_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_manifest(manifest: Any, source: str):
    """A bundle manifest, checked key by key by the schema.

    Args:
        manifest: what ``json.loads`` gave.
        source: the manifest file, for the message.

    Returns:
        the validated :data:`Manifest`.

    Raises:
        ModelError: not an object, a key missing, unknown or of the wrong type (one line:
            the file, the key, the fix).
    """
    if not isinstance(manifest, dict):
        raise ModelError(f"{source}: not a JSON object (got {type(manifest).__name__}); {FIX}")
    from .base import validate

    return validate(_manifest_class(), manifest, source=source, error=ModelError, fix=FIX)


def check_manifest_fast(manifest: Any, source: str) -> None:
    """:func:`check_manifest` without pydantic when the manifest is sound (the usual case);
    the same one-line :class:`ModelError` as the schema's when it is not."""
    if not manifest_is_sound(manifest):
        check_manifest(manifest, source)


# --------------------------------------------------------------------------------------------
# The cheap check: each test accepts a subset of what the schema's field accepts.


def _int(v) -> bool:
    return type(v) is int  # strict: no bool, no float, no text


def _number(v) -> bool:
    return type(v) is int or (type(v) is float and math.isfinite(v))


def _str(v) -> bool:
    return type(v) is str


def _bool(v) -> bool:
    return type(v) is bool


def _table(v) -> bool:
    return type(v) is dict and all(type(k) is str for k in v)


def _texts(v) -> bool:
    return type(v) is list and all(type(x) is str for x in v)


def _sha256_text(v) -> bool:
    return type(v) is str and len(v) == 64 and all(c in "0123456789abcdef" for c in v)


def _optional(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or test(v)


#: key -> (required, test).
_KEYS: dict[str, tuple[bool, Callable[[Any], bool]]] = {
    "format_version": (True, _int),
    "created": (True, _str),
    "feature_spec": (True, _table),
    "targets": (True, lambda v: _texts(v) and len(v) >= 1),
    "workloads": (True, _texts),
    "size_range": (True, lambda v: _table(v) and all(
        type(r) is list and len(r) == 2 and all(_number(x) for x in r) and r[0] <= r[1]
        for r in v.values())),
    "machine_ids": (True, _texts),
    "partitions": (True, lambda v: _table(v) and all(_table(p) for p in v.values())),
    "data_hash": (True, _str),
    "family": (True, _str),
    "n_members": (True, lambda v: _int(v) and v >= 1),
    "use_embedding": (True, _bool),
    "seed": (True, _int),
    "embedding": (True, _optional(_table)),
    "files": (False, _optional(lambda v: _table(v) and all(_sha256_text(x) for x in v.values()))),
    "packages": (False, _table),
    "embedding_targets": (False, _texts),
    "energy_source": (False, _str),
    "sampling": (False, _table),
    "metrics": (False, _table),
    "n_rows": (False, lambda v: _int(v) and v >= 0),
    "dropped_zero_runtime_jobs": (False, lambda v: _int(v) and v >= 0),
    "member_trees_and_learning_rate": (False, _optional(
        lambda v: type(v) is list and all(_number(x) for x in v))),
    "member_trees": (False, _optional(lambda v: _int(v) and v >= 1)),
    "member_learning_rate": (False, _optional(lambda v: type(v) is float and 0 < v <= 1)),
    "member_features": (False, _optional(_texts)),
    "use_baseline": (False, _bool),
    "sources": (False, _texts),
    "measured_inputs": (False, lambda v: _table(v) and all(_table(e) for e in v.values())),
}


def manifest_is_sound(manifest: Any) -> bool:
    """Whether every key of ``manifest`` is known and of its schema type, and every required
    key is there (True only where the schema would accept it too)."""
    if type(manifest) is not dict:
        return False
    if any(key not in _KEYS for key in manifest):
        return False
    for key, (required, test) in _KEYS.items():
        if key in manifest:
            if not test(manifest[key]):
                return False
        elif required:
            return False
    return not (manifest["use_embedding"] and manifest["embedding"] is None)
