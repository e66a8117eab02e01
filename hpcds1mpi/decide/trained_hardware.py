"""The hardware a model bundle was trained on: its partition table, read two ways.

A bundle records, per partition it measured, ``cores_per_node``, ``memory_gb``,
``gpus_per_node`` (and more). System 1's memory limits and the guard's query rows need those
columns on rows that lack them (:func:`hardware_columns`); ``recommend`` and the guard need to
know which trained partition a partition of a cluster file corresponds to
(:func:`matching_partition`, with :func:`gpu_not_compared` saying where its GPU could not be
told apart from the trained one); System 1 asks the bundle about such a partition under its trained
name (:func:`trained_names`, :func:`as_trained`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition

#: Columns a prediction row takes from its partition.
HARDWARE_COLUMNS = ("cores_per_node", "memory_gb", "gpus_per_node")
#: A partition matches a trained one when its memory is within this share of it.
MEMORY_TOLERANCE = 0.25
#: ... and its GPU's memory within this share (GPUs come in sizes 10-20 % apart: 32 / 40 GB,
#: 80 / 94 GB; a reading of one card differs from its nominal size by a few %).
GPU_MEMORY_TOLERANCE = 0.1


def trained_partitions(bundle) -> dict:
    """The bundle's partition table: name -> hardware dict (empty when it has none)."""
    return dict(getattr(bundle, "partitions", {}) or {})


def hardware_columns(frame: "pd.DataFrame", partitions: dict) -> "pd.DataFrame":
    """A copy of ``frame`` with the hardware columns filled from a partition table.

    Values a row already has are kept; missing ones (or missing columns) come from
    ``partitions[row.partition]``, NaN where the table does not know the partition.

    Args:
        frame: rows with a ``partition`` column: a DataFrame, or
            :class:`~hpcds1mpi.surrogates.columns.Columns` (then Columns back, no pandas).
        partitions: partition name -> hardware dict (a bundle's ``partitions``).
    """
    from hpcds1mpi.surrogates.columns import is_columns

    if is_columns(frame):
        return _hardware_arrays(frame, partitions)
    frame = frame.copy()
    for col in HARDWARE_COLUMNS:
        mapped = frame["partition"].map(lambda p, c=col: (partitions.get(p) or {}).get(c, np.nan))
        frame[col] = frame[col].fillna(mapped) if col in frame.columns else mapped
    return frame


def _hardware_arrays(table, partitions: dict):
    """:func:`hardware_columns` of Columns: one look-up per distinct partition."""
    table = table.copy()
    names, inverse = np.unique(np.asarray(table["partition"]).astype(str), return_inverse=True)
    for col in HARDWARE_COLUMNS:
        values = [(partitions.get(p) or {}).get(col, np.nan) for p in names.tolist()]
        whole = values and all(isinstance(v, (int, np.integer)) for v in values)
        # pandas' map gives int64 where every value is whole, float64 (NaN: unknown) else
        mapped = np.asarray(values, dtype=np.int64 if whole else float)[inverse]
        if col not in table:
            table[col] = mapped
            continue
        have = np.asarray(table[col])
        if have.dtype.kind == "f":
            table[col] = np.where(np.isnan(have), mapped, have)
    return table


def matching_partition(bundle, partition: "Partition") -> str | None:
    """The trained partition ``partition`` corresponds to (same name and hardware, or same
    hardware), or None when the model never saw hardware like it.

    Same hardware: the same cores and GPUs per node, memory within
    :data:`MEMORY_TOLERANCE`, and on a GPU partition the same GPU (:func:`_same_gpu`) as far
    as the bundle records it; what it does not record is said by :func:`gpu_not_compared`.
    """
    trained = trained_partitions(bundle)
    if partition.name in trained and not hardware_differences(trained[partition.name],
                                                              partition):
        return partition.name
    for name, hw in trained.items():
        if not hardware_differences(hw, partition):
            return name
    return None


def hardware_differences(hw: dict, partition: "Partition") -> list[str]:
    """What keeps ``partition`` from matching the trained partition ``hw``, one phrase each
    with both values (s31 tester Q8: "unlike any machine" said nothing of what differs);
    empty when it matches (:func:`matching_partition`'s rule)."""
    try:
        cores = int(hw.get("cores_per_node", -1))
        gpus = int(hw.get("gpus_per_node", 0) or 0)
        mem = float(hw.get("memory_gb", 0))
    except (TypeError, ValueError):
        return ["its recorded hardware is unreadable"]
    found = []
    if cores != partition.cores_per_node:
        found.append(f"{partition.cores_per_node} cores per node, trained on {cores}")
    if gpus != partition.gpus_per_node:
        found.append(f"{partition.gpus_per_node} GPUs per node, trained on {gpus}")
    if not mem > 0:
        found.append("the trained partition records no memory")
    elif abs(mem - partition.memory_gb) > MEMORY_TOLERANCE * mem:
        found.append(f"memory {partition.memory_gb:g} GB per node, trained on {mem:g} GB "
                     f"(within {MEMORY_TOLERANCE:.0%} counts as the same)")
    try:
        same_gpu = _same_gpu(hw, partition)
    except (TypeError, ValueError):
        same_gpu = False
    if not same_gpu:
        found.append(f"GPU {partition.gpu_model or '?'} {partition.gpu_memory_gb:g} GB, "
                     f"trained on {hw.get('gpu_model') or '?'} "
                     f"{float(hw.get('gpu_memory_gb') or 0):g} GB")
    return found


#: What a CPU's name says besides which CPU it is: marks, "CPU", "Processor", "64-Core",
#: "@ 2.40GHz" (/proc/cpuinfo's "AMD EPYC 7763 64-Core Processor" is a cluster file's
#: "AMD EPYC 7763": s31 reviewer).
_CPU_NOISE = (r"\((?:r|tm|c)\)|\b(?:cpu|processor)\b|\b[\w]+-cores?\b"
              r"|@?\s*\d+(?:\.\d+)?\s*[gm]hz\b|@")


def _cpu_words(model: str) -> tuple:
    """The words that tell CPUs apart in a model name, lower case, the noise of
    :data:`_CPU_NOISE` dropped: "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz" ->
    (intel, xeon, gold, 6248)."""
    import re

    return tuple(re.sub(_CPU_NOISE, " ", str(model or "").casefold()).split())


def same_cpu(one: str, other: str) -> bool:
    """Whether two CPU names name the same CPU: their words (:func:`_cpu_words`) equal, or
    one's a word-prefix of the other's, so a short name ("AMD EPYC") matches every longer one
    ("AMD EPYC 7763"): it says less, and is not taken for another CPU."""
    a, b = _cpu_words(one), _cpu_words(other)
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def cpu_differs(bundle, partition: "Partition") -> str:
    """One line where the CPU ``partition`` names (this machine's, read from /proc/cpuinfo,
    or a cluster file's ``cpu_model``) is not the CPU the matching trained partition was
    measured on (its ``cpu_model`` in the bundle's partition table), s31 tester Q4: the same
    cores and memory on another CPU runs at other speeds, which ``learn`` knows (it refuses
    another machine's runs). ``""`` where either side does not name a CPU, none matches, or
    both name the same CPU (:func:`same_cpu`) of one generation (:func:`_other_generation`)."""
    trained = matching_partition(bundle, partition) if _cpu_words(partition.cpu_model) else None
    return "" if trained is None else _cpu_line(bundle, partition, trained)


def measured_partition(bundle, partition: "Partition") -> str | None:
    """The trained partition whose runs are measurements of ``partition``: the one of its
    hardware (:func:`matching_partition`) where its CPU is the one they ran on
    (:func:`cpu_differs`), else None. Runs of another CPU, or of a CPU generation its record
    does not tell (s38 tester K2: the shipped bundle's 22.1 ms gemm was "measured" on a VM
    that ran it in 9 ms), are no measurements here."""
    trained = matching_partition(bundle, partition)
    if trained is None or not _cpu_words(partition.cpu_model):
        return trained
    return None if _cpu_line(bundle, partition, trained) else trained


def _cpu_line(bundle, partition: "Partition", trained: str) -> str:
    """:func:`cpu_differs` of ``partition`` and its matching trained partition ``trained``."""
    hw = trained_partitions(bundle).get(trained) or {}
    measured = hw.get("cpu_model")
    if not _cpu_words(measured):
        return ""
    where = "" if trained == partition.name else f" (trained partition {trained})"
    if not same_cpu(measured, partition.cpu_model):
        return (f"partition {partition.name} has CPU {partition.cpu_model.strip()} but the "
                f"model was measured on CPU {str(measured).strip()}{where}: its predictions "
                "are another machine's; measure here and train on it to act without asking")
    return _other_generation(hw, partition, trained)


def _other_generation(hw: dict, partition: "Partition", trained: str) -> str:
    """One line where two CPUs of one generic name (``AMD EPYC``:
    :func:`~hpcds1mpi.cpu_signature.generic_cpu_name`) are not known to be one generation:
    the trained partition records no signature of its CPU (a bundle of an hpcds1mpi before
    session 38), or both record one and they differ. ``""`` where the names are specific or
    the signatures equal (s38 tester K2)."""
    from hpcds1mpi.cpu_signature import generic_cpu_name, untold_generation, untold_note

    measured = str(hw.get("cpu_model")).strip()
    fix = ("measure here and train a model on those runs (`hpcds1mpi quickstart`, or "
           "`hpcds1mpi sweep` then `train`) to act without asking")
    if untold_generation(hw):  # s38 tester F6: its runs, if measured here, need no measuring
        return untold_note(f"the model's partition {trained}", measured,
                           "if its runs were measured on this machine, resume their sweep here "
                           "(`hpcds1mpi sweep ... --out FILE --resume`: nothing is measured "
                           "again, they take this machine's id) and train the model again from "
                           "that file; else " + fix)
    signature, ours = str(hw.get("cpu_signature") or ""), partition.cpu_signature
    if generic_cpu_name(measured) and ours and signature != ours:
        return (f"partition {partition.name}'s CPU {partition.cpu_model.strip()!r} is "
                f"{ours}, but the model's partition {trained} was measured on {signature} "
                f"under that name: another CPU generation; {fix}")
    return ""


#: Words of a GPU's name that say its maker or product line, not which GPU it is.
_GPU_BRAND_WORDS = frozenset({"nvidia", "tesla", "geforce", "quadro", "amd", "radeon",
                              "instinct", "intel", "datacenter", "gpu"})


def _gpu_words(model: str) -> frozenset:
    """The words that tell GPUs apart in a model name: "NVIDIA H200" and "h200" -> {h200};
    "A100-SXM4-80GB" -> {a100, sxm4, 80gb}."""
    import re

    return frozenset(re.findall(r"[a-z0-9]+", model.lower())) - _GPU_BRAND_WORDS


def _same_gpu(hw: dict, partition: "Partition") -> bool:
    """Whether the partition's GPU can be the trained one: where both sides name a GPU model,
    the words of one are all in the other ("a100" and "NVIDIA A100-SXM4-80GB"; "a10" is not
    "a100"), and where both give a GPU's memory, it is within :data:`GPU_MEMORY_TOLERANCE`.
    A side that does not say is not compared (:func:`gpu_not_compared` says so); a CPU
    partition has nothing to compare."""
    if partition.gpus_per_node < 1:
        return True
    trained_model = _gpu_words(str(hw.get("gpu_model") or ""))
    model = _gpu_words(partition.gpu_model or "")
    if trained_model and model and not (model <= trained_model or trained_model <= model):
        return False
    trained_mem = float(hw.get("gpu_memory_gb") or 0)
    mem = float(partition.gpu_memory_gb or 0)
    return not (trained_mem > 0 and mem > 0
                and abs(trained_mem - mem) > GPU_MEMORY_TOLERANCE * trained_mem)


def gpu_not_compared(bundle, partition: "Partition") -> str:
    """One line when ``partition`` is matched to a trained partition (:func:`matching_partition`)
    while its GPU could not be compared with the one measured: the partition names a GPU model
    or GPU memory the bundle does not record for that partition (bundles record cores, memory
    and GPUs per node). ``""`` when the GPU was compared, the partition has no GPUs, or it
    matches no trained partition (then the hardware is unfamiliar, said elsewhere)."""
    if partition.gpus_per_node < 1:
        return ""
    trained = matching_partition(bundle, partition)
    if trained is None:
        return ""
    hw = trained_partitions(bundle).get(trained) or {}
    unknown = []
    if partition.gpu_model and not _gpu_words(str(hw.get("gpu_model") or "")):
        unknown.append("model")
    if partition.gpu_memory_gb and not float(hw.get("gpu_memory_gb") or 0):
        unknown.append("memory")
    if not unknown:
        return ""
    gpu = " ".join(x for x in (partition.gpu_model, f"{partition.gpu_memory_gb:g} GB"
                               if partition.gpu_memory_gb else "") if x)
    where = "there" if trained == partition.name else f"on {trained}"
    return (f"GPU {gpu} of partition {partition.name} not compared with the one measured "
            f"{where}: the model does not record that GPU's {' or '.join(unknown)}")


def trained_names(bundle, partitions: Sequence["Partition"]) -> dict[str, str]:
    """Partition name -> the name of the trained partition it corresponds to
    (:func:`matching_partition`), for those of ``partitions`` whose trained partition has
    another name; the others are absent (an empty dict for the common case). One look-up per
    partition, none per row."""
    renamed = {}
    for part in partitions:
        trained = matching_partition(bundle, part)
        if trained is not None and trained != part.name:
            renamed[part.name] = trained
    return renamed


def as_trained(table, renamed: dict[str, str]):
    """``table`` (Columns or DataFrame) with its ``partition`` column renamed by ``renamed``
    (:func:`trained_names`): what the bundle is asked. The partition name is a categorical
    model feature, so a name it never saw is predicted as none of its partitions, however
    alike the hardware. ``table`` itself is unchanged (the answer keeps the user's names);
    without renames it is returned as is."""
    if not renamed:
        return table
    from hpcds1mpi.surrogates.columns import Columns, is_columns

    if is_columns(table):
        codes = {c: table.coded(c) for c in table.columns if table.coded(c) is not None}
        coded = codes.pop("partition", None)
        if coded is None:  # a given table without codes: one look-up per distinct name
            names, inverse = np.unique(np.asarray(table["partition"]).astype(str),
                                       return_inverse=True)
            coded = (inverse.reshape(-1), names.tolist())
        # Two partitions may map to one trained name: codes into a list may repeat names.
        names = [renamed.get(str(n), str(n)) for n in coded[1]]
        codes["partition"] = (coded[0], names)
        data = dict(table.items())
        data["partition"] = np.asarray(names, dtype=str)[coded[0]]
        return Columns(data, codes)
    return table.assign(partition=_renamed_series(table["partition"], renamed))


def _renamed_series(series, renamed: dict[str, str]):
    """A DataFrame's partition column renamed (a categorical stays one, its categories
    merged where two names map to one)."""
    import pandas as pd

    if isinstance(series.dtype, pd.CategoricalDtype):
        old = [renamed.get(str(c), str(c)) for c in series.cat.categories]
        new = list(dict.fromkeys(old))
        where = np.asarray([new.index(n) for n in old] + [-1])  # code -1 (missing) stays
        return pd.Categorical.from_codes(where[series.cat.codes.to_numpy()], new)
    return series.map(lambda name: renamed.get(name, name))
