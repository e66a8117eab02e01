"""A telemetry merge refuses the label conflicts it adds, and warns of those --out held."""

from __future__ import annotations

import hashlib
import os

import pytest

from hpcds1mpi.records import telemetry


def _runs(command, sizes, tag, workload="myapp"):
    from tests.commands.test_learn import program_runs

    frame = program_runs(command, sizes)
    frame["run_id"] = tag + frame["run_id"].astype(str)  # each sweep its own runs
    frame["workload"] = workload
    return frame.to_dict("records")


def _merge(capsys, *args):
    from hpcds1mpi.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["telemetry", "merge", *map(str, args)])
    said = capsys.readouterr()
    return exit_info.value.code or 0, said.out, said.err


def test_an_out_holding_two_programs_under_one_label_takes_unrelated_runs_with_a_warning(
        tmp_path, capsys):
    """s42 left: an --out holding Meep's and NEURON's runs under 'myapp' (written before the
    merge's check) refused every later merge into it, of unrelated shards too. Now an unrelated
    shard merges, and a warning names the label and how to split it; runs added to that label
    are refused in one line, --out left as it was; a rerun adding nothing warns again."""
    mixed, other, meep = tmp_path / "mixed.h5", tmp_path / "other.h5", tmp_path / "meep.h5"
    telemetry.append(mixed, _runs("./meep res={size} wg.ctl", (32, 48), "a-")
                     + _runs("./nrniv ncell={size} ring.hoc", (64,), "b-"))
    telemetry.append(other, _runs("./lmp -in in.lj {size}", (32,), "c-", workload="lammps"))
    telemetry.append(meep, _runs("./meep res={size} wg.ctl", (96,), "d-"))
    warning = ("warning: --out holds two programs under the label 'myapp' (kept as it was; "
               "train refuses that label until it is split): the runs of workload 'myapp' ran ")
    code, out, err = _merge(capsys, other, "--out", mixed)
    assert code == 0, err
    assert "added" in out and " 0 added" not in out
    [line] = [ln for ln in err.splitlines() if ln.startswith("warning:")]
    assert line.startswith(warning) and line.endswith(
        "merge each program's files into its own --out, or sweep one again with its own "
        "--label (--label NAME)")
    assert {"lammps", "myapp"} == set(telemetry.read_runs(mixed)["workload"])
    before = hashlib.sha256(mixed.read_bytes()).hexdigest(), os.stat(mixed).st_mtime
    code, out, err = _merge(capsys, meep, "--out", mixed)  # more runs of the mixed label
    assert code == 2
    [line] = err.strip().splitlines()
    assert line.startswith("hpcds1mpi: error: --out already holds two programs under the label "
                           "'myapp' and the merge would add ") and line.endswith(
        "nothing was written")
    assert (hashlib.sha256(mixed.read_bytes()).hexdigest(), os.stat(mixed).st_mtime) == before
    code, out, err = _merge(capsys, other, "--out", mixed)  # nothing new: said again
    assert code == 0 and "nothing to add" in out
    assert any(ln.startswith(warning) for ln in err.splitlines())


def test_a_merge_that_makes_a_label_two_programs_is_refused_whatever_out_holds(tmp_path,
                                                                               capsys):
    """The conflict the merge adds is refused as before, into a new --out or one whose other
    label is already mixed."""
    mixed, a, b = tmp_path / "mixed.h5", tmp_path / "a.h5", tmp_path / "b.h5"
    telemetry.append(mixed, _runs("./meep res={size} wg.ctl", (32,), "a-", workload="x")
                     + _runs("./nrniv ncell={size} ring.hoc", (64,), "b-", workload="x"))
    telemetry.append(a, _runs("./meep res={size} wg.ctl", (32,), "c-"))
    telemetry.append(b, _runs("./nrniv ncell={size} ring.hoc", (64,), "d-"))
    for out in (tmp_path / "new.h5", mixed):
        code, _, err = _merge(capsys, a, b, "--out", out)
        assert code == 2
        assert err.strip().startswith("hpcds1mpi: error: the runs of workload 'myapp' ran ")
    assert not (tmp_path / "new.h5").exists()
