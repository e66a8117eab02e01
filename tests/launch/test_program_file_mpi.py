"""A job script's program file's MPI, read as the sweep reads it
(:mod:`hpcds1mpi.launch.program_file_mpi`; Debian's GPAW, Python, mpi4py and Meep)."""

from __future__ import annotations

import subprocess

import pytest

from hpcds1mpi.launch import mpi_family
from hpcds1mpi.launch.program_file_mpi import _mpi4py_extension, file_mpi, program_word
from tests.helpers import system_program


@pytest.fixture
def started(monkeypatch):
    """Every command a subprocess is started with, in order (and still run)."""
    _mpi4py_extension.cache_clear()
    calls: list[list[str]] = []
    run = subprocess.run

    def record(command, *args, **kwargs):
        calls.append(list(command))
        return run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", record)
    return calls


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
