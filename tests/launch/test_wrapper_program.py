"""The program a shell wrapper runs, read from its text: what it names outright, nothing
guessed (s29 tester E1)."""

from __future__ import annotations

import os
import sys

import pytest

from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch import mpi_family
from hpcds1mpi.launch.wrapper_program import DEPTH, is_shell_script, unwrapped, wrapped_program
from tests.helpers import mpiexec, system_program


def _script(tmp_path, text: str, name: str = "run.sh") -> str:
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("text, program", [
    ('#!/bin/sh\nexec ./app --n "$@"\n', ["./app", "--n", "$@"]),
    ("#!/usr/bin/env bash\nset -e\nexport OMP_PROC_BIND=close\nmodule load x\n"
     "cd /tmp\nOMP_NUM_THREADS=2 ./app \\\n  -i in.lj\necho done\n", ["/tmp/app", "-i", "in.lj"]),
    ('#!/bin/sh\n# setup\nif [ -z "$X" ]; then\n  X=1\nfi\nexec env A=1 pw.x -in x\n',
     ["pw.x", "-in", "x"]),
    ("#!/bin/sh\nexec >log 2>&1\n./app | tee out\n", ["./app"]),
    ('#!/bin/sh\npython3 -c "print(1)" "$@"\n', ["python3", "-c", "print(1)", "$@"]),
    # every exec wrapper as the one reader reads it (was: `nice` read as the program)
    ("#!/bin/sh\nexec nice -n 19 numactl --interleave=all ./app \"$@\"\n", ["./app", "$@"]),
    ("#!/bin/sh\nexec env -C /opt/run ./app\n", ["/opt/run/app"]),
])
def test_the_program_a_wrapper_names_outright_is_read(tmp_path, text, program):
    assert wrapped_program(_script(tmp_path, text)) == program


def test_a_program_in_the_scripts_own_folder_becomes_a_path(tmp_path):
    path = _script(tmp_path, '#!/bin/sh\nexec "$(dirname "$0")/app" "$@"\n')
    assert wrapped_program(path) == [os.path.join(str(tmp_path), "app"), "$@"]


@pytest.mark.parametrize("text", [
    '#!/bin/sh\nexec $APP "$@"\n',                          # named by a variable
    "#!/bin/sh\nexec ./a\nexec ./b\n",                        # two programs
    "#!/bin/sh\nif true; then\n  ./a\nfi\n",                  # inside a structure
    "#!/bin/sh\nmpirun -n 4 ./app\n",                         # a job of its own
    "#!/bin/sh\n./app &\n",                                   # in the background
    '#!/bin/sh\nexec ./app "unclosed\n',                      # shlex cannot split it
    "#!/usr/bin/env python3\nprint(1)\n",                     # no shell: read elsewhere
    "no shebang\n./app\n",
])
def test_what_the_text_does_not_name_outright_is_not_guessed(tmp_path, text):
    assert wrapped_program(_script(tmp_path, text)) is None


def test_shells_are_told_by_their_shebang(tmp_path):
    assert is_shell_script(_script(tmp_path, "#!/bin/bash\n"))
    assert is_shell_script(_script(tmp_path, "#!/usr/bin/env -S bash -e\n"))
    assert not is_shell_script(_script(tmp_path, "#!/usr/bin/env python3\n"))
    assert not is_shell_script(str(tmp_path / "missing"))


def test_unwrapped_follows_wrappers_to_the_program_and_says_how(tmp_path):
    """What the pre-flight's launcher check and the program sweep's fingerprint both read
    (s29 tester E1)."""
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    _script(tmp_path, '#!/bin/sh\nexec app "$@"\n', "inner")
    outer = _script(tmp_path, "#!/bin/sh\ninner -x\n", "outer")
    assert unwrapped(["outer", "1"], env) == (["app", "$@"], (
        "through the wrapper outer: its last command inner, "
        "through the wrapper inner: its exec of app"))
    assert unwrapped([outer], env)[0] == ["app", "$@"]
    for plain in (["app"], ["sh", "-c", "x"], [str(tmp_path / "missing")], []):
        assert unwrapped(plain, env) == (plain, "")  # not a wrapper: as given
    shim = _script(tmp_path, '#!/bin/sh\nexec "$PYENV_ROOT/bin/python3" "$@"\n', "python3")
    assert unwrapped([shim, "app.py"], env) == ([shim, "app.py"], "")  # pyenv's shims
    assert unwrapped([_script(tmp_path, "#!/bin/sh\nexec $APP\n", "var")], env) is None
    for level in range(DEPTH + 1):  # a chain deeper than DEPTH is not followed
        _script(tmp_path, f"#!/bin/sh\nexec w{level + 1}\n", f"w{level}")
    assert unwrapped(["w0"], env) is None
    assert unwrapped(["w1"], env) == (["w5"], ", ".join(
        f"through the wrapper w{n}: its exec of w{n + 1}" for n in range(1, 5)))


def test_a_wrapper_longer_than_is_read_is_not_guessed(tmp_path):
    """s29 tester H7: a wrapper whose `exec` lay past the 64 KB read was taken to run its first
    command (`/bin/ls -l`), and so fingerprinted by the wrong program's MPI."""
    from hpcds1mpi.launch.wrapper_program import MAX_WRAPPER_CHARS, wrapped_program

    wrapper = tmp_path / "run.sh"
    filler = "# " + "x" * 77 + "\n"
    wrapper.write_text("#!/bin/sh\n/bin/ls -l\n" + filler * (MAX_WRAPPER_CHARS // 80 + 10)
                       + 'exec /opt/app/real_app "$@"\n')
    wrapper.chmod(0o755)
    assert wrapped_program(str(wrapper)) is None
    wrapper.write_text('#!/bin/sh\n/bin/ls -l\nexec /opt/app/real_app "$@"\n')  # short: read
    assert wrapped_program(str(wrapper))[0] == "/opt/app/real_app"


@pytest.mark.parametrize("body, program", [
    # s29 R1: every simple command of a line is read, `cd dir && exec ./app` included
    ("./prep_input.py\ncd /opt/x && exec ./app\n", ["/opt/x/app"]),
    ("./prep_input.py\ncd dir && exec ./app\n", None),  # relative to the caller's folder
    ("python3 prep.py; exec ./app -n 2\n", ["./app", "-n", "2"]),
    # a command after the program: a set-up one is skipped, another program gives None
    ('./app "$@"\nmv out.dat results/\n', ["./app", "$@"]),
    ("./app\nsleep 1\n", ["./app"]),
    ('cd "$(dirname "$0")"; ./hello "$@"; python3 post.py\n', None),
    ("./app\ngzip out.dat\n", None),
    ("./app warmup; ./app run\n", ["./app", "run"]),
    # an exec inside a structure is chosen at run time: not guessed
    ("if [ -n \"$X\" ]; then\n  exec cat README\nfi\n./app\n", None),
    ("case \"$1\" in\n  a|b) exec ./a ;;\n  *) echo usage ;;\nesac\nexec ./b\n", None),
    ("case \"$1\" in\n  (a) X=1 ;;\nesac\nexec ./b\n", ["./b"]),
    ("run() {\n  exec ./a\n}\nrun\n", None),
    ("for f in *.in; do ./prep $f; done\n./app\n", None),
    ("if true; then ./a; fi; ./a\n", None),
    ("( cd sub && ./app )\n", None),
    ("if [ ! -f in ]; then ./gen_input; fi\nexec ./app\n", ["./app"]),
    ('[ $# = 0 ] && exec /bin/sh "$0" --error\necho "$1"\n', None),
    ('[ -n "$DEBUG" ] || exec ./app\n', None),
    ("[ -x ./app ] || exit 1\nexec ./app\n", ["./app"]),
    # env's and exec's options are no program
    ("exec env -u FOO ./app\n", ["./app"]),
    ("exec env --unset=FOO -i -- ./app x\n", ["./app", "x"]),
    ("exec env -C /opt/x ./app\n", ["/opt/x/app"]),
    ("exec env -S './a b'\n", None),
    ("exec -a myname ./app\n", ["./app"]),
    ("exec -cl ./app\n", ["./app"]),
    # kept as it was (s29 reviewer)
    ('exec "$@"\n', None),
    ("exec env X=1 ./app\n", ["./app"]),
    ("exec time -p ./app\n", ["./app"]),
    ("./app &\nwait\n", None),
    ("./app\necho done\n", ["./app"]),
    ("./app | tee log\n", ["./app"]),
    ("exec $APP\n", None),
    ("exec > log 2>&1\n./app >out.txt\n", ["./app"]),
    # what a shell reads as one command or as no command
    ("cat > in.lj <<'EOF'\nunits lj\nrun 100\nEOF\n./lmp -in in.lj\n", ["./lmp", "-in", "in.lj"]),
    ("cat <<EOF\nnever closed\n./lmp\n", None),
    ('ARGS=(-n 4)\n[[ -f a && -f b ]] || exit 1\n./app "${ARGS[@]}"\n', ["./app", "${ARGS[@]}"]),
    ("command -v module >/dev/null && module load x\nexec ./app\n", ["./app"]),
    ('find . -name "*.tmp" -exec rm {} \\;\n./app\n', None),
])
def test_a_program_is_named_only_where_the_wrapper_runs_one_unambiguously(tmp_path, body,
                                                                          program):
    """s29 R1: a wrong program is worse than none (`./hello; python3 post.py` was read as
    python3, whose MPICH mpi4py got the correct mpirun.openmpi refused)."""
    assert wrapped_program(_script(tmp_path, "#!/bin/sh\n" + body)) == program


@pytest.mark.parametrize("body, program", [
    ('cd "$(dirname "$0")"\n./app "$@"\n', "{own}/app"),
    ('cd "${0%/*}" || exit 1\nexec ./bin/app\n', "{own}/bin/app"),
    ("cd $(dirname $0)\n./app\n", "{own}/app"),
    ('cd "$(dirname "$0")/build"\n./app\n', "{own}/build/app"),
    ('cd "$(dirname "$0")"\ncd ..\n./app\n', "{parent}/app"),
    ('cd "$(dirname "$0")"\napp\n', "app"),  # found on PATH, wherever it cd'd
    ("cd /\n./opt/app\n", "/opt/app"),
    ('cd "$WORK"\n./app\n', None),  # elsewhere: unknowable
    ("cd\n./app\n", None),
    ("if true; then cd /opt; fi\n./app\n", None),
    ('pushd /opt\n./app\n', None),
])
def test_a_relative_program_is_read_from_the_folder_the_wrapper_cd_to(tmp_path, body, program):
    """s29 R4: after `cd "$(dirname "$0")"`, `./app` had been looked up in the sweep's folder,
    not the wrapper's."""
    own = str(tmp_path)
    expected = program and program.format(own=own, parent=os.path.dirname(own))
    found = wrapped_program(_script(tmp_path, "#!/bin/sh\n" + body))
    assert (found and found[0]) == expected


def test_a_wrapper_that_runs_two_programs_leaves_the_right_launcher_alone(tmp_path):
    """s29 R1, end to end: the wrapper of Open MPI's hpcc that then runs `python3 post.py`
    (this Python: MPICH's mpi4py) had its correct mpirun.openmpi refused; the same wrapper
    without it is read from its own folder (s29 R4) and a wrong launcher refused."""
    hpcc = system_program("hpcc")
    openmpi = os.path.realpath(system_program("mpirun.openmpi"))
    os.symlink(hpcc, tmp_path / "hpcc-link")
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    two = _script(tmp_path, '#!/bin/sh\ncd "$(dirname "$0")"\n./hpcc-link "$@"\n'
                            "python3 post.py\n", "two.sh")
    found = mpi_family.program_mpi([two], env)
    assert found.family is None and "names no one program outright" in found.evidence
    assert mpi_family.check_launcher(found, openmpi, env=env) == "openmpi"
    one = _script(tmp_path, '#!/bin/sh\ncd "$(dirname "$0")"\n./hpcc-link "$@"\n', "one.sh")
    found = mpi_family.program_mpi([one], env)
    assert found.family == "openmpi" and found.path == str(tmp_path / "hpcc-link")
    assert mpi_family.check_launcher(found, openmpi, env=env) == "openmpi"
    with pytest.raises(LaunchError):
        mpi_family.check_launcher(found, mpiexec(), env=env)


#: FreeFem++'s ff-mpirun (Debian's 4.11), cut to how it starts its launcher: the mpiexec line
#: built in an array and eval'd (s46 tester H5, H8).
FF_MPIRUN = """#!/usr/bin/env bash
mpirun=mpirun
if [ -n "/usr/bin/mpiexec"  ] ;then
case "/usr/bin/mpiexec" in
[A-Z]:*) mpirun="/usr/bin/mpiexec"  ;;
*) eval mpirun="/usr/bin/mpiexec"  ;;
esac
fi
if [ -n "--oversubscribe"  ] ;then mpi_run_option="--oversubscribe"  ; fi
ffmpi=FreeFem++-mpi
a[0]="'$mpirun'"
j=1;
test -n "$mpi_run_option" && a[((j++))]="$mpi_run_option"
while test -n "$1" ; do
((j++))
case "$1" in
"-nw") nw=1;;
*.edp) a[$j]="${ffmpi}";
if [ "$nw" -eq 1 ]; then ((j=$j+1));a[$j]="-nw"; fi
((j++));a[$j]="'$1'";;
*)  a[$j]="$1";;
esac
shift
done
echo "${a[*]}"
if [ -z "$dry" ]; then eval  "${a[*]}"; fi
"""


def test_a_launcher_run_through_a_variable_or_eval_is_a_launching_line(tmp_path):
    """s46 tester H5, H8: ff-mpirun's mpiexec, run by `eval "${a[*]}"`, was not read (its
    `a[((j++))]=` stopped the reading): the sweep blamed the ranks regex, recommend wrote
    `mpirun -n 1 ff-mpirun ...`."""
    from hpcds1mpi.launch.wrapper_program import launching_line

    assert launching_line(_script(tmp_path, FF_MPIRUN, "ff-mpirun")) == (
        "/usr/bin/mpiexec (through eval ${a[*]})")
    assert launching_line(_script(tmp_path, '#!/bin/sh\nMPIRUN="mpirun --oversubscribe"\n'
                                  '$MPIRUN -n 2 ./app "$@"\n')) == (
        "mpirun --oversubscribe (through $MPIRUN -n 2 ./app $@)")
    for text in ('#!/bin/sh\nMPIRUN=mpirun\necho "run with $MPIRUN"\nexec ./app\n',
                 '#!/bin/sh\nL=mpirun\nL=./app\n$L 10\n', '#!/bin/sh\nX=1\neval "$X"\n'):
        assert launching_line(_script(tmp_path, text)) is None, text
