"""A program sweep's telemetry rows carry how they were read and the command as swept."""

from __future__ import annotations

import json
import sys

from hpcds1mpi.records.telemetry_rows import READING_KEYS, measure_options, telemetry_rows
from hpcds1mpi.surrogates.levels import MEASURE_KEYS, levels_from_frame, recorded_measurement
from tests.helpers import run_cli


def test_the_reading_keys_are_the_ones_the_bundle_reads_back():
    from hpcds1mpi.launch import sweep_step

    assert READING_KEYS is MEASURE_KEYS is sweep_step.READING_KEYS  # one list, not copies
    assert "fail_regex" in READING_KEYS


def test_a_file_from_before_fail_regex_keeps_its_reading_options_with_none():
    """A ``launch`` attribute without ``fail_regex`` (written before the option existed) is
    read as none, not as a file that does not record its options (then every calibration
    script said the bundle 'does not record them'); one without ``workdir`` still is."""
    old = {"runtime": "launch wall time (s)", "time_regex": "", "fom_regex": "F=(\\S+)",
           "ranks_regex": "", "output_file": "", "workdir": "w/{size}"}
    options = json.loads(measure_options({"launch": json.dumps(old)}))
    assert options == {**{k: old[k] for k in READING_KEYS if k in old}, "fail_regex": "",
                       "setup": ""}
    new = json.loads(measure_options({"launch": json.dumps({**old, "fail_regex": "NOT c"})}))
    assert new["fail_regex"] == "NOT c"
    assert measure_options({"launch": json.dumps({**old, "workdir": None})}) is None
    assert measure_options({"launch": json.dumps({k: v for k, v in old.items()
                                                  if k != "workdir"})}) is None
    assert measure_options({}) is None and measure_options({"launch": "{"}) is None


def test_a_sweeps_fail_regex_reaches_its_rows_and_the_bundles_record(tmp_path):
    """sweep --fail-regex -> its rows' ``measure_options`` -> the levels a bundle keeps: a
    calibration sweep repeats it (was: not among the reading keys, so it counted a run that did
    not converge as ok)."""
    app = tmp_path / "scf.sh"
    app.write_text('#!/bin/sh\necho "time: 0.01 s"\n[ "$1" = 2 ] && echo "SCF NOT converged"\n'
                   "exit 0\n")
    app.chmod(0o755)
    out = tmp_path / "scf.h5"
    res = run_cli(["sweep", "--command", f"{app} {{size}}", "--label", "scf", "--sizes", "1,2",
                   "--ranks-per-node", "1", "--threads", "1", "--time-regex",
                   r"time: ([0-9.]+) s", "--fail-regex", "NOT converged", "--min-repeats", "1",
                   "--max-repeats", "1", "--min-time", "0", "--out", str(out),
                   "--no-progress"], timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = telemetry_rows(str(out))
    assert sorted(rows["status"]) == ["failed", "ok"]
    assert {json.loads(t)["fail_regex"] for t in rows["measure_options"]} == {"NOT converged"}
    known, unknown = recorded_measurement(levels_from_frame(rows)["scf"])
    assert unknown == [] and known["fail_regex"] == "NOT converged"


def test_a_one_size_program_sweep_keeps_its_template_and_reading_options(tmp_path):
    """Was: a sweep at one size stored 'prog s2.nw' (so recommend --size 5 ran s2.nw; s27
    tester Q, 2), and no row carried its reading options, so every calibration script said
    the bundle 'does not record them' (Q, 9)."""
    prog = tmp_path / "prog.py"
    prog.write_text("import sys\nprint('time: 0.01 s', sys.argv[1:])\n")
    out = tmp_path / "p.h5"
    res = run_cli(["sweep", "--command", f"{sys.executable} {prog} s{{size}}.nw",
                   "--label", "prog", "--sizes", "2", "--ranks-per-node", "1", "--threads", "1",
                   "--time-regex", r"time: ([0-9.]+) s", "--min-repeats", "1",
                   "--max-repeats", "1", "--min-time", "0", "--out", str(out),
                   "--no-progress"], timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = telemetry_rows(str(out))
    assert set(rows["command_template"]) == {f"{sys.executable} {prog} s{{size}}.nw"}
    options = json.loads(rows["measure_options"].iloc[0])
    assert options["time_regex"] == r"time: ([0-9.]+) s" and options["workdir"] == ""
    level = levels_from_frame(rows)["prog"]
    assert level.command.endswith("s{size}.nw")
    known, unknown = recorded_measurement(level)
    assert unknown == [] and known["fom_regex"] == ""


def test_each_run_carries_its_machines_cpu(tmp_path):
    """Each row's ``cpu_model`` is its own machine's, from the machines table by
    ``machine_id`` (s31 tester Q4: a bundle recorded no CPU, so the guard could not tell an
    Intel machine from the AMD one it was measured on): a merged file of two machines too."""
    from hpcds1mpi.records.telemetry import read_machines

    amd = "data/reference_choice/race_rest_large_b.h5"  # measured on an AMD EPYC
    app = tmp_path / "app.sh"
    app.write_text('#!/bin/sh\necho "time: 0.01 s"\n')
    app.chmod(0o755)
    here = tmp_path / "here.h5"
    # A partition of its own: the machine id hashes the partition with the hardware, and a
    # machine of the reference's own class (a 2-core AMD EPYC VM) would otherwise be it.
    cluster = tmp_path / "other.toml"
    cluster.write_text('[clusters.other.partitions.other]\ncores_per_node = 2\n'
                       'memory_gb = 4\nmax_nodes = 1\n')
    res = run_cli(["sweep", "--command", f"{app} {{size}}", "--label", "app", "--sizes", "1",
                   "--ranks-per-node", "1", "--threads", "1", "--time-regex",
                   r"time: ([0-9.]+) s", "--min-repeats", "1", "--max-repeats", "1",
                   "--min-time", "0", "--out", str(here), "--no-progress",
                   "--cluster", str(cluster)],
                  timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    both = tmp_path / "both.h5"
    res = run_cli(["telemetry", "merge", "--out", str(both), amd, str(here)], timeout=120)
    assert res.returncode == 0, res.stderr
    machines = read_machines(both).set_index("machine_id")["cpu_model"]
    assert len(machines) == 2 and "AMD EPYC" in set(machines)
    rows = telemetry_rows(str(both))
    assert list(rows["cpu_model"]) == list(rows["machine_id"].map(machines))
    assert set(telemetry_rows(amd)["cpu_model"]) == {"AMD EPYC"}


def test_the_sweeps_folder_is_read_and_a_file_without_it_still_reads():
    """s37 tester G3: the folder a program sweep ran in (its ``launch`` attribute's
    ``swept_in``) reaches its rows; a file written before it was reads as not recorded."""
    from hpcds1mpi.records.telemetry_rows import swept_in

    assert swept_in({"launch": json.dumps({"workdir": "", "swept_in": "/data/run"})}) \
        == json.dumps("/data/run")
    for attrs in ({"launch": json.dumps({"workdir": ""})}, {}, {"launch": "not json"},
                  {"launch": json.dumps({"swept_in": "relative/x"})}):
        assert swept_in(attrs) is None, attrs


def test_the_sweeps_input_stamps_are_read_with_their_folder():
    """s48 tester O4: the stamps of the inputs a sweep read (its ``inputs`` attribute, paths
    relative to the folder it ran in) reach its rows as absolute paths; a file without them,
    a relative path with no folder known, or damage reads as none."""
    from hpcds1mpi.records.telemetry_rows import input_stamps

    stamp = [14, 100.0, "a" * 64]
    launch = json.dumps({"swept_in": "/data/run"})
    inputs = json.dumps({"in1.txt": stamp, "../deck/in2.txt": stamp, "/abs/x.txt": stamp,
                         "bad.txt": [1, 2]})
    assert json.loads(input_stamps({"launch": launch, "inputs": inputs})) == {
        "/data/run/in1.txt": stamp, "/data/deck/in2.txt": stamp, "/abs/x.txt": stamp}
    for attrs in ({"inputs": inputs}, {"launch": "{", "inputs": inputs}):  # no folder known
        assert json.loads(input_stamps(attrs)) == {"/abs/x.txt": stamp}
    for attrs in ({"launch": launch}, {"launch": launch, "inputs": "{"},
                  {"launch": launch, "inputs": "[]"},
                  {"launch": launch, "inputs": json.dumps({"in1.txt": "x"})}):
        assert input_stamps(attrs) is None, attrs


def test_a_rows_stamps_are_its_own_sweeps_not_those_of_the_file_it_was_merged_into(tmp_path):
    """A sweep's rows carry its inputs' stamps; rows merged into its file from another sweep
    (another folder: another input of the same name) never carry the file's, and where the
    merged file cannot tell whose they are (two launches, none kept as the file's), no row
    does: nothing is compared, rather than another sweep's file."""
    app = tmp_path / "app.sh"
    app.write_text('#!/bin/sh\necho "time: 0.01 s"\n')
    app.chmod(0o755)
    for name, size in (("a", "1"), ("b", "2")):
        (tmp_path / name).mkdir()
        for deck in ("in1.txt", "in2.txt"):
            (tmp_path / name / deck).write_text(f"{name}\n")
        res = run_cli(["sweep", "--command", f"{app} in{{size}}.txt", "--label", "app",
                       "--sizes", size, "--ranks-per-node", "1", "--threads", "1",
                       "--time-regex", r"time: ([0-9.]+) s", "--min-repeats", "1",
                       "--max-repeats", "1", "--min-time", "0", "--out", f"{name}.h5",
                       "--no-progress"], timeout=120, cwd=tmp_path / name)
        assert res.returncode == 0, res.stderr
    a, b = (tmp_path / name / f"{name}.h5" for name in ("a", "b"))
    stamps = telemetry_rows(str(a))["input_stamps"]
    assert list(json.loads(stamps.iloc[0])) == [str(tmp_path / "a" / "in1.txt")]
    assert list(json.loads(telemetry_rows(str(b))["input_stamps"].iloc[0])) == [
        str(tmp_path / "b" / "in2.txt")]
    res = run_cli(["telemetry", "merge", "--out", str(b), str(a)], timeout=120)
    assert res.returncode == 0, res.stderr
    rows = telemetry_rows(str(b)).set_index("size")["input_stamps"]
    assert sorted(rows.index) == [1, 2] and rows.isna().all()
