"""A --resume names the failed runs it keeps as measured, and how to measure them again
(s43 tester I3: Rheolef's run at 150 failed only for its missing input; the resume said
"nothing new; 6 already done" and the rows kept vetoing size 150)."""

from __future__ import annotations

from types import SimpleNamespace

from hpcds1mpi.measure.kept_failures import kept_failures_note, say_kept_failures


def _spec(size: int, ranks: int):
    label = f"N1xR{ranks}xT1-cpu-fp64"
    return SimpleNamespace(workload="rheolef", size=size, run_id=f"{size}-{ranks}",
                           config=SimpleNamespace(label=lambda: label))


def _resumed(statuses: dict):
    plan = SimpleNamespace(runs=[_spec(size, ranks) for size, ranks in statuses])
    store = SimpleNamespace(runs={("m", f"{s}-{r}"): {"status": status}
                                  for (s, r), status in statuses.items()})
    return plan, store, set(store.runs)


def test_the_failures_a_resume_keeps_are_named_with_the_way_to_redo_them():
    plan, store, done = _resumed({(100, 1): "ok", (100, 2): "ok", (150, 1): "failed",
                                  (150, 2): "failed", (200, 1): "ok", (200, 2): "ok"})
    said = kept_failures_note(store, plan, "m", done, "rh.h5")
    assert said.startswith("note: 2 of the runs already done in rh.h5 are failures")
    assert "rheolef size 150 N1xR1xT1-cpu-fp64 (failed)" in said
    assert "rheolef size 150 N1xR2xT1-cpu-fp64 (failed)" in said and "size 100" not in said
    assert "--sizes 150 into a new --out" in said
    assert "`hpcds1mpi telemetry merge rh.h5 NEW.h5 --out MERGED.h5`" in said
    assert "\n" not in said


def test_nothing_is_said_without_kept_failures_or_outside_a_resume():
    plan, store, done = _resumed({(100, 1): "ok", (150, 1): "interrupted"})
    assert kept_failures_note(store, plan, "m", done, "x.h5") == ""
    plan, store, done = _resumed({(150, 1): "timeout"})
    lines = []
    say_kept_failures(None, store, plan, "m", done, "x.h5")
    say_kept_failures(lines.append, store, plan, "m", done, "x.h5")
    assert len(lines) == 1 and "(timeout)" in lines[0]


def test_many_failures_are_counted_past_the_first_few():
    plan, store, done = _resumed({(s, 1): "failed" for s in range(10, 80, 10)})
    said = kept_failures_note(store, plan, "m", done, "x.h5")
    assert " and 3 more;" in said and "--sizes 10,20,30,40,50,60,70 " in said


def test_large_sizes_are_written_as_the_integers_sweep_sizes_takes():
    from hpcds1mpi.measure.ranges import parse_ints

    plan, store, done = _resumed({(1234567, 1): "failed", (1000000, 1): "oom", (64, 1): "failed"})
    said = kept_failures_note(store, plan, "m", done, "x.h5")
    assert "rheolef size 1234567 N1xR1xT1-cpu-fp64 (failed)" in said and "e+06" not in said
    sizes = said.split("this sweep with --sizes ", 1)[1].split(" ", 1)[0]
    assert sizes == "64,1000000,1234567"
    assert parse_ints(sizes, "sizes") == [64, 1000000, 1234567]  # the printed command is accepted


def test_a_kept_timeout_is_said_as_a_lower_bound_not_a_failure():
    # s48 tester Q3: "are failures ... recommend and advise read them as failing there" had
    # been said of a timeout, which they read as a lower bound (README).
    plan, store, done = _resumed({(150, 1): "timeout", (150, 2): "ok"})
    said = kept_failures_note(store, plan, "m", done, "x.h5")
    assert "are timeouts" in said and "as failing" not in said and "failure" in said
    assert "a timeout as a lower bound of the layout's time there" in said
    assert "a --timeout too short" in said
    plan, store, done = _resumed({(150, 1): "timeout", (150, 2): "oom"})
    said = kept_failures_note(store, plan, "m", done, "x.h5")
    assert "are failures or timeouts" in said
    assert "a failed or oom run as failing there and a timeout as a lower bound" in said
