"""``hpcds1mpi recommend`` through its command: two partitions, failure history, table and
JSON, escalation, Slurm and PBS scripts, injection in option values, bad input as one line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hpcds1mpi.commands.recommend import command
from hpcds1mpi.decide import model_bundle
from hpcds1mpi.errors import ConfigError, OutputError
from hpcds1mpi.launch.scripts import check_bash_syntax
from tests.fake_bundle import WIDE_SIZES, FakeBundle, cluster_toml, isolate_user_files
from tests.helpers import run_cli
from tests.test_atomic import small_disk  # noqa: F401 (fixture)

CLUSTER_TOML = cluster_toml("gpu-small", "gpu-big")


@pytest.fixture(autouse=True)
def fake_model(tmp_path, monkeypatch):
    """The fake bundle in place of any --model; the cache and history under tmp_path."""
    isolate_user_files(monkeypatch, tmp_path)
    bundle = FakeBundle(sizes=WIDE_SIZES)
    monkeypatch.setattr(model_bundle, "load_model", lambda model_dir: bundle)


@pytest.fixture
def fake_cli(monkeypatch, tmp_path):
    # The fake bundle gets a model directory of its own: the shipped default bundle's guard
    # calibration (real distance units) must not be applied to it.
    model_dir = tmp_path / "fake_model"
    model_dir.mkdir()
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "cluster.toml"
    path.write_text(CLUSTER_TOML)

    def invoke(*args):  # an option given twice is refused: the test's own wins
        extra = [] if "--model" in args else ["--model", str(model_dir)]
        extra += [] if "--cluster" in args else ["--cluster", str(path)]
        result = CliRunner().invoke(command, [*extra, *args], catch_exceptions=False)
        return result

    return invoke


def test_cli_two_partitions_picks_the_one_that_fits(fake_cli, tmp_path):
    out = tmp_path / "job.sh"
    result = fake_cli("--workload", "gemm", "--size", "13000", "--device", "gpu",
                      "--emit", "slurm", "-o", str(out), "--program", "./gemm --n {size}")
    assert result.exit_code == 0, result.output
    assert "✓ lab/gpu-big" in result.output
    assert "✗ lab/gpu-small: needs ~4.1 GB per GPU; measured runs there fail above 3.3 GB" \
        in result.output
    script = out.read_text()
    check_bash_syntax(script)
    assert "#SBATCH --partition=gpu-big" in script and "#SBATCH --gres=gpu:" in script
    assert "#SBATCH --account=proj42" in script and "./gemm --n 13000" in script


def test_cli_record_failure_then_recommends_elsewhere(fake_cli):
    first = json.loads(fake_cli("--workload", "gemm", "--size", "2048", "--json").output)
    where = first["pick"]["partition"]
    again = fake_cli("--workload", "gemm", "--size", "2048", "--json",
                     "--record-failure", where, "--status", "oom")
    data = json.loads(again.stdout)  # stderr says which file the failure went to
    assert f"note: recorded gemm size 2048 as oom on {where} in " in again.stderr
    assert data["pick"]["partition"] != where
    assert [p for p in data["partitions"] if p["partition"] == where][0]["status"] == "rejected"


def test_cli_record_failure_refuses_a_history_inside_the_model_bundle(fake_cli, tmp_path):
    """s47 tester M10: --failure-history MODEL/failures.json dropped a foreign file into the
    bundle (learn then refused it), exit 0."""
    model = tmp_path / "fake_model"
    for inside in (model / "failures.json", model / "sub" / "f.json"):
        with pytest.raises(OutputError, match="is inside the --model bundle") as err:
            fake_cli("--model", str(model), "--workload", "gemm", "--size", "2048",
                     "--record-failure", "gpu-big", "--failure-history", str(inside))
        assert err.value.exit_code == 2 and "\n" not in str(err.value)
    assert list(model.iterdir()) == []


def test_table_and_json_hold_pick_intervals_confidence_front(fake_cli):
    text = fake_cli("--workload", "stencil", "--size", "1024", "--objective", "balanced").output
    for needle in ("✓ lab/", "runtime", "energy", "modelled", "confidence", "verdict",
                   "Top alternatives", "Runtime–energy front", "* "):
        assert needle in text, needle
    data = json.loads(fake_cli("--workload", "stencil", "--size", "1024", "--objective",
                               "balanced", "--json").output)
    pick = data["pick"]
    assert pick["runtime_lo"] <= pick["runtime_s"] <= pick["runtime_hi"]
    assert pick["energy_lo"] <= pick["energy_j"] <= pick["energy_hi"]
    assert 0 <= pick["confidence"] <= 1 and data["verdict"]["verdict"] in ("auto", "confirm")
    # on the front, or off it only where the front holds a level never measured whose interval
    # reaches the measured pick (picked first: s31 verifier V4)
    assert data["alternatives"] and (sum(p["pick"] for p in data["front"]) == 1 or (
        not pick["unmeasured"] and any(p["unmeasured"] for p in data["front"])))


def test_unknown_workload_escalates_with_calibration_script(fake_cli, tmp_path):
    out = tmp_path / "calib.sh"
    result = fake_cli("--workload", "brand-new-code", "--size", "500", "--emit", "slurm",
                      "-o", str(out), "--program", "./new --n {size}")
    assert result.exit_code == 0, result.output
    assert "escalate" in result.output and "✓" not in result.output
    script = out.read_text()
    check_bash_syntax(script)
    assert "calibration sweep" in script and script.count("hpcds1mpi sweep") >= 2
    data = json.loads(fake_cli("--workload", "brand-new-code", "--size", "500", "--json",
                               "--program", "./new --n {size}").output)
    assert data["pick"] is None and data["verdict"]["verdict"] == "escalate"
    assert data["verdict"]["checks"]["learned"] == "escalate" and data["calibration"]
    # without --program nothing knows its command: no steps, said (s41 tester A5)
    data = json.loads(fake_cli("--workload", "brand-new-code", "--size", "500", "--json").output)
    assert "calibration" not in data and any("--program" in n and "not a built-in kernel" in n for n in data["notes"])


def test_pbs_emit(fake_cli, tmp_path):
    out = tmp_path / "job.pbs"
    result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", "pbs", "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "#PBS -l select=" in text and "mpiexec -n" in text
    check_bash_syntax(text)


def test_json_with_emit_holds_the_script_text_or_the_path_it_went_to(fake_cli, tmp_path):
    """``--json --emit`` without -o had printed no script anywhere (exit 0): s26 tester j 1."""
    text = json.loads(fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm",
                               "--json").stdout)["script"]
    assert text.startswith("#!/bin/bash") and "#SBATCH" in text
    out = tmp_path / "job.sbatch"
    shown = json.loads(fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm",
                                "--json", "-o", str(out)).stdout)
    assert shown["script"] == str(out) and out.read_text() == text


def test_injection_in_cli_fields_is_rejected_or_inert(fake_cli, tmp_path):
    out = tmp_path / "job.sh"
    with pytest.raises(ConfigError):
        fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
                 "--job-name", "x$(touch PWNED)")
    with pytest.raises(ConfigError):
        fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
                 "--job-output", "out\n#SBATCH --account=evil")
    with pytest.raises(ConfigError, match="not run by a shell: '`touch', 'PWNED`' and "):
        fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
                 "--program", "./app `touch PWNED` $(touch PWNED)")  # s39 tester D7
    assert not out.exists()
    fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
             "--program", "./app '`touch PWNED`' '$(touch PWNED)'")
    assert "'`touch PWNED`' '$(touch PWNED)'" in out.read_text()


@pytest.mark.parametrize("args, message", [
    (["--size", "0"], "'--size': 0 is out of range"),
    (["--size", "-3"], "'--size': -3 is out of range"),
    (["--size", "\u0663\u0660\u0660"], "is not a whole number"),  # Arabic-Indic digits: 300
    (["--size", "100", "--device", "gpu", "--partition", "cpu"], "has GPUs"),
    (["--size", "100", "--objective", "time", "--max-nodes", "0"], "'--max-nodes': 0 is out"),
    (["--size", "100", "--workload", " "], "--workload is empty"),
])
def test_bad_input_is_one_line_error(tmp_path, args, message):
    path = tmp_path / "c.toml"
    path.write_text(cluster_toml("cpu", "gpu-small", "gpu-big"))
    workload = [] if "--workload" in args else ["--workload", "gemm"]
    res = CliRunner().invoke(command, ["--cluster", str(path), *workload, *args])
    # click refuses an option's value itself (exit 2); the command raises ConfigError (exit 2
    # through hpcds1mpi's main)
    assert res.exit_code == 2 or isinstance(res.exception, ConfigError), res.output
    assert message in (res.output + str(res.exception)), res.output


def test_an_energy_budget_is_in_joules_not_bounded_by_a_year_of_seconds(fake_cli):
    # 1e9 J (about 280 kWh, a few nodes for days) is more than a year in seconds.
    out = fake_cli("--workload", "gemm", "--size", "2048", "--energy-budget", "1e9", "--json")
    assert json.loads(out.output)["pick"]
    res = CliRunner().invoke(command, ["--workload", "gemm", "--size", "2048",
                                       "--energy-budget", "lots"])
    assert res.exit_code == 2 and "joules" in res.output and "seconds" not in res.output


@pytest.mark.parametrize("content", [None, "garbage"])
def test_unreadable_bundle_is_one_line_error_in_a_real_process(tmp_path, content):
    model = tmp_path / "model"
    model.mkdir()
    if content:
        (model / "bundle.json").write_text(content)
        (model / "models.pkl").write_bytes(b"\x80\x04not a pickle")
    proc = run_cli(["recommend", "--workload", "stencil", "--size", "100", "--model", str(model)],
                   timeout=120, env={"HPCDS1MPI_CACHE": str(tmp_path / "c")})
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "error" in proc.stderr
    missing = run_cli(["recommend", "--workload", "stencil", "--size", "100", "--model",
                       str(tmp_path / "nope")], timeout=120)
    assert missing.returncode != 0 and "not found" in missing.stderr


# -- the script goes in whole or not at all; unusable -o paths are one line (#14) --------------

def test_output_without_emit_is_refused_not_wrote_none(fake_cli, tmp_path):
    out = tmp_path / "f"
    with pytest.raises(ConfigError, match="add --emit slurm or --emit pbs"):
        fake_cli("--workload", "gemm", "--size", "2048", "-o", str(out))
    assert not out.exists()
    proc = run_cli(["recommend", "--workload", "gemm", "--size", "2048", "-o", str(out)],
                   timeout=120, env={"HPCDS1MPI_CACHE": str(tmp_path / "c")})
    assert proc.returncode == 2 and "None" not in proc.stdout + proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "--emit" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("case, message", [
    ("directory", "is a directory; give a file name for the batch script"),
    ("missing parent", "no such directory"),
])
def test_unusable_script_path_is_one_usage_line_and_writes_nothing(fake_cli, tmp_path, case,
                                                                    message):
    from hpcds1mpi.errors import OutputError
    from tests.test_atomic import digests

    (tmp_path / "scripts").mkdir()
    out = tmp_path / "scripts" if case == "directory" else tmp_path / "nope" / "job.sh"
    before = digests(tmp_path)
    with pytest.raises(OutputError, match=message) as err:
        fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out))
    assert err.value.exit_code == 2 and digests(tmp_path) == before


def test_a_refused_script_leaves_the_old_one_and_no_temporary(fake_cli, tmp_path):
    from tests.test_atomic import temporaries

    from hpcds1mpi.launch.scripts import seal

    out = tmp_path / "job.sh"
    old = seal("#!/bin/bash\n# Written by hpcds1mpi 0.1.0. the previous script\n")
    out.write_text(old)
    with pytest.raises(ConfigError):
        fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
                 "--job-name", "x$(touch PWNED)")
    assert out.read_text() == old
    assert temporaries(tmp_path) == []


def test_script_on_a_full_disk_is_exit_1_and_keeps_the_old_script(fake_cli, small_disk):
    from hpcds1mpi.errors import WriteError
    from tests.test_atomic import digests, fill

    from hpcds1mpi.launch.scripts import seal

    out = small_disk / "job.sh"
    out.write_text(seal("# Written by hpcds1mpi 0.1.0. the old script\n"))
    fill(small_disk, 0)
    before = digests(small_disk)
    with pytest.raises(WriteError, match="disk is full") as err:
        fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out))
    assert err.value.exit_code == 1 and digests(small_disk) == before


def test_an_impossible_deadline_is_refused_not_exit_0(fake_cli, tmp_path):
    out = tmp_path / "job.sh"
    with pytest.raises(ConfigError, match="no configuration meets --deadline .*relax --deadline"):
        fake_cli("--workload", "gemm", "--size", "2048", "--deadline", "0.000001", "--emit",
                 "slurm", "-o", str(out))
    assert not out.exists()
    proc = run_cli(["recommend", "--workload", "stencil", "--size", "1024", "--deadline",
                    "0.000001"], timeout=120, env={"HPCDS1MPI_CACHE": str(tmp_path / "c")})
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0
    assert "relax --deadline" in proc.stderr and "Traceback" not in proc.stderr


# -- walltime from a history job table (issue 16): --history, --user, --time-limit -------------

from tests.records.ingest.joblogs import GAIA, needs_joblogs, swf_slice  # noqa: E402

#: Jobs of the real Gaia log the history tests use (a proposal on them takes ~2 s).
HISTORY_JOBS = 2000


@pytest.fixture(scope="module")
def gaia(tmp_path_factory):
    """A slice of the real Gaia log, as the log itself and as ingest's parquet and CSV tables,
    and its busiest user."""
    from hpcds1mpi.records.ingest import read_job_log
    from hpcds1mpi.records.ingest.job_logs import write_job_table

    folder = tmp_path_factory.mktemp("gaia")
    log = swf_slice(GAIA, folder / "gaia.swf", jobs=HISTORY_JOBS)
    table = read_job_log(log)[0]
    write_job_table(table, folder / "gaia.parquet")
    write_job_table(table, folder / "gaia.csv")
    return {"log": log, "parquet": folder / "gaia.parquet", "csv": folder / "gaia.csv",
            "folder": folder, "user": str(table["user"].value_counts().index[0])}


def _sbatch_time(script: str) -> str:
    return next(ln.split("=", 1)[1] for ln in script.splitlines()
                if ln.startswith("#SBATCH --time="))


@needs_joblogs
def test_history_proposes_walltime_in_table_json_and_script(fake_cli, tmp_path, gaia):
    base = ["--workload", "gemm", "--size", "2048", "--history", str(gaia["log"]),
            "--user", gaia["user"], "--time-limit", "1-00:00:00"]
    data = json.loads(fake_cli(*base, "--json").output)
    wall = data["walltime"]
    assert wall["reason"] == "" and 60 <= wall["time_s"] <= 86400 and wall["quantile"] == 0.95
    assert wall["request_s"] == 86400 and wall["n_history"] > 0 and wall["n_checked"] > 0
    assert wall["in_script"] is False  # no --emit
    out = tmp_path / "job.sh"
    result = fake_cli(*base, "--emit", "slurm", "-o", str(out))
    assert result.exit_code == 0, result.output
    text = result.output
    assert f"walltime: --time {wall['time']} (" in text and "(modelled)" in text
    assert "walltime: the slurm script's time limit is this proposal" in text
    script = out.read_text()
    check_bash_syntax(script)
    assert _sbatch_time(script) == wall["time"]  # the proposal, not the predicted runtime's
    assert "time limit proposed from the user's job history" in script
    # The chosen place and node count went into the question: JSON says which pick it was for.
    assert data["pick"]["nodes"] >= 1


@needs_joblogs
def test_history_time_limit_caps_and_pbs_script_uses_it(fake_cli, tmp_path, gaia):
    out = tmp_path / "job.pbs"
    result = fake_cli("--workload", "gemm", "--size", "2048", "--history", str(gaia["log"]),
                      "--user", gaia["user"], "--time-limit", "2", "--emit", "pbs",
                      "-o", str(out), "--walltime-coverage", "0.9")
    assert result.exit_code == 0, result.output
    # A PBS script is told its walltime as PBS asks for it, not as Slurm's --time.
    line = next(x for x in result.output.splitlines() if x.startswith("walltime: -l "))
    assert line.startswith("walltime: -l walltime=00:02:00 (120 s, = the request: capped; ")
    # Each proposal says which case it is: tight at the asked coverage, or the request kept.
    assert any(case in line for case in ("; tight: about 90 % of such jobs",
                                         "; tight: meant to cover about 90 % of such jobs",
                                         "; unsure: kept your request"))
    assert "#PBS -l walltime=00:02:00" in out.read_text()


@needs_joblogs
def test_a_user_without_history_cannot_propose_and_the_script_keeps_its_limit(
        fake_cli, tmp_path, gaia):
    plain, wanted = tmp_path / "plain.sh", tmp_path / "wanted.sh"
    fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(plain))
    result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm",
                      "-o", str(wanted), "--history", str(gaia["log"]), "--user", "nobody-ever")
    assert result.exit_code == 0, result.output
    assert "walltime: no user 'nobody-ever' in this history: cannot propose; its " in result.output
    assert "time limit is this proposal" not in result.output
    assert wanted.read_text() == plain.read_text()
    data = json.loads(fake_cli("--workload", "gemm", "--size", "2048", "--json", "--history",
                               str(gaia["log"]), "--user", "nobody-ever").output)
    assert data["walltime"]["time"] is None and "cannot propose" in data["walltime"]["reason"]


@needs_joblogs
def test_without_history_the_users_own_time_limit_goes_into_the_script(fake_cli, tmp_path,
                                                                     gaia):
    # Was: --time-limit 90 (minutes) dropped; the script got the predicted runtime's 1 minute.
    out = tmp_path / "job.sh"
    result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
                      "--history", str(gaia["log"]), "--user", "nobody-ever",
                      "--time-limit", "90")
    assert result.exit_code == 0, result.output
    assert "cannot propose" in result.output
    assert "the slurm script's time limit is your --time-limit (5400 s)" in result.output
    script = out.read_text()
    assert _sbatch_time(script) == "01:30:00" and "time limit given by --time-limit" in script


@needs_joblogs
def test_a_tampered_history_table_is_checked_and_its_dropped_rows_said(fake_cli, gaia):
    import pandas as pd

    table = pd.read_parquet(gaia["parquet"])
    table.loc[table.index[:7], "runtime_s"] = -5.0
    table.loc[table.index[7:9], "runtime_s"] = float("inf")
    table.loc[table.index[9], "runtime_s"] = 1e12  # was: OutOfBoundsTimedelta traceback
    bad = gaia["folder"] / "tampered.parquet"
    table.to_parquet(bad)
    result = fake_cli("--workload", "gemm", "--size", "2048", "--history", str(bad),
                      "--user", gaia["user"])
    assert result.exit_code == 0, result.output
    assert "history: " in result.stderr and "10 malformed/skipped" in result.stderr
    assert "runtime_s negative" in result.stderr
    assert "walltime: --time" in result.stdout
    from hpcds1mpi.errors import HpcdsError

    table.assign(user=None).to_parquet(bad)  # a column, but no user in it
    for path, message in ((bad, "no job in it names its user"), (gaia["folder"], "is a folder")):
        with pytest.raises(HpcdsError, match=message) as err:
            fake_cli("--workload", "gemm", "--size", "2048", "--history", str(path),
                     "--user", gaia["user"])
        assert err.value.exit_code == 2


@needs_joblogs
@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_an_ingested_job_table_proposes_as_the_log_does(fake_cli, gaia, kind):
    ask = ["--workload", "gemm", "--size", "2048", "--json", "--user", gaia["user"]]
    from_log = json.loads(fake_cli(*ask, "--history", str(gaia["log"])).output)["walltime"]
    from_table = json.loads(fake_cli(*ask, "--history", str(gaia[kind])).output)["walltime"]
    assert from_table["n_history"] == from_log["n_history"] > 0
    assert from_table["time_s"] == pytest.approx(from_log["time_s"], rel=1e-6)


def test_without_history_there_is_no_walltime(fake_cli):
    data = json.loads(fake_cli("--workload", "gemm", "--size", "2048", "--json").output)
    assert "walltime" not in data
    assert "walltime" not in fake_cli("--workload", "gemm", "--size", "2048").output


def test_recommend_without_history_does_not_load_the_history_code(tmp_path):
    import os
    import subprocess
    import sys

    # A whole recommendation with the shipped bundle, in a fresh process.
    code = ("import sys; from click.testing import CliRunner; "
            "from hpcds1mpi.commands.recommend import command; "
            "r = CliRunner().invoke(command, ['--workload', 'stencil', '--size', '128']); "
            "assert r.exit_code == 0 and 'stencil' in r.output, r.output; "
            "print(sorted(m for m in sys.modules if m.startswith(('hpcds1mpi.decide.walltime', "
            "'hpcds1mpi.records.ingest', 'hpcds1mpi.surrogates.job_runtime'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "HPCDS1MPI_CACHE": str(tmp_path)})
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


@pytest.mark.parametrize("text, seconds", [("90", 5400.0), ("365-00:00:00", 365 * 86400.0),
                                           ("UNLIMITED", None), ("0", None),
                                           # as sbatch reads them (s35): not "not a time"
                                           ("-1", None), ("00:00:00", None), ("0-0", None)])
def test_a_time_limit_is_up_to_a_year(text, seconds):
    from hpcds1mpi.commands.recommend import _time_limit_s

    assert _time_limit_s(text) == seconds
    for bad in ("99999999", "366-00:00:00"):
        with pytest.raises(ConfigError, match="is over a year"):
            _time_limit_s(bad)


def test_emit_takes_the_users_time_limit_without_a_history(fake_cli, tmp_path):
    """s41 tester D6: a pick that timed out in its sweep has no known upper runtime, and its
    script's limit is then the user's: --time-limit with --emit needs no --history."""
    out = tmp_path / "job.sh"
    result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
                      "--time-limit", "90")
    assert result.exit_code == 0, result.output
    script = out.read_text()
    assert _sbatch_time(script) == "01:30:00" and "time limit given by --time-limit" in script


@pytest.mark.parametrize("args, message", [
    (["--user", "8"], "--user only applies to the walltime proposal; add --history"),
    (["--time-limit", "60", "--walltime-coverage", "0.9"],
     "--time-limit, --walltime-coverage only apply"),
])
def test_walltime_options_need_history(fake_cli, args, message):
    with pytest.raises(ConfigError, match=message):
        fake_cli("--workload", "gemm", "--size", "2048", *args)


@needs_joblogs
def test_bad_history_is_one_line_exit_2_and_writes_nothing(fake_cli, tmp_path, gaia):
    import pandas as pd

    from hpcds1mpi.errors import HpcdsError
    from tests.test_atomic import digests

    no_user = tmp_path / "no_user.parquet"
    pd.read_parquet(gaia["parquet"]).drop(columns="user").to_parquet(no_user)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    failures = tmp_path / "failures.json"
    failures.write_text('{"version": 1, "failures": []}')
    cases = [(tmp_path / "nope.swf", "no such file"), (no_user, "no job in it names its user"),
             (broken, "cannot read it as a job table"),
             (failures, "the failure history is --failure-history")]
    out = tmp_path / "job.sh"
    for path, message in cases:
        before = digests(tmp_path)
        with pytest.raises(HpcdsError, match=message) as err:
            fake_cli("--workload", "gemm", "--size", "2048", "--history", str(path),
                     "--user", "8", "--emit", "slurm", "-o", str(out))
        assert err.value.exit_code == 2 and digests(tmp_path) == before, path
    with pytest.raises(ConfigError, match="is not a time"):
        fake_cli("--workload", "gemm", "--size", "2048", "--history", str(gaia["log"]),
                 "--time-limit", "soon")
    proc = run_cli(["recommend", "--workload", "gemm", "--size", "2048", "--history",
                    str(no_user), "--user", "8", "--emit", "slurm", "-o", str(out)],
                   timeout=120, env={"HPCDS1MPI_CACHE": str(tmp_path / "c")})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "names its user" in proc.stderr
    assert not out.exists()


def test_a_placeholder_slip_in_program_is_said_and_the_script_still_written(fake_cli, tmp_path):
    out = tmp_path / "job.sh"
    result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
                      "--program", "./gemm --n {Size}")
    assert result.exit_code == 0, result.output
    assert "note: --program has {Size} (did you mean {size}?)" in result.stderr
    assert "./gemm --n '{Size}'" in out.read_text()


def test_o_replaces_its_own_script_but_not_a_file_of_the_users_without_force(fake_cli,
                                                                            tmp_path):
    """recommend -o overwrote whatever was there (advise --rewrite and train refuse that)."""
    from tests.badinput.harness import snapshot

    mine, ours = tmp_path / "my_job.sh", tmp_path / "job.sh"
    mine.write_text("#!/bin/bash\n#SBATCH -N 4\nsrun ./my_app  # hand-tuned\n")
    args = ("--workload", "gemm", "--size", "2048", "--emit", "slurm")
    before = snapshot(tmp_path)
    with pytest.raises(OutputError, match="my_job.sh exists and is not a batch script "
                                          "hpcds1mpi wrote; pass --force"):
        fake_cli(*args, "-o", str(mine))
    assert snapshot(tmp_path) == before
    assert fake_cli(*args, "-o", str(ours)).exit_code == 0
    assert fake_cli(*args, "-o", str(ours)).exit_code == 0  # a rerun replaces its own
    assert fake_cli(*args, "-o", str(mine), "--force").exit_code == 0
    assert "# Written by hpcds1mpi" in mine.read_text()
    with pytest.raises(ConfigError, match="--force only applies to -o"):
        fake_cli(*args, "--force")


# -- -o - prints the script alone on stdout (pipe it to sbatch); -o '' is refused -------------

@pytest.mark.parametrize("as_json", [[], ["--json"]], ids=["table", "json"])
def test_o_dash_prints_only_the_script_on_stdout_and_the_report_on_stderr(fake_cli, tmp_path,
                                                                          monkeypatch, as_json):
    monkeypatch.chdir(tmp_path)
    args = ("--workload", "gemm", "--size", "2048", "--emit", "slurm")
    plain = fake_cli(*args).stdout
    result = fake_cli(*args, "-o", "-", *as_json)
    assert result.exit_code == 0 and result.stdout == plain and plain.startswith("#!")
    assert "wrote" not in result.stdout + result.stderr and not (tmp_path / "-").exists()
    if as_json:
        assert json.loads(result.stderr)["workload"] == "gemm"
    else:
        assert "confidence" in result.stderr and "#SBATCH" not in result.stderr


def test_an_empty_o_is_refused_in_one_line(fake_cli, tmp_path):
    from tests.test_atomic import digests

    before = digests(tmp_path)
    result = fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", "")
    assert result.exit_code == 2 and digests(tmp_path) == before
    assert "--output is empty; give the file for the batch script, or - to print it" \
        in result.output


# -- calibration sweeps that could not measure anything are not written ------------------------

LAB = __import__("pathlib").Path(__file__).parents[1] / "data" / "jobscripts" / "lab.toml"


def test_a_job_no_node_count_can_hold_gets_no_calibration_script(tmp_path):
    """Was: 'wrote calibration sweep', four 1-node steps at a size that needs ~81 GB per node
    on 4 nodes of 25 GB: every step would run out of memory."""
    out = tmp_path / "cal.sh"
    args = ["recommend", "--workload", "stencil", "--size", "3000", "--cluster", str(LAB)]
    env = {"HPCDS1MPI_CACHE": str(tmp_path / "c")}
    proc = run_cli([*args, "--emit", "slurm", "-o", str(out)], timeout=120, env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(
        "hpcds1mpi: error: no calibration sweep: size 3000 does not fit in memory on "
        "lab/standard at any node count"), proc.stderr
    assert "lower --size" in proc.stderr and not out.exists()
    data = json.loads(run_cli([*args, "--json"], timeout=120, env=env).stdout)
    assert "calibration" not in data
    assert any(n.startswith("no calibration sweep: size 3000") for n in data["notes"])


def test_a_calibration_of_a_workload_that_is_no_kernel_needs_program(fake_cli, tmp_path):
    """Was: `sweep --kernel brand-new-code` at every step, and the job exited 0."""
    out = tmp_path / "calib.sh"
    with pytest.raises(ConfigError, match=r"^no calibration sweep for 'brand-new-code': it is "
                                          r"not a built-in kernel .*--program") as err:
        fake_cli("--workload", "brand-new-code", "--size", "500", "--emit", "slurm",
                 "-o", str(out))
    assert err.value.exit_code == 2 and not out.exists()


def test_a_128_character_job_name_gets_its_calibration_script_too(fake_cli, tmp_path):
    """Was: accepted for a job's script, refused ('134 characters') for its calibration."""
    out = tmp_path / "calib.sh"
    result = fake_cli("--workload", "brand-new-code", "--size", "500", "--emit", "slurm",
                      "-o", str(out), "--program", "./new {size}", "--job-name", "j" * 128)
    assert result.exit_code == 0, result.output
    assert f"#SBATCH --job-name={'j' * 122}-calib\n" in out.read_text()


@pytest.mark.parametrize("option", ["--job-name", "--job-output"])
def test_an_empty_job_name_or_output_is_refused_not_replaced(fake_cli, tmp_path, option):
    out = tmp_path / "job.sh"
    with pytest.raises(ConfigError, match=f"^{option} is empty; give a value, or drop"):
        fake_cli("--workload", "gemm", "--size", "2048", "--emit", "slurm", "-o", str(out),
                 option, "")
    assert not out.exists()


# -- -o replaces a script of ours only while nobody has edited it --------------------------------


def test_o_keeps_a_script_of_ours_that_the_user_edited(fake_cli, tmp_path):
    """Was: any file whose first 4 KB held '# Written by hpcds1mpi' was replaced, edits and
    all (generate, then add post-processing, then rerun: the post-processing was gone)."""
    from tests.test_atomic import digests

    args = ("--workload", "gemm", "--size", "2048", "--emit", "slurm")
    job, edited, fake = tmp_path / "j1.sh", tmp_path / "edited.sh", tmp_path / "fake.sh"
    assert fake_cli(*args, "-o", str(job)).exit_code == 0
    edited.write_text(job.read_text() + "echo MY IMPORTANT POSTPROCESSING\n")
    fake.write_text("#!/bin/bash\n# Written by hpcds1mpi 0.1.0.\nmy own work\n")
    for path, why in ((edited, "it has been changed since"), (fake, "it has no checksum line")):
        before = digests(tmp_path)
        with pytest.raises(OutputError, match=f"^{path} has the header of a batch script "
                                              f"hpcds1mpi wrote, but {why}.*; pass --force to "
                                              "replace it, or choose another -o$") as err:
            fake_cli(*args, "-o", str(path))
        assert err.value.exit_code == 2 and digests(tmp_path) == before
    assert fake_cli(*args, "-o", str(job)).exit_code == 0  # unedited: a rerun replaces it
    assert fake_cli(*args, "-o", str(edited), "--force").exit_code == 0
    assert "IMPORTANT" not in edited.read_text()
    assert fake_cli(*args, "-o", str(edited)).exit_code == 0  # ours again, unedited


# -- the walltime proposal describes the job as the history describes its jobs -----------------


def test_history_is_asked_about_the_partition_the_scheduler_records(fake_cli, tmp_path,
                                                                     monkeypatch):
    """Was: the cluster file's partition label, which a sacct history never names; the job
    looked new to the history and its proposal covered 17 of the user's 40 same-name jobs."""
    from hpcds1mpi.decide import walltime
    from tests.decide.test_walltime_same_name import _history

    table = tmp_path / "hist.parquet"
    _history().to_parquet(table)
    toml = tmp_path / "site.toml"
    toml.write_text(cluster_toml("gpu-big").replace(
        "[clusters.lab.partitions.gpu-big]",
        '[clusters.lab.partitions.gpu-big]\nslurm_partition = "debug"'))
    asked = {}
    real = walltime.propose_walltime
    monkeypatch.setattr(walltime, "propose_walltime",
                        lambda *a, **kw: asked.update(kw) or real(*a, **kw))
    result = fake_cli("--cluster", str(toml), "--workload", "gemm", "--size", "2048",
                      "--history", str(table), "--user", "alice", "--job-name", "stencil")
    assert result.exit_code == 0, result.output
    assert asked["partition"] == "debug" and asked["workload"] == "stencil"
    line = next(ln for ln in result.output.splitlines() if ln.startswith("walltime: --time"))
    within = int(line.split(" of your 40 finished jobs named 'stencil'")[0].rsplit(" ", 1)[1])
    assert within >= 38, line


def test_a_calibration_sweep_of_a_program_reads_it_as_told_and_says_what_it_cannot_tell(
        fake_cli, tmp_path):
    """The reading options reach every step; what neither the bundle nor the user says is one
    note, in the script and on stderr (issue s25 e1)."""
    import shlex

    out = tmp_path / "calib.sh"
    regex = r"^WALL\s+\d+\s+([0-9.]+)"
    result = CliRunner().invoke(
        command, ["--cluster", str(tmp_path / "cluster.toml"), "--model",
                  str(tmp_path / "fake_model"), "--workload", "brand-new-code", "--size", "500",
                  "--emit", "slurm", "-o", str(out), "--program", "./new --n {size}",
                  "--time-regex", regex, "--workdir", "runs/{size}-{ranks}"])
    assert result.exit_code == 0, result.output + result.stderr
    script = out.read_text()
    check_bash_syntax(script)
    launches = [ln for ln in script.splitlines() if "hpcds1mpi sweep" in ln]
    assert launches
    for launch in launches:
        tokens = shlex.split(launch.split("||")[0])
        assert tokens[tokens.index("--time-regex") + 1] == regex
        assert tokens[tokens.index("--workdir") + 1] == "runs/{size}-{ranks}"
    note = ("the steps measure without --fom-regex, --ranks-regex, --output-file, --setup, "
            "--fail-regex (the model never measured this program)")
    assert note in script and note in result.stderr


def _scf_levels(tmp_path, *fail_regex):
    """The levels a bundle keeps of a real sweep of a script whose size 2 does not converge
    (exit 0), swept with ``fail_regex`` (the options as given to sweep) or without."""
    from hpcds1mpi.records.telemetry_rows import telemetry_rows
    from hpcds1mpi.surrogates.levels import levels_from_frame

    app = tmp_path / "scf.sh"
    app.write_text('#!/bin/sh\necho "time: 0.01 s"\n[ "$1" = 2 ] && echo "SCF NOT converged"\n'
                   "exit 0\n")
    app.chmod(0o755)
    out = tmp_path / f"scf{len(fail_regex)}.h5"
    res = run_cli(["sweep", "--command", f"{app} {{size}}", "--label", "scf", "--sizes", "1,2",
                   "--ranks-per-node", "1", "--threads", "1", "--time-regex",
                   r"time: ([0-9.]+) s", *fail_regex, "--min-repeats", "1", "--max-repeats",
                   "1", "--min-time", "0", "--out", str(out), "--no-progress"],
                  timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    return levels_from_frame(telemetry_rows(str(out))), f"{app} {{size}}"


def _calibration_script(fake_cli, tmp_path, monkeypatch, levels, program, *args):
    """The escalated recommend script of ``scf`` (a bundle holding ``levels``) and its
    calibration sweep lines, split into words."""
    import shlex

    bundle = FakeBundle(sizes=WIDE_SIZES)
    bundle._measured_levels = levels  # as the bundle's measured_levels.json gives them
    monkeypatch.setattr(model_bundle, "load_model", lambda model_dir: bundle)
    out = tmp_path / "calib.sh"
    result = fake_cli("--workload", "scf", "--size", "3", "--emit", "slurm", "-o", str(out),
                      "--program", program, *args)
    assert result.exit_code == 0, result.output + result.stderr
    script = out.read_text()
    check_bash_syntax(script)
    launches = [shlex.split(ln.split("||")[0]) for ln in script.splitlines()
                if "hpcds1mpi sweep" in ln]
    assert launches, script
    return script, launches


def test_a_calibration_sweep_repeats_the_fail_regex_the_models_runs_were_swept_with(
        fake_cli, tmp_path, monkeypatch):
    """Was: --fail-regex was no reading option a bundle recorded, so the escalated job's
    calibration sweep counted a run that did not converge as ok, and learn mixed it in."""
    levels, program = _scf_levels(tmp_path, "--fail-regex", "NOT converged")
    script, launches = _calibration_script(fake_cli, tmp_path, monkeypatch, levels, program)
    for words in launches:
        assert words[words.index("--fail-regex") + 1] == "NOT converged"
        assert words[words.index("--time-regex") + 1] == r"time: ([0-9.]+) s"
    assert "--fail-regex 'NOT converged'" in script and "measure without" not in script
    # given another one: that one is used, and the difference is said
    script, launches = _calibration_script(fake_cli, tmp_path, monkeypatch, levels, program,
                                           "--fail-regex", "SCF NOT")
    assert all(w[w.index("--fail-regex") + 1] == "SCF NOT" for w in launches)
    assert "# note: --fail-regex differs from how the model's runs were measured" in script


def test_a_bundle_from_before_fail_regex_gives_a_calibration_sweep_none(fake_cli, tmp_path,
                                                                        monkeypatch):
    """Rows whose reading options predate --fail-regex (no key): none, not 'unknown'."""
    import dataclasses
    import json as json_mod

    levels, program = _scf_levels(tmp_path)
    old = {k: v for k, v in levels["scf"].measured_with.items() if k != "fail_regex"}
    levels["scf"] = type(levels["scf"]).from_dict(
        {**json_mod.loads(json_mod.dumps(dataclasses.asdict(levels["scf"]))),
         "measured_with": old})
    script, launches = _calibration_script(fake_cli, tmp_path, monkeypatch, levels, program)
    assert all("--fail-regex" not in words for words in launches)
    assert all(w[w.index("--time-regex") + 1] == r"time: ([0-9.]+) s" for w in launches)
    assert "measure without" not in script


@pytest.mark.parametrize("args,message", [
    (["--workdir", "x"], "add --emit slurm --program"),
    (["--emit", "slurm", "--time-regex", "t=(\\d+)"], "applies to --program only"),
    (["--emit", "slurm", "--fail-regex", "NOT converged"], "^--fail-regex applies to --program "
                                                           "only"),
    (["--fail-regex", "NOT converged"], "add --emit slurm --program"),
    (["--emit", "slurm", "--program", "./a", "--fail-regex", "x*"],
     "^--fail-regex 'x\\*' matches an empty line"),  # checked as sweep checks it
    (["--emit", "slurm", "--program", "./a", "--time-regex", "t=("], "--time-regex"),
])
def test_reading_options_without_a_program_sweep_are_one_line_errors(fake_cli, tmp_path, args,
                                                                     message):
    # nbody: a kernel the fake model never measured (escalated, its command known); a program
    # it never measured, given no --program, gets no calibration at all (s41 tester A5)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        fake_cli("--workload", "nbody", "--size", "500", *args)


def test_a_script_for_this_machine_names_no_partition_and_says_so(tmp_path, monkeypatch):
    """No --cluster, no allocation: the place is this machine, its name 'local' no partition
    sbatch knows (issue s25 e4): no --partition line, one note, in the script and on stderr."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    (tmp_path / "m").mkdir()
    out = tmp_path / "job.sh"
    result = CliRunner().invoke(
        command, ["--model", str(tmp_path / "m"), "--workload", "gemm", "--size", "2048",
                  "--emit", "slurm", "-o", str(out)])
    assert result.exit_code == 0, result.output + result.stderr
    script = out.read_text()
    assert "--partition" not in script.split("# Written by")[0]
    assert "# note: the script names no --partition" in script
    [line] = [ln for ln in result.stderr.splitlines() if "names no --partition" in ln]
    assert "'local' is no slurm partition" in line and "--cluster FILE" in line


def test_a_model_whose_recorded_command_lost_its_env_size_says_train_again(tmp_path):
    """s30 tester N6: a bundle trained before the recorded command kept its `env NAME={size}`
    prefix (s30 tester K1) records `python app.py` for runs of `env APP_N={size} python
    app.py`; recommend --emit wrote a script of it, which ran without its size and failed in
    the job. The script is now refused in one line that says to train again (its runs ran
    another line: the telemetry is right), the table says so in a note, and a model trained
    again writes the script of the line the runs ran."""
    import sys

    from surrogates.bundle_files import LEVELS_FILE, MANIFEST, file_hashes

    app = tmp_path / "app.py"
    app.write_text("import os\nprint('time:', int(os.environ['APP_N']) * 1e-4, 's')\n")
    plain = f"{sys.executable} {app}"
    sweep = run_cli(["sweep", "--command", f"env APP_N={{size}} {plain}", "--label", "app",
                     "--sizes", "10,20", "--ranks-per-node", "1,2", "--threads", "1",
                     "--time-regex", r"time: (\S+) s", "--min-repeats", "1", "--max-repeats",
                     "1", "--min-time", "0", "--no-progress", "--out", "t.h5"],
                    cwd=tmp_path, timeout=300)
    assert sweep.returncode == 0, sweep.stderr
    train = ["train", "--telemetry", "t.h5", "--no-embedding", "--members", "2",
             "--member-trees", "20", "--out"]
    assert run_cli([*train, "old"], cwd=tmp_path, timeout=300).returncode == 0
    # the bundle as the older reader wrote it: the prefix, and with it {size}, dropped
    levels_file = tmp_path / "old" / LEVELS_FILE
    levels = json.loads(levels_file.read_text())
    assert levels["app"]["command"] == f"env APP_N={{size}} {plain}"
    levels["app"]["command"] = plain
    levels_file.write_text(json.dumps(levels))
    manifest = json.loads((tmp_path / "old" / MANIFEST).read_text())
    manifest["files"] = file_hashes(tmp_path / "old")
    (tmp_path / "old" / MANIFEST).write_text(json.dumps(manifest))

    ask = ["recommend", "--workload", "app", "--size", "15", "--model"]
    res = run_cli([*ask, "old", "--emit", "slurm", "-o", "job.sbatch"], cwd=tmp_path)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert lines[0].startswith(f"hpcds1mpi: error: no job script: the model records app's "
                               f"command as {plain!r}, but its runs ran "
                               f"'env APP_N={{size}} {plain}'"), lines
    assert lines[0].endswith("train again from the telemetry (hpcds1mpi train --telemetry "
                             "FILE --out DIR), or give the command with --program"), lines
    assert not (tmp_path / "job.sbatch").exists()
    table = run_cli([*ask, "old"], cwd=tmp_path)
    assert table.returncode == 0 and "train again from the telemetry" in table.stdout
    given = run_cli([*ask, "old", "--emit", "slurm", "--program", f"env APP_N={{size}} {plain}"],
                    cwd=tmp_path)
    assert given.returncode == 0 and f"env APP_N=15 {plain}" in given.stdout, given.stderr
    assert run_cli([*train, "new"], cwd=tmp_path, timeout=300).returncode == 0
    again = run_cli([*ask, "new", "--emit", "slurm"], cwd=tmp_path)
    assert again.returncode == 0 and f"env APP_N=15 {plain}" in again.stdout, again.stderr
    assert "train again" not in again.stdout + again.stderr


def test_the_shipped_bundle_on_another_cpu_is_not_auto(tmp_path):
    """s31 tester Q4: the shipped bundle (measured on an AMD EPYC) answered `auto` on an Intel
    Xeon; its manifest now records the CPU of the telemetry it was trained on, so a partition
    naming another CPU is asked to confirm, and one naming that CPU is not (CPU-independent:
    the cluster file names the CPU, this machine's is not read)."""
    from pathlib import Path

    lab = Path(__file__).parents[1] / "data" / "jobscripts" / "lab.toml"

    def verdict(cpu):
        cluster = tmp_path / "lab.toml"
        cluster.write_text(lab.read_text() + (f'cpu_model = "{cpu}"\n' if cpu else ""))
        got = run_cli(["recommend", "--workload", "stencil", "--size", "200", "--max-nodes",
                       "1", "--cluster", str(cluster), "--json"], timeout=120, cwd=tmp_path)
        assert got.returncode == 0, got.stderr
        return json.loads(got.stdout)["verdict"]

    other = verdict("Zilog Z80")
    assert other["verdict"] != "auto" and other["checks"]["cpu"] == "confirm", other
    assert any("CPU Zilog Z80 but the model was measured on CPU AMD EPYC" in r
               for r in other["reasons"]), other["reasons"]
    # its record, "AMD EPYC" without the CPU's signature, does not say which generation it
    # ran on: no CPU is taken for it (s38 tester K2); a partition naming no CPU is not compared
    same = verdict("AMD EPYC")
    assert same["checks"]["cpu"] == "confirm" and any(
        "does not say which CPU generation" in r for r in same["reasons"]), same
    unnamed = verdict(None)
    assert "cpu" not in unnamed["checks"] and unnamed["verdict"] == "auto", unnamed


def test_the_shipped_bundles_runs_of_an_untold_cpu_generation_are_not_measured_here(tmp_path):
    """s38 tester K2: on a VM whose CPU is only "AMD EPYC", like the shipped bundle's, its
    gemm 1536 bf16 read "22.1 ms measured (1 run at this size)" while the VM ran it in 9 ms:
    another generation behind one name. The bundle does not record its CPU's signature, so
    its runs are predictions here, and one line says why and what to do."""
    from pathlib import Path

    lab = Path(__file__).parents[1] / "data" / "jobscripts" / "lab.toml"
    cluster = tmp_path / "lab.toml"
    cluster.write_text(lab.read_text() + 'cpu_model = "AMD EPYC"\n')
    got = run_cli(["recommend", "--workload", "gemm", "--size", "1536", "--max-nodes", "1",
                   "--cluster", str(cluster)], timeout=120, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert "at this size)" not in got.stdout, got.stdout  # "measured (1 run at this size)"
    assert "the model's partition local was recorded on CPU 'AMD EPYC', a name that does not " \
        "say which CPU generation" in got.stdout
    assert "measure here and train a model on those runs (`hpcds1mpi quickstart`" in got.stdout
    # s38 tester F6: a bundle of runs measured here needs a resume and a retrain, not measuring
    assert "if its runs were measured on this machine, resume their sweep here" in got.stdout


def test_on_this_machine_the_shipped_bundle_is_measured_only_on_its_cpu_generation(tmp_path):
    """The same on this machine (its /proc/cpuinfo read), where it has the bundle's hardware
    and names its CPU: a generic name leaves the bundle's generation untold; another name is
    another CPU. Neither calls the bundle's runs measured here."""
    from hpcds1mpi.cluster import detect_local
    from hpcds1mpi.decide.model_bundle import SHIPPED_MODEL
    from hpcds1mpi.decide.trained_hardware import matching_partition
    from hpcds1mpi.surrogates.bundle import load_bundle

    here = detect_local().partitions["local"]
    if not here.cpu_model or matching_partition(load_bundle(SHIPPED_MODEL), here) is None:
        pytest.skip("this machine has other hardware than the shipped bundle's")
    got = run_cli(["recommend", "--workload", "gemm", "--size", "1536"], timeout=120,
                  cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert "at this size)" not in got.stdout and "verdict confirm" in got.stdout, got.stdout


def test_a_calibration_of_a_program_without_precision_lists_what_its_script_runs(fake_cli,
                                                                                    tmp_path):
    """s33 tester D10: 4 steps listed, fp32 and bf16 among them, while the script ran the
    command's fp64 alone (2 steps), never saying why. The steps are chosen at fp64, and the
    listing, --json and the script say so."""
    out = tmp_path / "cal.sbatch"
    result = fake_cli("--workload", "brand-new-code", "--size", "500", "--emit", "slurm",
                      "-o", str(out), "--program", "./app {size} plain")
    assert result.exit_code == 0, result.output
    listed = [line.split()[0] for line in result.stdout.splitlines()
              if line.startswith("  N") and ("-cpu-" in line or "-gpu-" in line)]
    script = out.read_text()
    assert listed and all(step.endswith("-fp64") for step in listed), result.stdout
    assert script.count("hpcds1mpi sweep --command") == len(listed)
    said = "the calibration steps run at fp64 alone: the command takes no {precision}"
    assert said in result.stdout and f"# note: {said}" in script
    data = json.loads(fake_cli("--workload", "brand-new-code", "--size", "500", "--json",
                               "--emit", "slurm", "-o", str(tmp_path / "c2.sbatch"),
                               "--program", "./app {size} plain").stdout)
    assert any(said in note for note in data["notes"])
    assert {step["config"]["precision"] for step in data["calibration"]} == {"fp64"}
    # a command that takes {precision} is calibrated at every precision, with no such note
    both = fake_cli("--workload", "brand-new-code", "--size", "500", "--emit", "slurm",
                    "-o", str(tmp_path / "c3.sbatch"), "--program", "./app {size} {precision}")
    assert said not in both.stdout and "-fp32" in both.stdout


def test_emit_o_never_writes_over_an_input_force_or_not(tmp_path):
    """``-o mcopy/members.pkl --model mcopy`` broke the bundle and ``-o site.toml --cluster
    site.toml`` replaced the cluster file, with --force (s33 tester C2); the shipped bundle."""
    import hashlib
    import shutil

    model = tmp_path / "mcopy"
    shutil.copytree(model_bundle.DEFAULT_MODEL, model)
    site = tmp_path / "site.toml"
    site.write_text(cluster_toml("cpu"))
    (tmp_path / "link.sh").symlink_to("site.toml")
    bundle = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in model.iterdir()}
    base = ["recommend", "--workload", "stencil", "--size", "200", "--model", str(model),
            "--emit", "slurm", "--force", "-o"]
    for out, said in ((model / "members.pkl", "inside the --model bundle"),
                      (model / "job.sh", "inside the --model bundle"),
                      (site, f"is the --cluster file {site}"),
                      (tmp_path / "link.sh", f"is the --cluster file {site}")):
        proc = run_cli([*base, str(out), "--cluster", str(site)], timeout=120, cwd=tmp_path,
                       env={"HPCDS1MPI_CACHE": str(tmp_path / "cache")})
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert said in proc.stderr and "-o" in proc.stderr
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in model.iterdir()} \
        == bundle
    assert site.read_text() == cluster_toml("cpu") and (tmp_path / "link.sh").is_symlink()


def test_a_bundle_in_a_folder_named_with_bytes_that_are_not_utf8_answers(fake_cli, tmp_path):
    """Its guard calibration's cache key had failed to encode the name: "error: <path>|README.txt:
    1796...:753|...: a name with bytes that are not UTF-8" (s39 tester D12)."""
    import os

    model_dir = tmp_path / os.fsdecode(b"bad\xffdir") / "model"
    model_dir.mkdir(parents=True)
    result = fake_cli("--model", str(model_dir), "--workload", "gemm", "--size", "2048")
    assert result.exit_code == 0, result.output
    assert "gemm" in result.output


def test_a_job_not_escalated_reads_no_calibration_levels(fake_cli, tmp_path, monkeypatch):
    """A picked layout's script runs the program itself: the calibration sweep's reading
    options (from the bundle's levels) are not made, and given ones are said unused (as the
    service does)."""
    from hpcds1mpi.decide import calibration_sweep

    monkeypatch.setattr(calibration_sweep, "calibration_measurement",
                        lambda *a: pytest.fail("the calibration reading options were made"))
    out = tmp_path / "job.sh"
    result = fake_cli("--workload", "gemm", "--size", "13000", "--device", "gpu",
                      "--emit", "slurm", "-o", str(out), "--program", "./gemm --n {size}",
                      "--time-regex", "t=([0-9.]+)")
    assert result.exit_code == 0, result.output
    assert "apply to a calibration sweep only; this job was not escalated" in result.stderr
    assert "t=([0-9.]+)" not in out.read_text()


def test_the_wrote_line_shows_a_file_name_with_a_newline_or_escape_escaped(fake_cli, tmp_path):
    """s39 tester D11: `recommend -o FILE` printed a name with a newline or a terminal escape
    raw (the line broken, the terminal recoloured); other commands' "wrote" lines escape it."""
    out = tmp_path / "job\nx\x1b[31m.sh"
    result = fake_cli("--workload", "gemm", "--size", "13000", "--device", "gpu",
                      "--emit", "slurm", "-o", str(out), "--program", "./gemm --n {size}")
    assert result.exit_code == 0, result.output
    assert out.exists()  # the file itself has the name given
    [line] = [ln for ln in result.output.splitlines() if ln.startswith("wrote ")]
    assert line == f"wrote slurm script to {tmp_path}/job\\nx\\x1b[31m.sh"
    assert "\x1b" not in result.output
