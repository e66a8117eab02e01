"""Measurement helpers: modelled power, peak RSS, fingerprint, RAPL."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.measure import meters, program_mpi


def test_modelled_power_is_linear_in_busy_cores_and_capped():
    part = Partition("p", cores_per_node=4, memory_gb=8, idle_watts_node=100, max_watts_node=300)
    model = meters.power_model(part)
    assert model.source == "cluster file"
    idle = meters.modelled_power(model, nodes=2, window_s=10, cpu_s=0)
    assert idle == pytest.approx(200)
    two_busy = meters.modelled_power(model, nodes=2, window_s=10, cpu_s=20)
    assert two_busy == pytest.approx(200 + 2 * 50)
    # More CPU seconds than cores exist (oversubscription, clock skew) is capped at all cores.
    assert meters.modelled_power(model, nodes=1, window_s=1, cpu_s=99) == pytest.approx(300)
    gpu = meters.modelled_power(model, nodes=1, window_s=10, cpu_s=0, gpus=2, gpu_busy_s=10)
    assert gpu == pytest.approx(100 + 2 * (60 + 340 * 0.5))
    default = meters.power_model(Partition("q", cores_per_node=2, memory_gb=8))
    assert default.source == "default per-core figures" and default.idle_watts_node == 6
    assert "busy cores" in default.describe()


def test_modelled_power_keeps_its_numbers_now_that_one_function_makes_them():
    """s47 review RX8: the energy floor and the meters share :func:`meters.modelled_watts`;
    every number is the one the meters gave before (recorded from them before the change)."""
    runs = ((1, 3.7, 2.2, 0, 0), (3, 0.91, 17.3, 0, 0), (2, 1.3, 999.0, 0, 0),
            (2, 2.9, 3.1, 2, 1.7), (1, 1e-3, 5e-4, 1, 5.0))  # nodes, window, cpu, gpus, busy
    parts = ((Partition("standard", cores_per_node=2, memory_gb=25.3), [
                 10.162162162162161, 60.0, 40.0, 338.7931034482758, 409.5]),
             (Partition("odd", cores_per_node=48, memory_gb=256.0, idle_watts_node=87.5,
                       max_watts_node=311.3), [
                 90.2722972972973, 351.1387362637363, 622.6, 499.2943965517241, 489.83125]),
             (Partition("gpu", cores_per_node=6, memory_gb=64.0, gpus_per_node=3,
                       idle_watts_node=101.7, max_watts_node=433.1, idle_watts_gpu=47.3,
                       max_watts_gpu=301.9), [
                 134.54144144144146, 1299.3000000000002, 866.2, 506.29080459770114,
                 431.21666666666664]))
    for part, want in parts:
        model = meters.power_model(part)
        assert [meters.modelled_power(model, nodes=n, window_s=w, cpu_s=c, gpus=g,
                                      gpu_busy_s=b) for n, w, c, g, b in runs] == want


def test_peak_rss_reset_sees_this_configuration_only():
    big = np.ones(60 * 2**20 // 8)  # 60 MiB, touched
    del big
    reset = meters.reset_peak_rss()
    after_reset, source = meters.peak_rss_mb(reset)
    if not reset:
        pytest.skip("this kernel does not allow resetting VmHWM")
    assert source == "vmhwm"
    grown = np.ones(80 * 2**20 // 8)
    peak, _ = meters.peak_rss_mb(reset)
    assert peak - after_reset > 60
    del grown


def test_fingerprint_and_machine_id():
    part = Partition("p", cores_per_node=2, memory_gb=8)
    row = meters.fingerprint(part, hostnames=["b", "a", "a"], mpi_library="MPICH 5",
                              gpu_aware=False)
    assert row["hostnames"] == "a,b" and row["physical_cores"] >= 1 and row["memory_gb"] > 0
    assert len(row["machine_id"]) == 16
    other = dict(row, hostnames="c")
    assert meters.machine_id(other) == row["machine_id"]  # host names do not enter it
    assert meters.machine_id(dict(row, mpi_library="Open MPI 5")) != row["machine_id"]
    assert "numpy" in row["packages"]


def test_rapl_absent_here_is_not_an_error():
    meter = meters.RaplMeter()
    assert meter.available == bool(meter.zones)


def _kernel_library() -> str:
    """What a kernel sweep records as ``mpi_library`` (asked in a fresh process)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", "from hpcds1mpi.runtime.mpi import "
                           "library_version; print(library_version())"], capture_output=True,
                          text=True, check=True, timeout=120).stdout.strip()


def _ids(*libraries: str) -> list[str]:
    part = Partition("p", cores_per_node=2, memory_gb=8)
    return [meters.fingerprint(part, hostnames=["h"], mpi_library=lib, gpu_aware=False)
            ["machine_id"] for lib in libraries]


def test_a_program_built_with_the_wheels_mpicc_gets_the_kernels_mpi_library(tmp_path):
    import os

    from hpcds1mpi.launch.launcher_discovery import mpiexec_path
    from tests.apps import jacobi

    exe = jacobi.build(tmp_path)
    if exe is None:
        pytest.skip("no mpicc beside this Python or no C compiler")
    program = program_mpi.program_mpi_library([exe, "64", "40"], dict(os.environ), mpiexec_path())
    kernel = _kernel_library()
    assert program.startswith("MPICH Version:")  # not the launcher's "mpiexec Version: ..."
    assert _ids(program) == _ids(kernel)


def test_a_python_program_gets_its_mpi4pys_library_and_a_wrapper_its_launchers(tmp_path):
    import os
    import sys

    from hpcds1mpi.launch.launcher_discovery import mpiexec_path

    env = dict(os.environ)
    assert program_mpi.program_mpi_library([sys.executable, "app.py"], env, "mpiexec") == \
        _kernel_library()
    wrapper = tmp_path / "run.sh"  # its program is not there to read: the launcher's library
    wrapper.write_text("#!/bin/sh\nexec ./app \"$@\"\n")
    wrapper.chmod(0o755)
    launcher = mpiexec_path()
    # ... said to be assumed: it had read as the wheel's MPICH, unmarked (s25 tester B 4)
    assumed = program_mpi.program_mpi_library([str(wrapper)], env, launcher)
    assert assumed == f"{_kernel_library()} {program_mpi.ASSUMED}"
    assert _ids(assumed) == _ids(_kernel_library())  # the mark is not hashed (s29 tester E1)
    assert program_mpi.program_mpi_library([str(wrapper)], env, str(tmp_path / "gone")) == "unknown"


@pytest.mark.parametrize("shebang", ["#!/usr/bin/env python3", "#!{python} -u",
                                     "#!/usr/bin/env -S PYTHONNOUSERSITE=1 python3 -s"])
def test_a_python_program_run_by_its_shebang_gets_the_same_machine_as_run_by_python(
        tmp_path, shebang):
    """``./prog.py`` runs the interpreter its #! names, as the kernel reads it: the same
    mpi4py library as ``python3 prog.py``, so a calibration of it joins the machine's model
    (its launcher's version had been stored: s25 tester f 3)."""
    import os
    import sys

    env = dict(os.environ, PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")
    program = tmp_path / "prog.py"
    program.write_text(shebang.format(python=sys.executable) + "\nfrom mpi4py import MPI\n")
    program.chmod(0o755)
    by_shebang = program_mpi.program_mpi_library([str(program), "--n", "8"], env, "mpiexec")
    by_python = program_mpi.program_mpi_library(["python3", str(program), "--n", "8"], env,
                                           "mpiexec")
    assert program_mpi.UNREAD not in by_shebang
    assert _ids(by_shebang) == _ids(by_python) == _ids(_kernel_library())


@pytest.mark.parametrize("shebang", ["#!/bin/sh", "#!/usr/bin/env bash",
                                     "#!/usr/bin/env python3 -u"])
def test_a_script_whose_shebang_runs_no_python_is_read_for_its_program(tmp_path, shebang):
    """A shell wrapper's program is the one it names (``exec python3 prog.py``: its mpi4py's
    library, s29 tester E1); ``env`` given "python3 -u" as one word (no -S) runs nothing: the
    library of the launcher's installation stands in, marked assumed."""
    import os
    import sys

    from hpcds1mpi.launch.launcher_discovery import mpiexec_path

    env = dict(os.environ, PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")
    wrapper = tmp_path / "run"
    wrapper.write_text(f"{shebang}\nexec python3 prog.py \"$@\"\n")
    wrapper.chmod(0o755)
    launcher = mpiexec_path()
    assert program_mpi.shebang_python(str(wrapper), env) is None
    mark = f" {program_mpi.ASSUMED}" if "python3 -u" in shebang else ""
    assert program_mpi.program_mpi_library([str(wrapper)], env, launcher) == \
        _kernel_library() + mark


def test_an_open_mpi_program_gets_its_open_mpi_library():
    import os
    import shutil

    hpcc = shutil.which("hpcc")
    if hpcc is None:
        pytest.skip("no hpcc (Debian's, built with Open MPI) here")
    library = program_mpi.program_mpi_library([hpcc], dict(os.environ), "mpirun.openmpi")
    assert library.startswith("Open MPI v")  # MPI_Get_library_version, as mpi4py would say
    assert _ids(library) != _ids(_kernel_library())


def test_resuming_a_file_fingerprinted_from_the_launcher_is_refused(tmp_path):
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.records import telemetry

    part = Partition("p", cores_per_node=2, memory_gb=8)
    now = meters.fingerprint(part, hostnames=["h"], mpi_library="MPICH Version: 5.0.2",
                             gpu_aware=False)

    def stored(name: str, **change) -> str:
        row = dict(now, **change)
        row["machine_id"] = meters.machine_id(row)
        with telemetry.TelemetryWriter(tmp_path / name) as writer:
            writer.machine(row)
        return str(tmp_path / name)

    old = stored("old.h5", mpi_library="mpiexec Version: 5.0.2")
    with pytest.raises(ConfigError, match=r"fingerprinted from the launcher \('mpiexec Version: "
                                          r"5.0.2', .*sweep into a new --out"):
        meters.refuse_launcher_fingerprint(old, now)
    # This version's own file, another MPI library's, another machine's, none yet: no refusal.
    for path in (stored("same.h5"), stored("ompi.h5", mpi_library="Open MPI v4.1.4"),
                 stored("other.h5", mpi_library="mpiexec Version: 5.0.2", cpu_model="Other"),
                 str(tmp_path / "none.h5")):
        meters.refuse_launcher_fingerprint(path, now)


def test_a_library_version_with_a_nul_is_recorded_as_c_reads_it(tmp_path):
    """Debian's mpi4py keeps the NUL of Get_library_version(): it reached the machines table
    and every write of the file crashed ("VLEN strings do not support embedded NULLs")."""
    import os

    from tests.launch.test_mpi_family import DEBIAN_MPI4PY, fake_python

    python = fake_python(tmp_path)
    library = program_mpi.program_mpi_library([python, "app.py"], dict(os.environ), "mpiexec")
    assert library == DEBIAN_MPI4PY[:-1]  # what ctypes' .value gives for a C program
    assert _ids(DEBIAN_MPI4PY) == _ids(library)
    part = Partition("p", cores_per_node=2, memory_gb=8)
    row = meters.fingerprint(part, hostnames=["h"], mpi_library="A\x00\x01B\n C", gpu_aware=False)
    assert row["mpi_library"] == "A"


def test_an_earlier_text_of_the_same_library_is_found_for_relabelling():
    part = Partition("p", cores_per_node=2, memory_gb=8)
    now = meters.fingerprint(part, hostnames=["h"], mpi_library="Open MPI v4.1.4",
                             gpu_aware=False)

    def earlier(**change) -> dict:
        row = dict(now, **change)  # as the earlier hpcds1mpi hashed it
        row["machine_id"] = meters.machine_id(row)
        return {row["machine_id"]: row}

    crashed = earlier(mpi_library="Open MPI v4.1.4\x00")
    assert meters.earlier_record(crashed, now) == next(iter(crashed))
    assert meters.earlier_record({**crashed, **earlier()}, now) is None  # its own id is there
    assert meters.earlier_record(earlier(mpi_library="Open MPI v4.1.5"), now) is None
    assert meters.earlier_record(earlier(mpi_library="Open MPI v4.1.4\x00", cpu_model="X"),
                                 now) is None
    # A wrapper's row from before the launcher's line was marked: the same, relabelled.
    wrapper = dict(now, mpi_library=f"mpiexec Version: 5.0.2 {program_mpi.UNREAD}")
    wrapper["machine_id"] = meters.machine_id(wrapper)
    unmarked = earlier(mpi_library="mpiexec Version: 5.0.2")
    assert meters.earlier_record(unmarked, wrapper) == next(iter(unmarked))


def _on_cpu(monkeypatch, name: str, cpuinfo: str):
    """The fingerprint of a machine whose /proc/cpuinfo is ``cpuinfo`` and CPU ``name``."""
    from hpcds1mpi import cluster, cpu_signature

    monkeypatch.setattr(cpu_signature, "_read_cpuinfo", lambda: cpuinfo)
    monkeypatch.setattr(cluster, "_cpu_model", lambda: name)
    return meters.fingerprint(Partition("local", cores_per_node=2, memory_gb=8),
                              hostnames=["h"], mpi_library="MPICH 5", gpu_aware=False)


def test_two_cpu_generations_behind_one_generic_name_get_two_machine_ids(monkeypatch):
    """s38 tester K2: a Zen 5 VM calling its CPU "AMD EPYC" had the id of the Zen reference
    machine of that name; the signature is recorded, and hashed where the name is generic."""
    from tests.test_cpu_signature import ZEN3, ZEN5

    zen5, zen3 = _on_cpu(monkeypatch, "AMD EPYC", ZEN5), _on_cpu(monkeypatch, "AMD EPYC", ZEN3)
    assert zen5["cpu_signature"].startswith("AuthenticAMD family 26 model 2 stepping 1;")
    assert zen5["machine_id"] != zen3["machine_id"]
    # no /proc/cpuinfo (or a row from before): the id it always had
    assert _on_cpu(monkeypatch, "AMD EPYC", "")["machine_id"] == meters.machine_id(
        {**zen5, "cpu_signature": ""})


def test_a_specific_cpu_name_keeps_the_machine_id_it_had(monkeypatch):
    """Ids of named CPUs do not change: telemetry and bundles recorded before still match."""
    import hashlib
    import json

    from tests.test_cpu_signature import ZEN3

    row = _on_cpu(monkeypatch, "AMD EPYC 7763 64-Core Processor", ZEN3)
    keys = ("cpu_model", "physical_cores", "logical_cores", "memory_gb", "gpu_model",
            "gpu_count", "gpu_memory_gb", "mpi_library", "partition")
    before = hashlib.sha256(json.dumps([row[k] for k in keys]).encode()).hexdigest()[:16]
    assert row["machine_id"] == before
    assert meters.machine_id({**row, "cpu_signature": "another"}) == before
    # the shipped bundle's machine (generic name, no signature) keeps its id
    assert meters.machine_id({**row, "cpu_model": "AMD EPYC", "cpu_signature": ""}) == \
        hashlib.sha256(json.dumps(["AMD EPYC", *[row[k] for k in keys[1:]]]).encode()
                       ).hexdigest()[:16]


def test_a_record_of_this_host_without_the_cpus_signature_is_found_for_relabelling(
        monkeypatch):
    """A file an earlier hpcds1mpi wrote on this generic-name host: its runs are this
    machine's (resumed, not measured again); of another host, they may be another
    generation and are not."""
    from tests.test_cpu_signature import ZEN5

    now = _on_cpu(monkeypatch, "AMD EPYC", ZEN5)
    old = {**now, "cpu_signature": ""}
    old["machine_id"] = meters.machine_id(old)
    assert meters.earlier_record({old["machine_id"]: old}, now) == old["machine_id"]
    for elsewhere in ({**old, "hostnames": "other"},  # VMs share names, not kernel builds:
                      {**old, "platform": "Linux-6.18.44-fc-v1098-x86_64-with-glibc2.36"}):
        assert meters.earlier_record({old["machine_id"]: elsewhere}, now) is None
    other_generation = {**now, "cpu_signature": "AuthenticAMD family 25 model 1"}
    other_generation["machine_id"] = meters.machine_id(other_generation)
    assert meters.earlier_record({other_generation["machine_id"]: other_generation},
                                 now) is None
