"""A recommendation shown: units, JSON (no NaN, alternatives and front), the table, and what
the script writer refuses."""

from __future__ import annotations

import json
import math

import pytest

from hpcds1mpi.decide.recommend import recommend
from hpcds1mpi.decide.recommendation import (
    TOP_ALTERNATIVES,
    emit_script,
    format_energy,
    format_table,
    format_time,
    to_dict,
)
from hpcds1mpi.errors import ConfigError
from tests.fake_bundle import FakeBundle, fake_places, isolate_user_files


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


@pytest.mark.parametrize("seconds, text", [
    (0.0123, "12.3 ms"), (5.0, "5 s"), (119.0, "119 s"), (600.0, "10 min"), (7200.0, "2 h"),
    (float("nan"), "?"),
])
def test_format_time(seconds, text):
    assert format_time(seconds) == text


@pytest.mark.parametrize("joules, text", [
    (12.0, "12 J"), (4500.0, "4.5 kJ"), (2.5e6, "2.5 MJ"), (float("inf"), "?"),
])
def test_format_energy(joules, text):
    assert format_energy(joules) == text


@pytest.mark.parametrize("fmt, value, text", [
    (format_time, 0.9996, "1 s"), (format_time, 0.9994, "999 ms"), (format_time, 119.96, "2 min"),
    (format_time, 999.6 * 3600, "1000 h"), (format_energy, 999.6, "1 kJ"),
    (format_energy, 999.4, "999 J"), (format_energy, 999_999.5, "1 MJ"),
    (format_energy, 2e9, "2000 MJ"),
])
def test_a_value_just_under_a_unit_is_written_in_the_next_unit(fmt, value, text):
    """The unit was chosen before rounding to three digits: 0.9996 s printed "1e+03 ms"
    (s40 tester D4)."""
    assert fmt(value) == text


class UnknownFailureOdds(FakeBundle):
    """Answers NaN for the mean failure probability (the JSON must say null, not NaN)."""

    def predict(self, df):
        out = super().predict(df)
        out["fail_prob"] = float("nan")
        return out


def _config(row: dict) -> tuple:
    return tuple(row[k] for k in ("partition", "nodes", "ranks_per_node", "threads", "device",
                                  "precision"))


def test_json_has_pick_alternatives_front_and_no_nan():
    rec = recommend(UnknownFailureOdds(), "gemm", 1024, fake_places("cpu", "gpu-big"))
    data = to_dict(rec)
    json.dumps(data, allow_nan=False)  # raises on NaN, which is not JSON
    assert data["pick"]["fail_prob"] is None
    assert data["pick"]["partition"] == rec.picked.partition.name
    assert len(data["alternatives"]) == min(TOP_ALTERNATIVES, len(rec.picked.choice.ranking) - 1)
    times = [a["runtime_s"] for a in data["alternatives"]]
    assert times == sorted(times) and data["pick"]["runtime_s"] <= times[0]
    assert _config(data["pick"]) not in {_config(a) for a in data["alternatives"]}
    assert sum(p["pick"] for p in data["front"]) == 1
    assert {p["partition"] for p in data["partitions"]} == {"cpu", "gpu-big"}
    assert [p["status"] for p in data["partitions"]].count("picked") == 1
    # The verdict's NaN distances (none here) and thresholds are finite or None.
    assert all(v is None or not isinstance(v, float) or math.isfinite(v)
               for v in data["verdict"].values())


def test_table_names_pick_rejections_alternatives_and_front():
    rec = recommend(FakeBundle(), "gemm", 1024, fake_places("cpu", "gpu-big"), objective="time")
    text = format_table(rec)
    lines = text.splitlines()
    assert lines[0] == "hpcds1mpi recommend: gemm, size 1024, objective time"
    assert lines[1].startswith(f"✓ lab/{rec.picked.partition.name}: ")
    (other,) = {"cpu", "gpu-big"} - {rec.picked.partition.name}
    assert any(line.startswith(f"✗ lab/{other}: ") for line in lines)
    # the legend of rows marked unmeasured follows where any is (s31 tester Q5)
    assert "Top alternatives (energy modelled; unmeasured = a level never measured, " \
           "extrapolated):" in lines
    front = [line for line in lines if line.startswith("Runtime–energy front")][0]
    assert f"({len(rec.picked.choice.front)} points" in front


def test_escalated_job_gets_a_calibration_table_and_only_a_slurm_sweep():
    rec = recommend(FakeBundle(), "brand-new-code", 500, fake_places("cpu"),
                            program="./app {size}")
    text = format_table(rec)
    assert "! verdict escalate: no settings guessed" in text
    assert "Calibration sweep (measure these, then hpcds1mpi learn):" in text
    # Not a kernel: the sweep measures the user's program (without one it is refused).
    assert "calibration sweep" in emit_script(rec, "slurm", "./new --n {size}")
    with pytest.raises(ConfigError, match="not a built-in kernel"):
        emit_script(rec, "slurm", None)
    with pytest.raises(ConfigError, match="Slurm only") as info:
        emit_script(rec, "pbs", None)
    # A PBS user cannot "use --emit slurm": the line says what to do on PBS instead.
    assert "use --emit slurm" not in str(info.value)
    assert "drop --emit" in str(info.value) and "sweep in a pbs job" in str(info.value)
    rec.calibration_steps = []
    with pytest.raises(ConfigError, match="nothing to run"):
        emit_script(rec, "slurm", None)


def test_unmet_constraints_name_the_option_to_relax():
    from hpcds1mpi.decide.recommendation import unmet_constraints
    from hpcds1mpi.decide.system1 import Constraints

    places = fake_places("gpu-small", "gpu-big")
    bundle = FakeBundle()
    fits = recommend(bundle, "gemm", 2048, places, constraints=Constraints(deadline_s=1e6))
    assert unmet_constraints(fits) is None
    tight = recommend(bundle, "gemm", 2048, places, constraints=Constraints(deadline_s=1e-9))
    line = unmet_constraints(tight)
    assert line.startswith("no configuration meets --deadline (") and "relax --deadline" in line
    assert "cannot meet the deadline" in line and "\n" not in line
    poor = recommend(bundle, "gemm", 2048, places, constraints=Constraints(energy_budget_j=1e-9))
    assert "--energy-budget" in unmet_constraints(poor)
    unconstrained = recommend(bundle, "brand-new-code", 500, places)  # escalated, not refused
    assert unmet_constraints(unconstrained) is None


def test_every_row_of_the_json_is_plain_and_without_nan():
    rec = recommend(UnknownFailureOdds(), "gemm", 1024, fake_places("cpu", "gpu-big"))
    data = to_dict(rec)
    rows = data["alternatives"] + data["front"] + [p["best"] for p in data["partitions"]
                                                  if "best" in p]
    assert rows and all(type(r) is dict for r in rows)  # no marker class leaks out
    assert all(r["fail_prob"] is None for r in rows)  # NaN in every row, None in the JSON
    assert all(type(r["nodes"]) is int and type(r["runtime_s"]) is float for r in rows)
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    table = format_table(rec)  # the table reads the same rows, NaN as unknown
    assert rec.picked.partition.name in table


def test_the_script_time_limit_allows_a_programs_measured_launch_wall():
    """A program timed by its own output: the predicted time is part of the launch (HPCC's
    HPL_time), so the time limit takes the measured wall per reported second along."""
    rec = recommend(FakeBundle(), "gemm", 1024, fake_places("cpu"))
    rec.kernel_runs = None  # a program's launch (a kernel's counts its run: s47 tester N3)
    plain = emit_script(rec, "slurm", None)
    rec.wall_per_runtime = 5000.0
    scaled = emit_script(rec, "slurm", None)

    def minutes(script):
        text = next(ln for ln in script.splitlines() if ln.startswith("#SBATCH --time="))
        h, m, s = text.split("=", 1)[1].split("-")[-1].split(":")
        return int(h) * 60 + int(m)

    assert minutes(scaled) > minutes(plain)
    assert "x 5e+03 (its launch wall per second of its own time)" in scaled
    assert "launch wall" not in plain


def test_the_script_comment_states_the_limit_it_asks_and_its_rule():
    """s40 tester D6: "time limit allows 6.32x the predicted time" for a 60 s limit that
    allowed 484x it: the factor multiplies the upper runtime, then the margin and the 60 s
    floor apply. The comment now says the limit and the rule, in advise's words."""
    rec = recommend(FakeBundle(), "gemm", 1024, fake_places("cpu"))
    rec.kernel_runs = None  # a program's launch (a kernel's counts its run: s47 tester N3)
    rec.wall_per_runtime = 6.32
    script = emit_script(rec, "slurm", None)
    asked = next(ln for ln in script.splitlines() if ln.startswith("#SBATCH --time="))
    comment = next(ln for ln in script.splitlines() if ln.startswith("# recommended by"))
    assert "allows" not in comment, comment
    assert (f"; time limit {asked.split('=', 1)[1]}: 1.5 x the predicted upper runtime x 6.32 "
            "(its launch wall per second of its own time), whole minutes, at least 1 min"
            in comment), comment


def test_a_note_is_shown_once_in_the_table_and_listed_in_the_json():
    from dataclasses import replace

    from hpcds1mpi.cluster import Cluster
    from tests.fake_bundle import fake_partitions

    site = replace(fake_partitions()["cpu"], name="standard")
    rec = recommend(FakeBundle(), "gemm", 1024, [(Cluster("lab", {"standard": site}), site)])
    note = "partition lab/standard: predicted as trained partition cpu (same hardware)"
    # The fake bundle's pick is a level never measured below the measured best: its own note
    # (decide/unmeasured_bounds.py) comes second, each note once.
    notes = to_dict(rec)["notes"]
    assert notes[0] == note and len(notes) == 2 and notes[1].startswith(
        "picked a level never measured: its whole interval"), notes
    for said in notes:
        assert format_table(rec).splitlines().count(f"  note: {said}") == 1, said
    plain = recommend(FakeBundle(), "gemm", 300, fake_places("cpu"))
    plain.notes = []  # (its pick is off the front, which a note now says: s40 tester D14)
    assert "notes" not in to_dict(plain)


def test_every_partition_not_picked_says_why_in_the_json():
    """An escalated job's partitions were 'rejected' with reason "" in the JSON and HTTP."""
    from hpcds1mpi.places import allowed_places
    from hpcds1mpi.decide import recommend as rec_mod
    from hpcds1mpi.decide.model_bundle import load_model
    from tests.helpers import REPO

    places = allowed_places(str(REPO / "tests/data/jobscripts/lab.toml"), ())
    out = to_dict(rec_mod.recommend(load_model(None), "a_program_never_seen", 100, places))
    assert out["verdict"]["verdict"] == "escalate"
    assert all(p["reason"] for p in out["partitions"] if p["status"] == "rejected")


class NoisyWorkload(FakeBundle):
    """Records a measured repeat noise of 50 % for every workload, its interval +-1 %."""

    spread = 0.01

    def predict(self, df):
        out = super().predict(df)
        out["runtime_noise"] = 0.5
        return out


def test_a_single_run_band_shows_the_measured_scatter_the_model_interval_hides():
    # At 300, between the measured 256 and 512, the pick (2 nodes x 8 x 2, fp32: measured
    # levels, no run of its own) keeps a narrow interval; at 1024 its run there, or a level
    # never measured, widens it to the noise already (s31 System 1 change).
    rec = recommend(NoisyWorkload(), "gemm", 300, fake_places("cpu"), objective="time")
    pick = to_dict(rec)["pick"]
    assert not pick.get("unmeasured") and pick["measured_runs"] == 0, pick
    assert pick["runtime_hi"] < pick["runtime_s"] * 1.25, pick
    band = pick["single_run"]
    # Only the noise known (no fastest / slowest repeat in the training rows): every repeat of
    # a run 50 % apart lies within 50 % of its median, on a side unrecorded (s38 tester B3).
    assert band["noise"] == 0.5 and band["source"] == "noise"
    assert band["runtime_lo"] == pytest.approx(pick["runtime_s"] * 0.5)
    assert band["runtime_hi"] == pytest.approx(pick["runtime_s"] * 1.5)
    line = [x for x in format_table(rec).splitlines() if x.startswith("  a single run:")]
    assert line == [f"  {band['line']}"] and "measured 50% apart" in line[0]
    # Without a recorded noise (or inside the model's interval) nothing is added.
    quiet = recommend(FakeBundle(), "gemm", 300, fake_places("cpu"), objective="time")
    assert "single_run" not in to_dict(quiet)["pick"]
    assert "a single run:" not in format_table(quiet)


def test_an_option_decks_calibration_names_the_plan_that_measures_it():
    """s41 tester D1: ``stencil+sweeps.100``'s calibration script was refused as "not a
    built-in kernel ... give your program's command", advice that measures another workload,
    and its steps were listed without saying they need the options."""
    rec = recommend(FakeBundle(), "stencil+sweeps.100", 500, fake_places("cpu"))
    assert rec.calibration_steps
    assert "Calibration sweep (measure these with sweep --plan FILE, its [[kernel]] name = " \
           "\"stencil\" with the options of stencil+sweeps.100 in extra, then" in format_table(rec)
    with pytest.raises(ConfigError, match=r"^no calibration sweep for 'stencil\+sweeps.100': it "
                       r"is kernel stencil measured with kernel options .*sweep --plan FILE"):
        emit_script(rec, "slurm", None)


def test_a_programs_script_runs_its_recorded_command_and_no_kernel_line_is_made_up():
    """A program's pick used to get ``hpcds1mpi run lammps ...`` (no such kernel: the job
    fails) when --program was left out; now the command its sweep ran, said, or a refusal."""
    from hpcds1mpi.decide.recommendation import script_program

    rec = recommend(FakeBundle(), "gemm", 1024, fake_places("cpu"), objective="time")
    assert script_program(rec, None) == (None, None)  # a kernel: its own run line
    assert "hpcds1mpi run gemm" in emit_script(rec, "slurm", None)
    rec.workload = "myapp"
    with pytest.raises(ConfigError, match="not a built-in kernel.*--program"):
        emit_script(rec, "slurm", None)
    rec.program_command = "./myapp --n {size}"
    program, note = script_program(rec, None)
    assert program == "./myapp --n {size}" and "recorded in the model" in note
    script = emit_script(rec, "slurm", program, notes=[note])
    assert "./myapp --n 1024" in script and "hpcds1mpi run" not in script
    program, note = script_program(rec, "./other {size}")  # given wins, said (s36 tester Q2)
    assert program == "./other {size}" and note.startswith("--program runs other, not myapp")
    assert "carries no {size}" not in script


def test_a_programs_script_without_its_size_says_where_the_size_must_be():
    """s28 testers U, T: `abinit si.abi` / `cp2k.psmp -i h2o.inp` for size 1024 showed the size
    nowhere, and the second differed from the measured `-i h2o-{size}.inp` without a word."""
    rec = recommend(FakeBundle(), "gemm", 1024, fake_places("cpu"), objective="time")
    rec.workload, rec.program_command = "cp2k", "/opt/cp2k/mycode -i h2o-{size}.inp"
    script = emit_script(rec, "slurm", "/opt/cp2k/mycode -i h2o.inp")
    assert ("# note: the command carries no {size}: the prediction is for size 1024, which must "
            "be in the program's input; it was measured as '/opt/cp2k/mycode -i h2o-{size}.inp'"
            ) in script
    # measured so too (the size in each --workdir)
    rec.program_command = "/opt/abinit/othercode si.abi"
    script = emit_script(rec, "slurm", "/opt/abinit/othercode si.abi")
    assert ("# note: the command carries no {size}: the prediction is for size 1024, which must "
            "be in the program's input\n") in script


def test_the_pick_s_script_asks_for_its_predicted_memory_with_margin():
    """Feasibility is judged against the node's memory, yet the script asked for none, so the
    site's default memory per CPU (often far less) applied (s26 tester l 11)."""
    import re

    rec = recommend(FakeBundle(), "gemm", 1024, fake_places("cpu"), objective="time")
    row = to_dict(rec)["pick"]
    need = row["mem_need_mb"]
    assert need and need > 0
    slurm = emit_script(rec, "slurm", None)
    asked = int(re.search(r"^#SBATCH --mem=(\d+)M$", slurm, re.M).group(1))
    assert asked * 2 ** 20 / 1e6 >= need * 1.5 - 1 and "predicted need" in slurm
    assert re.search(r"^#PBS -l select=\S*:mem=\d+mb", emit_script(rec, "pbs", None), re.M)


def test_the_default_job_name_of_a_long_label_is_shortened_not_refused():
    """sweep --label takes 125 characters; "hpcds1mpi-" + it passed the 128-character job-name
    limit, so no script of that program could ever be written (s26 tester n 4)."""
    import re

    rec = recommend(FakeBundle(), "gemm", 1024, fake_places("cpu"), objective="time")
    rec.workload = "w" * 125
    script = emit_script(rec, "slurm", "./app {size}")
    name = re.search(r"^#SBATCH --job-name=(\S+)$", script, re.M).group(1)
    assert len(name) == 128 and name.startswith("hpcds1mpi-www")
    with pytest.raises(ConfigError, match="job name"):  # one the user gives is still checked
        emit_script(rec, "slurm", "./app {size}", job_name="x" * 129)


@pytest.mark.parametrize("workload, size", [("stencil", 4), ("mysolver", 100)])
def test_a_calibration_on_trained_hardware_under_another_name_says_so(workload, size, capsys):
    """s31 tester Q8: the shipped bundle on lab.toml escalates a size or workload it never
    measured; the header called lab/standard "a partition the model was not trained on"
    while the note above said it has the trained partition's hardware."""
    from pathlib import Path

    from tests.badinput.harness import invoke

    lab = Path(__file__).parents[1] / "data" / "jobscripts" / "lab.toml"
    program = [] if workload == "stencil" else ["--program", f"./{workload} {{size}}"]
    res = invoke(capsys, ["recommend", "--workload", workload, "--size", str(size),
                          "--cluster", str(lab), *program])
    assert res.code == 0, res.err
    header = next(line for line in res.out.splitlines() if line.startswith("Calibration"))
    assert "not trained on" not in header
    assert "standard has local's hardware under another name" in header


def test_the_script_of_a_pick_that_is_not_auto_says_why():
    """s40 tester B11: the script of an extrapolated pick said only "verdict confirm"; the
    answer's reasons (a size beyond the measured range) were in the table, not the script."""
    rec = recommend(FakeBundle(), "gemm", 1024, fake_places("cpu"), objective="time")
    script = emit_script(rec, "slurm", None)
    assert rec.verdict.verdict == "confirm" and rec.verdict.reasons  # a precision never measured
    for reason in rec.verdict.reasons:
        assert f"# note: verdict confirm: {reason}\n" in script
    rec.verdict.verdict, rec.verdict.reasons = "auto", []
    assert emit_script(rec, "slurm", None).count("verdict ") == 1  # the summary's only
    rec.verdict.verdict = "confirm"
    rec.verdict.reasons = ["size 1024 is 1.5x beyond the measured range 100–700 "
                           "(extrapolation)"]
    for scheduler in ("slurm", "pbs"):
        script = emit_script(rec, scheduler, None)
        assert ("# note: verdict confirm: size 1024 is 1.5x beyond the measured range "
                "100–700 (extrapolation)\n") in script


def test_a_pick_off_the_front_is_listed_under_it_and_the_note_says_why():
    """The front showed only never-measured layouts predicted faster, not the pick, and
    nothing said why none of them was picked (s40 tester D14): the fake bundle's gemm 300,
    whose unmeasured best (bf16) overlaps the measured one's interval."""
    rec = recommend(FakeBundle(), "gemm", 300, fake_places("cpu"))
    ch = rec.picked.choice
    assert ch.index not in ch.front
    front = format_table(rec).split("Runtime–energy front (")[1].splitlines()
    assert front[0].endswith("* = pick, listed last: it is off the front, for the reason "
                             "given above):")
    assert front[-1].startswith("  * ") and len(front) == 3 + len(ch.front)  # heading, header
    assert any(n.startswith("the model ranks first 2 nodes x 2 ranks x 8 threads (cpu, bf16), "
                            "at a level never measured") and "so it is not picked" in n
               for n in rec.notes)
