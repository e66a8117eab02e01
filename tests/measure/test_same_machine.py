"""A known machine measured under another partition name is that machine (s33 tester B6): its
fingerprint with the trained name is the known id; other hardware or another MPI is not."""

from __future__ import annotations

import pandas as pd

from hpcds1mpi.cluster import Partition
from hpcds1mpi.measure.meters import fingerprint, machine_id
from hpcds1mpi.measure.same_machine import learnt_as_known, renamed_machines

LIBRARY = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4"


def this_machine(name: str, library: str = LIBRARY) -> dict:
    """This machine's real machines-table row, measured as in partition ``name``."""
    return fingerprint(Partition(name, 2, 8.0), hostnames=["vm"], mpi_library=library,
                       gpu_aware=False)


def stored_runs(path, machine: dict, runs) -> str:
    """A telemetry file at ``path`` of ``machine`` (a machines-table row) holding ``runs``
    (a runs table) as that machine's, in its partition: the files learn and train read."""
    from hpcds1mpi.records import telemetry

    with telemetry.TelemetryWriter(path) as writer:
        writer.machine(machine)
    runs = runs.assign(machine_id=machine["machine_id"], partition=machine["partition"])
    telemetry.append(path, runs.to_dict("records"))
    return str(path)


def test_another_partition_name_of_the_same_machine_is_the_known_machine():
    local, debug = this_machine("local"), this_machine("debug")
    assert local["machine_id"] != debug["machine_id"]  # the name is part of the fingerprint
    found = renamed_machines({debug["machine_id"]: debug}, {local["machine_id"]}, ["local"])
    assert found == {debug["machine_id"]: (local["machine_id"], "local")}


def test_other_hardware_or_another_mpi_under_another_name_stays_another_machine():
    local = this_machine("local")
    others = [this_machine("debug", "MPICH Version: 4.0.2"),
              {**this_machine("debug"), "physical_cores": 64},
              {**this_machine("debug"), "cpu_model": "AMD EPYC 7763"},
              {**this_machine("debug"), "gpu_count": 4}]
    for row in others:
        row["machine_id"] = machine_id(row)
        assert renamed_machines({row["machine_id"]: row}, {local["machine_id"]},
                                ["local"]) == {}, row
    # a known machine is itself, and a name the bundle never trained on renames nothing
    assert renamed_machines({local["machine_id"]: local}, {local["machine_id"]}, ["local"]) == {}
    debug = this_machine("debug")
    assert renamed_machines({debug["machine_id"]: debug}, {local["machine_id"]}, ["gpu"]) == {}


def test_the_renamed_runs_take_the_known_id_and_trained_partition_and_are_said():
    frame = pd.DataFrame({"machine_id": ["new", "new", "other"], "workload": "lap",
                          "partition": ["debug", "debug", "big"]})
    frame.attrs["mpi_libraries"] = {"new": LIBRARY}
    out, notes = learnt_as_known(frame, {"new": ("known", "local")})
    assert out["machine_id"].tolist() == ["known", "known", "other"]
    assert out["partition"].tolist() == ["local", "local", "big"]
    assert out.attrs["mpi_libraries"] == {"new": LIBRARY}
    assert frame["machine_id"].tolist() == ["new", "new", "other"]  # the input unchanged
    assert notes == ["the 2 run(s) of machine new (partition debug) are of the bundle's machine "
                     "known under another partition name (same hardware and MPI library): "
                     "learnt as partition local's"]
    assert learnt_as_known(frame, {}) == (frame, [])


def test_tune_and_learn_name_the_same_machines_as_unlearnable(tmp_path):
    """tune's last line said "add them with learn" from the partition's hardware alone;
    learn's rule is the fingerprint's: another MPI under the same cores is refused."""
    from hpcds1mpi.measure.same_machine import unlearnable_machines
    from hpcds1mpi.records import telemetry

    def stored(name: str, machine: dict) -> str:
        with telemetry.TelemetryWriter(tmp_path / name) as writer:
            writer.machine(machine)
        return str(tmp_path / name)

    local, mpich = this_machine("local"), this_machine("debug", "MPICH Version: 4.0.2")
    known = {local["machine_id"]}
    assert unlearnable_machines([stored("d.h5", this_machine("debug"))], known, ["local"]) == []
    assert unlearnable_machines([stored("m.h5", mpich)], known, ["local"]) == [
        mpich["machine_id"]]
    assert unlearnable_machines([stored("m2.h5", mpich)], set(), ["local"]) == []  # job tables


def test_one_machine_under_two_names_is_made_one_and_other_hardware_is_left():
    """train had refused one machine's runs under two partition names that learn takes as one
    (s33's left item); another MPI on the same host stays another machine."""
    from hpcds1mpi.measure.same_machine import one_machine_under_names

    local, debug = this_machine("local"), this_machine("debug")
    mpich = this_machine("gpu", "MPICH Version: 4.0.2")
    ids = [local["machine_id"]] * 3 + [debug["machine_id"]] * 2 + [mpich["machine_id"]]
    frame = pd.DataFrame({"machine_id": ids, "workload": "lap",
                          "partition": ["local"] * 3 + ["debug"] * 2 + ["gpu"]})
    machines = {m["machine_id"]: m for m in (local, debug, mpich)}
    out, notes = one_machine_under_names(frame, machines)
    assert out["machine_id"].tolist() == [local["machine_id"]] * 5 + [mpich["machine_id"]]
    assert out["partition"].tolist() == ["local"] * 5 + ["gpu"]
    assert notes == [f"the 2 run(s) of machine {debug['machine_id']} (partition debug) are of "
                     f"machine {local['machine_id']} under another partition name (same "
                     "hardware and MPI library): trained as partition local's"]
    assert one_machine_under_names(frame.iloc[:3], machines)[1] == []


def test_a_generic_cpu_name_without_a_signature_is_no_known_machine_either_way():
    """s38 tester K2: the same machine but for a CPU signature one side lacks is named, with
    whose record lacks it, for learn's refusal; a file holding both keeps them apart, said."""
    from hpcds1mpi.measure.same_machine import untold_machines, untold_twins

    def on(signature: str) -> dict:
        row = {**this_machine("local"), "cpu_model": "AMD EPYC", "cpu_signature": signature}
        return {**row, "machine_id": machine_id(row)}

    old, new = on(""), on("AuthenticAMD family 26 model 2 stepping 1; avx512f")
    assert old["machine_id"] != new["machine_id"]
    assert untold_machines({new["machine_id"]: new}, {old["machine_id"]}, {"local": {}}) == \
        {new["machine_id"]: (old["machine_id"], "bundle")}
    signed = {"local": {"cpu_model": "AMD EPYC", "cpu_signature": new["cpu_signature"]}}
    assert untold_machines({old["machine_id"]: old}, {new["machine_id"]}, signed) == \
        {old["machine_id"]: (new["machine_id"], "runs")}
    assert untold_machines({old["machine_id"]: old}, {new["machine_id"]}, {"local": {}}) == {}
    named = {**new, "cpu_model": "AMD EPYC 9575F"}
    assert untold_machines({machine_id(named): named}, {old["machine_id"]}, {"local": {}}) == {}
    [line] = untold_twins({m["machine_id"]: m for m in (old, new)})
    assert line.startswith(f"machine {old['machine_id']} (CPU 'AMD EPYC') was recorded "
                           f"without the CPU's signature, so it is kept apart from machine "
                           f"{new['machine_id']}")
    assert untold_twins({new["machine_id"]: new}) == []
