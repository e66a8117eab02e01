"""Other schedulers' jobs told by their variables: one table for places and the node reach."""

from hpcds1mpi.foreign_jobs import SCHEDULERS, all_variables, foreign_job, host_variables


def test_another_schedulers_job_is_told_by_its_variables():
    """s35 tester X4."""
    assert foreign_job({"PBS_JOBID": "9.pbs", "PBS_ENVIRONMENT": "PBS_BATCH"}).named() == \
        "a PBS job (PBS_JOBID=9.pbs)"
    assert foreign_job({"LSB_JOBID": "12", "LSB_HOSTS": "a b"}).named() == \
        "an LSF job (LSB_JOBID=12)"
    assert foreign_job({"JOB_ID": "5", "PE_HOSTFILE": "/x"}).scheduler == "Grid Engine"
    assert foreign_job({"FLUX_JOB_ID": "f2YfM", "FLUX_URI": "x"}).scheduler == "Flux"
    assert foreign_job({"COBALT_JOBID": "3"}).scheduler == "Cobalt"
    assert foreign_job({"JOB_ID": "5"}) is None  # a common name alone is no Grid Engine job
    assert foreign_job({"PBS_JOBID": "  "}) is None and foreign_job({}) is None
    assert foreign_job({"PBS_JOBID": "a b\n"}).job == "(set)"  # not quoted into the line


def test_the_node_reach_and_the_job_note_read_one_table():
    """s35 review: the node reach took Grid Engine's JOB_ID for nothing and a lone JOB_ID
    could never be a job there while places needed a second variable; both read SCHEDULERS."""
    assert host_variables({"JOB_ID": "5"}) == []  # no Grid Engine job, as places says
    assert host_variables({"JOB_ID": "5", "SGE_TASK_ID": "undefined"}) == ["JOB_ID"]
    assert host_variables({"PE_HOSTFILE": "/h"}) == ["PE_HOSTFILE"]  # a file hosts come from
    assert host_variables({"COBALT_JOBID": "3", "COBALT_NODEFILE": "/n"}) == \
        ["COBALT_JOBID", "COBALT_NODEFILE"]
    # a scheduler whose host file the caller counts is left to it, job variable and all
    assert host_variables({"PBS_JOBID": "9", "PBS_NODEFILE": "/n"}, counted=("PBS_NODEFILE",)) \
        == []
    assert host_variables({"PBS_JOBID": "9", "PBS_NODEFILE": "/n"}) == \
        ["PBS_JOBID", "PBS_NODEFILE"]
    for scheduler in SCHEDULERS:  # every job variable the note knows is a host source too
        env = {scheduler.job: "1", **{name: "x" for name in scheduler.beside[:1]}}
        assert foreign_job(env).variable == scheduler.job
        assert scheduler.job in host_variables(env)
    assert {"PBS_JOBID", "LSB_MCPU_HOSTS", "NHOSTS", "FLUX_URI"} <= all_variables()
