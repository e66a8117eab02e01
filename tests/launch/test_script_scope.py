"""A launch line's variables: the latest assignment before it wins, an unknown value removes
the name, and asking every launch line of a long script costs time linear in the script."""

from __future__ import annotations

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
