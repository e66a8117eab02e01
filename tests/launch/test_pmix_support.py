"""Which of srun's wire-ups an MPI library speaks, from its files
(:mod:`hpcds1mpi.launch.pmix_support`): Debian's Open MPI, and installations built here."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcds1mpi.launch.elf_libraries import needed_files
from hpcds1mpi.launch.pmix_support import openmpi_component_folder, openmpi_slurm_pmi
from tests.helpers import system_program
from tests.launch.fake_openmpi import fake_openmpi


def libmpi_of(program: str) -> str:
    return next(file for name, _, file in needed_files(program) if name == "libmpi.so.40")


def test_debians_open_mpi_has_no_slurm_pmi_component():
    """Its components are ext3x, flux and isolated (in openmpi/lib/openmpi3 beside libmpi)."""
    library = libmpi_of(system_program("hpcc"))
    assert openmpi_component_folder(library).endswith("/openmpi/lib/openmpi3")
    speaks, why = openmpi_slurm_pmi(library)
    assert speaks is False and "no Slurm PMI component (no mca_pmix_s1/s2 in /usr/lib/" in why


@pytest.mark.parametrize("component", ["mca_pmix_s1.so", "mca_pmix_s2.so"])
def test_open_mpi_built_with_slurms_pmi_speaks_it(tmp_path: Path, component: str):
    """Open MPI 4 built --with-pmi runs under srun --mpi=pmi2 (s28 tester U 8: every Open MPI
    program had been refused there)."""
    app = fake_openmpi(tmp_path, "withpmi", components=("mca_pmix_ext3x.so", component))
    speaks, why = openmpi_slurm_pmi(libmpi_of(app))
    assert speaks is True and component in why


def test_components_built_into_the_libraries_are_read_from_what_they_link(tmp_path: Path):
    static = fake_openmpi(tmp_path, "static", components=(), links=("libpmi2.so.0",))
    assert openmpi_slurm_pmi(libmpi_of(static))[0] is True
    five = fake_openmpi(tmp_path, "five", components=(), links=("libopen-pal.so.80",))
    assert openmpi_slurm_pmi(libmpi_of(five)) == (
        False, f"its Open MPI 5 ({libmpi_of(five)}) joins its ranks through PMIx only")
    unknown = fake_openmpi(tmp_path, "elsewhere", components=())  # a layout not known here
    assert openmpi_slurm_pmi(libmpi_of(unknown))[0] is None


def test_what_open_mpi_does_without_a_pmix_server_is_told_by_its_version(tmp_path: Path):
    """s40 tester A11: advise said Open MPI 5 under srun --mpi=pmi2 "aborts in MPI_Init"; it
    starts each rank as a singleton that exits 0 (the wheel's 5.0.11). Debian's 4.1 aborts."""
    from hpcds1mpi.launch.script_mpi_check import srun_check
    from hpcds1mpi.launch.script_reading import read_script

    five = fake_openmpi(tmp_path, "five", components=(), links=("libopen-pal.so.80",))
    for plugin in ("pmi2", "none"):
        script = read_script(f"#!/bin/bash\n#SBATCH -n 2\nsrun --mpi={plugin} {five}\n")
        kind, line = srun_check(script, script.launches[0], str(tmp_path))
        assert kind == "warning" and "independent 1-rank copy" in line, line
        assert "aborts" not in line, line
    from hpcds1mpi.launch.pmix_support import openmpi_without_pmix

    assert "independent 1-rank copy" in openmpi_without_pmix(libmpi_of(five))
    assert openmpi_without_pmix(libmpi_of(system_program("hpcc"))) == "it aborts in MPI_Init"
