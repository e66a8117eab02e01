"""Another scheduler's job script (LSF, Grid Engine, Cobalt, Flux, HTCondor, ...) is refused in
one line by the script reader, ``hpcds1mpi advise`` and the API alike, never read as a Slurm one
(s35 tester X1); Slurm and PBS scripts that merely mention those directives read as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.foreign_schedulers import foreign_script
from hpcds1mpi.launch.script_reading import read_script
from tests.badinput.harness import assert_refused, invoke

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "jobscripts"
CLUSTER = str(SCRIPTS / "lab.toml")
LAUNCH = "mpirun hpcds1mpi run --threads 1 stencil --size 128 --precision fp64\n"

#: The tester's scripts (/tmp/s35/X/scripts), as written.
LSF_TIGHT = ("#!/bin/bash\n#BSUB -J stencil\n#BSUB -n 4\n#BSUB -R \"span[ptile=2]\"\n"
             "#BSUB -W 01:00\n#BSUB -o %J.out\n\nexport OMP_NUM_THREADS=1\n" + LAUNCH)
LSF_MPIEXEC = ("#!/bin/bash\n#BSUB -n 2\n#BSUB -R \"span[hosts=1]\"\n#BSUB -W 10\n"
               "mpiexec -n 2 hpcds1mpi run stencil --size 128 --precision fp64\n")
LSF_JSRUN = ("#!/bin/bash\n#BSUB -P CSC123\n#BSUB -W 0:30\n#BSUB -nnodes 2\n#BSUB -J stencil\n"
             "#BSUB -o stencil.%J\n\nexport OMP_NUM_THREADS=2\njsrun -n 2 -a 1 -c 2 -bpacked:2 "
             "hpcds1mpi run --threads 2 stencil --size 128 --precision fp64\n")
SGE_TIGHT = ("#!/bin/bash\n#$ -N stencil\n#$ -cwd\n#$ -pe orte 4\n#$ -l h_rt=01:00:00\n#$ -j y\n"
             "\nexport OMP_NUM_THREADS=1\n" + LAUNCH)
COBALT = ("#!/bin/bash\n#COBALT -n 2\n#COBALT -t 30\n#COBALT -q debug-cache-quad\n"
          "#COBALT -A myproj\n\nexport OMP_NUM_THREADS=1\naprun -n 4 -N 2 -d 1 -j 1 -cc depth "
          "hpcds1mpi run --threads 1 stencil --size 128 --precision fp64\n")
FLUX = ("#!/bin/bash\n#flux: -N 2\n#flux: -n 4\n#flux: -t 30m\n#flux: --job-name=stencil\n"
        "#flux: -q pbatch\n\nexport OMP_NUM_THREADS=1\nflux run -N 2 -n 4 hpcds1mpi run "
        "--threads 1 stencil --size 128 --precision fp64\n")
CONDOR = ("universe = parallel\nexecutable = /usr/bin/mpirun\narguments = -np 4 hpcds1mpi run "
          "stencil --size 128\nmachine_count = 2\nrequest_cpus = 2\nqueue\n")
LOADLEVELER = ("#!/bin/bash\n# @ job_type = parallel\n# @ node = 2\n# @ tasks_per_node = 2\n"
               "# @ wall_clock_limit = 00:30:00\n# @ queue\n" + LAUNCH)


@pytest.mark.parametrize("text, what", [
    (LSF_TIGHT, "an LSF script (#BSUB directives, line 2)"),
    (LSF_MPIEXEC, "an LSF script (#BSUB directives, line 2)"),
    (LSF_JSRUN, "an LSF script (#BSUB directives, line 2)"),
    (SGE_TIGHT, "a Grid Engine script (#$ directives, line 2)"),
    (COBALT, "a Cobalt script (#COBALT directives, line 2)"),
    (FLUX, "a Flux script (#flux: directives, line 2)"),
    (FLUX.replace("#flux:", "# flux:"), "a Flux script (#flux: directives, line 2)"),
    (CONDOR, "an HTCondor submit description (universe =, line 1)"),
    (LOADLEVELER, "a LoadLeveler script (# @ directives, line 2)"),
    # a blank line and a comment before the directives still leave them in the header
    ("#!/bin/bash\n\n# the job\n#BSUB -n 4\n" + LAUNCH, "an LSF script (#BSUB directives, "
                                                        "line 4)"),
    # a #SBATCH line after the first command is no directive to sbatch: still LSF's job
    (LSF_TIGHT + "#SBATCH -N 2\n", "an LSF script (#BSUB directives, line 2)"),
])
def test_another_schedulers_script_is_refused_in_one_line(text, what):
    with pytest.raises(ConfigError) as caught:
        read_script(text, name="job.lsf")
    message = str(caught.value)
    assert message.startswith(f"job.lsf: this looks like {what}: advise reads Slurm (#SBATCH) "
                              "and PBS (#PBS) scripts only; "), message
    assert "\n" not in message


@pytest.mark.parametrize("text", [
    # a "#$" comment (an RCS keyword) and the word BSUB in a comment or a string
    "#!/bin/bash\n#$Id: job.sh,v 1.2 $\n#SBATCH -N 2\n" + LAUNCH,
    "#!/bin/bash\n# was #BSUB -n 4 on the old machine\n#SBATCH -N 2\nsrun ./app\n",
    "#!/bin/bash\n#$ ran under SGE once\nsrun ./app\n",
    "#!/bin/bash\n#SBATCH -N 2\necho '#BSUB -n 4'\nsrun ./app\n",
    # another scheduler's directives after the first command are comments to it, too
    "#!/bin/bash\nsrun ./app\n#BSUB -n 4\n",
    # a shell script that sets a variable named like an HTCondor key has a #! line
    "#!/bin/bash\nexecutable=./app\nqueue=debug\nmpirun $executable\n",
])
def test_slurm_scripts_that_mention_them_are_read(text):
    assert foreign_script(text) is None
    script = read_script(text)
    assert script.scheduler == "slurm"
    assert not [n for n in script.notes if "comments to" in n]


@pytest.mark.parametrize("own, foreign, reader", [
    ("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=2\n", "#BSUB -n 4\n", "sbatch"),
    ("#PBS -l select=2:ncpus=2:mpiprocs=2\n", "#$ -pe orte 4\n", "qsub"),
])
def test_a_portable_script_is_read_as_its_slurm_or_pbs_self(own, foreign, reader):
    script = read_script("#!/bin/bash\n" + foreign + own + LAUNCH)
    assert script.layout(2)[:2] == (2, 2)  # the #SBATCH / #PBS request, not #BSUB -n 4
    note = [n for n in script.notes if "comments to" in n]
    assert len(note) == 1 and note[0].startswith("line 2: ") and reader in note[0], script.notes


@pytest.mark.parametrize("text", ["", "echo hello\n"])
def test_no_directives_at_all_names_what_is_read(text):
    with pytest.raises(ConfigError, match=r"no #SBATCH / #PBS directive .*is this a batch "
                                          r"script\? advise reads Slurm \(#SBATCH\) and PBS "
                                          r"\(#PBS\) scripts only"):
        read_script(text)


def test_the_shipped_slurm_and_pbs_scripts_are_none_of_them():
    paths = sorted(SCRIPTS.glob("*.sbatch")) + sorted(SCRIPTS.glob("*.pbs"))
    assert len(paths) > 10
    for path in paths:
        assert foreign_script(path.read_text()) is None, path


@pytest.mark.parametrize("name, text, what", [
    ("stencil.lsf", LSF_TIGHT, "an LSF script"),
    ("stencil.sge", SGE_TIGHT, "a Grid Engine script"),
    ("condor.sub", CONDOR, "an HTCondor submit description"),
])
def test_advise_refuses_it_and_writes_nothing(capsys, tmp_path, monkeypatch, name, text, what):
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    path, out = tmp_path / name, tmp_path / f"{name}.new"
    path.write_text(text)
    res = invoke(capsys, ["advise", path, "--cluster", CLUSTER, "--rewrite", out])
    assert_refused(res, 2, f"{name}: this looks like {what}", "advise reads Slurm (#SBATCH)")
    assert res.out == "" and not out.exists()
    assert {p.name for p in tmp_path.iterdir()} <= {name, "cache"}  # no temporary left


def test_the_api_refuses_it(tmp_path, monkeypatch):
    import hpcds1mpi

    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ConfigError, match=r"^<text>: this looks like an LSF script \(#BSUB "
                                          r"directives, line 2\): advise reads"):
        hpcds1mpi.advise(LSF_TIGHT, cluster=CLUSTER)
    with pytest.raises(ConfigError, match="looks like a Cobalt script"):
        hpcds1mpi.read_script(COBALT)


def test_shell_variables_named_like_htcondor_keys_are_no_submit_description():
    """s35 review: a script without a #! line whose variables were named executable= and queue
    was read as an HTCondor submit file: a PBS one got a false note, and a Slurm one with a
    byte-order mark the HTCondor refusal in place of the byte-order mark's."""
    pbs = "#PBS -l nodes=1:ppn=2\nexecutable=./app\nqueue=debug\nmpirun $executable\n"
    assert foreign_script(pbs) is None
    assert not any("HTCondor" in note for note in read_script(pbs).notes)
    bom = "\ufeff#!/bin/bash\n#SBATCH -N 1\nexecutable=./app\nqueue=debug\nsrun $executable\n"
    with pytest.raises(ConfigError, match="byte-order mark"):
        read_script(bom)
