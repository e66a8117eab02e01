"""A launch line's variables: the latest assignment before it wins, an unknown value removes
the name, and asking every launch line of a long script costs time linear in the script."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.script_reading import read_script
from tests.scaling import assert_linear, best_seconds


def _alternating(pairs: int) -> str:
    """``v=i`` then ``srun -n $v ./app``, ``pairs`` times (s32 fixer S: 22 s at 256 kB)."""
    return "#!/bin/bash\n#SBATCH -N 1\n" + "".join(
        f"v{i % 50}={i + 1}\nsrun -n $v{i % 50} ./app\n" for i in range(pairs))


def test_each_launch_sees_the_assignments_before_it():
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nA=1\nsrun ./app\nA=2\nB=$(date)\n"
                         "srun ./app\nB=3\nsrun ./app\n")
    first, second, third = (launch.scope for launch in script.launches)
    assert first.get("A") == "1" and "B" not in first
    assert second["A"] == "2" and "B" not in second and second.get("B") is None
    assert third["B"] == "3" and dict(third)["A"] == "2" and len(third) >= 2


def test_asking_every_launch_line_takes_time_linear_in_the_script():
    def seconds(pairs: int) -> float:
        script = read_script(_alternating(pairs))

        def ask() -> None:
            for launch in script.launches:
                launch.scope.get("v7")
        return best_seconds(ask)

    assert_linear(seconds, 2_000)
    script = read_script(_alternating(120))
    assert script.launches[-1].scope["v3"] == "104" and "v3" not in script.launches[0].scope


def test_a_subshells_assignments_end_with_it_nested_or_not():
    """s45 S1: an assignment in a subshell holds for a launch inside it, not after it; one in
    a subshell nested in another ends with the inner one."""
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nA=1\n(A=2; B=2\n (A=3; srun ./app)\n"
                         " srun ./app)\nsrun ./app\n(C=1)\nsrun ./app\n")
    scopes = [launch.scope for launch in script.launches]
    assert [scope.get("A") for scope in scopes] == ["3", "2", "1", "1"]
    assert [scope.get("B") for scope in scopes] == ["2", "2", None, None]
    assert "C" not in scopes[3] and dict(scopes[2]) == {**dict(scopes[3])} and "A" in scopes[2]
    assert script.scope.get("A") == "1" and "B" not in script.scope


def test_asking_launches_after_many_subshells_takes_time_linear_in_the_script():
    """A lookup steps over a closed subshell's assignments at once, not one by one."""
    def seconds(pairs: int) -> float:
        script = read_script("#!/bin/bash\n#SBATCH -N 1\nv=0\n" + "".join(
            f"(v={i}; w={i})\nsrun -n $v ./app\n" for i in range(pairs)))

        def ask() -> None:
            for launch in script.launches:
                launch.scope.get("v")
        return best_seconds(ask)

    assert_linear(seconds, 2_000)


@pytest.mark.parametrize("body", [
    "{ export OMP_NUM_THREADS=2; ./prep; } &\nwait\n",  # the tester's u1
    "export OMP_NUM_THREADS=2 &\nwait\n",  # u1d
    "{\n  export OMP_NUM_THREADS=2\n  ./prep\n} &\nwait\n",  # u1f
    "echo x | export OMP_NUM_THREADS=2\n",  # p8
    "export OMP_NUM_THREADS=2 | tee log\n",
    "echo 2 | while read n; do export OMP_NUM_THREADS=$n; done\n",  # u2
    "echo 2 | while read n\ndo\n  export OMP_NUM_THREADS=2\ndone\n",
    "for n in 2; do export OMP_NUM_THREADS=$n; done | tee log\n",
    "if true; then export OMP_NUM_THREADS=2; fi &\n",
    "(while read n; do export OMP_NUM_THREADS=2; done) < list\n",
    # s46: a list that ``&`` sends to the background, every command of it
    "export OMP_NUM_THREADS=2 && ./a &\nwait\n",
    "./x && export OMP_NUM_THREADS=2 || ./a &\nwait\n",
    "(export OMP_NUM_THREADS=2 && ./a) &\nwait\n",
    # a compound command in a pipeline (read so since s45 RV1; kept)
    "case $P in\n  big)\n    export OMP_NUM_THREADS=2\n    ;;\nesac | tee log\n",
    "case $P in\n  big)\n    export OMP_NUM_THREADS=2\n    ;;\nesac &\n",
    "echo | case $P in\n  big)\n    export OMP_NUM_THREADS=2\n    ;;\nesac\n",
])
def test_a_background_job_or_a_pipeline_stage_is_a_subshell(body):
    """s45 tester F3: bash runs ``cmd &``, ``{ ...; } &`` and every stage of a pipeline in a
    subshell; their assignments were read as the script's own, for the launch after them
    and for ``--rewrite`` (which edited the export inside the background group)."""
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nexport OMP_NUM_THREADS=1\n" + body
                         + "srun ./app\n")
    launch = script.launches[-1]
    assert launch.scope["OMP_NUM_THREADS"] == "1"
    before = [s for s in script.settings_before(launch) if s.name == "OMP_NUM_THREADS"]
    assert [s.line for s in before] == [3] and script.threads == 1
    assert script.scope["OMP_NUM_THREADS"] == "1"


@pytest.mark.parametrize("body, threads", [
    ("{ export OMP_NUM_THREADS=2; ./prep; }\n", "2"),  # a group of the script's own
    ("{ export OMP_NUM_THREADS=2; ./prep; } > log 2>&1\n", "2"),
    ("for n in 2; do export OMP_NUM_THREADS=2; done\n", "2"),
    ("if true; then export OMP_NUM_THREADS=2; fi\n", "2"),
    ("setup() {\n  export OMP_NUM_THREADS=2\n}\n", "2"),  # read in place, as before
    ("./prep && export OMP_NUM_THREADS=2\n", "2"),
    ("./prep &\nexport OMP_NUM_THREADS=2\n", "2"),
    ("./prep & export OMP_NUM_THREADS=2 && ./post\n", "2"),  # only ./prep is apart
    ("export OMP_NUM_THREADS=2 && ./prep | tee log\n", "2"),
    ("case $1 in\n  a) export OMP_NUM_THREADS=3 ;;\nesac\n{ export OMP_NUM_THREADS=2; }\n",
     "2"),
    ("(export OMP_NUM_THREADS=3; for n in 2; do export OMP_NUM_THREADS=2; done)\n", "1"),
])
def test_a_group_of_the_scripts_own_still_sets_its_variables(body, threads):
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nexport OMP_NUM_THREADS=1\n" + body
                         + "srun ./app\n")
    assert script.launches[-1].scope["OMP_NUM_THREADS"] == threads


def test_a_launch_in_a_background_list_sees_the_lists_variables():
    """s46: the list's export reaches its own launch, not the one after the list."""
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nexport OMP_NUM_THREADS=1\n"
                         "export OMP_NUM_THREADS=2 && srun ./app &\nwait\nsrun ./app\n")
    assert [launch.scope["OMP_NUM_THREADS"] for launch in script.launches] == ["2", "1"]
    assert [[s.line for s in script.settings_before(launch) if s.name == "OMP_NUM_THREADS"]
            for launch in script.launches] == [[3, 4], [3]]


def test_a_launch_inside_a_background_group_sees_the_groups_variables():
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nexport OMP_NUM_THREADS=1\n"
                         "{ export OMP_NUM_THREADS=2; srun ./app; } | tee log\nsrun ./app\n")
    assert [launch.scope["OMP_NUM_THREADS"] for launch in script.launches] == ["2", "1"]


@pytest.mark.parametrize("body, threads", [
    # s45 review RV1: the arm's ``(standard)`` opened a subshell the array's ``)`` closed
    ("case $P in\n  (standard) module load x ;;\nesac\nexport OMP_NUM_THREADS=2\n"
     "ARGS=(\n  --size 128\n)\n", "2"),
    ("case $P in\n  (big) N=4 ;;\nesac\nexport OMP_NUM_THREADS=2\nNODES=$(\n  hostname\n)\n",
     "2"),
    # a pattern alone on its line ended the subshell around the case, not at its ``)``
    ("(\ncase $P in\n  big)\n    echo ;;\nesac\nexport OMP_NUM_THREADS=2\n./prep\n)\n", "1"),
    ("case $P in\n  big)\n  (\n    export OMP_NUM_THREADS=2\n  )\n  ;;\nesac\n", "1"),
    ("case $P in big) echo ;; esac\n(\nexport OMP_NUM_THREADS=2\n)\n", "1"),
    ("case $P in\n  big) echo ;; esac\n(\nexport OMP_NUM_THREADS=2\n)\n", "1"),
])
def test_a_case_patterns_parentheses_open_or_close_no_subshell(body, threads):
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nexport OMP_NUM_THREADS=1\n" + body
                         + "srun ./app\n")
    assert script.launches[-1].scope["OMP_NUM_THREADS"] == threads
    assert script.threads == int(threads)
