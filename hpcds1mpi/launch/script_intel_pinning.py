"""Intel MPI's pinning variables in a user's batch script, against its layout (s35 tester I2).

Intel MPI's mpiexec pins each rank by the ``I_MPI_PIN*`` variables the script sets
(``export``, ``setenv``, ``NAME=value mpirun``, ``-genv NAME VALUE`` / ``-genv NAME=VALUE`` /
``-env`` on the launch line). A value chosen for one layout can defeat another:
``I_MPI_PIN_DOMAIN=core`` kept by a rewrite from 2 ranks x 1 thread to 1 x 2 ran both threads
on one core (0.27 s against 0.14-0.18 s), ``I_MPI_PIN_PROCESSOR_LIST=0`` kept from 1 x 2 to
2 x 1 put both ranks on cpu 0 (1.06 s against the 49.9 ms predicted). As with the OpenMP
placement (:mod:`~hpcds1mpi.launch.script_rewrite`), a rewrite keeps them in step: a value
that gives the new layout's ranks fewer cpus than their threads becomes
``I_MPI_PIN_DOMAIN=omp`` (each rank a domain of ``OMP_NUM_THREADS`` cpus, which the rewrite
sets), said in a note (:func:`intel_pinning_edits`, :func:`intel_pinning_note`); a value not
read here is named in the note with what to change. The script's own layout defeated by its
own setting is a warning (:func:`intel_pinning_warning`). The values are read by
:mod:`~hpcds1mpi.launch.intel_pinning`. Open MPI's ``mpirun`` reads none of them; ``srun``'s
binding is Slurm's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.intel_pinning import (DOMAIN, OWN_VALUE, PROCESSOR_LIST, PinFit,
                                            layout_fit, user_pinning)
from hpcds1mpi.launch.mpi_names import OPENMPI
from hpcds1mpi.launch.script_edits import SCHEDULER_VAR_RE, env_value_at

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch
    from hpcds1mpi.launch.script_edits import Edits
    from hpcds1mpi.launch.script_rewrite import Layout

#: What the fix gives each rank, in the notes' words.
_OMP_DOMAINS = f"{DOMAIN}={OWN_VALUE} (each rank as many cpus as its OMP_NUM_THREADS)"


@dataclass(frozen=True)
class PinLine:
    """Where the launch's value of one ``I_MPI_PIN*`` variable is written."""

    name: str
    line: int
    written: str  # the value as written (``$DOMAIN`` where it comes from a variable)
    value_span: tuple[int, int] | None


def launch_pins(script: "JobScript", launch: "Launch") -> tuple[dict[str, str], dict]:
    """The ``I_MPI_PIN*`` values ``launch``'s ranks get (the script's last setting of each
    before the launch line, then the launch line's own, which win) and where each is written
    (name -> :class:`PinLine`)."""
    settings = {s.name: s for s in script.settings_before(launch)}
    given = {name: (value if value is not None else opt.raw or "")
             for name, (value, opt) in launch.env.items()}
    pins = user_pinning({**{name: s.resolved if s.resolved is not None else s.value
                            for name, s in settings.items()}, **given}, ())
    where = {}
    for name in pins:
        if name in launch.env:
            opt = launch.env[name][1]
            span = env_value_at(script.text, name, opt)
            where[name] = PinLine(name, opt.line, script.text[span[0]:span[1]] if span
                                  else pins[name], span)
        else:
            s = settings[name]
            where[name] = PinLine(name, s.line, s.value, s.value_span)
    return pins, where


def _fit(script: "JobScript", launch: "Launch | None", ranks_per_node: int, threads: int,
         family: str | None) -> tuple[PinFit, PinLine] | None:
    """How the pinning ``launch`` gets fits the layout, and the line that decides it; None
    where no ``I_MPI_PIN*`` value needs a word, or the launcher reads none (``srun``, Open
    MPI's ``mpirun``)."""
    if launch is None or launch.kind != "mpi" or family == OPENMPI:
        return None
    pins, where = launch_pins(script, launch)
    fit = layout_fit(pins, ranks_per_node, threads) if pins else None
    if fit is None or SCHEDULER_VAR_RE.match(where[fit.name].written.strip("\"'")):
        return None  # ``I_MPI_PIN_DOMAIN=$SLURM_CPUS_PER_TASK`` follows the directives
    return fit, where[fit.name]


def intel_pinning_edits(e: "Edits", script: "JobScript", to: "Layout",
                        family: str | None) -> None:
    """Rewrite the ``I_MPI_PIN*`` value that gives ``to``'s ranks fewer cpus than their
    threads to ``I_MPI_PIN_DOMAIN=omp``: a domain's value where it stands, a processor list's
    name and value (Intel reads the list only where no domain is set)."""
    found = _fit(script, script.launch, to.ranks_per_node, to.threads, family)
    if found is None or found[0].fits is not False or found[1].value_span is None:
        return
    fit, at = found
    start, end = at.value_span
    if fit.name == DOMAIN:
        e.edits.append((start, end, OWN_VALUE))
        return
    named = script.text.rfind(fit.name, 0, start)  # ``NAME=0``, ``-genv NAME 0``, setenv's
    between = script.text[named + len(fit.name):start]
    e.edits.append((named, end, f"{DOMAIN}{between}{OWN_VALUE}"))


def intel_pinning_note(script: "JobScript", to: "Layout", family: str | None) -> str | None:
    """What the rewrite did to, or left in, the ``I_MPI_PIN*`` value that pins ``to``'s
    ranks: rewritten (:func:`intel_pinning_edits`); one it could not rewrite; a value not read
    here, kept while the layout changes. None where nothing needs saying."""
    found = _fit(script, script.launch, to.ranks_per_node, to.threads, family)
    if found is None:
        return None
    fit, at = found
    said = f"line {at.line}: {fit.name}={at.written} {fit.why} under Intel MPI's pinning"
    if fit.fits is False and at.value_span is not None:
        did = "sets" if fit.name == DOMAIN else "replaces it with"
        return f"{said}: --rewrite {did} {_OMP_DOMAINS}"
    if fit.fits is False:
        return f"{said}, and --rewrite cannot change it where it stands: set {_OMP_DOMAINS}"
    if (to.ranks_per_node, to.threads) == _own_layout(script):
        return None
    return (f"{said}, kept by --rewrite for {to.ranks_per_node} rank(s) x {to.threads} "
            f"thread(s) a node: if it gives a rank fewer cpus than its threads, set "
            f"{_OMP_DOMAINS}")


def intel_pinning_warning(script: "JobScript", launch: "Launch | None",
                          job_folder: str | None) -> str | None:
    """The warning where the script's own ``I_MPI_PIN*`` value gives its own ranks fewer cpus
    than their threads (2 ranks both on cpu 0 of ``I_MPI_PIN_PROCESSOR_LIST=0``); None
    where it does not, or its layout is not known."""
    if launch is None or launch.kind != "mpi" or not launch_pins(script, launch)[0]:
        return None
    from hpcds1mpi.launch.launch_line_checks import launch_family

    own = _own_layout(script)
    found = _fit(script, launch, *own, launch_family(script, launch, job_folder)) \
        if own is not None else None
    if found is None or found[0].fits is not False:
        return None
    fit, at = found
    more = f", or list {own[0] * own[1]} cpus" if fit.name == PROCESSOR_LIST else ""
    return (f"line {at.line}: {fit.name}={at.written} {fit.why} under Intel MPI's pinning, "
            f"so the job runs slower than its layout can: set {_OMP_DOMAINS}{more}")


def _own_layout(script: "JobScript") -> tuple[int, int] | None:
    """(ranks per node, threads) the script asks for; None where its node count is open."""
    try:
        _, per_node, threads = script.layout()
    except ConfigError:
        return None
    return per_node, threads
