"""Whether a program used the threads a configuration gave it, read from its measured CPU time.

A program that takes its thread count from an option of its own (MPQC's ``-threadgrp``), or
has no threaded code (Debian's Meep), runs one computation at every ``--threads`` level: the
sweep measured MPQC at 1 rank x 2 threads with one core busy (CPU 21.6 s over 28.3 s) and
recommend then picked 2 threads on load noise, nothing said (s41 tester A3). The static check
(:func:`~hpcds1mpi.measure.program_mpi.threading_note`: no OpenMP runtime linked) cannot see
a program that links one and never uses it; its CPU time can. One rule
(:func:`kept_one_core`) for the sweep's note on one run and for a program's runs as a bundle
records them (:func:`idle_threads_evidence`), which recommend and tune then offer 1 thread.
Where the command already gives the program its thread count (``cmsearch --cpu {threads}``),
the words say that it did not use the threads given at the sizes measured, not to add
``{threads}`` (s47 tester L7) — by tune's and recommend's rule of what gives it
(:func:`~hpcds1mpi.launch.program_threads.gives_threads`, s48). CPU time cannot tell a program
that ignores ``OMP_NUM_THREADS`` from one that takes it and finds no work for its threads
(BAGEL: "using 2 threads per process", one core busy, every 2-thread repeat slower), so the
words say both, and a thread level slower (faster) in every repeat is said so, not noise (s48
tester O5). The other way round, a launch
whose CPU time says it kept clearly more cores busy than its ranks x threads runs processes of
its own (workers it starts with ``MPI_Comm_spawn``, a pool): its layout, and a job script of
it, do not count them, which the sweep says once (:func:`more_cores_note`, s47 tester L4).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.launch.program_threads import gives_threads  # the rule tune and recommend use

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Cores busy per rank within which a run of 2 or more threads is read as one thread's work:
#: start-up and serial parts keep a threaded program's figure below its threads, not near one
#: at 2 threads and more; under half a core it mostly waited (I/O, a GPU, sleep), which says
#: nothing of its threads.
ONE_CORE_BUSY = (0.5, 1.25)
#: The most a run of 2+ threads may keep busy per rank, over the same layout at 1 thread, and
#: still be one thread's work: a second working thread about doubles it, while load on a
#: shared machine lowers both alike (a threaded program on a loaded node: 0.45 and 0.8).
SAME_AS_ONE_THREAD = 1.25
#: Under this many cores busy per rank the 1-thread run mostly waited: no yardstick.
WAITED = 0.2
#: The key a sweep keeps among what it said, so that the note is said once.
IDLE_THREADS = ("note", "idle threads")
#: Cores busy over ranks x threads above which a launch ran more than its layout gave it: a
#: program's own threads keep it under 1, a launcher's start-up adds little to it (and
#: :data:`MORE_CPU_S` more), an MPI_Comm_spawn master with 2 busy workers kept 2-2.7 at 1 x 1.
MORE_THAN_GIVEN = 1.5
#: The fewest CPU seconds over ranks x threads x wall seconds for that: a short launch's
#: launcher (mpiexec, its proxy) is a large share of its CPU time.
MORE_CPU_S = 1.0
#: The key of :func:`more_cores_note` among what a sweep said.
MORE_CORES = ("note", "more cores")


def busy_per_rank(cpu_s: float, wall_s: float, ranks: int) -> float:
    """Cores a run kept busy per rank: its ranks' CPU seconds over its wall seconds; NaN where
    either is unknown (CPU time not measured: ranks under slurmstepd)."""
    if not (wall_s > 0 and math.isfinite(cpu_s) and math.isfinite(wall_s)):
        return math.nan
    return cpu_s / wall_s / max(ranks, 1)


def kept_one_core(busy: float, at_one_thread: float = math.nan) -> bool:
    """Whether a run of 2+ threads that kept ``busy`` cores busy per rank did one thread's
    work (:func:`one_thread_work`), against the same layout's 1-thread run
    (``at_one_thread`` cores busy per rank) where that was measured and worked."""
    return one_thread_work(busy, busy / at_one_thread if at_one_thread >= WAITED else None)


def one_thread_work(busy: float, vs_one_thread: float | None) -> bool:
    """Whether ``busy`` cores busy per rank at 2+ threads is one thread's work: within
    :data:`ONE_CORE_BUSY`, and at most :data:`SAME_AS_ONE_THREAD` x the 1-thread run's
    (``vs_one_thread``: their ratio) where known. Under half a core the machine's load (or
    waiting) hid whether threads would work: a threaded program at load 9 on 2 cores kept
    0.3 cores busy at 1 thread and at 2, and is not called unthreaded."""
    if not ONE_CORE_BUSY[0] <= busy <= ONE_CORE_BUSY[1]:  # NaN too
        return False
    return vs_one_thread is None or vs_one_thread <= SAME_AS_ONE_THREAD


def has_the_cores(ranks_per_node, threads, cores_per_node) -> bool:
    """Whether a node's ranks x threads fit its cores, so that working threads could keep more
    than one core busy per rank: 2 ranks x 2 threads on 2 cores read 1.0 per rank however well
    the program threads (s41 review F1). An unknown core count is taken as fitting."""
    try:
        cores = float(cores_per_node)
    except (TypeError, ValueError):
        return True
    return not (cores > 0) or float(ranks_per_node) * float(threads) <= cores


def idle_threads_note(m: dict, config, what: str, at_one_thread: float = math.nan,
                      cores_per_node: int | None = None, command: str = "",
                      one_thread_times: Sequence[float] = ()) -> str:
    """A note for the sweep to say once where an ok run of ``config`` (threads above 1) kept
    about one core busy per rank (``m``: the run's measurement, its ``cpu_s`` summed over
    its launches, ``walls`` each launch's seconds, ``times`` its recorded repeats;
    ``at_one_thread``: the same layout's 1-thread run's cores busy per rank, and
    ``one_thread_times`` its recorded repeats, where swept); "" otherwise, where its CPU time
    was not measured, or where its ranks x threads oversubscribe the node's
    ``cores_per_node`` (no evidence there). ``command``: the swept command, placeholders
    unfilled (:func:`gives_threads`). It says what was measured: its threads added no CPU
    work, which a program ignoring ``OMP_NUM_THREADS`` and one that takes it but had no work
    for its threads both show (BAGEL prints "using 2 threads per process", s48 tester O5);
    and where every repeat at this thread count was slower (faster) than every one at 1
    thread, that difference, not noise (:func:`times_apart`)."""
    walls = [w for w in m.get("walls") or [] if w > 0]
    if config.threads < 2 or config.device != "cpu" or not walls or not has_the_cores(
            config.ranks_per_node, config.threads, cores_per_node):
        return ""
    busy = busy_per_rank(m.get("cpu_s", math.nan), sum(walls), config.ranks)
    if not kept_one_core(busy, at_one_thread):
        return ""
    yardstick = f"; {at_one_thread:.2f} at 1 thread" if at_one_thread >= WAITED else ""
    said = f"note: {what} kept {busy:.2f} cores busy per rank at {config.threads} threads " \
        f"(its CPU time over its wall time{yardstick}), about one thread's work: "
    if gives_threads(command):
        said += "the program did not use the threads its command gives it ({threads}) at " \
            "this size"
        advice = "sweep --threads 1, or larger sizes, where its threads may have work"
    else:
        said += "its threads added none, as where the program does not use OMP_NUM_THREADS " \
            "(a thread count of its own, such as MPQC's -threadgrp, or no threaded code) or " \
            "takes it but had no work for them at this size"
        advice = "sweep --threads 1 or larger sizes, or give the program its thread count " \
            "with {threads} where it takes one of its own"
    apart = times_apart(m.get("times") or [], one_thread_times)
    if apart:
        slower = apart[0] > apart[1]
        said += (f"; its runs at {config.threads} threads were "
                 f"{'slower' if slower else 'faster'} than at 1 thread in every repeat "
                 f"({apart[0]:.3g} s against {apart[1]:.3g} s, medians), a difference of "
                 "its thread levels, not noise" + (": its threads cost it time here"
                                                   if slower else ""))
    else:
        said += ", so its thread levels measure about one computation and their " \
            "differences are noise"
    return f"{said}; {advice}"


def times_apart(times: Sequence[float], one_thread_times: Sequence[float]) -> tuple | None:
    """(median of ``times``, median of ``one_thread_times``) where each has 2 or more repeats
    and every one of the first lies above, or below, every one of the second; None where they
    overlap, or are too few to tell."""
    import statistics

    a = [t for t in times if math.isfinite(t)]
    b = [t for t in one_thread_times if math.isfinite(t)]
    if len(a) < 2 or len(b) < 2 or not (min(a) > max(b) or max(a) < min(b)):
        return None
    return statistics.median(a), statistics.median(b)


def more_cores_note(m: dict, config, what: str) -> str:
    """A note for the sweep to say once where an ok CPU run of ``config`` (``m`` as for
    :func:`idle_threads_note`) kept more than :data:`MORE_THAN_GIVEN` x its ranks x threads
    cores busy, by at least :data:`MORE_CPU_S` CPU seconds; "" otherwise or unmeasured."""
    walls = [w for w in m.get("walls") or [] if w > 0]
    given = config.ranks * config.threads
    busy = busy_per_rank(m.get("cpu_s", math.nan), sum(walls), 1) if walls else math.nan
    if config.device != "cpu" or not (busy > MORE_THAN_GIVEN * given) or \
            m["cpu_s"] - given * sum(walls) < MORE_CPU_S:
        return ""
    return (f"note: {what} kept {busy:.2f} cores busy where its layout gives it {given} "
            "(ranks x threads; its CPU time over its wall time): the program runs processes "
            "or threads of its own beyond them (workers it starts with "
            "MPI_Comm_spawn, a pool), which its layout, and a job script of it, do not count: "
            "where a job is confined to the cores it asks, they share those; start them as "
            "ranks, or size the pool with {threads} and sweep --threads")


def thread_notes(m: dict, config, what: str, said: set, at_one: tuple = (math.nan, ()),
                 cores_per_node: int | None = None, command: str = "") -> list[str]:
    """The notes of :func:`idle_threads_note` and :func:`more_cores_note` on an ok run, each
    once a sweep: ``said`` holds what the sweep said (their keys added here); ``at_one``: the
    same layout's 1-thread run's cores busy per rank and recorded repeats, where swept."""
    notes = []
    for key, note in ((IDLE_THREADS, lambda: idle_threads_note(
            m, config, what, at_one[0], cores_per_node, command, at_one[1])),
                      (MORE_CORES, lambda: more_cores_note(m, config, what))):
        if key not in said and (text := note()):
            said.add(key)
            notes.append(text)
    return notes


def idle_threads_evidence(rows: "pd.DataFrame") -> dict | None:
    """Where a program's ok CPU runs of 2+ threads kept about one core busy per rank, by
    :func:`kept_one_core` on their medians: ``{"threads": [levels], "busy": median cores busy
    per rank, "vs_one_thread": median ratio to the same layout's 1-thread run, or None where
    none was swept}``; None where they used more, or their CPU time was not measured (older
    telemetry, ranks under slurmstepd)."""
    import numpy as np
    import pandas as pd

    need = {"status", "device", "threads", "nodes", "ranks_per_node", "cpu_s", "measured_s"}
    if not need <= set(rows.columns):
        return None
    ok = rows[(rows["status"].astype(str) == "ok") & (rows["device"].astype(str) == "cpu")]
    number = {c: pd.to_numeric(ok[c], errors="coerce").to_numpy(float)
              for c in ("threads", "nodes", "ranks_per_node", "cpu_s", "measured_s")}
    number["ranks"] = number["nodes"] * number["ranks_per_node"]
    busy = np.array([busy_per_rank(c, w, int(r) if r > 0 else 1) for c, w, r in
                     zip(number["cpu_s"], number["measured_s"], number["ranks"])])
    cores = pd.to_numeric(ok["cores_per_node"], errors="coerce").to_numpy(float) \
        if "cores_per_node" in ok.columns else np.full(len(ok), np.nan)
    fits = np.array([has_the_cores(r, t, c) for r, t, c in
                     zip(number["ranks_per_node"], number["threads"], cores)], dtype=bool)
    many = (number["threads"] >= 2) & np.isfinite(busy) & fits  # oversubscribed: no evidence
    if not many.any():
        return None
    layout = [c for c in ("size", "nodes", "ranks_per_node", "precision") if c in ok.columns]
    keys = list(ok[layout].astype(str).itertuples(index=False, name=None))
    one = {}
    for key, t, b in zip(keys, number["threads"], busy):
        if t == 1 and b >= WAITED:
            one.setdefault(key, []).append(b)
    ratios = [b / float(np.median(one[k])) for k, b, m in zip(keys, busy, many)
              if m and k in one]
    median = float(np.median(busy[many]))
    ratio = float(np.median(ratios)) if ratios else None
    if not one_thread_work(median, ratio):
        return None
    levels = sorted({int(t) for t in number["threads"][many]})
    return {"threads": levels, "busy": round(median, 3),
            "vs_one_thread": None if ratio is None else round(ratio, 3)}


def idle_threads_line(name: str, evidence: dict, command: str | None = "") -> str:
    """Why only 1 thread per rank is offered for the program ``name`` whose runs recorded
    ``evidence`` (:func:`idle_threads_evidence`): the words of
    :func:`~hpcds1mpi.launch.program_threads.one_thread_line` for a program known not to
    thread, here from what its runs measured; ``command``: the program's, with placeholders."""
    return f"threads = 1 only: {_measured_words(name, evidence, command)}; {_to_thread(command)}"


def idle_threads_notes(levels: dict) -> list[str]:
    """The note ``train`` and ``learn`` say per program of ``levels`` (workload ->
    :class:`~hpcds1mpi.surrogates.levels.MeasuredLevels`) whose runs ignored their threads."""
    return [f"note: {_measured_words(name, lv.idle_threads, lv.command)}: recommend and tune "
            f"offer it 1 thread per rank ({_to_thread(lv.command)})"
            for name, lv in sorted(levels.items()) if lv.idle_threads]


#: What a user does whose program takes its thread count some other way.
_TO_THREAD = ("put {threads} in its command where it takes a thread count of its own, and "
              "sweep again")
#: What a user does whose command gives it its threads: its work was too little for them.
_TO_SIZES = "sweep larger sizes, where its threads may have work"


def _to_thread(command: str | None) -> str:
    return _TO_SIZES if gives_threads(command) else _TO_THREAD


def _measured_words(name: str, evidence: dict, command: str | None = "") -> str:
    levels = ", ".join(map(str, evidence["threads"]))
    ratio = evidence.get("vs_one_thread")
    than = f", {ratio:.2f} x its runs at 1 thread" if ratio is not None else ""
    why = ("it did not use the threads its command gives it ({threads}) at the sizes measured"
           if gives_threads(command) else "its threads added no work (it does not use "
           "OMP_NUM_THREADS, or takes it but had no work for them at the sizes measured)")
    return (f"{name}'s runs at {levels} threads kept {evidence['busy']:.2f} cores busy per "
            f"rank{than} (CPU time over wall time), so {why} and its thread levels are one "
            "computation")
