"""Measurement beyond wall time: energy meters, peak memory, GPU use, fingerprint.

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
import re
import threading
import time
from dataclasses import dataclass

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
    watts = model.idle_watts_node * nodes
    watts += (model.max_watts_node - model.idle_watts_node) / model.cores_per_node * busy_cores
    if gpus:
        busy_fraction = min(max(gpu_busy_s / (window_s * gpus), 0.0), 1.0)
        watts += gpus * (model.idle_watts_gpu
                         + (model.max_watts_gpu - model.idle_watts_gpu) * busy_fraction)
    return watts


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


#: The first line of ``MPI_Get_library_version`` of the library at ``sys.argv[1]``, asked
#: before ``MPI_Init`` (allowed since MPI-3), in a subprocess: loading an MPI library into the
#: sweep's own process could clash with its mpi4py's.
_LIBRARY_PROBE = ("import ctypes, sys\n"
                  "lib = ctypes.CDLL(sys.argv[1])\n"
                  "text = ctypes.create_string_buffer(8192)\n"
                  "lib.MPI_Get_library_version(text, ctypes.byref(ctypes.c_int()))\n"
                  "print(text.value.decode('utf-8', 'replace'))")


#: What follows the launcher's version line where it stands in for a program's MPI library
#: that cannot be read: the row says so, instead of reading as the launcher's MPI (a wrapper
#: of an Open MPI program run by the wheel's hydra had read as "mpiexec Version: 5.0.2").
UNREAD = "[the launcher's version: the program's MPI library could not be read]"


def program_mpi_library(tokens: list[str], env: dict, launcher: str) -> str:
    """``mpi_library`` for the fingerprint of a program sweep (``sweep --command``).

    The first line of ``MPI_Get_library_version`` of the MPI library the program loads: what a
    kernel sweep records for the same library, so kernels and programs measured with one MPI on
    one machine share a ``machine_id``. A binary's library is the one ``ldd`` resolves, a
    ``python ...`` program's is its mpi4py's. Where that cannot be read (a shell wrapper, a
    static binary, no ``ldd``) the launcher's version line stands in, marked :data:`UNREAD`
    ("unknown" when the launcher cannot say either).
    """
    from hpcds1mpi.launch.launchers import library_version

    found = _program_library_version(tokens, env)
    if found:
        return found
    stand_in = library_version(launcher)
    return stand_in if stand_in == "unknown" else f"{stand_in} {UNREAD}"


def _program_library_version(tokens: list[str], env: dict) -> str | None:
    import shutil
    import subprocess
    import sys

    if not tokens:
        return None
    path = tokens[0] if "/" in tokens[0] else shutil.which(tokens[0], path=env.get("PATH"))
    if not path or not os.path.isfile(path):
        return None
    if _PYTHON_NAME.match(os.path.basename(path)):
        from hpcds1mpi.launch.mpi_family import MPI4PY_PROBE

        command = [path, "-c", MPI4PY_PROBE]
    elif _shebang(path) is not None:
        # A script: the kernel runs its #! interpreter; only a Python one's MPI can be read
        # (its mpi4py's), never a shell wrapper's (the program it starts is unknown).
        found = shebang_python(path, env)
        if found is None:
            return None
        from hpcds1mpi.launch.mpi_family import MPI4PY_PROBE

        command, env = found[0] + ["-c", MPI4PY_PROBE], found[1]
    else:
        from hpcds1mpi.launch.mpi_family import linked_library

        library = linked_library(path, env)
        if library is None:
            return None
        command = [sys.executable, "-c", _LIBRARY_PROBE, library]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    # As C reads it: Debian's mpi4py keeps the string's NUL, which no HDF5 file can store.
    from hpcds1mpi.launch.mpi_family import version_line

    return (version_line(proc.stdout) if proc.returncode == 0 else "") or None


#: A Python interpreter's file name (``python``, ``python3``, ``python3.12``).
_PYTHON_NAME = re.compile(r"^python[0-9.]*$")
#: Python's options that change which mpi4py it imports and take no argument (``-E``, ``-s``,
#: ``-I``, ``-S``, clusters of them); the probe runs with them as the script would.
_PYTHON_FLAGS = re.compile(r"^-[bBdEIOPqsSuv]+$")
#: env's options that take the next word as their argument.
_ENV_ARGUMENT = ("-u", "--unset", "-C", "--chdir")


def _shebang(path: str) -> tuple[str, str | None] | None:
    """A script's ``#!`` line as the kernel reads it: (interpreter, its one optional argument,
    the rest of the line, or None); None when ``path`` does not start with ``#!``."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip(" \t\r")
    if not line:
        return None
    interpreter, _, argument = line.replace("\t", " ").partition(" ")
    argument = argument.strip(" ")
    return interpreter, argument or None


def shebang_python(path: str, env: dict) -> tuple[list[str], dict] | None:
    """How the script ``path`` starts Python: (the interpreter and the options of its ``#!``
    line, the environment it runs in); None when its ``#!`` does not name Python (a shell
    wrapper: no guess).

    Read as the kernel and env(1) do: ``#!/path/to/python3 -u``, ``#!/usr/bin/env python3``
    (found on ``PATH``), ``#!/usr/bin/env -S VAR=x python3 -E`` (env splits its one argument,
    sets ``VAR``, skips its own options).
    """
    import shlex
    import shutil

    found = _shebang(path)
    if found is None:
        return None
    interpreter, argument = found
    env = dict(env)
    if os.path.basename(interpreter) != "env":
        words = [interpreter] + ([argument] if argument else [])
    else:
        if not argument:
            return None
        if argument.startswith(("-S", "--split-string")):
            rest = argument[2:] if argument.startswith("-S") else \
                argument[len("--split-string"):].lstrip("=")
            try:
                given = shlex.split(rest)
            except ValueError:
                return None
        else:
            given = [argument]  # env gets the rest of the line as one word: a program's name
        words = []
        skip = False
        for word in given:
            if words:
                words.append(word)
            elif skip:
                skip = False
            elif word in _ENV_ARGUMENT:
                skip = True
            elif word in ("-i", "--ignore-environment") or word == "-":
                env = {}
            elif word.startswith("-"):
                continue
            elif "=" in word:
                name, value = word.split("=", 1)
                env[name] = value
            else:
                words.append(word)
        if not words:
            return None
        program = words[0] if "/" in words[0] else shutil.which(
            words[0], path=env.get("PATH", os.defpath))
        if not program:
            return None
        words[0] = program
    if not _PYTHON_NAME.match(os.path.basename(words[0])):
        return None
    options = []
    for word in words[1:]:
        for option in word.split():
            if not _PYTHON_FLAGS.match(option):
                break
            options.append(option)
    return [words[0], *options], env


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
    measuring them again under a second id. None when there is none, or ``fp``'s id is there.
    """
    from hpcds1mpi.launch.mpi_family import clean_version

    if fp["machine_id"] in machines:
        return None
    for machine, row in machines.items():
        text = clean_version(str(row.get("mpi_library") or ""))
        if fp["mpi_library"] in (text, f"{text} {UNREAD}") and all(
                row.get(k) == fp[k] for k in HARDWARE):
            return machine
    return None


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
    model/count/memory, MPI library, partition name) but not host names, so identical nodes of a
    partition share one id; host names are kept in ``hostnames``. It names what a model may
    pool runs over: the hardware and the MPI library the measured code ran on, whichever path
    measured it (``mpi_library``: the library's own version line, kernels and programs alike,
    read as C reads it: up to a NUL, without control characters).
    """
    import psutil

    from hpcds1mpi.cluster import _cpu_model, detect_gpus
    from hpcds1mpi.launch.mpi_family import clean_version

    gpu_count, gpu_mem, gpu_model = detect_gpus()
    row = {
        "hostnames": ",".join(sorted(set(hostnames))),
        "partition": partition.name,
        "cpu_model": _cpu_model(),
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
    keys = ("cpu_model", "physical_cores", "logical_cores", "memory_gb", "gpu_model", "gpu_count",
            "gpu_memory_gb", "mpi_library", "partition")
    text = json.dumps([row.get(k) for k in keys])
    return hashlib.sha256(text.encode()).hexdigest()[:16]
