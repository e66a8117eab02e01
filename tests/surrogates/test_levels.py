"""Measured knob levels per workload: computed from training rows, stored beside the bundle,
read back (a damaged file is one line), and the offer that only names what was measured."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hpcds1mpi.errors import ModelError
from hpcds1mpi.surrogates.levels import (LEVELS_FILE, MeasuredLevels, bundle_levels,
                                         levels_from_frame, mixed_commands,
                                         program_command_lines, program_commands, read_levels,
                                         runtime_line, write_levels)
from hpcds1mpi.surrogates.measured_offer import measured_offer
from hpcds1mpi.surrogates.program_command import launched_words


def runs() -> pd.DataFrame:
    rows = []
    for rpn in (1, 2):
        for threads in (1, 2):
            rows.append(dict(workload="myapp", kind="external", nodes=1, ranks_per_node=rpn,
                             threads=threads, device="cpu", precision="fp64", status="ok"))
            rows.append(dict(workload="stencil", kind="kernel", nodes=1, ranks_per_node=rpn,
                             threads=threads, device="cpu", precision="fp32", status="ok"))
    # Never really run: says nothing about the level.
    rows.append(dict(workload="myapp", kind="external", nodes=1, ranks_per_node=8, threads=1,
                     device="gpu", precision="bf16", status="unsupported"))
    return pd.DataFrame(rows)


def test_levels_come_from_the_rows_that_ran():
    levels = levels_from_frame(runs())
    app = levels["myapp"]
    assert app.external and app.precisions == ("fp64",) and app.devices == ("cpu",)
    assert app.threads == (1, 2) and app.ranks_per_node == (1, 2) and app.nodes == (1,)
    assert not levels["stencil"].external  # a kernel measured as a kernel


def test_a_level_only_failed_runs_reached_is_not_measured():
    """Was (s45 tester B4): pw.x's one 2-node run crashed, yet 2 nodes counted as measured,
    so recommend picked 2 nodes unmarked (predicted 941 ms; the job took 3.48 s). A program
    none of whose runs was ok keeps the levels it ran at (nothing else to offer)."""
    frame = runs()
    crash = dict(workload="myapp", kind="external", nodes=2, ranks_per_node=4, threads=8,
                 device="gpu", precision="fp32", status="failed")
    frame = pd.concat([frame, pd.DataFrame([crash, {**crash, "status": "oom"},
                                            {**crash, "workload": "bad"}])], ignore_index=True)
    app = levels_from_frame(frame)["myapp"]
    assert app.nodes == (1,) and app.ranks_per_node == (1, 2) and app.threads == (1, 2)
    assert app.devices == ("cpu",) and app.precisions == ("fp64",)
    assert levels_from_frame(frame)["bad"].nodes == (2,)  # never ok: the levels it ran at


def test_a_kernel_name_with_external_rows_is_a_program():
    frame = runs()
    frame.loc[frame["workload"] == "stencil", "kind"] = "external"
    assert levels_from_frame(frame)["stencil"].external


def test_a_kernels_option_deck_keeps_its_kernels_knobs(tmp_path):
    """s41 tester D5, D17: ``stencil+sweeps.100``'s runs (kind kernel) were levels of a
    program, offered bf16 and no memory floor; a bundle stored so reads them as the kernel's."""
    from dataclasses import replace

    frame = runs()
    frame.loc[frame["workload"] == "stencil", "workload"] = "stencil+sweeps.100"
    levels = levels_from_frame(frame)
    assert not levels["stencil+sweeps.100"].external and levels["myapp"].external
    write_levels(tmp_path, {**levels, "stencil+sweeps.100": replace(
        levels["stencil+sweeps.100"], external=True)})  # as a bundle before the fix wrote it
    assert not read_levels(tmp_path)["stencil+sweeps.100"].external
    assert read_levels(tmp_path)["myapp"].external


def test_an_option_decks_levels_are_given_for_its_offer(tmp_path):
    """s47 tester N2: a deck's levels (kind kernel) were never given, so ``decide/offer.py``
    offered it every level its kernel declares; ``decks=True`` gives them, a plain kernel's
    default stays None (it keeps its declared knobs)."""
    from types import SimpleNamespace

    frame = runs()
    frame.loc[frame["workload"] == "stencil", "workload"] = "stencil+sweeps.100"
    write_levels(tmp_path, levels_from_frame(frame))
    bundle = SimpleNamespace(_path=tmp_path)
    assert bundle_levels(bundle, "stencil+sweeps.100") is None
    deck = bundle_levels(bundle, "stencil+sweeps.100", decks=True)
    assert deck.precisions == ("fp32",) and deck.ranks_per_node == (1, 2)
    assert bundle_levels(bundle, "myapp").external


def test_write_read_round_trip_and_damaged_file(tmp_path):
    levels = levels_from_frame(runs())
    write_levels(tmp_path, levels)
    assert read_levels(tmp_path) == levels
    (tmp_path / LEVELS_FILE).write_text("[1, 2")
    with pytest.raises(ModelError, match="unreadable.*retrain"):
        read_levels(tmp_path)
    (tmp_path / LEVELS_FILE).write_text(json.dumps({"myapp": {"workload": "myapp"}}))
    with pytest.raises(ModelError, match=LEVELS_FILE):
        read_levels(tmp_path)
    (tmp_path / LEVELS_FILE).unlink()
    assert read_levels(tmp_path) is None  # an older bundle


def test_offer_names_every_level_left_out():
    app = MeasuredLevels("myapp", True, ("fp64",), ("cpu",), (1, 2), (1, 2), (1,))
    offer = measured_offer(app, ["cpu", "gpu"], 8)
    assert offer.precisions == ["fp64"] and offer.devices == ["cpu"]
    assert offer.threads == [1, 2] and offer.max_ranks_per_node == 2
    assert "bf16: never measured for this program" in offer.left_out
    assert "fp32: never measured for this program" in offer.left_out
    assert "gpu: never measured for this program" in offer.left_out
    assert "threads 3-8: never measured for this program (measured 1, 2)" in offer.left_out
    assert any(t.startswith("ranks per node above 2") for t in offer.left_out)
    # A CPU-only place: the GPU is not "left out", it was never on offer.
    assert not any(t.startswith("gpu") for t in measured_offer(app, ["cpu"], 8).left_out)


class _Stub:
    def __init__(self, frame):
        self._frame = frame

    def training_data(self):
        return self._frame


def test_bundle_levels_only_restrict_programs():
    bundle = _Stub(runs())
    assert bundle_levels(bundle, "myapp").precisions == ("fp64",)
    assert bundle_levels(bundle, "stencil") is None  # declared knobs
    assert bundle_levels(bundle, "never-seen") is None


def test_each_programs_runtime_source_comes_from_its_rows():
    """The rows' runtime_source (the telemetry's launch attribute) per program; mixed files
    both named; a program without it is unknown; a kernel says nothing."""
    frame = runs()
    own = "program's own time (--time-regex t=([0-9.]+))"
    frame["runtime_source"] = [own if w == "myapp" else None for w in frame["workload"]]
    other = pd.DataFrame([dict(workload="wallapp", kind="external", nodes=1, ranks_per_node=1,
                               threads=1, device="cpu", precision="fp64", status="ok",
                               runtime_source="launch wall time (s)"),
                          dict(workload="wallapp", kind="external", nodes=1, ranks_per_node=1,
                               threads=2, device="cpu", precision="fp64", status="ok",
                               runtime_source=own)])
    levels = levels_from_frame(pd.concat([frame, other], ignore_index=True))
    assert levels["myapp"].runtime == own
    assert levels["stencil"].runtime == ""  # a kernel: its own timer, not a sweep's choice
    assert levels["wallapp"].runtime == f"launch wall time (s); {own}"
    assert levels_from_frame(runs())["myapp"].runtime == "unknown"  # older telemetry


def test_the_runtime_line_says_which_time_the_model_learned():
    own = MeasuredLevels("a", True, runtime="program's own time (--time-regex t=([0-9.]+))")
    assert runtime_line(own) == "runtime: the program's own reported time (--time-regex " \
                                "'t=([0-9.]+)')"
    wall = runtime_line(MeasuredLevels("a", True, runtime="launch wall time (s)"))
    assert wall.startswith("runtime: the launch's wall time (MPI and start-up included")
    assert runtime_line(MeasuredLevels("a", True, runtime="unknown")).startswith(
        "runtime: unknown")
    assert runtime_line(MeasuredLevels("stencil", False)) is None and runtime_line(None) is None


def test_an_older_levels_file_without_runtime_still_loads(tmp_path):
    """measured_levels.json written before ``runtime``: a program's is unknown, a kernel's
    empty; a new file round-trips it."""
    old = {"myapp": {"workload": "myapp", "external": True, "precisions": ["fp64"],
                     "devices": ["cpu"], "threads": [1], "ranks_per_node": [1], "nodes": [1]},
           "stencil": {"workload": "stencil", "external": False, "precisions": ["fp32"],
                       "devices": ["cpu"], "threads": [1], "ranks_per_node": [1], "nodes": [1]}}
    (tmp_path / LEVELS_FILE).write_text(json.dumps(old))
    levels = read_levels(tmp_path)
    assert levels["myapp"].runtime == "unknown" and levels["stencil"].runtime == ""
    assert levels["myapp"].threads == (1,)
    new = {"myapp": MeasuredLevels("myapp", True, ("fp64",), runtime="launch wall time (s)")}
    write_levels(tmp_path, new)
    assert read_levels(tmp_path) == new


def test_a_program_timed_by_its_own_output_keeps_its_launch_wall_per_second(tmp_path):
    """HPCC's HPL_time is 0.31 s of a 7.1 s launch: a time limit from the predicted time alone
    killed the job (a 62-s run got --time=00:01:00 from a 0.62-s reported time)."""
    own = "program's own time (--time-regex t=([0-9.]+))"
    frame = pd.DataFrame([
        dict(workload="part", kind="external", nodes=1, ranks_per_node=1, threads=t,
             device="cpu", precision="fp64", status=status, runtime_source=source,
             runtime_s=run, elapsed_s=wall)
        for t, status, source, run, wall in [(1, "ok", own, 0.62, 62.5), (2, "ok", own, 0.7, 35.0),
                                             (4, "failed", own, 0.01, 99.0)]] + [
        dict(workload="walled", kind="external", nodes=1, ranks_per_node=1, threads=1,
             device="cpu", precision="fp64", status="ok", runtime_source="launch wall time (s)",
             runtime_s=2.0, elapsed_s=2.0)])
    levels = levels_from_frame(frame)
    assert levels["part"].wall_per_runtime == pytest.approx(62.5 / 0.62)  # the largest, ok rows
    assert levels["walled"].wall_per_runtime == 1.0
    assert levels_from_frame(runs())["myapp"].wall_per_runtime == 1.0  # no elapsed_s: none
    write_levels(tmp_path, levels)
    assert read_levels(tmp_path)["part"].wall_per_runtime == pytest.approx(62.5 / 0.62)
    assert MeasuredLevels.from_dict({"workload": "x", "external": True,
                                     "wall_per_runtime": -3}).wall_per_runtime == 1.0


def swept(command: str, sizes, launcher: str = "/x/bin/mpiexec -n {ranks}") -> pd.DataFrame:
    """Rows as ``sweep --command`` records them: the launcher and the filled-in program."""
    rows = []
    for size in sizes:
        for rpn in (1, 2):
            filled = command.replace("{size}", str(size)).replace("{ranks}", str(rpn))
            rows.append(dict(workload="myapp", kind="external", nodes=1, ranks_per_node=rpn,
                             ranks=rpn, threads=1, device="cpu", precision="fp64", status="ok",
                             size=float(size),  # as parquet gives it back beside NaNs
                             command=launcher.replace("{ranks}", str(rpn)) + " " + filled))
    return pd.DataFrame(rows)


@pytest.mark.parametrize("command, sizes, launcher, expected", [
    ("./jacobi {size} 40", (64, 128, 256), "/x/bin/mpiexec -n {ranks}", "./jacobi {size} 40"),
    ("./app --n={size} --ranks {ranks}", (64, 128), "srun --nodes=1 --ntasks={ranks} -c 1 "
     "--cpu-bind=cores --mpi=pmi2", "./app --n={size} --ranks {ranks_per_node}"),
    ("python3 app.py {size}", (10, 20), "mpirun.openmpi -n {ranks} --allow-run-as-root",
     "python3 app.py {size}"),
    ("./app in_{size}.dat 'a b'", (7, 8), "mpiexec -n {ranks}", "./app in_{size}.dat 'a b'"),
    ("./jacobi {size} 40", (64,), "mpiexec -n {ranks}", "./jacobi {size} 40"),  # one size
    ("./jacobi {size} 40", (40,), "mpiexec -n {ranks}", "./jacobi 40 40"),  # which 40?
    ("hpcc", (200, 300), "mpiexec -n {ranks}", "hpcc"),  # the size is in its input file
    ("nwchem.mpich s{size}.nw", (2, 4, 6), "mpiexec -n {ranks}", "nwchem.mpich s{size}.nw"),
    ("./jacobi {size}", (64, 128), "./not-a-launcher", ""),
])
def test_a_programs_command_is_kept_with_its_size_put_back(command, sizes, launcher, expected):
    """advise matches a user's script to the program by it and reads the size where
    ``{size}`` is; before, the bundle kept no command and advise never found a program's
    size without --size."""
    assert levels_from_frame(swept(command, sizes, launcher))["myapp"].command == expected


def test_a_kernels_levels_have_no_command_and_older_files_load(tmp_path):
    frame = pd.concat([swept("./jacobi {size} 40", (64, 128)), runs()], ignore_index=True)
    levels = levels_from_frame(frame)
    assert levels["stencil"].command == ""
    write_levels(tmp_path, levels)
    assert read_levels(tmp_path)["myapp"].command == "./jacobi {size} 40"
    old = {"myapp": {"workload": "myapp", "external": True},
           "stencil": {"workload": "stencil", "external": False}}
    (tmp_path / LEVELS_FILE).write_text(json.dumps(old))
    assert read_levels(tmp_path)["myapp"].command is None  # not kept: read from the rows
    assert read_levels(tmp_path)["stencil"].command == ""


def test_program_commands_from_the_levels_or_an_older_bundles_rows(tmp_path):
    frame = swept("./jacobi {size} 40", (64, 128))
    assert program_commands(_Stub(frame)) == {"myapp": "./jacobi {size} 40"}

    class Older(_Stub):  # measured_levels.json written before the command was kept
        _path = tmp_path

    (tmp_path / LEVELS_FILE).write_text(json.dumps({"myapp": {"workload": "myapp",
                                                              "external": True}}))
    assert program_commands(Older(frame)) == {"myapp": "./jacobi {size} 40"}
    assert program_commands(Older(runs())) == {}  # rows without commands: none known


def test_a_program_swept_with_two_command_lines_keeps_both_and_says_so(tmp_path):
    """Before, rows of two command lines left the program's command "" (advise no longer knew
    the program or its size) and nothing was said."""
    frame = pd.concat([swept("./jacobi {size} 40", (64, 128, 256)),
                       swept("./jacobi {size} 40 --fast", (64,))], ignore_index=True)
    levels = levels_from_frame(frame)
    app = levels["myapp"]
    assert app.command == "./jacobi {size} 40"
    assert app.other_commands == ("./jacobi {size} 40 --fast",)
    write_levels(tmp_path, levels)
    assert read_levels(tmp_path) == levels

    class Saved(_Stub):
        _path = tmp_path

    assert program_commands(Saved(frame)) == {"myapp": "./jacobi {size} 40"}
    assert program_command_lines(Saved(frame)) == {
        "myapp": ("./jacobi {size} 40", "./jacobi {size} 40 --fast")}
    [line] = mixed_commands(levels)
    assert line.startswith("note: the runs of myapp ran 2 command lines, fitted as one "
                           "program: './jacobi {size} 40' (most runs) and './jacobi {size} "
                           "40 --fast'; a script from recommend runs the one its pick ran; ")
    assert mixed_commands(levels_from_frame(swept("./jacobi {size} 40", (64, 128)))) == []
    # one input file per size is one command line, not one per size (s27 tester Q 2)
    assert mixed_commands(levels_from_frame(swept("nwchem.mpich s{size}.nw", (2, 4, 6)))) == []
    assert MeasuredLevels.from_dict({"workload": "x", "external": True,
                                     "command": "./x"}).other_commands == ()  # older file


def test_a_bundle_that_split_one_numbered_input_into_lines_reads_its_rows_again(tmp_path):
    """A bundle trained before sizes were read inside a word kept 'nwchem.mpich s2.nw' (and
    s6.nw, s4.nw as other lines): recommend wrote s2.nw for size 5 (s27 tester Q 2)."""
    frame = swept("nwchem.mpich s{size}.nw", (2, 4, 6))

    class Older(_Stub):
        _path = tmp_path

    (tmp_path / LEVELS_FILE).write_text(json.dumps({"myapp": {
        "workload": "myapp", "external": True, "command": "nwchem.mpich s2.nw",
        "other_commands": ["nwchem.mpich s6.nw", "nwchem.mpich s4.nw"]}}))
    assert read_levels(tmp_path)["myapp"].command is None
    assert program_commands(Older(frame)) == {"myapp": "nwchem.mpich s{size}.nw"}
    two = {"workload": "x", "external": True, "command": "./a -n 1", "other_commands": ["./b"]}
    assert MeasuredLevels.from_dict(two).command == "./a -n 1"  # two programs: kept as stored


@pytest.mark.parametrize("command, words", [
    ("/x/.venv/bin/mpiexec -n 2 -ppn 2 ./jacobi 64 40", ["./jacobi", "64", "40"]),
    ("srun --nodes=1 --ntasks=2 --ntasks-per-node=2 -c 1 --cpu-bind=cores "
     "--kill-on-bad-exit=1 --mpi=pmi2 python3 app.py 64", ["python3", "app.py", "64"]),
    ("/usr/bin/mpirun.openmpi -n 4 --allow-run-as-root --oversubscribe --map-by ppr:2:node "
     "hpcc", ["hpcc"]),
    ("mpiexec -n 1 ./app 'a b' 3", ["./app", "a b", "3"]),
    ("./app 64", None),  # no launcher: nothing to tell the program from
    ("mpiexec -n 1 'unbalanced", None),
])
def test_a_recorded_command_line_is_read_as_a_launch_line(command, words):
    assert launched_words(command) == words


WALL_REGEX = r"^WALL\s+\d+\s+([0-9.]+)"


def test_the_runtime_line_prints_the_regex_as_typed_so_it_can_be_pasted():
    """A repr doubled every backslash: a regex copied from it never matched (issue s25 e7)."""
    import shlex

    lv = MeasuredLevels("a", True, runtime=f"program's own time (--time-regex {WALL_REGEX})")
    line = runtime_line(lv)
    assert "\\\\" not in line
    pasted = line.partition("--time-regex ")[2].removesuffix(")")
    assert shlex.split(pasted) == [WALL_REGEX]


def test_the_recorded_measurement_gives_the_time_regex_and_says_what_is_unknown():
    from hpcds1mpi.surrogates.levels import MEASURE_KEYS, recorded_measurement

    own = MeasuredLevels("a", True, runtime=f"program's own time (--time-regex {WALL_REGEX})")
    known, unknown = recorded_measurement(own)
    assert known == {"time_regex": WALL_REGEX}
    assert unknown == ["fom_regex", "ranks_regex", "output_file", "workdir", "setup",
                       "fail_regex"]
    # timed by the launch: no regex is the record, not a gap
    assert recorded_measurement(MeasuredLevels("a", True, runtime="launch wall time (s)"))[0] \
        == {"time_regex": ""}
    # mixed, unknown, never measured: nothing known
    for lv in (MeasuredLevels("a", True, runtime="unknown"), None,
               MeasuredLevels("a", True, runtime=f"launch wall time (s); {own.runtime}")):
        assert recorded_measurement(lv) == ({}, list(MEASURE_KEYS))


def test_rows_that_carry_their_reading_options_record_them_all(tmp_path):
    from hpcds1mpi.surrogates.levels import read_levels, recorded_measurement, write_levels

    frame = runs()
    opts = {"time_regex": WALL_REGEX, "fom_regex": "", "ranks_regex": "r=(\\d+)",
            "output_file": "", "workdir": "sc/{size}-{ranks}", "fail_regex": "NOT converged",
            "setup": "decomposePar -force"}
    frame["measure_options"] = json.dumps(opts)
    frame["runtime_source"] = f"program's own time (--time-regex {WALL_REGEX})"
    levels = levels_from_frame(frame)
    assert levels["myapp"].measured_with == opts
    write_levels(tmp_path, levels)
    again = read_levels(tmp_path)["myapp"]
    assert again.measured_with == opts and recorded_measurement(again) == (opts, [])
    frame.loc[0, "measure_options"] = json.dumps({**opts, "workdir": "other"})
    assert levels_from_frame(frame)["myapp"].measured_with is None  # they disagree
    frame.loc[0, "measure_options"] = json.dumps({**opts, "fail_regex": ""})
    assert levels_from_frame(frame)["myapp"].measured_with is None  # one counted them ok


def test_reading_options_recorded_before_fail_regex_existed_say_none(tmp_path):
    """Rows (a bundle's ``measure_options``) and a levels file written before --fail-regex
    was recorded: no fail regex ("" known), never 'the bundle does not record it'."""
    from hpcds1mpi.surrogates.levels import read_levels, recorded_measurement, write_levels

    frame = runs()
    old = {"time_regex": WALL_REGEX, "fom_regex": "", "ranks_regex": "", "output_file": "",
           "workdir": ""}
    frame["measure_options"] = json.dumps(old)
    frame["runtime_source"] = f"program's own time (--time-regex {WALL_REGEX})"
    levels = levels_from_frame(frame)
    assert levels["myapp"].measured_with == {**old, "fail_regex": "", "setup": ""}
    write_levels(tmp_path, levels)
    doc = json.loads((tmp_path / LEVELS_FILE).read_text())
    doc["myapp"]["measured_with"].pop("fail_regex")  # as an older bundle wrote it
    (tmp_path / LEVELS_FILE).write_text(json.dumps(doc))
    known, unknown = recorded_measurement(read_levels(tmp_path)["myapp"])
    assert known["fail_regex"] == "" and unknown == []


def test_runs_of_the_launch_wall_and_of_the_programs_own_time_are_a_conflict():
    from hpcds1mpi.surrogates.levels import runtime_conflicts

    own = f"program's own time (--time-regex {WALL_REGEX})"
    mixed = {"xdlu": MeasuredLevels("xdlu", True, runtime=f"launch wall time (s); {own}")}
    [line] = runtime_conflicts(mixed)
    assert "xdlu" in line and "the launch's wall time vs --time-regex '" in line
    assert "\n" not in line
    same = {"a": MeasuredLevels("a", True, runtime=own),
            "b": MeasuredLevels("b", True, runtime=f"unknown; {own}"),
            "k": MeasuredLevels("k", False)}
    assert runtime_conflicts(same) == []


def test_train_and_learn_refuse_one_program_timed_two_ways():
    """A calibration sweep without the earlier sweep's --time-regex timed the launch, not the
    program: both in one model predict neither, so training is refused in one line."""
    from hpcds1mpi.errors import DataError
    from hpcds1mpi.surrogates.levels import refuse_mixed_runtimes

    own = "program's own time (--time-regex t=([0-9.]+))"
    rows = [dict(workload="xdlu", kind="external", nodes=1, ranks_per_node=1, threads=t,
                 device="cpu", precision="fp64", status="ok", runtime_source=source)
            for t, source in ((1, own), (2, "launch wall time (s)"))]
    with pytest.raises(DataError, match="the runs of xdlu measured different runtimes") as info:
        refuse_mixed_runtimes(pd.DataFrame(rows))
    assert info.value.exit_code == 2 and "\n" not in str(info.value)
    refuse_mixed_runtimes(pd.DataFrame(rows[:1]))  # one way: fine


def test_runs_that_ignored_their_threads_are_recorded_and_offered_one_thread(tmp_path):
    """s41 tester A3: a program whose runs at 2 threads kept one core busy per rank (CPU time
    over wall time), as at 1 thread, is offered 1 thread, said why; an older levels file, or
    a damaged record, has none."""
    frame = runs().assign(measured_s=10.0)
    frame["cpu_s"] = 9.0 * frame["ranks_per_node"]  # 0.9 cores busy per rank, any threads
    app = levels_from_frame(frame)["myapp"]
    assert app.idle_threads == {"threads": [2], "busy": 0.9, "vs_one_thread": 1.0}
    assert levels_from_frame(frame)["stencil"].idle_threads is None  # a kernel: declared
    write_levels(tmp_path, {"myapp": app})
    assert read_levels(tmp_path)["myapp"] == app
    offer = measured_offer(app, ["cpu"], 8)
    assert offer.threads == [1] and not offer.uses_threads
    assert any(line.startswith("threads = 1 only: myapp's runs at 2 threads kept 0.90 cores")
               for line in offer.left_out)
    doc = json.loads((tmp_path / LEVELS_FILE).read_text())
    for stored in (None, {"threads": "2", "busy": 0.9}, {"threads": [2], "busy": "x"}):
        doc["myapp"]["idle_threads"] = stored
        (tmp_path / LEVELS_FILE).write_text(json.dumps(doc))
        assert read_levels(tmp_path)["myapp"].idle_threads is None
    del doc["myapp"]["idle_threads"]  # a file older than the record
    (tmp_path / LEVELS_FILE).write_text(json.dumps(doc))
    assert measured_offer(read_levels(tmp_path)["myapp"], ["cpu"], 8).threads == [1, 2]
    used = frame.assign(cpu_s=frame["cpu_s"] * frame["threads"])  # 1.8 cores at 2 threads
    assert levels_from_frame(used)["myapp"].idle_threads is None
