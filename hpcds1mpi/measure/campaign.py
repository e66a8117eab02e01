"""A campaign: one sweep plan spread over batch jobs, one per node count, a job array of shards.

The split is deterministic and total: the plan's runs are grouped by node count, and the runs
of node count ``N`` (in plan order) are dealt round-robin into ``k = min(K, runs)`` shards, so
each configuration is in exactly one shard and shards of one node count differ in length by at
most one. A shard is a *part*, named ``n{N}-{i}``; it gets its own sweep plan (a TOML file that
``sweep --plan`` reads, one ``[[kernel]]`` per configuration group) and its own telemetry file,
both named by the part, so ``campaign status`` can tell parts apart from the files alone.

The campaign folder (``campaign.json`` is the manifest; everything else is named in it)::

    campaign.json          plan, scheduler, parts and their run ids, submissions
    plan.toml              the plan as given (a copy)
    plans/n1-0.toml ...    each part's sweep plan
    n1.sbatch, n2.sbatch   one job per node count, an array task per shard (n1.pbs under PBS)
    merge.sbatch           merges the shards (`hpcds1mpi telemetry merge`) into merged.h5
    submit.sh              the scheduler commands that submit it all (what --submit runs)
    telemetry/n1-0.h5 ...  each part's telemetry, written by its array task
    parts/n1-0.exit        the exit code of the part's last sweep (absent: it never ended)
    logs/                  the jobs' output

Scripts are written by :mod:`hpcds1mpi.measure.campaign_scripts`, status and submission are
:mod:`hpcds1mpi.measure.campaign_status` and :mod:`hpcds1mpi.measure.campaign_submit`. The
scripts name the folder by absolute path: a moved one is refused
(:mod:`hpcds1mpi.measure.campaign_place`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure.plan import RunSpec, SweepPlan

#: The manifest's name inside a campaign folder and the format it declares.
MANIFEST = "campaign.json"
FORMAT = "hpcds1mpi-campaign"
FORMAT_VERSION = 1
#: ``[sweep]`` keys that are ranges: a part's plan gives every range per ``[[kernel]]``.
RANGE_KEYS = ("sizes", "nodes", "ranks_per_node", "threads", "devices", "precisions")


@dataclass(frozen=True)
class Part:
    """One shard of a campaign: the runs of one node count that one array task sweeps.

    Attributes:
        nodes: the node count of every run in it (its job's allocation).
        index: the array task index, 0..shards-1 within the node count.
        runs: its runs, in plan order.
    """

    nodes: int
    index: int
    runs: tuple[RunSpec, ...]

    @property
    def name(self) -> str:
        """``n{nodes}-{index}``: the stem of its plan, telemetry and exit files."""
        return f"n{self.nodes}-{self.index}"

    @property
    def run_ids(self) -> list[str]:
        return [r.run_id for r in self.runs]


def split(plan: SweepPlan, shards: int) -> list[Part]:
    """Split ``plan`` by node count, each node count into at most ``shards`` parts.

    Args:
        plan: the sweep plan (:func:`hpcds1mpi.measure.plan.build_plan`).
        shards: the most parts per node count (K >= 1); a node count with fewer runs gets one
            part per run.

    Returns:
        The parts, by node count then index; every run of the plan is in exactly one.

    Raises:
        ConfigError: ``shards`` < 1.
    """
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise ConfigError(f"--shards must be a whole number >= 1, got {shards!r}")
    by_nodes: dict[int, list[RunSpec]] = {}
    for spec in plan.runs:
        by_nodes.setdefault(spec.config.nodes, []).append(spec)
    parts = []
    for nodes in sorted(by_nodes):
        runs = by_nodes[nodes]
        k = min(shards, len(runs))
        # Round-robin, not contiguous blocks: plans are ordered by kernel then size, so blocks
        # would give one shard all the large sizes and the array's tasks very unequal times.
        parts += [Part(nodes, i, tuple(runs[i::k])) for i in range(k)]
    return parts


def part_doc(part: Part, plan: SweepPlan) -> dict:
    """The sweep plan of ``part``: the original ``[sweep]`` settings, one ``[[kernel]]`` per
    group of runs that differ only in size, every range given as a list.

    ``valid_only`` is off: the original plan already chose the configurations, and a part must
    sweep exactly those (:func:`check_part_doc` holds it to that).
    """
    sweep = {k: v for k, v in plan.source.get("sweep", {}).items() if k not in RANGE_KEYS}
    sweep["valid_only"] = False
    groups: dict[tuple, list[int]] = {}
    for spec in part.runs:
        c = spec.config
        key = (spec.workload, c.nodes, c.ranks_per_node, c.threads, c.device, c.precision,
               spec.extra, spec.corrupt)
        groups.setdefault(key, []).append(int(spec.size))
    kernels = []
    for (name, nodes, rpn, threads, device, precision, extra, corrupt), sizes in groups.items():
        entry = {"name": name, "sizes": sizes, "nodes": [nodes], "ranks_per_node": [rpn],
                 "threads": [threads], "devices": [device], "precisions": [precision]}
        if extra:
            entry["extra"] = dict(extra)
        if corrupt:
            entry["corrupt"] = True
        kernels.append(entry)
    return {"sweep": sweep, "kernel": kernels}


def check_part_doc(doc: dict, part: Part, partition) -> None:
    """Build ``doc`` as ``sweep --plan`` will and check it holds exactly ``part``'s runs.

    Raises:
        ConfigError: it does not (a bug of the split, said as such).
    """
    from hpcds1mpi.measure.plan import build_plan

    built = build_plan(doc, partition)
    if sorted(r.run_id for r in built.runs) != sorted(part.run_ids):
        raise ConfigError(f"campaign part {part.name}: its plan does not hold exactly its "
                          "configurations (a bug in hpcds1mpi; please report it)")


def toml_text(doc: dict) -> str:
    """``doc`` (a plan dict: ``[sweep]`` and ``[[kernel]]`` of strings, numbers, booleans,
    lists and tables) as TOML text.

    Values are written as JSON literals where JSON and TOML agree (strings, integers, finite
    floats, booleans, arrays); tables become inline tables.
    """
    lines = ["[sweep]"]
    lines += [f"{_key(k)} = {_value(v)}" for k, v in doc.get("sweep", {}).items()]
    for entry in doc["kernel"]:
        lines += ["", "[[kernel]]"] + [f"{_key(k)} = {_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() and key.isascii() \
        else json.dumps(key)


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"a plan value {value!r} is not finite; give a number")
    if isinstance(value, (int, float, str)):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(str(k))} = {_value(v)}" for k, v in value.items()) + "}"
    raise ConfigError(f"a plan value {value!r} cannot be written to a part's plan")


def read_manifest(folder: str | Path) -> dict:
    """The manifest of campaign ``folder``.

    Raises:
        ConfigError: ``folder`` is missing, not a folder, or holds no (or a damaged)
            ``campaign.json``: it is not a campaign.
    """
    from hpcds1mpi.runtime.denied_access import denied_line, is_denied

    folder = Path(folder)
    path = folder / MANIFEST
    try:  # s34 tester U5: a folder closed to this user is no missing or damaged campaign
        os.stat(path)
    except OSError as exc:
        if is_denied(exc):
            raise ConfigError(denied_line(path, "campaign manifest")) from None
    if folder.exists() and not folder.is_dir():  # the plan given for its campaign (s39 H5)
        raise ConfigError(f"{folder} is a file, not a campaign folder; give the --out folder "
                          "of `hpcds1mpi campaign PLAN --emit ...`")
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no such campaign folder; give the --out folder of "
                          "`hpcds1mpi campaign PLAN --emit ...`")
    if not path.is_file():
        raise ConfigError(f"{folder} is not a campaign (no {MANIFEST}); give the --out folder "
                          "of `hpcds1mpi campaign PLAN --emit ...`")
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        if is_denied(exc):
            raise ConfigError(denied_line(path, "campaign manifest")) from None
        raise ConfigError(f"{path}: not a readable campaign manifest ({exc.strerror or exc}); "
                          "restore it or emit the campaign again into a new folder") from None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ConfigError(f"{path}: not a readable campaign manifest ({type(exc).__name__}); "
                          "restore it or emit the campaign again into a new folder") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ConfigError(f"{path}: not a hpcds1mpi campaign manifest; give a campaign folder")
    if doc.get("version") != FORMAT_VERSION:
        raise ConfigError(f"{path}: campaign format version {doc.get('version')!r}, this "
                          f"hpcds1mpi reads {FORMAT_VERSION}; emit it again with this version")
    problem = _manifest_problem(doc)
    if problem:
        raise ConfigError(f"{path}: damaged campaign manifest ({problem}); restore it or emit "
                          "the campaign again into a new folder")
    return doc


def _manifest_problem(doc: dict) -> str:
    if doc.get("scheduler") not in ("slurm", "pbs"):
        return "scheduler"
    parts = doc.get("parts")
    if not isinstance(parts, list) or not parts:
        return "parts"
    for part in parts:
        if not isinstance(part, dict) or not isinstance(part.get("nodes"), int) \
                or not isinstance(part.get("index"), int) \
                or not isinstance(part.get("runs"), list) \
                or part.get("name") != f"n{part.get('nodes')}-{part.get('index')}":
            return "a part"
    if not isinstance(doc.get("jobs"), dict) or not isinstance(doc.get("submissions"), list):
        return "jobs"
    for sub in doc["submissions"]:
        if not isinstance(sub, dict) or not isinstance(sub.get("job_id", ""), str) or (
                "nodes" in sub and (type(sub["nodes"]) is not int or not isinstance(
                    sub.get("indices"), list) or any(type(i) is not int
                                                     for i in sub["indices"]))):
            return "submissions"
    return ""


def write_manifest(folder: str | Path, doc: dict) -> None:
    """Write the manifest by temp-and-rename (a reader never sees half of it)."""
    from hpcds1mpi.atomic import write_text

    write_text(Path(folder) / MANIFEST, json.dumps(doc, indent=1) + "\n", "campaign manifest")


def sbatch_value(script: str | Path, long: str, short: str) -> str | None:
    """What a part script's ``#SBATCH --long=VALUE`` (or ``-short VALUE``) line gives, as the
    campaign wrote it: its job name, time limit or partition, read back by ``status``; "" where
    no such line is there, None where the script cannot be read."""
    import re

    try:
        text = Path(script).read_text()
    except (OSError, UnicodeDecodeError):
        return None
    m = re.search(rf"^#SBATCH\s+(?:--{long}[= ]|-{short}\s*)(\S+)\s*$", text, re.M)
    return m.group(1) if m else ""
