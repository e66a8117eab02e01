"""What a PBS Pro script's resource request asks for: its ``select`` chunks and ``place``.

PBS Pro places chunks by ``-l place=[arrangement][:sharing][:group=res]``: ``pack`` puts every
chunk on one host, ``scatter`` / ``vscatter`` one chunk per host (vnode), ``free`` (the
default) wherever they fit, several on one host when it has room. A ``select`` of several chunk
specs (``2:ncpus=2:mpiprocs=2+1:ncpus=1:mpiprocs=1``) counts every chunk and its ``mpiprocs``
(the ``$PBS_NODEFILE`` lines). An old-style request (``-l ncpus=4``, no ``select``) is one chunk
on one host, as PBS converts it (``select=1:ncpus=4``); qsub refuses such job-wide chunk
resources beside a ``select`` or ``place`` ("-lresource= cannot be used with select or
place"), so :mod:`hpcds1mpi.launch.script_rewrite` moves them into the chunk it writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.script_options import Option, to_int

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript

#: ``place`` arrangements; the first is PBS's default.
ARRANGEMENTS = ("free", "pack", "scatter", "vscatter")
#: Arrangements that give each chunk a host of its own.
ONE_CHUNK_PER_HOST = ("scatter", "vscatter")
#: Chunk-level resources that qsub refuses as job-wide ``-l`` beside a ``select``; the counts
#: among them follow the layout, the others (memory) are kept as written.
JOB_WIDE_CHUNK_RESOURCES = ("ncpus", "mpiprocs", "ompthreads", "ngpus", "mem", "vmem")
LAYOUT_RESOURCES = ("ncpus", "mpiprocs", "ompthreads", "ngpus")


def chunk_specs(select: str) -> list[dict[str, str]]:
    """The chunk specs of a ``select`` value, each resource -> value with its chunk count as
    ``count`` (``1`` where it is not written)."""
    specs = []
    for spec in select.split("+"):
        chunk = {"count": "1"}
        for k, part in enumerate(spec.split(":")):
            key, eq, value = part.partition("=")
            if eq:
                chunk[key] = value
            elif k == 0:
                chunk["count"] = part
        specs.append(chunk)
    return specs


def place_parts(value: str | None) -> tuple[str | None, list[str]]:
    """(the arrangement written, or None: PBS's ``free``; the other parts, sharing and group,
    as written)."""
    parts = [p for p in (value or "").split(":") if p]
    if parts and parts[0] in ARRANGEMENTS:
        return parts[0], parts[1:]
    return None, parts


def arrangement(script: "JobScript") -> str:
    """The script's ``place`` arrangement (``free`` where it says none)."""
    return place_parts(_value(script.directives.get("l:place")))[0] or "free"


def job_wide_chunk_resources(script: "JobScript") -> list[Option]:
    """The job-wide ``-l`` options that are chunk resources (``-l ncpus=4``), in the order of
    :data:`JOB_WIDE_CHUNK_RESOURCES`."""
    d = script.directives
    return [d[f"l:{k}"] for k in JOB_WIDE_CHUNK_RESOURCES if f"l:{k}" in d]


def _value(opt: Option | None) -> str | None:
    return opt.value if opt is not None else None


def _count(chunk: dict[str, str], key: str, default: int) -> int:
    return to_int(chunk.get(key)) or default


def read_select(script: "JobScript", select: Option) -> None:
    """Set what a ``select`` asks for: nodes, ranks, threads and GPUs per node, its first
    chunk spec's resources in ``script.select`` (where a rewrite edits them)."""
    pos = select.value_span[0]
    for part in select.value.split("+")[0].split(":"):
        key, eq, val = part.partition("=")
        key = key if eq else "count"
        script.select[key] = Option(key, val if eq else part, select.line,
                                    (pos, pos + len(part)),
                                    (pos + (len(key) + 1 if eq else 0), pos + len(part)))
        pos += len(part) + 1
    chunks = chunk_specs(select.value)
    counts = [_count(c, "count", 1) for c in chunks]
    ranks = [n * _count(c, "mpiprocs", 1) for n, c in zip(counts, chunks)]
    gpus = [n * _count(c, "ngpus", 0) for n, c in zip(counts, chunks)]
    placed = arrangement(script)
    script.threads = to_int(chunks[0].get("ompthreads"))
    if placed == "pack":  # every chunk on one host
        script.nodes, script.ntasks_per_node = 1, sum(ranks)
        script.gpus_per_node = sum(gpus)
        script.where("nodes", script.directives["l:place"].line)
    elif len(chunks) == 1:
        script.nodes, script.ntasks_per_node = counts[0], ranks[0] // counts[0]
        script.gpus_per_node = gpus[0] // counts[0]
    else:  # several chunk specs: every chunk a host, their ranks spread over them
        script.nodes, script.ntasks = sum(counts), sum(ranks)
        script.gpus_per_node = _count(chunks[0], "ngpus", 0)
        script.note(f"line {select.line}: {len(chunks)} chunk specs ({select.value}) are read "
                    f"as {sum(counts)} hosts with {sum(ranks)} ranks in all")
    for key in ("nodes", "ranks") + (("threads",) if script.threads else ()) \
            + (("gpus",) if any(gpus) else ()):  # advise names the line (s33 tester P5)
        script.where(key, select.line)


def free_place_note(script: "JobScript", cores_per_node: int) -> str | None:
    """The note for chunks that PBS may put together on one host: ``place=free`` (the default)
    with several chunks, two of which fit on one of ``cores_per_node`` cores (their ``ncpus``,
    1 where not given); None where none is at stake."""
    select = script.directives.get("l:select")
    if script.scheduler != "pbs" or select is None or not select.value \
            or arrangement(script) != "free":
        return None
    chunks = chunk_specs(select.value)
    if sum(_count(c, "count", 1) for c in chunks) < 2:
        return None
    smallest = min(_count(c, "ncpus", 1) for c in chunks)
    if 2 * smallest > cores_per_node:
        return None
    place = script.directives.get("l:place")
    return (f"line {(place or select).line}: place is free"
            f"{'' if place else ' (PBS default)'}, so PBS may put several chunks on one "
            f"{cores_per_node}-core host; read as one chunk per host (ask -l place=scatter to "
            "be sure)")


def read_job_wide(script: "JobScript") -> None:
    """An old-style request (``-l ncpus=4``, no ``select`` or ``nodes``): one host, as PBS
    converts it."""
    given = job_wide_chunk_resources(script)
    if not given:
        return
    values = {o.name[2:]: o.value for o in given}
    script.nodes = 1
    script.ntasks_per_node = to_int(values.get("mpiprocs")) or 1
    script.threads = to_int(values.get("ompthreads"))
    script.gpus_per_node = to_int(values.get("ngpus")) or 0
    script.where("nodes", given[0].line)
    if script.gpus_per_node:
        script.where("gpus", next(o.line for o in given if o.name == "l:ngpus"))


def host_cpus(script: "JobScript") -> tuple[int, int, str] | None:
    """(the most CPUs one host must hold, the line that asks, how it is asked) for a PBS
    request: a chunk's ``ncpus``, every chunk's together under ``place=pack``, or an old-style
    job-wide ``ncpus``; None where none is given."""
    select = script.directives.get("l:select")
    if select is not None and select.value:
        chunks = chunk_specs(select.value)
        if arrangement(script) == "pack":
            total = sum(_count(c, "count", 1) * (to_int(c.get("ncpus")) or 0) for c in chunks)
            return (total, select.line, f"its chunks together (place=pack) ask for ncpus="
                    f"{total} on one host") if total else None
        most = max((to_int(c.get("ncpus")) or 0 for c in chunks), default=0)
        return (most, select.line, f"each chunk asks for ncpus={most}") if most else None
    ncpus = script.directives.get("l:ncpus")
    if ncpus is not None and to_int(ncpus.value) and "l:nodes" not in script.directives:
        return (to_int(ncpus.value), ncpus.line,
                f"the job asks for ncpus={to_int(ncpus.value)} on one host")
    return None


def uneven_hosts(script: "JobScript") -> str:
    """Why a ``select`` whose chunk specs give their hosts different rank counts has no
    prediction ("" when every host gets the same): ``1:mpiprocs=2+1:mpiprocs=1`` runs 2 ranks
    on one host and 1 on the other, a layout the model (the same ranks on every node) cannot
    predict, and a saving computed from an even layout it does not run would be made up (s33
    tester P7). Under ``place=pack`` every chunk shares one host: nothing uneven."""
    select = script.directives.get("l:select")
    if script.scheduler != "pbs" or select is None or not select.value \
            or arrangement(script) == "pack":
        return ""
    chunks = chunk_specs(select.value)
    per_host = [_count(c, "mpiprocs", 1) for c in chunks]
    if len(set(per_host)) < 2:
        return ""
    hosts = " + ".join(f"{_count(c, 'count', 1)} x {n}" for c, n in zip(chunks, per_host))
    return (f"line {select.line}: the chunk specs give their hosts different rank counts "
            f"({hosts} ranks); the model predicts the same ranks on every node, so this "
            "layout has no prediction")
