"""``recommend --history`` looks for the job under the name its script gives it (s28 tester
Z4: the script wrote ``#SBATCH --job-name=hpcds1mpi-stencil`` while the history was searched
for ``stencil``, so the user's runs of recommend's own scripts were never found by name)."""

from __future__ import annotations

from hpcds1mpi.commands.recommend import command
from tests.commands.test_recommend import fake_cli, fake_model  # noqa: F401 (fixtures)
from tests.decide.test_walltime_same_name import _history


def test_the_history_is_searched_for_the_name_the_script_gives(fake_cli, tmp_path):
    table = tmp_path / "hist.parquet"
    history = _history()
    history["workload"] = history["workload"].replace("stencil", "hpcds1mpi-gemm")
    history.to_parquet(table)
    out = tmp_path / "job.sh"
    result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o",
                      str(out), "--program", "./gemm --n {size}", "--history", str(table),
                      "--user", "alice")
    assert result.exit_code == 0, result.output
    assert "#SBATCH --job-name=hpcds1mpi-gemm" in out.read_text().splitlines()
    assert "(40 with this name" in result.output  # was: (0 with this name)
    assert "of your 40 finished jobs named 'hpcds1mpi-gemm' ran within it" in result.output


def test_the_help_names_the_default_the_script_gives():
    from click.testing import CliRunner

    # Without whitespace: click wraps the help at any hyphen.
    text = "".join(CliRunner().invoke(command, ["--help"]).output.split())
    assert "(default:hpcds1mpi-WORKLOAD,thenamethescriptgives)" in text
