"""Sweep plans: ranges, expansion into runs, bad plans, the reference plan, ``--list``."""

from __future__ import annotations

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.errors import ConfigError, UnknownKernelError
from hpcds1mpi.measure.plan import (RunSpec, build_plan, estimate_seconds, load_plan_file,
                                    parse_ints, parse_words, plan_doc)
from tests.helpers import REPO, run_cli

FAULTS = str(REPO / "tests" / "fault_kernels.py")
TWO_CORES = Partition(name="local", cores_per_node=2, memory_gb=8.0)


@pytest.fixture(autouse=True, scope="module")
def _fault_kernels():
    from hpcds1mpi import kernels

    kernels.load_plugin(FAULTS)


def _plan(**sweep_keys) -> dict:
    kernels = sweep_keys.pop("kernel", [{"name": "fault_sleep"}])
    return {"sweep": dict(sweep_keys), "kernel": kernels}


# ---------------------------------------------------------------------------------- plans


def test_parse_ints_forms():
    assert parse_ints("1,2,4", "x") == [1, 2, 4]
    assert parse_ints("1..8", "x") == [1, 2, 4, 8]
    assert parse_ints("3..12", "x") == [3, 6, 12]
    assert parse_ints([4, 1, 4], "x") == [1, 4]
    for bad in ("", [], "8..2", "0", [0], "a,b", [True]):
        with pytest.raises(ConfigError):
            parse_ints(bad, "x")


def test_build_plan_counts_and_valid_only():
    plan = build_plan(_plan(sizes=[1, 2], ranks_per_node=[1, 2, 4], threads=[1, 2],
                                  precisions=["fp64", "fp32"]), TWO_CORES)
    assert len(plan.runs) == 2 * 3 * 2 * 2
    valid = build_plan(_plan(sizes=[1], valid_only=True), TWO_CORES)
    # ranks x threads <= 2 cores: (1,1), (1,2), (2,1); the kernel's declared fp64 and fp32.
    assert {(r.config.ranks_per_node, r.config.threads) for r in valid.runs} == {(1, 1), (1, 2), (2, 1)}
    assert {r.config.precision for r in valid.runs} == {"fp64", "fp32"}
    assert len({r.run_id for r in plan.runs}) == len(plan.runs)


def test_rounds_measure_each_problem_s_configurations_in_turn():
    plan = build_plan(_plan(sizes=[1, 2], ranks_per_node=[1, 2], threads=[1],
                            precisions=["fp64"], seed=7, rounds=3), TWO_CORES)
    order = [(r.size, r.seed, r.config.ranks_per_node) for r in plan.runs]
    assert order == [(size, seed, rpn) for size in (1, 2) for seed in (7, 8, 9) for rpn in (1, 2)]
    assert len({r.run_id for r in plan.runs}) == len(plan.runs)  # each round resumes alone
    one = build_plan(_plan(sizes=[1, 2], ranks_per_node=[1, 2], threads=[1],
                           precisions=["fp64"], seed=7), TWO_CORES)
    assert [r.run_id for r in one.runs] == [r.run_id for r in plan.runs if r.seed == 7]


def test_run_id_is_stable_and_distinct():
    a = build_plan(_plan(sizes=[1, 2], threads=[1]), TWO_CORES)
    b = build_plan(_plan(sizes=[1, 2], threads=[1]), TWO_CORES)
    assert [r.run_id for r in a.runs] == [r.run_id for r in b.runs]


@pytest.mark.parametrize("doc, match", [
    (_plan(kernel=[{"name": "nope"}]), "unknown kernel"),
    (_plan(sizes=[]), "empty"),
    (_plan(threads="4..2"), "contradictory"),
    (_plan(min_repeats=5, max_repeats=2), "contradictory"),
    (_plan(precisions=["fp128"]), "unknown"),
    (_plan(sizes=[1], ranks_per_node=[4], valid_only=True), "no configuration"),
    (_plan(timeout=0), "timeout"),
])
def test_bad_plans_raise(doc, match):
    with pytest.raises(ConfigError, match=match):
        build_plan(doc, TWO_CORES)


def test_unknown_kernel_is_its_own_error():
    with pytest.raises(UnknownKernelError):
        build_plan(_plan(kernel=[{"name": "nope"}]), TWO_CORES)


def test_reference_plan_names_every_builtin_kernel():
    import tomllib

    from hpcds1mpi.kernels import BUILTIN_MODULES

    doc = load_plan_file(str(REPO / "plans" / "reference.toml"))
    assert sorted(k["name"] for k in doc["kernel"]) == sorted(BUILTIN_MODULES)
    assert doc["sweep"]["valid_only"] is True
    assert tomllib  # the plan is valid TOML (load_plan_file parsed it)


def test_list_prints_count_and_estimate(tmp_path):
    """--list on the reference plan (restricted to the kernels that exist yet)."""
    from hpcds1mpi import kernels

    text = (REPO / "plans" / "reference.toml").read_text()
    head, *entries = text.split("[[kernel]]")
    keep = [e for e in entries if e.split('"')[1] in kernels.names()]
    plan = tmp_path / "ref.toml"
    plan.write_text(head + "".join("[[kernel]]" + e for e in keep))
    proc = run_cli(["sweep", "--plan", str(plan), "--list"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "total:" in proc.stdout and "rough estimate" in proc.stdout
    doc = load_plan_file(str(plan))
    built = build_plan(doc, TWO_CORES)
    assert f"total: {len(built.runs)} configurations" in proc.stdout
    for name in {r.workload for r in built.runs}:
        sizes = {r.size for r in built.runs if r.workload == name}
        assert len(sizes) >= 8, name
        configs = {(r.config.ranks_per_node, r.config.threads) for r in built.runs
                   if r.workload == name}
        assert configs <= {(1, 1), (1, 2), (2, 1)}


def test_parse_words_forms():
    allowed, keywords = ("cpu", "gpu"), ("available",)
    assert parse_words("gpu, cpu,gpu", "d", allowed, keywords) == ["gpu", "cpu"]
    assert parse_words(["cpu"], "d", allowed, keywords) == ["cpu"]
    assert parse_words("available", "d", allowed, keywords) == ["available"]
    for bad, match in (("", "empty"), ("tpu", "unknown 'tpu'"), (["cpu", "available"], "unknown"),
                       (3, "expected names")):
        with pytest.raises(ConfigError, match=match):
            parse_words(bad, "d", allowed, keywords)


def test_run_id_changes_with_every_field():
    from hpcds1mpi.config import Configuration

    base = RunSpec("k", 8, Configuration(1, 2, 1, "cpu", "fp64"), 0, (("a", 1),))
    variants = [RunSpec("j", 8, base.config), RunSpec("k", 9, base.config),
                RunSpec("k", 8, Configuration(2, 2, 1, "cpu", "fp64")),
                RunSpec("k", 8, Configuration(1, 1, 1, "cpu", "fp64")),
                RunSpec("k", 8, Configuration(1, 2, 2, "cpu", "fp64")),
                RunSpec("k", 8, Configuration(1, 2, 1, "gpu", "fp64")),
                RunSpec("k", 8, Configuration(1, 2, 1, "cpu", "fp32")),
                RunSpec("k", 8, base.config, 1, (("a", 1),)),
                RunSpec("k", 8, base.config, 0, (("a", 2),))]
    ids = {base.run_id} | {v.run_id for v in variants}
    assert len(ids) == 1 + len(variants) and all(len(i) == 16 for i in ids)
    # The corrupt flag is a test switch, not part of the configuration's key.
    assert RunSpec("k", 8, base.config, 0, (("a", 1),), corrupt=True).run_id == base.run_id


def test_estimate_seconds_follows_the_work_model():
    """Per run: warmup x t + max(min_time, min_repeats x t) + 0.1 s, t from the work model at
    1 GFLOP/s and 5 GB/s per rank (gemm 1024: 2.1 s on one rank, 1.1 s on two)."""
    from hpcds1mpi import kernels

    plan = build_plan({"sweep": {"min_time": 1.5, "min_repeats": 2, "warmup": 3},
                       "kernel": [{"name": "gemm", "sizes": [1024], "ranks_per_node": [1, 2],
                                   "threads": [1], "precisions": ["fp64"]}]}, TWO_CORES)
    work = [kernels.get("gemm").work(1024, r.config.ranks) for r in plan.runs]
    t = [max(w.flops / 1e9, w.bytes_moved / 5e9) for w in work]
    assert min(t) > 1.0
    assert estimate_seconds(plan) == pytest.approx(sum(3 * x + max(1.5, 2 * x) + 0.1 for x in t))
    # Next to no work (fault_sleep: `ranks` flops): min_time + 0.1 s per run.
    quick = build_plan({"sweep": {"min_time": 0.5}, "kernel": [
        {"name": "fault_sleep", "sizes": [1], "ranks_per_node": [1], "threads": [1],
         "precisions": ["fp64"]}]}, TWO_CORES)
    assert estimate_seconds(quick) == pytest.approx(0.6, rel=1e-6)


def test_plan_doc_from_kernel_names_and_flags():
    doc = plan_doc(None, ["fault_sleep, fault_wrong", "fault_hang"],
                   ranges={"sizes": "1,2", "threads": None, "nodes": 1},
                   settings={"timeout": 5.0, "seed": None})
    assert doc == {"sweep": {"sizes": "1,2", "nodes": 1, "timeout": 5.0},
                   "kernel": [{"name": "fault_sleep"}, {"name": "fault_wrong"},
                              {"name": "fault_hang"}]}


@pytest.mark.parametrize("kernels", [["stencil,stencil"], ["stencil", "gemm,stencil"]])
def test_a_kernel_named_twice_by_kernel_is_refused_naming_the_option(kernels):
    # Was: "the plan lists a configuration twice; remove the duplicate kernel entry", with no
    # plan file given (tester S, s27 #8).
    with pytest.raises(ConfigError, match=r"^--kernel names stencil twice; give each kernel "
                                          "once$"):
        plan_doc(None, kernels, ranges={}, settings={})


def test_an_empty_kernel_name_between_commas_is_refused():
    with pytest.raises(ConfigError, match="--kernel: 'stencil,,gemm' has an empty item"):
        plan_doc(None, ["stencil,,gemm"], ranges={}, settings={})


def test_a_plan_file_listing_a_configuration_twice_names_it():
    entry = {"name": "fault_sleep", "sizes": [1], "ranks_per_node": [1], "threads": [1],
             "precisions": ["fp64"]}
    with pytest.raises(ConfigError, match=r"kernel 'fault_sleep' size 1 N1xR1xT1-cpu-fp64 "
                                          r"twice; remove the duplicate \[\[kernel\]\]"):
        build_plan({"sweep": {}, "kernel": [entry, dict(entry)]}, TWO_CORES)


def test_plan_doc_flags_replace_the_files_ranges_for_every_kernel(tmp_path):
    plan = tmp_path / "p.toml"
    plan.write_text('[sweep]\nthreads = [1, 2]\ntimeout = 9\n\n'
                    '[[kernel]]\nname = "fault_sleep"\nthreads = [2]\nsizes = [3]\n\n'
                    '[[kernel]]\nname = "fault_wrong"\n')
    doc = plan_doc(str(plan), [], ranges={"threads": "1", "sizes": None},
                   settings={"timeout": 2.0, "warmup": 0})
    assert doc["sweep"] == {"threads": "1", "timeout": 2.0, "warmup": 0}
    assert doc["kernel"] == [{"name": "fault_sleep", "sizes": [3]}, {"name": "fault_wrong"}]
    assert plan_doc(str(plan), [], ranges={}, settings={}) == load_plan_file(str(plan))


# ---------------------------------------------------------------- the schema (issue #14)


@pytest.mark.parametrize("sweep, match", [
    ({"valid_only": "no"}, r"valid_only must be true or false, got 'no'"),
    ({"check": 1}, "check must be true or false"),
    ({"retry_crashed": "false"}, "retry_crashed must be true or false"),
    ({"warmup": 1.5}, "warmup must be an integer, got 1.5"),
    ({"min_repeats": 0}, "min_repeats must be > 0"),
    ({"seed": -1}, "seed must be >= 0"),
    ({"rounds": 0}, "rounds must be >= 1"),
    ({"rounds": 2, "seed": 2**63 - 1}, "passes the largest seed"),
    ({"timeout": float("nan")}, "timeout must be a finite number"),
    ({"min_time": float("inf")}, "min_time must be a finite number"),
    ({"timeout": "10"}, "timeout must be a number"),
    ({"max_attempts": 10**30}, "max_attempts must be <= 1000000"),
    ({"bogus": 1}, r"unknown key bogus \(known: sizes, nodes"),
    ({"sizes": "99999999999999999999"}, "sizes: values must be <= 1099511627776"),
    ({"sizes": [99999999999999999999]}, "values must be <= 1099511627776"),
    ({"sizes": "1..99999999999999999999"}, "values must be <= 1099511627776"),
    ({"nodes": [2_000_000]}, "nodes: values must be <= 1000000"),
])
def test_bad_settings_are_refused_before_anything_runs(sweep, match):
    with pytest.raises(ConfigError, match=match) as info:
        build_plan(_plan(**sweep), TWO_CORES)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("entry, match", [
    ({"name": "fault_sleep", "corrupt": "yes"}, "corrupt must be true or false"),
    ({"name": "fault_sleep", "extra": 3}, "extra must be a table"),
    ({"nom": "fault_sleep"}, "unknown key nom"),
])
def test_bad_kernel_entries_are_refused(entry, match):
    with pytest.raises(ConfigError, match=match):
        build_plan({"sweep": {}, "kernel": [entry]}, TWO_CORES)


@pytest.mark.parametrize("text, match", [
    ('[sweep]\nvalid_only = "no"\n[[kernel]]\nname = "gemm"\n', r"sweep\.valid_only must be true"),
    ('[[kernel]]\nname = "gemm"\nspeed = 3\n', r"unknown key kernel\[0\]\.speed \(known:"),
    ('[[kernel]]\nsizes = [1]\n', r"kernel\[0\] is missing required key 'name'"),
    ("kernel = [3]\n", r"kernel\[0\] must be a table"),
    ('[sweep]\ntimeout = -1\n[[kernel]]\nname = "gemm"\n', r"sweep\.timeout must be > 0, got -1"),
    ("[sweep]\n", r"no \[\[kernel\]\] entries"),
    ('bogus = 1\n[[kernel]]\nname = "gemm"\n', "unknown key bogus"),
])
def test_bad_plan_files_name_the_file_and_the_key(tmp_path, text, match):
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match) as info:
        load_plan_file(str(path))
    assert str(info.value).startswith(f"{path}: ")


def test_numpy_numbers_and_good_values_pass_unchanged():
    import numpy as np

    doc = _plan(sizes=[1], ranks_per_node=[1], threads=[1], min_repeats=np.int64(2),
                timeout=np.float64(3.0), valid_only=False, seed=7)
    plan = build_plan(doc, TWO_CORES)
    assert (plan.min_repeats, plan.timeout, plan.warmup, plan.check) == (2, 3.0, 1, True)
    assert {r.seed for r in plan.runs} == {7} and plan.source is doc
    assert parse_ints("1..1099511627776", "x: sizes")[-1] == 2**40


def test_a_huge_size_is_refused_before_the_telemetry_file_exists(tmp_path):
    """Issue #14: `--size 99999999999999999999` poisoned the telemetry file for every resume."""
    out = tmp_path / "t.h5"
    proc = run_cli(["sweep", "--kernel", "fault_sleep", "--kernel-module", FAULTS,
                    "--sizes", "99999999999999999999", "--out", str(out)], timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "sizes: values must be <= 1099511627776" in lines[0]
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kernel, extra, match", [
    ("stencil", {"sweeps": 0}, "extra sweeps = 0; it must be a whole number from 1"),
    ("stencil", {"sweeps": "lots"}, "extra sweeps = 'lots'"),
    ("stencil", {"sweeps": 2.5}, "extra sweeps = 2.5"),
    ("stencil", {"sweeps": True}, "extra sweeps = True"),
    ("cg", {"iterations": -5}, "extra iterations = -5"),
    ("allreduce", {"allreduce_iteration_scale": 0}, "a number from 1e-06 to"),
    ("io", {"io_mode": "scatter"}, "must be one of gather, shards"),
    ("stencil", {"when": __import__("datetime").datetime(1979, 5, 27)}, "is not true/false"),
    ("stencil", {"sweeps": float("inf")}, "option sweeps = inf is not"),
    ("stencil", {"deep": {"a": 1}}, "option deep = {'a': 1} is not"),
])
def test_a_kernel_option_it_cannot_use_is_refused_when_the_plan_loads(kernel, extra, match):
    """stencil's sweeps = 0 was measured as an ok run of no work (a training row); 'lots' or
    -5 failed every run into the failure model; a TOML date was a TypeError traceback."""
    with pytest.raises(ConfigError, match=match):
        build_plan(_plan(kernel=[{"name": kernel, "sizes": [8], "extra": extra}],
                         ranks_per_node=[1], threads=[1]), TWO_CORES)


def test_options_a_kernel_reads_pass_and_others_are_refused():
    plan = build_plan(_plan(kernel=[{"name": "stencil", "sizes": [8], "extra": {
        "sweeps": 3}}], ranks_per_node=[1], threads=[1], precisions=["fp64"]), TWO_CORES)
    assert dict(plan.runs[0].extra) == {"sweeps": 3}
    with pytest.raises(ConfigError, match="does not read extra note, tags; the keys it reads: "
                                          "sweeps"):  # a typo was ignored silently
        build_plan(_plan(kernel=[{"name": "stencil", "sizes": [8], "extra": {
            "sweeps": 3, "note": "a label", "tags": ["a", 1]}}], ranks_per_node=[1],
            threads=[1], precisions=["fp64"]), TWO_CORES)


def test_race_rounds_follow_the_rounds_and_are_checked_before_running():
    plan = build_plan(_plan(sizes=[1, 2], ranks_per_node=[1, 2], threads=[1],
                            precisions=["fp64"], rounds=2, race_rounds=3, race_within=0.2),
                      TWO_CORES)
    assert [r.seed for r in plan.runs if r.size == 1] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    raced = {r.run_id for r in plan.runs if r.seed >= 2}
    assert set(plan.races) == raced and plan.race_within == 0.2
    check = plan.races[plan.runs[4].run_id]  # size 1, round 2, first configuration
    assert check.round == 2 and check.own == 0
    assert check.grid[1] == tuple(r.run_id for r in plan.runs if r.size == 1
                                  and r.config.ranks_per_node == 2)
    assert build_plan(_plan(sizes=[1], rounds=2), TWO_CORES).races == {}


def test_race_settings_do_not_change_the_sweep_id():
    """A plan that only adds race rounds continues the sweep its rounds were measured in; a plan
    without them keeps the sweep id it always had (files measured before still resume)."""
    import hashlib
    import json

    base = _plan(sizes=[1], rounds=3)
    plain = build_plan(base, TWO_CORES)
    raced = build_plan(_plan(sizes=[1], rounds=3, race_rounds=4, race_within=0.1), TWO_CORES)
    assert raced.sweep_id == plain.sweep_id
    old = hashlib.sha1(json.dumps(base, sort_keys=True, default=str).encode()).hexdigest()[:12]
    assert plain.sweep_id == old
    assert build_plan(_plan(sizes=[1], rounds=2), TWO_CORES).sweep_id != plain.sweep_id


@pytest.mark.parametrize("keys, match", [
    ({"race_rounds": -1}, "race_rounds"),
    ({"race_rounds": 101}, "race_rounds"),
    ({"race_within": 0}, "race_within"),
    ({"race_within": 1.5}, "race_within"),
    ({"race_within": "0.1"}, "race_within"),
])
def test_bad_race_settings_are_refused(keys, match):
    with pytest.raises(ConfigError, match=match):
        build_plan(_plan(sizes=[1], **keys), TWO_CORES)


def test_measurement_changes_names_each_changed_setting_only():
    import json

    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.measure.plan import build_plan, measurement_changes

    part = TWO_CORES
    doc = {"sweep": {"min_time": 0.5, "min_repeats": 5, "ranks_per_node": [1], "threads": [1]},
           "kernel": [{"name": "stencil", "sizes": [32]}]}
    recorded = json.dumps(doc)
    assert measurement_changes(recorded, build_plan(doc, part)) == []
    changed = {**doc, "sweep": {**doc["sweep"], "min_time": 0.05, "min_repeats": 1}}
    assert measurement_changes(recorded, build_plan(changed, part)) == [
        "min_time 0.5 -> 0.05", "min_repeats 5 -> 1"]
    assert measurement_changes(None, build_plan(changed, part)) == []
    assert measurement_changes("not json", build_plan(changed, part)) == []


def test_a_plan_over_a_million_runs_is_refused_before_it_is_made():
    """10^6 explicit sizes x 3 configurations were listed: 39 s, 1 GB, exit 0."""
    import time

    from hpcds1mpi.measure.plan import format_duration  # noqa: F401 (same module)

    doc = _plan(kernel=[{"name": "fault_sleep", "sizes": list(range(1, 400_001)),
                         "ranks_per_node": [1], "threads": [1], "precisions": ["fp64"]}],
                rounds=3)
    start = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        build_plan(doc, TWO_CORES)
    assert time.perf_counter() - start < 5
    text = str(info.value)
    assert "1,200,000 runs" in text and "over 1,000,000" in text and "campaign" in text
    assert "\n" not in text


def test_durations_print_in_a_unit_a_reader_takes_in():
    from hpcds1mpi.measure.plan import format_duration

    assert format_duration(0.02) == "0 s" and format_duration(45) == "45 s"
    assert format_duration(750) == "12.5 min" and format_duration(3 * 3600) == "3.0 h"
    assert format_duration(5 * 86400) == "5.0 days"
    assert format_duration(3e27 * 60) == "more than a year"
    assert format_duration(float("nan")) == "unknown"


def test_valid_only_leaving_out_every_run_for_memory_says_memory_with_counts():
    """Was (s33 tester A10): gemm 9000 fp64 in 1 GB with --valid-only said "check
    nodes/ranks/threads against the partition"; the reason was memory (1.9 GB)."""
    small = Partition(name="small", cores_per_node=2, memory_gb=1.0)
    gemm = {"kernel": [{"name": "gemm"}], "sizes": [9000], "threads": [1],
            "precisions": ["fp64"], "valid_only": True}
    with pytest.raises(ConfigError) as err:
        build_plan(_plan(ranks_per_node=[1], **gemm), small)
    said = str(err.value)
    assert "left out 1 for memory (e.g. gemm size 9000 on N1xR1xT1-cpu-fp64 needs about " \
        "1.9 GB" in said and "nodes/ranks/threads" not in said and "\n" not in said, said
    with pytest.raises(ConfigError) as err:  # cores and memory, counted apart
        build_plan(_plan(ranks_per_node=[1, 4], **gemm), small)
    assert "1 for memory" in str(err.value) and "1 for cores (e.g. 4 ranks x 1 thread" \
        in str(err.value), str(err.value)


def test_the_sweep_command_says_memory_for_a_valid_only_plan_left_empty(tmp_path):
    """s33 tester A10's command, with a cluster file whose partition has 1 GB (no Slurm)."""
    (tmp_path / "c.toml").write_text('[clusters.lab.partitions.small]\ncores_per_node = 2\n'
                                     'memory_gb = 1\nmax_nodes = 1\n')
    proc = run_cli(["sweep", "--kernel", "gemm", "--sizes", "9000", "--ranks-per-node", "1",
                    "--threads", "1", "--precisions", "fp64", "--valid-only", "--list",
                    "--cluster", str(tmp_path / "c.toml"), "--partition", "small", "--out",
                    str(tmp_path / "g.h5")], cwd=tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1 and "1 for memory" in lines[0], proc.stderr


def test_valid_only_leaving_out_part_of_a_plan_says_what_with_counts_and_names_cluster():
    """s37 tester K5: nodes [1, 2] with valid_only on a one-node partition lost every 2-node
    configuration (12 of 24) in campaign and sweep --list, nothing said."""
    one_node = Partition(name="local", cores_per_node=2, memory_gb=8.0, max_nodes=1)
    plan = build_plan(_plan(kernel=[{"name": "gemm", "sizes": [256, 384, 512]}], nodes=[1, 2],
                            ranks_per_node=[1, 2], threads=[1], precisions=["fp64"],
                            valid_only=True), one_node)
    assert len(plan.runs) == 6
    assert plan.left_out.startswith("valid_only = true left out 6 of the plan's 12 "
                                    "configurations: 6 for nodes (e.g. 2 nodes asked but "
                                    "partition 'local' has at most 1)"), plan.left_out
    assert "give the cluster file (--cluster) and a partition (--partition) with 2" \
        in plan.left_out
    whole = build_plan(_plan(kernel=[{"name": "gemm", "sizes": [256]}], nodes=[1],
                             ranks_per_node=[1, 2], threads=[1], precisions=["fp64"],
                             valid_only=True), one_node)
    assert whole.left_out == ""  # nothing left out: nothing said
    proc = run_cli(["sweep", "--kernel", "gemm", "--sizes", "256", "--nodes", "1,2",
                    "--ranks-per-node", "1", "--threads", "1", "--precisions", "fp64",
                    "--valid-only", "--list"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "note: valid_only = true left out 1 of the plan's 2 configurations: 1 for nodes" \
        in proc.stderr, proc.stderr
