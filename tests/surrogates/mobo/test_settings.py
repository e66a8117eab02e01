"""The paper's acquisition settings and the two fitting policies, as recorded in outputs."""

from hpcds1mpi.surrogates import mobo


def test_profile_dict_records_the_papers_settings_and_the_policy():
    doc = mobo.profile_dict()
    assert doc["profile"] == {"mc_samples": 128, "q": 1, "num_restarts": 5, "raw_samples": 32,
                              "iterations": 300, "batch_size": 2048}
    assert doc["policy"]["name"] == "optimised" and doc["policy"]["prune"]
    straight = mobo.profile_dict(policy=mobo.STRAIGHTFORWARD)["policy"]
    assert straight["refit_every"] == 1 and not straight["warm_start"] and not straight["prune"]
