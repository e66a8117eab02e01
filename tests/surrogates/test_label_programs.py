"""One workload label, one program: two programs (or input decks) under one --label refused."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hpcds1mpi.errors import DataError
from tests.commands.test_learn import program_runs
from tests.commands.test_train import FASTEST, write
from tests.helpers import run_cli
from tests.surrogates.test_levels import swept


def _refused(frame) -> str:
    """The one-line refusal ``refuse_mixed_runtimes`` gives ``frame``."""
    from hpcds1mpi.surrogates.levels import refuse_mixed_runtimes

    with pytest.raises(DataError) as err:
        refuse_mixed_runtimes(frame)
    assert "\n" not in str(err.value)
    return str(err.value)


@pytest.mark.parametrize("line, identity", [
    ("meep res={size} wg.ctl", ("meep", ("wg.ctl",))),
    ("nrniv -mpi -c ncell={size} ring.hoc", ("nrniv", ("ring.hoc",))),
    ("lmp -in ./in.lj -var n {size}", ("lmp", ("in.lj",))),
    ("env OMP_NUM_THREADS=1 python3 app.py {size}", ("app.py", ())),
    ("./app --input=case1/input.nml 0.5 1e5 --fast", ("app", ("case1/input.nml",))),
    ("nwchem.mpich s{size}.nw", ("nwchem.mpich", ())),  # one deck per size: one program
])


def test_a_command_lines_program_and_input_files(line, identity):
    from hpcds1mpi.surrogates.label_programs import program_identity

    assert program_identity(line) == identity


@pytest.mark.parametrize("first, second, why", [
    ("meep res={size} wg.ctl", "nrniv -mpi -c ncell={size} ring.hoc",
     "the programs meep and nrniv"),
    ("lmp -in in.lj -var n {size}", "lmp -in in.eam -var n {size}",
     "lmp with the input files in.lj and in.eam"),
])
def test_two_programs_under_one_label_are_refused_before_training(first, second, why):
    """s41 tester A1: Meep's and NEURON's runs under one label were fitted as one program with
    a note only, and recommend wrote NEURON's script sized by Meep's resolution."""

    frame = pd.concat([swept(first, (8, 10, 12)), swept(second, (10, 20))],
                      ignore_index=True)
    message = _refused(frame)
    assert message == (
        f"the runs of workload 'myapp' ran {first!r} and {second!r} under one --label ({why}): "
        "a model would learn one runtime for two computations; sweep each with its own --label "
        "(--label NAME) and train on those files")


def test_one_programs_lines_with_other_options_still_pass():
    from hpcds1mpi.surrogates.levels import refuse_mixed_runtimes

    for other in ("./jacobi {size} 40 --fast", "./jacobi {size} 40 -ntomp 2"):
        refuse_mixed_runtimes(pd.concat([swept("./jacobi {size} 40", (64, 128)),
                                         swept(other, (64,))], ignore_index=True))


def test_train_and_learn_refuse_another_program_under_the_label_in_one_line(tmp_path):
    """train on two files, and learn adding the other program's runs to a bundle, refuse
    with exit 2 before fitting; nothing is written."""
    # two sweeps, each recording when its runs started: size 64 has one run_id in both (the
    # label's), and rows without a start would be one record read twice (s47 tester M8)
    one = write(tmp_path / "a.h5", program_runs("./meep res={size} wg.ctl", (32, 48, 64))
                .assign(started_at=1.7e9))
    two = write(tmp_path / "b.h5", program_runs("./nrniv ncell={size} ring.hoc", (64, 96))
                .assign(started_at=1.8e9))
    proc = run_cli(["train", "--telemetry", one, "--telemetry", two, "--out",
                    str(tmp_path / "ab"), "--members", "2", "--threads", "1"], timeout=300)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert "ran './meep res={size} wg.ctl' and './nrniv ncell={size} ring.hoc'" in line
    assert "its own --label" in line and not (tmp_path / "ab").exists()
    proc = run_cli(["train", "--telemetry", one, "--out", str(tmp_path / "a"), *FASTEST],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    proc = run_cli(["learn", "--model", str(tmp_path / "a"), "--telemetry", two,
                    "--threads", "1"], timeout=300)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert "'./meep res={size} wg.ctl'" in line and "'./nrniv ncell={size} ring.hoc'" in line
    assert "under one --label (the programs " in line and line.count("\n") == 0


def _in(folder: str, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s rows as swept from ``folder`` (their recorded ``swept_in``)."""
    return frame.assign(swept_in=json.dumps(folder))


def test_one_command_line_swept_from_two_folders_is_two_programs():
    """s41 tester D18: ``python3 main.py {size}`` swept in a/ and in b/ without --label (both
    labelled main.py) trained into one workload, and recommend answered with the geometric
    mean of two programs; now refused in one line naming both folders."""

    frame = pd.concat([_in("/w/a", swept("python3 main.py {size}", (20, 40))),
                       _in("/w/b", swept("python3 main.py {size}", (20, 80)))],
                      ignore_index=True)
    message = _refused(frame)
    assert message == (
        "the runs of workload 'myapp' ran 'python3 main.py {size}' in /w/a and 'python3 "
        "main.py {size}' in /w/b under one label (two programs: /w/a/main.py and "
        "/w/b/main.py): a model would learn one runtime for two computations; sweep each "
        "with its own --label (--label NAME) and train on those files")


def _given(line: str, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s rows carrying ``line`` as their sweep was given it (as telemetry rows do)."""
    return frame.assign(command_template=line)


def test_an_input_named_by_its_size_swept_from_two_folders_is_two_programs():
    """s42 tester E1: ``iqtree2-mpi -s aln-{size}.phy`` swept in a/ and in b/ (two different
    alignments) was trained as one workload, its input skipped for the placeholder, and
    recommend answered "measured" with the mean of the two; now its input is filled per run
    and compared in each folder like a plain one."""

    line = "iqtree2-mpi -s aln-{size}.phy -m GTR+G -T 1 -redo"
    frame = pd.concat([_in("/w/a", _given(line, swept(line, (200, 400)))),
                       _in("/w/b", _given(line, swept(line, (200,))))], ignore_index=True)
    message = _refused(frame)
    assert message.startswith(f"the runs of workload 'myapp' ran {line!r} in /w/a and ")
    assert ("under one label (two programs: /w/a/aln-200.phy /w/a/aln-400.phy and "
            "/w/b/aln-200.phy /w/b/aln-400.phy): a model would learn one runtime for two "
            "computations; sweep each with its own --label") in message


def test_a_shared_input_folder_swept_at_other_sizes_from_two_folders_is_one_program():
    """Each folder's input is filled with every run's values alike: ``../data/aln-{size}.phy``
    from a/ at 20 and 40 and from b/ at 80 reads one folder's alignments, one program."""
    from hpcds1mpi.surrogates.levels import refuse_mixed_runtimes

    for line in ("app -s ../data/aln-{size}.phy", "app -s /data/aln-{size}.phy"):
        refuse_mixed_runtimes(pd.concat([_in("/w/a", _given(line, swept(line, (20, 40)))),
                                         _in("/w/b", _given(line, swept(line, (80,))))],
                                        ignore_index=True))


def test_a_refusal_names_the_first_few_filled_inputs_of_each_folder():
    line = "app in_{size}.dat"
    frame = pd.concat([_in("/w/a", swept(line, (1, 2, 3, 4, 5))),
                       _in("/w/b", swept(line, (1, 2)))], ignore_index=True)
    assert ("(two programs: /w/a/in_1.dat /w/a/in_2.dat /w/a/in_3.dat (and 2 more) and "
            "/w/b/in_1.dat /w/b/in_2.dat /w/b/in_3.dat (and 2 more))") in _refused(frame)


def test_folder_files_fills_a_placeholder_input_per_run_only_when_given_runs():
    from hpcds1mpi.surrogates.label_programs import folder_files, run_values

    runs = run_values(swept("x", (8, 16)))
    assert runs[0] == {"size": "8", "nodes": "1", "ranks_per_node": "1", "ranks": "1",
                       "threads": "1", "precision": "fp64", "device": "cpu"}
    line = "./app --mesh=m{size}_{ranks}.xdmf 0.5"
    assert folder_files(line, "/w") == ("/w/app",)  # the old reading without runs
    assert folder_files(line, "/w", runs) == (
        "/w/app", "/w/m16_1.xdmf", "/w/m16_2.xdmf", "/w/m8_1.xdmf", "/w/m8_2.xdmf")


@pytest.mark.parametrize("line", ["/opt/app {size}", "lmp -in /data/in.lj -var n {size}",
                                  "hpcc"])
def test_a_program_reading_nothing_from_its_folder_is_one_program_from_any(line):
    from hpcds1mpi.surrogates.levels import refuse_mixed_runtimes

    refuse_mixed_runtimes(pd.concat([_in("/w/a", swept(line, (20, 40))),
                                     _in("/w/b", swept(line, (80,)))], ignore_index=True))
    refuse_mixed_runtimes(pd.concat([_in("/w/a", swept("./app {size}", (20, 40))),
                                     _in("/w/a", swept("./app {size}", (80,)))],
                                    ignore_index=True))


@pytest.mark.parametrize("ran, measured, found", [
    ("pvbatch sph.py 60", "pvbatch wav.py {size}", (("sph.py",), ("wav.py",))),
    ("pvbatch ./pv/wav.py 60", "pvbatch wav.py {size}", None),  # one file's name
    ("lmp -in in.lj -var n 60 -log run.log", "lmp -in in.lj -var n {size}", None),
    ("pw.x -i si-30.in", "pw.x -i si-{size}.in", None),  # any value of its placeholder
    ("pvbatch $S 60", "pvbatch wav.py {size}", None),  # unread: not called another
    ("lmp -in in.eam", "meep in.lj", None)])  # another program: not this rule's
def test_other_input_files_of_one_program_are_told_by_trains_rule(ran, measured, found):
    """s45 tester E3: advise tells a job's other input file by the rule train refuses two
    lines under one label with."""
    from hpcds1mpi.surrogates.label_programs import other_inputs

    assert other_inputs(ran, measured) == found
