"""Intel MPI's pinning variables (``I_MPI_PIN*``): told apart, read from the user, set, described.

Intel MPI's hydra ``mpiexec`` pins every rank itself (``I_MPI_PIN`` is on by default) and
ignores hydra's ``-bind-to``. Its default domain is the node's CPUs divided by the ranks per
node it counts, and under Slurm it counts the job's tasks per node, not the step's ``-n``: one
rank of 2 threads in a ``--ntasks-per-node=2 -c 1`` job was pinned to ``{0}``, its threads on
one core (s35 tester I1). ``-genv I_MPI_PIN_DOMAIN omp`` gives each rank ``OMP_NUM_THREADS``
CPUs of its own instead. A user's own ``I_MPI_PIN*`` (exported, or ``-genv``/``-env`` in the
launcher options) is kept, said and recorded as the binding (I3a); ``-bind-to`` is said to bind
nothing (I3b).
"""

from __future__ import annotations

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
    options pass (``-genv NAME VALUE``, which win, as they do in Intel's mpiexec)."""
    pins = {k: str(v) for k, v in env.items() if k.startswith(_PREFIX)}
    words = list(args)
    for i, word in enumerate(words[:-2]):
        if word in _PASS_ENV and words[i + 1].startswith(_PREFIX):
            pins[words[i + 1]] = words[i + 2]
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
