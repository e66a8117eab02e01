"""The campaign's job scripts: what they put on PATH."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from hpcds1mpi.measure.campaign_scripts import emit

PLAN = textwrap.dedent("""\
    [[kernel]]
    name = "gemm"
    sizes = [16]
    nodes = [1]
    ranks_per_node = [1]
    threads = [1]
    precisions = ["fp64"]
""")


def _exports(tmp_path: Path, site: str) -> dict[str, list[str]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "plan.toml").write_text(PLAN)
    (tmp_path / "cluster.toml").write_text(site + textwrap.dedent("""
        [clusters.lab.partitions.debug]
        cores_per_node = 2
        memory_gb = 4
        max_nodes = 1
    """))
    emit(str(tmp_path / "plan.toml"), "slurm", str(tmp_path / "camp"),
         cluster_file=str(tmp_path / "cluster.toml"), partition_name="debug")
    return {name: [line for line in (tmp_path / "camp" / name).read_text().splitlines()
                   if line.startswith(("export PATH", "module load"))]
            for name in ("n1.sbatch", "merge.sbatch")}


@pytest.mark.skipif(not (Path(sys.executable).parent / "hpcds1mpi").exists(),
                    reason="no hpcds1mpi beside this Python: the scripts export no PATH")
@pytest.mark.parametrize("form", ["export PATH={bin}:$PATH", "export PATH=\"{bin}:${{PATH}}\""])
def test_a_preamble_that_already_puts_this_installation_first_is_not_repeated(tmp_path, form):
    """The cluster file's preamble and the campaign both wrote the same line (s25 tester f 5)."""
    line = form.format(bin=Path(sys.executable).parent)
    exports = _exports(tmp_path, f"[clusters.lab]\npreamble = [{line!r}]\n".replace("'", "'''"))
    assert exports == {"n1.sbatch": [line], "merge.sbatch": [line]}


@pytest.mark.skipif(not (Path(sys.executable).parent / "hpcds1mpi").exists(),
                    reason="no hpcds1mpi beside this Python: the scripts export no PATH")
def test_the_installation_goes_first_after_modules_and_without_a_preamble(tmp_path):
    ours = f"export PATH={Path(sys.executable).parent}:$PATH"
    assert _exports(tmp_path / "a", "") == {"n1.sbatch": [ours], "merge.sbatch": [ours]}
    site = f"[clusters.lab]\npreamble = ['''{ours}''']\nmodules = [\"python\"]\n"
    assert _exports(tmp_path / "b", site) == {
        "n1.sbatch": [ours, "module load python", ours],
        "merge.sbatch": [ours, "module load python", ours]}


def test_a_second_emit_into_one_folder_is_refused_while_the_first_writes(tmp_path):
    """Two `campaign emit` into one folder both said they wrote it; one campaign was gone
    (s26 tester m, 10)."""
    import subprocess

    from hpcds1mpi.errors import LockError

    (tmp_path / "plan.toml").write_text(PLAN)
    code = (f"from hpcds1mpi.writers import hold_lock; hold_lock({str(tmp_path / 'camp')!r}); "
            "print('held', flush=True); import time; time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(LockError, match=f"camp is being written by another process \\(pid "
                                            f"{proc.pid} on .*; wait for it to finish, or choose "
                                            "another --out for the campaign") as err:
            emit(str(tmp_path / "plan.toml"), "slurm", str(tmp_path / "camp"))
        assert err.value.exit_code == 1
    finally:
        proc.kill()
        proc.wait()
    assert not (tmp_path / "camp").exists()
    emit(str(tmp_path / "plan.toml"), "slurm", str(tmp_path / "camp"))  # its lock died with it
    assert (tmp_path / "camp" / "campaign.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["camp", "plan.toml"]


def test_a_plan_over_the_partitions_node_count_names_the_plan_not_an_option(tmp_path):
    """Was: "2 nodes asked but partition 'debug' has at most 1; lower --nodes" (campaign emit
    has no --nodes; s27 tester S, 8)."""
    from hpcds1mpi.errors import ConfigError

    (tmp_path / "plan.toml").write_text(PLAN.replace("nodes = [1]", "nodes = [1, 2]"))
    (tmp_path / "cluster.toml").write_text(textwrap.dedent("""
        [clusters.lab.partitions.debug]
        cores_per_node = 2
        memory_gb = 4
        max_nodes = 1
    """))
    with pytest.raises(ConfigError, match=r"the plan asks for 2 nodes but partition 'debug' "
                                          r"has at most 1; lower nodes in the plan"):
        emit(str(tmp_path / "plan.toml"), "slurm", str(tmp_path / "camp"),
             cluster_file=str(tmp_path / "cluster.toml"), partition_name="debug")
    assert not (tmp_path / "camp").exists()


def _pbs_campaign(tmp_path: Path, shards: int) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    plan = PLAN.replace("sizes = [16]", "sizes = [16, 32]")
    (tmp_path / "plan.toml").write_text(plan)
    (tmp_path / "cluster.toml").write_text(textwrap.dedent("""
        [clusters.lab.partitions.debug]
        cores_per_node = 2
        memory_gb = 4
        max_nodes = 1
    """))
    emit(str(tmp_path / "plan.toml"), "pbs", str(tmp_path / "camp"), shards=shards,
         cluster_file=str(tmp_path / "cluster.toml"), partition_name="debug")
    return tmp_path / "camp"


def _directives(script: Path) -> list[str]:
    return [line for line in script.read_text().splitlines() if line.startswith("#PBS")]


def test_a_pbs_campaigns_jobs_write_their_output_into_its_logs_folder(tmp_path):
    """s33 tester P2: `campaign status` sends the user to logs/, but the PBS scripts named no
    output path, so PBS wrote JOBNAME.oID into the folder qsub ran in; Slurm's write logs/."""
    camp = _pbs_campaign(tmp_path, shards=2)
    logs = camp.absolute() / "logs"
    assert _directives(camp / "n1.pbs")[-2:] == [  # an array: PBS Pro puts the subjob's index
        "#PBS -j oe", f"#PBS -o {logs}/n1-^array_index^.out"]
    assert _directives(camp / "merge.pbs")[-2:] == ["#PBS -j oe", f"#PBS -o {logs}/merge.out"]
    lone = _pbs_campaign(tmp_path / "one", shards=1)  # no array (no -J): a plain path
    assert _directives(lone / "n1.pbs")[-2:] == [
        "#PBS -j oe", f"#PBS -o {lone.absolute() / 'logs'}/n1-0.out"]
    assert "qsub n1.pbs" in (lone / "submit.sh").read_text()


def test_the_scripts_are_executable_as_the_umask_allows(tmp_path):
    """s34 tester U8: the scripts were 0755 whatever the umask, every other output 0600."""
    import os

    old = os.umask(0o077)
    try:
        _exports(tmp_path, "")
    finally:
        os.umask(old)
    camp = tmp_path / "camp"
    modes = {name: (camp / name).stat().st_mode & 0o777
             for name in ("n1.sbatch", "merge.sbatch", "submit.sh")}
    assert modes == {"n1.sbatch": 0o700, "merge.sbatch": 0o700, "submit.sh": 0o700}
    assert (camp / "plan.toml").stat().st_mode & 0o777 == 0o600


def test_a_time_limit_far_under_the_plans_estimate_is_said(tmp_path):
    """s39 tester H3: --time-limit 1 for parts the plan's estimate gives 5 min was taken without
    a word; the parts reached it (TIMEOUT) each round."""
    from hpcds1mpi.measure.campaign_scripts import emit

    sizes = ", ".join(str(32 + 8 * i) for i in range(20))
    (tmp_path / "plan.toml").write_text(textwrap.dedent(f"""\
        [sweep]
        min_time = 2.0
        max_repeats = 1000000
        warmup = 0
        [[kernel]]
        name = "gemm"
        sizes = [{sizes}]
        nodes = [1]
        ranks_per_node = [1]
    """))
    def limit_notes(out, **limit):
        notes = emit(str(tmp_path / "plan.toml"), "pbs", str(tmp_path / out), **limit)["notes"]
        return [n for n in notes if "--time-limit" in n]

    short = limit_notes("a", time_limit_s=60)
    assert len(short) == 1 and short[0].startswith(
        "--time-limit 1 is under half the limit the plan's own estimate gives (n1.pbs ")
    assert "a configuration longer than the limit never finishes" in short[0]
    assert limit_notes("b") == [] and limit_notes("c", time_limit_s=3600) == []
