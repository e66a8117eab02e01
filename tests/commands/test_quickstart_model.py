"""A quickstart rerun with nothing new neither retrains nor relearns (s37 tester K3), and
still does where anything changed: new runs, another version, a damaged or replaced model,
an output removed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpcds1mpi.commands.quickstart import MARK
from hpcds1mpi.commands.quickstart_model import RECORD_PREFIX, read_record
from hpcds1mpi.digests import sha256_file
from hpcds1mpi.records import telemetry
from hpcds1mpi.records.telemetry.snapshot_write import write_snapshot
from tests.commands.test_quickstart import fake_recommending
from tests.records.telemetry.rows import run_row


class Steps(list):
    """The steps run, in order; ``runs``: how many runs the faked sweep holds."""

    runs = 2


@pytest.fixture
def steps(monkeypatch):
    """quickstart's subprocess steps faked with real files: the sweep writes a real telemetry
    file of ``steps.runs`` runs (a resume with none new rewrites it unchanged), training a
    bundle whose manifest hashes its members, recommending the script."""
    from hpcds1mpi.commands import quickstart
    from hpcds1mpi.launch import launcher_discovery

    calls = Steps()

    def run(cmd, what, timeout):
        calls.append(what)
        if what == "measuring sweep":
            store = telemetry.Store()
            for i in range(calls.runs):
                store.add_run(run_row(i, finished_at=1000.0 + i),
                              {t: [] for t in telemetry.DETAIL_TABLES})
            write_snapshot(Path(cmd[cmd.index("--out") + 1]), store)
        elif what == "training":
            model = Path(cmd[cmd.index("--out") + 1])
            model.mkdir(exist_ok=True)
            (model / "members.pkl").write_bytes(b"members %d" % len(calls))
            (model / "manifest.json").write_text(json.dumps(
                {"format_version": 1, "targets": [], "feature_spec": {},
                 "sources": [cmd[cmd.index("--telemetry") + 1]],
                 "files": {"members.pkl": sha256_file(model / "members.pkl")}}))
        elif what == "recommending":
            return fake_recommending(cmd)
        return "table"

    monkeypatch.setattr(quickstart, "_run", run)
    monkeypatch.setattr(launcher_discovery, "mpiexec_path", lambda: "mpiexec")
    return calls


def invoke(out):
    from click.testing import CliRunner

    from hpcds1mpi.commands.quickstart import command

    return CliRunner().invoke(command, ["--out", str(out)], catch_exceptions=False)


def _rerun(out, steps) -> tuple[list[str], str]:
    steps.clear()
    result = invoke(out)
    assert result.exit_code == 0, result.output
    return list(steps), result.output


def test_a_rerun_with_nothing_new_does_not_train_again(tmp_path, steps):
    """s37 tester K3: a rerun whose sweep added no run trained the model again (minutes)."""
    out = tmp_path / "qs"
    done, _ = _rerun(out, steps)
    assert "training" in done and "recommending" in done
    done, said = _rerun(out, steps)
    assert done == ["measuring sweep"], said
    assert "is up to date" in said and "not trained again" in said
    assert "the recommendation made from it stands" in said and "where everything is" in said


def test_a_rerun_trains_again_where_the_sweep_added_runs(tmp_path, steps):
    out = tmp_path / "qs"
    _rerun(out, steps)
    steps.runs = 3
    done, said = _rerun(out, steps)
    assert "training" in done and "recommending" in done and "up to date" not in said
    assert _rerun(out, steps)[0] == ["measuring sweep"]  # and then it is up to date


@pytest.mark.parametrize("change", ["damaged", "missing", "version", "no record", "learnt"])
def test_a_rerun_trains_again_where_the_model_is_not_what_was_made(tmp_path, steps, change):
    out = tmp_path / "qs"
    _rerun(out, steps)
    model, mark = out / "model", out / MARK
    if change == "damaged":
        (model / "members.pkl").write_bytes(b"another training's members")
    elif change == "missing":
        (model / "members.pkl").unlink()
    elif change == "version":  # made by another hpcds1mpi
        record = {**read_record(mark), "hpcds1mpi": "0.0.1"}
        mark.write_text(mark.read_text().splitlines()[0] + "\n" + RECORD_PREFIX
                        + json.dumps(record) + "\n")
    elif change == "no record":  # a folder of an older quickstart, or a run stopped midway
        mark.write_text(mark.read_text().splitlines()[0] + "\n")
    else:  # learn (or train) replaced the bundle since
        manifest = json.loads((model / "manifest.json").read_text())
        (model / "manifest.json").write_text(json.dumps({**manifest, "n_rows": 99}))
    done, said = _rerun(out, steps)
    assert "up to date" not in said and "training" in done and "recommending" in done


def test_a_removed_output_is_made_again_without_training(tmp_path, steps):
    out = tmp_path / "qs"
    _rerun(out, steps)
    (out / "pareto.png").unlink()
    done, said = _rerun(out, steps)
    assert "training" not in done and "recommending" in done and "is up to date" in said
    assert (out / "pareto.png").is_file()


def test_a_run_stopped_after_its_sweep_leaves_no_record(tmp_path, steps, monkeypatch):
    """The record is written only when a run ends whole: one stopped at recommending leaves
    outputs of an earlier model, which the next rerun must not keep as current."""
    from hpcds1mpi.commands import quickstart
    from hpcds1mpi.errors import RuntimeFailure

    def stopped(*args):
        raise RuntimeFailure("recommending failed")

    out = tmp_path / "qs"
    _rerun(out, steps)
    assert read_record(out / MARK)
    monkeypatch.setattr(quickstart, "_recommend", stopped)
    steps.runs = 3
    with pytest.raises(RuntimeFailure):
        invoke(out)
    assert read_record(out / MARK) is None
    monkeypatch.undo()
