"""A PBS Pro request read as PBS places it: ``place=pack`` on one host, several chunk specs
counted together, an old-style ``-l ncpus=4`` as one host (s28 tester V: V2, V3, V4)."""

from __future__ import annotations

from hpcds1mpi.launch.pbs_request import (chunk_specs, free_place_note, host_cpus,
                                          place_parts, uneven_hosts)
from hpcds1mpi.launch.script_reading import read_script

PACK = ("#!/bin/bash\n#PBS -l select=2:ncpus=1:mpiprocs=1\n#PBS -l place=pack\n"
        "#PBS -l walltime=00:10:00\ncd $PBS_O_WORKDIR\n"
        "mpiexec -n 2 hpcds1mpi run stencil --size 128\n")
MULTICHUNK = ("#!/bin/bash\n#PBS -N mc\n#PBS -l select=2:ncpus=2:mpiprocs=2+1:ncpus=1:mpiprocs=1\n"
              "#PBS -l place=scatter:excl\n#PBS -l walltime=1800\n#PBS -j oe\n"
              "cd $PBS_O_WORKDIR\n"
              "mpiexec -n $(wc -l < $PBS_NODEFILE) hpcds1mpi run stencil --size 128\n")
OLDSTYLE = ("#!/bin/bash\n#PBS -l ncpus=4\n#PBS -l walltime=00:10:00\ncd $PBS_O_WORKDIR\n"
            "mpiexec -n 4 hpcds1mpi run stencil --size 128\n")


def test_place_pack_puts_every_chunk_on_one_host():
    """Was read as 2 nodes x 1 rank: place=pack was not read."""
    script = read_script(PACK)
    assert script.layout(2) == (1, 2, 1)
    assert host_cpus(script) == (2, 2, "its chunks together (place=pack) ask for ncpus=2 on "
                                       "one host")
    scattered = read_script(PACK.replace("place=pack", "place=scatter:excl"))
    assert scattered.layout(2) == (2, 1, 1)


def test_several_chunk_specs_count_every_chunk_and_rank():
    """Was read as the first spec alone (2 nodes x 2 ranks), the rest in a note."""
    script = read_script(MULTICHUNK)
    assert script.nodes == 3 and script.ntasks == 5  # 2 + 1 chunks, 2x2 + 1 ranks
    assert script.launch.args and script.layout(2) == (3, 2, 1)
    assert any("2 chunk specs" in n and "3 hosts with 5 ranks" in n for n in script.notes)


def test_an_old_style_ncpus_request_is_one_host():
    """Was guessed 2 nodes x 2 ranks from mpiexec -n 4: PBS converts -l ncpus=4 to
    select=1:ncpus=4, one host."""
    script = read_script(OLDSTYLE)
    assert script.layout(2) == (1, 4, 1)
    assert host_cpus(script) == (4, 2, "the job asks for ncpus=4 on one host")
    assert read_script(OLDSTYLE.replace("ncpus=4", "ncpus=4,ompthreads=2")).threads == 1
    # (hpcds1mpi run's own default; another program takes ompthreads)
    assert read_script(OLDSTYLE.replace("ncpus=4", "ncpus=4,ompthreads=2").replace(
        "hpcds1mpi run stencil --size 128", "./app")).threads == 2


def test_free_placement_is_said_where_two_chunks_fit_on_one_host():
    free = "#PBS -l select=2:ncpus=1:mpiprocs=1\nmpiexec ./app\n"
    note = free_place_note(read_script(free), cores_per_node=2)
    assert note.startswith("line 1: place is free (PBS default), so PBS may put several")
    assert free_place_note(read_script(free), cores_per_node=1) is None  # one fits a host
    assert free_place_note(read_script(free.replace("ncpus=1", "ncpus=2")), 2) is None
    assert free_place_note(read_script("#PBS -l select=2:ncpus=1\n#PBS -l place=scatter\n"
                                       "mpiexec ./app\n"), 2) is None
    assert free_place_note(read_script("#PBS -l select=1:ncpus=1\nmpiexec ./app\n"), 2) is None


def test_chunk_specs_and_place_parts():
    assert chunk_specs("2:ncpus=2:mpiprocs=2+ncpus=1") == [
        {"count": "2", "ncpus": "2", "mpiprocs": "2"}, {"count": "1", "ncpus": "1"}]
    assert place_parts("pack:excl") == ("pack", ["excl"])
    assert place_parts("excl:group=switch") == (None, ["excl", "group=switch"])
    assert place_parts(None) == (None, [])


def test_the_line_of_a_gpu_request_is_recorded():
    """s33 tester P5 (k_gpu): advise said "the 1 GPU per node the job asks for (line ?)": the
    select's ngpus, or an old-style -l ngpus, kept no line."""
    chunk = read_script("#!/bin/bash\n#PBS -l select=1:ncpus=2:mpiprocs=2:ngpus=1\n"
                        "#PBS -l walltime=00:15:00\nmpiexec -n 2 ./app\n")
    assert chunk.gpus_per_node == 1 and chunk.lines["gpus"] == [2]
    old = read_script("#!/bin/bash\n#PBS -l ncpus=2\n#PBS -l ngpus=2\nmpiexec -n 2 ./app\n")
    assert old.gpus_per_node == 2 and old.lines["gpus"] == [3]
    assert "gpus" not in read_script(PACK).lines  # no GPU asked: no line


def test_chunks_with_different_ranks_per_host_have_no_prediction():
    """s33 tester P7: select=1:ncpus=2:mpiprocs=2+1:ncpus=2:mpiprocs=1 with mpiexec -n 3 was
    predicted as 2 nodes x 2 ranks (4 ranks, a layout the script does not run), and a 50 %
    saving computed from it."""
    uneven = read_script("#!/bin/bash\n#PBS -l select=1:ncpus=2:mpiprocs=2+1:ncpus=2:mpiprocs=1"
                         "\nmpiexec -n 3 ./app\n")
    assert uneven_hosts(uneven) == (
        "line 2: the chunk specs give their hosts different rank counts (1 x 2 + 1 x 1 ranks); "
        "the model predicts the same ranks on every node, so this layout has no prediction")
    for even in (MULTICHUNK.replace("mpiprocs=1", "mpiprocs=2"), PACK, OLDSTYLE,
                 MULTICHUNK.replace("place=scatter:excl", "place=pack")):
        assert uneven_hosts(read_script(even)) == "", even
