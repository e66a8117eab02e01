"""The exec-wrapper prefix of a command, read as the wrappers' own parsers read it (s30 tester
K1: ``env POISSON_N={size} python3 ...`` had been read as the program ``env``)."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.exec_wrappers import (past_wrappers, prefix_before, program_index,
                                            read_wrappers)


@pytest.mark.parametrize("command, program", [
    ("env POISSON_N=128 /usr/bin/python3 app.py", "/usr/bin/python3"),
    ("/usr/bin/env -u HOME -i A=1 ./app", "./app"),
    ("nice -n 5 ./app", "./app"), ("nice -5 ./app", "./app"),
    ("numactl --cpunodebind=0 -C 0-3 --localalloc ./app", "./app"),
    ("taskset -c 0-3 ./app", "./app"), ("stdbuf -oL ./app", "./app"),
    ("timeout -k 5 60 ./app", "./app"), ("time -p ./app", "./app"), ("nohup ./app", "./app"),
    ("env A=1 nice -n 5 numactl -N 0 timeout 60 ./app 3", "./app"),
    ("./app 3", "./app"),
])
def test_the_program_is_the_word_after_the_prefix(command, program):
    words = command.split()
    assert words[program_index(words)] == program


@pytest.mark.parametrize("command", ["env -S 'a b' ./app", "env", "timeout 60",
                                     "numactl --unknown ./app"])
def test_a_prefix_not_read_here_is_none_and_the_program_stays_the_first_word(command):
    words = command.split()
    assert read_wrappers(words) is None and program_index(words) == 0


def test_the_environment_the_program_is_found_in_follows_env():
    words, env = past_wrappers(["env", "-u", "GONE", "PATH=/opt/bin", "app"],
                               {"PATH": "/usr/bin", "GONE": "1", "KEPT": "2"})
    assert words == ["app"] and env == {"PATH": "/opt/bin", "KEPT": "2"}
    assert past_wrappers(["env", "-i", "A=1", "app"], {"PATH": "/usr/bin"})[1] == {"A": "1"}
    assert read_wrappers(["env", "A=1", "B=2", "app"]).assigned == (("A", "1", 1), ("B", "2", 2))


def test_the_prefix_a_launchers_words_end_with():
    assert prefix_before("mpiexec -n 2 --allow-run-as-root env N=128".split()) == ["env", "N=128"]
    assert prefix_before("srun -n 2 --time 10 nice -n 5".split()) == ["nice", "-n", "5"]
    assert prefix_before("srun -n 2".split()) == []


def test_bunched_env_flags_are_read_as_getopt_reads_them():
    """Was (s30 review): `env -iu X ./app`, `env -vu X ./app` read as no program."""
    from hpcds1mpi.launch.exec_wrappers import read_wrappers

    found = read_wrappers(["env", "-iu", "X", "./app"])
    assert found.program_at == 3 and found.unset == ("X",) and found.cleared
    found = read_wrappers(["env", "-vuX", "-0C", "/tmp", "./app"])
    assert found.program_at == 4 and found.unset == ("X",) and found.chdir == "/tmp"
    assert not found.cleared
    assert read_wrappers(["env", "-S", "a b", "./app"]) is None  # not read: no guess


@pytest.mark.parametrize("command", ["timeout -vs KILL 10 ./app", "timeout -vk 5s 10 ./app",
                                     "nice timeout --signal KILL 1.5m ./app"])
def test_timeouts_duration_is_read_by_the_one_reader_of_its_options(command):
    """Was (s31 review M1): a second reader of timeout's options took `-vs KILL`'s value
    `KILL` for the duration and refused a command timeout runs."""
    from hpcds1mpi.launch.exec_wrappers import program_past_wrappers

    words = command.split()
    assert program_past_wrappers(words, {}, "--command")[1] == "./app"
    assert ("timeout", words[-2]) in read_wrappers(words).operands


def test_a_word_read_as_timeouts_duration_that_is_none_is_refused():
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.exec_wrappers import program_past_wrappers

    with pytest.raises(ConfigError, match=r"its duration \(e\.g\. timeout 600 \./app\), not "
                                          r"'\./app'$"):
        program_past_wrappers(["timeout", "-v", "./app", "64"], {}, "--command")
