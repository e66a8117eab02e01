"""The schema of a cluster TOML file (the format: :mod:`hpcds1mpi.cluster`).

Every number is finite and in range (:mod:`.limits`), counts are positive integers, booleans and
strings are what they say, and an unknown key is refused with the list of known ones.
:func:`cluster_tables` returns plain dicts; :mod:`hpcds1mpi.cluster` builds its dataclasses.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, StrictStr, model_validator

from hpcds1mpi.errors import ClusterFileError

from .base import Count, GPUCount, MemoryGB, Schema, Watts, validate

FIX = "fix it in the cluster file"


class PartitionTable(Schema):
    """``[clusters.<name>.partitions.<partition>]``."""

    cores_per_node: Count
    memory_gb: MemoryGB
    max_nodes: Count = 1
    gpus_per_node: GPUCount = 0
    gpu_memory_gb: float = Field(0.0, ge=0, le=1e6)
    gpu_model: StrictStr = ""
    cpu_model: StrictStr = ""
    idle_watts_node: Optional[Watts] = None
    max_watts_node: Optional[Watts] = None
    idle_watts_gpu: Optional[Watts] = None
    max_watts_gpu: Optional[Watts] = None
    slurm_partition: StrictStr = ""

    @model_validator(mode="after")
    def _consistent(self):
        if self.gpus_per_node > 0 and self.gpu_memory_gb <= 0:
            raise ValueError("has GPUs but no gpu_memory_gb; give the memory of one GPU in GB")
        if self.gpus_per_node == 0:
            # GPU fields on a partition without a GPU count: a forgotten gpus_per_node would
            # make a GPU partition a CPU one without a word.
            given = [k for k in ("gpu_model", "gpu_memory_gb", "idle_watts_gpu", "max_watts_gpu")
                     if getattr(self, k) not in (None, "", 0, 0.0)]
            if given:
                count = "gpus_per_node is 0" if "gpus_per_node" in self.model_fields_set \
                    else "no gpus_per_node"
                raise ValueError(f"has {', '.join(given)} but {count}; give gpus_per_node (the "
                                 f"GPUs per node), or remove {', '.join(given)} for a CPU "
                                 "partition")
        for what in ("node", "gpu"):
            idle, peak = getattr(self, f"idle_watts_{what}"), getattr(self, f"max_watts_{what}")
            if idle is not None and peak is not None and idle > peak:
                raise ValueError(f"idle_watts_{what} {idle:g} is above max_watts_{what} "
                                 f"{peak:g}")
        return self


class ClusterSettings(Schema):
    """A cluster's site settings: ``[clusters.<name>]``, or ``[cluster]`` (with ``name``)."""

    name: Optional[StrictStr] = None
    account: StrictStr = ""
    qos: StrictStr = ""
    modules: list[StrictStr] = []
    gres_syntax: Literal["gpus-per-node", "gres"] = "gpus-per-node"
    mpi: StrictStr = ""  # unset: srun's pmi2; set (pmi2 too), it wins over a model's
    launcher: StrictStr = ""
    mpiexec: StrictStr = ""
    launcher_args: StrictStr = ""
    preamble: list[StrictStr] = []

    @model_validator(mode="after")
    def _launch_settings(self):
        import shlex

        if self.mpi and self.mpi not in ("pmix", "pmi2", "none", "cray_shasta") and \
                not self.mpi.startswith("pmix_v"):
            raise ValueError(f"mpi {self.mpi!r} is not an srun --mpi plugin; use pmix, pmi2, "
                             "none (or pmix_vN, cray_shasta)")
        try:
            shlex.split(self.launcher_args)
        except ValueError as exc:
            raise ValueError(f"launcher_args {self.launcher_args!r} cannot be parsed ({exc}); "
                             "fix its quoting") from None
        if self.mpiexec and not self.mpiexec.startswith("/") and "/" in self.mpiexec:
            raise ValueError(f"mpiexec {self.mpiexec!r}: give an absolute path or a name on PATH")
        return self


class ClusterTable(ClusterSettings):
    """``[clusters.<name>]`` with its ``partitions`` tables."""

    partitions: dict[StrictStr, PartitionTable] = Field(min_length=1)


def _check_name(path: str, what: str, name: str, table: str) -> None:
    """Refuse a cluster or partition name that ``CLUSTER/PARTITION`` could not name: empty,
    or holding ``/`` (``--partition a/b/c`` would be ambiguous)."""
    if not name.strip() or "/" in name:
        raise ClusterFileError(f"{path}: {what} name {name!r} ({table}) must be non-empty and "
                               "without '/' (--partition CLUSTER/PARTITION uses it); rename "
                               "the table")


def _check_partition_names(path: str, partitions, prefix: str) -> None:
    for pname in partitions if isinstance(partitions, dict) else ():
        _check_name(path, "partition", pname, f"[{prefix}partitions.{pname}]")


def cluster_tables(doc: dict, path: str) -> dict[str, dict]:
    """The clusters of a cluster file, checked: ``{name: {..., "partitions": {name: {...}}}}``.

    Args:
        doc: the TOML document.
        path: the file, for the message.

    Raises:
        ClusterFileError: one line naming the file, the key path, the problem and the fix.
    """
    if "clusters" in doc:
        extra = sorted(set(doc) - {"clusters"})
        if extra:
            raise ClusterFileError(f"{path}: unknown top-level key(s) {', '.join(extra)} "
                                   "(known: clusters); " + FIX)
        clusters = doc["clusters"]
        if not isinstance(clusters, dict) or not clusters:
            raise ClusterFileError(f"{path}: [clusters] is empty; add [clusters.<name>]")
        named = {}
        for cname, ctable in clusters.items():
            if not isinstance(ctable, dict):
                raise ClusterFileError(f"{path}: clusters.{cname} must be a table; {FIX}")
            if not isinstance(ctable.get("partitions"), dict) or not ctable["partitions"]:
                raise ClusterFileError(f"{path}: clusters.{cname} has no partitions table; "
                                       f"add [clusters.{cname}.partitions.<name>]")
            if "name" in ctable:
                raise ClusterFileError(f"{path}: unknown key clusters.{cname}.name (the table's "
                                       "name is the cluster's); " + FIX)
            _check_name(path, "cluster", cname, f"[clusters.{cname}]")
            _check_partition_names(path, ctable["partitions"], f"clusters.{cname}.")
            named[cname] = ctable
        checked = validate(_Clusters, {"clusters": named}, source=path,
                           error=ClusterFileError, fix=FIX)
        return {n: c.model_dump(exclude={"name"}) for n, c in checked.clusters.items()}
    if "partitions" in doc:
        extra = sorted(set(doc) - {"cluster", "partitions"})
        if extra:
            raise ClusterFileError(f"{path}: unknown top-level key(s) {', '.join(extra)} "
                                   "(known: cluster, partitions); " + FIX)
        head = doc.get("cluster", {})
        if not isinstance(head, dict):
            raise ClusterFileError(f"{path}: cluster must be a table; {FIX}")
        if not isinstance(doc["partitions"], dict) or not doc["partitions"]:
            raise ClusterFileError(f"{path}: cluster has no partitions table; add "
                                   "[partitions.<name>] with cores_per_node and memory_gb")
        if "partitions" in head:
            raise ClusterFileError(f"{path}: unknown key cluster.partitions (give "
                                   "[partitions.<name>] tables at the top level); " + FIX)
        _check_partition_names(path, doc["partitions"], "")
        checked = validate(_Single, doc, source=path, error=ClusterFileError, fix=FIX)
        table = {**checked.cluster.model_dump(),
                 "partitions": {n: p.model_dump() for n, p in checked.partitions.items()}}
        from pathlib import Path

        name = table.pop("name") or Path(path).stem
        _check_name(path, "cluster", name, "cluster.name")
        return {name: table}
    raise ClusterFileError(f"{path}: no [clusters.<name>] or [partitions.<name>] table; "
                           "see the docstring of hpcds1mpi/cluster.py for the format")


class _Clusters(Schema):
    clusters: dict[StrictStr, ClusterTable]


class _Single(Schema):
    cluster: ClusterSettings = ClusterSettings()
    partitions: dict[StrictStr, PartitionTable]
