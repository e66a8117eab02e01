"""``measure/command_label``: the label a program's command is measured under, one rule for
``sweep --command`` and ``tune --program`` (s41 review F7)."""

from __future__ import annotations

import sys

from tests.helpers import run_cli

CLUSTER = """\
[clusters.box.partitions.debug]
cores_per_node = 2
memory_gb = 4
max_nodes = 1
"""


def _older_tunes_file(tmp_path) -> str:
    """A file an older tune wrote: ``python3 app.py {size}`` labelled by its first word."""
    (tmp_path / "c.toml").write_text(CLUSTER)
    (tmp_path / "app.py").write_text("print('time=0.01')\n")
    program = f"{sys.executable} app.py {{size}}"
    res = run_cli(["sweep", "--command", program, "--label", "python3", "--sizes", "1",
                   "--ranks-per-node", "1", "--threads", "1", "--launcher", "mpiexec",
                   "--cluster", "c.toml", "--time-regex", r"time=([0-9.]+)", "--min-time", "0",
                   "--max-repeats", "1", "--out", "to.h5", "--no-progress"],
                  cwd=tmp_path, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    return program


def test_the_label_a_file_records_for_the_command_is_kept_then_a_models_then_the_name(tmp_path):
    from hpcds1mpi.measure.command_label import command_label

    program = _older_tunes_file(tmp_path)
    out = str(tmp_path / "to.h5")
    label, said = command_label(program, None, out)
    assert label == "python3" and said == [
        f"workload label 'python3', as {out} records this command: give --label NAME for "
        "another"]
    assert command_label(program, "mine", out) == ("mine", [])  # a given label wins, unsaid
    # another command: not the file's; the model's where it knows it, else the file name
    assert command_label(f"{program} 2", None, out, "solver", "m")[0] == "solver"
    assert command_label(f"{program} 2", None, out) == (
        "app.py", ["workload label 'app.py', the program's file name: give --label NAME for "
                   "another"])
