"""``recommend --emit``'s options as the script and the streams carry them (s46 tester J):
a no-limit ``--time-limit`` (J1), ``--json -o -`` (J6), ``--job-output`` into a missing folder
(J3), through the real command."""

from __future__ import annotations

import json

import pytest

from tests.commands.test_recommend import fake_cli, fake_model  # noqa: F401 (fixtures)


@pytest.mark.parametrize("given", ["UNLIMITED", "0", "-1", "INFINITE", "00:00:00"])
def test_a_no_limit_time_limit_is_written_as_no_limit(fake_cli, tmp_path, given):
    """Was: dropped without a word; the script got --time=00:01:00 (PBS walltime=00:01:00),
    a job killed after a minute though the user asked for no limit."""
    for emit, line, option in (("slurm", "#SBATCH --time", "--time"),
                               ("pbs", "#PBS -l walltime", "walltime")):
        out = tmp_path / f"job.{emit}"
        result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", emit, "-o",
                          str(out), "--time-limit", given)
        assert result.exit_code == 0, result.output
        script = out.read_text()
        assert line not in script, script
        said = f"no {option}: your --time-limit {given} asks for no limit, so the "
        assert f"note: {said}" in result.output and f"# note: {said}" in script
        assert f"no time limit (--time-limit {given})" in script


def test_a_given_time_limit_is_still_written(fake_cli, tmp_path):
    out = tmp_path / "job.sh"
    result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
                      "--time-limit", "90")
    assert result.exit_code == 0, result.output
    assert "#SBATCH --time=01:30:00" in out.read_text() and "asks for no limit" not in \
        result.output


def test_json_with_o_dash_is_json_alone_on_stderr_with_its_notes(fake_cli):
    """Was: the JSON went to stderr after the note lines, not parseable; the script stays
    alone on stdout (piped to sbatch), the notes go into the JSON's "said"."""
    args = ("--workload", "gemm", "--size", "2048", "--emit", "slurm", "--time-limit",
            "UNLIMITED", "--job-output", "nodir/%j.log")
    result = fake_cli(*args, "-o", "-", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stderr)
    assert any(line.startswith("note: no --time: your --time-limit UNLIMITED") for line
               in data["said"]) and any(line.startswith("warning: --job-output nodir/")
                                        for line in data["said"]), data["said"]
    assert result.stdout.startswith("#!/bin/bash") and "#SBATCH --output=nodir" in \
        result.stdout
    plain = fake_cli(*args, "-o", "-")  # without --json: the lines on stderr, as before
    assert "note: no --time: your --time-limit UNLIMITED" in plain.stderr
    assert "said" not in json.loads(fake_cli(*args, "--json").stdout)


def test_a_job_output_into_a_missing_folder_is_warned(fake_cli, tmp_path, monkeypatch):
    """Was: written silently; sbatch cannot open the output, the job FAILED with no output."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "job.sh"
    result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
                      "--job-output", "nodir/%j.log")
    assert result.exit_code == 0, result.output
    assert ("warning: --job-output nodir/%j.log: its folder 'nodir' does not exist here (the "
            "folder you submit from); Slurm does not create it: the job fails with no output; "
            "create it before you submit: mkdir -p nodir") in result.stderr
    assert "#SBATCH --output=nodir/%j.log" in out.read_text()
    (tmp_path / "nodir").mkdir()
    for given in ("nodir/%j.log", "plain.log", "logs_%j/x.log"):  # there, here, or unknowable
        result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o",
                          str(out), "--job-output", given)
        assert result.exit_code == 0 and "--job-output" not in result.stderr, result.stderr
