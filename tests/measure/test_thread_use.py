"""``measure/thread_use``: a run of several threads that kept one core busy per rank."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.measure.thread_use import (idle_threads_evidence, idle_threads_line,
                                          idle_threads_note, idle_threads_notes, kept_one_core,
                                          more_cores_note, thread_notes)
from tests.helpers import hpcds1mpi_exe


def test_about_one_core_busy_per_rank_at_two_threads_is_said():
    """s41 tester A3: MPQC at 1 rank x 2 threads, CPU 21.6 s over 28.3 s: nothing said."""
    two = Configuration(1, 1, 2, "cpu", "fp64")
    note = idle_threads_note({"cpu_s": 21.6, "walls": [28.3]}, two, "mpqc size 4 N1xR1xT2")
    assert "kept 0.76 cores busy per rank at 2 threads" in note and "--threads 1" in note
    assert idle_threads_note({"cpu_s": 2 * 3 * 1.8, "walls": [1.0, 2.0]},
                             Configuration(1, 2, 2, "cpu", "fp64"), "x") == ""  # 1.8 a rank
    assert idle_threads_note({"cpu_s": 0.1, "walls": [1.0]}, two, "x") == ""  # it waited
    assert idle_threads_note({"cpu_s": math.nan, "walls": [1.0]}, two, "x") == ""
    assert idle_threads_note({"cpu_s": 1.0, "walls": [1.0]},
                             Configuration(1, 1, 1, "cpu", "fp64"), "x") == ""


def test_a_sweep_of_a_single_threaded_program_at_two_threads_says_so_once(tmp_path):
    spin = tmp_path / "spin.py"
    spin.write_text("import sys, time\nend = time.time() + 1.0\nwhile time.time() < end:\n"
                    "    pass\nprint(sys.argv[1])\n")
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", f"{sys.executable} {spin} {{size}}",
         "--sizes", "1,2", "--ranks-per-node", "1", "--threads", "2", "--precisions", "fp64",
         "--min-repeats", "1", "--max-repeats", "1", "--min-time", "0", "--warmup", "0",
         "--no-progress", "--out", str(tmp_path / "t.h5")],
        capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    busy = _busy_per_size(tmp_path / "t.h5")
    first = next((size for size, b in sorted(busy.items()) if b >= 0.5), None)
    if first is None:  # a loaded machine gave the spin under half a core: nothing to tell
        import pytest

        pytest.skip(f"this machine's load kept the runs under half a core busy ({busy})")
    said = [ln for ln in proc.stderr.splitlines() if "cores busy per rank" in ln]
    assert len(said) == 1 and said[0].startswith(
        f"hpcds1mpi sweep: note: spin.py size {first} "), proc.stderr


def _busy_per_size(path) -> dict:
    """Size -> cores busy per rank of a 1-rank sweep's runs (CPU time over wall time)."""
    import h5py

    with h5py.File(path) as f:
        runs = f["runs"]
        return {int(size): float(cpu / wall) for size, cpu, wall in
                zip(runs["size"][()], runs["cpu_s"][()], runs["measured_s"][()])}


def _runs(busy_at: dict, sizes=(3, 4), ranks=1) -> pd.DataFrame:
    """Ok CPU rows of one program: per thread count, the cores it kept busy per rank."""
    rows = []
    for size in sizes:
        for threads, busy in busy_at.items():
            wall = 10.0 * size
            rows.append(dict(workload="mpqc", kind="external", size=size, nodes=1,
                             ranks_per_node=ranks, ranks=ranks, threads=threads, device="cpu",
                             precision="fp64", status="ok", measured_s=wall,
                             cpu_s=busy * wall * ranks))
    return pd.DataFrame(rows)


def test_a_programs_runs_that_kept_one_core_busy_at_two_threads_are_evidence():
    """s41 tester A3: MPQC 1 x 2 kept 0.77 cores busy; its 1-thread runs as much."""
    assert idle_threads_evidence(_runs({1: 0.8, 2: 0.77})) == {
        "threads": [2], "busy": 0.77, "vs_one_thread": 0.963}
    assert idle_threads_evidence(_runs({2: 0.77}))["vs_one_thread"] is None  # no yardstick
    assert idle_threads_evidence(_runs({1: 0.95, 2: 0.97}, ranks=2))["busy"] == 0.97


def test_runs_that_used_their_threads_or_cannot_tell_are_no_evidence():
    assert idle_threads_evidence(_runs({1: 0.95, 2: 1.8})) is None  # threads worked
    assert idle_threads_evidence(_runs({1: 0.45, 2: 0.8})) is None  # on a loaded node
    assert idle_threads_evidence(_runs({1: 0.3, 2: 0.3})) is None  # load hid it
    assert idle_threads_evidence(_runs({1: 0.95})) is None  # never at 2 threads
    assert idle_threads_evidence(_runs({1: 0.95, 2: 0.9}).drop(columns="cpu_s")) is None
    assert idle_threads_evidence(_runs({1: math.nan, 2: math.nan})) is None  # under srun
    gpu = _runs({1: 0.95, 2: 0.95}).assign(device="gpu")
    assert idle_threads_evidence(gpu) is None


def test_the_sweeps_note_reads_a_run_against_its_one_thread_twin():
    two = Configuration(1, 1, 2, "cpu", "fp64")
    loaded = {"cpu_s": 0.8, "walls": [1.0]}  # threaded, on a loaded node: 0.45 at 1 thread
    assert idle_threads_note(loaded, two, "x", at_one_thread=0.45) == ""
    assert idle_threads_note(loaded, two, "x", at_one_thread=0.8) != ""
    assert kept_one_core(0.8) and not kept_one_core(0.8, 0.45)


def test_the_line_says_what_the_runs_measured():
    line = idle_threads_line("mpqc", {"threads": [2, 4], "busy": 0.77, "vs_one_thread": 0.96})
    assert line.startswith("threads = 1 only: mpqc's runs at 2, 4 threads kept 0.77 cores "
                           "busy per rank, 0.96 x its runs at 1 thread")
    assert "{threads}" in line
    from hpcds1mpi.surrogates.levels import MeasuredLevels

    idle = {"threads": [2], "busy": 0.77, "vs_one_thread": None}
    notes = idle_threads_notes({"mpqc": MeasuredLevels("mpqc", True, idle_threads=idle),
                                "lmp": MeasuredLevels("lmp", True)})  # train's and learn's
    assert notes == ["note: mpqc's runs at 2 threads kept 0.77 cores busy per rank (CPU time "
                     "over wall time), so its threads added no work (it does not use "
                     "OMP_NUM_THREADS, or takes it but had no work for them at the sizes "
                     "measured) and its thread levels are one computation: recommend and tune "
                     "offer it 1 thread per "
                     "rank (put {threads} in its command where it takes a thread count of its "
                     "own, and sweep again)"]



#: BAGEL size 12 at 1 rank (s48 tester O5): 3 launches at 2 threads, 0.57 cores busy per rank,
#: every repeat slower than every one at 1 thread (0.71 cores busy).
BAGEL_T2 = {"cpu_s": 3.1027, "walls": [1.62, 1.83, 2.02], "times": [0.97, 1.17, 1.47]}
BAGEL_T1 = (0.705, [0.63, 0.68, 0.77])


def test_a_thread_level_slower_in_every_repeat_is_not_called_noise():
    """Was (s48 tester O5): BAGEL, which prints "using 2 threads per process", was told it
    "seems not to use OMP_NUM_THREADS" and that its thread levels' differences are noise,
    while each of its 2-thread repeats was slower than each 1-thread one."""
    two = Configuration(1, 1, 2, "cpu", "fp64")
    said: set = set()
    notes = thread_notes(BAGEL_T2, two, "BAGEL size 12 N1xR1xT2-cpu-fp64", said, BAGEL_T1,
                         2, "BAGEL h{size}.json")
    assert len(notes) == 1 and notes[0].startswith(
        "note: BAGEL size 12 N1xR1xT2-cpu-fp64 kept 0.57 cores busy per rank at 2 threads (its "
        "CPU time over its wall time; 0.70 at 1 thread), about one thread's work: its threads "
        "added none, as where the program does not use OMP_NUM_THREADS"), notes
    note = notes[0]
    assert "or takes it but had no work for them at this size" in note
    assert "slower than at 1 thread in every repeat (1.17 s against 0.68 s, medians), a " \
        "difference of its thread levels, not noise: its threads cost it time here" in note
    assert "seems not to use" not in note and "differences are noise" not in note
    assert "sweep --threads 1" in note


@pytest.mark.parametrize("times, at_one", [
    ([0.7, 0.9, 1.1], [0.63, 0.8, 0.9]),   # they overlap
    ([1.17], [0.68]),                        # one repeat each: no telling
    ([0.97, 1.17], ()),                      # no 1-thread run swept
])
def test_thread_levels_not_apart_in_every_repeat_keep_the_noise_wording(times, at_one):
    two = Configuration(1, 1, 2, "cpu", "fp64")
    note = idle_threads_note({**BAGEL_T2, "times": times}, two, "x", 0.705,
                             one_thread_times=at_one)
    assert "their differences are noise" in note and "every repeat" not in note, note


def test_a_command_that_gives_its_threads_is_not_told_to_put_threads_in_it():
    """s47 tester L7: ``cmsearch --cpu {threads}`` used few of its 2 threads at small sizes,
    and was told to put {threads} in its command, and that it ignores OMP_NUM_THREADS."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels

    command = "cmsearch --cpu {threads} trna.cm db-{size}.fa"
    note = idle_threads_note({"cpu_s": 0.59 * 2.0, "walls": [2.0]},
                             Configuration(1, 1, 2, "cpu", "fp64"), "cmt size 2 N1xR1xT2",
                             command=command)
    evidence = {"threads": [2], "busy": 0.91, "vs_one_thread": 1.03}
    line = idle_threads_line("cmt", evidence, command)
    notes = idle_threads_notes({"cmt": MeasuredLevels("cmt", True, command=command,
                                                      idle_threads=evidence)})
    for said in (note, line, *notes):
        assert "did not use the threads its command gives it ({threads})" in said, said
        assert "larger sizes" in said, said
        assert "put {threads}" not in said and "OMP_NUM_THREADS" not in said, said
    assert "kept 0.59 cores busy per rank at 2 threads" in note and "--threads 1" in note
    assert line.startswith("threads = 1 only: cmt's runs at 2 threads kept 0.91 cores busy")



def test_a_launch_that_kept_more_cores_busy_than_its_ranks_and_threads_is_said_once():
    """s47 tester L4: an MPI_Comm_spawn master with 2 busy workers, recorded 1 rank x 1
    thread, kept about 2.2 cores busy (3 launches: CPU 6.6 s over 3.0 s), nothing said."""
    one = Configuration(1, 1, 1, "cpu", "fp64")
    spawner = {"cpu_s": 6.6, "walls": [1.0, 1.0, 1.0]}
    note = more_cores_note(spawner, one, "spawner size 10 N1xR1xT1-cpu-fp64")
    assert note.startswith("note: spawner size 10 N1xR1xT1-cpu-fp64 kept 2.20 cores busy where "
                           "its layout gives it 1 (ranks x threads"), note
    assert "MPI_Comm_spawn" in note and "job script" in note
    said: set = set()
    assert thread_notes(spawner, one, "spawner size 10", said) == [
        more_cores_note(spawner, one, "spawner size 10")]
    assert thread_notes(spawner, one, "spawner size 20", said) == []  # once a sweep
    four = Configuration(1, 2, 2, "cpu", "fp64")
    assert more_cores_note({"cpu_s": 3 * 4 * 1.2, "walls": [1.0, 1.0, 1.0]}, four, "x") == ""
    assert more_cores_note({"cpu_s": 0.9, "walls": [0.3]}, one, "x") == ""  # a launcher's share
    assert more_cores_note({"cpu_s": math.nan, "walls": [1.0]}, one, "x") == ""  # unmeasured
    assert more_cores_note(spawner, Configuration(1, 1, 1, "gpu", "fp64"), "x") == ""


#: An MPI program that links OpenMP and ignores OMP_NUM_THREADS: one thread's arithmetic.
IGNORES_THREADS = r"""
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    double start = omp_get_wtime(), x = 0;
    for (long i = 0; i < atol(argv[1]) * 60000000L; i++) x += 1.0 / (1.0 + i);
    printf("time %.4f (%g)\n", omp_get_wtime() - start, x);
    MPI_Finalize();
    return 0;
}
"""


def test_a_program_that_ignores_omp_num_threads_swept_at_1_and_2_threads_is_recorded(
        tmp_path):
    """sweep -> the levels its runs give record it (train keeps them in the bundle), and the
    offer is 1 thread, said why; skipped where the machine's load kept even its 1-thread
    runs under half a core busy (no telling then)."""
    import shutil

    import h5py
    import pytest

    from hpcds1mpi.surrogates.levels import levels_from_frame
    from hpcds1mpi.surrogates.measured_offer import measured_offer

    cc = Path(sys.executable).parent / "mpicc"
    if not cc.exists() or shutil.which("cc") is None:
        pytest.skip("the wheel's mpicc or a C compiler is missing")
    (tmp_path / "app.c").write_text(IGNORES_THREADS)
    subprocess.run([str(cc), "-O1", "-fopenmp", "-o", str(tmp_path / "app"),
                    str(tmp_path / "app.c")], check=True, timeout=120)
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", f"{tmp_path / 'app'} {{size}}", "--label", "app",
         "--sizes", "1,2,3", "--ranks-per-node", "1", "--threads", "1,2", "--precisions",
         "fp64", "--time-regex", r"time ([0-9.]+)", "--min-repeats", "1", "--max-repeats",
         "1", "--min-time", "0", "--warmup", "0", "--no-progress", "--out",
         str(tmp_path / "t.h5")], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    with h5py.File(tmp_path / "t.h5") as f:
        runs = pd.DataFrame({k: f["runs"][k][()] for k in
                             ("workload", "kind", "size", "nodes", "ranks_per_node", "ranks",
                              "threads", "device", "precision", "status", "cpu_s",
                              "measured_s")})
    runs = runs.apply(lambda c: c.str.decode("utf-8") if c.dtype == object else c)
    one = runs[runs["threads"] == 1]
    if (one["cpu_s"] / one["measured_s"]).median() < 0.5:
        pytest.skip("this machine's load kept the 1-thread runs under half a core busy")
    levels = levels_from_frame(runs)["app"]
    assert levels.idle_threads and levels.idle_threads["threads"] == [2], runs
    offer = measured_offer(levels, ["cpu"], 8)
    assert offer.threads == [1] and not offer.uses_threads
    assert any(line.startswith("threads = 1 only: app's runs at 2 threads") for line in
               offer.left_out)


def test_ranks_and_threads_beyond_the_cores_are_no_evidence():
    """s41 review F1: a well-threaded program at 2 ranks x 2 threads on a 2-core node keeps
    1.0 core busy per rank (the cores are shared), as much as at 1 thread: no evidence that it
    ignores its threads, neither for the sweep's note nor for the bundle's offer."""
    crowded = Configuration(1, 2, 2, "cpu", "fp64")
    run = {"cpu_s": 2 * 1.0 * 10.0, "walls": [10.0]}  # 1.0 core a rank
    assert idle_threads_note(run, crowded, "x", at_one_thread=1.0, cores_per_node=2) == ""
    assert idle_threads_note(run, crowded, "x", at_one_thread=1.0, cores_per_node=4) != ""
    rows = _runs({1: 1.0, 2: 1.0}, ranks=2)
    assert idle_threads_evidence(rows.assign(cores_per_node=2)) is None
    assert idle_threads_evidence(rows.assign(cores_per_node=4)) is not None


def test_the_advice_and_the_offer_read_a_command_s_threads_alike(tmp_path):
    """s48 (fixer D's item): ``app log-{threads}.txt`` was told to put {threads} in its
    command by the sweep's advice (RX11: a name gives no thread count) while tune and
    recommend kept its thread levels (any word holding {threads} gave it): one rule now,
    :func:`~hpcds1mpi.launch.program_threads.gives_threads`."""
    from hpcds1mpi.launch.program_threads import unthreaded_program
    from hpcds1mpi.measure.thread_use import idle_threads_line
    from tests.launch.test_elf_libraries import _linked_app

    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40"})
    idle = {"threads": [2], "busy": 0.77, "vs_one_thread": 0.96}
    for args in ("in.lj log-{threads}.txt", "--out=run{threads}", "-t {threads}",
                 "--threads={threads}", "-nt={threads}", "in.lj"):
        command = f"{app} {args}"
        told_sizes = "sweep larger sizes" in idle_threads_line("app", idle, command)
        assert told_sizes == (unthreaded_program(command) is None), command
