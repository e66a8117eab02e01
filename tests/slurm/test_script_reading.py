"""The script reader against the real sbatch: each script is submitted held to the test Slurm,
and what ``scontrol show job`` says Slurm understood (nodes, tasks, CPUs per task, time
limit, job name) is what :func:`hpcds1mpi.launch.script_reading.read_script` reads."""

from __future__ import annotations

import json
import re

import pytest

from hpcds1mpi.launch.script_options import parse_slurm_time
from hpcds1mpi.launch.script_reading import read_script
from tests.helpers import run_cli

pytestmark = pytest.mark.slurm

#: Cores per node of the test Slurm (for --ntasks without --nodes).
CORES = 2
SCRIPTS = {
    "short_options": "#SBATCH -N2\n#SBATCH --ntasks-per-node=1\n#SBATCH -c 2\n"
                     "#SBATCH --time=2-3:04\n",
    "separate_values": "#SBATCH --nodes 2\n#SBATCH --ntasks 4\n#SBATCH -t 30:15\n",
    "ntasks_only": "#SBATCH --ntasks=3\n#SBATCH --cpus-per-task=2\n",
    "hash_ends_the_line": "#SBATCH --job-name=a#b --nodes=2\n#SBATCH -t 90\n",
    "after_the_first_command": "\n# a comment\n  #SBATCH --nodes=2\n#SBATCH -J real  # name\n"
                               "echo hi\n#SBATCH --nodes=2\n#SBATCH --time=10\n",
    "last_wins_and_prefix": "#SBATCH --nodes=5 --nodes=2 --ntasks-per-n=2\n"
                            "#SBATCH --time=1-0\n",
    "node_range": "#SBATCH -N 1-2\n#SBATCH -n 2\n#SBATCH --time=0:45:30\n",
    "old_spelling": "#SLURM -N 2\n#SBATCH --time=2-0:30\n",
    "quoted": "#SBATCH --job-name='quoted_name' --nodes=\"2\"\n",
}


def _job(slurm, job_id: int) -> dict:
    text = slurm.cmd(["scontrol", "show", "job", "-o", str(job_id)]).stdout
    return dict(re.findall(r"(\S+?)=(\S*)", text))


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_reader_agrees_with_sbatch(slurm, tmp_path, name):
    text = "#!/bin/bash\n" + SCRIPTS[name] + "srun ./app\n"
    path = tmp_path / f"{name}.sbatch"
    path.write_text(text)
    job_id = slurm.sbatch(path, "--hold", "--output=/dev/null", cwd=tmp_path)
    try:
        got = _job(slurm, job_id)
    finally:
        slurm.cmd(["scancel", str(job_id)], check=False)
    script = read_script(text)
    nodes, per_node, _ = script.layout(cores_per_node=CORES)
    low, _, high = got["NumNodes"].partition("-")  # a held range job: NumNodes=1-2
    assert int(low) <= nodes <= int(high or low)
    assert int(got["NumTasks"]) == (script.ntasks or nodes * (script.ntasks_per_node or 1))
    assert int(got["CPUs/Task"]) == (script.cpus_per_task or 1)
    limit = None if got["TimeLimit"] == "UNLIMITED" else parse_slurm_time(got["TimeLimit"])
    assert limit == script.time_s
    assert got["JobName"] == (script.job_name or path.name)


def test_an_ambiguous_option_is_refused_by_sbatch_and_said_by_the_reader(slurm, tmp_path):
    text = "#!/bin/bash\n#SBATCH --node=2\nsrun ./app\n"
    path = tmp_path / "ambiguous.sbatch"
    path.write_text(text)
    res = slurm.cmd(["sbatch", "--hold", "--output=/dev/null", str(path)], check=False,
                    cwd=tmp_path)
    assert res.returncode != 0 and "ambiguous" in res.stderr
    assert any("sbatch refuses the ambiguous option --node" in n
               for n in read_script(text).notes)


def test_a_rewritten_script_asks_slurm_for_the_recommended_layout(slurm, tmp_path):
    """advise --rewrite on the test Slurm's partition: sbatch takes the rewritten script, and
    what it allocates is the recommendation (nodes, tasks, CPUs per task, time limit)."""
    cluster = tmp_path / "slurm.toml"
    cluster.write_text("[clusters.test.partitions.debug]\ncores_per_node = 2\n"
                       "memory_gb = 25.3\nmax_nodes = 2\n")
    job = tmp_path / "job.sbatch"
    job.write_text("#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --nodes=1\n"
                   "#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2\n"
                   "#SBATCH --time=00:30:00\nexport OMP_NUM_THREADS=2\n"
                   "srun hpcds1mpi run stencil --size 128 --precision fp64\n")
    out = tmp_path / "new.sbatch"
    env = {"HPCDS1MPI_CACHE": str(tmp_path / "cache"),
           "HPCDS1MPI_HISTORY": str(tmp_path / "cache" / "f.json")}
    res = run_cli(["advise", str(job), "--cluster", str(cluster), "--rewrite", str(out),
                   "--force", "--json"], env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rec = json.loads(res.stdout)["recommended"]
    job_id = slurm.sbatch(out, "--hold", "--output=/dev/null", cwd=tmp_path)
    try:
        got = _job(slurm, job_id)
    finally:
        slurm.cmd(["scancel", str(job_id)], check=False)
    cfg = rec["config"]
    assert int(got["NumNodes"].split("-")[0]) == cfg["nodes"]
    assert int(got["NumTasks"]) == cfg["nodes"] * cfg["ranks_per_node"]
    assert int(got["CPUs/Task"]) == cfg["threads"]
    assert parse_slurm_time(got["TimeLimit"]) == rec["walltime_s"]


def test_a_time_limit_is_refused_where_sbatch_refuses_it(slurm, tmp_path):
    """s35 tester T8: --time=Partition_Limit and 1:2:3:4 were "cannot read time ...; ignored"
    and advised, while sbatch refuses them. Each value: sbatch --test-only refuses the script
    exactly where the reader does, in one line naming the directive."""
    from hpcds1mpi.errors import ConfigError
    from tests.launch.test_time_forms import SBATCH_REFUSES, SBATCH_TAKES

    values = [v for v in SBATCH_TAKES + SBATCH_REFUSES if v.strip() == v and v]
    for value in values:
        text = f"#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH -t {value}\nsrun ./app\n"
        path = tmp_path / "t.sbatch"
        path.write_text(text)
        res = slurm.cmd(["sbatch", "--test-only", "--output=/dev/null", str(path)],
                        check=False, cwd=tmp_path)
        refused = "Invalid --time specification" in res.stderr
        assert refused or res.returncode == 0, (value, res.stderr)
        try:
            read_script(text)
        except ConfigError as exc:
            assert refused and str(exc).startswith("line 3: #SBATCH --time="), (value, exc)
            continue
        assert not refused, value


def test_a_memory_size_is_refused_where_sbatch_refuses_it(slurm, tmp_path):
    """s41 tester B9: --mem=-5, 10Mi and 0.02G were read as no ask or as 20 MiB, while sbatch
    refuses each. Each value: sbatch --test-only refuses the script exactly where the reader
    does, in one line naming the directive."""
    from hpcds1mpi.errors import ConfigError
    from tests.launch.test_memory_forms import SBATCH_REFUSES, SBATCH_TAKES

    for value in [v for v in [*SBATCH_TAKES, *SBATCH_REFUSES] if v and " " not in v]:
        text = f"#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --mem={value}\nsrun ./app\n"
        path = tmp_path / "m.sbatch"
        path.write_text(text)
        res = slurm.cmd(["sbatch", "--test-only", "--output=/dev/null", str(path)],
                        check=False, cwd=tmp_path)
        refused = "Invalid --mem specification" in res.stderr
        assert refused or res.returncode == 0 or "node configuration" in res.stderr, \
            (value, res.stderr)
        try:
            read_script(text)
        except ConfigError as exc:
            assert refused and str(exc).startswith("line 3: #SBATCH --mem="), (value, exc)
            continue
        assert not refused, value
