"""The enumerated design space and its GP encoding."""

import numpy as np
import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.surrogates import mobo
from tests.surrogates.mobo import PART


def test_candidates_full_space_are_valid_and_mixed():
    cands = mobo.build_candidates(PART, "gemm", 256, "full")
    assert set(cands["device"]) == {"cpu", "gpu"} and set(cands["precision"]) == {"fp64", "fp32", "bf16"}
    # Only what a kernel declares: stencil has no bf16, allreduce no threads.
    assert set(mobo.build_candidates(PART, "stencil", 256, "full")["precision"]) == {"fp64", "fp32"}
    assert set(mobo.build_candidates(PART, "allreduce", 4096, "full")["threads"]) == {1}
    assert "bf16" in set(mobo.build_candidates(PART, "my_app", 1, "full")["precision"])
    assert ((cands["ranks_per_node"] * cands["threads"]) <= PART.cores_per_node).all()
    assert (cands.loc[cands.device == "gpu", "ranks_per_node"] <= PART.gpus_per_node).all()
    assert not cands.duplicated().any()
    X = mobo.encode(cands)
    assert X.min() >= 0 and X.max() <= 1 and len(np.unique(X, axis=0)) == len(cands)
    nodes = mobo.build_candidates(PART, "stencil", 256, "nodes")
    assert nodes["nodes"].tolist() == list(range(1, 9)) and nodes["ranks_per_node"].nunique() == 1


def test_node_counts_every_count_or_powers_of_two():
    assert mobo.node_counts(PART, "pow2") is None
    assert mobo.node_counts(PART, "all") == list(range(1, 9))
    with pytest.raises(ConfigError, match="node counts"):
        mobo.node_counts(PART, "odd")
    pow2 = mobo.build_candidates(PART, "stencil", 256, "full")
    every = mobo.build_candidates(PART, "stencil", 256, "full", nodes=mobo.node_counts(PART, "all"))
    assert sorted(set(pow2["nodes"])) == [1, 2, 4, 8] and sorted(set(every["nodes"])) == list(range(1, 9))
    assert len(every) == 2 * len(pow2)  # 8 node counts instead of 4, the rest unchanged
