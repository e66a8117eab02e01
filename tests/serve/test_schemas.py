"""Request bodies are checked as strictly as the command line: a wrong type, an unknown key, a
number out of range, a control character or a body that is not a JSON object is one line (422);
the answers match their published schema."""

from __future__ import annotations

import json

import pytest

from hpcds1mpi.serve import schemas

OK = {"workload": "stencil", "size": 128}


@pytest.mark.parametrize("body,words", [
    (b'{"workload": "stencil",', "body is not JSON"),
    (b"\xff\xfe", "body is not JSON"),
    (b"[1, 2]", "must be a JSON object, got an array"),
    (b'"text"', "must be a JSON object, got a string"),
    (b"null", "must be a JSON object, got null"),  # s39 tester G4: was "got NoneType"
    (b"3", "must be a JSON object, got a number"),
    (b'{"workload": "stencil", "size": "128"}', "size must be an integer, got '128'"),
    (b'{"workload": "stencil", "size": 128.0}', "size must be an integer"),
    (b'{"workload": "stencil", "size": true}', "size must be an integer"),
    (b'{"workload": "stencil", "size": NaN}', "size must be an integer"),
    (b'{"workload": "stencil", "size": 0}', "size must be > 0"),
    (b'{"workload": "stencil", "size": 1' + b"0" * 40 + b"}", "size must be <="),
    (b'{"workload": "stencil", "size": 128, "deadline": NaN}', "deadline must be a finite"),
    (b'{"workload": "stencil", "size": 128, "deadline": -1}', "deadline must be > 0"),
    (b'{"workload": "stencil", "size": 128, "objective": "fast"}', "objective must be"),
    (b'{"workload": "stencil", "size": 128, "partition": 5}', "partition must be a list"),
    (b'{"workload": "stencil", "size": 128, "exclusive": "yes"}', "exclusive must be true or"),
    (b'{"workload": "stencil", "size": 128, "cluster": "/etc/passwd"}', "unknown key cluster"),
    (b'{"size": 128}', "missing required key 'workload'"),
    (b'{"workload": "", "size": 128}', "workload"),
    (b'{"workload": "stencil", "size": 128, "program": "app\\n#SBATCH -A x"}', "program"),
    (b'{"workload": "sten\\u0000cil", "size": 128}', "workload"),
    (b'{"workload": "   ", "size": 128}', "workload"),  # blank: as the CLI refuses it
    (b'{"workload": "stencil", "size": 128, "energy_budget": -1}', "energy_budget must be > 0"),
])
def test_bad_bodies_are_one_line_422(body, words):
    with pytest.raises(schemas.RequestError) as info:
        schemas.parse(schemas.RecommendRequest, body)
    assert info.value.status == 422
    assert words in info.value.reason
    assert "\n" not in info.value.reason and len(info.value.reason) < 400


def test_a_number_python_will_not_convert_is_refused_in_the_requests_words():
    """s39 tester G4: 5,000 digits gave Python's message cut mid-word ("value has 5000 di")
    and the advice "send a JSON object" to a body that is one."""
    for digits in ("9" * 5000, "-" + "1" * 4301):
        with pytest.raises(schemas.RequestError) as info:
            schemas.parse(schemas.RecommendRequest, b'{"workload": "nbody", "size": %s}'
                          % digits.encode())
        n = len(digits.lstrip("-"))
        assert info.value.reason == f"body holds a number of {n} digits, beyond what any " \
            "key takes; send the number meant"
    with pytest.raises(schemas.RequestError, match="size must be <="):
        schemas.parse(schemas.RecommendRequest, b'{"workload": "nbody", "size": 1%s}'
                      % (b"0" * 4299))


def test_a_deeply_nested_body_is_one_line_422_not_a_crash():
    deep = b'{"workload": ' + b"[" * 100_000 + b"]" * 100_000 + b', "size": 128}'
    for body in (deep, b"[" * 100_000):
        with pytest.raises(schemas.RequestError) as info:
            schemas.parse(schemas.RecommendRequest, body)
        assert info.value.status == 422 and "nested too deeply" in info.value.reason


@pytest.mark.parametrize("body", [
    b'{"workload": "stencil", "size": 128, "size": 4096}',
    b'{"workload": "gemm", "size": 64, "configs": [{"nodes": 1, "nodes": 2, '
    b'"ranks_per_node": 1}]}',
])
def test_a_key_given_twice_is_refused_not_the_last_one_taken(body):
    model = schemas.PredictRequest if b"configs" in body else schemas.RecommendRequest
    with pytest.raises(schemas.RequestError) as info:
        schemas.parse(model, body)
    assert info.value.status == 422
    assert "given twice" in info.value.reason and ("'size'" in info.value.reason
                                                   or "'nodes'" in info.value.reason)


def test_partition_is_one_name_or_a_list_in_both_requests():
    def rec(part):
        return schemas.parse(schemas.RecommendRequest, json.dumps(
            {"workload": "stencil", "size": 128, "partition": part}).encode())

    def pred(part):
        return schemas.parse(schemas.PredictRequest, json.dumps(
            {"workload": "stencil", "size": 128, "partition": part,
             "configs": [{"nodes": 1, "ranks_per_node": 1}]}).encode())

    assert rec("local").partition == rec(["local"]).partition == ["local"]
    assert rec("local").model_dump_json() == rec(["local"]).model_dump_json()  # one cache key
    assert pred("local").partition == pred(["local"]).partition == "local"
    with pytest.raises(schemas.RequestError, match="partition must be a string"):
        pred(["a", "b"])  # predict answers for one partition


@pytest.mark.parametrize("value,words", [
    ("job\\u001b[31m", "job_name has a control character"),
    ("line\\nnext", "job_name has a control character"),
    ("   ", "job_name is blank"),
])
def test_a_text_field_says_what_is_wrong_not_the_pattern(value, words):
    body = ('{"workload": "stencil", "size": 128, "job_name": "%s"}' % value).encode()
    with pytest.raises(schemas.RequestError) as info:
        schemas.parse(schemas.RecommendRequest, body)
    assert words in info.value.reason and "pattern" not in info.value.reason


def test_cli_options_in_shared_error_texts_are_said_as_request_keys():
    text = ("no configuration meets --deadline (local/local: deadline); relax --deadline; "
            "pass --size; --emit must be one of slurm, pbs; --max-nodes 2")
    said = schemas.request_wording(text)
    assert "--" not in said
    assert "relax 'deadline'" in said and "pass 'size'" in said and "'max_nodes' 2" in said


def test_every_recommend_option_in_a_shared_text_is_said_as_its_request_key():
    """--program (and the script's other options) stayed as CLI options in the API's lines."""
    text = ("give your program's command with --program \"./app --n {size}\"; --job-name, "
            "--job-output, --time-regex, --workdir, --fail-regex; sweep --command")
    said = schemas.request_wording(text)
    assert "with 'program' \"./app --n {size}\"" in said  # the example's own --n stays
    assert "'job_name', 'job_output', 'time_regex', 'workdir', 'fail_regex'" in said
    assert "sweep --command" in said  # another command's option: as it is


@pytest.mark.parametrize("model,body,said", [
    (schemas.RecommendRequest, b'{"workload": "", "size": 1}',
     "workload is empty; send a name with a character that is not a space"),
    (schemas.RecommendRequest, b'{"workload": "a", "size": 1, "program": ""}',
     "program is empty; leave 'program' out or send the command line"),
    (schemas.RecommendRequest, b'{"workload": "a", "size": 1, "partition": [""]}',
     "partition[0] is empty; send a name with a character that is not a space"),
    (schemas.AdviseRequest, b'{"script": ""}', "script is empty; send the batch script's text"),
])
def test_an_empty_text_is_said_as_empty_not_in_pydantics_words(model, body, said):
    with pytest.raises(schemas.RequestError) as info:
        schemas.parse(model, body)
    assert info.value.reason == said


def test_an_energy_budget_is_joules_not_bounded_by_a_year_of_seconds():
    req = schemas.parse(schemas.RecommendRequest,
                        b'{"workload": "stencil", "size": 128, "energy_budget": 1e9}')
    assert req.energy_budget == 1e9
    req = schemas.parse(schemas.RecommendRequest, b'{"workload": "my app", "size": 128}')
    assert req.workload == "my app"  # spaces inside a name are fine


def test_a_good_body_keeps_the_command_defaults():
    req = schemas.parse(schemas.RecommendRequest, b'{"workload": "stencil", "size": 128}')
    assert (req.objective, req.partition, req.emit, req.exclusive) == ("time", [], None, False)


def test_the_request_has_the_recommend_command_options():
    from hpcds1mpi.commands.recommend import command

    options = {p.name for p in command.params}
    # What names a file on the server or writes is fixed at start, or absent.
    server_side = {"cluster_file", "model_dir", "history_path", "record_failure",
                   "forget_failures",
                   "failure_status", "script_path", "force", "as_json", "partitions",
                   # the walltime from a job table: a file on the server; the service has none
                   "job_table", "user", "time_limit", "walltime_coverage"}
    assert options - server_side == set(schemas.RecommendRequest.model_fields) - {"partition"}


def test_predict_bounds_the_configurations():
    many = b'{"workload": "gemm", "size": 512, "configs": [' + \
        b",".join([b'{"nodes": 1, "ranks_per_node": 1}'] * (schemas.MAX_CONFIGS + 1)) + b"]}"
    with pytest.raises(schemas.RequestError, match="at most 256"):
        schemas.parse(schemas.PredictRequest, many)


def test_schema_endpoint_publishes_every_model(server):
    status, data, _ = server.request("GET", "/v1/schema")
    assert status == 200
    assert set(data["requests"]) >= {"recommend", "predict"}
    assert "workload" in data["requests"]["recommend"]["properties"]
    assert set(data["responses"]) >= {"recommend", "predict", "models", "health"}


def test_answers_validate_against_the_response_models(server):
    status, data, _ = server.request("POST", "/v1/recommend", {**OK, "emit": "slurm"})
    assert status == 200
    schemas.RecommendResponse.model_validate(data)
    assert data["pick"] and data["script"].startswith("#!/bin/bash")


def test_a_predict_answer_says_per_row_what_is_extrapolated_in_its_schema(server):
    """The rows of /v1/predict were untyped (any dict): their ``extrapolated`` is now a
    required list of lines, published in the schema, and the answers hold to it."""
    from pydantic import ValidationError

    status, doc, _ = server.request("GET", "/v1/schema")
    assert status == 200
    row = doc["responses"]["predict"]["$defs"]["Prediction"]
    assert row["properties"]["extrapolated"] == {"items": {"type": "string"},
                                                 "title": "Extrapolated", "type": "array"}
    assert {"valid", "feasible", "reason", "extrapolated"} <= set(row["required"])
    assert "runtime_s" not in row["required"]  # a configuration that is not valid has none
    status, data, _ = server.request("POST", "/v1/predict", {
        "workload": "nope", "size": 10, "partition": "lab/standard",
        "configs": [{"nodes": 1, "ranks_per_node": 2}, {"nodes": 8, "ranks_per_node": 1}]})
    assert status == 200
    schemas.PredictResponse.model_validate(data)
    assert [p["extrapolated"] for p in data["predictions"]] == [
        ["workload 'nope' never measured"], []]
    del data["predictions"][0]["extrapolated"]
    with pytest.raises(ValidationError, match="extrapolated"):
        schemas.PredictResponse.model_validate(data)


def test_rows_declare_unmeasured_and_measured_runs_and_answers_carry_them(server):
    # s31 testers Q5 and QA: the JSON rows' new fields are in the published schema
    status, doc, _ = server.request("GET", "/v1/schema")
    assert status == 200
    row = doc["responses"]["recommend"]["$defs"]["Row"]["properties"]
    assert row["unmeasured"]["type"] == "boolean" and row["measured_runs"]["type"] == "integer"
    assert "measured_runs" in doc["responses"]["predict"]["$defs"]["Prediction"]["properties"]
    status, data, _ = server.request("POST", "/v1/recommend", OK)
    assert status == 200
    for answer_row in [data["pick"], *data["alternatives"], *data["front"]]:
        assert isinstance(answer_row["unmeasured"], bool)
        assert isinstance(answer_row["measured_runs"], int)


def _answer(**extra) -> dict:
    """A minimal recommend answer that passes its response model."""
    return {"workload": "stencil", "size": 140, "objective": "time", "energy": "modelled",
            "verdict": {"verdict": "auto", "reasons": [], "checks": {}}, "pick": None,
            "alternatives": [], "front": [], "partitions": [], **extra}


def test_an_encoded_answer_is_the_json_that_json_dumps_writes():
    import json

    data = _answer(note="é \u2028 <script>\"\\ :NaN, [Infinity]", tiny=1.5e-07, big=1e16,
                   many=[0.1, -0.0, 2**70, None, True])
    body = schemas.encode_answer("recommend", data)
    assert json.loads(body) == data
    assert "é" in body.decode()  # UTF-8, not \u escapes
    plain = _answer(big=1e16, many=[0.1, 2**70, None])
    assert schemas.encode_answer("recommend", plain) == json.dumps(
        plain, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_number_in_an_answer_is_a_bug_never_sent(bad):
    with pytest.raises(ValueError):
        schemas.encode_answer("recommend", _answer(extra=[1.0, bad]))
    with pytest.raises(ValueError):
        schemas.encode_answer("recommend", _answer(extra={"x": bad}))
