"""What the service accepts and answers: pydantic models for every ``/v1`` body.

A request is checked as strictly as the command line checks its options (the same bounds, from
:mod:`hpcds1mpi.schemas.limits`, the same strict base model and the same one-line messages from
:func:`hpcds1mpi.schemas.base.describe`): ``"size": "1024"`` is a wrong type, not a number, an
unknown key names the known ones, and a string may not carry control characters (a newline in
``program`` would add a line to the batch script). Answers are checked against the response
models before they leave, so ``GET /v1/schema`` describes exactly what is sent.

The recommend request has the fields of ``hpcds1mpi recommend`` that name the question; what
names a file on the server (``--cluster``, ``--model``, ``--failure-history``, ``-o``) is fixed
when the server starts, the walltime from a job table (``--history``, ``--user``,
``--time-limit``, ``--walltime-coverage``) is not served, and ``--record-failure`` (a write)
has no counterpart.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal, Optional

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictStr,
                      ValidationError)

from hpcds1mpi.schemas.base import Count, Joules, Schema, Seconds, Size, describe, key_path
from hpcds1mpi.schemas.limits import MAX_COUNT

#: Longest one-line text field (a workload label, a partition or job name).
MAX_NAME = 200
#: Longest program command line (the CLI has no limit; a request needs one).
MAX_PROGRAM = 2000
#: Most configurations one ``/v1/predict`` asks about.
MAX_CONFIGS = 256
#: Most partitions one request may allow.
MAX_PARTITIONS = 64
#: Longest batch script ``/v1/advise`` reads, in characters.
MAX_SCRIPT = 60_000

# One line of printable text: no C0 control characters (tab excepted) and no DEL; a name
# also has one character that is not a space (a blank workload is no question: as the CLI).
_ONE_LINE = r"^[^\x00-\x08\x0a-\x1f\x7f]*$"
_NAME = r"^[^\x00-\x08\x0a-\x1f\x7f]*[^\x00-\x20\x7f][^\x00-\x08\x0a-\x1f\x7f]*$"
Text = Annotated[StrictStr, Field(min_length=1, max_length=MAX_NAME, pattern=_NAME)]
Program = Annotated[StrictStr, Field(min_length=1, max_length=MAX_PROGRAM, pattern=_ONE_LINE)]
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _as_list(value: Any) -> Any:
    """A partition given as one name is a list of that one (``"p"`` as ``["p"]``)."""
    return [value] if isinstance(value, str) else value


def _as_one(value: Any) -> Any:
    """A partition given as a list of one name is that name (``["p"]`` as ``"p"``)."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


#: ``partition``: one name or a list of names in both /v1/recommend (which may allow several)
#: and /v1/predict (which answers for one), so a client may send either form to either.
Partitions = Annotated[list[Text], Field(max_length=MAX_PARTITIONS), BeforeValidator(_as_list)]
OnePartition = Annotated[Optional[Text], BeforeValidator(_as_one)]


class RequestError(ValueError):
    """A request body that cannot be used: ``status`` (413 or 422) and one line of reason."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


class RecommendRequest(Schema):
    """``POST /v1/recommend``: the options of ``hpcds1mpi recommend`` that ask the question."""

    workload: Text
    size: Size
    partition: Partitions = []
    objective: Literal["time", "energy", "edp", "balanced"] = "time"
    max_nodes: Optional[Count] = None
    deadline: Optional[Seconds] = None
    energy_budget: Optional[Joules] = None
    device: Optional[Literal["cpu", "gpu"]] = None
    emit: Optional[Literal["slurm", "pbs"]] = None
    program: Optional[Program] = None
    job_name: Optional[Text] = None
    job_output: Optional[Text] = None
    exclusive: StrictBool = False
    # How a calibration sweep of ``program`` reads it, as `recommend --time-regex ...`: the
    # bundle's recorded options are used where these are not given (``READING_KEYS`` of
    # ``launch.sweep_step``; ``serve.service`` reads them by that list).
    time_regex: Optional[Text] = None
    fom_regex: Optional[Text] = None
    ranks_regex: Optional[Text] = None
    output_file: Optional[Text] = None
    workdir: Optional[Text] = None
    fail_regex: Optional[Text] = None
    setup: Optional[Text] = None


class ConfigIn(Schema):
    """One configuration to predict."""

    nodes: Count
    ranks_per_node: Count
    threads: Count = 1
    device: Literal["cpu", "gpu"] = "cpu"
    precision: Literal["fp64", "fp32", "bf16"] = "fp64"


class PredictRequest(Schema):
    """``POST /v1/predict``: the model's runtime, energy and failure odds of given
    configurations of one job on one partition."""

    workload: Text
    size: Size
    partition: OnePartition = None
    configs: Annotated[list[ConfigIn], Field(min_length=1, max_length=MAX_CONFIGS)]


class AdviseRequest(Schema):
    """``POST /v1/advise``: an existing Slurm or PBS script, as text (never a path)."""

    script: Annotated[StrictStr, Field(min_length=1, max_length=MAX_SCRIPT)]
    workload: Optional[Text] = None
    size: Optional[Size] = None
    objective: Literal["time", "energy", "edp", "balanced"] = "time"


# --------------------------------------------------------------------------------------------
# Answers. Open to extra keys where the decide layer may add evidence, closed where the console
# and clients depend on a field being there.


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Layout(_Open):
    """Where and how a configuration runs: the fields every answer's rows start with."""

    partition: str
    nodes: int
    ranks_per_node: int
    threads: int
    device: str
    precision: str


class Row(_Layout):
    """One scored configuration (``recommendation._row``)."""

    runtime_s: Optional[float]
    runtime_lo: Optional[float]
    runtime_hi: Optional[float]
    energy_j: Optional[float]
    energy_lo: Optional[float]
    energy_hi: Optional[float]
    fail_prob: Optional[float]
    mem_need_mb: Optional[float]
    #: a knob level the workload was never measured at: extrapolated (s31 tester Q5)
    unmeasured: bool = False
    #: runs of this configuration at this size its values are; 0: modelled (s31 tester QA)
    measured_runs: int = 0


class Pick(Row):
    cluster: str
    confidence: Optional[float]
    confidence_calibrated: bool


class FrontRow(Row):
    pick: bool


class VerdictOut(_Open):
    verdict: Literal["auto", "confirm", "escalate"]
    reasons: list[str]
    checks: dict[str, str]


class PartitionOut(_Open):
    partition: str
    cluster: str
    status: Literal["picked", "rejected"]
    reason: str
    best: Optional[Row] = None


class RecommendResponse(_Open):
    """What ``recommend --json`` prints, plus the batch script text when ``emit`` was given
    (a script that cannot be written is a 422 with the command's one line, never a null)."""

    workload: str
    size: int
    objective: str
    verdict: VerdictOut
    energy: str
    pick: Optional[Pick]
    alternatives: list[Row]
    front: list[FrontRow]
    partitions: list[PartitionOut]
    calibration: list[dict[str, Any]] = []
    script: Optional[str] = None


class Prediction(_Layout):
    """One configuration's prediction. ``valid`` False (and ``reason``) when the partition
    cannot run it, and then no scores; ``feasible`` whether System 1 would consider it (not
    failing, fits in memory); ``extrapolated`` one line per way its prediction goes beyond what
    was measured: the job's own first (a workload never measured, a size outside the measured
    ones, hardware never trained on), then the configuration's knobs ([] when none, and for a
    configuration that is not valid)."""

    valid: bool
    feasible: bool
    reason: str
    extrapolated: list[str]
    measured_runs: int = 0  # runs at this size its values are (s31 tester QA)
    runtime_s: Optional[float] = None
    runtime_lo: Optional[float] = None
    runtime_hi: Optional[float] = None
    energy_j: Optional[float] = None
    energy_lo: Optional[float] = None
    energy_hi: Optional[float] = None
    fail_prob: Optional[float] = None
    mem_need_mb: Optional[float] = None


class PredictResponse(_Open):
    workload: str
    size: int
    partition: str
    energy: str
    verdict: VerdictOut
    predictions: list[Prediction]


class AdviseResponse(_Open):
    """What ``advise --json`` prints, plus ``rewritten``: the script with the recommended
    layout (what ``--rewrite OUT`` would write), None when there is nothing to rewrite."""

    scheduler: str
    workload: Optional[str]
    verdict: VerdictOut
    asked: Optional[dict[str, Any]]
    recommended: Optional[dict[str, Any]]
    summary: str
    changes: list[dict[str, Any]]
    rewritten: Optional[str]


class ModelsResponse(_Open):
    model: str
    format_version: Any
    workloads: list[str]
    size_range: dict[str, list[float]]
    partitions: dict[str, Any]
    energy: str
    places: list[str]


class HealthResponse(_Open):
    """``ok``, or ``degraded`` with a ``reason`` when no worker process can compute."""

    status: Literal["ok", "degraded"]
    reason: Optional[str] = None


REQUESTS = {"recommend": RecommendRequest, "predict": PredictRequest, "advise": AdviseRequest}
RESPONSES = {"recommend": RecommendResponse, "predict": PredictResponse,
             "advise": AdviseResponse,
             "models": ModelsResponse, "health": HealthResponse}


def parse(model: type[Schema], body: bytes) -> Schema:
    """``body`` (JSON bytes) checked against ``model``.

    Raises:
        RequestError: 422 with one line: not JSON, not an object, a key given twice in one
            object (which value was meant?), nested too deeply, or the first field that is
            wrong (its key path, what it must be, what was sent).
    """
    from hpcds1mpi.measure.printable import clipped

    try:
        data = json.loads(body, object_pairs_hook=_once_each, parse_int=_whole_number)
    except RequestError:
        raise
    except RecursionError:
        raise RequestError(422, "body is nested too deeply; send a flat JSON object") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestError(422, f"body is not JSON ({clipped(str(exc).splitlines()[0], 80)}); "
                                "send a JSON object") from None
    if not isinstance(data, dict):
        raise RequestError(422, f"body must be a JSON object, got {_json_kind(data)}")
    try:
        return model.model_validate(data)
    except RecursionError:
        raise RequestError(422, "body is nested too deeply; send a flat JSON object") from None
    except ValidationError as exc:
        problems = exc.errors(include_url=False)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RequestError(422, " ".join(f"{_described(problems[0])}{more}".split())) from None


#: Digits of the longest integer Python converts from text (its default limit).
_MAX_DIGITS = 4300


def _whole_number(text: str) -> int:
    """A JSON integer; one longer than Python converts (4,300 digits) refused in the request's
    words, not Python's (its message, advice for programmers, was cut mid-word)."""
    digits = len(text.lstrip("-"))
    if digits > _MAX_DIGITS:
        raise RequestError(422, f"body holds a number of {digits} digits, beyond what any key "
                                "takes; send the number meant")
    return int(text)


def _json_kind(value) -> str:
    """What a client sent, in JSON's words (``null``, not Python's ``NoneType``)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return {list: "an array", str: "a string"}.get(type(value), "a number")


def _once_each(pairs: list) -> dict:
    """A JSON object's pairs as a dict; a key given twice is refused (JSON lets the last one
    win silently, so a client's mistake would be answered as if meant)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise RequestError(422, f"key {twice!r} is given twice in one object; send each key "
                                "once")
    return out


#: What to send instead of an empty text, by key (a name otherwise).
_EMPTY_FIX = {"program": "leave 'program' out or send the command line",
              "script": "send the batch script's text"}


def _described(problem: dict) -> str:
    """One validation problem in words (:func:`describe`); a text that breaks the one-line
    pattern is said as what it has, not as the pattern, and an empty one as empty (not
    pydantic's "String should have at least 1 character")."""
    if problem["type"] == "string_too_short" and (problem.get("ctx") or {}).get(
            "min_length") == 1:
        loc = tuple(problem["loc"])
        fix = _EMPTY_FIX.get(str(loc[-1]) if loc else "",
                             "send a name with a character that is not a space")
        return f"{key_path(loc)} is empty; {fix}"
    if problem["type"] == "string_pattern_mismatch":
        where = key_path(tuple(problem["loc"]))
        if _CONTROL.search(str(problem.get("input", ""))):
            return (f"{where} has a control character (a newline, escape or the like); send "
                    "one line of printable text")
        return f"{where} is blank; send a name with a character that is not a space"
    return describe(problem)


#: The CLI options that shared error texts name, as this service's request keys (every
#: option a recommend request has; ``sweep --command`` and the like are other commands').
REQUEST_NAMES = {"--size": "'size'", "--workload": "'workload'", "--partition": "'partition'",
                 "--device": "'device'", "--objective": "'objective'",
                 "--max-nodes": "'max_nodes'", "--deadline": "'deadline'",
                 "--energy-budget": "'energy_budget'", "--emit": "'emit'",
                 "--program": "'program'", "--job-name": "'job_name'",
                 "--job-output": "'job_output'", "--exclusive": "'exclusive'",
                 "--time-regex": "'time_regex'", "--fom-regex": "'fom_regex'",
                 "--ranks-regex": "'ranks_regex'", "--output-file": "'output_file'",
                 "--workdir": "'workdir'", "--fail-regex": "'fail_regex'", "--setup": "'setup'",
                 "--cluster": "the server's cluster file", "--model": "the server's model"}


def request_wording(text: str) -> str:
    """An error text of the shared decide layer (written for the command line) in this
    service's words: request keys, not CLI options (``relax 'deadline'``)."""
    from hpcds1mpi.schemas.api_args import reworded

    return reworded(text, REQUEST_NAMES)


def checked(kind: str, data: dict) -> dict:
    """An answer checked against its response model (a mismatch is a bug: ValidationError)."""
    RESPONSES[kind].model_validate(data)
    return data


#: A bare non-finite number after ``:``, ``,`` or ``[`` in encoded JSON (pydantic_core writes
#: NaN / Infinity as such tokens); a string can hold the same text, hence the exact recheck.
_NON_FINITE = re.compile(rb"[:,\[](?:-?Infinity|NaN)[,\]}]")


def encode_answer(kind: str, data: dict) -> bytes:
    """An answer checked (:func:`checked`) and encoded as compact UTF-8 JSON.

    pydantic_core's encoder (Rust, already a dependency) writes the JSON that ``json.dumps``
    with ``separators=(",", ":"), ensure_ascii=False`` writes (small numbers may be spelled
    otherwise: ``1e-05`` as ``0.00001``, ``1e-07`` as ``1e-7``; the same values) at a sixth of
    its cost (~17 against ~100 µs for a 4 KB recommend answer, measured; the service's worker
    encodes every new answer). It has no mode that refuses NaN or Infinity, so an answer holding one goes the
    ``json.dumps(allow_nan=False)`` way, which raises: a non-finite number is a bug, never
    sent.
    """
    from pydantic_core import to_json

    body = to_json(checked(kind, data))
    # The plain substring tests first: a regular-expression scan of a 4 KB answer cost as
    # much as encoding it (~19 µs, measured); ``in`` is a fast byte search.
    if (b"NaN" in body or b"Infinity" in body) and _NON_FINITE.search(body):
        body = json.dumps(data, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":")).encode()
    return body


def schema_document() -> dict:
    """Every request and response model as JSON Schema (``GET /v1/schema``)."""
    return {"requests": {k: m.model_json_schema() for k, m in REQUESTS.items()},
            "responses": {k: m.model_json_schema() for k, m in RESPONSES.items()},
            "limits": {"max_name": MAX_NAME, "max_program": MAX_PROGRAM,
                       "max_configs": MAX_CONFIGS, "max_partitions": MAX_PARTITIONS,
                       "max_script": MAX_SCRIPT, "max_count": MAX_COUNT}}
