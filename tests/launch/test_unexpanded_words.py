"""Words of a program command a shell would expand (``~``, ``$VAR``, ``$(...)``, backticks,
globs): refused, as redirections are, since the command is never run through a shell and
would pass them to the program as written (s39 tester D7)."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.program import program_note
from hpcds1mpi.launch.unexpanded_words import unexpanded_words
from tests.helpers import error_lines, run_cli


@pytest.fixture(autouse=True)
def _in_a_folder_with_files(tmp_path, monkeypatch):
    """A folder where ``*.c`` and ``a[0]`` name files, as a glob that bash replaces."""
    (tmp_path / "main.c").write_text("")
    (tmp_path / "a0").write_text("")
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("text, found", [
    ("./app2 {size} ~/in.dat", ["~/in.dat"]),
    ("./app2 {size} $HOME/in.dat", ["$HOME/in.dat"]),
    ("./app {size} *.c $(id) `id` a[0]", ["*.c", "$(id)", "`id`", "a[0]"]),
    # a pattern that names no file here bash passes as written; so does a last "$"
    # (the review of s39: both had been refused)
    ("./app model.layers=[64,64] http://h/?a=b *.f90 --suffix=$", []),
    ("./app \"$HOME\" \"`id`\" ${size} $1 $'a\\tb'",
     ['"$HOME"', '"`id`"', "${size}", "$1", "$'a\\tb'"]),
    # as bash passes them: quoted, escaped, ~ inside a word or double quotes, a lone $
    ("./app '$HOME' '*.c' \\$x \\* \"~/a\" \"*.c\" a~b price$ $ x[ {a,b} '' end", []),
    ("awk '{print $1}' {size}", []),
    ("./app 'unbalanced $HOME", []),  # the split refuses it, with its own words
])
def test_the_words_a_shell_would_expand(text, found):
    assert unexpanded_words(text) == found


def test_a_word_a_shell_would_expand_is_refused_with_its_value_and_quoted_form(monkeypatch):
    """Was: passed as written, the program failing on its own ("ERROR: cannot open
    ~/in.dat") with nothing pointing at the unexpanded ``~``."""
    monkeypatch.setenv("HOME", "/home/me")
    with pytest.raises(ConfigError) as caught:
        program_note("./app2 {size} ~/in.dat", "--command")
    assert str(caught.value) == (
        "--command is not run by a shell: '~/in.dat' would reach the program as written, not "
        "expanded (~, $VAR, $(...), `...`, * ? [...]); give the value itself (here "
        "/home/me/in.dat), or quote the word to pass it as written ('~/in.dat')")
    with pytest.raises(ConfigError, match=r"^--program .* '\*\.c', '\$\(id\)' and '`id`' would "
                                          r".*give the value itself, or quote .*\('\*\.c'\)$"):
        program_note("./app *.c $(id) `id`")
    assert program_note("./app '$HOME/in.dat' /home/me/in.dat") is None


def test_sweep_refuses_it_in_one_line_before_any_launch(tmp_path):
    out = tmp_path / "t.h5"
    proc = run_cli(["sweep", "--command", "true {size} $HOME/in.dat", "--sizes", "1",
                    "--out", str(out)], timeout=120)
    lines = error_lines(proc.stderr)
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "'$HOME/in.dat' would reach the program as written" in lines[0]
    assert not out.exists()
