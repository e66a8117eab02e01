"""Several ranks of a program whose MPI is not read: a note, or for one known to link no MPI a
refusal (s33 tester D2), on a real OpenMP-only binary."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.mpi_family import program_mpi
from hpcds1mpi.launch.mpi_names import ProgramMPI
from hpcds1mpi.launch.rank_proof import one_rank_only, unproven_ranks
from tests.helpers import openmp_binary




def test_ranks_of_a_program_without_mpi_are_refused_with_both_ways_out(tmp_path):
    program = program_mpi([openmp_binary(tmp_path)])
    with pytest.raises(ConfigError) as refused:
        unproven_ranks(program, 2, ranks_regex=False)
    said = str(refused.value)
    assert "links no MPI library" in said and "--ranks-per-node 1" in said
    assert "--ranks-regex" in said and "\n" not in said
    assert unproven_ranks(program, 1, ranks_regex=False) == ""
    assert unproven_ranks(program, 2, ranks_regex=True) == ""


def test_an_unknown_program_gets_the_note_not_a_refusal():
    unknown = ProgramMPI(None, "run.sh is a script run by /bin/sh: its MPI cannot be read")
    assert unproven_ranks(unknown, 2, ranks_regex=False).startswith("note: the launch is "
                                                                     "unverified")
    assert unproven_ranks(ProgramMPI("mpich", "links libmpi.so.12"), 2, False) == ""


def _script(tmp_path, tasks: int, line: str):
    """A Slurm script of ``tasks`` tasks launching ``line``, read as advise reads it."""
    from hpcds1mpi.launch.script_reading import read_script
    from hpcds1mpi.launch.script_request import resolve_launch

    script = read_script(f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks={tasks}\n{line}\n")
    resolve_launch(script, script.launch)
    return script


def test_a_scripts_ranks_of_a_program_without_mpi_are_warned_of_as_copies(tmp_path):
    """s35 tester A2: `mpirun -np $SLURM_NTASKS mb-mpi run.nex` at 2 tasks (Debian's mb-mpi
    links no MPI) got no warning from advise, and the job failed: two copies, the same files."""
    from hpcds1mpi.launch.rank_proof import script_copies

    omp = openmp_binary(tmp_path)
    script = _script(tmp_path, 2, "mpirun -np $SLURM_NTASKS ./omp run.nex")
    said = script_copies(script, script.launch, str(tmp_path))
    assert said == (f"line 4: omp ({omp}) links no MPI library (every library it needs is "
                    "found, none is MPI), so the job's 2 ranks of omp would run as independent "
                    "copies, each doing the whole job (and writing the same files), and no "
                    "prediction for more than 1 rank holds; ask for 1 task (#SBATCH "
                    "--ntasks=1; its threads for speed), or install a build of it that links "
                    "MPI")
    one = _script(tmp_path, 1, "mpirun -np $SLURM_NTASKS ./omp run.nex")
    assert script_copies(one, one.launch, str(tmp_path)) is None


def test_an_interpreter_or_an_mpi_program_is_no_copy(tmp_path):
    """The rank proof never takes an interpreter's ELF for its program's (ruby, perl: their
    binding loads MPI at run time), nor an MPI program's."""
    import shutil

    from hpcds1mpi.launch.rank_proof import script_copies

    for name in ("x.pl", "x.rb", "x.py"):
        (tmp_path / name).write_text("1\n")
    for line in ("mpirun -np 2 perl x.pl", "mpirun -np 2 ruby x.rb", "mpirun -np 2 ruby -e 1",
                 "mpirun -np 2 python3 x.py"):
        script = _script(tmp_path, 2, line)
        assert script_copies(script, script.launch, str(tmp_path)) is None, line
    if shutil.which("mb-mpi") or __import__("os").path.exists("/usr/lib/mrbayes-mpi/mb-mpi"):
        script = _script(tmp_path, 2, "mpirun -np $SLURM_NTASKS /usr/lib/mrbayes-mpi/mb-mpi x")
        assert "mb-mpi (/usr/lib/mrbayes-mpi/mb-mpi) links no MPI library" in script_copies(
            script, script.launch, str(tmp_path))


def test_a_sweep_records_why_a_program_without_mpi_runs_one_rank_only(tmp_path):
    """s39 tester A2: RAxML's 1-rank thread sweep kept no record that it links no MPI, so
    recommend offered its 2 ranks. The reason is what the sweep's refusal of more ranks says."""
    from hpcds1mpi.launch.rank_proof import one_rank_only, swept_program

    binary = openmp_binary(tmp_path)
    program = swept_program([binary, "4"], {"PATH": "/usr/bin:/bin"}, None, None, str(tmp_path))
    why = one_rank_only(program, ranks_regex=False)
    assert why.startswith("the program omp links no MPI library") and "copies" in why
    # --ranks-regex proves each launch's ranks: nothing recorded; nor for an MPI program
    assert one_rank_only(program, True) == ""
    assert one_rank_only(ProgramMPI("mpich", "links libmpi.so.12"), False) == ""
    unknown = ProgramMPI(None, "run.sh is a script run by /bin/sh: its MPI cannot be read")
    assert one_rank_only(unknown, False) == ""


def test_a_scripts_ranks_of_a_program_linking_mpi_it_never_starts_are_warned_of(tmp_path):
    """s43 tester I1: the sweep refused apbs (links libmpi.so.40, never starts MPI) at 2 ranks,
    advise of a job running it at 2 said nothing; the warning says the copies and the fix."""
    from hpcds1mpi.launch.rank_proof import script_copies
    from tests.launch.test_mpi_init_calls import OVERLINKED, STARTS, _compile

    over = _compile(tmp_path, "over", OVERLINKED, "-Wl,--no-as-needed", "-lmpi")
    script = _script(tmp_path, 2, "mpirun -np $SLURM_NTASKS ./over in")
    said = script_copies(script, script.launch, str(tmp_path))
    assert said.startswith(f"line 4: over ({over}) links libmpi.so") and "\n" not in said
    assert "never starts MPI" in said and "2 ranks of over would run as independent copies" \
        in said and said.endswith("ask for 1 task (#SBATCH --ntasks=1; its threads for speed), "
                                  "or install a build of it that starts MPI")
    one = _script(tmp_path, 1, "mpirun -np $SLURM_NTASKS ./over in")
    assert script_copies(one, one.launch, str(tmp_path)) is None
    _compile(tmp_path, "starts", STARTS)  # an MPI program is never warned of
    script = _script(tmp_path, 2, "mpirun -np $SLURM_NTASKS ./starts")
    assert script_copies(script, script.launch, str(tmp_path)) is None


def test_the_ranks_of_a_profiler_or_debugger_are_the_program_it_runs(tmp_path):
    """s44 tester N6: `srun strace -f -o F ./app` (perf stat, ltrace) at 2 tasks was warned of
    as 2 copies of strace, whose own file links no MPI, though the ranks run ./app, an MPI
    program; the asked layout then had no prediction and --rewrite cut it to 1 task. Each tool
    the workload is read past is read past here too: its program is what the check reads."""
    import os
    import shutil

    from hpcds1mpi.launch.rank_proof import script_copies
    from tests.launch.test_mpi_init_calls import STARTS, _compile

    _compile(tmp_path, "starts", STARTS)
    omp = openmp_binary(tmp_path)
    tools = tmp_path / "bin"  # each tool a binary that links no MPI, as strace's and perf's do
    tools.mkdir()
    for name in ("strace", "perf", "ltrace", "valgrind", "gdb", "nsys", "tau_exec"):
        shutil.copy(omp, tools / name)
    env = {**os.environ, "PATH": f"{tools}:/usr/bin:/bin"}
    lines = ("srun strace -f -o /tmp/tr {}", "srun perf stat -e cycles {}",
             "srun ltrace -o /tmp/lt {}", "srun valgrind --leak-check=full {}",
             "srun gdb -batch -ex run --args {}", "srun nsys profile -o out {}",
             "mpirun -np $SLURM_NTASKS tau_exec -T mpi {}", "srun env X=1 strace -f {}")
    for line in lines:
        script = _script(tmp_path, 2, line.format("./starts 40"))
        assert script_copies(script, script.launch, str(tmp_path), env) is None, line
        script = _script(tmp_path, 2, line.format("./omp 40"))  # a tool's program without MPI
        said = script_copies(script, script.launch, str(tmp_path), env)
        assert said.startswith(f"line 4: omp ({omp}) links no MPI library"), (line, said)
    # the sweep reads the same program: `sweep --command "strace -f ./app"` at 2 ranks was
    # refused as 2 copies of strace
    from hpcds1mpi.launch.rank_proof import swept_program

    for tokens in (["strace", "-f", "-o", "/dev/null", "./starts"], ["perf", "stat", "./starts"]):
        assert swept_program(tokens, env, None, None, str(tmp_path)).family, tokens
        said = one_rank_only(swept_program([*tokens[:-1], "./omp"], env, None, None,
                                           str(tmp_path)), False)
        assert said.startswith("the program omp links no MPI library"), said
