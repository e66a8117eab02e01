"""How a rewritten script's ``mpirun`` places a rank's threads (:mod:`~.script_rewrite`).

Open MPI's ``mpirun`` gives each rank one core unless told otherwise, so a rewrite that
changes the threads per rank must change the options that give a rank its cores:

* :func:`remap`: a ``--map-by`` value takes the new layout (``ppr:N:node`` its ranks per
  node, ``PE=T`` / ``pe=T`` in every form its threads; one thread drops ``PE=``: a core set
  as wide as the old threads on a node laid out for one thread per core fails to start,
  "binding more processes than cpus"). Other modifiers (``:OVERSUBSCRIBE``) stay.
* :func:`added_binding`: a launch of Open MPI's ``mpirun`` (known from the launcher's name
  or file, or the program's MPI: :func:`~hpcds1mpi.launch.launch_line_checks.launch_family`)
  that runs more than one thread per rank and places nothing itself gets the options ``recommend`` writes for its own scripts
  (:func:`~.open_mpi_binding.open_mpi_thread_binding`: ``--map-by slot:PE=T``, or
  ``--bind-to none`` where the node's cores are too few or unknown).
* :func:`binding_note`: what the rewrite added, or could not add (an MPI not known here; a
  binding of the script's own that gives a rank one core), and a ``ppr`` per socket (or
  other unit but the node) kept while the ranks per node change; and what the rewrite did to
  Intel MPI's ``I_MPI_PIN*`` values (:mod:`~hpcds1mpi.launch.script_intel_pinning`).
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.open_mpi_binding import (OPEN_MPI_BINDING_MCA, ThreadBinding,
                                               binds_its_own, open_mpi_thread_binding)
from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI
from hpcds1mpi.launch.script_intel_pinning import intel_pinning_note
from hpcds1mpi.launch.script_thread_binding import PE_MODIFIER, hydra_bind_value

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch
    from hpcds1mpi.launch.script_rewrite import Layout

#: Variables through which Open MPI's mpirun takes its mapping or binding policy.
_MCA_VARIABLES = tuple(f"OMPI_MCA_{prefix}" for prefix in OPEN_MPI_BINDING_MCA)


def remap(value: str, ranks_per_node: int, threads: int) -> str:
    """A ``--map-by`` value for ``ranks_per_node`` x ``threads``: ``ppr:N:node``'s N and every
    ``PE=`` modifier change (spelled as written; after ``:`` or, Open MPI 4.1's form, after
    ``,``: ``slot:PE=1,oversubscribe``); one thread drops ``PE=``, the modifier after it
    taking its separator. "" when nothing is left (``:PE=2``)."""
    pieces = re.split(r"([:,])", value)  # items at even indexes, separators between them
    items, seps = pieces[0::2], ["", *pieces[1::2]]
    if len(items) >= 3 and items[0].lower() == "ppr" and items[2].lower() == "node" \
            and items[1].isdigit() and seps[1:3] == [":", ":"]:
        items[1] = str(ranks_per_node)
    out, carried = [], None
    for sep, item in zip(seps, items):
        sep, carried = (carried, None) if carried is not None else (sep, None)
        pe = PE_MODIFIER.match(item)
        if pe is not None and threads <= 1:
            carried = sep  # ``node:PE=2,span`` -> ``node:span``, not ``node,span``
            continue
        out.append(sep + (f"{pe.group(1)}={threads}" if pe is not None else item))
    return "".join(out).strip(":,") if len(out) < len(items) else "".join(out)


def gives_core_sets(launch: "Launch") -> bool:
    """Whether ``launch``'s ``--map-by`` gives each rank a set of cores (``PE=T``)."""
    opt = launch.options.get("map-by")
    return bool(opt and opt.value and any(PE_MODIFIER.match(p)
                                          for p in re.split(r"[:,]", opt.value)))


def launcher_words(script: "JobScript", launch: "Launch") -> list[str]:
    """The launcher's own option words as written (between its name and the program)."""
    end = launch.spans[0][0] if launch.spans else launch.span[1]
    written = script.text[launch.span[1]:end]
    try:
        return shlex.split(written)
    except ValueError:  # unbalanced quotes: the words are only searched for option names
        return written.split()


def binding_given(script: "JobScript", launch: "Launch") -> bool:
    """Whether the script places or binds Open MPI's ranks itself: an option of the launch
    line (:func:`~.open_mpi_binding.binds_its_own`), or an ``OMPI_MCA_`` mapping or
    binding variable set before it (``export OMPI_MCA_hwloc_base_binding_policy=none``)."""
    if binds_its_own(launcher_words(script, launch)):
        return True
    before = [s.name for s in script.settings_before(launch)]
    return any(name.startswith(_MCA_VARIABLES) for name in [*before, *launch.env])


def added_binding(script: "JobScript", to: "Layout", family: str | None
                  ) -> ThreadBinding | None:
    """The options a rewrite adds to an Open MPI ``mpirun`` line that runs ``to``'s threads
    with no placement of its own, as ``recommend`` writes them; None when none are added."""
    launch = script.launch
    if launch is None or launch.kind != "mpi" or family != OPENMPI \
            or to.threads <= 1 or binding_given(script, launch):
        return None
    binding = open_mpi_thread_binding(_config(to), to.cores_per_node)
    return binding if binding.tokens else None


def _config(to: "Layout") -> Configuration:
    return Configuration(to.nodes, to.ranks_per_node, to.threads)


def unbinds_ranks(script: "JobScript", to: "Layout", family: str | None) -> bool:
    """Whether the rewritten launch no longer gives each rank cores of its own where the
    script's did (``PE=`` dropped for one thread, or ``--bind-to none`` added): then
    ``OMP_PLACES=cores`` / ``OMP_PROC_BIND=close`` would pin the first thread of every rank
    that shares the node's cores to the same core, and ``recommend`` writes neither."""
    launch = script.launch
    if launch is None or launch.kind != "mpi":
        return False
    if gives_core_sets(launch) and to.threads <= 1:
        return True
    added = added_binding(script, to, family)
    return added is not None and not added.binds_cores


def binding_note(script: "JobScript", to: "Layout", family: str | None) -> str | None:
    """What the rewrite did to or left in ``mpirun``'s placement for ``to``: a ``ppr`` per
    socket (or other unit) it keeps while the ranks per node change (:func:`_kept_ppr_note`),
    its binding for the threads (:func:`_thread_binding_note`), and Intel MPI's pinning
    variables (:func:`~.script_intel_pinning.intel_pinning_note`); None when none needs
    saying."""
    notes = [_kept_ppr_note(script, to), _thread_binding_note(script, to, family),
             _hydra_binding_note(script, to, family), intel_pinning_note(script, to, family)]
    return "; ".join(n for n in notes if n) or None


def _kept_ppr_note(script: "JobScript", to: "Layout") -> str | None:
    """The note for a ``--map-by ppr:N:socket`` (any unit but ``node``) when the ranks per
    node change: :func:`remap` keeps N, ranks per socket, which the new ranks per node need
    not match (Open MPI then refuses the job, or places other counts than asked)."""
    launch = script.launch
    opt = launch.options.get("map-by") if launch is not None and launch.kind == "mpi" \
        else None
    items = re.split(r"[:,]", opt.value or "") if opt is not None else []
    if len(items) < 3 or items[0].lower() != "ppr" or not items[1].isdigit() \
            or items[2].lower() == "node":
        return None
    try:
        was = script.layout(to.cores_per_node)[1]
    except ConfigError:  # the old ranks per node are not known: they may change
        was = None
    if was == to.ranks_per_node:
        return None
    return (f"line {launch.line}: --map-by {opt.value} places {items[1]} rank"
            f"{'' if items[1] == '1' else 's'} per {items[2]}, which --rewrite leaves as "
            f"written while the ranks per node become {to.ranks_per_node}: set it to fit "
            f"them (ppr:{to.ranks_per_node}:node places them per node)")


def _thread_binding_note(script: "JobScript", to: "Layout", family: str | None
                         ) -> str | None:
    """What the rewrite did to or left in ``mpirun``'s binding for ``to``'s threads: the
    options it added; for an MPI not known here, the ones to add by hand if it is Open MPI's;
    for Open MPI's with the script's own binding that gives a rank one core, the same. None
    when nothing needs saying (one thread, MPICH's hydra, which binds nothing by default)."""
    launch = script.launch
    if launch is None or launch.kind != "mpi" or to.threads <= 1 \
            or family == MPICH:
        return None
    added = added_binding(script, to, family)
    if added is not None:
        return f"line {launch.line}: --rewrite adds it: {added.note}"
    wanted = " ".join(open_mpi_thread_binding(_config(to), to.cores_per_node).tokens)
    if family is None and not binding_given(script, launch):
        return (f"line {launch.line}: {launch.launcher}'s MPI is not known here; if it is "
                f"Open MPI's, it binds each rank to one core, which its {to.threads} threads "
                f"would share: add {wanted} to it (MPICH and Intel MPI bind nothing by "
                "default)")
    if family == OPENMPI and _one_core_each(launch):
        own = " ".join(script.text[o.span[0]:o.span[1]] for name, o in launch.options.items()
                       if name in ("map-by", "bind-to"))
        return (f"line {launch.line}: the script's own Open MPI binding ({own}) binds each "
                f"rank to one core, which its {to.threads} threads would share; --rewrite "
                f"leaves it as written: give {wanted}"
                + ("" if "none" in wanted else " (or --bind-to none)"))
    return None


def _hydra_binding_note(script: "JobScript", to: "Layout", family: str | None) -> str | None:
    """What the rewrite does to hydra's ``-bind-to core`` for ``to``'s threads (``core:T``:
    each rank T cores of its own, s31 tester P3); None when it keeps it."""
    launch = script.launch
    bound = hydra_bind_value(launch, to.threads) if launch is not None \
        and family == MPICH else None
    return (f"line {launch.line}: --rewrite gives hydra -bind-to {bound} (each rank "
            f"{to.threads} core(s) of its own for its {to.threads} thread(s))") if bound else None


def _one_core_each(launch: "Launch") -> bool:
    """Whether ``launch``'s own options bind each rank to one core or hardware thread:
    ``--bind-to core``, or ``--map-by slot`` / ``core`` / ``hwthread`` without ``--bind-to``
    (Open MPI then binds a small job's ranks to a core each), with no ``PE=``."""
    if gives_core_sets(launch) or "cpus-per-task" in launch.options:
        return False
    bind, mapping = (launch.options.get(k) for k in ("bind-to", "map-by"))
    if bind is not None:
        return (bind.value or "").lower().split(":")[0] in ("core", "hwthread")
    return mapping is not None and (mapping.value or "").lower().split(":")[0] in (
        "slot", "core", "hwthread")
