"""A program's size read from the folder a job script cds into, by its sweep's --workdir (s44
tester M4: advise of the script recommend --emit wrote itself, `cd c20` for --workdir
'c{size}', said "the size is in its input" and exited 2)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.advise import advise
from hpcds1mpi.decide.folder_size import folder_size, workdir_pattern
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_reading import read_script

#: The end of the script `recommend --emit slurm` wrote for the tester's MolDS sweep.
EMITTED = """#!/bin/bash
#SBATCH --partition=cpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --time=00:10:00
set -euo pipefail
[ -d {folder} ] || {{ echo "job: no run: the program's folder" {folder} "is missing in $PWD; create it with the program's input, then submit again" >&2; exit 1; }}
cd {folder}
/usr/bin/mpirun.openmpi -n 2 /usr/bin/molds in.in
"""


def _bundle(workdir: str):
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from tests.fake_bundle import WIDE_SIZES, FakeBundle

    bundle = FakeBundle(workloads=("molds",), sizes=WIDE_SIZES)
    bundle._measured_levels = {"molds": MeasuredLevels(
        "molds", True, precisions=("fp64",), devices=("cpu",), threads=(1, 2),
        ranks_per_node=(1, 2), nodes=(1,), command="molds in.in",
        measured_with={"workdir": workdir})}
    return bundle


def _places():
    from tests.fake_bundle import fake_places

    return fake_places("cpu")


def test_the_size_is_read_from_the_cd_into_the_sweeps_workdir():
    """Was: "no problem size for molds in the script: its measured command 'molds in.in' does
    not show it (the same command ran at every size measured: the size is in its input)"."""
    a = advise(EMITTED.format(folder="c20"), _bundle("c{size}"), _places())
    assert (a.workload, a.size) == ("molds", 20)
    assert a.size_source == "the folder 'c20' of the cd on line 8, by its sweep's --workdir " \
                            "'c{size}'"
    # other placeholders, and a folder under another path, read the same way
    b = advise(EMITTED.format(folder="/scratch/u/hrd/700-2"), _bundle("hrd/{size}-{ranks}"),
               _places())
    assert b.size == 700


@pytest.mark.parametrize("folder, why", [
    ("runs", "its sweep ran it in --workdir 'c{size}': the size is in the folder's name, and "
             "line 9 runs in 'runs' (the cd on line 8), which is not of that form"),
    ("$CASE", "the folder that line 9 runs in is not known from the script"),
])
def test_a_folder_of_another_form_says_the_size_is_in_the_folders_name(folder, why):
    with pytest.raises(ConfigError) as caught:
        advise(EMITTED.format(folder=folder), _bundle("c{size}"), _places())
    said = str(caught.value)
    assert why in said and "in its input" not in said and said.endswith("pass --size")
    assert "\n" not in said


def test_the_workdir_pattern_reads_whole_folder_names():
    pattern = workdir_pattern("./c{size}/")
    assert pattern.search("c20")["size"] == "20" and pattern.search("a/c20")["size"] == "20"
    assert pattern.search("abc20") is None and pattern.search("c20/x") is None
    assert workdir_pattern("cases/{ranks}") is None  # no size in it
    twice = workdir_pattern("{size}/in-{size}")
    assert twice.search("8/in-8")["size"] == "8" and twice.search("8/in-9") is None
    assert workdir_pattern("/abs/{size}").search("/other/abs/5") is None
    script = read_script("#!/bin/bash\n#SBATCH -N 1\ncd p-fp64-12\nsrun ./app\n")
    assert folder_size(script, script.launches[-1], "p-{precision}-{size}") == (
        12, "the folder 'p-fp64-12' of the cd on line 3, by its sweep's --workdir "
            "'p-{precision}-{size}'")
    assert folder_size(script, script.launches[-1], "") is None


@pytest.mark.parametrize("folder", ["c40", "./c40", "../cdw/c40", "cdw/c40"])
def test_a_relative_cd_is_read_by_the_end_of_an_absolute_workdir(folder):
    """s44 tester O10: `cd c40` for a sweep's --workdir '/abs/cdw/c{size}' was refused as
    "not of that form"; the job starts in its submit folder, which advise cannot know."""
    script = read_script(f"#!/bin/bash\n#SBATCH -N 1\ncd {folder}\nsrun ./app\n")
    size, where = folder_size(script, script.launches[-1], "/abs/cdw/c{size}")
    assert size == 40 and "by the end of its sweep's --workdir '/abs/cdw/c{size}'" in where
    assert "where the job is submitted is not known here" in where


@pytest.mark.parametrize("folder", ["d40", "other/c40", "c40/x", ".", "a/b/cdw/c40"])
def test_a_relative_cd_of_another_end_is_not_read(folder):
    script = read_script(f"#!/bin/bash\n#SBATCH -N 1\ncd {folder}\nsrun ./app\n")
    assert folder_size(script, script.launches[-1], "/abs/cdw/c{size}") is None


def test_advise_reads_a_relative_cd_under_an_absolute_workdir():
    a = advise(EMITTED.format(folder="c40"), _bundle("/abs/c{size}"), _places())
    assert a.size == 40
