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


def test_a_label_of_non_ascii_letters_gets_a_valid_default_name_said(fake_cli, tmp_path,
                                                                      monkeypatch):
    """s39 tester D1: the script of a label `sweep` took (é日本) was refused for the default
    job name made from it, a name the user never gave, without naming --job-name."""
    from hpcds1mpi.decide import model_bundle
    from tests.commands.test_recommend import WIDE_SIZES
    from tests.fake_bundle import FakeBundle

    bundle = FakeBundle(workloads=("é日本", "gemm"), sizes=WIDE_SIZES)
    monkeypatch.setattr(model_bundle, "load_model", lambda model_dir: bundle)
    for scheduler, directive in (("slurm", "#SBATCH --job-name=hpcds1mpi-e__"),
                                 ("pbs", "#PBS -N hpcds1mpi-e__")):
        out = tmp_path / f"job.{scheduler}"
        result = fake_cli("--workload", "é日本", "--size", "2048", "--emit", scheduler, "-o",
                          str(out), "--program", "./gemm --n {size}")
        assert result.exit_code == 0, result.output
        assert directive in out.read_text().splitlines()
        assert ("note: the job is named 'hpcds1mpi-e__': the label 'é日本' has characters a "
                "batch script's job name cannot hold (give --job-name to choose another)"
                in result.output)
