"""Whether more threads per rank can change what a program does
(:mod:`hpcds1mpi.launch.program_threads`): stub programs built here, nothing run."""

from __future__ import annotations

import os

from hpcds1mpi.launch.program_threads import one_thread_line, unthreaded_program
from tests.launch.test_elf_libraries import _linked_app


def test_an_mpi_binary_without_openmp_nor_threaded_blas_cannot_use_threads(tmp_path):
    """ABINIT (Debian: Open MPI, no OpenMP) was tuned to 1 rank x 2 threads on noise
    (s28 tester U 5)."""
    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40"})
    assert unthreaded_program(f"{app} si.abi") == "app"
    assert unthreaded_program([app, "si.abi"]) == "app"  # argv as the sweep has it
    assert one_thread_line("app").startswith("threads = 1 only: app links no OpenMP runtime "
                                             "nor threaded BLAS and its command has no "
                                             "{threads}")
    on_path = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    assert unthreaded_program("app si.abi", on_path) == "app"


def test_threads_may_matter_or_cannot_be_told(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "omp").mkdir()
    app = _linked_app(tmp_path / "plain", {"libmpi.so.40": "libmpi.so.40"})
    assert unthreaded_program(f"{app} --nthreads {{threads}}") is None  # it takes its count
    omp = _linked_app(tmp_path / "omp", {"libmpi.so.40": "libmpi.so.40",
                                         "libgomp.so.1": "libgomp.so.1"})
    assert unthreaded_program(omp) is None
    assert unthreaded_program(f"/bin/sh -c {app}") is None  # a wrapper: the program unknown
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/sh\nexec {app}\n")
    script.chmod(0o755)
    assert unthreaded_program(str(script)) is None
    for unknown in (None, "", "no-such-program-here", f"{app} 'unbalanced"):
        assert unthreaded_program(unknown) is None


def test_a_binary_is_read_once_until_it_changes(tmp_path, monkeypatch):
    """recommend asks once per question (a batch, the service): the library tree (~50 ms for
    LAMMPS or OpenFOAM) is read once per version of the file, again when it is rebuilt."""
    import shutil

    import hpcds1mpi.launch.elf_libraries as elf

    (tmp_path / "plain").mkdir()
    (tmp_path / "omp").mkdir()
    app = _linked_app(tmp_path / "plain", {"libmpi.so.40": "libmpi.so.40"})
    omp = _linked_app(tmp_path / "omp", {"libmpi.so.40": "libmpi.so.40",
                                         "libgomp.so.1": "libgomp.so.1"})
    reads = []
    real = elf.needed_tree
    monkeypatch.setattr(elf, "needed_tree", lambda path, *a, **k: reads.append(path) or
                        real(path, *a, **k))
    assert [unthreaded_program(f"{app} in.lj") for _ in range(3)] == ["app"] * 3
    assert len(reads) == 1
    os.unlink(app)  # rebuilt with OpenMP: a new file version, read again
    shutil.copy(omp, app)
    os.rename(tmp_path / "omp" / "lib", tmp_path / "omp" / "lib.moved")
    shutil.copytree(tmp_path / "omp" / "lib.moved", tmp_path / "plain" / "lib", dirs_exist_ok=True)
    assert unthreaded_program(f"{app} in.lj") is None


def test_threads_are_given_by_a_word_of_their_own_not_inside_a_name():
    """s47 review RX11: ``log-{ranks}x{threads}.txt`` had counted as giving the program its
    threads, so a program that ignores them was told to sweep larger sizes. Every form that
    gives a count gives it; what is not clearly a name counts as giving it."""
    from hpcds1mpi.launch.program_threads import gives_threads

    for command in ("cmsearch --cpu {threads} m.cm s.fa", "app -t{threads}", "app -t {threads}",
                    "app --threads={threads}", "app -nt={threads}", "app threads={threads}",
                    "env OMP_NUM_THREADS={threads} ./app", "OMP_NUM_THREADS={threads} ./app",
                    "app --threads '{threads}'", "app --threads \"{threads}",  # unbalanced
                    "namd2 +p{threads} in.namd", "namd2 +ppn {threads} in.namd",
                    "env OMP_NUM_THREADS={threads},1 ./app", "app -n $(({threads}*2))",
                    "taskset -c 0-{threads} ./app", "app log-{threads}.txt -t {threads}",
                    ["app", "-t", "{threads}"]):
        assert gives_threads(command), command
    for command in ("python busy.py {size} log-{ranks}x{threads}.txt", "./app {size}", None,
                    "", "app log-{threads}.txt", "app --out=run{threads}", "app -o out/{threads}/r",
                    "app {threads}.log", "app --log=log_{threads}", ["app", "log-{threads}.txt"]):
        assert not gives_threads(command), command


def test_a_thread_count_only_inside_a_file_name_leaves_a_binary_unthreaded(tmp_path):
    """s48 (fixer D's item): any word holding {threads} (``log-{threads}.txt``) had counted as
    giving the program its thread count, so tune and recommend kept an unthreaded binary's
    thread levels (noise only) where the sweep's advice, by RX11's rule, said it takes none.
    Every form that gives a count still keeps them."""
    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40"})
    for named in ("in.lj log-{threads}.txt", "--out=run{threads}", "-o {size}_{threads}.h5"):
        assert unthreaded_program(f"{app} {named}") == "app", named
        assert unthreaded_program([str(app), *named.split()]) == "app", named
    for gives in ("-t {threads}", "-t{threads}", "--threads={threads}", "-nt={threads}",
                  "+p{threads}", "--threads '{threads}'", "log-{threads}.txt -t {threads}"):
        assert unthreaded_program(f"{app} {gives}") is None, gives
    line = one_thread_line("app", f"{app} in.lj log-{{threads}}.txt")
    assert line == ("threads = 1 only: app links no OpenMP runtime nor threaded BLAS and its "
                    "command has no {threads} giving its thread count (in log-{threads}.txt it is "
                    "part of a name)")
