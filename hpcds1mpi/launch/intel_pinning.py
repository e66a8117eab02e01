"""Intel MPI's pinning variables (``I_MPI_PIN*``): told apart, read from the user, set, described.

Intel MPI's hydra ``mpiexec`` pins every rank itself (``I_MPI_PIN`` is on by default) and
ignores hydra's ``-bind-to``. Its default domain is the node's CPUs divided by the ranks per
node it counts, and under Slurm it counts the job's tasks per node, not the step's ``-n``: one
rank of 2 threads in a ``--ntasks-per-node=2 -c 1`` job was pinned to ``{0}``, its threads on
one core (s35 tester I1). ``-genv I_MPI_PIN_DOMAIN omp`` gives each rank ``OMP_NUM_THREADS``
CPUs of its own instead. A user's own ``I_MPI_PIN*`` (exported, or ``-genv``/``-env`` in the
launcher options) is kept, said and recorded as the binding (I3a); ``-bind-to`` is said to bind
nothing (I3b). Whether such a setting gives a layout's ranks the cpus their threads need
(:func:`layout_fit`: ``I_MPI_PIN_DOMAIN=core`` put 1 rank x 2 threads on one core,
``I_MPI_PIN_PROCESSOR_LIST=0`` 2 ranks on cpu 0, s35 tester I2) is read here too; a script's
settings are kept in step by :mod:`~hpcds1mpi.launch.script_intel_pinning`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

#: What Intel MPI's ``mpiexec --version`` says first.
INTEL_BANNER = "Intel(R) MPI Library"
#: The variable the sweep and its scripts give Intel's mpiexec: a domain per rank of as many
#: CPUs as the rank's OpenMP threads (OMP_NUM_THREADS, which every launch sets).
DOMAIN = "I_MPI_PIN_DOMAIN"
OWN_VALUE = "omp"
#: Intel MPI's pinning variables: a user's setting of any of them is theirs to keep.
_PREFIX = "I_MPI_PIN"
#: Hydra options that pass a variable to the ranks: ``-genv NAME VALUE``, ``-env NAME VALUE``.
_PASS_ENV = ("-genv", "--genv", "-env", "--env")
#: Hydra's binding options, which Intel's mpiexec accepts and does nothing with.
_BIND_TO = ("-bind-to", "--bind-to", "-map-by", "--map-by")
#: I_MPI_PIN values that turn pinning off.
_OFF = ("0", "off", "no", "disable", "false")
#: Domains named after a part of the node.
_PARTS = ("socket", "sock", "numa", "node", "cache1", "cache2", "cache3", "cache")


def is_intel(version_text: str | None) -> bool:
    """Whether a launcher's ``--version`` text is Intel MPI's (its hydra pins ranks itself)."""
    return bool(version_text) and INTEL_BANNER in version_text


def own_tokens() -> list[str]:
    """The launcher options giving each rank its threads' CPUs."""
    return ["-genv", DOMAIN, OWN_VALUE]


def user_pinning(env: Mapping[str, str], args: Sequence[str]) -> dict[str, str]:
    """The user's own ``I_MPI_PIN*`` settings: the environment's, then those the launcher
    options pass (``-genv NAME VALUE`` or ``-genv NAME=VALUE``, which win, as they do in
    Intel's mpiexec)."""
    pins = {k: str(v) for k, v in env.items() if k.startswith(_PREFIX)}
    words = list(args)
    for i, word in enumerate(words[:-1]):
        name, eq, value = words[i + 1].partition("=")
        if word not in _PASS_ENV or not name.startswith(_PREFIX):
            continue
        if eq:
            pins[name] = value
        elif i + 2 < len(words):
            pins[name] = words[i + 2]
    return pins


def pinning_text(pins: Mapping[str, str]) -> str:
    """``pins`` as ``NAME=VALUE`` words, sorted."""
    return " ".join(f"{k}={v}" for k, v in sorted(pins.items()))


def what_pins_do(pins: Mapping[str, str]) -> str:
    """What Intel MPI does with the user's ``pins``, in a few words."""
    if pins.get("I_MPI_PIN", "").lower() in _OFF:
        return "pinning off: ranks not bound"
    domain = pins.get(DOMAIN, "").lower()
    size = domain.split(":")[0]
    if domain.startswith("omp"):
        return "each rank on as many cpus as its OMP_NUM_THREADS"
    if size in ("core", "1"):
        return "each rank on one core, which all its threads share"
    if size.isdigit():
        return f"each rank on {size} cpus, which more threads than that share"
    if size in _PARTS:
        return f"each rank on the cpus of its {size}"
    if "I_MPI_PIN_PROCESSOR_LIST" in pins and not domain:
        return (f"ranks on cpus {pins['I_MPI_PIN_PROCESSOR_LIST']} only, one each in turn: "
                "a rank's threads share its cpu")
    if size in ("", "auto"):
        return ("Intel's default domains: a node's cpus divided by the ranks per node it "
                "counts (under Slurm the job's tasks per node, not -n)")
    return "as Intel MPI reads them"


def pinning_note(pins: Mapping[str, str]) -> str:
    """The one-line note where the user's own ``pins`` are kept."""
    return (f"Intel MPI's mpiexec pins ranks by the user's {pinning_text(pins)}, kept "
            f"({what_pins_do(pins)}); unset it to have each rank pinned to its threads' "
            f"cpus (-genv {DOMAIN} {OWN_VALUE})")


def pinning_binding(name: str, pins: Mapping[str, str]) -> str:
    """The telemetry's ``binding`` where the user's own ``pins`` are kept."""
    return f"{name} with the user's {pinning_text(pins)} (Intel MPI: {what_pins_do(pins)})"


def own_binding(name: str, ranks_per_node: int, threads: int, cores: int | None) -> str:
    """The telemetry's ``binding`` of a launch given :func:`own_tokens`: each rank's domain,
    and where the node has fewer cores than its ranks' threads, that they share them (Intel
    gave 2 ranks x 2 threads on 2 cores ``{0-1}`` each)."""
    given = f"{name} {' '.join(own_tokens())}"
    if cores and ranks_per_node * threads > cores:
        return (f"{given} (Intel MPI: domains of {min(threads, cores)} cpus, {ranks_per_node}"
                f" ranks x {threads} threads on {cores} cores share them, oversubscribed)")
    return f"{given} (Intel MPI: each rank pinned to {threads} cpu(s) of its own)"


def bind_to_note(args: Sequence[str], pins: Mapping[str, str]) -> str | None:
    """The note where the user's options give hydra's ``-bind-to``/``-map-by``, which Intel's
    mpiexec accepts and binds nothing by (I_MPI_PIN=0 left the ranks on cpus 0,1); None
    where they do not."""
    words = list(args)
    given = [w if "=" in w else " ".join(words[i:i + 2]) for i, w in enumerate(words)
             if w.partition("=")[0] in _BIND_TO]
    if not given:
        return None
    pinned = (f"the user's {pinning_text(pins)} pins them" if pins else
              f"each rank is pinned to its threads' cpus with -genv {DOMAIN} {OWN_VALUE}")
    return (f"Intel MPI's mpiexec binds ranks by its {_PREFIX}* variables and ignores "
            f"{', '.join(given)}: passed as given, it binds nothing; {pinned} (set "
            f"{DOMAIN} to bind otherwise)")


#: The variable that lists the cpus ranks are pinned to (without a domain, which wins over it).
PROCESSOR_LIST = "I_MPI_PIN_PROCESSOR_LIST"
#: A processor list of cpu numbers and ranges (``0``, ``0,2-5``), which can be counted.
_CPU_LIST_RE = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
#: Processor lists that name every cpu of a kind on the node (``allcores:map=scatter``).
_WHOLE_NODE_SETS = ("all", "allcores", "allsocks")


@dataclass(frozen=True)
class PinFit:
    """Whether the user's pinning gives a layout's ranks the cpus their threads need.

    Attributes:
        name: the variable that decides it (``I_MPI_PIN_DOMAIN``, else the processor list).
        fits: False where some rank gets fewer cpus than its threads; None where the value is
            not read here (a mask list not understood, a value from a variable).
        why: what the value gives the layout's ranks, in a few words.
    """

    name: str
    fits: bool | None
    why: str


def layout_fit(pins: Mapping[str, str], ranks_per_node: int, threads: int) -> PinFit | None:
    """How Intel MPI pinning by the user's ``pins`` fits ``ranks_per_node`` ranks of
    ``threads`` threads a node; None where it needs no word: no domain or list given, pinning
    off, or a domain sized for any layout (``omp``, ``auto``, a part of the node: ranks share
    its cpus, as many as the node has). A processor list is shared out among a node's ranks
    (Intel 2021 gave 1 rank of ``0,1`` the domain ``{0-1}``, 2 ranks of ``0`` both ``{0}``)."""
    if pins.get("I_MPI_PIN", "").lower() in _OFF:
        return None
    layout = f"{_counted(ranks_per_node, 'rank')} x {_counted(threads, 'thread')} a node"
    domain = pins.get(DOMAIN, "").strip().strip("\"'")
    if domain:
        size = domain.lower().split(":")[0]
        if size in ("omp", "auto") or size in _PARTS:
            return None
        if size == "core" or size.isdigit():
            cpus = 1 if size == "core" else int(size)
            given = "one core" if size == "core" else _counted(cpus, "cpu")
            return None if cpus >= threads else PinFit(DOMAIN, False, (
                f"gives each rank {given}, which its {threads} threads share"))
        masks = _masks(domain)
        if masks is None:
            return PinFit(DOMAIN, None, "gives domains not read here")
        fewest = min(masks[:ranks_per_node])
        if len(masks) >= ranks_per_node and fewest >= threads:
            return None
        return PinFit(DOMAIN, False, f"gives {_counted(len(masks), 'domain')}, the smallest "
                      f"of {_counted(fewest, 'cpu')}, to {layout}, which they share")
    listed = pins.get(PROCESSOR_LIST, "").strip().strip("\"'")
    if not listed or listed.lower().split(":")[0] in _WHOLE_NODE_SETS:
        return None
    cpus = _count_cpus(listed)
    if cpus is None:
        return PinFit(PROCESSOR_LIST, None, "lists cpus not read here")
    if cpus >= ranks_per_node * threads:
        return None
    return PinFit(PROCESSOR_LIST, False, f"names {_counted(cpus, 'cpu')} for {layout}, which "
                  "they share")


def _counted(count: int, thing: str) -> str:
    return f"{count} {thing}{'s' if count != 1 else ''}"


def _count_cpus(listed: str) -> int | None:
    """The cpus a processor list names (``0,2-5``: 5), None where it is no plain list."""
    if not _CPU_LIST_RE.match(listed):
        return None
    cpus: set[int] = set()
    for item in listed.split(","):
        low, _, high = item.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return len(cpus)


def _masks(domain: str) -> list[int] | None:
    """The cpu count of each hexadecimal mask of a ``[m1,m2,...]`` domain, None where the
    value is no such list."""
    if not (domain.startswith("[") and domain.endswith("]")):
        return None
    try:
        counts = [bin(int(m, 16)).count("1") for m in domain[1:-1].split(",")]
    except ValueError:
        return None
    return counts if counts and all(counts) else None
