"""``hpcds1mpi telemetry show|export|merge``."""

from __future__ import annotations

import subprocess

import pytest

from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import run_row


def test_cli_show_export_merge(tmp_path):
    from tests.helpers import run_cli

    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "all.h5"
    telemetry.append(a, [run_row(0), run_row(1)])
    telemetry.append(b, [run_row(2, "m2")])
    proc = run_cli(["telemetry", "merge", str(a), str(b), "--out", str(out)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "3 runs (3 added" in proc.stdout
    proc = run_cli(["telemetry", "merge", str(a), str(b), "--out", str(out)], timeout=60)
    assert "3 runs (0 added, 0 replaced, 3 already there)" in proc.stdout
    proc = run_cli(["telemetry", "show", str(out)], timeout=60)
    assert proc.returncode == 0 and "3 runs" in proc.stdout and "stencil" in proc.stdout
    csv = tmp_path / "runs.csv"
    proc = run_cli(["telemetry", "export", str(out), "--out", str(csv)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    assert len(pd.read_csv(csv)) == 3
    bad = tmp_path / "bad.txt"
    bad.write_text("x")
    proc = run_cli(["telemetry", "show", str(bad)], timeout=60)
    assert proc.returncode != 0 and "not an HDF5" in proc.stderr and "Traceback" not in proc.stderr


def test_export_replaces_its_output_whole_or_not_at_all(tmp_path, monkeypatch, capsys):
    """A failed export keeps the old file byte-identical and leaves no temporary beside it."""
    import pandas as pd
    import pytest

    from hpcds1mpi.cli import main
    from hpcds1mpi.errors import WriteError

    src, csv = tmp_path / "a.h5", tmp_path / "runs.csv"
    telemetry.append(src, [run_row(0), run_row(1)])
    with pytest.raises(SystemExit):
        main(["telemetry", "export", str(src), "--out", str(csv)])
    old, old_sum = csv.read_bytes(), (tmp_path / ".runs.csv.hpcds1mpi.sha256").read_bytes()
    capsys.readouterr()

    def half_then_full(self, path, **kwargs):
        with open(path, "w") as fh:
            fh.write("half")
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_full)
    with pytest.raises(SystemExit) as exit_info:
        main(["telemetry", "export", str(src), "--out", str(csv)])
    assert exit_info.value.code == WriteError.exit_code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "disk is full" in err
    assert csv.read_bytes() == old
    assert (tmp_path / ".runs.csv.hpcds1mpi.sha256").read_bytes() == old_sum
    assert sorted(p.name for p in tmp_path.iterdir()) == [".runs.csv.hpcds1mpi.sha256", "a.h5",
                                                          "runs.csv"]


def test_an_export_with_a_255_byte_name_keeps_its_checksum_beside_it(tmp_path):
    """Its checksum file's name (".NAME.hpcds1mpi.sha256") would pass NAME_MAX: shortened,
    and found again by the next export, which replaces its own file (s32 fixer T1's note)."""
    from tests.helpers import run_cli

    src, out = tmp_path / "a.h5", tmp_path / ("r" * 251 + ".csv")
    telemetry.append(src, [run_row(0), run_row(1)])
    for _ in range(2):
        proc = run_cli(["telemetry", "export", str(src), "--out", str(out)], timeout=60)
        assert proc.returncode == 0, proc.stderr
    sums = [p for p in tmp_path.iterdir() if p.name.endswith(".hpcds1mpi.sha256")]
    assert out.exists() and len(sums) == 1 and len(sums[0].name.encode()) <= 255


def test_export_checks_out_before_reading(tmp_path, capsys):
    """An unusable --out is refused before the telemetry is read (a missing file is not named)."""
    import pytest

    from hpcds1mpi.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["telemetry", "export", str(tmp_path / "missing.h5"), "--out",
              str(tmp_path / "no_dir" / "runs.csv")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert "no_dir" in err and "missing.h5" not in err


def test_a_second_export_to_one_file_is_refused_while_the_first_writes(tmp_path, capsys):
    """Two exports to one file both said "wrote" and the file held one of them: the check and
    the replacement are now made under the output lock (s47 tester M6)."""
    from tests.badinput.harness import assert_runtime, invoke
    from tests.helpers import lock_held_elsewhere

    src, out = tmp_path / "a.h5", tmp_path / "x.csv"
    telemetry.append(src, [run_row(0)])
    with lock_held_elsewhere(out) as lock:
        res = invoke(capsys, ["telemetry", "export", src, "--out", out])
        assert_runtime(res, "being written by another process", str(lock))
    assert not out.exists()
    assert invoke(capsys, ["telemetry", "export", src, "--out", out]).code == 0  # let go


def test_export_replaces_its_own_table_but_not_another_file_without_force(tmp_path, capsys):
    """export --out overwrote any file (a results CSV of the user's) without a word."""
    import pytest

    from hpcds1mpi.cli import main

    src = tmp_path / "a.h5"
    telemetry.append(src, [run_row(0)])
    for name in ("results.csv", "notes.json", "other.parquet"):
        theirs = tmp_path / name
        theirs.write_bytes(b"config,runtime\na,1\n" if name.endswith(".csv") else b"{}")
        before = theirs.read_bytes()
        with pytest.raises(SystemExit) as exit_info:
            main(["telemetry", "export", str(src), "--out", str(theirs)])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and "pass --force" in err and err.count("\n") == 1
        assert theirs.read_bytes() == before
        for extra in (["--force"], []):  # then it is ours: a rerun replaces it
            with pytest.raises(SystemExit) as exit_info:
                main(["telemetry", "export", str(src), "--out", str(theirs), *extra])
            assert exit_info.value.code in (0, None), capsys.readouterr().err
            assert "wrote 1 rows" in capsys.readouterr().out


def test_export_replaces_only_an_unchanged_export_of_its_own(tmp_path, capsys):
    """Any CSV / Parquet / JSON whose header held machine_id counted as an export (an
    inventory table was replaced), and so did an export edited by hand since: only a file
    that matches the checksum export wrote beside it is replaced without --force."""
    import subprocess

    import pandas as pd
    import pytest

    from hpcds1mpi.cli import main

    src = tmp_path / "a.h5"
    telemetry.append(src, [run_row(0), run_row(1)])

    def export(out, *extra):
        with pytest.raises(SystemExit) as exit_info:
            main(["telemetry", "export", str(src), "--out", str(out), *extra])
        captured = capsys.readouterr()
        return exit_info.value.code or 0, captured.out, captured.err

    inventory = tmp_path / "inventory.csv"
    inventory.write_text("machine_id,owner,purchase_price\nnode01,alice,12000\n")
    users = tmp_path / "users.parquet"
    pd.DataFrame({"machine_id": ["n1"], "rack": [3]}).to_parquet(users)
    for theirs in (inventory, users):
        before = theirs.read_bytes()
        code, _, err = export(theirs)
        assert code == 2 and err.count("\n") == 1, err
        assert "is not a table telemetry export hpcds1mpi wrote; pass --force" in err
        assert theirs.read_bytes() == before
    for name in ("runs.csv", "runs.parquet", "runs.json"):
        out = tmp_path / name
        assert export(out)[0] == 0
        code, said, _ = export(out, "--table", "machines")  # unchanged: a rerun replaces it
        assert code == 0 and "(the earlier export replaced)" in said
        with open(out, "ab") as fh:
            fh.write(b"my,hand,edit\n")
        edited = out.read_bytes()
        code, _, err = export(out)
        assert code == 2 and err.count("\n") == 1, err
        assert (f"{out} has been changed since telemetry export wrote it (it no longer "
                f"matches the checksum in .{name}.hpcds1mpi.sha256); pass --force") in err
        assert out.read_bytes() == edited
        assert export(out, "--force")[0] == 0 and export(out)[0] == 0
        check = subprocess.run(["sha256sum", "-c", f".{name}.hpcds1mpi.sha256"], cwd=tmp_path,
                               capture_output=True, text=True)
        assert check.returncode == 0 and f"{name}: OK" in check.stdout, check.stderr
    # an export named again after its checksum file went: not vouched for, so kept
    (tmp_path / ".runs.csv.hpcds1mpi.sha256").unlink()
    assert export(tmp_path / "runs.csv")[0] == 2


def test_show_escapes_control_characters_from_the_file(tmp_path, capsys):
    """A workload name with a newline, ESC and a right-to-left override was printed as-is."""
    import pytest

    from hpcds1mpi.cli import main

    import h5py

    src = tmp_path / "a.h5"
    telemetry.append(src, [run_row(0)])  # append refuses such a label (s37 tester P4): edited
    with h5py.File(src, "r+") as f:
        f["runs/workload"][0] = "gemm\n\x1b[31mRED\u202e"
    with pytest.raises(SystemExit) as exit_info:
        main(["telemetry", "show", str(src)])
    out = capsys.readouterr().out
    assert exit_info.value.code in (0, None)
    assert "gemm\\n\\x1b[31mRED\\u202e" in out
    assert "\x1b" not in out and "\u202e" not in out


def test_a_loop_of_links_or_a_damaged_file_is_one_line_exit_2(tmp_path, capsys):
    """merge and export --out crashed on a loop (RuntimeError); a corrupted file gave h5py's
    RuntimeError traceback in every reader (s25 tester d, defects 2 and 5)."""
    import h5py
    import pytest

    from hpcds1mpi.cli import main

    src = tmp_path / "a.h5"
    telemetry.append(src, [run_row(0), run_row(1)])
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    loop_h5 = tmp_path / "loop.h5"
    loop_h5.symlink_to(loop_h5)
    short = tmp_path / "short.h5"
    telemetry.append(short, [run_row(0), run_row(1)])
    with h5py.File(short, "a") as f:
        del f["runs/run_id"]
        f["runs"].create_dataset("run_id", data=["r000"], dtype=h5py.string_dtype())
    for argv in (["telemetry", "export", str(src), "--out", str(loop)],
                 ["telemetry", "merge", str(loop_h5), str(src), "--out", str(tmp_path / "m.h5")],
                 ["telemetry", "merge", str(src), "--out", str(loop_h5)],
                 ["telemetry", "show", str(short)],
                 ["telemetry", "merge", str(src), "--out", str(short)]):
        before = short.read_bytes()
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and err.count("\n") == 1, (argv, err)
        assert "loop of symbolic links" in err or "damaged" in err
        assert short.read_bytes() == before
    assert loop.is_symlink() and loop_h5.is_symlink() and not (tmp_path / "m.h5").exists()


def test_show_says_why_runs_were_not_ok(tmp_path, capsys):
    """``failed 2`` with no reason: a user had to export the file to learn why."""
    import pytest

    from hpcds1mpi.cli import main

    src = tmp_path / "a.h5"
    telemetry.append(src, [
        run_row(0),
        run_row(1, status="failed", error="exit code 255: ARMCI Error\nBacktrace:\n..."),
        run_row(2, status="failed", error="exit code 255: ARMCI Error\nother tail"),
        run_row(3, status="timeout", error="no exit within the 8 s timeout; killed\x1b[2J"),
    ])
    with pytest.raises(SystemExit) as exit_info:
        main(["telemetry", "show", str(src), "--rows", "0"])
    out = capsys.readouterr().out
    assert exit_info.value.code in (0, None)
    assert "  failed x2: exit code 255: ARMCI Error (e.g. " in out
    assert "  timeout x1: no exit within the 8 s timeout; killed\\x1b[2J" in out
    assert "Backtrace" not in out and "\x1b" not in out
    assert out.index("failed x2") < out.index("timeout x1")  # the most frequent first


def _run_bytes(argv, timeout=60, env=None):
    """run_cli, its output decoded as Python decodes names (a byte that is not UTF-8 kept)."""
    import os
    import subprocess

    from tests.helpers import hpcds1mpi_exe

    return subprocess.run([hpcds1mpi_exe(), *argv], capture_output=True, text=True,
                          errors="surrogateescape", timeout=timeout,
                          env={**os.environ, **(env or {})})


def test_names_with_bytes_that_are_not_utf8_are_merged_exported_and_shown(tmp_path):
    """pyarrow and h5py take UTF-8 text only: export to such a .parquet name and a merge of
    such a shard had died with a UnicodeEncodeError traceback, the failed merge leaving a
    telemetry file of 0 runs, a journal and a temporary behind."""
    import os

    import pandas as pd

    from tests.helpers import run_cli

    shard, out = tmp_path / os.fsdecode(b"t\xff.h5"), tmp_path / "all.h5"
    telemetry.append(shard, [run_row(0), run_row(1)])
    proc = _run_bytes(["telemetry", "merge", str(shard), "--out", str(out)], timeout=60)
    assert proc.returncode == 0 and "2 runs (2 added" in proc.stdout, proc.stderr
    assert set(telemetry.read_runs(out)["source_file"]) == {"t\\xff.h5"}
    parquet = tmp_path / os.fsdecode(b"r\xff.parquet")
    proc = _run_bytes(["telemetry", "export", str(shard), "--out", str(parquet)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    with open(parquet, "rb") as fh:
        assert len(pd.read_parquet(fh)) == 2
    proc = _run_bytes(["telemetry", "show", str(shard)], timeout=60,
                   env={"PYTHONIOENCODING": "utf-8:strict"})  # a UTF-8 locale's stdout
    assert proc.returncode == 0 and proc.stdout.startswith(f"{tmp_path}/t\\xff.h5: "), proc.stderr
    assert sorted(os.listdir(tmp_path)) == sorted(["all.h5", shard.name, parquet.name,
                                                   f".{parquet.name}.hpcds1mpi.sha256"])


def test_show_lists_each_sweeps_setup_and_command_of_a_merged_file(tmp_path):
    """s31: a merged file of two sweeps of one program with another --setup each showed no
    setup at all (its rows keep their own sweep's settings); it now lists each sweep's, and
    a one-sweep file still shows its one line."""
    import sys

    from tests.helpers import run_cli

    app = tmp_path / "app.py"
    app.write_text("print('time: 0.01 s')\n")
    command = f"{sys.executable} {app} {{size}}"
    for out, setup, sizes in (("a.h5", "echo first > in.txt", "1,2"),
                              ("b.h5", "echo second > in.txt", "3")):
        res = run_cli(["sweep", "--command", command, "--label", "app", "--sizes", sizes,
                       "--ranks-per-node", "1", "--threads", "1", "--workdir", f"{out}-{{size}}",
                       "--setup", setup, "--time-regex", r"time: (\S+) s", "--min-repeats",
                       "1", "--max-repeats", "1", "--min-time", "0", "--no-progress",
                       "--out", out], cwd=tmp_path, timeout=180)
        assert res.returncode == 0, res.stderr
    res = run_cli(["telemetry", "merge", "a.h5", "b.h5", "--out", "all.h5"], cwd=tmp_path,
                  timeout=60)
    assert res.returncode == 0, res.stderr
    shown = run_cli(["telemetry", "show", "all.h5", "--rows", "0"], cwd=tmp_path, timeout=60)
    setup = "setup (once per configuration, before its first launch)"
    assert f"  sweep app {command!r} (2 runs): {setup}: echo first > in.txt\n" in shown.stdout
    assert f"  sweep app {command!r} (1 runs): {setup}: echo second > in.txt\n" in shown.stdout
    one = run_cli(["telemetry", "show", "b.h5", "--rows", "0"], cwd=tmp_path, timeout=60)
    assert f"\n  {setup}: echo second > in.txt\n" in one.stdout and "sweep app" not in one.stdout


def test_merge_into_an_existing_file_keeps_its_mode(tmp_path):
    """s32 tester T8: merge --out replaced a 0600 file with a 0644 one."""
    import os

    from tests.helpers import run_cli

    a, out = tmp_path / "a.h5", tmp_path / "all.h5"
    telemetry.append(a, [run_row(0)])
    telemetry.append(out, [run_row(1, "m2")])
    os.chmod(out, 0o600)
    proc = run_cli(["telemetry", "merge", str(a), "--out", str(out)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "2 runs (1 added" in proc.stdout
    assert out.stat().st_mode & 0o7777 == 0o600


def test_export_never_writes_over_its_own_telemetry_force_or_not(tmp_path):
    """``x.csv -> e.h5``: export --force said "the earlier export replaced" and e.h5 was a
    CSV; the same with ``in2.json --out in2.json`` and a hard link (s33 tester C1)."""
    from tests.helpers import run_cli

    src = tmp_path / "e.h5"
    telemetry.append(src, [run_row(0), run_row(1)])
    before = src.read_bytes()
    (tmp_path / "x.csv").symlink_to("e.h5")
    (tmp_path / "hard.json").hardlink_to(src)
    named_json = tmp_path / "in2.json"
    named_json.write_bytes(before)
    for source, out in ((src, "x.csv"), (src, "hard.json"), (named_json, "in2.json")):
        for force in ([], ["--force"]):
            proc = run_cli(["telemetry", "export", str(source), "--out", str(tmp_path / out),
                            *force], timeout=60, cwd=tmp_path)
            assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
            assert f"is the telemetry file {source}" in proc.stderr
            assert "choose another --out" in proc.stderr
    assert src.read_bytes() == before == named_json.read_bytes()
    assert not list(tmp_path.glob(".*sha256"))


def test_an_export_given_as_a_link_is_written_at_its_target_the_link_kept(tmp_path):
    """A link to an earlier export is that export: replaced in place, its checksum beside it
    (s33 tester C3: a rename had replaced links with plain files)."""
    from tests.helpers import run_cli

    src = tmp_path / "a.h5"
    telemetry.append(src, [run_row(0), run_row(1)])
    (tmp_path / "exports").mkdir()
    real = tmp_path / "exports" / "runs.csv"
    link = tmp_path / "latest.csv"
    link.symlink_to("exports/runs.csv")
    for replaced in ("", " (the earlier export replaced)"):
        proc = run_cli(["telemetry", "export", str(src), "--out", str(link)], timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"wrote 2 rows of runs to {link}{replaced}"
    assert link.is_symlink() and real.is_file()
    assert sorted(p.name for p in real.parent.iterdir()) == [".runs.csv.hpcds1mpi.sha256",
                                                             "runs.csv"]
    check = subprocess.run(["sha256sum", "-c", ".runs.csv.hpcds1mpi.sha256"], cwd=real.parent,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("held", ["reading", "writing"])
def test_sigterm_during_an_export_removes_its_temporaries_and_says_so(tmp_path, held):
    """SIGTERM (scancel, the walltime) killed an export silently while it read, exit 143; the
    README says one line, exit 1, no temporary (s33 tester C7). Held there by a sleep."""
    import signal
    import sys
    import textwrap

    src, out = tmp_path / "a.h5", tmp_path / "runs.csv"
    telemetry.append(src, [run_row(0), run_row(1)])
    code = textwrap.dedent(f"""
        import sys, time
        import pandas as pd
        from hpcds1mpi.cli import main
        from hpcds1mpi.records import telemetry

        def held(*args, **kw):
            if {held!r} == "writing":
                open(args[1], "w").write("half")
            print("ready", flush=True)
            time.sleep(60)

        if {held!r} == "writing":
            pd.DataFrame.to_csv = held
        else:
            telemetry.read_runs = held
        main(["telemetry", "export", {str(src)!r}, "--out", {str(out)!r}])
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, err
    assert err.strip().splitlines() == [f"hpcds1mpi: error: {out}: stopped by SIGTERM while "
                                        "writing the export; no partial output is left, rerun "
                                        "to write it"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.h5"]


def test_merge_refuses_another_users_out_without_force(tmp_path):
    """s34 tester U7: a merge rewrote another user's 0660 file as the caller's 0640 one (its
    owner lost write on it), where recommend -o and export refuse another user's file."""
    import os

    import pytest

    from tests.helpers import run_cli

    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    a, out = tmp_path / "bob.h5", tmp_path / "heat.h5"
    telemetry.append(a, [run_row(0)])
    telemetry.append(out, [run_row(1, "m2")])
    os.chown(out, 65534, 65534)
    os.chmod(out, 0o660)
    before = out.read_bytes()
    proc = run_cli(["telemetry", "merge", str(a), "--out", str(out)], timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "belongs to another user (nobody)" in proc.stderr and "--force" in proc.stderr
    assert out.read_bytes() == before and out.stat().st_uid == 65534
    proc = run_cli(["telemetry", "merge", str(a), "--out", str(out), "--force"], timeout=60)
    assert proc.returncode == 0 and "2 runs (1 added" in proc.stdout, proc.stderr
    assert (out.stat().st_uid, out.stat().st_gid) == (0, 65534)  # its group kept
    assert out.stat().st_mode & 0o777 == 0o660  # and its group's write (s35 tester R7)


def test_a_json_export_keeps_every_float_as_the_telemetry_holds_it(tmp_path):
    """s37 tester P2: `telemetry export --out X.json` wrote pandas' 10 decimals: a kernel's
    6e-15 rel_error became 0.0, an 8.623000042e-06 s repeat 8.623e-06. Every float now reads
    back equal, NaN as null, strings and integers as they are."""
    import json

    from tests.helpers import run_cli

    src = tmp_path / "t.h5"
    telemetry.append(src, [run_row(0, runtime_s=8.623000042e-06, rel_error=6.0008266291820245e-15),
                           run_row(1, runtime_s=0.9742531900000131, rel_error=float("nan"))])
    out = tmp_path / "runs.json"
    proc = run_cli(["telemetry", "export", str(src), "--out", str(out)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    frame = telemetry.read_runs(src)
    assert len(rows) == len(frame) == 2
    for row, (_, want) in zip(rows, frame.iterrows()):
        for col, value in want.items():
            if isinstance(value, float) and value != value:
                assert row[col] is None, col
            else:
                assert row[col] == value and type(row[col]) is type(value.item() if hasattr(
                    value, "item") else value), col
    assert rows[0]["rel_error"] == 6.0008266291820245e-15
    assert rows[0]["runtime_s"] == 8.623000042e-06


def test_show_lists_what_other_programs_added(tmp_path, capsys):
    """s37 tester P1: a rewrite keeps or refuses another program's additions; show names them."""
    import h5py

    from hpcds1mpi.cli import main

    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0)])
    with h5py.File(path, "r+") as f:
        f.create_group("mine")
        f["runs"].create_dataset("my_note", data=[1.0])
    with pytest.raises(SystemExit):
        main(["telemetry", "show", str(path)])
    out = capsys.readouterr().out
    assert ("also holds, from other programs: /mine (kept when runs are added); /runs/my_note "
            "inside its tables (adding runs is refused") in out


def test_merge_says_conflicting_duplicates(tmp_path, capsys):
    """s37 tester P8: a run with other values in two shards read as "already there"."""
    import time

    from hpcds1mpi.cli import main

    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "all.h5"
    done = time.time()
    telemetry.append(a, [run_row(0, finished_at=done)])
    telemetry.append(b, [run_row(0, finished_at=done, energy_j=999.0)])
    with pytest.raises(SystemExit) as exit_info:
        main(["telemetry", "merge", str(a), str(b), "--out", str(out)])
    assert exit_info.value.code in (0, None)
    assert ("1 runs (1 added, 0 replaced, 0 already there); 1 conflicting duplicate(s): the "
            "same run with other values and the same finished_at (e.g. run r000's energy_j in "
            "b.h5), the first kept") in capsys.readouterr().out


def test_show_prints_microsecond_run_times_with_their_digits(tmp_path, capsys):
    """s37 tester P11: a run of 8.623 us showed as 0.000009 (one significant digit)."""
    from hpcds1mpi.cli import main

    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0, runtime_s=8.623000042e-06, energy_j=1234.5678)])
    with pytest.raises(SystemExit):
        main(["telemetry", "show", str(path)])
    out = capsys.readouterr().out
    assert "8.623e-06" in out and "1235" in out and "0.000009" not in out


def test_merge_keeps_a_machine_of_an_untold_cpu_generation_apart_and_says_so(tmp_path):
    """s38 tester K2: a file of an older hpcds1mpi (CPU "AMD EPYC", no signature) merged with
    one of this version (the same name and hardware, with its signature): two machines, which
    the file cannot say are one CPU generation; merge says so, show prints the signature."""
    from hpcds1mpi.measure.meters import machine_id
    from tests.helpers import run_cli
    from tests.measure.test_same_machine import stored_runs, this_machine
    from tests.surrogates.test_bundle import make_runs

    def on(signature: str) -> dict:
        row = {**this_machine("local"), "cpu_model": "AMD EPYC", "cpu_signature": signature}
        return {**row, "machine_id": machine_id(row)}

    old, new = on(""), on("AuthenticAMD family 26 model 2 stepping 1; avx512f")
    runs = make_runs(seed=3).head(4)
    files = [stored_runs(tmp_path / f"{n}.h5", m, runs) for n, m in (("a", old), ("b", new))]
    merged = run_cli(["telemetry", "merge", *files, "--out", str(tmp_path / "m.h5")])
    assert merged.returncode == 0, merged.stderr
    assert f"note: machine {old['machine_id']} (CPU 'AMD EPYC') was recorded without the CPU's " \
        f"signature, so it is kept apart from machine {new['machine_id']}" in merged.stderr
    shown = run_cli(["telemetry", "show", str(tmp_path / "m.h5"), "--rows", "0"])
    assert "AMD EPYC (AuthenticAMD family 26 model 2 stepping 1; avx512f)" in shown.stdout


def test_merge_and_export_lines_show_a_newline_in_a_name_escaped(tmp_path, capsys):
    """One summary line each, the name's newline as ``\\n`` as ``telemetry show`` writes it
    ("out" / "m.h5: 8 runs ..." on two lines: s39 tester D11)."""
    from tests.badinput.harness import invoke

    a, out, csv = tmp_path / "a.h5", tmp_path / "out\nm.h5", tmp_path / "e\nx.csv"
    telemetry.append(a, [run_row(0), run_row(1)])
    res = invoke(capsys, ["telemetry", "merge", str(a), "--out", str(out)])
    assert res.code == 0, res.err
    assert res.out.splitlines() == [f"{tmp_path}/out\\nm.h5: 2 runs (2 added, 0 replaced, "
                                    "0 already there)"]
    res = invoke(capsys, ["telemetry", "export", str(out), "--out", str(csv)])
    assert res.code == 0, res.err
    assert res.out.splitlines() == [f"wrote 2 rows of runs to {tmp_path}/e\\nx.csv"]


def test_show_counts_and_lists_a_kernels_option_runs_as_the_workload_train_reads(tmp_path,
                                                                                  capsys):
    """s41 tester D19: the ``{"sweeps": 100}`` runs were counted and listed as plain stencil,
    two decks reading as duplicate rows, and the name to ask recommend for was nowhere."""
    from hpcds1mpi.cli import main

    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0, kind="kernel"),
                            run_row(1, kind="kernel", extra='{"sweeps": 100}')])
    with pytest.raises(SystemExit):
        main(["telemetry", "show", str(path)])
    out = capsys.readouterr().out
    assert "stencil+sweeps.100" in out and out.count("stencil+sweeps.100") == 2  # count, row


def test_merge_refuses_two_programs_under_one_label_and_writes_nothing(tmp_path, capsys):
    """s42: merge wrote Meep's and NEURON's runs under one label into one file without a word,
    which train of that file then refused; merge now refuses them up front in one line
    naming the label, both programs and what to do, and leaves --out as it was."""
    import hashlib

    from hpcds1mpi.cli import main
    from tests.commands.test_learn import program_runs

    def runs(command, sizes, tag):
        frame = program_runs(command, sizes)
        frame["run_id"] = tag + frame["run_id"].astype(str)  # two sweeps: other runs
        return frame.to_dict("records")

    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "all.h5"
    telemetry.append(a, runs("./meep res={size} wg.ctl", (32, 48, 64), "a-"))
    telemetry.append(b, runs("./nrniv ncell={size} ring.hoc", (64, 96), "b-"))
    for target in (out, a):  # a new --out is not created; an existing one is left as it was
        before = hashlib.sha256(target.read_bytes()).hexdigest() if target.exists() else None
        with pytest.raises(SystemExit) as exit_info:
            main(["telemetry", "merge", str(a), str(b), "--out", str(target)])
        assert exit_info.value.code == 2
        [line] = capsys.readouterr().err.strip().splitlines()
        assert line == (
            "hpcds1mpi: error: the runs of workload 'myapp' ran './meep res={size} wg.ctl' and "
            "'./nrniv ncell={size} ring.hoc' under one --label (the programs meep and nrniv): a "
            "model would learn one runtime for two computations; merge each program's files "
            "into its own --out, or sweep one again with its own --label (--label NAME); "
            "nothing was written")
        after = hashlib.sha256(target.read_bytes()).hexdigest() if target.exists() else None
        assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.h5", "b.h5"]  # no side files
    with pytest.raises(SystemExit) as exit_info:  # one program's files still merge
        main(["telemetry", "merge", str(a), "--out", str(out)])
    assert exit_info.value.code in (0, None) and "36 runs (36 added" in capsys.readouterr().out


def _refused_inside_a_bundle(tmp_path, capsys, subcommand: str, name: str) -> None:
    """``telemetry SUBCOMMAND a.h5 --out`` a file ``name`` inside a model bundle, given
    directly and through a link: refused in one line, exit 2, nothing written."""
    import shutil

    from tests.badinput.harness import assert_usage, invoke, snapshot
    from tests.helpers import REPO

    src, model = tmp_path / "a.h5", tmp_path / "bm"
    telemetry.append(src, [run_row(0)])
    model.mkdir()
    shutil.copy(REPO / "hpcds1mpi" / "data" / "default_model" / "manifest.json", model)
    via = tmp_path / f"via-{name}"
    via.symlink_to(model / name)
    before = snapshot(tmp_path)
    for out in (model / name, via):
        res = invoke(capsys, ["telemetry", subcommand, src, "--out", out, "--force"])
        assert_usage(res, f"--out {out}", f"is inside the model bundle {model}",
                     "choose a path outside it")
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in model.iterdir()) == ["manifest.json"]  # no lock either


def test_an_export_inside_a_bundle_is_refused_and_nothing_is_written(tmp_path, capsys):
    """export --out MODEL/runs.csv wrote the export and its checksum into the bundle, which
    learn and train then refused (s47 left, as tester M11 for the commands with --model)."""
    _refused_inside_a_bundle(tmp_path, capsys, "export", "runs.csv")


def test_a_merge_inside_a_bundle_is_refused_and_nothing_is_written(tmp_path, capsys):
    """merge --out MODEL/all.h5 wrote the telemetry into the bundle, which learn and train
    then refused; ingest, export and sweep refused it already (s48 left by fixer C)."""
    _refused_inside_a_bundle(tmp_path, capsys, "merge", "all.h5")
