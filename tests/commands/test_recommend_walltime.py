"""``recommend --history``: the walltime lines tell the truth about the job, the script and
the history (s28 tester W: W3, W4, W9, W12), through the real command."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hpcds1mpi.commands.recommend import command
from tests.commands.test_recommend import fake_cli, fake_model  # noqa: F401 (fixtures)
from tests.decide.test_walltime_same_name import _history


def _table(tmp_path, rows=None):
    path = tmp_path / "hist.parquet"
    (_history() if rows is None else _history().head(rows)).to_parquet(path)
    return path


def test_a_job_on_this_machine_is_not_asked_about_its_made_up_partition(tmp_path, monkeypatch):
    """Was: the history was asked about partition 'local' (this machine's label, which the
    script leaves out): every request looked new to the user."""
    from hpcds1mpi.decide import walltime

    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    (tmp_path / "m").mkdir()
    asked = {}
    real = walltime.propose_walltime
    monkeypatch.setattr(walltime, "propose_walltime",
                        lambda *a, **kw: asked.update(kw) or real(*a, **kw))
    result = CliRunner().invoke(
        command, ["--model", str(tmp_path / "m"), "--workload", "gemm", "--size", "2048",
                  "--history", str(_table(tmp_path)), "--user", "alice", "--job-name",
                  "stencil", "--time-limit", "2"])
    assert result.exit_code == 0, result.output
    assert asked["partition"] is None
    assert "'local'" not in result.output.split("walltime:", 1)[1]
    assert "partition taken as 'debug', where your jobs ran" in result.output


def test_an_escalated_job_says_the_calibration_sweep_keeps_its_own_limit(fake_cli, tmp_path):
    """Was: "the slurm script's time limit is your --time-limit (60 s)" beside a calibration
    script asking #SBATCH --time=01:00:00."""
    out = tmp_path / "calib.sh"
    result = fake_cli("--workload", "brand-new-code", "--size", "500", "--emit", "slurm",
                      "-o", str(out), "--program", "./new --n {size}", "--history",
                      str(_table(tmp_path)), "--user", "alice", "--time-limit", "1")
    assert result.exit_code == 0, result.output
    script = out.read_text()
    limit = next(ln.split("=", 1)[1] for ln in script.splitlines()
                 if ln.startswith("#SBATCH --time="))
    h, m, s = (int(x) for x in limit.split(":"))
    assert f"calibration sweep keeps its own time limit ({h * 3600 + m * 60 + s} s)" \
        in result.output
    assert "time limit is your --time-limit" not in result.output
    data = json.loads(fake_cli("--workload", "brand-new-code", "--size", "500", "--emit",
                               "slurm", "-o", str(out), "--program", "./new --n {size}",
                               "--history", str(_table(tmp_path)), "--user", "alice",
                               "--time-limit", "1", "--json").stdout)
    assert data["walltime"]["in_script"] is False
    assert data["walltime"]["script_time_s"] == h * 3600 + m * 60 + s


def test_a_history_too_thin_still_gives_the_recommendation(fake_cli, tmp_path):
    """Was: exit 2, "the history has 26 finished jobs: need at least 30", no recommendation."""
    result = fake_cli("--workload", "gemm", "--size", "2048", "--history",
                      str(_table(tmp_path, rows=26)), "--user", "alice")
    assert result.exit_code == 0, result.output
    assert "walltime: cannot propose: the history has 26 completed jobs" in result.output
    assert "give a longer history" in result.output and "✓" in result.output


def test_a_time_limit_rounded_to_a_minute_is_said(fake_cli, tmp_path):
    ask = ["--workload", "gemm", "--size", "2048", "--history", str(_table(tmp_path)),
           "--user", "alice", "--time-limit"]
    result = fake_cli(*ask, "00:00:30")
    assert result.exit_code == 0, result.output
    assert ("walltime: your --time-limit 00:00:30 is 60 s: Slurm rounds a time limit up to "
            "whole minutes") in result.output
    for whole in ("1", "00:01:00", "1-00:00"):
        assert "Slurm rounds" not in fake_cli(*ask, whole).output


def test_a_pbs_scripts_time_limit_is_not_said_to_be_slurms_rounding(fake_cli, tmp_path):
    """s33 tester P4: `--time-limit 1:30 --emit pbs` said "Slurm rounds a time limit up to
    whole minutes" of a PBS script; its walltime is whole minutes by this tool's rule."""
    ask = ["--workload", "gemm", "--size", "2048", "--history", str(_table(tmp_path)),
           "--user", "alice", "--time-limit", "1:30", "--emit"]
    pbs = fake_cli(*ask, "pbs", "-o", str(tmp_path / "job.pbs"))
    assert pbs.exit_code == 0, pbs.output
    assert "Slurm rounds" not in pbs.output
    assert ("your --time-limit 1:30 is 120 s: the PBS script asks for whole minutes, rounded "
            "up") in pbs.output
    assert "-l walltime=00:02:00 (120 s, = the request: capped" in pbs.output
    slurm = fake_cli(*ask, "slurm", "-o", str(tmp_path / "job.sh"))
    assert "your --time-limit 1:30 is 120 s: Slurm rounds" in slurm.output
    assert "walltime: --time 00:02:00 (120 s, = the request: capped" in slurm.output


def test_the_help_says_the_calibration_sweep_is_written_for_slurm_only():
    """s33 tester P3: --help promised the calibration sweep for --emit, which --emit pbs
    refuses ("written for Slurm only")."""
    text = " ".join(CliRunner().invoke(command, ["--help"]).output.split())
    assert "Write a batch script (when escalated, the calibration sweep: Slurm only)." in text


def test_the_walltime_figures_said_are_the_ones_the_script_asks(fake_cli, tmp_path):
    """s40 tester D10: JSON ``script_time_s`` 910.87 and the text "--time 00:16:00 (911 s" for
    a script asking --time=00:16:00 = 960 s: the proposal is rounded up to whole minutes in
    the script, so the figures beside it are too, the proposal's own said beside them."""
    out = tmp_path / "job.sh"
    ask = ["--workload", "gemm", "--size", "2048", "--history", str(_table(tmp_path)),
           "--user", "alice", "--emit", "slurm", "-o", str(out)]
    data = json.loads(fake_cli(*ask, "--json").stdout)["walltime"]
    h, m, s = (int(x) for x in next(ln.split("=", 1)[1] for ln in out.read_text().splitlines()
                                    if ln.startswith("#SBATCH --time=")).split(":"))
    asked = h * 3600 + m * 60 + s
    assert data["in_script"] is True and data["time"] == f"{h:02d}:{m:02d}:{s:02d}"
    assert data["time_s"] % 60 != 0  # the case: a proposal off the whole minutes
    assert data["script_time_s"] == asked, data
    line = next(ln for ln in fake_cli(*ask).output.splitlines()
                if ln.startswith("walltime: --time"))
    assert line.startswith(f"walltime: --time {data['time']} ({asked} s: the proposed "
                           f"{data['time_s']:.0f} s"), line
    assert "rounded up to whole minutes" in line, line
