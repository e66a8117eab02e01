"""One launch at a time per --output-file, across processes (s33 tester D6)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from hpcds1mpi.measure.output_lock import lock_path, output_lock

HOLD = """
import sys, time
from hpcds1mpi.measure.output_lock import output_lock
with output_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_a_second_process_waits_for_the_lock_and_says_so_once(tmp_path):
    out = tmp_path / "history.txt"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out), "1.0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        said, kept = [], set()
        start = time.monotonic()
        with output_lock(str(out), said.append, kept):
            waited = time.monotonic() - start
        with output_lock(str(out), said.append, kept):
            pass
    finally:
        holder.wait(10)
    assert waited > 0.5
    assert len(said) == 1 and "another process is running a launch that writes" in said[0]
    assert lock_path(str(tmp_path / "." / "history.txt")) == str(tmp_path /
                                                                 ".history.txt.hpcds1mpi-lock")


def test_no_output_file_or_an_unwritable_folder_locks_nothing(tmp_path):
    with output_lock(None):
        pass
    with output_lock(str(tmp_path / "missing" / "out.txt")):
        pass


#: A program that appends its time to a shared history file, then runs on (the tester's app).
APPENDS = """#!{python}
import sys, time
size = int(sys.argv[1])
with open("history.txt", "a") as fh:
    fh.write(f"n={{size}} solve={{size / 10000:.4f}}\\n")
time.sleep(0.15)
"""


def test_concurrent_sweeps_with_one_output_file_each_read_their_own_lines(tmp_path):
    # s33 tester D6: sweep C recorded sweep A's size-3 time as its size-40 repeat
    import os

    from hpcds1mpi.records import telemetry
    from tests.helpers import hpcds1mpi_exe

    app = tmp_path / "app"
    app.write_text(APPENDS.format(python=sys.executable))
    app.chmod(0o755)
    common = ["sweep", "--min-repeats", "4", "--max-repeats", "4", "--min-time", "0",
              "--no-progress", "--output-file", "history.txt", "--time-regex",
              r"solve=([0-9.]+)", "--ranks-per-node", "1", "--command", "./app {size}",
              "--label", "conc"]
    sweeps = {name: subprocess.Popen([hpcds1mpi_exe(), *common, "--sizes", size, "--out",
                                      f"{name}.h5"], cwd=tmp_path, stderr=subprocess.PIPE,
                                     text=True, env=dict(os.environ))
              for name, size in (("a", "3"), ("b", "3"), ("c", "40"))}
    said = {name: p.communicate(timeout=240)[1] for name, p in sweeps.items()}
    assert all(p.returncode == 0 for p in sweeps.values()), said
    for name, seconds in (("a", 0.0003), ("b", 0.0003), ("c", 0.004)):
        runs = telemetry.read_runs(tmp_path / f"{name}.h5")
        row = runs.iloc[0]  # every repeat its own: min and max too
        assert row["status"] == "ok" and row["repeats"] == 4, said
        assert row["runtime_min_s"] == row["runtime_max_s"] == seconds, (name, said)
    waits = [text.count("another process is running a launch") for text in said.values()]
    assert max(waits) == 1 and sum(waits) >= 1, said  # waiting said once per sweep


def test_a_long_output_name_still_gets_a_lock_it_can_make(tmp_path):
    """The lock is named as every side file is (writers.side_name): ".NAME.hpcds1mpi-lock" of
    a 250-byte name would pass NAME_MAX and the launches would not take turns."""
    out = tmp_path / ("h" * 250)
    name = lock_path(str(out))
    assert len(os.path.basename(name).encode()) <= 255
    with output_lock(str(out)):
        assert os.path.exists(name)


def test_an_output_files_lock_planted_as_a_link_or_fifo_is_refused(tmp_path):
    """s35 tester R1, R2: the lock was opened for writing through a link planted there (and
    made where a dangling one pointed)."""
    import pytest

    from hpcds1mpi.errors import OutputError
    from tests.planted_files import left_as_it_was, plant, plant_link, private_file, within

    out, key = tmp_path / "history.txt", private_file(tmp_path / "id_key")
    plant_link(tmp_path / ".history.txt.hpcds1mpi-lock", key)
    with pytest.raises(OutputError, match=r"\.history\.txt\.hpcds1mpi-lock is a symbolic link"):
        with output_lock(str(out)):
            pass
    assert left_as_it_was(key)
    (tmp_path / ".history.txt.hpcds1mpi-lock").unlink()
    plant("fifo", tmp_path / ".history.txt.hpcds1mpi-lock")
    with within(1.0), pytest.raises(OutputError, match="is a FIFO"):
        with output_lock(str(out)):
            pass


def test_a_hard_linked_lock_of_a_copied_run_folder_still_locks(tmp_path):
    """s35 review: a run folder copied with `cp -al` shares the never-written lock file; it was
    refused as "a hard link" once side files were opened only as files of one name."""
    import os
    import subprocess

    first = tmp_path / "run1"
    first.mkdir()
    with output_lock(str(first / "out.txt")):
        pass
    subprocess.run(["cp", "-al", str(first), str(tmp_path / "run2")], check=True)
    assert os.stat(tmp_path / "run2" / ".out.txt.hpcds1mpi-lock").st_nlink == 2
    with output_lock(str(tmp_path / "run2" / "out.txt")):
        pass
