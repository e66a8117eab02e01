"""The pre-flight of a program's launches: a check that passed is not made again in the same
process for the same launcher, program and environment (one probe per tune, not per trial);
any change of those checks again. Real launchers; the probe is counted, not replaced."""

from __future__ import annotations

import os
import sys

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch import preflight, probe
from tests.helpers import mpiexec


@pytest.fixture
def probes(monkeypatch):
    """The real probe, counted; a fresh memo for each test."""
    made = []
    real = probe.run_probe

    def counted(tokens, env, family, timeout=60.0):
        made.append(list(tokens))
        return real(tokens, env, family, timeout)

    monkeypatch.setattr(probe, "run_probe", counted)
    monkeypatch.setattr(preflight, "_PASSED", {})
    return made


def _check(choice, config=Configuration(1, 2, 1), env=None, ranks=2, program=None):
    launch = choice.launcher_for(2)
    env = {**(env or os.environ), **launch.environment(config)}
    return preflight.check(launch, choice, program or [sys.executable, "-c", "pass"], env,
                           ranks)


def test_the_probe_runs_once_for_the_same_launcher_program_and_environment(probes):
    choice = preflight.LaunchChoice.of(mpiexec=mpiexec())
    first = _check(choice)
    assert len(probes) == 1 and "launch probe: 2 ranks joined" in first[1]
    # every trial of a tune: another configuration (threads, ranks), same launch otherwise
    for config in (Configuration(1, 1, 2), Configuration(1, 2, 2)):
        again = _check(choice, config)
        assert again[1].startswith(first[1]) and again[1].endswith("(checked earlier in this run)")
    assert len(_check(choice, Configuration(1, 1, 1), ranks=1)) == 2  # one rank: covered
    assert len(probes) == 1


def test_another_launcher_option_environment_or_program_checks_again(probes, tmp_path):
    choice = preflight.LaunchChoice.of(mpiexec=mpiexec())
    _check(choice)
    _check(preflight.LaunchChoice.of(mpiexec=mpiexec(), launcher_args="-genv PROBE_MARK 1"))
    _check(choice, env={**os.environ, "LD_LIBRARY_PATH": str(tmp_path)})
    other = tmp_path / "app"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    _check(choice, program=[str(other)])
    assert len(probes) == 4


def test_a_failed_check_is_not_remembered(probes, tmp_path):
    copies = tmp_path / "copies"  # starts -n N independent copies: never one job
    copies.write_text('#!/bin/sh\n[ "$1" = --version ] && { echo "HYDRA build details:"; '
                      'echo "Version: 4.1"; exit 0; }\nn=$2; shift 2\ni=0\n'
                      'while [ $i -lt $n ]; do "$@"; i=$((i+1)); done\n')
    copies.chmod(0o755)
    choice = preflight.LaunchChoice(mpiexec=str(copies), launcher="mpiexec")
    for _ in range(2):
        with pytest.raises(LaunchError, match="does not start 2 ranks as one job"):
            _check(choice)
    assert len(probes) == 2
