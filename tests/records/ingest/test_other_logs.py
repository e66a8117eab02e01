"""Files ingest does not read say what they are and the way on (s37 tester J3, J4, J5)."""

from __future__ import annotations

import json
import os

import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import read_job_log

PBS = ("04/23/2024 10:12:35;E;1234.pbsserver;user=alice group=hpc jobname=stencil "
       "queue=workq Resource_List.walltime=01:00:00 resources_used.walltime=00:12:30\n")
LSF = ('"JOB_FINISH" "10.108" 1713867155 1234 1000 33554438 2 1713866401 0 0 1713866405 '
       '"alice" "normal" "" "" "" "login1"\n')
SGE = "# Version: 8.1.9\n#\n# DO NOT MODIFY THIS FILE MANUALLY!\n#\n" + ":".join(
    ["all.q", "n1", "hpc", "alice", "stencil", "1234"] + ["0"] * 39) + "\n"
FLUX = ("       JOBID USER     NAME       ST NTASKS NNODES     TIME INFO\n"
        "   f2Wqg7Tqs alice    stencil    CD      2      1   12.50m n1\n")
FLUX_JSON = json.dumps({"jobs": [{"id": 1234567890123, "userid": 1000, "username": "alice",
                                  "t_submit": 1713866401.0, "t_run": 1713866405.0,
                                  "t_cleanup": 1713867155.0, "state": 64, "name": "stencil",
                                  "result": 1}]})
SQUEUE = ("JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n"
          "  12 debug sim alice R 0:05 1 n1\n")
JOBCOMP = "JobId=1 UserId=root(0) Name=x JobState=FAILED\n"


@pytest.mark.parametrize("text, said", [
    (PBS, "a PBS Pro / Torque accounting log, not read"),
    (LSF, r"an LSF accounting log \(lsb.acct\), not read"),
    (SGE, "a Grid Engine accounting file, not read"),
    (FLUX, "Flux's flux jobs listing, not read"),
    (FLUX_JSON, r"Flux's job records \(flux jobs --json\), not sacct --json"),
    (SQUEUE, "squeue output"),
    (JOBCOMP, "a Slurm jobcomp/filetxt log, not read; ingest sacct output instead: sacct -a -p "
              "--format=JobID"),
])
def test_another_schedulers_log_says_what_it_is_and_the_way_on(tmp_path, text, said):
    """s37 tester J3, J4: 'not a job log of a known kind ... --kind KIND reads it' (no kind
    does), and Flux's JSON 'unparseable job entry (TypeError)' of a sacct export."""
    path = tmp_path / "log"
    path.write_text(text)
    with pytest.raises(IngestError, match=said) as info:
        read_job_log(path)
    message = str(info.value)
    assert "\n" not in message and "--kind KIND" not in message
    if "squeue" not in said and "jobcomp" not in said:
        assert "Standard Workload Format" in message and "ingest reads Slurm sacct" in message


def test_flux_json_forced_as_sacct_json_says_so(tmp_path):
    path = tmp_path / "flux.json"
    path.write_text(FLUX_JSON)
    with pytest.raises(IngestError, match="Flux's job records") as info:
        read_job_log(path, kind="sacct-json")
    assert "TypeError" not in str(info.value)


def test_random_bytes_are_binary_data_not_a_sacct_export_without_header(tmp_path):
    """s37 tester J5: '\\'|\\'-separated but no JobID header; run sacct -P without
    --noheader'."""
    path = tmp_path / "bin.dat"
    data = bytearray(os.urandom(5000))
    data[10] = ord("|")  # as random bytes often hold
    data[20] = 0
    path.write_bytes(bytes(data))
    with pytest.raises(IngestError, match="binary data, not a text job log"):
        read_job_log(path)
