"""sbatch / srun options read as getopt_long reads them (:mod:`hpcds1mpi.launch.script_options`):
an exact long name is itself, a prefix is the one name it abbreviates."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.script_options import slurm_options, words


def _read(line: str) -> tuple[list[tuple[str, str | None]], list[str]]:
    notes: list[str] = []
    return [(o.name, o.value) for o in slurm_options(words(line), 2, notes.append)], notes


@pytest.mark.parametrize("spelled", ["extra", "container", "bb", "bbf"])
def test_an_exact_long_name_is_itself_not_the_longer_name_it_prefixes(spelled):
    """s29 R5: ``--extra=tag$1`` was read as ``--extra-node-info`` (and ``--bb`` as ``--bbf``)."""
    assert _read(f"--{spelled}=v$1 --nodes 2") == ([(spelled, "v$1"), ("nodes", "2")], [])
    assert _read(f"--{spelled} v")[0] == [(spelled, "v")]


def test_a_prefix_is_still_the_one_name_it_abbreviates_and_an_ambiguous_one_is_said():
    assert _read("--extra-n=2:4:1 -B 1")[0] == [("extra-node-info", "2:4:1"),
                                                 ("extra-node-info", "1")]
    assert _read("--contai=img")[0] == [("container", "img")]
    assert _read("--nodel=a1")[0] == [("nodelist", "a1")]
    assert _read("--ext=x") == ([], ["line 2: sbatch refuses the ambiguous option --ext "
                                     "(--extra-node-info, --extra)"])


@pytest.mark.parametrize("command, kind", [
    ("cafrun", "mpi"), ("/usr/bin/cafrun", "mpi"), ("mpiexec.hydra", "mpi"),
    ("mpirun.openmpi", "mpi"), ("ibrun", "ibrun"), ("aprun", "aprun"), ("srun", "slurm"),
    ("jsrun", None), ("charmrun", None), ("mpirun_rsh", None), ("./heat", None)])
def test_the_launchers_a_script_line_is_read_with(command, kind):
    """s32 tester X3: OpenCoarrays' cafrun wraps mpiexec and takes its options; a launcher
    whose rank option is not mpirun's (jsrun's -n counts resource sets) stays unknown."""
    from hpcds1mpi.launch.script_options import launcher_kind

    assert launcher_kind(command) == kind


def test_commands_after_a_launch_are_read_from_the_separator_on():
    """s41 tester B1: what a launch line runs after `;` / `&&` / `|` was dropped unread."""
    from hpcds1mpi.launch.script_options import commands_after, words

    line = words("srun ./app 8 > log ; ./post 'a b' | tee x", shell=True)
    assert commands_after(line, line[2]) == (";", "./post", "a b", "|", "tee", "x")
    assert commands_after(line[:3], line[2]) == ()
