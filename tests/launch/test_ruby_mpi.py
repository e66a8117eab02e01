"""A Ruby program's MPI binding and its extension, found without loading MPI
(:mod:`hpcds1mpi.launch.ruby_mpi`; Debian's ruby and ruby-mpi, s35 tester A1)."""

from __future__ import annotations

import os
import subprocess

import pytest

from hpcds1mpi.launch.ruby_mpi import extension_file, ruby_program, script_word
from tests.helpers import executable_script, system_program

#: The tester's program (s35 tester A1), shortened: an Allreduce over the ranks.
REDUCE_RB = ('require "mpi"\nMPI.Init\nworld = MPI::Comm::WORLD\n'
             'puts "ranks=#{world.size}"\nMPI.Finalize\n')


def ruby_mpi_extension() -> str:
    """The ruby-mpi extension Debian's ruby loads, asked by loading it (this test's own way,
    not the code's); skips without ruby-mpi, fails under ``HPCDS1MPI_REQUIRE_APPS=1``."""
    ruby = system_program("ruby")
    proc = subprocess.run([ruby, "-rmpi", "-e", r"puts $LOADED_FEATURES.grep(/\/mpi\.so$/)"],
                          capture_output=True, text=True, timeout=60)
    found = proc.stdout.strip()
    if proc.returncode == 0 and os.path.isfile(found):
        return found
    reason = "ruby-mpi not installed (bash scripts/system-packages)"
    if os.environ.get("HPCDS1MPI_REQUIRE_APPS") == "1":
        pytest.fail(f"HPCDS1MPI_REQUIRE_APPS=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def test_the_extension_is_the_one_ruby_loads_asked_without_loading_it(tmp_path):
    """s35 tester A1: `ruby reduce.rb` was read as ruby's own ELF, "links no MPI library"."""
    loaded = ruby_mpi_extension()
    (tmp_path / "reduce.rb").write_text(REDUCE_RB)
    env = dict(os.environ, RUBYOPT="-rmpi")  # never obeyed when asking: it would load MPI
    program = ruby_program(["ruby", "-w", str(tmp_path / "reduce.rb"), "4000"], env)
    assert program.binding and program.script == str(tmp_path / "reduce.rb")
    assert extension_file(program, env) == loaded


def test_the_binding_is_read_in_the_local_files_the_program_requires(tmp_path):
    system_program("ruby")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "comm.rb").write_text("# require 'mpi' in a comment is not a load\n"
                                 "require 'mpi'\n")
    (tmp_path / "setup.rb").write_text('require "comm"\n')
    (tmp_path / "app.rb").write_text('require_relative "setup"\nputs 1\n')
    assert not ruby_program(["ruby", str(tmp_path / "app.rb")], dict(os.environ)).binding
    with_lib = ruby_program(["ruby", "-I", str(lib), str(tmp_path / "app.rb")],
                            dict(os.environ))
    assert with_lib.binding and with_lib.options == (f"-I{lib}",)
    (lib / "comm.rb").write_text("# require 'mpi'\nputs 2\n")
    assert not ruby_program(["ruby", "-I", str(lib), str(tmp_path / "app.rb")],
                            dict(os.environ)).binding


def test_a_ruby_script_by_its_shebang_and_the_rmpi_switch(tmp_path):
    system_program("ruby")
    script = executable_script(tmp_path, "run", "#!/usr/bin/env ruby\n" + REDUCE_RB)
    program = ruby_program([script, "8"], dict(os.environ))
    assert program is not None and program.binding and program.script == script
    assert ruby_program(["ruby", "-rmpi", "-e", "MPI.Init"], dict(os.environ)).binding
    assert not ruby_program(["ruby", "-e", "puts 1"], dict(os.environ)).binding
    assert ruby_program(["perl", "x.pl"], dict(os.environ)) is None
    assert script_word(["ruby", "-I", "lib", "-w", "app.rb", "-x"]) == "app.rb"
    assert script_word(["ruby", "-e", "puts 1"]) is None


def test_a_relative_ruby_file_is_read_in_the_runs_folder(tmp_path, monkeypatch):
    """A sweep's `ruby reduce.rb` under --workdir runs in that folder: the sweep's launcher
    check reads it there, not in the folder the sweep was started from."""
    from hpcds1mpi.launch.mpi_family import program_mpi

    ruby_mpi_extension()
    run = tmp_path / "runs" / "8"
    run.mkdir(parents=True)
    (run / "reduce.rb").write_text(REDUCE_RB)
    monkeypatch.chdir(tmp_path)  # no reduce.rb here
    program = program_mpi(["ruby", "reduce.rb", "8"], dict(os.environ), str(run))
    assert program.family == "openmpi", program.evidence
