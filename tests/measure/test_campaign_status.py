"""``campaign status`` from real shards (swept here with mpiexec) and ``campaign resubmit``'s
choice of what goes again: only missing, failed and interrupted parts, never a done, queued or
running one. sbatch and squeue are stand-ins here that record what they were asked (the real
scheduler runs in tests/slurm/test_campaign.py)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from hpcds1mpi.measure import campaign as cm
from hpcds1mpi.measure.campaign_scripts import emit
from hpcds1mpi.measure.campaign_status import campaign_status, summary_lines
from hpcds1mpi.measure.campaign_submit import ranges, resubmit
from tests.helpers import hpcds1mpi_exe, run_mpi

PLAN = textwrap.dedent("""\
    [sweep]
    min_time = 0.0
    max_repeats = 1
    warmup = 0

    [[kernel]]
    name = "gemm"
    sizes = [16, 24, 32, 40]
    nodes = [1, 2]
    ranks_per_node = [1]
    threads = [1]
    precisions = ["fp64"]
""")
CLUSTER = textwrap.dedent("""\
    [clusters.lab.partitions.debug]
    cores_per_node = 2
    memory_gb = 4
    max_nodes = 2
""")


def _emit(root: Path, shards: int) -> Path:
    (root / "cluster.toml").write_text(CLUSTER)
    emit(str(root / "plan.toml"), "slurm", str(root / "camp"), shards=shards,
         cluster_file=str(root / "cluster.toml"), partition_name="debug")
    return root / "camp"


def _sweep(folder: Path, plan: str, out: str) -> None:
    proc = run_mpi(1, [hpcds1mpi_exe(), "sweep", "--plan", plan, "--out", out,
                       "--no-progress"], cwd=folder, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    """A campaign of 8 configurations in 4 parts of 2: n1-0 swept whole, n1-1 one run of two with
    no exit note (interrupted), n2-0 one run of two with exit 1 (failed), n2-1 untouched."""
    root = tmp_path_factory.mktemp("campaign")
    (root / "plan.toml").write_text(PLAN)
    folder = _emit(root, 2)
    manifest = cm.read_manifest(folder)
    assert [p["name"] for p in manifest["parts"]] == ["n1-0", "n1-1", "n2-0", "n2-1"]
    _sweep(folder, "plans/n1-0.toml", "telemetry/n1-0.h5")
    for name in ("n1-1", "n2-0"):  # one configuration of the part's plan only
        doc = json.loads(json.dumps(__import__("tomllib").loads(
            (folder / "plans" / f"{name}.toml").read_text())))
        doc["kernel"][0]["sizes"] = doc["kernel"][0]["sizes"][:1]
        doc["kernel"][0]["nodes"] = [1]  # swept on this one machine
        (root / f"{name}-part.toml").write_text(cm.toml_text(doc))
        _sweep(folder, str(root / f"{name}-part.toml"), f"telemetry/{name}.h5")
    (folder / "parts" / "n2-0.exit").write_text("1\n")
    return folder


def _states(folder: Path, env=None) -> dict[str, str]:
    return {p.name: p.state for p in campaign_status(folder, env)[1]}


def test_status_tells_done_interrupted_failed_and_missing_apart(campaign):
    # n2-0's one run is a 1-node run (this is one machine), not one of its own: 0 of 2.
    states = _states(campaign, env={"PATH": "/nonexistent"})
    assert states["n1-0"] == "done"
    assert states["n1-1"] == "interrupted"
    assert states["n2-1"] == "missing"
    assert states["n2-0"] == "failed"
    env, _ = _scheduler(campaign.parent / "quiet")  # squeue answers: nothing held
    manifest, parts = campaign_status(campaign, env)
    lines = summary_lines(campaign, manifest, parts)
    assert "parts: done 1, failed 1, interrupted 1, missing 1" in lines
    assert any("n2-0" in line and "exited 1" in line for line in lines)
    # never submitted: "to submit", not "again" (s39 tester H5)
    assert lines[-1].startswith("3 part(s) to submit: hpcds1mpi campaign resubmit")


def _scheduler(tmp_path: Path, squeue: str = "", named: str = "",
               squeue_exit: int = 0) -> tuple[dict, Path]:
    """PATH with an sbatch that logs its argv and answers job 100, 101, ... and a squeue that
    prints ``named`` when asked by job name (``--name=``), else ``squeue``, and exits
    ``squeue_exit``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    log = tmp_path / "sbatch.log"
    (bin_dir / "sbatch").write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "$*" >> {log}
        echo x >> {log}.count
        n=$(wc -l < {log}.count)
        echo $((99 + n))
    """))
    (bin_dir / "squeue").write_text(
        f"#!/bin/sh\ncase \"$*\" in *--name=*) printf '{named}';; *) printf '{squeue}';; "
        f"esac\nexit {squeue_exit}\n")
    for name in ("sbatch", "squeue"):
        (bin_dir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["PATH"] = f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin"
    return env, log


def _copy(folder: Path, tmp_path: Path) -> Path:
    """A copy of campaign ``folder`` with its scripts pointed at the copy, as whoever copies a
    campaign must (resubmit refuses scripts that run in another folder: s34 tester O2)."""
    import shutil

    target = tmp_path / "camp"
    shutil.copytree(folder, target)
    for script in (*target.glob("*.sbatch"), target / "submit.sh"):
        script.write_text(script.read_text().replace(str(folder), str(target)))
    return target


def test_resubmit_submits_only_the_parts_not_done_then_the_merge_after_them(campaign, tmp_path):
    folder = _copy(campaign, tmp_path)
    env, log = _scheduler(tmp_path)
    result = resubmit(folder, env=env)
    calls = log.read_text().splitlines()
    assert calls == ["--parsable --array=1 n1.sbatch", "--parsable --array=0,1 n2.sbatch",
                     "--parsable --dependency=afterany:100:101 merge.sbatch"]
    assert result["parts"] == {1: [1], 2: [0, 1]} and result["merge"] == "102"
    subs = cm.read_manifest(folder)["submissions"]
    assert [(s.get("nodes"), s.get("indices"), s["job_id"]) for s in subs] == \
        [(1, [1], "100"), (2, [0, 1], "101"), (None, None, "102")]


def test_parts_the_scheduler_still_holds_are_not_submitted_again(campaign, tmp_path):
    folder = _copy(campaign, tmp_path)
    env, log = _scheduler(tmp_path)
    resubmit(folder, env=env)  # jobs 100 (n1: 1), 101 (n2: 0, 1), merge 102
    env, _ = _scheduler(tmp_path, squeue="100_1 RUNNING\\n101_0 PENDING\\n102 PENDING\\n")
    states = _states(folder, env)
    assert (states["n1-1"], states["n2-0"], states["n2-1"]) == ("running", "queued", "missing")
    log.write_text("")
    result = resubmit(folder, env=env)
    calls = log.read_text().splitlines()
    # n2-1 is still missing (its task left the queue without a trace): only it goes again,
    # and the new merge waits for it, for the two tasks still held and for the first merge
    # (never two merges writing merged.h5 at once).
    assert calls == ["--parsable --array=1 n2.sbatch",
                     "--parsable --dependency=afterany:100:101:102:103 merge.sbatch"]
    assert result["waiting_for"] == ["100", "101", "102"]


def test_resubmit_of_a_finished_campaign_submits_nothing(tmp_path):
    root = tmp_path
    (root / "plan.toml").write_text(PLAN.replace("nodes = [1, 2]", "nodes = [1]"))
    folder = _emit(root, 1)
    _sweep(folder, "plans/n1-0.toml", "telemetry/n1-0.h5")
    env, log = _scheduler(tmp_path)
    result = resubmit(folder, env=env)  # done but never merged: the merge alone
    assert log.read_text().splitlines() == ["--parsable merge.sbatch"]
    assert result["jobs"] == {}
    from hpcds1mpi.records import telemetry

    telemetry.merge([folder / "telemetry" / "n1-0.h5"], folder / "merged.h5")
    log.write_text("")
    result = resubmit(folder, env=env)
    assert log.read_text() == "" and result["merge"] == ""


def test_ranges_of_indices():
    assert ranges([3, 0, 1, 5, 6]) == [(0, 1), (3, 3), (5, 6)]
    assert ranges([]) == []


def test_a_shard_lost_after_the_merge_is_done_not_measured_again(tmp_path):
    """With telemetry/n1-0.h5 removed after the merge, status said missing and resubmit
    measured it again although merged.h5 held every run: the merged file counts too."""
    root = tmp_path
    (root / "plan.toml").write_text(PLAN.replace("nodes = [1, 2]", "nodes = [1]"))
    folder = _emit(root, 1)
    _sweep(folder, "plans/n1-0.toml", "telemetry/n1-0.h5")
    from hpcds1mpi.records import telemetry

    telemetry.merge([folder / "telemetry" / "n1-0.h5"], folder / "merged.h5")
    (folder / "telemetry" / "n1-0.h5").unlink()
    assert _states(folder, env={"PATH": "/nonexistent"}) == {"n1-0": "done"}
    manifest, parts = campaign_status(folder, env={"PATH": "/nonexistent"})
    lines = summary_lines(folder, manifest, parts)
    assert "4 only in the merged file" in lines[1] and "4/4 configurations" in lines[1]
    assert not any("to submit again" in line for line in lines)
    env, log = _scheduler(tmp_path)
    log.write_text("")
    result = resubmit(folder, env=env)
    assert log.read_text() == "" and result["jobs"] == {} and result["merge"] == ""


def test_a_job_name_at_the_length_limit_names_every_job_of_the_campaign(tmp_path):
    """The stem is checked as given; ``-n1`` / ``-merge`` then fit by shortening it (a name
    valid for one job is valid for a campaign)."""
    from hpcds1mpi.launch.directives import MAX_JOB_NAME

    (tmp_path / "plan.toml").write_text(PLAN)
    (tmp_path / "cluster.toml").write_text(CLUSTER)
    name = "j" * MAX_JOB_NAME
    emit(str(tmp_path / "plan.toml"), "slurm", str(tmp_path / "camp"),
         cluster_file=str(tmp_path / "cluster.toml"), partition_name="debug", job_name=name)
    names = [line.split("=", 1)[1] for script in ("n1.sbatch", "n2.sbatch", "merge.sbatch")
             for line in (tmp_path / "camp" / script).read_text().splitlines()
             if line.startswith("#SBATCH --job-name=")]
    assert len(names) == 3 and all(len(n) == MAX_JOB_NAME for n in names), names
    assert names[2].endswith("-merge") and names[0].endswith("-n1")


def test_submit_sh_records_its_jobs_as_resubmit_does_so_status_sees_them(tmp_path):
    """After ``bash camp/submit.sh`` status said every queued or running part was missing and
    advised resubmit, which submitted them again (s25 tester f 2): submit.sh records nothing."""
    import subprocess

    (tmp_path / "plan.toml").write_text(PLAN)
    folder = _emit(tmp_path, 2)  # submit.sh names its own folder: not a copy of another's
    env, log = _scheduler(tmp_path)
    proc = subprocess.run(["bash", str(folder / "submit.sh")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().splitlines() == [  # it is resubmit (s39 tester H2)
        "--parsable --array=0,1 n1.sbatch", "--parsable --array=0,1 n2.sbatch",
        "--parsable --dependency=afterany:100:101 merge.sbatch"]
    subs = cm.read_manifest(folder)["submissions"]
    assert [(s.get("nodes"), s.get("indices"), s["job_id"], s.get("job_ids"), s.get("after"))
            for s in subs] == [(1, [0, 1], "100", ["100"], None),
                               (2, [0, 1], "101", ["101"], None),
                               (None, None, "102", None, ["100", "101"])]
    assert all(isinstance(s["submitted_at"], float) for s in subs)
    env, _ = _scheduler(tmp_path, squeue="100_0 RUNNING\\n100_1 RUNNING\\n101_0 PENDING\\n"
                                         "101_1 PENDING\\n102 PENDING\\n")
    assert _states(folder, env) == {"n1-0": "running", "n1-1": "running", "n2-0": "queued",
                                    "n2-1": "queued"}
    log.write_text("")
    result = resubmit(folder, env=env)
    assert result["jobs"] == {} and log.read_text() == ""


def test_parts_submitted_without_a_record_are_found_by_job_name_and_script(campaign, tmp_path):
    """A part submitted by hand (``sbatch n2.sbatch``, or an older submit.sh) is looked up by
    its job name; a job of the same name from another campaign's folder is not this one's."""
    folder = _copy(campaign, tmp_path)
    named = (f"300_1|RUNNING|{folder}|n1.sbatch\\n301_0|PENDING|{folder.parent}|camp/n2.sbatch"
             "\\n400_1|PENDING|/elsewhere/camp|n2.sbatch\\n")
    env, log = _scheduler(tmp_path, named=named)
    states = _states(folder, env)
    assert (states["n1-1"], states["n2-0"], states["n2-1"]) == ("running", "queued", "missing")
    result = resubmit(folder, env=env)
    assert log.read_text().splitlines() == [
        "--parsable --array=1 n2.sbatch", "--parsable --dependency=afterany:300:301:100 "
        "merge.sbatch"]
    assert result["parts"] == {2: [1]}


def test_a_scheduler_that_cannot_be_asked_never_gets_parts_submitted_again(campaign, tmp_path):
    """squeue failing: a part not done may be queued or running. Status says so in one line
    instead of advising resubmit, and resubmit submits nothing."""
    from hpcds1mpi.errors import SchedulerError

    folder = _copy(campaign, tmp_path)
    env, log = _scheduler(tmp_path, squeue_exit=1)
    manifest, parts = campaign_status(folder, env)
    lines = summary_lines(folder, manifest, parts)
    assert not any("to submit again" in line for line in lines)
    assert lines[-1].startswith("3 part(s) not done, but squeue did not answer: they may "
                                "still be queued or running")
    with pytest.raises(SchedulerError, match="squeue did not answer: cannot tell"):
        resubmit(folder, env=env)
    assert not log.exists() or log.read_text() == ""
    assert cm.read_manifest(folder)["submissions"] == []


def test_a_job_that_failed_before_its_sweep_started_is_failed_not_missing(campaign, tmp_path):
    """A job whose --output folder Slurm could not open ended FAILED 0:53 at once; status
    called its part missing and advised resubmitting, which failed the same way every time
    (s27 tester P, 3). sacct tells it from a part never run."""
    folder = _copy(campaign, tmp_path)
    env, _ = _scheduler(tmp_path)
    assert _states(folder, env)["n2-1"] == "missing"  # never submitted
    resubmit(folder, env=env)  # n1 [1] as job 100, n2 [0, 1] as job 101, the merge 102
    sacct = Path(env["PATH"].split(":")[0]) / "sacct"
    sacct.write_text("#!/bin/sh\nprintf '100_1|COMPLETED|0:0\\n101_0|FAILED|1:0\\n"
                     "101_1|FAILED|0:53\\n'\n")
    sacct.chmod(0o755)
    manifest, parts = campaign_status(folder, env)
    states = {p.name: p.state for p in parts}
    # n1-1 wrote runs (interrupted) and n2-0 its exit code: their files say more than sacct
    assert states == {"n1-0": "done", "n1-1": "interrupted", "n2-0": "failed",
                      "n2-1": "failed"}
    lines = summary_lines(folder, manifest, parts)
    assert any(line.strip().startswith("n2-1") and line.endswith(
        "; job 101_1 ended FAILED 0:53 before its sweep started") for line in lines), lines
    assert lines[-2].startswith("1 part(s) failed before their sweep started") and \
        "sacct -j 101_1 -o JobID,State,ExitCode,Reason" in lines[-2]
    assert lines[-1].startswith("3 part(s) to submit again")
    sacct.write_text("#!/bin/sh\nexit 1\n")  # sacct without accounting: as before
    assert _states(folder, env)["n2-1"] == "missing"


def test_a_part_pending_for_a_reason_that_never_clears_says_so_and_what_to_do(campaign, tmp_path):
    """Was (s33 tester A4): parts Slurm held with MaxMemPerLimit / ReqNodeNotAvail were shown
    ``queued`` like any other; status gives squeue's reason and, for one that never clears,
    to cancel, fix the script and resubmit. squeue's lines as it prints ``-o %i|%T|%r``."""
    folder = _copy(campaign, tmp_path)
    env, _ = _scheduler(tmp_path)
    resubmit(folder, env=env)  # jobs 100 (n1: 1), 101 (n2: 0, 1), merge 102
    env, _ = _scheduler(tmp_path, squeue="100_1|PENDING|Priority\\n101_0|PENDING|MaxMemPerLimit"
                        "\\n101_1|PENDING|ReqNodeNotAvail, UnavailableNodes:m2\\n")
    manifest, parts = campaign_status(folder, env)
    lines = summary_lines(folder, manifest, parts)
    line = {p.name: p.line() for p in parts}
    assert line["n1-1"].endswith("job 100_1, pending: Priority"), line["n1-1"]
    assert line["n2-0"].endswith("pending: MaxMemPerLimit (never starts as submitted)")
    assert "pending: ReqNodeNotAvail, UnavailableNodes:m2 (never starts" in line["n2-1"]
    stuck = [ln for ln in lines if "never start as submitted" in ln]
    assert len(stuck) == 1 and stuck[0].startswith("2 part(s) of n2.sbatch never start"), lines
    assert "MaxMemPerLimit: --mem is over" in stuck[0] and "ReqNodeNotAvail: a node" in stuck[0]
    assert stuck[0].endswith(f"scancel 101_0 101_1, fix n2.sbatch, then hpcds1mpi campaign "
                             f"resubmit {folder}")


def test_a_failed_part_names_its_jobs_log(campaign, tmp_path):
    """F2's follow-up of s33 tester P2: "(see logs/)" named a folder of every part's logs; it
    names the file the part's job wrote, as its script's output directive makes it."""
    from tests.measure.test_campaign_scripts import _pbs_campaign

    folder = _copy(campaign, tmp_path)
    env, _ = _scheduler(tmp_path)
    line = {p.name: p.line() for p in campaign_status(folder, env)[1]}
    assert line["n2-0"].endswith("its sweep exited 1 (see logs/n2-*_0.out)"), line["n2-0"]
    resubmit(folder, env=env)  # jobs 100 (n1: 1), 101 (n2: 0, 1), merge 102
    line = {p.name: p.line() for p in campaign_status(folder, env)[1]}
    assert line["n2-0"].endswith("(see logs/n2-101_0.out)"), line["n2-0"]
    pbs = _pbs_campaign(tmp_path / "pbs", shards=2)
    (pbs / "parts" / "n1-1.exit").write_text("2\n")
    line = {p.name: p.line() for p in campaign_status(pbs, env)[1]}
    assert line["n1-1"].endswith("its sweep exited 2 (see logs/n1-1.out)"), line["n1-1"]


def test_a_moved_campaign_says_where_its_scripts_run_instead_of_advising_resubmit(campaign,
                                                                                  tmp_path):
    """s34 tester O2: the moved campaign's jobs failed at start (no logs/ where they cd), and
    status advised resubmit again, which failed the same way; it says the folder moved."""
    import shutil

    folder = tmp_path / "moved"
    shutil.copytree(campaign, folder)
    env, _ = _scheduler(tmp_path)
    manifest, parts = campaign_status(folder, env)
    lines = summary_lines(folder, manifest, parts)
    assert lines[-1].startswith(f"{folder} was moved or copied: its scripts were written for "
                                f"{campaign} "), lines
    assert not any("resubmit" in line for line in lines), lines


def test_a_job_cancelled_or_timed_out_before_its_sweep_recorded_anything_is_said_so(
        campaign, tmp_path):
    """s34 tester O3: a part hung in MPI wire-up and scancel'ed after 202 s was said to have
    "failed ... before its sweep started". sacct's state and ElapsedRaw say how it ended."""
    folder = _copy(campaign, tmp_path)
    env, _ = _scheduler(tmp_path)
    (folder / "telemetry" / "n1-1.h5").unlink()  # n1-1 recorded nothing either
    resubmit(folder, env=env)  # n1 [1] as job 100, n2 [0, 1] as job 101, the merge 102
    (folder / "parts" / "n2-0.exit").unlink()
    (folder / "telemetry" / "n2-0.h5").unlink()
    sacct = Path(env["PATH"].split(":")[0]) / "sacct"
    sacct.write_text("#!/bin/sh\nprintf '100_1|CANCELLED by 0|0:0|202\\n101_0|CANCELLED by 0|"
                     "0:0|0\\n101_1|TIMEOUT|0:0|300\\n'\n")
    sacct.chmod(0o755)
    manifest, parts = campaign_status(folder, env)
    assert {p.name: p.state for p in parts} == {
        "n1-0": "done", "n1-1": "interrupted", "n2-0": "interrupted", "n2-1": "interrupted"}
    line = {p.name: p.line() for p in parts}
    assert line["n1-1"].endswith("; job 100_1 was cancelled after 202 s, while its sweep ran; "
                                 "nothing recorded (see logs/n1-100_1.out)"), line["n1-1"]
    assert line["n2-0"].endswith("; job 101_0 was cancelled before it started; nothing "
                                 "recorded"), line["n2-0"]
    assert line["n2-1"].endswith("; job 101_1 reached its time limit (TIMEOUT) after 300 s, "
                                 "while its "
                                 "sweep ran; nothing recorded: a configuration outlasted the "
                                 "limit or hung (see logs/n2-101_1.out)"), line["n2-1"]
    lines = summary_lines(folder, manifest, parts)
    assert not any("before their sweep started" in ln for ln in lines), lines
    assert lines[-2].startswith("1 part(s) of n2.sbatch reached their time limit (now ")
    assert lines[-1].startswith("3 part(s) to submit again")
    sacct.write_text("#!/bin/sh\nprintf '100_1|FAILED|1:0|12\\n'\n")  # failed after it ran
    line = {p.name: p.line() for p in campaign_status(folder, env)[1]}
    assert line["n1-1"].endswith("; job 100_1 ended FAILED 1:0 after 12 s, while its sweep "
                                 "ran; nothing recorded (see logs/n1-100_1.out)"), line["n1-1"]


def test_a_part_cancelled_after_its_sweep_made_its_file_says_how_long_and_its_log(
        campaign, tmp_path):
    """s37 tester K6: a part scancel'ed 3 s in, its shard made but nothing of its plan recorded,
    was said only "interrupted 0/2 configurations": no time run, no log."""
    import shutil

    folder = _copy(campaign, tmp_path)
    env, _ = _scheduler(tmp_path)
    resubmit(folder, env=env)  # n1 [1] as job 100, n2 [0, 1] as job 101, the merge 102
    # n1-1's shard exists but holds no run of its own plan (its sweep made it, then was killed)
    shutil.copyfile(folder / "telemetry" / "n1-0.h5", folder / "telemetry" / "n1-1.h5")
    sacct = Path(env["PATH"].split(":")[0]) / "sacct"
    sacct.write_text("#!/bin/sh\nprintf '100_1|CANCELLED by 0|0:0|3\\n'\n")
    sacct.chmod(0o755)
    manifest, parts = campaign_status(folder, env)
    n11 = {p.name: p for p in parts}["n1-1"]
    assert n11.state == "interrupted" and n11.recorded == 0
    assert n11.line().endswith("; job 100_1 was cancelled after 3 s, while its sweep ran; "
                               "nothing recorded (see logs/n1-100_1.out)"), n11.line()


def test_a_part_that_reached_its_time_limit_after_recording_runs_says_so_and_what_to_do(
        campaign, tmp_path):
    """s39 tester H3: a part killed by its time limit with 10 of 20 runs recorded read just
    "interrupted 10/20", and resubmit gave it the same minutes again, without a word."""
    folder = _copy(campaign, tmp_path)
    env, _ = _scheduler(tmp_path)
    resubmit(folder, env=env)  # n1 [1] as job 100, n2 [0, 1] as job 101, the merge 102
    sacct = Path(env["PATH"].split(":")[0]) / "sacct"
    sacct.write_text("#!/bin/sh\nprintf '100_1|TIMEOUT|0:0|61\\n'\n")
    sacct.chmod(0o755)
    manifest, parts = campaign_status(folder, env)
    n11 = {p.name: p for p in parts}["n1-1"]
    assert n11.state == "interrupted" and n11.recorded == 1
    assert n11.line().endswith("; job 100_1 reached its time limit (TIMEOUT) after 61 s "
                               "(see logs/n1-100_1.out)"), n11.line()
    lines = summary_lines(folder, manifest, parts)
    advice = next(ln for ln in lines if "reached their time limit" in ln)
    assert advice.startswith("1 part(s) of n1.sbatch reached their time limit (now 00:")
    assert f"raise #SBATCH --time in {folder / 'n1.sbatch'}" in advice
    assert "--time-limit MINUTES --out NEW" in advice
    sacct.write_text("#!/bin/sh\nprintf '100_1|CANCELLED by 0|0:0|61\\n'\n")  # as before
    n11 = {p.name: p for p in campaign_status(folder, env)[1]}["n1-1"]
    assert n11.line().endswith("configurations (ok 1)"), n11.line()
