"""Merging telemetry shards."""

from __future__ import annotations

import os
import time

import h5py
import pytest

from hpcds1mpi.records import telemetry
from tests.other_user import shared_folder  # noqa: F401 - a fixture
from tests.records.telemetry.rows import run_row


def test_merge_idempotent_with_provenance(tmp_path):
    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "all.h5"
    telemetry.append(a, [run_row(0, "m1"), run_row(1, "m1", status="crashed")])
    telemetry.append(b, [run_row(0, "m2"), run_row(1, "m1", finished_at=time.time() + 5)])
    first = telemetry.merge([a, b], out)
    assert first["rows"] == 3
    again = telemetry.merge([a, b], out)
    assert again["rows"] == 3 and again["added"] == 0
    df = telemetry.read_runs(out).set_index(["machine_id", "run_id"])
    assert df.loc[("m1", "r001"), "status"] == "ok"  # finished beats crashed
    assert df.loc[("m1", "r001"), "source_file"] == "b.h5"
    assert df.loc[("m2", "r000"), "source_file"] == "b.h5"
    assert df.loc[("m1", "r000"), "source_file"] == "a.h5"
    with h5py.File(out) as f:
        sources = [s.decode() for s in f["provenance/source_file"][()]]
    assert sorted(sources) == ["a.h5", "b.h5"]


def test_merge_prefers_finished_over_crashed_over_interrupted(tmp_path):
    a, b, c, out = (tmp_path / n for n in ("a.h5", "b.h5", "c.h5", "all.h5"))
    later = time.time() + 5
    telemetry.append(a, [run_row(0, status="crashed"), run_row(1, status="interrupted")])
    telemetry.append(b, [run_row(0, status="interrupted", finished_at=later),
                         run_row(1, status="crashed", finished_at=later)])
    telemetry.merge([a, b], out)
    df = telemetry.read_runs(out).set_index("run_id")
    assert df.loc["r000", "status"] == "crashed"  # a newer interrupted record says less
    assert df.loc["r001", "status"] == "crashed"
    telemetry.append(c, [run_row(1, status="interrupted", finished_at=later + 5)])
    telemetry.merge([c], out)
    assert telemetry.read_runs(out).set_index("run_id").loc["r001", "status"] == "crashed"


def test_a_shard_with_rows_train_refuses_is_refused_and_nothing_merged(tmp_path):
    """merge took nodes 0 / runtime -1 rows that train refuses, and a bad shard's row could
    replace a good one."""
    import pytest

    from hpcds1mpi.errors import TelemetryError

    good, out = tmp_path / "good.h5", tmp_path / "merged.h5"
    with telemetry.TelemetryWriter(good) as w:
        w.record(run_row(0))
    telemetry.merge([good], out)
    before = out.read_bytes()
    for column, value, words in (("nodes", 0, "row(s) with nodes 0"),
                                 ("runtime_s", -1.0, "row(s) with runtime_s -1"),
                                 ("size", 0, "row(s) with size 0"),
                                 ("runtime_s", 1e300, "row(s) with runtime_s 1e+300"),
                                 ("energy_j", -5.0, "row(s) with energy_j -5"),
                                 ("ranks_per_node", 10**15, "row(s) with ranks_per_node 1000")):
        bad = tmp_path / f"bad_{column}_{value}.h5"
        with telemetry.TelemetryWriter(bad) as w:
            w.record({**run_row(0), column: value, "finished_at": time.time() + 60})
        pattern = words.replace("(s)", r"\(s\)").replace("+", r"\+")
        with pytest.raises(TelemetryError, match=pattern) as err:
            telemetry.merge([bad, good], out)
        assert str(bad) in str(err.value) and "leave it out of the merge" in str(err.value)
        assert out.read_bytes() == before


def test_a_source_given_twice_is_read_once_and_its_runs_not_counted_again(tmp_path):
    a, out = tmp_path / "a.h5", tmp_path / "all.h5"
    telemetry.append(a, [run_row(0), run_row(1)])
    counts = telemetry.merge([a, tmp_path / "." / "a.h5"], out)
    assert counts == {"added": 2, "replaced": 0, "kept": 0, "conflicts": 0, "renamed": 0,
                      "conflict": None, "rows": 2, "repeated": 1, "other_launcher": 0,
                      "launchers": None, "unchanged": False}


def test_a_damaged_target_or_source_is_refused_and_nothing_rewritten(tmp_path):
    """A target whose first column was cut short read as 1 run, and the merge rewrote it with
    that 1 (s25 tester d, defect 1)."""
    import pytest

    from hpcds1mpi.errors import TelemetryError

    src, target = tmp_path / "src.h5", tmp_path / "target.h5"
    telemetry.append(src, [run_row(9)])
    telemetry.append(target, [run_row(i) for i in range(4)])
    with h5py.File(target, "a") as f:
        short = f["runs/run_id"][()][:1]
        del f["runs/run_id"]
        f["runs"].create_dataset("run_id", data=short, dtype=h5py.string_dtype())
    before = target.read_bytes()
    for sources, out in (([src], target), ([target], tmp_path / "new.h5")):
        with pytest.raises(TelemetryError, match="table of the telemetry file is damaged"):
            telemetry.merge(sources, out)
    assert target.read_bytes() == before and not (tmp_path / "new.h5").exists()


def test_a_loop_of_links_as_a_source_is_one_line(tmp_path):
    """Path.resolve() raised RuntimeError('Symlink loop') before anything was read."""
    import pytest

    from hpcds1mpi.errors import TelemetryError

    loop = tmp_path / "loop.h5"
    loop.symlink_to(loop)
    good = tmp_path / "good.h5"
    telemetry.append(good, [run_row(0)])
    with pytest.raises(TelemetryError, match="loop of symbolic links"):
        telemetry.merge([loop, good], tmp_path / "out.h5")
    assert not (tmp_path / "out.h5").exists()


def test_a_shard_whose_name_is_not_utf8_is_merged_and_named_with_escapes(tmp_path):
    """h5py cannot store a name's non-UTF-8 bytes (Python's surrogate escapes): the merge had
    died with a UnicodeEncodeError traceback. Now its bytes are written as \\xff, and a rerun
    finds its provenance again (not one entry more per rerun)."""
    import os

    shard, out = tmp_path / os.fsdecode(b"t\xff.h5"), tmp_path / "all.h5"
    telemetry.append(shard, [run_row(0), run_row(1)])
    assert telemetry.merge([shard], out)["added"] == 2
    again = telemetry.merge([shard], out)
    assert again["added"] == 0 and again["kept"] == 2
    assert set(telemetry.read_runs(out)["source_file"]) == {"t\\xff.h5"}
    with h5py.File(out) as f:
        assert [s.decode() for s in f["provenance/source_file"][()]] == ["t\\xff.h5"]


def test_a_merge_that_fails_changes_nothing_and_leaves_no_file_behind(tmp_path, monkeypatch):
    """A failed merge into a new --out had left a telemetry file of 0 runs, its journal and a
    torn .NAME.h5.tmp-PID; into an existing one, the journal and the temporary stayed."""
    import os

    import pytest

    from hpcds1mpi.errors import WriteError
    from hpcds1mpi.records.telemetry import snapshot_write

    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "all.h5"
    telemetry.append(a, [run_row(0)])
    telemetry.append(b, [run_row(1)])
    def full_at_the_final_snapshot():  # the merge's one snapshot, at close (s42 tester F11)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshot_write, "_test_pause_mid_write", full_at_the_final_snapshot)
    with pytest.raises(WriteError, match="No space left on device.*nothing was changed"):
        telemetry.merge([a], out)
    assert sorted(os.listdir(tmp_path)) == ["a.h5", "b.h5"]
    monkeypatch.undo()
    telemetry.merge([a], out)
    before = telemetry.read_runs(out)
    monkeypatch.setattr(snapshot_write, "_test_pause_mid_write", full_at_the_final_snapshot)
    with pytest.raises(WriteError):
        telemetry.merge([b], out)
    assert sorted(os.listdir(tmp_path)) == ["a.h5", "all.h5", "b.h5"]
    assert telemetry.read_runs(out).equals(before)


def _sweep(tmp_path, name: str, command: str, *extra: str):
    """A real program sweep of ``command`` (label ``app``, sizes 1 and 2, 1 rank) into NAME.h5."""
    from tests.helpers import run_cli

    out = tmp_path / f"{name}.h5"
    res = run_cli(["sweep", "--command", command, "--label", "app", "--sizes", "1,2",
                   "--ranks-per-node", "1", "--threads", "1", "--min-repeats", "1",
                   "--max-repeats", "1", "--min-time", "0", "--out", str(out), "--no-progress",
                   *extra], timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    return out


def test_a_merge_keeps_how_each_sweep_measured_its_runs(tmp_path):
    """s30 tester O2: a merge kept no ``launch`` nor ``plan`` attribute, so a model trained on
    it knew no launcher, --workdir or --setup ("trained before launchers were recorded") and
    its script had no `cd` and no setup line. Two sweeps that differ (--workdir, --setup,
    the command) keep each its own on its rows, as `train` reads each file alone."""
    import json
    import sys

    from hpcds1mpi.records.telemetry_rows import telemetry_rows

    app = tmp_path / "app.py"
    app.write_text("import sys\nprint('ran', sys.argv[1:])\n")
    for size in (1, 2):
        (tmp_path / "w" / str(size)).mkdir(parents=True)
    a = _sweep(tmp_path, "a", f"{sys.executable} {app} {{size}}", "--workdir", "w/{size}",
               "--setup", "echo prepared > ready")
    b = _sweep(tmp_path, "b", f"{sys.executable} {app} {{size}} -x")
    one, both = tmp_path / "one.h5", tmp_path / "both.h5"
    telemetry.merge([a], one)
    with h5py.File(a) as fa, h5py.File(one) as fo:
        for key in ("launch", "plan"):
            assert fo.attrs[key] == fa.attrs[key]
    telemetry.merge([a, b], both)
    columns = ["runtime_source", "measure_options", "launched_with", "command_template"]
    alone = pd_concat([telemetry_rows(a), telemetry_rows(b)])
    merged = telemetry_rows(both)
    key = ["run_id", "command"]
    assert merged.sort_values(key)[columns].to_dict("records") == \
        alone.sort_values(key)[columns].to_dict("records")
    options = {json.loads(t)["workdir"]: json.loads(t)["setup"] for t in merged["measure_options"]}
    assert options == {"w/{size}": "echo prepared > ready", "": ""}
    with h5py.File(both) as f:  # the sweeps differ: no one launch, both plans kept
        assert "launch" not in f.attrs and "plan" not in f.attrs
        plans = [json.loads(p)["command"] for p in json.loads(f.attrs["earlier_plans"])]
    assert sorted(plans) == sorted([f"{sys.executable} {app} {{size}}",
                                    f"{sys.executable} {app} {{size}} -x"])
    again = tmp_path / "again.h5"  # a merged file merged again keeps its rows' settings
    telemetry.merge([both], again)
    assert telemetry_rows(again).sort_values(key)[columns].to_dict("records") == \
        merged.sort_values(key)[columns].to_dict("records")


def pd_concat(frames):
    import pandas as pd

    return pd.concat(frames, ignore_index=True)


def test_a_merge_into_a_link_extends_its_target_the_link_kept(tmp_path):
    """``merge ../base.h5 --out lnk2.h5`` (-> master.h5) replaced the link with a plain file
    and master.h5 never got the runs (s33 tester C3)."""
    from tests.helpers import run_cli

    shard, master, link = tmp_path / "shard.h5", tmp_path / "master.h5", tmp_path / "lnk2.h5"
    telemetry.append(shard, [run_row(0, "m2"), run_row(1, "m2")])
    telemetry.append(master, [run_row(0)])
    link.symlink_to("master.h5")
    proc = run_cli(["telemetry", "merge", str(shard), "--out", str(link)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"{link}: 3 runs (2 added" in proc.stdout
    assert link.is_symlink() and len(telemetry.read_runs(master)) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lnk2.h5", "master.h5", "shard.h5"]



@pytest.mark.parametrize("existing", [True, False])
def test_sigterm_during_a_merge_changes_nothing_and_says_so(tmp_path, existing):
    """A merge stopped by SIGTERM exited 143 silently and left its temporary, journal and lock
    (s33 tester C7); the README says one line, exit 1, nothing left."""
    import hashlib
    import signal
    import subprocess

    from tests.helpers import hpcds1mpi_exe

    shard, out = tmp_path / "shard.h5", tmp_path / "t.h5"
    telemetry.append(shard, [run_row(0, "m2"), run_row(1, "m2")])
    if existing:
        telemetry.append(out, [run_row(0)])
    before = hashlib.sha256(out.read_bytes()).hexdigest() if existing else None
    names = sorted(p.name for p in tmp_path.iterdir())
    proc = subprocess.Popen([hpcds1mpi_exe(), "telemetry", "merge", str(shard), "--out",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HPCDS1MPI_TEST_SNAPSHOT_PAUSE": "30"})
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".t.h5.tmp-*")):  # held half-written: the SIGTERM lands there
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out_text, err = proc.communicate(timeout=30)
    assert proc.returncode == 1 and out_text == "", err
    assert err.strip().splitlines() == [f"hpcds1mpi: error: {out}: stopped by SIGTERM while "
                                        "writing the merged telemetry; nothing was changed, "
                                        "rerun the merge"]
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    if existing:
        assert hashlib.sha256(out.read_bytes()).hexdigest() == before


def test_a_merge_keeps_a_group_shared_files_mode_for_its_taker_and_its_owner(shared_folder):
    """s35 tester R7: bob's ``merge --force`` over alice's group-shared ``-rw-rw----`` file
    left ``-rw-r----- bob proj``: alice could no longer write what had been her file. Here
    root's file of group 65534, merged into by user 65534 (umask 022), then again by root."""
    import stat

    from tests.other_user import OTHER, as_other_user

    shard, out = shared_folder / "bob_g.h5", shared_folder / "merged.h5"
    telemetry.append(shard, [run_row(0, "m2")])
    telemetry.append(out, [run_row(1, "m1")])
    telemetry.merge([shard], shared_folder / "warm.h5")  # imports made before the fork
    telemetry.merge([shard], shared_folder / "warm.h5")
    os.chown(out, 0, OTHER)
    os.chmod(out, 0o660)

    def merge_as_group_member():
        os.umask(0o022)
        return telemetry.merge([shard], out)["rows"]

    assert as_other_user(merge_as_group_member) == ("ok", 2)
    st = out.stat()
    assert (st.st_uid, st.st_gid, stat.filemode(st.st_mode)) == (OTHER, OTHER, "-rw-rw----")
    old_umask = os.umask(0o022)
    try:  # its owner's own merge keeps the group's write too
        os.chown(out, 0, OTHER)
        telemetry.merge([shard], out)
    finally:
        os.umask(old_umask)
    assert stat.filemode(out.stat().st_mode) == "-rw-rw----"


def test_the_same_run_with_other_values_is_a_conflict_the_first_kept(tmp_path):
    """s37 tester P8: counted as "already there", whichever shard was named first kept."""
    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "all.h5"
    done = time.time()
    telemetry.append(a, [run_row(0, finished_at=done), run_row(1, finished_at=done)])
    telemetry.append(b, [run_row(0, finished_at=done, energy_j=999.0),
                         run_row(1, finished_at=done)])
    counts = telemetry.merge([a, b], out)
    assert (counts["added"], counts["kept"], counts["conflicts"]) == (2, 1, 1)
    assert counts["conflict"] == ("r000", "energy_j", "b.h5")
    assert telemetry.read_runs(out).set_index("run_id").loc["r000", "energy_j"] != 999.0
    again = telemetry.merge([b], out)  # --out's own record is the first: it stays
    assert (again["kept"], again["conflicts"]) == (1, 1)
    assert telemetry.read_runs(out).set_index("run_id").loc["r000", "energy_j"] != 999.0


def _rekeyed_copy(tmp_path):
    """An old file (machine "old", as an older hpcds1mpi wrote it: no signature, no
    adopted ids) and a copy of it a resume re-keyed to machine "new"."""
    import shutil

    old, rekeyed = tmp_path / "old.h5", tmp_path / "rekeyed.h5"
    machine = {"machine_id": "old", "cpu_model": "AMD EPYC", "hostnames": "vm"}
    telemetry.append(old, [run_row(i, "old") for i in range(3)], machines=[machine])
    shutil.copy(old, rekeyed)
    with telemetry.TelemetryWriter(rekeyed, resume=True) as writer:  # as sweep --resume does
        writer.relabel_machine("old", {**machine, "machine_id": "new", "cpu_signature": "sig"})
    return old, rekeyed


@pytest.mark.parametrize("order", ["old_into_rekeyed", "rekeyed_into_old"])
def test_an_old_copy_of_a_rekeyed_file_merges_as_the_runs_already_there(tmp_path, order):
    # s38 tester F7: the old copy's runs were added a second time under the old id
    old, rekeyed = _rekeyed_copy(tmp_path)
    assert telemetry.read_machines(rekeyed)["adopted_ids"].tolist() == ["old"]
    out, source = (rekeyed, old) if order == "old_into_rekeyed" else (old, rekeyed)
    counts = telemetry.merge([source], out)
    assert counts["added"] == 0 and counts["rows"] == 3 and counts["kept"] == 3
    assert set(telemetry.read_runs(out)["machine_id"]) == {"new"}
    machines = telemetry.read_machines(out)
    assert machines["machine_id"].tolist() == ["new"]
    assert machines["adopted_ids"].tolist() == ["old"]  # a later merge still knows it
    assert telemetry.merge([old], out)["added"] == 0


def test_one_run_measured_under_two_launchers_is_counted_and_named(tmp_path):
    """s40 tester A7: two sweeps of one plan under the wheel's mpirun and srun --mpi=pmix gave
    the same run ids; the merge kept srun's as "4 replaced", the mpirun measurements gone
    without a word."""
    import json

    def launch(launcher, command, mpi="", args=()):
        return json.dumps({"launcher": launcher, "command": command, "flavour": "X",
                           "args": list(args), "mpi": mpi, "time_regex": "TIME (\\S+)"})

    a, b, c, out = (tmp_path / n for n in ("a.h5", "b.h5", "c.h5", "all.h5"))
    mpirun, srun = launch("mpiexec", "/venv/bin/mpirun"), launch("srun", "srun", "pmix")
    later = time.time() + 5
    telemetry.append(a, [run_row(i, kind="external", sweep_launch=mpirun) for i in range(2)])
    telemetry.append(b, [run_row(i, kind="external", sweep_launch=srun, finished_at=later)
                         for i in range(2)])
    telemetry.append(c, [run_row(i, kind="external", sweep_launch=launch(
        "mpiexec", "/venv/bin/mpirun"), finished_at=later + 5) for i in range(2)])
    counts = telemetry.merge([a, b], out)
    assert counts["replaced"] == 2 and counts["other_launcher"] == 2
    assert counts["launchers"] == ("r000", "srun --mpi=pmix", "/venv/bin/mpirun")
    same = telemetry.merge([a, c], tmp_path / "same.h5")  # one launcher: a rerun, no word
    assert same["replaced"] == 2 and same["other_launcher"] == 0 and same["launchers"] is None


def test_a_refused_merge_leaves_a_sweep_written_out_byte_for_byte(tmp_path):
    """s42 tester F11: a merge refused (two programs under one label) said "nothing was
    written" but had rewritten its existing --out at the writer's opening snapshot (new bytes,
    new mtime), where that file was written by a sweep; now nothing touches it before the final
    snapshot. As --out alone, and as --out that is one of the sources too."""
    import hashlib

    from tests.helpers import run_cli

    a = _sweep(tmp_path, "a", "sleep 0.0{size}")
    b = _sweep(tmp_path, "b", "true {size}")
    for out, sources in (("e.h5", [a]), ("h.h5", [a, b])):
        target = tmp_path / out
        target.write_bytes((b if out == "e.h5" else a).read_bytes())
        os.utime(target, (1_000_000_000, 1_000_000_000))
        before = hashlib.sha256(target.read_bytes()).hexdigest()
        res = run_cli(["telemetry", "merge", *map(str, sources), "--out", str(target)],
                      timeout=120, cwd=tmp_path)
        assert res.returncode == 2 and res.stderr.rstrip().endswith("nothing was written")
        assert hashlib.sha256(target.read_bytes()).hexdigest() == before
        assert os.stat(target).st_mtime == 1_000_000_000
    assert sorted(os.listdir(tmp_path)) == ["a.h5", "b.h5", "e.h5", "h.h5"]  # no side files


def test_a_merge_that_adds_nothing_leaves_out_byte_for_byte_and_says_so(tmp_path):
    """s42: a merge whose sources' runs were all in --out already rewrote it (new bytes, new
    mtime), which a backup or make takes as news; now --out is left as it was, said in the
    line, exit 0. One that adds a run still writes; as does a first merge into a source."""
    import hashlib

    from tests.helpers import run_cli

    def state(path):
        return hashlib.sha256(path.read_bytes()).hexdigest(), os.stat(path).st_mtime

    a = _sweep(tmp_path, "a", "sleep 0.0{size}")
    b = _sweep(tmp_path, "b", "true {size}")
    out = tmp_path / "all.h5"
    assert not telemetry.merge([a], out)["unchanged"]
    for sources in ([a], [a, out], [out]):
        os.utime(out, (1_000_000_000, 1_000_000_000))
        before = state(out)
        res = run_cli(["telemetry", "merge", *map(str, sources), "--out", str(out)],
                      timeout=120, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        assert res.stdout.strip().splitlines()[0] == (
            f"{out}: 2 runs (0 added, 0 replaced, {2 * len(sources)} already there); nothing to "
            "add: --out left as it was, byte for byte")
        assert state(out) == before
    os.utime(out, (1_000_000_000, 1_000_000_000))
    counts = telemetry.merge([a, b], out)  # b's runs are new: written
    assert counts["added"] == 2 and not counts["unchanged"]
    assert os.stat(out).st_mtime != 1_000_000_000
    again = telemetry.merge([b, a], out)
    assert again["unchanged"] and again["kept"] == 4
