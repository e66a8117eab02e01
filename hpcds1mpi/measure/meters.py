"""Measurement beyond wall time: energy meters, peak memory, GPU use, fingerprint.

The MPI library a user's program loads (for a program sweep's fingerprint) is read by
:mod:`hpcds1mpi.measure.program_mpi`.

Energy comes from the first source that exists, and every value says which:

- ``rapl``: Linux powercap package counters (``/sys/class/powercap/intel-rapl:N/energy_uj``),
  read by node-local rank 0 before and after the configuration, summed over nodes.
- ``nvml``: the GPU's own energy counter (``nvmlDeviceGetTotalEnergyConsumption``) via pynvml.
- ``modelled``: no sensor. Average power is modelled from the partition's power figures and the
  measured CPU (and GPU) busy time; see :func:`modelled_power` and docs/telemetry.md.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import platform
import threading
import time
from dataclasses import dataclass

from hpcds1mpi.cpu_signature import cpu_signature, generic_cpu_name, untold_generation
from hpcds1mpi.measure.program_mpi import ASSUMED, UNREAD

PACKAGES = ("hpcds1mpi", "numpy", "scipy", "mpi4py", "mpich", "h5py", "torch", "cupy-cuda12x",
            "threadpoolctl", "pandas")


# --------------------------------------------------------------------------------------------
# Peak resident memory


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM) of this process; False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb(reset_worked: bool) -> tuple[float, str]:
    """Peak resident memory of this process in MB and its source.

    ``vmhwm``: /proc/self/status VmHWM since the last reset (this configuration only).
    ``ru_maxrss``: the process's lifetime peak (an upper bound for this configuration).
    """
    if reset_worked:
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024.0, "vmhwm"
        except OSError:
            pass
    import resource

    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if platform.system() == "Darwin":
        kb /= 1024.0  # bytes there
    return kb / 1024.0, "ru_maxrss"


# --------------------------------------------------------------------------------------------
# Energy


def _rapl_domains() -> list[str]:
    """Package-level RAPL counters (top-level intel-rapl:N / amd-rapl zones, not subzones)."""
    found = []
    for zone in sorted(glob.glob("/sys/class/powercap/*-rapl:*")):
        if zone.count(":") != 1:
            continue  # subzone (core/uncore/dram) would double count
        path = os.path.join(zone, "energy_uj")
        if os.access(path, os.R_OK):
            found.append(zone)
    return found


class RaplMeter:
    """Energy of this node's CPU packages over an interval (joules), from powercap counters."""

    source = "rapl"

    def __init__(self):
        self.zones = _rapl_domains()
        self._start: list[int] = []

    @property
    def available(self) -> bool:
        return bool(self.zones)

    def _read(self) -> list[int]:
        values = []
        for zone in self.zones:
            with open(os.path.join(zone, "energy_uj")) as fh:
                values.append(int(fh.read()))
        return values

    def start(self) -> None:
        self._start = self._read()

    def stop(self) -> float:
        end = self._read()
        total = 0
        for zone, a, b in zip(self.zones, self._start, end):
            if b < a:  # the counter wrapped
                try:
                    with open(os.path.join(zone, "max_energy_range_uj")) as fh:
                        b += int(fh.read())
                except OSError:
                    continue
            total += b - a
        return total / 1e6


class NvmlMeter:
    """Energy (J), busy time (s) and peak memory (MB) of one GPU, sampled through pynvml."""

    source = "nvml"

    def __init__(self, index: int):
        self.available = False
        self.index = index
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            self.available = True
        except Exception:  # noqa: BLE001 - no NVML means "not measured", never an error
            return
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.energy_j = float("nan")
        self.busy_s = 0.0
        self.peak_mem_mb = 0.0

    def _sample(self, period: float) -> None:
        last = time.perf_counter()
        while not self._stop.wait(period):
            now = time.perf_counter()
            try:
                util = self._nvml.nvmlDeviceGetUtilizationRates(self._handle).gpu
                mem = self._nvml.nvmlDeviceGetMemoryInfo(self._handle).used / 2**20
            except Exception:  # noqa: BLE001
                break
            self.busy_s += (now - last) * util / 100.0
            self.peak_mem_mb = max(self.peak_mem_mb, mem)
            last = now

    def start(self, period: float = 0.02) -> None:
        try:
            self._e0 = self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)
        except Exception:  # noqa: BLE001
            self._e0 = None
        self.busy_s, self.peak_mem_mb = 0.0, 0.0
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, args=(period,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._e0 is not None:
            try:
                e1 = self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)
                self.energy_j = (e1 - self._e0) / 1e3
            except Exception:  # noqa: BLE001
                pass


def torch_gpu_peak_mb() -> float:
    """Peak memory torch allocated on the current CUDA device since its last reset (MB)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return float("nan")
    return torch.cuda.max_memory_allocated() / 2**20


@dataclass
class PowerModel:
    """Inputs of the modelled power of one run (recorded in ``power_model``)."""

    idle_watts_node: float
    max_watts_node: float
    idle_watts_gpu: float
    max_watts_gpu: float
    cores_per_node: int
    source: str

    def describe(self) -> str:
        return (f"P = {self.idle_watts_node:g} W x nodes + ({self.max_watts_node:g} - "
                f"{self.idle_watts_node:g}) W / {self.cores_per_node} cores x busy cores"
                f" + GPUs x ({self.idle_watts_gpu:g} + ({self.max_watts_gpu:g} - "
                f"{self.idle_watts_gpu:g}) x GPU busy fraction) W [{self.source}]")

    @property
    def core_watts(self) -> float:
        """What one busy core adds to its node's draw, W: the node's dynamic range over its
        cores."""
        return (self.max_watts_node - self.idle_watts_node) / max(self.cores_per_node, 1)


def power_model(partition) -> PowerModel:
    figures = partition.power_figures()
    return PowerModel(
        idle_watts_node=float(figures["idle_watts_node"]),
        max_watts_node=float(figures["max_watts_node"]),
        idle_watts_gpu=float(figures["idle_watts_gpu"]),
        max_watts_gpu=float(figures["max_watts_gpu"]),
        cores_per_node=int(partition.cores_per_node),
        source=str(figures["power_figures_source"]),
    )


def modelled_power(model: PowerModel, *, nodes: int, window_s: float, cpu_s: float,
                   gpus: int = 0, gpu_busy_s: float = 0.0) -> float:
    """Average power (W) of ``nodes`` whole nodes over a window of ``window_s`` seconds in which
    all ranks together used ``cpu_s`` CPU seconds and ``gpus`` GPUs were busy ``gpu_busy_s``
    (summed over GPUs).

    Linear in utilisation: every allocated node draws its idle power; each busy core adds
    ``(max - idle) / cores_per_node``; each GPU draws its idle power plus its dynamic range times
    its busy fraction. Busy cores are capped at the cores allocated.
    """
    if window_s <= 0:
        return float("nan")
    busy_cores = min(cpu_s / window_s, nodes * model.cores_per_node)
    busy_fraction = min(max(gpu_busy_s / (window_s * gpus), 0.0), 1.0) if gpus else 0.0
    return modelled_watts(model, nodes, busy_cores, gpus, busy_fraction)


def modelled_watts(model: PowerModel, nodes, busy_cores, gpus=0, gpu_busy_fraction=0.0):
    """The power model itself, W, scalars or numpy arrays alike: ``nodes`` nodes at their idle
    draw, plus :attr:`PowerModel.core_watts` for each of ``busy_cores``, plus each of ``gpus``
    GPUs at its idle draw and its dynamic range x ``gpu_busy_fraction``.

    The one formula of modelled power: a run's (:func:`modelled_power`) and the least a
    layout draws, System 1's energy floor (``decide.energy_floor``; it had a copy, s47 review
    RX8)."""
    watts = model.idle_watts_node * nodes + model.core_watts * busy_cores
    return watts + gpus * (model.idle_watts_gpu
                           + (model.max_watts_gpu - model.idle_watts_gpu) * gpu_busy_fraction)


# --------------------------------------------------------------------------------------------
# Machine fingerprint


def package_versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


#: The machines-table columns of the hardware class (``machine_id`` hashes them and the MPI).
HARDWARE = ("cpu_model", "physical_cores", "logical_cores", "memory_gb", "gpu_model",
            "gpu_count", "gpu_memory_gb", "partition")


def earlier_record(machines: dict, fp: dict) -> str | None:
    """The id under which a telemetry file's ``machines`` hold this machine (``fp``) as an
    earlier hpcds1mpi fingerprinted it when only the text of its ``mpi_library`` has changed
    since: kept with control characters (Debian mpi4py's NUL, which crashed every write of
    the file, so its runs live only in the journal), or a launcher's version line not yet
    marked :data:`UNREAD`. Those runs are this machine's and MPI's; a resumed sweep relabels
    them (:meth:`~hpcds1mpi.records.telemetry.TelemetryWriter.relabel_machine`) instead of
    measuring them again under a second id. None when there is none, or ``fp``'s id is there
    (but for the untold record below: a merge of an old file and a new one holds both).

    Also a record of this host made before the CPU's signature was recorded, of a CPU whose
    name is generic (:func:`~hpcds1mpi.cpu_signature.untold_generation`, s38 tester
    K2): its id lacks the signature this machine's now hashes; measured on a host of this
    name and system (``platform``: kernel release and C library; VMs share host names such as
    ``vm``, a kernel build is one VM's), it is this machine's. Such a record of others is not
    (:func:`~hpcds1mpi.measure.resumed_machine.untold_elsewhere`).
    """
    from hpcds1mpi.launch.mpi_names import clean_version

    present = fp["machine_id"] in machines
    for machine, row in machines.items():
        text = clean_version(str(row.get("mpi_library") or ""))
        if machine == fp["machine_id"] or not (
                fp["mpi_library"] in (text, f"{text} {UNREAD}")
                and all(row.get(k) == fp[k] for k in HARDWARE)):
            continue
        # an old file merged with a new one holds both ids: its host's untold record is still
        # this machine's (s38 tester F2: it was kept apart, and the merge's advice failed)
        if generic_cpu_name(fp["cpu_model"]) and fp.get("cpu_signature") and \
                untold_generation(row) and _hosts(row) & _hosts(fp) and \
                row.get("platform") == fp.get("platform"):
            return machine
        if not present and (not generic_cpu_name(fp["cpu_model"]) or
                            str(row.get("cpu_signature") or "") == fp.get("cpu_signature", "")):
            return machine
    return None


def _hosts(row: dict) -> set[str]:
    return {h for h in str(row.get("hostnames") or "").split(",") if h}


def refuse_launcher_fingerprint(out: str, fp: dict) -> None:
    """Refuse to resume a program sweep into ``out`` when its runs carry this machine's older
    fingerprint, the one taken from the launcher (``"mpiexec Version: 5.0.2"``) before program
    sweeps read their MPI library: every run would be measured again under the new id and the
    file would mix two machines. Stored rows are never relabelled, except one
    :func:`earlier_record` names (the same library, only its text changed).

    Raises:
        ConfigError: one line naming both ids and the fix (a new ``--out``).
    """
    from hpcds1mpi.errors import ConfigError, HpcdsError
    from hpcds1mpi.records import telemetry

    try:
        machines = telemetry.load(out).machines if os.path.isfile(out) else {}
    except (HpcdsError, OSError):
        return  # the writer says what is wrong with the file
    relabelled = earlier_record(machines, fp)
    for machine, row in machines.items():
        if machine in (fp["machine_id"], relabelled) or any(row.get(k) != fp[k]
                                                             for k in HARDWARE):
            continue
        from hpcds1mpi.records.machines import names_launcher

        if names_launcher(row.get("mpi_library")):
            raise ConfigError(
                f"{out} holds runs fingerprinted from the launcher ({row['mpi_library']!r}, "
                f"machine {machine[:12]}) but this sweep reads the program's MPI library "
                f"({fp['mpi_library']!r}, machine {fp['machine_id'][:12]}), so --resume would "
                f"measure every run again and mix two machines in one file: sweep into a new "
                f"--out ({out} is kept as it is)")


def fingerprint(partition, *, hostnames: list[str], mpi_library: str, gpu_aware: bool) -> dict:
    """The machines-table row for this machine (see docs/telemetry.md), with ``machine_id``.

    ``machine_id`` hashes the hardware class and MPI library (CPU model, cores, memory, GPU
    model/count/memory, MPI library, partition name; the CPU's signature where its model
    name is generic: :func:`machine_id`) but not host names, so identical nodes of a
    partition share one id; host names are kept in ``hostnames``. It names what a model may
    pool runs over: the hardware and the MPI library the measured code ran on, whichever path
    measured it (``mpi_library``: the library's own version line, kernels and programs alike,
    read as C reads it: up to a NUL, without control characters).
    """
    import psutil

    from hpcds1mpi.cluster import _cpu_model, detect_gpus
    from hpcds1mpi.launch.mpi_names import clean_version

    gpu_count, gpu_mem, gpu_model = detect_gpus()
    row = {
        "hostnames": ",".join(sorted(set(hostnames))),
        "partition": partition.name,
        "cpu_model": _cpu_model(),
        "cpu_signature": cpu_signature(),
        "physical_cores": psutil.cpu_count(logical=False) or 0,
        "logical_cores": psutil.cpu_count(logical=True) or 0,
        "memory_gb": round(psutil.virtual_memory().total / 1e9, 1),
        "gpu_model": gpu_model,
        "gpu_count": gpu_count,
        "gpu_memory_gb": round(gpu_mem, 1),
        "mpi_library": clean_version(mpi_library),
        "mpi_gpu_aware": int(bool(gpu_aware)),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": json.dumps(package_versions(), sort_keys=True),
        "first_seen": time.time(),
    }
    row["machine_id"] = machine_id(row)
    return row


def machine_id(row: dict) -> str:
    """The hash of ``row``'s hardware class and MPI library. A library that stands in for a
    program's unreadable one is hashed without its :data:`ASSUMED` mark: the same library's
    kernel runs get the same id (s29 tester E1); the mark stays in the row for the reader.
    Where the CPU's name names no generation (``AMD EPYC``:
    :func:`~hpcds1mpi.cpu_signature.generic_cpu_name`) its ``cpu_signature`` is hashed
    too; a specific name, or a row without a signature, keeps the id it always had."""
    keys = ("cpu_model", "physical_cores", "logical_cores", "memory_gb", "gpu_model", "gpu_count",
            "gpu_memory_gb", "mpi_library", "partition")
    row = dict(row)
    if isinstance(row.get("mpi_library"), str):
        row["mpi_library"] = row["mpi_library"].removesuffix(f" {ASSUMED}")
    hashed = [row.get(k) for k in keys]
    signature = str(row.get("cpu_signature") or "")
    if signature and generic_cpu_name(row.get("cpu_model")):
        hashed.append(signature)  # one name of several generations (s38 tester K2)
    text = json.dumps(hashed)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
