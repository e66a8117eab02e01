"""Property: a cluster file whose numbers are out of range is refused in one line naming the key
(Hypothesis, derandomized: the same examples on every run)."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _toml_float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def _cluster(box, memory="16", cores="4", nodes="2") -> str:
    path = box.root / "fuzz.toml"
    path.write_text(f"[clusters.c.partitions.p]\ncores_per_node = {cores}\n"
                    f"memory_gb = {memory}\nmax_nodes = {nodes}\n")
    return str(path)


@SETTINGS
@given(memory=st.floats(allow_nan=True, allow_infinity=True).filter(
    lambda v: not (0 < v <= 1e6)))
def test_memory_out_of_range(box, capsys, memory):
    path = _cluster(box, memory=_toml_float(memory))
    box.before = None
    box.refused(capsys, ["cluster", "--cluster", path], 2, "memory_gb")


@SETTINGS
@given(cores=st.one_of(st.integers(max_value=0), st.integers(min_value=10**6 + 1)))
def test_cores_out_of_range(box, capsys, cores):
    path = _cluster(box, cores=str(cores))
    box.before = None
    box.refused(capsys, ["cluster", "--cluster", path], 2, "cores_per_node")


@SETTINGS
@given(nodes=st.one_of(st.booleans().map(lambda b: "true" if b else "false"),
                       st.floats(min_value=1.5, max_value=1e6).map(repr),
                       st.text(alphabet="abc xyz", min_size=1, max_size=8).map(repr)))
def test_node_count_of_the_wrong_type(box, capsys, nodes):
    path = _cluster(box, nodes=nodes)
    box.before = None
    box.refused(capsys, ["cluster", "--cluster", path], 2, "max_nodes")
