"""A job script's program file's MPI, read as the sweep reads it
(:mod:`hpcds1mpi.launch.program_file_mpi`; Debian's GPAW, Python, mpi4py and Meep)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch import mpi_family
from hpcds1mpi.launch.program_file_mpi import _mpi4py_extension, file_mpi, program_word
from tests.helpers import recorded_commands, system_program


@pytest.fixture
def started(monkeypatch):
    """Every command a subprocess is started with, in order (and still run)."""
    _mpi4py_extension.cache_clear()
    return recorded_commands(monkeypatch)


def test_a_python_program_is_read_through_its_interpreters_mpi4py(started):
    """s29 tester B2: /usr/bin/gpaw (#!/usr/bin/python3) was unknown to advise's check, so
    `srun --mpi=pmi2 gpaw ...` got no warning while Meep, an ELF, got one."""
    gpaw = system_program("gpaw")
    found = file_mpi(gpaw)
    assert found.family == mpi_family.OPENMPI, found  # Debian's mpi4py: Open MPI
    assert "a Python program: the mpi4py of /usr/bin/python3" in found.evidence
    assert found.evidence.endswith("links libmpi.so.40") and found.elf.endswith(".so")
    # the interpreter is asked where its mpi4py is; GPAW itself never runs
    assert started == [["/usr/bin/python3", "-c", mpi_family.MPI4PY_FILE]]
    assert file_mpi(gpaw).family == mpi_family.OPENMPI and len(started) == 1  # asked once


def test_an_elf_and_a_shell_wrapper_of_one_are_read_alike(tmp_path):
    meep = system_program("meep")
    assert file_mpi(meep).family == mpi_family.OPENMPI
    wrapper = tmp_path / "run.sh"
    wrapper.write_text(f"#!/bin/sh\nexport OMP_NUM_THREADS=1\nexec {meep} \"$@\"\n")
    found = file_mpi(str(wrapper))
    assert found.family == mpi_family.OPENMPI and found.evidence.startswith("it runs meep: ")
    by_variable = tmp_path / "var.sh"
    by_variable.write_text("#!/bin/sh\nexec $APP \"$@\"\n")
    assert file_mpi(str(by_variable)).family is None  # no guess


def test_files_of_unknown_kind_are_unknown(tmp_path):
    text = tmp_path / "app.py"
    text.write_text("print(1)\n")  # no #!: what runs it is not known
    assert file_mpi(str(text)).family is None
    perl = tmp_path / "app.pl"
    perl.write_text("#!/usr/bin/perl\nprint 1;\n")
    assert file_mpi(str(perl)).family is None
    assert file_mpi(str(tmp_path / "missing")).family is None


def test_the_word_read_is_a_python_interpreters_own():
    assert program_word(["python3", "-m", "gpaw", "python", "h2.py"]) == "python3"
    assert program_word(["/usr/bin/python3", "/usr/bin/gpaw"]) == "/usr/bin/python3"
    assert program_word(["gpaw", "python", "h2.py"]) == "gpaw"
    assert program_word(["bash", "run.sh", "8"]) == "run.sh"
    assert program_word([]) == ""


def test_the_program_word_is_read_past_an_exec_wrapper_prefix():
    """s30 tester K1: advise's MPI check read `env` itself."""
    assert program_word(["env", "X=1", "python3", "app.py"]) == "python3"
    assert program_word(["nice", "-n", "5", "./app", "3"]) == "./app"


def _r_program(tmp_path, name: str = "mc.R") -> str:
    """An Rmpi program (the tester's Monte Carlo pi), with Debian's Rscript and Rmpi present."""
    system_program("Rscript")
    script = tmp_path / name
    script.write_text("suppressMessages(library(Rmpi))\nn <- mpi.comm.size(0)\nmpi.quit()\n")
    return str(script)


def test_an_r_program_is_read_through_its_mpi_package(tmp_path):
    """s32 tester W1: `Rscript mc.R` read as Rscript's ELF ("links no MPI library"), so the
    sweep launched an Open MPI program with the venv's MPICH hydra: two 1-rank copies, ok."""
    from hpcds1mpi.launch.program_file_mpi import interpreted_program_mpi

    script = _r_program(tmp_path)
    found = file_mpi(script)
    assert found.family == mpi_family.OPENMPI, found
    assert found.evidence.startswith("an R program: the Rmpi of /usr/bin/Rscript, ")
    assert found.evidence.endswith("/Rmpi/libs/Rmpi.so, links libmpi.so.40")
    assert found.elf.endswith("Rmpi.so")
    env = dict(os.environ)
    for words in (["Rscript", script, "4000000"], ["R", "--slave", "-f", script]):
        program = interpreted_program_mpi(words, env)
        assert program.family == mpi_family.OPENMPI and program.path == found.elf, program
    # what the sweep's launcher check takes: its library, and the launcher it names
    program = interpreted_program_mpi(["Rscript", script], env)
    assert os.path.basename(mpi_family.library_file(program, env)).startswith("libmpi.so.40")
    hydra = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(hydra) and shutil.which("mpirun.openmpi"):
        with pytest.raises(LaunchError) as caught:
            mpi_family.check_launcher(program, hydra, env=env)
        assert str(caught.value).endswith(f"--mpiexec {shutil.which('mpirun.openmpi')}")
    wrapper = tmp_path / "run.sh"
    wrapper.write_text(f"#!/bin/sh\nexec Rscript {script} \"$@\"\n")
    assert file_mpi(str(wrapper)).evidence.startswith("it runs Rscript: an R program: ")


def test_an_r_program_naming_no_mpi_package_is_unknown(tmp_path):
    from hpcds1mpi.launch.program_file_mpi import interpreted_program_mpi

    system_program("Rscript")
    plain = tmp_path / "serial.R"
    plain.write_text("cat(sum(runif(10)), '\\n')\n")
    assert file_mpi(str(plain)).family is None
    program = interpreted_program_mpi(["Rscript", str(plain)], dict(os.environ))
    assert program.family is None and program.evidence == (
        "serial.R is an R program that loads no MPI package by name (library(Rmpi), "
        "library(pbdMPI))")
    assert interpreted_program_mpi(["hpcc"], dict(os.environ)) is None  # no R program: read elsewhere


def test_the_word_read_is_an_r_front_ends_program_file():
    """s32 tester W2: `mc.R` of `Rscript mc.R` was looked up on PATH, not in the job's folder."""
    assert program_word(["Rscript", "mc.R", "12000000"]) == "./mc.R"
    assert program_word(["R", "--slave", "-f", "mc.R"]) == "./mc.R"
    assert program_word(["env", "X=1", "Rscript", "/w/mc.R"]) == "/w/mc.R"
    assert program_word(["Rscript", "-e", "1"]) == "Rscript"


@pytest.mark.parametrize("launch, said", [
    ("mpirun -np 2", "but mpirun here is "), ("srun --mpi=pmi2", "but srun runs it with "
                                                                   "--mpi=pmi2")])
def test_advise_warns_of_a_launcher_that_cannot_start_an_r_program(tmp_path, launch, said):
    """s32 tester W2: `mpirun` (the venv's hydra first on PATH) and `srun --mpi=pmi2` of an
    Rmpi program were silent; both jobs failed."""
    from hpcds1mpi.launch.launch_line_checks import launch_checks
    from hpcds1mpi.launch.script_reading import read_script

    _r_program(tmp_path)
    bin_dir = os.path.dirname(sys.executable)
    if launch.startswith("mpirun") and not os.path.exists(os.path.join(bin_dir, "mpirun")):
        pytest.skip("no MPICH wheel's mpirun beside this Python")
    text = ("#!/bin/bash\n#SBATCH --ntasks=2\n#SBATCH --time=00:10:00\n"
            f"{launch} Rscript mc.R 12000000\n")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    warnings, _ = launch_checks(read_script(text, "my.sbatch"), str(tmp_path), env)
    assert len(warnings) == 1 and warnings[0].startswith(
        "line 4: mc.R is linked against Open MPI (an R program: the Rmpi of "), warnings
    assert said in warnings[0]


def test_a_ruby_program_is_read_through_its_mpi_binding_by_the_sweep_and_advise(
        tmp_path, monkeypatch):
    """s35 tester A1: `ruby reduce.rb` said "program MPI: an unknown MPI (links no MPI
    library)", and the sweep launched the Open MPI program with the venv's MPICH hydra: every
    run crashed in MPI_Init. The sweep's reading and advise's now read ruby-mpi's mpi.so."""
    from tests.launch.test_ruby_mpi import REDUCE_RB, ruby_mpi_extension

    extension = ruby_mpi_extension()
    (tmp_path / "reduce.rb").write_text(REDUCE_RB)
    env = dict(os.environ)
    from hpcds1mpi.launch.program_file_mpi import interpreted_program_mpi

    assert interpreted_program_mpi(["ruby", "reduce.rb"], env, str(tmp_path)).family == \
        mpi_family.OPENMPI
    monkeypatch.chdir(tmp_path)  # the sweep's folder (program_mpi reads R and Ruby there)
    program = mpi_family.program_mpi(["ruby", "reduce.rb", "4000"], env, str(tmp_path))
    assert program.family == mpi_family.OPENMPI and program.path == extension, program
    assert program.evidence == (f"a Ruby program: the mpi binding of {shutil.which('ruby')}, "
                                f"{extension}, links libmpi.so.40")
    found = file_mpi(str(tmp_path / "reduce.rb"))  # advise: `ruby reduce.rb` names this file
    assert (found.family, found.elf) == (mpi_family.OPENMPI, extension)
    assert program_word(["ruby", "-w", "reduce.rb", "8"]) == "./reduce.rb"
    hydra = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(hydra) and shutil.which("mpirun.openmpi"):
        with pytest.raises(LaunchError) as caught:
            mpi_family.check_launcher(program, hydra, env=env)
        assert str(caught.value).endswith(f"--mpiexec {shutil.which('mpirun.openmpi')}")


def test_an_interpreters_mpi_is_never_said_to_be_no_mpi(tmp_path, monkeypatch):
    """s35 tester A1: "links no MPI library" was said of ruby's ELF; a Perl or Ruby program
    without a binding read here is unknown, and its ranks are not refused as copies."""
    from hpcds1mpi.launch.rank_proof import unproven_ranks

    perl = system_program("perl")
    (tmp_path / "x.pl").write_text("print 1;\n")
    (tmp_path / "plain.rb").write_text("puts 1\n")
    monkeypatch.chdir(tmp_path)
    for words, said in ((["perl", "x.pl"], "perl is an interpreter: its MPI could not be read "
                         "(a Perl program loads it at run time)"),
                        (["ruby", "plain.rb"], "plain.rb is a Ruby program that requires no "
                         "MPI binding by name (require \"mpi\"): its MPI could not be read")):
        if shutil.which(words[0]) is None:
            continue
        program = mpi_family.program_mpi(words, dict(os.environ), str(tmp_path))
        assert (program.family, program.evidence) == (None, said)
        assert unproven_ranks(program, 2, False).startswith("note: the launch is unverified")
    assert not file_mpi(perl).without_mpi and file_mpi(perl).family is None
