"""Directive mistakes sbatch / qsub do not report where the user looks: late directives said
in a note that reaches ``advise``, and a ``$`` in a value refused or noted (s29 tester D5, D9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_reading import read_script
from tests.badinput.harness import invoke

CLUSTER = str(Path(__file__).resolve().parents[1] / "data" / "jobscripts" / "lab.toml")
# the tester's s14_late_directive.sbatch
LATE = """#!/bin/bash
#SBATCH --partition=standard
#SBATCH --nodes=1
#SBATCH --time=00:30:00
module load hpcds1mpi
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=1
export OMP_NUM_THREADS=1
srun hpcds1mpi run --threads 1 stencil --size 128 --precision fp64
"""


def test_directives_after_the_first_command_are_said_in_one_note():
    script = read_script(LATE)
    assert script.nodes == 1 and script.ignored == [6, 7, 8]
    late = [n for n in script.notes if "after the first command" in n]
    assert late == ["lines 6-8: #SBATCH after the first command (line 5: module load "
                    "hpcds1mpi): sbatch ignores them, and so do this reading and --rewrite "
                    "(which leaves them as written); move them above it"]
    # the tester's p06_all_late.sbatch: every directive after 'set -e'; and PBS, one line
    notes = read_script("#!/bin/bash\nset -e\n#SBATCH --nodes=2\n#SBATCH --time=10\n"
                        "\n#SBATCH -c 2\nsrun ./a\n").notes
    assert any(n.startswith("lines 3-4, 6: #SBATCH after the first command (line 2: set -e)")
               for n in notes), notes
    pbs = read_script("#!/bin/bash\n#PBS -l select=1:ncpus=2\ncd $PBS_O_WORKDIR\n"
                      "#PBS -l walltime=1:00:00\nmpiexec ./a\n").notes
    assert any(n.startswith("line 4: #PBS after the first command (line 3: cd $PBS_O_WORKDIR)"
                            ": qsub ignores it") for n in pbs), pbs
    clean = read_script("#!/bin/bash\n#SBATCH -N 1\n# #SBATCH -N 2\nsrun ./a\n#PBS -q x\n")
    assert not any("after the first command" in n for n in clean.notes)


def test_a_long_list_of_late_directives_is_cut_to_its_first_ranges():
    """Was (s29 tester H8): a 256 KB script alternating #SBATCH and echo after its first
    command gave one 23,631-character note ("lines 5, 7, 9, ...")."""
    pairs = (256_000 - 100) // len("#SBATCH -J c\necho\n")  # the tester's 256 KB
    text = "#!/bin/bash\n#SBATCH --nodes=1\nset -e\n" + "#SBATCH -J c\necho\n" * pairs \
        + "srun ./a\n"
    late = [n for n in read_script(text).notes if "after the first command" in n]
    assert len(late) == 1 and len(late[0]) < 400, late
    assert late[0].startswith("lines 4, 6, 8, 10, 12, 14, 16, 18, 20, 22 and "
                              f"{pairs - 10:,} more: "
                              "#SBATCH after the first command (line 3: set -e)"), late
    # ranges count as one each; ten of them, then the lines left
    script = read_script("#!/bin/bash\nset -e\n" + "#SBATCH -N 1\n#SBATCH -N 1\necho\n" * 12
                         + "srun ./a\n")
    note = next(n for n in script.notes if "after the first command" in n)
    assert note.startswith("lines 3-4, 6-7, 9-10, 12-13, 15-16, 18-19, 21-22, 24-25, 27-28, "
                           "30-31 and 4 more: #SBATCH"), note


def test_the_late_directive_note_reaches_advise_and_its_rewrite(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "cache" / "failures.json"))
    (tmp_path / "job.sbatch").write_text(LATE)
    res = invoke(capsys, ["advise", tmp_path / "job.sbatch", "--cluster", CLUSTER,
                          "--rewrite", tmp_path / "new.sbatch"])
    assert res.code == 0, res.err
    assert "  note: lines 6-8: #SBATCH after the first command (line 5: module load " \
           "hpcds1mpi): sbatch ignores them" in res.out
    assert "#SBATCH --cpus-per-task=1\n" in (tmp_path / "new.sbatch").read_text()


@pytest.mark.parametrize("directive, said", [
    # the tester's p13_var_directive.sbatch: sbatch says '"$NNODES" is not a valid node count'
    ("#SBATCH --nodes=$NNODES", "line 2: #SBATCH --nodes=$NNODES: sbatch does not expand "
     "variables in directives and refuses this value; write the value itself, or pass it when "
     "submitting, where the shell expands it (sbatch --nodes=$NNODES SCRIPT)"),
    ("#SBATCH -t ${HOURS}:00:00", "#SBATCH --time=${HOURS}:00:00: sbatch does not expand"),
    ("#SBATCH --gres=gpu:$G --mem=4G", "#SBATCH --gres=gpu:$G: sbatch"),
    ("#SBATCH --partition=$P", "refuses this value"),
    ("#PBS -l select=$N:ncpus=2", "line 2: #PBS -l select=$N:ncpus=2: qsub does not expand"),
    ("#PBS -l walltime=$T", "(qsub -l walltime=$T SCRIPT)"),
])
def test_a_variable_in_a_directive_sbatch_parses_is_refused(directive, said):
    with pytest.raises(ConfigError, match="does not expand variables") as err:
        read_script(f"#!/bin/bash\n{directive}\n#SBATCH --nodes=2\nsrun ./a\nmpiexec ./a\n")
    assert said in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="refuses"):  # sbatch stops at the first, not the last
        read_script("#!/bin/bash\n#SBATCH --nodes=$N\n#SBATCH --nodes=2\nsrun ./a\n")


def test_a_variable_in_a_name_or_path_is_taken_as_written_and_said():
    script = read_script("#!/bin/bash\n#SBATCH --job-name=run_$X --output=$HOME/o.txt\n"
                         "#SBATCH --nodes=2\nsrun ./a\n")
    assert script.nodes == 2 and script.job_name == "run_$X"
    assert "line 2: #SBATCH --job-name=run_$X: sbatch does not expand variables in " \
           "directives, so the value is taken as written; write the value itself" in script.notes
    assert any(n.startswith("line 2: #SBATCH --output=$HOME/o.txt:") for n in script.notes)
    # a $ after the directive's comment, or in a late directive, is none of sbatch's business
    quiet = read_script("#!/bin/bash\n#SBATCH --nodes=2  # $NNODES once\nsrun ./a\n"
                        "#SBATCH --nodes=$N\n")
    assert quiet.nodes == 2 and not any("expand" in n for n in quiet.notes)


@pytest.mark.parametrize("option", ["extra", "container", "bb", "bbf"])
def test_a_variable_in_an_option_slurm_keeps_as_text_is_noted_under_its_own_name(option):
    """s29 R5: ``--extra=tag$1`` was read as ``--extra-node-info`` and refused under that name;
    these values are text or a path to sbatch, so a ``$`` there is only noted."""
    script = read_script(f"#!/bin/bash\n#SBATCH --{option}=tag$1\n#SBATCH --nodes=2\n"
                         "srun ./a\n")
    assert script.nodes == 2
    assert f"line 2: #SBATCH --{option}=tag$1: sbatch does not expand variables in " \
           "directives, so the value is taken as written; write the value itself" in script.notes
    with pytest.raises(ConfigError, match=r"#SBATCH --extra-node-info=\$S:2: sbatch does not "
                       "expand variables in directives and refuses this value"):
        read_script("#!/bin/bash\n#SBATCH --extra-node-info=$S:2\nsrun ./a\n")


@pytest.mark.parametrize("directive, said", [
    # the tester's adv_e.sh and adv_j.sh: advise said "walltime not set", exit 0
    ("#SBATCH --time=Partition_Limit", "line 4: #SBATCH --time=Partition_Limit: sbatch "
     "refuses this time limit (\"Invalid --time specification\"); write minutes (90), MM:SS, "
     "HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or UNLIMITED for the partition's limit"),
    ("#SBATCH --time=1:2:3:4", "line 4: #SBATCH --time=1:2:3:4: sbatch refuses"),
    ("#SBATCH -t 1.5", "line 4: #SBATCH --time=1.5: sbatch refuses"),
    ("#SLURM --time-min=soon", "line 4: #SLURM --time-min=soon: sbatch refuses"),
])
def test_a_time_limit_sbatch_refuses_is_refused_in_one_line(tmp_path, capsys, monkeypatch,
                                                             directive, said):
    """s35 tester T8: a --time sbatch refuses was "cannot read time ...; ignored" and advised."""
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "cache" / "failures.json"))
    job = tmp_path / "job.sbatch"
    job.write_text(f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n{directive}\n"
                   "srun hpcds1mpi run stencil --size 128 --threads 1\n")
    res = invoke(capsys, ["advise", job, "--cluster", CLUSTER])
    assert res.code == 2 and len(res.err_lines) == 1 and said in res.err, res.err
    assert res.out == ""


def test_a_walltime_no_qsub_takes_is_refused_and_the_others_read():
    with pytest.raises(ConfigError, match=r"^line 3: #PBS -l walltime=1-00:00:00: qsub refuses "
                       r"this time limit \(an illegal walltime\); write seconds \(3600\)"):
        read_script("#!/bin/bash\n#PBS -l select=1:ncpus=2\n#PBS -l walltime=1-00:00:00\n"
                    "mpiexec ./a\n")
    for value, seconds in (("100:00:00", 360000), ("1:00:00:00", 86400), ("3600", 3600)):
        assert read_script(f"#!/bin/bash\n#PBS -l walltime={value}\nmpiexec ./a\n"
                           ).time_s == seconds
    # taken by sbatch, so read: d- is d days, a time of zero no limit
    assert read_script("#!/bin/bash\n#SBATCH -t 2-\nsrun ./a\n").time_s == 2 * 86400
    zero = read_script("#!/bin/bash\n#SBATCH --time=00:00:00\nsrun ./a\n")
    assert zero.time_s is None and "line 2: asked no time limit (00:00:00): the partition's " \
        "limit applies" in zero.notes
