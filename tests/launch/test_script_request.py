"""What a script's launch line asks for beyond the layout: the ranks' threads (the program's size
lined up with its measured command: ``test_script_placeholders.py``; the launcher against the
program's MPI: ``test_script_mpi_check.py``; a script that launches more than once:
``test_script_repeats.py``)."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch import script_request as sr
from hpcds1mpi.launch.script_reading import read_script


@pytest.mark.parametrize("text, threads", [
    # PBS without ompthreads: the program's own --threads 2 is the ranks' threads, not 1
    ("#PBS -l select=1:ncpus=2:mpiprocs=1\nmpiexec -n 1 hpcds1mpi run stencil --size 128"
     " --threads 2\n", 2),
    ("#SBATCH -N 1\nexport OMP_NUM_THREADS=1\nsrun hpcds1mpi sweep --plan p.toml "
     "--threads=4\n", 4),
    # srun's own --threads (before the program) and another program's --threads are not it
    ("#SBATCH -N 1\n#SBATCH -c 2\nsrun --threads 3 ./app --threads 8\n", 2),
])
def test_hpcds1mpi_own_threads_are_read_as_the_ranks_threads(text, threads):
    script = read_script(text)
    assert script.threads == threads


def test_a_differing_omp_setting_gets_a_note_naming_both():
    script = read_script("#SBATCH -N 1\nexport OMP_NUM_THREADS=1\nsrun hpcds1mpi run stencil"
                         " --size 9 --threads 2\n")
    assert script.threads == 2
    assert any("--threads 2" in n and "OMP_NUM_THREADS=1" in n for n in script.notes)


def test_a_programs_own_thread_option_is_read_from_its_measured_command():
    """gmx_mpi mdrun -ntomp 2 sets its threads in its arguments: with the measured command's
    -ntomp {threads}, that word is the ranks' threads and where a rewrite changes them."""
    text = ("#SBATCH -N 1 --ntasks-per-node=1 --cpus-per-task=4\n"
            "mpirun -np 1 gmx_mpi mdrun -s a.tpr -nsteps 300 -ntomp 2 -deffnm run\n")
    script = read_script(text)
    assert script.threads == 4  # no measured command: the CPUs per task
    script.command = "gmx_mpi mdrun -s {size}/a.tpr -nsteps 100 -ntomp {threads} -deffnm run"
    sr.resolve_launch(script, script.launch)
    own = sr.program_threads(script, script.launch)
    assert script.threads == 2 and own.said == "-ntomp 2" and own.kept == []
    assert [text[a:b] for a, b in own.spans] == ["2"]
    assert text[:own.spans[0][0]].endswith("-ntomp ")
    var = read_script("#SBATCH -N 1\nNT=3\nsrun gmx_mpi mdrun -ntomp $NT\n")
    var.command = "gmx_mpi mdrun -ntomp {threads}"
    own = sr.program_threads(var, var.launch)
    assert (own.threads, own.spans, own.kept) == (3, [], ["$NT"])
    follows = read_script("#SBATCH -N 1 -c 2\nsrun gmx_mpi mdrun -ntomp $SLURM_CPUS_PER_TASK\n")
    follows.command = "gmx_mpi mdrun -ntomp {threads}"
    assert sr.program_threads(follows, follows.launch).kept == []  # the directive changes


def test_hpcds1mpi_run_without_threads_runs_one_whatever_omp_num_threads_says():
    """s28 tester V5: OMP_NUM_THREADS=2 (or ompthreads=2) was read as 2 threads per rank, but
    ``hpcds1mpi run`` without --threads runs 1 (its option's default)."""
    text = ("#PBS -l select=1:ncpus=2:mpiprocs=1:ompthreads=2\nexport OMP_NUM_THREADS=2\n"
            "mpiexec -n 1 hpcds1mpi run fft --size 128\n")
    script = read_script(text)
    assert script.threads == 1
    assert ("line 3: hpcds1mpi run without --threads runs 1 thread per rank (its default), "
            "whatever OMP_NUM_THREADS=2 says; read so (pass --threads 2 to run 2)"
            in script.notes)
    own = sr.program_threads(script, script.launch)
    assert (own.threads, own.spans) == (1, []) and text[:own.add_at].endswith("hpcds1mpi run")
    pbs = read_script(text.replace("export OMP_NUM_THREADS=2\n", ""))
    assert pbs.threads == 1 and any("whatever ompthreads=2 says" in n for n in pbs.notes)
    given = read_script(text.replace("--size 128", "--size 128 --threads 2"))
    assert given.threads == 2 and sr.program_threads(given, given.launch).add_at is None
    # sweep's --threads is a list, its default not this one: the script's threads are read
    sweep = read_script("#SBATCH -N 1 -c 2\nexport OMP_NUM_THREADS=2\n"
                        "srun hpcds1mpi sweep --kernels fft\n")
    assert sweep.threads == 2 and sr.program_threads(sweep, sweep.launch) is None


@pytest.mark.parametrize("after", [" # --threads 8", "; echo --threads 8",
                                   " && echo --threads=8", " | tee --threads 8"])
def test_a_threads_option_after_the_launch_is_not_the_programs(after):
    """(s28 reviewer R6) ``--threads`` was searched to the line's end: a comment or the next
    command's was read as the ranks' threads, and a rewrite edited it there."""
    from hpcds1mpi.launch.script_rewrite import Layout, rewrite

    script = read_script("#SBATCH -N 1\nsrun hpcds1mpi run stencil --size 64" + after + "\n")
    assert script.threads == 1  # hpcds1mpi run's default
    out, _ = rewrite(script, Layout(1, 1, 2))
    assert out.endswith("hpcds1mpi run --threads 2 stencil --size 64" + after + "\n")
    given = read_script("#SBATCH -N 1\nsrun hpcds1mpi run stencil --threads \\\n 3"
                        + after + "\n")
    assert given.threads == 3  # its own, continued on the next line, still counts


@pytest.mark.parametrize("line", [
    "srun apptainer exec sim.sif hpcds1mpi run --threads 2 stencil --size 48",
    "srun singularity exec --nv sim.sif hpcds1mpi run --threads=2 stencil --size 48",
    "srun valgrind --tool=memcheck hpcds1mpi run --threads 2 stencil --size 48",
    "srun gdb --args hpcds1mpi run --threads 2 stencil --size 48",
    "srun nsys profile -o prof hpcds1mpi run --threads 2 stencil --size 48",
    "srun apptainer exec sim.sif valgrind ./x hpcds1mpi run --threads 2 stencil"])
def test_the_programs_own_threads_are_read_past_a_container_or_profiler(line):
    """s42 tester F8: under `apptainer exec IMG` or a profiler, `hpcds1mpi run --threads 2`
    was no program's own thread option, so a rewrite to 1 thread left it at 2."""
    script = read_script(f"#!/bin/bash\n#SBATCH -N 1\n#SBATCH -c 2\n{line}\n")
    own = sr.program_threads(script, script.launch)
    if "./x" in line:  # valgrind runs ./x: hpcds1mpi is its argument
        assert own is None
    else:
        assert own is not None and own.threads == 2 and own.spans


def test_run_without_threads_under_a_container_gets_them_after_its_run_word():
    text = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH -c 2\nsrun apptainer exec s.sif hpcds1mpi run gemm\n"
    own = sr.program_threads(read_script(text), read_script(text).launch)
    assert own.threads == sr.RUN_DEFAULT_THREADS and text[:own.add_at].endswith("hpcds1mpi run")
