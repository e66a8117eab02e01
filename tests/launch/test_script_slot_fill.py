"""Where a job script's mpirun -n N puts its ranks when it names no ranks per node."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.script_reading import read_script

#: The tester's adv/o4.sh (s40 A8): 2 nodes of 2 tasks each, 2 ranks through Open MPI 5's mpirun.
O4 = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --time=00:05:00
export OMP_NUM_THREADS=1
/tmp/s40/A/venv/bin/mpirun -n 2 ./hyb 30000
"""


@pytest.mark.parametrize("options, layout", [
    # measured in a 2-node salloc of 2 tasks each: Open MPI 5.0.11, 4.1.4 and MPICH's hydra
    # put ranks 0 and 1 on n1 (3 ranks: 2 on n1, 1 on n2)
    ("-n 2", (1, 2, 1)), ("--host n1:2 -n 2", (1, 2, 1)), ("-n 3", (2, 2, 1)),
    ("-n 4", (2, 2, 1)), ("-np 1", (1, 1, 1)),
    # spread by the launch itself: read as before
    ("--host n1,n2 -n 2", (2, 1, 1)), ("-n 2 --map-by ppr:1:node", (2, 1, 1)),
    ("-n 2 --map-by node", (2, 1, 1)), ("-n 2 --npernode 1", (2, 1, 1)),
    ("-n 2 --pernode", (2, 1, 1)), ("-n 2 -ppn 1", (2, 1, 1))])
def test_mpirun_n_fills_each_nodes_slots_before_the_next(options, layout):
    """s40 tester A8: `mpirun -n 2` in a 2-node job of 2 tasks per node was read as 2 nodes x
    1 rank; both Open MPIs (and hydra) run both ranks on the first node."""
    script = read_script(O4.replace("-n 2", options))
    assert script.layout() == layout, options


def test_ranks_left_on_one_node_of_the_job_are_said_with_the_spread():
    script = read_script(O4)
    assert script.layout() == (1, 2, 1)
    assert ("line 6: mpirun -n 2 fills each node's 2 slots (its tasks per node) before the "
            "next: its ranks run on 1 of the job's 2 nodes, which is read; to spread them give "
            "--map-by ppr:1:node (Open MPI) or -ppn 1 (hydra)") in script.notes


def test_one_task_per_node_and_srun_spread_as_before():
    one = read_script(O4.replace("--ntasks-per-node=2", "--ntasks-per-node=1"))
    assert one.layout() == (2, 1, 1) and not any("slots" in n for n in one.notes)
    srun = read_script(O4.replace("/tmp/s40/A/venv/bin/mpirun -n 2", "srun -n 2"))
    assert srun.layout() == (2, 1, 1)
    pbs = read_script("#!/bin/bash\n#PBS -l select=2:ncpus=2:mpiprocs=2\nmpirun -n 2 ./a\n")
    assert pbs.layout() == (1, 2, 1)


@pytest.mark.parametrize("options, layout", [
    ("--host n1,n1 -n 2", (1, 2, 1)), ("-H n1,n1,n2 -n 3", (2, 2, 1)),
    ("-hosts n1,n1:1 -n 2", (1, 2, 1)), ("--host n1,n2,n1 -n 3", (2, 2, 1))])
def test_a_host_named_twice_is_one_node_with_a_slot_per_mention(options, layout):
    """s41 tester B10: `mpirun -n 2 --host n1,n1` was read as 2 nodes x 1 rank; Open MPI
    4.1.4 (in a 1-node salloc) and hydra (MPICH 4.0.2) run both ranks on n1."""
    script = read_script(O4.replace("-n 2", options))
    assert script.layout() == layout, options


def test_a_host_named_twice_apart_is_not_read_where_open_mpi_and_hydra_differ():
    """``n1,n2,n1 -n 2``: Open MPI puts both ranks on n1, hydra one on n1 and one on n2."""
    script = read_script(O4.replace("-n 2", "--host n1,n2,n1 -n 2"))
    assert ("line 6: mpirun's host list n1,n2,n1 names a host twice apart, which Open MPI and "
            "hydra fill otherwise: its layout is not read from it; write each host once with "
            "its slots (n1:2,n2:1)") in script.notes, script.notes


#: A job of 1 node that gives no tasks: the launch line's host list alone says the ranks.
BARE = "#!/bin/bash\n#SBATCH --time=00:05:00\n{launch} ./hyb 30000\n"


@pytest.mark.parametrize("launch, layout", [
    # s42: measured with mpirun.openmpi 4.1.4 (a 2-node salloc) and MPICH 5.0.2's hydra: a
    # rank on each slot of the list
    ("mpirun --host n1,n1", (1, 2, 1)), ("mpirun -H n1,n1", (1, 2, 1)),
    ("mpiexec --hosts n1,n1", (1, 2, 1)), ("mpiexec -hosts n1:2,n2:2", (2, 2, 1)),
    ("mpirun --host n1:3", (1, 3, 1)),
    # a rank count or ranks per node of its own: read from those, as before
    ("mpirun --host n1,n1 -n 1", (1, 1, 1))])
def test_mpirun_without_n_starts_a_rank_on_each_slot_of_its_host_list(launch, layout):
    """s42: `mpirun --host n1,n1 ./prog` (no -np) was read as 1 rank; Open MPI and hydra
    both start 2."""
    script = read_script(BARE.format(launch=launch))
    if layout is None:
        assert script.ntasks is None, launch
    else:
        assert script.layout() == layout, launch


@pytest.mark.parametrize("launch, layout", [
    # s43: measured in a 2-node salloc of 2 tasks per node (Open MPI 4.1.4, MPICH 5.0.2's
    # hydra, Intel MPI's hydra): --map-by node still runs a rank on every slot ...
    ("mpirun --host n1,n2 --map-by node", (2, 1, 1)),
    ("mpirun.openmpi --host n1:2,n2:2 --map-by node", (2, 2, 1)),
    ("mpirun --host n1,n2 --map-by node:oversubscribe", (2, 1, 1)),
    # ... and K ranks per node run K on each host of the list, whatever its slots
    ("mpiexec -hosts n1,n2 -ppn 2", (2, 2, 1)), ("mpiexec.hydra -hosts n1:2,n2:2 -ppn 1", (2, 1, 1)),
    ("mpiexec --hosts n1:2,n2:2 -ppn 3", (2, 3, 1)),
    ("mpirun --host n1:2,n2:2 --npernode 1", (2, 1, 1)),
    ("mpirun.openmpi --host n1:3,n2:3 -npernode 2", (2, 2, 1)),
    ("mpirun --host n1:2,n2:2 --map-by ppr:1:node", (2, 1, 1)),
    ("mpirun --host n1:2,n2:2 --pernode", (2, 1, 1)),
    ("mpirun.openmpi --host n1,n2,n1 -npernode 1", (2, 1, 1))])
def test_a_host_list_without_n_under_a_spreading_map_is_counted(launch, layout):
    """Session 41's left list: `mpirun --host n1,n2 --map-by node ./a` and `mpiexec -hosts
    n1,n2 -ppn 2 ./a` were read as 1 rank on 1 node; they run 2 and 4 over 2 hosts."""
    script = read_script(BARE.format(launch=launch))
    assert (script.layout(), script.ntasks) == (layout, layout[0] * layout[1]), launch


def test_a_host_named_again_under_map_by_node_is_said_uneven():
    """Open MPI 4.1.4: `--host n1,n2,n1 --map-by node` runs ranks 0 and 2 on n1, 1 on n2."""
    script = read_script(BARE.format(launch="mpirun --host n1,n2,n1 --map-by node"))
    assert script.ntasks == 3 and script.layout() == (2, 2, 1)
    assert any("runs 2, 1 ranks on its 2 hosts, an uneven layout" in n for n in script.notes)


@pytest.mark.parametrize("launch, layout", [
    # one host: every launcher that runs it puts all its ranks there
    ("mpiexec.hydra --host n1:2 -np 4", (1, 4, 1)), ("mpirun --host n1:2 -np 4", (1, 4, 1)),
    ("mpirun.openmpi --host n1:2 -np 4", (1, 4, 1)),
    # two: hydra deals them round the list again (n1 4, n2 2); Open MPI with --oversubscribe
    # fills the slots and shares the rest evenly (3 and 3; n1:1,n2:1 -np 5: 3 and 2)
    ("mpiexec.hydra --host n1:2,n2:2 -np 6", (2, 3, 1)),
    ("mpirun --oversubscribe --host n1:2,n2:2 -np 6", (2, 3, 1)),
    ("mpirun --oversubscribe --host n1:1,n2:1 -np 5", (2, 3, 1))])
def test_more_ranks_than_the_host_lists_slots_are_placed_as_the_launcher_runs_them(
        launch, layout):
    """s42: `mpirun --host n1:2 -np 4` was read as 2 nodes; it is one host, n1."""
    script = read_script(BARE.format(launch=launch))
    assert script.layout() == layout, launch


def test_open_mpi_refusing_more_ranks_than_slots_is_said():
    """Open MPI 4.1.4: `--host n1:2 -np 4` stops at "not enough slots" unless told
    --oversubscribe; hydra (which refuses --oversubscribe) runs it."""
    named = read_script(BARE.format(launch="mpirun.openmpi --host n1:2 -np 4"))
    assert ("line 3: mpirun.openmpi -n 4 over host list n1:2's 2 slots: Open MPI refuses it "
            "(not enough slots); give --oversubscribe, or the hosts more slots"
            ) in named.warnings, named.warnings
    plain = read_script(BARE.format(launch="mpirun --host n1:2 -np 4"))
    assert any("Open MPI's, it refuses it" in n and "read as hydra" in n for n in plain.notes)
    hydra = read_script(BARE.format(launch="mpiexec.hydra --host n1:2 -np 4"))
    assert not any("refuses" in m for m in hydra.notes + hydra.warnings)
    told = read_script(BARE.format(launch="mpirun --oversubscribe --host n1:2 -np 4"))
    assert not any("refuses" in m for m in told.notes + told.warnings)


def test_more_ranks_than_slots_placed_otherwise_by_the_two_is_not_read():
    script = read_script(BARE.format(launch="mpirun --map-by slot:OVERSUBSCRIBE "
                                            "--host n1:2,n2:2 -np 6"))
    assert any("is placed otherwise by Open MPI and hydra" in n for n in script.notes)


@pytest.mark.parametrize("launch, hosts", [("mpirun --host n1,n2,n3:2", "1, 1, 2 ranks on its 3"),
                                           ("mpiexec.hydra --host n1:2,n2:2 -np 6",
                                            "4, 2 ranks on its 2")])
def test_a_host_list_of_uneven_ranks_per_host_is_said(launch, hosts):
    """s42 review R5: `--host n1,n2,n3:2` runs 1, 1 and 2 ranks and was read as 2 nodes x 2
    with no word; the model knows even layouts only, so the unevenness is said, and the job's
    hosts are the hosts the list uses."""
    script = read_script(f"#!/bin/bash\n#SBATCH --time=00:05:00\n{launch} ./app 300\n")
    assert any(hosts in n and "uneven" in n for n in script.notes), script.notes
    even = read_script("#!/bin/bash\n#SBATCH --time=00:05:00\nmpirun --host n1:2,n2:2 ./app 3\n")
    assert not any("uneven" in n for n in even.notes)


def test_a_launcher_of_either_mpi_is_told_what_each_needs_not_to_add_what_hydra_refuses():
    """s42 tester F10: hydra's `mpiexec -np 6` over a 4-slot host list was told "give
    --oversubscribe", which hydra refuses (unrecognized argument); where the launcher's name
    does not tell its MPI, the note says what each needs: hydra no option, Open MPI
    --oversubscribe."""
    script = read_script(BARE.format(launch="mpiexec --host n1:2,n2:2 -np 6"))
    assert script.layout() == (2, 3, 1)  # as mpiexec.hydra reads (n1 4, n2 2: uneven)
    [note] = [n for n in script.notes if "slots" in n and "uneven" not in n]
    assert note == (
        "line 3: mpiexec -n 6 over host list n1:2,n2:2's 4 slots: read as hydra (MPICH, Intel "
        "MPI) runs it, dealing the ranks round the list again, with no option; where it is "
        "Open MPI's, it refuses it (not enough slots) unless given --oversubscribe (an option "
        "hydra refuses), or give the hosts more slots")
    assert "give --oversubscribe" not in " ".join(script.notes + script.warnings)


@pytest.mark.parametrize("option", ["--npersocket 1", "-npersocket 1", "--npersocket=1"])
def test_npersocket_takes_its_value_and_is_not_counted_per_slot(option):
    """s43 tester J4: `--npersocket 1 ./hyb` read '1' as the program and counted a rank per
    slot; Open MPI 4.1.4 runs K per socket (one on a 1-socket node of 2 slots), and the nodes'
    sockets are not in the script, so the count is said not read."""
    script = read_script("#!/bin/bash\n#SBATCH -N 2\n#SBATCH -t 5\n"
                         f"mpirun --host n1:2,n2:2 {option} ./hyb 30000\n")
    assert script.launch.program == "./hyb"
    assert script.ntasks_per_node != 2
    assert any("runs 1 rank(s) on each socket" in n and "not counted" in n
               for n in script.notes)


@pytest.mark.parametrize("options", ["--mca btl self,vader", "-x OMP_NUM_THREADS",
                                     "--bind-to core", "--rank-by core", "--map-by slot",
                                     "--output-filename out", "--tmpdir /tmp", "--path /opt/b"])
def test_open_mpis_options_with_values_leave_the_program_in_place(options):
    script = read_script(f"#!/bin/bash\n#SBATCH -t 5\nmpirun -n 2 {options} ./hyb 30000\n")
    assert script.launch.program == "./hyb", options


@pytest.mark.parametrize("option", ["--hostfile hf", "-hostfile hf", "--machinefile hf",
                                    "-machinefile hf", "-f hf", "--hostfile=hf"])
@pytest.mark.parametrize("ranks", ["-n 2 ", ""])
def test_a_host_files_ranks_per_node_are_said_not_read(option, ranks):
    """s43's left list: a host file was read as the directives ask, with no word. Measured
    (s44, 2-node salloc, file `n1\\nn2`, -n 2): Open MPI 4.1.4 and Intel MPI's mpiexec -f run
    2 on n1, MPICH's hydra 1 + 1: the file and the MPI decide, at run time."""
    script = read_script(O4.replace("-n 2 ", f"{ranks}{option} "))
    [said] = [n for n in script.notes if "the host file decides" in n]
    assert said.startswith(f"line 6: mpirun {option}: the host file decides how many ranks "
                           "run on each node")
    assert "the ranks per node are not read from it" in said and "-npernode K" in said


def test_a_host_file_under_ranks_per_node_of_the_launchs_own_is_counted_without_the_note():
    script = read_script(O4.replace("-n 2 ", "-n 2 -ppn 1 -f hf "))
    assert script.layout() == (2, 1, 1)
    assert not [n for n in script.notes if "the host file decides" in n]


@pytest.mark.parametrize("options, layout", [
    # Intel MPI's mpiexec (measured, s44, 2-node salloc of 2 tasks per node): -n 4 -rr runs
    # 2 + 2, dealt round the job's nodes again; -n at most the nodes: one per node
    ("-n 4 -rr", (2, 2, 1)), ("-rr -n 8", (2, 4, 1)), ("-n 2 -rr", (2, 1, 1)),
    ("-rr", (2, 1, 1)), ("-n 1 -rr", (1, 1, 1)),
    # round a host list's hosts, a host named again once
    ("-n 6 -rr -hosts n1,n2,n3", (3, 2, 1)), ("-n 4 -rr -hosts n1,n2,n1", (2, 2, 1))])
def test_rr_deals_more_ranks_than_nodes_round_the_nodes_again(options, layout):
    """s44 review R5: `mpiexec -n 4 -rr` in a job of 2 nodes x 2 tasks was read as 4 nodes x
    1 rank, more nodes than the job has, with no word."""
    script = read_script(O4.replace("/tmp/s40/A/venv/bin/mpirun -n 2", f"mpiexec {options}"))
    assert script.layout() == layout, options
    assert not [n for n in script.notes if "uneven" in n], options


@pytest.mark.parametrize("options, nodes, said", [
    ("-n 3 -rr", 2, "line 6: mpiexec -n 3 -rr deals its ranks round the job's nodes: 2, 1 on "
                    "its 2, an uneven layout, which a model of even layouts (nodes x ranks per "
                    "node) reads only approximately (as 2 x 2); give -n a multiple of 2 for an "
                    "answer about what runs"),
    ("-n 5 -rr", 4, "2, 1, 1, 1 on its 4"),
    ("-n 3 -rr -hosts n1,n2", 4, "round its host list's hosts: 2, 1 on its 2")])
def test_an_uneven_rr_deal_is_said_read_approximately(options, nodes, said):
    script = read_script(O4.replace("--nodes=2", f"--nodes={nodes}")
                         .replace("/tmp/s40/A/venv/bin/mpirun -n 2", f"mpiexec {options}"))
    assert script.layout() == (2 if nodes == 2 or "hosts" in options else nodes, 2, 1)
    assert [n for n in script.notes if said in n], script.notes


@pytest.mark.parametrize("options, layout", [
    # MPICH 5.0.2's hydra (measured, s44 tester O6, 2-node salloc): -ppn 1 -n 4 runs ranks
    # 0, 2 on one node and 1, 3 on the other: blocks of K dealt round the nodes again
    ("-ppn 1 -n 4", (2, 2, 1)), ("-n 8 -ppn 2", (2, 4, 1)), ("-perhost 1 -n 4", (2, 2, 1)),
    ("-ppn 2 -n 4", (2, 2, 1)), ("-ppn 1 -n 2", (2, 1, 1)), ("-ppn 2 -n 2", (1, 2, 1)),
    ("-ppn 1 -n 6 -hosts n1,n2,n3", (3, 2, 1)),
    # Open MPI's own spellings refuse more ranks than that: read as before
    ("-npernode 1 -n 4", (4, 1, 1))])
def test_hydra_ppn_deals_more_ranks_than_the_nodes_hold_round_them_again(options, layout):
    """s44 tester O6: `mpiexec -ppn 1 -n 4` in a 2-node job was read as 4 nodes x 1 rank,
    where `-rr -n 4`, the same deal, was read 2 x 2."""
    script = read_script(O4.replace("/tmp/s40/A/venv/bin/mpirun -n 2", f"mpiexec {options}"))
    assert script.layout() == layout, options
    assert not [n for n in script.notes if "uneven" in n], options


def test_an_uneven_ppn_deal_is_said_read_approximately():
    script = read_script(O4.replace("/tmp/s40/A/venv/bin/mpirun -n 2", "mpiexec -ppn 2 -n 6"))
    assert script.layout() == (2, 3, 1)
    assert [n for n in script.notes if "mpiexec -ppn 2 -n 6 deals its ranks round the job's "
            "nodes: 4, 2 on its 2, an uneven layout" in n and "(as 2 x 3)" in n
            and "give -n a multiple of 4" in n], script.notes
