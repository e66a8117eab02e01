"""Rewriting a PBS script's resource request to another layout (:mod:`hpcds1mpi.launch.
script_rewrite` edits the launch line and the thread variables).

The layout is N hosts with one chunk each: one chunk spec, ``select=N:ncpus=..:mpiprocs=..:
ompthreads=..`` (the first spec's other resources kept, the other specs dropped), and, for
more than one host, ``place=scatter`` (the sharing part, ``excl`` / ``shared`` / ``exclhost``,
and ``group=`` kept): ``pack`` would put every chunk on one host, ``free`` (PBS's default)
may. An old-style request (``-l ncpus=4``) gets a ``select`` instead of its job-wide chunk
resources, which qsub refuses beside one; a job-wide ``mem`` moves into the chunk. Torque's
``-l nodes=N:ppn=M`` keeps its form. A memory limit that leaves a host of the layout less than
its need (``Layout.memory_mib`` set) is raised to give it that, in its own terms
(:func:`hpcds1mpi.launch.pbs_memory.rewritten_asks`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.directives import format_pbs_walltime
from hpcds1mpi.launch.pbs_memory import rewritten_asks
from hpcds1mpi.launch.pbs_request import (LAYOUT_RESOURCES, ONE_CHUNK_PER_HOST, chunk_specs,
                                          job_wide_chunk_resources, place_parts)
from hpcds1mpi.launch.script_edits import Edits, directive_line, drop_resources

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript
    from hpcds1mpi.launch.script_options import Option
    from hpcds1mpi.launch.script_rewrite import Layout


def _counts(to: "Layout") -> dict[str, int]:
    """A chunk's layout resources for ``to`` (its GPUs only where it has some)."""
    values = {"ncpus": to.ranks_per_node * to.threads, "mpiprocs": to.ranks_per_node,
              "ompthreads": to.threads}
    return values | ({"ngpus": to.gpus_per_node} if to.gpus_per_node else {})


def _moved(script: "JobScript") -> list["Option"]:
    """The job-wide resources that go into the chunk (``mem``; the counts follow the layout),
    where the chunk does not ask for them itself."""
    return [o for o in job_wide_chunk_resources(script)
            if o.name[2:] not in LAYOUT_RESOURCES and o.name[2:] not in script.select]


def _raised(script: "JobScript", to: "Layout") -> dict[str, str]:
    """Resource name (``mem`` in the chunk, ``l:pmem`` job-wide) -> the value that gives a host
    of ``to`` its ``memory_mib``, for each memory limit that gives it less; {} where none is
    raised."""
    if not to.memory_mib:
        return {}
    return {a.option.name: a.raised(to.memory_mib)
            for a in rewritten_asks(script, to.nodes, to.ranks_per_node) if a.mib < to.memory_mib}


def _term_span(script: "JobScript", term: "Option") -> tuple[int, int]:
    """The span of a chunk term with one of the ``:`` beside it (``:ngpus=1``)."""
    start, end = term.span
    select = script.directives["l:select"]
    return (start - 1, end) if start > select.value_span[0] else (start, end + 1)


def _select(e: Edits, script: "JobScript", to: "Layout", moved: list["Option"],
            raised: dict[str, str]) -> None:
    values = _counts(to)
    gpus = script.select.get("ngpus")
    if gpus is not None and not to.gpus_per_node:  # a CPU layout asks for no GPU: the term
        e.edits.append(_term_span(script, gpus) + ("",))  # goes, not ngpus=0 (s33 tester P5)
    for key, value in [("count", to.nodes), *values.items(), *raised.items()]:
        if key in script.select:
            e.put(script.select[key], value, key)
    select = script.directives["l:select"]
    if "count" not in script.select:  # ``select=ncpus=2``: one chunk, its count not written
        e.insert(select.value_span[0], f"{to.nodes}:")
    first_end = max(o.span[1] for o in script.select.values())
    missing = [f":{k}={v}" for k, v in values.items() if k not in script.select]
    missing += [f":{o.name[2:]}={raised.get(o.name, o.value)}" for o in moved]
    if missing:
        e.insert(first_end, "".join(missing))
    if select.value_span[1] > first_end:  # the other chunk specs: the layout is one spec
        e.edits.append((first_end, select.value_span[1], ""))


def _place(e: Edits, script: "JobScript", to: "Layout") -> None:
    """One chunk per host: ``place=scatter`` where more than one host is asked and the
    script's place does not give each chunk its own."""
    opt = script.directives.get("l:place")
    placed, rest = place_parts(opt.value if opt is not None else None)
    if to.nodes < 2 or placed in ONE_CHUNK_PER_HOST:
        return
    if opt is not None:
        e.put(opt, ":".join(["scatter", *rest]), "place")
    else:
        e.insert(directive_line(script), "#PBS -l place=scatter\n")


def pbs_directives(e: Edits, script: "JobScript", to: "Layout") -> None:
    """Edit a PBS script's directives to ask for ``to``."""
    d, raised = script.directives, _raised(script, to)
    kept = [d[k] for k in raised if k in d]  # job-wide ones that stay where they stand
    if "l:nodes" in d and not script.select:  # Torque: -l nodes=N:ppn=M
        opt = d["l:nodes"]
        rest = [p for p in opt.value.split(":")[1:] if not p.startswith(("ppn=", "gpus="))]
        chunk = ":".join([str(to.nodes), f"ppn={to.ranks_per_node}", *rest]
                         + ([f"gpus={to.gpus_per_node}"] if to.gpus_per_node else []))
        e.put(opt, chunk, "nodes")
    else:
        moved = _moved(script)
        # qsub refuses them beside a select
        drop_resources(e, job_wide_chunk_resources(script))
        kept = [o for o in kept if o not in job_wide_chunk_resources(script)]
        if script.select:
            _select(e, script, to, moved, raised)
        else:
            chunk = "".join([f"select={to.nodes}"] + [f":{k}={v}" for k, v in
                                                        _counts(to).items()]
                            + [f":{o.name[2:]}={raised.get(o.name, o.value)}" for o in moved])
            e.insert(directive_line(script), f"#PBS -l {chunk}\n")
        _place(e, script, to)
    for opt in kept:
        e.put(opt, raised[opt.name], opt.name[2:])
    if to.time_s:
        if "l:walltime" in d:
            e.put(d["l:walltime"], format_pbs_walltime(to.time_s), "walltime")
        else:
            e.insert(directive_line(script), f"#PBS -l walltime="
                     f"{format_pbs_walltime(to.time_s)}\n")
    if to.partition and "q" in d:
        e.put(d["q"], to.partition, "-q")
    elif to.partition:  # the job would go to the default queue, not the one advised
        e.insert(directive_line(script), f"#PBS -q {to.partition}\n")


def _lost_with(specs: list[dict[str, str]]) -> str:
    """What the dropped chunk specs asked beyond the layout and the kept spec (``mem=1gb``),
    said with the note: a memory request lost unsaid could get the job killed."""
    lost = sorted({f"{k}={v}" for spec in specs[1:] for k, v in spec.items()
                   if k != "count" and k not in LAYOUT_RESOURCES and specs[0].get(k) != v})
    return (f", and with them their {', '.join(lost)}: add it to the select if the job "
            "needs it") if lost else ""


def pbs_notes(script: "JobScript", to: "Layout") -> list[str]:
    """What a rewrite to ``to`` leaves out of a PBS script's request, one line each: the chunk
    specs past the first, the job-wide chunk resources, a ``place`` that packed chunks."""
    if script.scheduler != "pbs" or ("l:nodes" in script.directives and not script.select):
        return []
    notes = []
    select = script.directives.get("l:select")
    specs = chunk_specs(select.value) if select is not None and select.value else []
    if len(specs) > 1:
        dropped = select.value.split("+", 1)[1]
        notes.append(f"line {select.line}: --rewrite writes one chunk spec for the "
                     f"recommended {to.nodes} host{'s' if to.nodes > 1 else ''} with "
                     f"{to.ranks_per_node} rank{'s' if to.ranks_per_node > 1 else ''} each; "
                     f"the other chunk spec{'s' if len(specs) > 2 else ''} (+{dropped}) "
                     f"{'are' if len(specs) > 2 else 'is'} dropped" + _lost_with(specs))
    job_wide = job_wide_chunk_resources(script)
    if job_wide:
        moved = _moved(script)
        names = ", ".join(f"-l {o.name[2:]}={o.value}" for o in job_wide)
        notes.append(f"line {job_wide[0].line}: qsub refuses job-wide {names} beside a select "
                     "(\"-lresource= cannot be used with select or place\"): --rewrite puts "
                     "the request into the select chunk" + (
                         f"; {', '.join(o.name[2:] for o in moved)} was the job's total and is "
                         "now asked per host: check it" if moved and to.nodes > 1 else ""))
    place = script.directives.get("l:place")
    placed = place_parts(place.value)[0] if place is not None else None
    if place is not None and to.nodes > 1 and placed not in ONE_CHUNK_PER_HOST:
        notes.append(f"line {place.line}: place={place.value} would put several chunks on one "
                     "host; --rewrite asks place=scatter, one chunk per host")
    return notes
