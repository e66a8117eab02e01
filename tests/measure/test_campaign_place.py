"""Where a campaign's scripts run: a folder moved or copied after ``campaign emit`` still holds
scripts that ``cd`` to the old place and log there (s34 tester O2); real emitted folders."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure import campaign as cm
from hpcds1mpi.measure.campaign_place import check_in_place, folders_named, moved_line
from hpcds1mpi.measure.campaign_scripts import emit

PLAN = textwrap.dedent("""\
    [[kernel]]
    name = "gemm"
    sizes = [16, 24]
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


def _emit(root: Path, name: str = "camp", scheduler: str = "slurm") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "plan.toml").write_text(PLAN)
    (root / "cluster.toml").write_text(CLUSTER)
    emit(str(root / "plan.toml"), scheduler, str(root / name), shards=2,
         cluster_file=str(root / "cluster.toml"), partition_name="debug")
    return root / name


def test_a_campaign_where_it_was_written_or_reached_by_a_link_is_in_place(tmp_path):
    camp = _emit(tmp_path)
    assert moved_line(camp, cm.read_manifest(camp)) == ""
    link = tmp_path / "link"
    link.symlink_to(camp)
    assert moved_line(link, cm.read_manifest(link)) == ""
    check_in_place(link, cm.read_manifest(link))


@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
def test_a_moved_campaign_names_the_folder_its_scripts_were_written_for(tmp_path, scheduler):
    old = _emit(tmp_path, scheduler=scheduler)
    moved = old.rename(tmp_path / "moved")
    manifest = cm.read_manifest(moved)
    line = moved_line(moved, manifest)
    assert line.startswith(f"{moved} was moved or copied: its scripts were written for {old} "
                           "(they cd there and write their logs there); move it back (mv "
                           f"{moved} {old}) or emit the campaign again into a new folder"), line
    with pytest.raises(ConfigError) as error:
        check_in_place(moved, manifest)
    assert str(error.value) == f"{line}; nothing was submitted"
    assert "\n" not in str(error.value)


def test_a_moved_campaign_whose_old_place_holds_another_says_its_jobs_would_run_there(tmp_path):
    """O2's worse case: the old path held a new campaign, and the moved one's job ran and
    wrote into it."""
    old = _emit(tmp_path)
    moved = old.rename(tmp_path / "moved")
    _emit(tmp_path)  # another campaign where the first was
    line = moved_line(moved, cm.read_manifest(moved))
    assert f"its scripts were written for {old} " in line
    assert f"{old} exists, and its jobs would run and write there, not here; emit" in line
    assert "mv " not in line


def test_scripts_edited_to_the_new_place_are_in_place(tmp_path):
    """Whoever moves a campaign and points its scripts at the new folder may submit it: the
    scripts, not the manifest, say where the jobs run."""
    old = _emit(tmp_path)
    moved = old.rename(tmp_path / "moved")
    manifest = cm.read_manifest(moved)
    for name in ("n1.sbatch", "n2.sbatch", "merge.sbatch"):
        script = moved / name
        assert moved_line(moved, manifest), name
        script.write_text(script.read_text().replace(str(old), str(moved)))
    assert moved_line(moved, manifest) == ""


def test_the_folders_a_script_names():
    text = ("#!/bin/bash\n#SBATCH --output=/a/b/logs/n1-%A_%a.out\n#PBS -o /c/logs/x.out\n"
            "cd '/d e'\ncd /not/the/first\ncd relative\n")
    assert folders_named(text) == ["/d e", "/a/b", "/c"]
    assert folders_named("cd $HOME\n#SBATCH -o logs/x.out\n") == []


@pytest.mark.parametrize("name", ["camp B", "camp\nB", "camp'$(x)"])
def test_the_suggested_commands_quote_the_folder_and_a_pasted_move_puts_it_back(tmp_path, name):
    """s35 tester R4: a campaign renamed "camp B" was told "mv /x/camp B /x/camp", which moves
    two wrong things; the commands now quote their paths (a newline as bash's $'...', so that
    the line stays one line), and the pasted mv puts the folder back."""
    import re
    import subprocess

    old = _emit(tmp_path)
    moved = old.rename(tmp_path / name)
    line = moved_line(moved, cm.read_manifest(moved))
    assert "\n" not in line, line
    move = re.search(r"\(mv (.+?)\) or emit", line).group(1)
    emit_again = re.search(r"\(hpcds1mpi campaign (.+?) --emit slurm", line).group(1)
    echoed = subprocess.run(["bash", "-c", f"printf '%s\\0' {emit_again}"], capture_output=True,
                            check=True).stdout
    assert echoed == f"{moved}/plan.toml\0".encode()
    subprocess.run(["bash", "-c", f"mv {move}"], check=True, cwd=tmp_path)
    assert old.is_dir() and not moved.exists()
    assert moved_line(old, cm.read_manifest(old)) == ""
