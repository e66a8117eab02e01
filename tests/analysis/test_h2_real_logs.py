"""The paper's H2 on real logs: the power's label (modelled / predicted, never measured), the
candidate set over node counts, and tiny end-to-end runs (slices of ../shared/data/joblogs/)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.analysis import h2_real_logs as h2
from tests.analysis.test_h1_real_logs import LOGS, MARCONI

EURORA = LOGS / "CINECA-Eurora-2014-predicted-power.csv"

pytestmark = pytest.mark.skipif(not EURORA.exists(), reason="shared job logs not present")


@pytest.fixture(scope="module")
def eurora_slice(tmp_path_factory):
    path = tmp_path_factory.mktemp("logs") / "eurora.csv"
    lines = EURORA.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:500]))
    return path


def test_modelled_power_is_the_linear_node_model():
    got = h2.modelled_power_w(np.array([1, 2, 4]), np.array([0, 8, 16]))
    node, gpu = h2.MARCONI100_POWER["max_watts_node"], h2.MARCONI100_POWER["max_watts_gpu"]
    np.testing.assert_allclose(got, [node, 2 * node + 8 * gpu, 4 * node + 16 * gpu])


def test_eurora_power_must_be_labelled_as_the_authors_prediction(eurora_slice, monkeypatch):
    jobs, counts = h2.load_log("eurora", str(eurora_slice), None, 0)
    assert counts["with_predicted_power"] > 0
    assert jobs.loc[jobs["avg_power_w"].notna(), "energy_source"].astype(str) \
        .str.startswith("predicted").all()
    relabelled = jobs.copy()
    relabelled["energy_source"] = "measured"
    monkeypatch.setattr(h2, "load_jobs", lambda *a: (relabelled, dict(counts)))
    with pytest.raises(ValueError, match="not labelled as the authors' prediction"):
        h2.load_log("eurora", str(eurora_slice), None, 0)


def test_candidates_scale_the_per_node_request(eurora_slice):
    jobs, _ = h2.load_log("eurora", str(eurora_slice), None, 0)
    sur = h2.Surrogates("eurora", jobs, "xgboost", 0, 1)
    job = jobs[jobs["nodes"] == 1].iloc[[0]]
    rows = sur.candidates(job, 4)
    assert rows["nodes"].tolist() == [1, 2, 3, 4] == rows["req_nodes"].tolist()
    per_node = float(job["req_procs"].iloc[0])
    assert rows["req_procs"].tolist() == [per_node * n for n in (1, 2, 3, 4)]
    table = sur.table(rows)
    assert (table["runtime_s"] > 0).all() and (table[h2.POWER_COLUMN] > 0).all()


def test_exhaustive_search_reaches_the_exact_front(eurora_slice):
    jobs, _ = h2.load_log("eurora", str(eurora_slice), None, 0)
    sur = h2.Surrogates("eurora", jobs, "xgboost", 0, 1)
    rows = sur.candidates(jobs.iloc[[0]], 8)
    problem = h2.make_problem(rows, sur.table(rows), "p", "predicted")
    rec = h2.compare(problem, ["exact", "random"], [8], [0], "p")
    assert rec[0]["hv_ratio@8"] == pytest.approx(1.0)
    assert 0.0 <= rec[1]["hv_ratio@8"] <= 1.0 + 1e-12


@pytest.mark.parametrize("log", ["eurora", "marconi100"])
def test_main_labels_the_power_and_writes_the_tables(log, eurora_slice, tmp_path):
    if log == "eurora":
        path = eurora_slice
    else:
        path = tmp_path / "m100.parquet"
        pd.read_parquet(MARCONI).iloc[:400].to_parquet(path)
    doc = h2.main([log, str(path), "--problems", "1", "--seeds", "1", "--evals", "5,6",
                   "--methods", "mobo,random", "--min-front", "1", "--out-dir", str(tmp_path)])
    md = (tmp_path / f"h2_real_logs_{log}.md").read_text()
    saved = json.loads((tmp_path / f"h2_real_logs_{log}.json").read_text())
    assert saved["power_source"] == doc["power_source"]
    if log == "eurora":
        assert doc["power_source"].startswith("predicted") and "PREDICTED" in md
    else:
        assert doc["power_source"] == "modelled" and "MODELLED" in md
    assert "measured" not in doc["power_source"]
    assert doc["n_problems"] == 1 and {r["method"] for r in doc["records"]} == {"mobo", "random"}
    assert all(0.0 <= r["hv_ratio@6"] <= 1.0 + 1e-12 for r in doc["records"])
    assert doc["command"].startswith(".venv/bin/python -m hpcds1mpi.analysis.h2_real_logs")
