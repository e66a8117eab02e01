"""A resumed sweep's file holding this machine's runs under an earlier id (s38 tester K2)."""

from __future__ import annotations

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.measure import meters
from hpcds1mpi.measure.resumed_machine import adopt_earlier_record, untold_elsewhere
from hpcds1mpi.records.telemetry import TelemetryWriter, load
from tests.records.telemetry.rows import run_row


def _this_machine(monkeypatch) -> dict:
    from hpcds1mpi import cluster, cpu_signature
    from tests.test_cpu_signature import ZEN5

    monkeypatch.setattr(cpu_signature, "_read_cpuinfo", lambda: ZEN5)
    monkeypatch.setattr(cluster, "_cpu_model", lambda: "AMD EPYC")
    return meters.fingerprint(Partition("local", cores_per_node=2, memory_gb=8),
                              hostnames=["h"], mpi_library="MPICH 5", gpu_aware=False)


def _old_file(path, fp: dict, **change) -> str:
    """A file an hpcds1mpi before session 38 wrote: no CPU signature, its id without it."""
    old = {**fp, "cpu_signature": "", **change}
    old["machine_id"] = meters.machine_id(old)
    writer = TelemetryWriter(str(path))
    writer.open()
    writer.machine(old)
    writer.record(run_row(0, old["machine_id"], workload="w"))
    writer.close()
    return old["machine_id"]


def test_this_hosts_runs_recorded_without_the_signature_are_kept_as_this_machines(
        tmp_path, monkeypatch):
    fp = _this_machine(monkeypatch)
    old = _old_file(tmp_path / "t.h5", fp)
    assert old != fp["machine_id"]
    writer = TelemetryWriter(str(tmp_path / "t.h5"), resume=True)
    writer.open()
    note = adopt_earlier_record(writer, fp, "t.h5")
    writer.close()
    assert f"the runs in t.h5 of this host (machine {old[:12]}, CPU 'AMD EPYC') were " \
        "recorded without the CPU's signature" in note and fp["machine_id"][:12] in note
    store = load(tmp_path / "t.h5")
    assert set(store.machines) == {fp["machine_id"]}  # one id: nothing measured again
    assert {k[0] for k in store.runs} == {fp["machine_id"]}
    assert store.machines[fp["machine_id"]]["cpu_signature"] == fp["cpu_signature"]


def test_an_old_file_merged_with_a_new_one_is_re_keyed_by_a_resume_too(tmp_path, monkeypatch):
    """s38 tester F2: the merged file holds both ids; its untold record of this host was kept
    apart, though the merge's note advises this very resume."""
    fp = _this_machine(monkeypatch)
    old = _old_file(tmp_path / "t.h5", fp)
    with TelemetryWriter(str(tmp_path / "t.h5"), resume=True) as writer:  # the new file's run
        writer.machine(fp)
        writer.record(run_row(1, fp["machine_id"], workload="w"))
    with TelemetryWriter(str(tmp_path / "t.h5"), resume=True) as writer:
        note = adopt_earlier_record(writer, fp, "t.h5")
    assert f"this host (machine {old[:12]}" in note and "they are kept, as machine" in note
    store = load(tmp_path / "t.h5")
    assert set(store.machines) == {fp["machine_id"]}
    assert sorted(store.runs) == [(fp["machine_id"], "r000"), (fp["machine_id"], "r001")]
    assert store.machines[fp["machine_id"]]["adopted_ids"] == old


@pytest.mark.parametrize("change", [{"hostnames": "elsewhere"},
                                    {"platform": "Linux-6.18.44-fc-v1098-x86_64"}])
def test_another_hosts_runs_without_the_signature_stay_apart_and_it_is_said(
        tmp_path, monkeypatch, change):
    """Another host, or a host of the same name on another system (every VM of this
    project is called ``vm``; the shipped bundle's files too)."""
    fp = _this_machine(monkeypatch)
    old = _old_file(tmp_path / "t.h5", fp, **change)
    writer = TelemetryWriter(str(tmp_path / "t.h5"), resume=True)
    writer.open()
    assert untold_elsewhere(writer.store.machines, fp) == old
    note = adopt_earlier_record(writer, fp, "t.h5")
    writer.close()
    assert "does not say which CPU generation they ran on: they are kept under their id as " \
        "other hardware" in note
    assert set(load(tmp_path / "t.h5").machines) == {old}  # untouched


def test_a_sweep_resumed_here_keeps_this_machines_runs_of_an_older_file(tmp_path):
    """The CLI on this machine: a file of this machine as an hpcds1mpi before session 38 wrote
    it (no CPU signature, the id without it) is resumed with nothing measured again and one
    id, said; only where this machine's CPU name is generic (else its id did not change)."""
    from hpcds1mpi.cluster import _cpu_model
    from hpcds1mpi.cpu_signature import cpu_signature, generic_cpu_name
    from tests.helpers import run_cli

    if not (generic_cpu_name(_cpu_model()) and cpu_signature()):
        pytest.skip("this machine's CPU name says its generation: its id is the one it had")
    out = tmp_path / "t.h5"
    sweep = ["sweep", "--kernel", "gemm", "--ranks-per-node", "1", "--threads", "1",
             "--precisions", "fp64", "--out", str(out), "--no-progress"]
    assert run_cli([*sweep, "--sizes", "32"], timeout=120).returncode == 0
    [(new_id, row)] = load(out).machines.items()
    old = {**row, "cpu_signature": ""}
    old["machine_id"] = meters.machine_id(old)
    with TelemetryWriter(str(out), resume=True) as writer:  # as the older version wrote it
        writer.relabel_machine(new_id, old)
    resumed = run_cli([*sweep, "--sizes", "32,48", "--resume"], timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"were recorded without the CPU's signature, which now tells CPU generations of " \
        f"that name apart; they are kept, as machine {new_id[:12]}" in resumed.stderr
    assert "(ok 1; 1 already done)" in resumed.stderr
    store = load(out)
    assert set(store.machines) == {new_id} and {k[0] for k in store.runs} == {new_id}
