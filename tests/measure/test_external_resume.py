"""Resuming a program's telemetry: the same command and readings, ``--fail-regex`` included."""

from __future__ import annotations

import json

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure.external_resume import check_resumed
from hpcds1mpi.measure.readings import Readings
from hpcds1mpi.records import telemetry
from tests.helpers import error_lines, run_cli

pytestmark = pytest.mark.mpi

NOT_CONVERGED = "SCF run NOT converged"


def _sweep(tmp_path, *extra) -> list[str]:
    """A one-launch sweep of a script that prints its time, and for size 2 its SCF's failure."""
    app = tmp_path / "scf.sh"
    app.write_text('#!/bin/sh\necho "time: 0.01 s"\n'
                   f'[ "$1" = 2 ] && echo " *** {NOT_CONVERGED} ***"\nexit 0\n')
    app.chmod(0o755)
    return ["sweep", "--command", f"{app} {{size}}", "--label", "scf", "--ranks-per-node", "1",
            "--threads", "1", "--min-time", "0", "--max-repeats", "1", "--time-regex",
            r"time: (\S+) s", "--no-progress", "--out", str(tmp_path / "scf.h5"), *extra]


def test_a_sweeps_fail_regex_is_recorded_and_a_resume_must_give_the_same(tmp_path):
    out = tmp_path / "scf.h5"
    first = _sweep(tmp_path, "--sizes", "1,2", "--fail-regex", "NOT converged")
    proc = run_cli(first, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(telemetry.read_snapshot(out).attrs["launch"])["fail_regex"] == \
        "NOT converged"
    assert list(telemetry.read_runs(out).sort_values("size")["status"]) == ["ok", "failed"]
    before = telemetry.read_snapshot(out).attrs["launch"]
    for args, words in (
            (_sweep(tmp_path, "--sizes", "1,2,3"), "--fail-regex 'NOT converged' (now none)"),
            (_sweep(tmp_path, "--sizes", "1,2,3", "--fail-regex", "did not converge"),
             "--fail-regex 'NOT converged' (now 'did not converge')")):
        proc = run_cli(args + ["--resume"], timeout=120)
        lines = error_lines(proc.stderr)
        assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, \
            proc.stderr
        assert words in lines[0], lines
        assert "rerun with the same --fail-regex, or give a new --out" in lines[0], lines
        assert telemetry.read_snapshot(out).attrs["launch"] == before
        assert len(telemetry.read_runs(out)) == 2  # nothing launched
    proc = run_cli(first[:first.index("--sizes") + 1] + ["1,2,3"]
                   + first[first.index("--sizes") + 2:] + ["--resume"], timeout=120)
    assert proc.returncode == 0, proc.stderr  # the same pattern: the new size runs
    assert len(telemetry.read_runs(out)) == 3


def test_a_file_without_a_fail_regex_resumed_with_one_is_refused(tmp_path):
    """Recorded as none (""), or not recorded at all (a file from before --fail-regex): none."""
    program = "./scf {size}"
    for launch in ({"time_regex": "", "fom_regex": "", "ranks_regex": "", "output_file": "",
                    "fail_regex": ""},
                   {"time_regex": "", "fom_regex": "", "ranks_regex": "", "output_file": ""}):
        out = tmp_path / f"old{len(launch)}.h5"
        writer = telemetry.TelemetryWriter(out, attrs={
            "plan": json.dumps({"command": program, "label": "scf"}),
            "launch": json.dumps(launch)})
        writer.open()
        writer.close()
        check_resumed(str(out), program, Readings.of(), "scf")  # none then, none now
        with pytest.raises(ConfigError) as caught:
            check_resumed(str(out), program, Readings.of(fail_regex=NOT_CONVERGED), "scf",
                          by="tune")
        assert str(caught.value) == (
            f"--out {out}: the file was measured with --fail-regex none (now "
            f"'{NOT_CONVERGED}'); its runs would not mean what this tune's mean: rerun with "
            "the same --fail-regex, or give a new --out")


def test_the_same_words_quoted_another_way_resume_and_other_words_do_not(tmp_path):
    """Before, the command was compared as text: ``'{a,b}' ""`` was refused as another command
    than ``{a,b} ''``, the same argv (s39 tester D9), also when only a file's earlier plan
    held the other quoting (then as runs "from another program")."""
    measured, requoted = "./app {size} {a,b} '' end", "./app {size} '{a,b}' \"\" 'end'"
    launch = {"time_regex": "", "fom_regex": "", "ranks_regex": "", "output_file": "",
              "fail_regex": ""}
    for plan, earlier in ((measured, []), (requoted, [measured])):
        out = tmp_path / f"br{len(earlier)}.h5"
        writer = telemetry.TelemetryWriter(out, attrs={
            "plan": json.dumps({"command": plan, "label": "br"}),
            "earlier_plans": json.dumps([json.dumps({"command": c, "label": "br"})
                                         for c in earlier]),
            "launch": json.dumps(launch)})
        writer.open()
        writer.close()
        check_resumed(str(out), requoted, Readings.of(), "br")
        check_resumed(str(out), measured, Readings.of(), "br")
        with pytest.raises(ConfigError, match="--command"):  # one argument fewer: refused
            check_resumed(str(out), "./app {size} {a,b} end", Readings.of(), "br")


def _measured_under(out, program, launch):
    """An empty telemetry file of ``program`` whose sweep recorded the launcher ``launch``."""
    writer = telemetry.TelemetryWriter(out, attrs={
        "plan": json.dumps({"command": program, "label": "scf"}), "launch": json.dumps(launch)})
    writer.open()
    writer.close()


def test_a_resume_under_another_launcher_is_refused_and_under_the_same_goes_on(tmp_path):
    """s40 tester A7: `--resume` with another --mpiexec measured nothing ("8 already done"):
    the runs' ids do not hold the launcher."""
    program, out = "./scf {size}", tmp_path / "scf.h5"
    recorded = {"launcher": "mpiexec", "command": "/venv/bin/mpirun", "flavour": "OpenMpiMpirun",
                "args": [], "mpi": "", "time_regex": "", "fom_regex": "", "ranks_regex": "",
                "output_file": "", "fail_regex": ""}
    _measured_under(out, program, recorded)
    check_resumed(str(out), program, Readings.of(), "scf", launched=dict(recorded))
    check_resumed(str(out), program, Readings.of(), "scf")  # tune: no launcher to compare
    for now, words in (
            ({"command": "/usr/bin/mpirun.openmpi"},
             "--mpiexec '/venv/bin/mpirun' (now '/usr/bin/mpirun.openmpi')"),
            ({"launcher": "srun", "command": "srun", "mpi": "pmix"},
             "--launcher 'mpiexec' (now 'srun'); --mpiexec '/venv/bin/mpirun' (now 'srun'); "
             "--mpi none (now 'pmix')"),
            ({"args": ["--bind-to", "none"]}, "--launcher-args none (now '--bind-to none')")):
        with pytest.raises(ConfigError) as caught:
            check_resumed(str(out), program, Readings.of(), "scf", launched={**recorded, **now})
        assert f"--resume {out}: the file was measured with {words}; its runs would not mean " \
            "what this sweep's mean: rerun with the same " in str(caught.value)
    # a file from before the launcher was recorded: resumed as before, whatever launches now
    old = {k: v for k, v in recorded.items() if k not in ("launcher", "command", "args", "mpi")}
    _measured_under(tmp_path / "old.h5", program, old)
    check_resumed(str(tmp_path / "old.h5"), program, Readings.of(), "scf",
                  launched={**recorded, "launcher": "srun", "command": "srun"})


def test_a_resume_under_a_copy_of_the_launchers_bytes_goes_on(tmp_path):
    """s40 review G5: the launcher was compared by real path alone, not by the launch code's
    rule (``mpi_installation.same_launcher``): the MPICH wheel's ``mpiexec.hydra``, a copy of
    its ``mpiexec``'s bytes beside it, was refused as another launcher; other bytes still are."""
    import shutil

    from tests.helpers import mpiexec

    program, out = "./scf {size}", tmp_path / "scf.h5"
    own, copy = tmp_path / "mpiexec", tmp_path / "mpiexec.hydra"
    shutil.copy2(mpiexec(), own)
    shutil.copy2(mpiexec(), copy)
    recorded = {"launcher": "mpiexec", "command": str(own), "flavour": "HydraMpiexec",
                "args": [], "mpi": "", "time_regex": "", "fom_regex": "", "ranks_regex": "",
                "output_file": "", "fail_regex": ""}
    _measured_under(out, program, recorded)
    check_resumed(str(out), program, Readings.of(), "scf",
                  launched={**recorded, "command": str(copy)})
    copy.write_bytes(copy.read_bytes() + b"\0")  # another launcher's bytes: refused
    with pytest.raises(ConfigError, match="--mpiexec"):
        check_resumed(str(out), program, Readings.of(), "scf",
                      launched={**recorded, "command": str(copy)})
