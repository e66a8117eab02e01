"""The service answers what ``hpcds1mpi recommend --json`` answers, from one bundle loaded once;
a cached answer is the fresh one; /v1/predict gives System 1's own numbers for a
configuration; a request names partitions, never files."""

from __future__ import annotations

import json

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.serve.schemas import PredictRequest, RecommendRequest, request_wording
from tests.helpers import run_cli
from tests.serve.conftest import LAB

QUESTIONS = [
    {"workload": "stencil", "size": 128},
    {"workload": "gemm", "size": 1024, "objective": "energy"},
    {"workload": "stencil", "size": 4096},  # escalated: beyond the measured sizes
    {"workload": "cg", "size": 48, "objective": "edp", "max_nodes": 2, "device": "cpu"},
    {"workload": "nbody", "size": 3000, "objective": "balanced", "deadline": 100},
]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    from hpcds1mpi.serve.service import Service

    return Service(None, None, tmp_path_factory.mktemp("state"))


def _cli_args(q: dict) -> list[str]:
    args = ["recommend", "--json", "--cluster", str(LAB), "--workload", q["workload"],
            "--size", str(q["size"])]
    for key in ("objective", "max_nodes", "device", "deadline", "energy_budget"):
        if key in q:
            args += [f"--{key.replace('_', '-')}", str(q[key])]
    return args


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: f"{q['workload']}-{q['size']}")
def test_answer_is_what_recommend_json_prints(server, tmp_path, question):
    status, data, _ = server.request("POST", "/v1/recommend", question)
    assert status == 200, data
    proc = run_cli(_cli_args(question), env={"HPCDS1MPI_HISTORY": str(tmp_path / "none.json")},
                   timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert data == json.loads(proc.stdout)


def test_cached_answer_equals_a_fresh_one(service):
    req = RecommendRequest(workload="gemm", size=768, objective="balanced", emit="pbs")
    first = service.recommend(req)
    assert service.cached("recommend", req) is not None  # the second answer is the cache's
    assert service.recommend(req) == first
    assert service.recommend(req, use_cache=False) == first


def test_predict_gives_system1_numbers_of_the_pick(service):
    rec = service.recommend(RecommendRequest(workload="stencil", size=128))
    pick = rec["pick"]
    keys = ("nodes", "ranks_per_node", "threads", "device", "precision")
    out = service.predict(PredictRequest(workload="stencil", size=128,
                                         configs=[{k: pick[k] for k in keys}]))
    row = out["predictions"][0]
    assert row["valid"] and row["feasible"]
    for name in ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "fail_prob"):
        assert row[name] == pytest.approx(pick[name], rel=1e-6), name
    # The job's verdict is recommend's, its pick's confidence included (s31 tester Q6: it was
    # the guard's checks alone, auto where recommend confirmed or escalated).
    assert out["verdict"] == rec["verdict"]


def test_predict_marks_configurations_the_partition_cannot_run(service):
    out = service.predict(PredictRequest(workload="fft", size=64, configs=[
        {"nodes": 64, "ranks_per_node": 1}, {"nodes": 1, "ranks_per_node": 64},
        {"nodes": 1, "ranks_per_node": 1, "device": "gpu"}]))
    reasons = [p["reason"] for p in out["predictions"]]
    assert not any(p["valid"] for p in out["predictions"])
    assert "at most 1" in reasons[0] and "cores per node" in reasons[1] and "GPU" in reasons[2]


def test_predict_of_a_job_never_seen_says_so(service):
    out = service.predict(PredictRequest(workload="my_app", size=10,
                                         configs=[{"nodes": 1, "ranks_per_node": 2}]))
    assert out["verdict"]["verdict"] == "escalate"
    assert any("never measured" in r for r in out["verdict"]["reasons"])


def test_unknown_partition_names_the_known_ones(service):
    with pytest.raises(ConfigError, match="known: local/local"):
        service.recommend(RecommendRequest(workload="stencil", size=128,
                                           partition=["/etc/passwd"]))


def test_models_describes_the_bundle_without_paths(service):
    info = service.models()
    assert info["model"] == "default_model" and "/" not in info["model"]
    assert "stencil" in info["workloads"] and info["places"] == ["local/local"]


SCRIPT = (LAB.parent / "lab_stencil.sbatch").read_text()


def test_advise_answers_what_advise_json_prints(server):
    status, data, _ = server.request("POST", "/v1/advise", {"script": SCRIPT})
    assert status == 200, data
    proc = run_cli(["advise", str(LAB.parent / "lab_stencil.sbatch"), "--cluster", str(LAB),
                    "--json"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    rewritten = data["rewritten"]
    cli.setdefault("rewritten", rewritten)  # advise --json may leave the text out
    assert {**data, "script": cli["script"]} == cli
    assert "#SBATCH --nodes=" in rewritten and rewritten != SCRIPT
    assert data["asked"]["config"]["nodes"] == 4


@pytest.mark.parametrize("text", ["/etc/passwd", str(LAB.parent / "lab_stencil.sbatch"),
                                  "../../../../etc/shadow"])
def test_advise_reads_text_never_a_path(server, text):
    status, data, _ = server.request("POST", "/v1/advise", {"script": text})
    assert status in (200, 422), data
    blob = json.dumps(data)
    assert "root:x:0:0" not in blob and "ntasks-per-node=2" not in blob
    if status == 200:
        assert data["asked"] is None or data["workload"] is None


def test_advise_refuses_a_slurm_script_without_its_hash_bang_line(server):
    """s29 tester D7: `advise FILE` refused it, as sbatch does; the service read and
    rewrote it."""
    text = SCRIPT.split("\n", 1)[1]  # the #!/bin/bash line left out
    assert text.startswith("#SBATCH")
    status, data, _ = server.request("POST", "/v1/advise", {"script": text})
    assert status == 422, data
    assert "is not #! and sbatch refuses it" in data["error"] and "\n" not in data["error"]


def test_advise_bounds_the_script(server):
    status, data, _ = server.request("POST", "/v1/advise", {"script": "#" * 60_001})
    assert status == 422 and "script" in data["error"]


def test_answer_many_equals_answer_one_by_one_and_keeps_errors_in_place(tmp_path):
    """A micro-batch's answers (one recommend_many for the new recommend questions) are the
    bytes each question gets alone; a refused question is refused alone, the others answered."""
    from hpcds1mpi.serve.service import Service

    batched = Service(None, str(LAB), tmp_path / "a", cache_size=0)
    alone = Service(None, str(LAB), tmp_path / "b", cache_size=0)
    reqs = [("recommend", RecommendRequest(**q)) for q in QUESTIONS]
    reqs += [("recommend", RecommendRequest(workload=w, size=s, objective=o, emit="slurm",
                                            program=p))
             for w, s, o, p in (("fft", 64, "energy", None), ("fft", 64, "time", None),
                                ("gemm", 99, "edp", None),
                                ("never-measured", 500, "time", "./app --n {size}"),
                                # no calibration sweep fits in memory: no script, refused
                                ("stencil", 20000, "balanced", None))]
    reqs.insert(2, ("recommend", RecommendRequest(workload="gemm", size=512,
                                                  partition=["nowhere"])))
    reqs.insert(4, ("recommend", RecommendRequest(workload="gemm", size=512, deadline=1e-9)))
    reqs.insert(6, ("recommend", RecommendRequest(workload="gemm", size=512, device="gpu")))
    reqs.insert(8, ("predict", PredictRequest(workload="gemm", size=512,
                                              configs=[{"nodes": 1, "ranks_per_node": 2}])))
    got = batched.answer_many(reqs)
    assert len(got) == len(reqs)
    errors = 0
    for (kind, req), body in zip(reqs, got):
        try:
            want = alone.answer(kind, req)
        except ConfigError as exc:
            assert isinstance(body, ConfigError) and str(body) == str(exc), (req, body)
            errors += 1
            continue
        assert body == want, req
    assert errors == 4 and isinstance(got[-1], ConfigError)
    assert json.loads(got[-2])["verdict"]["verdict"] == "escalate"


def test_a_failed_shared_recommend_pass_fails_only_its_questions(tmp_path, monkeypatch):
    """The batch's one recommend pass raising (a bundle file gone mid-flight) is the error of
    the recommend questions it held; a predict in the same batch is still answered."""
    from hpcds1mpi.serve.service import Service

    svc = Service(None, str(LAB), tmp_path / "s", cache_size=0)
    predict = ("predict", PredictRequest(workload="gemm", size=512,
                                         configs=[{"nodes": 1, "ranks_per_node": 2}]))
    want = svc.answer(*predict)

    def broken(reqs):
        raise OSError("the bundle's guard calibration vanished")

    monkeypatch.setattr(svc, "_recommend_many", broken)
    got = svc.answer_many([("recommend", RecommendRequest(workload="gemm", size=512)), predict,
                           ("recommend", RecommendRequest(workload="fft", size=64))])
    assert isinstance(got[0], OSError) and isinstance(got[2], OSError)
    assert got[1] == want


def test_the_load_benchmarks_questions_in_batches_get_each_its_own_answer(tmp_path):
    """320 of ``benchmarks/serve.py``'s distinct questions (each job for four objectives),
    in micro-batches of 25 that share a job's scores and guard distance (the service's memo),
    then 40 of them again (from the memo): the bytes each gets alone, without a memo."""
    import importlib.util
    from pathlib import Path

    from hpcds1mpi.serve.service import Service

    source = Path(__file__).resolve().parents[2] / "benchmarks" / "serve.py"
    spec = importlib.util.spec_from_file_location("serve_load_questions", source)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    batched = Service(None, str(LAB), tmp_path / "a", cache_size=0)
    alone = Service(None, str(LAB), tmp_path / "b", cache_size=0)
    alone.memo = None
    sizes = {str(k): (float(v[0]), float(v[1])) for k, v in batched.bundle.size_range.items()}
    reqs = [("recommend", RecommendRequest(**q)) for q in bench.questions(sizes, 320)]
    got = [a for i in range(0, len(reqs), 25) for a in batched.answer_many(reqs[i:i + 25])]
    got += batched.answer_many(reqs[:40])
    assert len(batched.memo.scores) > 0
    for (kind, req), body in zip(reqs + reqs[:40], got):
        try:
            want = alone.answer(kind, req)
        except ConfigError as exc:
            assert isinstance(body, ConfigError) and str(body) == str(exc), (req, body)
            continue
        assert body == want, req


def test_warm_up_scores_new_grids_through_the_compiled_forest(tmp_path, monkeypatch):
    """After warm_up a one-job grid (18 rows) is scored by the compiled forest, not by 15
    libxgboost calls (~2.5 ms against ~0.15 ms), with the same answer; before it, libxgboost
    (a private copy of the bundle: no other test's process-wide warming reaches it)."""
    import shutil

    from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL
    from hpcds1mpi.serve.schemas import RecommendRequest
    from hpcds1mpi.serve.service import Service
    from hpcds1mpi.surrogates.xgboost_scorer import XGBoostScorer

    calls = []
    real = XGBoostScorer.predict
    monkeypatch.setattr(XGBoostScorer, "predict", lambda self, Z: calls.append(1) or real(self, Z))
    ask = RecommendRequest(workload="gemm", size=1000)
    cold = Service(str(shutil.copytree(DEFAULT_MODEL, tmp_path / "a")), None, tmp_path / "sa",
                   cache_size=0).recommend(ask, use_cache=False)
    assert calls, "the cold service did not go through libxgboost"
    svc = Service(str(shutil.copytree(DEFAULT_MODEL, tmp_path / "b")), None, tmp_path / "sb",
                  cache_size=0)
    svc.warm_up()
    calls.clear()
    assert svc.recommend(ask, use_cache=False) == cold
    assert not calls, "a warm service still scored through libxgboost"


def test_predict_without_a_partition_where_names_repeat_lists_them_by_cluster(tmp_path):
    """Two clusters with a partition 'p' each: the refusal listed "(p, h, p)"."""
    from hpcds1mpi.serve.service import Service

    clusters = tmp_path / "two.toml"
    clusters.write_text("".join(
        f'[clusters.{c}]\n[clusters.{c}.partitions.{p}]\ncores_per_node = 2\n'
        f'memory_gb = 8\nmax_nodes = 1\n' for c, p in (("x", "p"), ("y", "p"))))
    svc = Service(None, str(clusters), tmp_path / "s", cache_size=0)
    with pytest.raises(ConfigError, match=r"several partitions are known \(x/p, y/p\)"):
        svc.predict(PredictRequest(workload="stencil", size=64,
                                   configs=[{"nodes": 1, "ranks_per_node": 1}]))


@pytest.mark.parametrize("size, field, value, option", [
    (128, "job_name", "a;id", "--job-name"),
    (128, "job_output", "a b", "--job-output"),
    (128, "program", 'a "b', "--program"),
    (1000, "emit", "pbs", "--emit"),  # escalated: its calibration sweep is Slurm only
    (4096, "emit", "slurm", "--emit"),  # escalated: no calibration step fits in memory
])
def test_a_script_that_cannot_be_written_is_a_422_with_the_commands_line(server, size, field,
                                                                          value, option):
    """/v1/recommend answered 200 with "script": null where the command exits 2: a client
    that checks the status got no script and no error."""
    from hpcds1mpi.serve.schemas import request_wording

    body = {"workload": "stencil", "size": size, "emit": "slurm", "partition": ["lab/standard"],
            field: value}
    args = ["recommend", "--cluster", str(LAB), "--workload", "stencil", "--size", str(size),
            "--emit", body["emit"]] + ([option, value] if option != "--emit" else [])
    cli = run_cli(args, timeout=120)
    assert cli.returncode == 2 and cli.stderr.startswith("hpcds1mpi: error: "), cli.stderr
    line = cli.stderr.strip().splitlines()[-1].removeprefix("hpcds1mpi: error: ")
    status, data, _ = server.request("POST", "/v1/recommend", body)
    assert status == 422, data
    assert data == {"error": request_wording(line)}


@pytest.mark.parametrize("workload, size, first", [
    ("never_measured", 10, "workload 'never_measured' never measured"),
    ("stencil", 4096, "size 4096 outside the measured sizes 40–256"),
    ("stencil", 128, None),
])
def test_each_row_of_a_job_beyond_what_was_measured_says_so(service, workload, size, first):
    """A workload nobody measured got numbers with "extrapolated": [] on every row, which
    reads as "not extrapolated"; only the job-level verdict said escalate."""
    out = service.predict(PredictRequest(workload=workload, size=size, configs=[
        {"nodes": 1, "ranks_per_node": 2}, {"nodes": 64, "ranks_per_node": 1}]))
    valid, invalid = out["predictions"]
    assert valid["valid"] and not invalid["valid"]
    assert valid["extrapolated"] == ([first] if first else [])
    assert invalid["extrapolated"] == []  # not scored: nothing extrapolated
    assert (first is not None) == (out["verdict"]["verdict"] == "escalate")


def test_each_row_on_hardware_never_trained_on_says_so(tmp_path):
    from hpcds1mpi.serve.service import Service

    cluster = tmp_path / "big.toml"
    cluster.write_text("[clusters.c.partitions.big]\ncores_per_node = 64\nmemory_gb = 256\n"
                       "max_nodes = 2\n")
    out = Service(None, str(cluster), tmp_path / "state").predict(PredictRequest(
        workload="stencil", size=128, configs=[{"nodes": 1, "ranks_per_node": 2}]))
    assert out["verdict"]["checks"]["hardware"] == "escalate"
    assert out["predictions"][0]["extrapolated"] == [
        "partition big (64 cores, 0 GPUs, 256 GB) never trained on"]


def test_a_programs_calibration_sweep_reads_it_as_asked(service):
    """The request's reading options reach the calibration sweep's steps, as `recommend
    --time-regex` does; given without a program, they are refused in one line (a 422)."""
    import json as json_mod

    from hpcds1mpi.errors import ConfigError

    req = RecommendRequest(workload="never-measured", size=500, emit="slurm",
                           program="./app --n {size}", time_regex="t=([0-9.]+)",
                           workdir="run/{size}", fail_regex="SCF run NOT converged",
                           setup="make-input {size} && touch ok")
    script = json_mod.loads(service.answer("recommend", req))["script"]
    assert "--setup 'make-input {size} && touch ok'" in script  # as `recommend --setup`
    assert "--time-regex 't=([0-9.]+)'" in script and "--workdir 'run/{size}'" in script
    assert "--fail-regex 'SCF run NOT converged'" in script  # as `recommend --fail-regex`
    with pytest.raises(ConfigError, match="add program"):
        service.answer("recommend", RecommendRequest(workload="stencil", size=4,  # escalates
                                                     emit="slurm", time_regex="t=(\\d+)"))
    with pytest.raises(ConfigError, match="^time_regex, .*, workdir, setup and fail_regex apply "
                                          "to a "
                                          "program's calibration sweep only; add program$"):
        service.answer("recommend", RecommendRequest(workload="stencil", size=4,
                                                     emit="slurm", fail_regex="NOT converged"))
    # a program the model lacks, given no program: nothing to calibrate (s41 tester A5)
    with pytest.raises(ConfigError, match="'never-measured': it is not a built-in kernel .*--program"):
        service.answer("recommend", RecommendRequest(workload="never-measured", size=500,
                                                     emit="slurm"))
    with pytest.raises(ConfigError, match="--fail-regex 'x\\*' matches an empty line") as err:
        service.answer("recommend", RecommendRequest(  # checked as sweep checks it
            workload="never-measured", size=500, emit="slurm", program="./app",
            fail_regex="x*"))
    assert request_wording(str(err.value)).startswith("'fail_regex' 'x*' matches")  # the 422


def test_reading_options_are_checked_with_or_without_emit_as_recommend_checks_them(service):
    """s39 tester G1: without emit, and for a job that was not escalated, the reading options
    were dropped unread (a 200); `recommend` refuses the first and checks the second."""
    import json as json_mod

    from hpcds1mpi.errors import ConfigError

    with pytest.raises(ConfigError, match="^time_regex says how the calibration sweep that "
                                          "emit writes reads your program; add emit and "
                                          "program, or drop it$"):
        service.answer("recommend", RecommendRequest(workload="nbody", size=3000,
                                                     time_regex="(("))
    with pytest.raises(ConfigError, match="^setup, fail_regex say how .* drop them$"):
        service.answer("recommend", RecommendRequest(workload="nbody", size=3000,
                                                     setup="x", fail_regex="(("))
    measured = dict(workload="nbody", size=3000, emit="slurm", program="./a")
    with pytest.raises(ConfigError) as err:  # not escalated: checked all the same
        service.answer("recommend", RecommendRequest(**measured, time_regex="(("))
    assert request_wording(str(err.value)) == "'time_regex': missing ) at position 2"
    with pytest.raises(ConfigError, match="--fail-regex 'x\\*' matches an empty line"):
        service.answer("recommend", RecommendRequest(**measured, fail_regex="x*"))
    answer = json_mod.loads(service.answer("recommend", RecommendRequest(
        **measured, time_regex="t=([0-9.]+)")))
    assert answer["pick"] is not None  # not escalated: the script says the option is unused
    note = "apply to a calibration sweep only; this job was not escalated"
    assert note in answer["script"] and "t=([0-9.]+)" not in answer["script"]


@pytest.mark.skipif("SLURM_JOB_ID" in __import__("os").environ,
                    reason="inside an allocation the place is its real partition")
@pytest.mark.parametrize("emit, directive", [("slurm", "#SBATCH --partition"),
                                             ("pbs", "#PBS -q")])
def test_a_script_for_this_machine_names_no_partition_as_recommend_emit(service, tmp_path,
                                                                        emit, directive):
    """Without --cluster, outside an allocation, the service's scripts asked for the made-up
    partition 'local', which sbatch refuses; `recommend --emit` leaves it out and says so
    (s27 tester P, 4). The answer carries the same note, and the script is the command's."""
    req = RecommendRequest(workload="stencil", size=256, emit=emit, program="hostname",
                           job_name="apitest")
    data = service.recommend(req, use_cache=False)
    assert directive not in data["script"]
    [note] = [n for n in data["notes"] if "it was chosen for this machine" in n]
    assert f"'local' is no {emit} partition" in note and f"# note: {note}" in data["script"]
    proc = run_cli(["recommend", "--workload", "stencil", "--size", "256", "--emit", emit,
                    "--program", "hostname", "--job-name", "apitest"],
                   env={"HPCDS1MPI_HISTORY": str(tmp_path / "none.json")}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"note: {note}" in proc.stderr.splitlines()
    assert proc.stdout == data["script"]


def test_predict_gives_recommends_verdict_for_a_program_whose_every_run_failed(tmp_path):
    """s31 tester Q6: /v1/predict answered "auto" (runtime 0.342 s, fail_prob 0.64) for a
    program whose every run failed, while recommend escalated the same job; Model.predict
    dropped the verdict though the README says it answers as /v1/predict does."""
    import pandas as pd

    import hpcds1mpi
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.serve.service import Service
    from tests.surrogates.test_bundle import make_runs

    bad = make_runs(workloads=("crashy",))
    bad = bad.assign(status="failed", error="exit 1", runtime_s=float("nan"),
                     energy_j=float("nan"), peak_rss_mb=float("nan"))
    runs = pd.concat([make_runs(workloads=("stencil",)), bad])
    tele = tmp_path / "t.h5"
    telemetry.append(tele, runs.to_dict("records"))
    model = tmp_path / "model"
    proc = run_cli(["train", "--telemetry", str(tele), "--out", str(model), "--epochs", "2",
                    "--members", "2", "--threads", "1"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    lab = tmp_path / "lab.toml"
    lab.write_text("[clusters.lab.partitions.cpu]\ncores_per_node = 8\nmemory_gb = 16\n"
                   "max_nodes = 2\n")
    svc = Service(str(model), str(lab), tmp_path / "state")
    rec = svc.recommend(RecommendRequest(workload="crashy", size=64))
    out = svc.predict(PredictRequest(workload="crashy", size=64,
                                     configs=[{"nodes": 1, "ranks_per_node": 1}]))
    assert rec["verdict"]["verdict"] == "escalate"
    assert out["verdict"]["verdict"] == "escalate" and out["verdict"]["checks"] == \
        rec["verdict"]["checks"]
    assert any("predicted to fail" in r for r in out["verdict"]["reasons"])  # its own line
    api = hpcds1mpi.load_model(model).predict([hpcds1mpi.Configuration(1, 1, 1)], "crashy", 64,
                                              cluster=lab)
    assert api.verdict == "escalate" and api.reasons == out["verdict"]["reasons"]
    assert len(api) == 1 and not api[0].feasible
