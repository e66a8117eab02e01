"""Runs of one machine: an id named by its start, and refusals that print ids whole and give a
``train`` command that works."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from hpcds1mpi.errors import DataError
from hpcds1mpi.records.machines import refuse_foreign_machines, resolve_machine
from hpcds1mpi.records.training import MIN_OK_RUNS

TRAINED = "a1f575dd1818c3af"
NEW = "5a21b1bc8ca63db8"


def runs(machine: str, n: int, partition: str = "debug") -> pd.DataFrame:
    return pd.DataFrame({"machine_id": [machine] * n, "partition": [partition] * n,
                         "status": ["ok"] * n, "workload": ["abinit"] * n})


def test_a_machine_is_named_by_its_whole_id_or_a_unique_start():
    ids = {TRAINED, NEW, "5a21ffff00000000"}
    assert resolve_machine(NEW, ids) == NEW
    assert resolve_machine("a1f5", ids) == TRAINED
    assert resolve_machine(NEW[:12], ids) == NEW  # what refusals used to print
    assert resolve_machine("anything", set()) == "anything"  # a job table has no ids


def test_an_ambiguous_or_unknown_start_is_refused_naming_the_ids():
    ids = {TRAINED, NEW, "5a21ffff00000000"}
    with pytest.raises(DataError, match="'5a21' is the start of 2 ids "
                                        f"\\({NEW}, 5a21ffff00000000\\); give more"):
        resolve_machine("5a21", ids)
    with pytest.raises(DataError, match=f"no runs from machine 'zz'; the data has "
                                        f"5a21b1bc8ca63db8, 5a21ffff00000000, {TRAINED}"):
        resolve_machine("zz", ids)


def test_runs_of_another_machine_are_refused_with_whole_ids_and_the_train_command():
    with pytest.raises(DataError) as err:
        refuse_foreign_machines({TRAINED}, runs(NEW, MIN_OK_RUNS), files=["calibration.h5"])
    text = str(err.value)
    assert f"machine(s) {NEW} (partition debug) but the bundle was trained on {TRAINED}" in text
    assert text.endswith("`hpcds1mpi train --telemetry calibration.h5 --out DIR`")


def test_too_few_runs_of_another_machine_say_how_many_more_a_model_needs():
    with pytest.raises(DataError) as err:
        refuse_foreign_machines({TRAINED}, runs(NEW, MIN_OK_RUNS - 1), files=["cal.h5"])
    assert (f"once that machine has at least {MIN_OK_RUNS} ok runs (these are "
            f"{MIN_OK_RUNS - 1}): measure more configurations, or the same at another size, on "
            "partition debug into the same file (hpcds1mpi sweep ... --sizes ... --out cal.h5 "
            "--resume)") in str(err.value)  # a 2-core node has 3 layouts only (s39 tester B6)


def test_files_of_several_machines_name_the_foreign_one_for_train():
    both = pd.concat([runs(TRAINED, 4, "local"), runs(NEW, 4)], ignore_index=True)
    with pytest.raises(DataError, match=f"train --telemetry a.h5 --machine {NEW} --out DIR"):
        refuse_foreign_machines({TRAINED}, both, files=["a.h5"])


def _stored(tmp_path, name: str, machine: str, library: str, host: str = "vm",
            partition: str = "local") -> str:
    """A telemetry file of 4 ok runs of ``machine`` on ``host``, fingerprinted with ``library``."""
    from hpcds1mpi.records import telemetry
    from tests.surrogates.test_bundle import make_runs

    path = tmp_path / name
    with telemetry.TelemetryWriter(path) as writer:
        writer.machine({"machine_id": machine, "mpi_library": library})
    rows = make_runs(machine=machine).head(4).assign(hostnames=host, partition=partition)
    telemetry.append(path, rows.to_dict("records"))
    return str(path)


def test_one_hosts_runs_with_two_mpi_libraries_are_said_to_differ_by_library(tmp_path):
    # s28 tester Y7b: train --telemetry heat_ompi.h5 --telemetry heat_mpich.h5 said only
    # "training data mixes 2 machines (6db5100277c3, a1f575dd1818)" for one host's two MPIs.
    from hpcds1mpi.records.training import TrainingData

    files = [_stored(tmp_path, "ompi.h5", TRAINED, "Open MPI v4.1.4, package: Debian OpenMPI"),
             _stored(tmp_path, "mpich.h5", NEW, "MPICH Version: 5.0.2")]
    with pytest.raises(DataError) as refused:
        TrainingData.read(files)
    assert str(refused.value).endswith(
        "; they are the same hardware (host vm) with 2 MPI libraries (MPICH Version: 5.0.2, "
        "Open MPI v4.1.4), and runtimes differ with them: train one model per library "
        f"(--machine {NEW} for MPICH Version: 5.0.2, --machine {TRAINED} for Open MPI v4.1.4)")
    assert TrainingData.read(files, machine=NEW).frame["machine_id"].eq(NEW).all()


def test_one_hosts_runs_in_two_partitions_are_said_to_differ_by_partition(tmp_path):
    from hpcds1mpi.records.training import TrainingData

    files = [_stored(tmp_path, "a.h5", TRAINED, "MPICH Version: 5.0.2", "n1,n2", "debug"),
             _stored(tmp_path, "b.h5", NEW, "MPICH Version: 5.0.2", "n2", "batch")]
    with pytest.raises(DataError, match=re.escape(
            "they are the same hardware (host n2) with 2 partitions (batch, debug), and runtimes "
            f"differ with them: train one model per partition (--machine {NEW} for partition "
            f"batch, --machine {TRAINED} for partition debug)")):
        TrainingData.read(files)
    # Runs on other hosts are other hardware: no such note.
    files[1] = _stored(tmp_path, "c.h5", NEW, "Open MPI v4.1.4", "other", "debug")
    with pytest.raises(DataError) as refused:
        TrainingData.read(files)
    assert "same hardware" not in str(refused.value)



def test_mixing_an_older_versions_runs_of_a_generic_cpu_name_says_why_and_the_resume(tmp_path):
    # s38 tester F1: "mixes 2 machines ... train one bundle per machine" and nothing more
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.records.training import TrainingData
    from tests.surrogates.test_bundle import make_runs

    files = []
    for name, machine, signature in (("old.h5", TRAINED, ""), ("new.h5", NEW, "AuthenticAMD "
                                     "family 26 model 2 stepping 1; avx2")):
        path = tmp_path / name  # old.h5's row as an hpcds1mpi before session 38 wrote it
        with telemetry.TelemetryWriter(path) as writer:
            writer.machine({"machine_id": machine, "cpu_model": "AMD EPYC",
                            "cpu_signature": signature, "mpi_library": "MPICH"})
        telemetry.append(path, make_runs(machine=machine).head(4).to_dict("records"))
        files.append(str(path))
    with pytest.raises(DataError) as refused:
        TrainingData.read(files)
    assert f"; {TRAINED[:12]}'s runs were recorded by an older hpcds1mpi without the CPU's " \
        "signature" in str(refused.value) and "--resume" in str(refused.value)
