"""What the sweep reads of a program's libraries: the note on threads it cannot use
(:func:`hpcds1mpi.measure.program_mpi.threading_note`)."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.measure.program_mpi import threading_note
from tests.launch.test_elf_libraries import _linked_app


def test_threads_swept_for_an_mpi_binary_without_openmp_are_noted(tmp_path):
    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40"})
    env = dict(os.environ)
    note = threading_note([app, "-i", "in"], env, [1, 2])
    assert note == ("note: app links no OpenMP runtime nor threaded BLAS: --threads above 1 "
                    "only gives each rank idle cores (unless the program starts threads of "
                    "its own)")
    assert threading_note([app], env, [1]) == ""  # no threads above 1 swept


def test_no_note_for_openmp_a_wrapper_or_a_script(tmp_path):
    env = dict(os.environ)
    omp = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40",
                                 "libgomp.so.1": "libgomp.so.1"})
    assert threading_note([omp], env, [2]) == ""
    assert threading_note(["/bin/sh", "-c", "pw.x"], env, [2]) == ""  # the program is unknown
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\nexec pw.x\n")
    script.chmod(0o755)
    assert threading_note([str(script)], env, [2]) == ""
    assert threading_note(["no-such-program-here"], env, [2]) == ""


def test_a_command_that_takes_its_thread_count_gets_no_note(tmp_path):
    """Was: the note said "--threads above 1 only gives each rank idle cores" of a command
    with {threads} (the program is told its count), which tune and recommend already offered
    threads for: the rule is launch/program_threads.unthreaded_program's, one for all."""
    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40"})
    env = dict(os.environ)
    assert threading_note([app, "--nthreads", "{threads}"], env, [2]) == ""
    assert threading_note(f"{app} --nthreads {{threads}} -i in-{{size}}", env, [2]) == ""
    assert threading_note(f"{app} -i in-{{size}}", env, [2]).startswith("note: app links")


def test_the_sweep_notes_unused_threads_from_the_command_as_given(tmp_path):
    """external.run_external reads the command before its placeholders are filled: "-t 2"
    (filled) had hidden the {threads} the program takes its count from."""
    import subprocess

    from tests.helpers import hpcds1mpi_exe, system_program

    mpirun = system_program("mpirun.openmpi")
    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40"})
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    said = {}
    for name, command in (("plain", f"{app} {{size}}"), ("told", f"{app} -t {{threads}}")):
        proc = subprocess.run(
            [hpcds1mpi_exe(), "sweep", "--command", command, "--label", "app", "--sizes", "1",
             "--threads", "2", "--mpiexec", mpirun, "--min-repeats", "1", "--max-repeats",
             "1", "--min-time", "0", "--no-progress", "--out", str(tmp_path / f"{name}.h5")],
            capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        said[name] = "links no OpenMP runtime" in proc.stderr
    assert said == {"plain": True, "told": False}


def _sweep(tmp_path, args: list[str], env: dict, ranks: int = 0) -> str:
    """Run ``hpcds1mpi sweep ARGS`` (under ``mpiexec -n RANKS`` when given) in ``tmp_path``."""
    import subprocess

    from hpcds1mpi.launch.launcher_discovery import mpiexec_path
    from tests.helpers import hpcds1mpi_exe

    launch = [mpiexec_path(), "-n", str(ranks)] if ranks else []
    proc = subprocess.run([*launch, hpcds1mpi_exe(), "sweep", *args, "--min-repeats", "1",
                           "--max-repeats", "1", "--min-time", "0", "--no-progress"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return str(tmp_path / args[args.index("--out") + 1])


def _first_session(tmp_path, wrapper_text: str, env: dict):
    """The README's first session: kernels into k.h5, the wrapper ``my_app`` into app.h5,
    both read for training; the training data and the two files' machines tables."""
    import sys

    from hpcds1mpi.records import telemetry
    from hpcds1mpi.records.training import TrainingData

    env = dict(env, PATH=f"{os.path.dirname(sys.executable)}:{env['PATH']}")
    kernels = _sweep(tmp_path, ["--kernel", "stencil", "--sizes", "16,24,32,48",
                                "--ranks-per-node", "1", "--threads", "1", "--precisions",
                                "fp64", "--out", "k.h5"], env, ranks=1)
    app = tmp_path / "my_app"
    app.write_text(wrapper_text)
    app.chmod(0o755)
    program = _sweep(tmp_path, ["--command", "./my_app --n {size}", "--label", "my_app",
                                "--sizes", "100,200", "--out", "app.h5"], env)
    data = TrainingData.read([kernels, program])
    return data, telemetry.read_machines(kernels), telemetry.read_machines(program)


PROGRAM = "import sys; sum(i * i for i in range(int(sys.argv[2]) * 500))"


def test_a_wrapper_scripts_runs_train_with_the_kernels_as_one_machine(tmp_path):
    """README "A first session" with ``my_app`` a ``#!/bin/sh`` wrapper: train had refused
    "training data mixes 2 machines": the wrapper's fingerprint was the launcher's version
    line (s29 tester E1). The program it names is read instead."""
    data, kernels, program = _first_session(
        tmp_path, f'#!/bin/sh\npython3 -c "{PROGRAM}" "$@"\n', dict(os.environ))
    assert data.machine_ids == set(kernels["machine_id"]) == set(program["machine_id"])
    assert list(program["mpi_library"]) == list(kernels["mpi_library"])  # read, not assumed


def test_a_wrapper_naming_its_program_by_a_variable_takes_the_launchers_library(tmp_path):
    """The program cannot be read (``exec $APP``): the library installed with the launcher
    (the wheel's hydra and libmpi) stands in, marked as assumed, under the kernels' id
    (OpenFOAM tester A6: a wrapper's runs and the kernels' had been "different machines")."""
    import sys

    from hpcds1mpi.measure.program_mpi import ASSUMED

    (tmp_path / "prog.py").write_text(PROGRAM.replace("; ", "\n"))
    env = dict(os.environ, APP=f"{sys.executable} {tmp_path / 'prog.py'}")
    data, kernels, program = _first_session(
        tmp_path, '#!/bin/sh\nexec $APP "$@"\n', env)
    assert data.machine_ids == set(kernels["machine_id"]) == set(program["machine_id"])
    assert list(program["mpi_library"]) == [f"{kernels['mpi_library'][0]} {ASSUMED}"]


def test_a_launcher_whose_library_is_not_its_version_assumes_nothing(tmp_path):
    """A launcher whose installation holds another version's library (or none) gives no
    library to assume: the launcher's line stands in, marked unread, and its runs keep an id
    of their own, refused beside the kernels'."""
    from hpcds1mpi.launch.launcher_discovery import mpiexec_path
    from hpcds1mpi.launch.launchers import library_version
    from hpcds1mpi.measure.program_mpi import UNREAD, program_mpi_library

    wheel_lib = os.path.join(os.path.dirname(os.path.dirname(mpiexec_path())), "lib",
                             "libmpi.so.12")
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib").mkdir()
    os.symlink(wheel_lib, tmp_path / "lib" / "libmpi.so.12")
    launcher = tmp_path / "bin" / "mpiexec"
    launcher.write_text("#!/bin/sh\necho 'HYDRA build details:'\necho '    Version: 9.9.9'\n")
    launcher.chmod(0o755)
    wrapper = tmp_path / "run.sh"
    wrapper.write_text('#!/bin/sh\nexec $APP "$@"\n')
    wrapper.chmod(0o755)
    found = program_mpi_library([str(wrapper)], dict(os.environ), str(launcher))
    assert found == f"{library_version(str(launcher))} {UNREAD}"


def test_a_wrapper_of_another_mpis_program_keeps_its_own_machine(tmp_path):
    """Runs whose MPI differs stay apart: a wrapper of Debian's python3 (its mpi4py: Open MPI)
    reads as Open MPI, not as the launcher's MPICH."""
    import subprocess

    from hpcds1mpi.launch.launcher_discovery import mpiexec_path
    from hpcds1mpi.measure.program_mpi import program_mpi_library

    python = "/usr/bin/python3"
    if not os.path.exists(python) or subprocess.run(
            [python, "-c", "import mpi4py"], capture_output=True).returncode != 0:
        pytest.skip("no Debian python3 with mpi4py here")
    wrapper = tmp_path / "run.sh"
    wrapper.write_text(f'#!/bin/sh\nexec {python} prog.py "$@"\n')
    wrapper.chmod(0o755)
    found = program_mpi_library([str(wrapper)], dict(os.environ), mpiexec_path())
    assert found.startswith("Open MPI v") and "assumed" not in found


def test_the_fingerprint_reads_the_program_past_an_exec_wrapper_on_the_ranks_path(tmp_path):
    """s30 tester K1, K4: `env N={size} prog` and a `prog` that pyenv's shims shadow here were
    recorded "[assumed ...]" though the program's own library could be read."""
    from hpcds1mpi.measure.program_mpi import ASSUMED, program_mpi_library
    from tests.helpers import system_program

    hpcc, launcher = system_program("hpcc"), system_program("mpirun.openmpi")
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "hpcc").write_text('#!/bin/sh\nexec $REAL "$@"\n')
    (shims / "hpcc").chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"}
    for tokens in (["env", "N=3", hpcc], ["hpcc"], ["taskset", "-c", "0", "hpcc"]):
        line = program_mpi_library(tokens, env, launcher)
        assert line.startswith("Open MPI v") and ASSUMED not in line, (tokens, line)


def test_the_fingerprint_reads_the_program_on_the_path_an_open_mpi_prefix_gives(tmp_path):
    """s31 review M3: `mpirun --prefix /usr` puts /usr/bin first on the ranks' PATH, so
    `python3` is Debian's (Open MPI's mpi4py), not this PATH's venv python3 (MPICH's); the
    library was read without the launcher's options."""
    import subprocess
    import sys

    from hpcds1mpi.measure.program_mpi import program_mpi_library
    from tests.helpers import system_program

    system_program("mpirun.openmpi")
    if subprocess.run(["/usr/bin/python3", "-c", "import mpi4py"],
                      capture_output=True).returncode != 0:
        pytest.skip("no Debian python3 with mpi4py here")
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    tokens = ["python3", "app.py"]
    own = program_mpi_library(tokens, env, "mpirun.openmpi")
    if not own.startswith("MPICH"):
        pytest.skip("this PATH's python3 has no MPICH mpi4py")
    assert program_mpi_library(tokens, env, "mpirun.openmpi",
                               ["--prefix", "/usr"]).startswith("Open MPI v")
    assert program_mpi_library(tokens, env, "mpirun.openmpi",
                               ["--prefix", "/usr", "--noprefix"]) == own


def test_an_r_programs_fingerprint_is_its_mpi_packages_library(tmp_path):
    """s32 tester W1: `Rscript mc.R` (Rmpi: Open MPI) was recorded as the venv's hydra's
    "MPICH 5.0.2 [assumed ...]": Rscript's own ELF links no MPI, so the launcher's stood in.
    Read: the library its Rmpi links, the line a kernel sweep with that library records."""
    from hpcds1mpi.launch.launcher_discovery import mpiexec_path
    from hpcds1mpi.measure.program_mpi import _library_line, program_mpi_library
    from tests.helpers import system_program

    rscript = system_program("Rscript")
    script = tmp_path / "mc.R"
    script.write_text("suppressMessages(library(Rmpi))\nmpi.quit()\n")
    env = dict(os.environ)
    found = program_mpi_library([rscript, str(script), "4000000"], env, mpiexec_path())
    assert found.startswith("Open MPI v") and "assumed" not in found, found
    libmpi = "/usr/lib/x86_64-linux-gnu/libmpi.so.40"
    if os.path.exists(libmpi):
        assert found == _library_line(libmpi, env)
    serial = tmp_path / "serial.R"  # no MPI package named: unread, as before
    serial.write_text("cat(1)\n")
    assert "assumed" in program_mpi_library([rscript, str(serial)], env, mpiexec_path())


def test_a_ruby_programs_fingerprint_is_its_bindings_library(tmp_path):
    """s35 tester A1: a Ruby program's fingerprint was the launcher's installation's ("MPICH
    5.0.2 [assumed ...]"), as R's had been: read, its ruby-mpi extension's library."""
    from hpcds1mpi.launch.launcher_discovery import mpiexec_path
    from hpcds1mpi.measure.program_mpi import program_mpi_library
    from tests.launch.test_ruby_mpi import REDUCE_RB, ruby_mpi_extension

    ruby_mpi_extension()
    (tmp_path / "reduce.rb").write_text(REDUCE_RB)
    found = program_mpi_library(["ruby", str(tmp_path / "reduce.rb")], dict(os.environ),
                                mpiexec_path())
    assert found.startswith("Open MPI v") and "assumed" not in found, found
