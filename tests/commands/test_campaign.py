"""``hpcds1mpi campaign`` on the command line: what emit writes and prints, and bad input (a
plan that does not exist, K < 1, an --out holding another campaign or anything else, status
or resubmit on a folder that is not a campaign, no scheduler): one line, exit 2 / 1, no
traceback, nothing already there changed."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.badinput.harness import assert_refused, assert_unchanged, invoke, snapshot

PLAN = textwrap.dedent("""\
    [sweep]
    min_time = 0.01

    [[kernel]]
    name = "gemm"
    sizes = [32, 64]
    nodes = [1, 2]
    ranks_per_node = [1, 2]
    threads = [1]
    precisions = ["fp64"]
""")
CLUSTER = textwrap.dedent("""\
    [clusters.lab.partitions.debug]
    cores_per_node = 2
    memory_gb = 4
    max_nodes = 2
""")


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.toml").write_text(PLAN)
    (tmp_path / "other.toml").write_text(PLAN.replace("[32, 64]", "[48]"))
    (tmp_path / "c.toml").write_text(CLUSTER)
    return tmp_path


EMIT = ["--emit", "slurm", "--cluster", "c.toml", "--partition", "debug"]


def test_emit_writes_one_job_per_node_count_an_array_per_shard_and_the_merge(here, capsys):
    res = invoke(capsys, ["campaign", "plan.toml", *EMIT, "--shards", "3", "--out", "camp"])
    assert res.code == 0, res.err
    assert res.out.splitlines()[0] == "campaign camp: 8 configurations in 6 parts over node " \
                                      "counts 1, 2"
    assert "n1.sbatch: 1 node(s), array of 3 (n1-0 2, n1-1 1, n1-2 1 configurations)" in res.out
    assert "hpcds1mpi campaign resubmit camp" in res.out
    camp = here / "camp"
    n2 = (camp / "n2.sbatch").read_text()
    assert "#SBATCH --nodes=2" in n2 and "#SBATCH --ntasks-per-node=2" in n2
    assert "#SBATCH --array=0-2" in n2 and "#SBATCH --exclusive" in n2
    assert 'PART=n2-$INDEX' in n2 and "INDEX=${SLURM_ARRAY_TASK_ID:-" in n2
    assert "sweep --launch 4 --cluster" in n2 and '--plan "plans/$PART.toml"' in n2
    assert "telemetry merge" in (camp / "merge.sbatch").read_text()
    assert "--dependency=afterany:$j1:$j2 merge.sbatch" in (camp / "submit.sh").read_text()
    assert sorted(p.name for p in (camp / "plans").iterdir()) == \
        [f"n{n}-{i}.toml" for n in (1, 2) for i in range(3)]


def test_emit_pbs_puts_the_array_on_the_qsub_line(here, capsys):
    res = invoke(capsys, ["campaign", "plan.toml", "--emit", "pbs", "--cluster", "c.toml",
                          "--partition", "debug", "--shards", "2", "--out", "camp"])
    assert res.code == 0, res.err
    text = (here / "camp" / "n2.pbs").read_text()
    assert "#PBS -l select=2:ncpus=2:mpiprocs=2:ompthreads=1" in text
    assert "INDEX=${PBS_ARRAY_INDEX:-${SLURM_ARRAY_TASK_ID:-${HPCDS1MPI_CAMPAIGN_INDEX:-0}}}" \
        in text and "--array" not in text
    submit = (here / "camp" / "submit.sh").read_text()
    assert "qsub -J 0-1 n1.pbs" in submit and "depend=afterany:$j1:$j2 merge.pbs" in submit


def _refused(capsys, root, argv, code, *fragments):
    before = snapshot(root)
    line = assert_refused(invoke(capsys, argv), code, *fragments)
    assert_unchanged(before, snapshot(root))
    return line


def test_a_plan_that_does_not_exist(here, capsys):
    _refused(capsys, here, ["campaign", "nope.toml", *EMIT, "--out", "camp"], 2, "nope.toml")


@pytest.mark.parametrize("k", ["0", "-3"])
def test_shards_below_one(here, capsys, k):
    _refused(capsys, here, ["campaign", "plan.toml", *EMIT, "--shards", k, "--out", "camp"], 2,
             "--shards")


def test_shards_not_a_number(here, capsys):
    _refused(capsys, here, ["campaign", "plan.toml", *EMIT, "--shards", "many"], 2, "many")


def test_an_out_holding_another_campaign_is_kept(here, capsys):
    assert invoke(capsys, ["campaign", "other.toml", *EMIT, "--out", "camp"]).code == 0
    (here / "camp" / "telemetry" / "n1-0.h5").write_bytes(b"a shard already measured")
    _refused(capsys, here, ["campaign", "plan.toml", *EMIT, "--out", "camp"], 2,
             "another campaign")
    # the same campaign again: said so, and where to look
    _refused(capsys, here, ["campaign", "other.toml", *EMIT, "--out", "camp"], 2,
             "already holds this campaign", "campaign status")


def test_an_out_that_is_not_empty_or_is_a_file(here, capsys):
    (here / "busy").mkdir()
    (here / "busy" / "keep.txt").write_text("mine")
    _refused(capsys, here, ["campaign", "plan.toml", *EMIT, "--out", "busy"], 2, "not empty")
    _refused(capsys, here, ["campaign", "plan.toml", *EMIT, "--out", "c.toml"], 2)


def test_too_many_nodes_for_the_partition(here, capsys):
    (here / "big.toml").write_text(PLAN.replace("nodes = [1, 2]", "nodes = [1, 8]"))
    _refused(capsys, here, ["campaign", "big.toml", *EMIT, "--out", "camp"], 2, "8 nodes")


def test_a_plan_naming_a_user_program_says_programs_cannot_be_campaigned_yet(here, capsys):
    # s31 tester P5: [[kernel]] name = "heat" (a program) got only "unknown kernel 'heat'"
    (here / "heat.toml").write_text(PLAN.replace('name = "gemm"', 'name = "heat"'))
    _refused(capsys, here, ["campaign", "heat.toml", *EMIT, "--out", "camp"], 2,
             "unknown kernel 'heat'", "cannot be campaigned yet", "sweep --command",
             "telemetry merge")


def test_a_plan_with_a_command_key_names_the_key_not_missing_kernels(here, capsys):
    # s31 tester P5: [sweep] command = "./heat {size}" got "no [[kernel]] entries"
    (here / "cmd.toml").write_text('[sweep]\nsizes = [10]\ncommand = "./heat {size} 100"\n')
    _refused(capsys, here, ["campaign", "cmd.toml", *EMIT, "--out", "camp"], 2,
             "key 'command'", "sweep --command", "telemetry merge")
    (here / "typo.toml").write_text("[sweep]\nsizez = [10]\n")
    _refused(capsys, here, ["campaign", "typo.toml", *EMIT, "--out", "camp"], 2,
             "unknown key sizez")


def test_a_plan_of_a_program_table_says_programs_cannot_be_campaigned(here, capsys):
    # s37 tester K7: a [[program]] table alone got "no [[kernel]] entries; add one"
    (here / "nw.toml").write_text('[sweep]\nnodes = [1, 2]\n[[program]]\n'
                                  'command = "nwchem.openmpi h2o.nw"\nsizes = [1]\n')
    _refused(capsys, here, ["campaign", "nw.toml", *EMIT, "--out", "camp"], 2,
             "[[program]] is not a plan table", "cannot be campaigned yet", "sweep --command",
             "telemetry merge")


@pytest.mark.parametrize("sub", ["status", "resubmit"])
def test_status_and_resubmit_on_what_is_not_a_campaign(here, capsys, sub):
    (here / "plain").mkdir()
    _refused(capsys, here, ["campaign", sub, "plain"], 2, "not a campaign")
    _refused(capsys, here, ["campaign", sub, "missing"], 2, "no such campaign folder")
    _refused(capsys, here, ["campaign", sub, "plan.toml"], 2, "campaign folder")


def test_a_damaged_manifest(here, capsys):
    assert invoke(capsys, ["campaign", "plan.toml", *EMIT, "--out", "camp"]).code == 0
    manifest = here / "camp" / "campaign.json"
    good = json.loads(manifest.read_text())
    for text in ("{not json", '{"format": "hpcds1mpi-campaign", "version": 1}', "[]",
                 "[" * 100000 + "]" * 100000):  # deep nesting: a RecursionError traceback
        manifest.write_text(text)
        _refused(capsys, here, ["campaign", "status", "camp"], 2, "campaign.json")
    # a submission that is not an object, or with nodes but no whole indices: a TypeError
    for bad in ([5], [{"nodes": 1, "indices": "0", "job_id": "7"}],
                [{"nodes": "1", "indices": [0], "job_id": "7"}], [{"job_id": 7}]):
        manifest.write_text(json.dumps({**good, "submissions": bad}))
        _refused(capsys, here, ["campaign", "status", "camp"], 2, "damaged campaign manifest "
                                                                 "(submissions)")


def test_resubmit_without_a_scheduler_is_a_runtime_failure(here, capsys, monkeypatch):
    assert invoke(capsys, ["campaign", "plan.toml", *EMIT, "--out", "camp"]).code == 0
    monkeypatch.setenv("PATH", str(here / "no-bin"))
    _refused(capsys, here, ["campaign", "resubmit", "camp"], 1, "sbatch not found")


def test_dry_run_says_what_would_go(here, capsys):
    assert invoke(capsys, ["campaign", "plan.toml", *EMIT, "--shards", "2", "--out",
                           "camp"]).code == 0
    res = invoke(capsys, ["campaign", "resubmit", "camp", "--dry-run"])
    assert res.code == 0 and res.out.strip() == "would submit: n1 indices 0,1; n2 indices 0,1"


def test_an_array_wider_than_the_scheduler_allows_is_refused_before_anything_is_written(
        here, capsys):
    """--shards 1000000 wrote an array of every configuration, which sbatch refuses at
    submission (MaxArraySize): now refused at emit, naming the limit and where it comes from."""
    from hpcds1mpi.measure.campaign_scripts import max_array_tasks

    most, source = max_array_tasks("slurm")
    if most > 5000:
        pytest.skip(f"{source} is {most}: a plan that wide is too slow to build here")
    sizes = ", ".join(str(16 + i) for i in range(most + 1))
    (here / "wide.toml").write_text(PLAN.replace("[32, 64]", f"[{sizes}]")
                                    .replace("nodes = [1, 2]", "nodes = [1]")
                                    .replace("ranks_per_node = [1, 2]", "ranks_per_node = [1]"))
    line = _refused(capsys, here, ["campaign", "wide.toml", *EMIT, "--shards", "1000000",
                                   "--out", "camp"], 2, f"array of {most + 1} tasks",
                    f"allows {most}", f"--shards {most} or fewer")
    assert source.split(" (")[0] in line
    assert not (here / "camp").exists()
    # at the limit it is written
    res = invoke(capsys, ["campaign", "wide.toml", *EMIT, "--shards", str(most), "--out", "ok"])
    assert res.code == 0, res.err
    assert f"#SBATCH --array=0-{most - 1}" in (here / "ok" / "n1.sbatch").read_text()


def test_gpu_configurations_for_a_partition_without_gpus(here, capsys):
    """Too many nodes or cores were refused at emit, GPU runs on a CPU-only partition were
    written (all devices = ["gpu"]); now they are refused alike, before anything is written."""
    (here / "gpu.toml").write_text(PLAN.replace('precisions = ["fp64"]', 'precisions = ["fp64"]'
                                                '\ndevices = ["gpu"]'))
    line = _refused(capsys, here, ["campaign", "gpu.toml", *EMIT, "--out", "camp"], 2,
                    "gpu.toml: 8 configuration(s) run on GPUs but partition 'debug' has none; "
                    'give devices = ["cpu"] in the plan, or a GPU partition with --partition')
    assert not (here / "camp").exists() and line
    (here / "c.toml").write_text(CLUSTER + "gpus_per_node = 1\ngpu_memory_gb = 16\n")
    _refused(capsys, here, ["campaign", "gpu.toml", *EMIT, "--out", "camp"], 2,
             "2 GPU ranks per node but partition 'debug' has 1 GPUs per node")


@pytest.mark.parametrize("name, shown", [("camp%x", "'%'"), ("camp b", "' '"),
                                         ("camp'q", '"\'"')])
def test_an_out_that_sbatch_misreads_is_refused_naming_out(here, capsys, name, shown):
    """`--out 'camp%x'` was written, and Slurm read %x in #SBATCH --output as the job name:
    every job failed 0:53 before starting; `--out 'camp b'` was refused naming an internal log
    path (s27 tester P, 3 and 10)."""
    line = _refused(capsys, here, ["campaign", "plan.toml", *EMIT, "--out", name], 2,
                    f"--out {name!r} has characters not allowed in a batch script ({shown})",
                    "#SBATCH --output", "% is a pattern",
                    "letters, digits and . _ / + = - only")
    assert "logs" not in line and not (here / name).exists()


def test_a_pbs_campaign_takes_a_percent_but_not_a_space_in_its_folder(here, capsys):
    """Its scripts' #PBS -o names the folder's logs/ (s33 tester P2): qsub takes % as it
    stands, but a space would split the directive."""
    res = invoke(capsys, ["campaign", "plan.toml", "--emit", "pbs", "--cluster", "c.toml",
                          "--partition", "debug", "--out", "camp%x"])
    assert res.code == 0, res.err
    assert f"#PBS -o {here / 'camp%x'}/logs/n1-^array_index^.out" not in \
        (here / "camp%x" / "n1.pbs").read_text()  # one shard: no array
    assert f"#PBS -o {here / 'camp%x'}/logs/n1-0.out" in (here / "camp%x" / "n1.pbs").read_text()
    _refused(capsys, here, ["campaign", "plan.toml", "--emit", "pbs", "--cluster", "c.toml",
                            "--partition", "debug", "--out", "camp b"], 2,
             "--out 'camp b' has characters not allowed in a batch script (' ')", "#PBS -o")


def test_without_a_cluster_file_outside_an_allocation_the_jobs_name_no_partition(
        here, capsys, monkeypatch):
    """This machine's partition name ('local') is made up: every job asked
    `#SBATCH --partition=local` and sbatch refused it (s27 tester P, 4)."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    (here / "one.toml").write_text(PLAN.replace("nodes = [1, 2]", "nodes = [1]")
                                   .replace("ranks_per_node = [1, 2]", "ranks_per_node = [1]"))
    for scheduler, queue in (("slurm", "#SBATCH --partition"), ("pbs", "#PBS -q")):
        res = invoke(capsys, ["campaign", "one.toml", "--emit", scheduler, "--out", scheduler])
        assert res.code == 0, res.err
        flag = "-q" if scheduler == "pbs" else "--partition"
        assert f"note: the campaign's jobs name no {flag}: it was chosen for this machine (" \
            in res.err and f"'local' is no {scheduler} partition" in res.err
        for script in (f"n1.{'pbs' if scheduler == 'pbs' else 'sbatch'}",
                       f"merge.{'pbs' if scheduler == 'pbs' else 'sbatch'}"):
            text = (here / scheduler / script).read_text()
            assert queue not in text and f"# note: the campaign's jobs name no {flag}" in text
    # a cluster file names a real partition: it is asked for
    assert invoke(capsys, ["campaign", "one.toml", *EMIT, "--out", "site"]).code == 0
    assert "#SBATCH --partition=debug" in (here / "site" / "n1.sbatch").read_text()


def test_a_plan_over_the_run_limit_is_not_sent_back_to_campaign(here, capsys):
    """The refusal advised `campaign --shards N`, which refuses the same plan with the same
    line (s27 tester P, 13): a campaign takes each of the smaller plans instead."""
    from hpcds1mpi.config import MAX_CONFIGURATIONS

    sizes = ", ".join(str(8 + i) for i in range(MAX_CONFIGURATIONS // 4 + 1))
    (here / "huge.toml").write_text(PLAN.replace("[32, 64]", f"[{sizes}]"))
    line = _refused(capsys, here, ["campaign", "huge.toml", *EMIT, "--shards", "4", "--out",
                                   "camp"], 2, f"over {MAX_CONFIGURATIONS:,}", "split it into "
                    "plan files", "give each to `hpcds1mpi campaign emit`")
    assert "--shards" not in line
