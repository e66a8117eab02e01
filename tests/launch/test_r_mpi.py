"""An R program's MPI package and its shared object (:mod:`hpcds1mpi.launch.r_mpi`; Debian's
Rscript and r-cran-rmpi, installed by scripts/system-packages)."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.launch.r_mpi import (_package_object, package_object, r_program, r_script,
                                    script_word)
from tests.helpers import recorded_commands, system_program

MC = ("suppressMessages(library(Rmpi))\nrank <- mpi.comm.rank(0)\n"
      "cat(sprintf('ranks=%d\\n', mpi.comm.size(0)))\nmpi.quit()\n")


@pytest.fixture
def rscript() -> str:
    """Debian's Rscript, whose Rmpi links Open MPI (the test skips where it is missing)."""
    return system_program("Rscript")


@pytest.fixture
def started(monkeypatch):
    """Every command a subprocess is started with, in order (and still run)."""
    _package_object.cache_clear()
    return recorded_commands(monkeypatch)


def test_the_package_an_r_program_loads_is_read_from_its_text(rscript, tmp_path):
    """s32 tester W1: `Rscript mc.R` read as Rscript's own ELF, which links no MPI."""
    env = dict(os.environ)
    loads = {"library(Rmpi)": "Rmpi", "suppressMessages(require('pbdMPI'))": "pbdMPI",
             "n <- Rmpi::mpi.comm.size(0)": "Rmpi", "library(doMPI)": "Rmpi",
             "requireNamespace(package = \"Rmpi\")": "Rmpi", "# library(Rmpi)\nx <- 1": None,
             "library(parallel)": None}
    for k, (text, package) in enumerate(loads.items()):
        script = tmp_path / f"p{k}.R"
        script.write_text(text + "\n")
        found = r_program(["Rscript", "--vanilla", str(script), "4"], env)
        assert found is not None and found.package == package, (text, found)
        assert found.interpreter == rscript and found.options == ("--vanilla",)
        assert found.script == str(script)
    assert r_program(["Rscript", "-e", "library(Rmpi); mpi.quit()"], env).package == "Rmpi"
    assert r_program(["Rscript", "--default-packages=methods,Rmpi", "-e", "1"],
                     env).package == "Rmpi"
    assert r_program(["sh", "-c", "Rscript x.R"], env) is None  # not an R program


def test_the_r_front_ends_program_file_is_read_from_its_words():
    assert script_word(["Rscript", "--vanilla", "mc.R", "4"]) == "mc.R"
    assert script_word(["R", "--slave", "-f", "mc.R", "--args", "4"]) == "mc.R"
    assert script_word(["/usr/bin/R", "--no-echo", "--file=/w/mc.R"]) == "/w/mc.R"
    assert script_word(["Rscript", "-e", "1", "--args", "x.R"]) is None
    assert script_word(["python3", "mc.R"]) is None


def test_an_r_script_is_read_by_its_hash_bang_or_its_suffix(rscript, tmp_path):
    env = dict(os.environ)
    by_env = tmp_path / "mc"
    by_env.write_text("#!/usr/bin/env Rscript\n" + MC)
    found = r_script(str(by_env), env)
    assert found is not None and (found.interpreter, found.script, found.package) == (
        rscript, str(by_env), "Rmpi")
    direct = tmp_path / "mm"
    direct.write_text(f"#!{rscript} --vanilla\n" + MC)
    assert r_script(str(direct), env).options == ("--vanilla",)
    plain = tmp_path / "mc.R"  # no #!: run as `Rscript mc.R`, by the Rscript on PATH
    plain.write_text(MC)
    assert r_script(str(plain), env).interpreter == rscript
    shell = tmp_path / "run.sh"
    shell.write_text("#!/bin/sh\nRscript mc.R\n")
    assert r_script(str(shell), env) is None
    assert r_script(str(tmp_path / "missing.R"), env) is None


def test_the_package_object_is_asked_of_the_interpreter_without_loading_it(
        rscript, started, tmp_path):
    script = tmp_path / "mc.R"
    script.write_text(MC)
    env = dict(os.environ)
    program = r_program([rscript, str(script)], env)
    shared = package_object(program, env)
    if shared is None and os.environ.get("HPCDS1MPI_REQUIRE_APPS") != "1":
        pytest.skip("Rmpi not installed for Rscript (bash scripts/system-packages)")
    assert shared is not None and shared.endswith("/Rmpi/libs/Rmpi.so"), shared
    # one question of the interpreter: where the package's object is (system.file loads no
    # package, so MPI is not started); the program itself never runs
    assert len(started) == 1 and started[0][:2] == [rscript, "-e"]
    assert "library" not in started[0][2] and str(script) not in started[0]
    assert package_object(program, env) == shared and len(started) == 1  # asked once
    missing = tmp_path / "pbd.R"
    missing.write_text("library(pbdMPI)\n")
    assert package_object(r_program([rscript, str(missing)], env), env) is None  # not installed


def test_the_package_is_read_in_the_local_files_the_program_sources(rscript, tmp_path,
                                                                     monkeypatch):
    """s48 tester Q4: `source("setup_mpi.R")` loading Rmpi was "an unknown MPI"; R opens a
    relative source() in its working folder (the run's), or, under chdir = TRUE, beside the
    file naming it."""
    env, run, code = dict(os.environ), tmp_path / "run", tmp_path / "code"
    run.mkdir()
    code.mkdir()
    monkeypatch.chdir(tmp_path)  # neither folder: the run's is given
    (code / "src.R").write_text('# source("pbd.R") in a comment is not read\n'
                                'source("setup_mpi.R")\nx <- mpi.comm.size(0)\n')
    script = str(code / "src.R")
    assert r_program(["Rscript", script], env, str(run)).package is None  # no setup_mpi.R
    (run / "setup_mpi.R").write_text("suppressMessages(library(Rmpi))\n")
    (run / "pbd.R").write_text("library(pbdMPI)\n")
    assert r_program(["Rscript", script, "400"], env, str(run)).package == "Rmpi"
    (run / "setup_mpi.R").unlink()
    (code / "setup_mpi.R").write_text("sys.source(file = 'lib/mpi.R', envir = e)\n")
    (code / "lib").mkdir()
    (code / "lib" / "mpi.R").write_text("require('pbdMPI')\n")
    assert r_program(["Rscript", script], env, str(run)).package == "pbdMPI"  # beside it
    # the run's folder is this one where none is given; -e code's sources are read there too
    (tmp_path / "job.R").write_text("library(doMPI)\n")
    assert r_program(["Rscript", "-e", "source('job.R')"], env).package == "Rmpi"
    (tmp_path / "a.R").write_text('source("b.R")\n')  # a loop ends: each file read once
    (tmp_path / "b.R").write_text('source("a.R"); mysource("job.R")\n')
    assert r_program(["Rscript", "a.R"], env).package is None


def test_sourced_files_are_followed_only_so_deep(rscript, tmp_path, monkeypatch):
    from hpcds1mpi.launch.r_mpi import _MAX_DEPTH

    monkeypatch.chdir(tmp_path)
    for k in range(_MAX_DEPTH + 1):  # f0.R sources f1.R ... the last loads Rmpi
        (tmp_path / f"f{k}.R").write_text(f'source("f{k + 1}.R")\n')
    (tmp_path / f"f{_MAX_DEPTH + 1}.R").write_text("library(Rmpi)\n")
    assert r_program(["Rscript", "f1.R"], dict(os.environ)).package == "Rmpi"
    assert r_program(["Rscript", "f0.R"], dict(os.environ)).package is None


def test_a_sourced_rmpi_is_the_sweeps_open_mpi_in_the_runs_folder(rscript, tmp_path,
                                                                  monkeypatch):
    """s48 tester Q4: the sweep's launcher check (program_mpi) read `Rscript src.R` as an
    unknown MPI and ran it under the venv's hydra as two 1-rank copies, recorded ok."""
    from hpcds1mpi.launch.mpi_family import program_mpi

    run = tmp_path / "w"
    run.mkdir()
    (run / "setup_mpi.R").write_text("suppressMessages(library(Rmpi))\n")
    (run / "src.R").write_text('source("setup_mpi.R")\n' + MC.split("\n", 1)[1])
    monkeypatch.chdir(tmp_path)  # --workdir w: the program and its source are there
    found = program_mpi(["Rscript", "src.R", "400"], dict(os.environ), str(run))
    if found.family is None and "does not have" in found.evidence and os.environ.get(
            "HPCDS1MPI_REQUIRE_APPS") != "1":
        pytest.skip("Rmpi not installed for Rscript (bash scripts/system-packages)")
    assert found.family == "openmpi", found.evidence
    assert found.evidence.startswith("an R program: the Rmpi of ")
