"""A shell line's words (:mod:`hpcds1mpi.launch.shell_words`)."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.shell_words import words


@pytest.mark.parametrize("line, split", [
    ("./grow {size}>log", ["./grow", "{size}", ">log"]),  # s41 tester B4
    ("./grow 8000>log", ["./grow", "8000>log"]),  # digits before `>`: its file descriptor
    ("./app 8 2>&1|tee log", ["./app", "8", "2>&1", "|", "tee", "log"]),
    ("./app 8&&./post;./clean &", ["./app", "8", "&&", "./post", ";", "./clean", "&"]),
    ("./app out.h5>>log <in.txt", ["./app", "out.h5", ">>log", "<in.txt"]),
    ("./app &>log", ["./app", "&>log"]),
    ("for i in 1 2; do", ["for", "i", "in", "1", "2", ";", "do"]),
    ("echo 'a>b' \"c;d\"", ["echo", "a>b", "c;d"]),  # quoted: no operator
    # s46 review RV4: a `;` after a substitution's close ends the command; one inside stays
    ("x=$(hostname); export A=4", ["x=$(hostname)", ";", "export", "A=4"]),
    ("echo \"started $(date)\"; srun ./app", ["echo", "started $(date)", ";", "srun", "./app"]),
    ("x=`hostname`;export A=4", ["x=`hostname`", ";", "export", "A=4"]),
    ("N=$( echo 4 | cat ); ./a", ["N=$( echo 4 | cat )", ";", "./a"]),
    ("x=$(a; b) \"c\";d", ["x=$(a; b)", "c", ";", "d"]),
    ("find . -exec rm {} \\;", ["find", ".", "-exec", "rm", "{}", ";"]),
    ("x) echo $(date);;", ["x)", "echo", "$(date)", ";;"]),  # a case arm's end (RV3)
    ("x) ./a;&", ["x)", "./a", ";&"]),
])
def test_a_command_line_splits_where_sh_ends_a_word(line, split):
    found = words(line, 10, shell=True)
    assert [w.text for w in found] == split
    assert all(line[w.start - 10:w.end - 10] == w.raw for w in found)  # offsets hold


def test_an_operator_is_a_word_only_in_a_command_line_and_a_quote_must_close():
    assert [w.text for w in words("a>b;c")] == ["a>b;c"]  # a directive's words
    with pytest.raises(ConfigError, match="unbalanced quotes"):
        words("./app 'x", shell=True)
