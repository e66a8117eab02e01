"""The program a shell wrapper runs, read from its text: what it names outright, nothing
guessed (s29 tester E1)."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.launch.wrapper_program import DEPTH, is_shell_script, unwrapped, wrapped_program


def _script(tmp_path, text: str, name: str = "run.sh") -> str:
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("text, program", [
    ('#!/bin/sh\nexec ./app --n "$@"\n', ["./app", "--n", "$@"]),
    ("#!/usr/bin/env bash\nset -e\nexport OMP_PROC_BIND=close\nmodule load x\n"
     "cd /tmp\nOMP_NUM_THREADS=2 ./app \\\n  -i in.lj\necho done\n", ["./app", "-i", "in.lj"]),
    ('#!/bin/sh\n# setup\nif [ -z "$X" ]; then\n  X=1\nfi\nexec env A=1 pw.x -in x\n',
     ["pw.x", "-in", "x"]),
    ("#!/bin/sh\nexec >log 2>&1\n./app | tee out\n", ["./app"]),
    ('#!/bin/sh\npython3 -c "print(1)" "$@"\n', ["python3", "-c", "print(1)", "$@"]),
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
