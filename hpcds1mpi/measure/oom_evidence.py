"""Whether a launch killed by SIGKILL ran out of memory: only with evidence.

A specific word is evidence (:data:`OOM_WORDS`: the kernel's / CUDA's "out of memory", Slurm's
"oom-kill" event and "OOM Killed", ``MemoryError``, ``std::bad_alloc``, "Cannot allocate
memory"; the kernel's OOM killer's "Killed process 1234"), and so is a peak of the ranks near
the memory available here (:data:`NEAR_SHARE` of it: the node's, or the cgroup's where it
holds less, a Slurm job's). SIGKILL alone is none (:data:`KILL_LINES`: exit 137, sh's
"Killed", Open MPI's "exited on signal 9 (Killed)"): an operator's ``kill -9``, a node's health
check or a walltime's SIGKILL after SIGTERM kill as well. s46 testers G1, H1: a rank ended by
``kill -9`` at 16-133 MB on a 25 GB node was stored ``oom``, and
:mod:`~hpcds1mpi.decide.memory_limits` learned a node of a few hundred MB from it; it is now
``failed``, "killed by signal 9 (not known to be memory: ...)", and such an ``oom`` row of an
older file teaches no memory limit (:func:`real_oom`).
"""

from __future__ import annotations

import math
import os
import re

#: Out-of-memory words, any case: the kernel's / CUDA's "out of memory" (CUDA_ERROR_OUT_OF_MEMORY),
#: Slurm's "Detected N oom-kill event(s)" / "oom_kill" / "OOM Killed", Python's MemoryError,
#: C++'s std::bad_alloc, ENOMEM's "Cannot allocate memory".
OOM_WORDS = re.compile(r"out[ _]of[ _]memory|\boom[-_ ]?kill|\bMemoryError\b|\bbad_alloc\b|"
                       r"Cannot allocate memory", re.IGNORECASE)
#: The kernel's OOM killer naming its victim ("Out of memory: Killed process 4242 (app)").
OOM_KILLER = re.compile(r"\bKilled process \d+")
#: SIGKILL as a shell or an MPI launcher reports it, as written: "Killed" on a line of its own
#: (sh), "line 3: 1234 Killed" (bash), hydra's "Killed (signal 9)", Open MPI's "exited on
#: signal 9 (Killed)"; no sign of memory by itself.
KILL_LINES = re.compile(r"^\s*Killed\s*$|\bline \d+: +\d+ Killed\b|\bKilled \(signal 9\)|"
                        r"\bsignal 9 \(Killed\)", re.MULTILINE)
#: Share of the memory available that a killed launch's peak (a rank's x its ranks on a node)
#: reaches to count as out of memory: the sampled peak may miss the last growth before the kill.
NEAR_SHARE = 0.5
#: Words of an ``oom`` reason given for such a peak (:func:`killed`), read by :func:`real_oom`.
NEAR_WORDS = "near the memory available"


def evidence(text: str) -> bool:
    """Whether ``text`` holds a specific out-of-memory word (:data:`OOM_WORDS`,
    :data:`OOM_KILLER`)."""
    return bool(OOM_WORDS.search(text) or OOM_KILLER.search(text))


def available_mb() -> float:
    """MiB of memory this machine's launches may use: its total, or its cgroup's limit (cgroup
    v2's ``memory.max``, v1's ``memory.limit_in_bytes``) where lower; NaN when unknown."""
    found = []
    try:
        with open("/proc/meminfo") as fh:
            found += [int(ln.split()[1]) / 1024 for ln in fh if ln.startswith("MemTotal:")]
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open("/proc/self/cgroup") as fh:
            for ln in fh:
                _, kinds, path = ln.rstrip("\n").split(":", 2)
                file = ("/sys/fs/cgroup" + path.rstrip("/") + "/memory.max") if kinds == "" \
                    else ("/sys/fs/cgroup/memory" + path.rstrip("/") + "/memory.limit_in_bytes"
                          if "memory" in kinds.split(",") else "")
                if file and os.path.exists(file):
                    with open(file) as limit:
                        value = limit.read().strip()
                    if value.isdigit():
                        found.append(int(value) / 2 ** 20)
    except (OSError, ValueError):
        pass
    return min(found) if found else math.nan


def killed(result: dict, code: int, last: str, memory_mb: float | None = None) -> tuple[str, str]:
    """(status, reason) of a launch ``result`` ended by SIGKILL with no out-of-memory word:
    ``oom`` where its ranks' peak reached :data:`NEAR_SHARE` of ``memory_mb`` (MiB available
    to one node's ranks; None: :func:`available_mb`), else ``failed``. ``last``: the launch's
    reason line."""
    peak = float(result.get("rss_mb", math.nan))
    per_node = int(result.get("ranks_per_node") or result.get("ranks") or 1)
    node = peak * per_node
    avail = available_mb() if memory_mb is None else float(memory_mb)
    share = node / avail if avail > 0 else math.nan
    if math.isfinite(share) and share >= NEAR_SHARE:
        return "oom", (f"exit code {code} (out of memory): killed by signal 9 {NEAR_WORDS} "
                       f"(its ranks' peak {node:.0f} MiB a node, {share:.0%} of {avail:.0f} "
                       f"MiB): {last}")
    if math.isfinite(share):
        why = (f"its ranks' peak {node:.0f} MiB a node is {share:.1%} of the {avail:.0f} MiB "
               "available, and no out-of-memory line")
    else:
        why = "its ranks' peak memory was not measured, and no out-of-memory line"
    return "failed", f"exit code {code}: killed by signal 9 (not known to be memory: {why}): {last}"


def real_oom(error: str, node_peak_mb: float, node_mb: float) -> bool:
    """Whether a recorded ``oom`` run with reason ``error`` ran out of memory: a reason that is
    not a launch's (a kernel's ``MemoryError``, Slurm's OUT_OF_MEMORY), one with an
    out-of-memory word or given for a peak near the memory, or a peak ``node_peak_mb`` (MiB, a
    node's ranks) of at least :data:`NEAR_SHARE` of ``node_mb``. An older file's SIGKILL with
    none of those (s46 G1, H1) is no memory limit."""
    said = str(error).replace("(out of memory)", "")
    if not said.startswith("exit code ") or evidence(said) or NEAR_WORDS in said:
        return True
    return bool(node_mb > 0 and node_peak_mb >= NEAR_SHARE * node_mb)
