"""External-program mode: sweep a user's own MPI program, one launch per configuration.

Each configuration is launched as ``<launcher tokens> <program>`` (see
:mod:`hpcds1mpi.launch.launchers`) with the program rule of :mod:`hpcds1mpi.launch.program`:
the placeholders ``{size} {nodes} {ranks_per_node} {ranks} {threads} {precision} {device}``
filled by replacement (other braces stay literal) and the environment the launcher's batch
script would export, so the measured job is the one a recommended script submits. The wall
time is measured around the launch; the exit is classified as ``ok``, ``failed``, ``timeout``
or ``oom`` (exit 137 / SIGKILL, or "out of memory" / "Killed" / ``MemoryError`` /
``bad_alloc`` / "oom-kill" in its output).
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import signal
import subprocess
import tempfile
import threading
import time

from hpcds1mpi.config import OK, UNINFORMATIVE_STATUSES, enumerate_configs
from hpcds1mpi.errors import ConfigError, HpcdsError
from hpcds1mpi.launch.program import placeholder_values, program_tokens
from hpcds1mpi.measure.plan import RunSpec, SweepPlan, parse_ints, parse_words
from hpcds1mpi.measure.progress import Progress

OOM_PATTERN = re.compile(r"out of memory|oom-kill|\bKilled\b|MemoryError|bad_alloc|"
                         r"Cannot allocate memory", re.IGNORECASE)


def format_command(program: str, spec: RunSpec) -> list[str]:
    """The program's tokens with placeholders filled in (the program rule's replacement)."""
    try:
        return program_tokens(program, placeholder_values(spec.config, spec.size))
    except ConfigError as exc:
        raise ConfigError(f"--command: {exc}") from None


def build_external_plan(program: str, label: str, *, sizes, nodes=None, ranks_per_node=None,
                        threads=None, devices=None, precisions=None, partition=None,
                        valid_only: bool = False, timeout: float | None = None,
                        seed: int | None = None) -> SweepPlan:
    from hpcds1mpi.config import DEVICES, PRECISIONS

    size_list = parse_ints(sizes, "sizes")
    node_list = parse_ints(nodes if nodes is not None else 1, "nodes")
    rpn_list = parse_ints(ranks_per_node if ranks_per_node is not None else 1, "ranks_per_node")
    thread_list = parse_ints(threads if threads is not None else 1, "threads")
    device_list = parse_words(devices or "cpu", "devices", DEVICES, ())
    precision_list = parse_words(precisions or "fp64", "precisions", PRECISIONS, ())
    if not label or not re.fullmatch(r"[\w.+-]+", label):
        raise ConfigError(f"--label {label!r}: use letters, digits, '.', '_', '+' or '-'")
    runs = []
    configs = list(enumerate_configs(
        partition if valid_only else None, nodes=node_list, ranks_per_node=rpn_list,
        threads=thread_list, devices=device_list, precisions=precision_list))
    for size in size_list:
        for config in configs:
            spec = RunSpec(label, size, config, seed or 0, (("command", program),))
            format_command(program, spec)  # an unparsable command fails now
            runs.append(spec)
    if not runs:
        raise ConfigError("the ranges leave no configuration to run")
    plan = SweepPlan(runs=runs, timeout=float(timeout) if timeout else 600.0,
                     min_repeats=1, max_repeats=1, warmup=0,
                     source={"command": program, "label": label, "sizes": str(sizes)})
    return plan


class _TreeSampler:
    """Samples the resident memory of a process and its descendants (largest single process)."""

    def __init__(self, pid: int, period: float = 0.05):
        self.pid = pid
        self.period = period
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
        except psutil.Error:
            return
        while not self._stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                break
            for proc in procs:
                try:
                    self.peak_mb = max(self.peak_mb, proc.memory_info().rss / 2**20)
                except psutil.Error:
                    continue
            self._stop.wait(self.period)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak_mb


def launch_once(tokens: list[str], env: dict, timeout: float) -> dict:
    """Run ``tokens`` once; return exit code, wall seconds, CPU seconds of children, output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile() as out_fh, tempfile.TemporaryFile() as err_fh:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(tokens, stdout=out_fh, stderr=err_fh, env=env,
                                    start_new_session=True)
        except OSError as exc:
            return {"exit_code": 127, "wall_s": 0.0, "cpu_s": 0.0, "stdout": "",
                    "stderr": f"cannot start {tokens[0]}: {exc.strerror}", "timed_out": False,
                    "rss_mb": float("nan")}
        sampler = _TreeSampler(proc.pid)
        timed_out = False
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 10.0)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
            code = proc.returncode if proc.returncode is not None else -9
        wall = time.perf_counter() - start
        rss = sampler.stop()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out_fh.seek(0)
        err_fh.seek(0)
        stdout = out_fh.read().decode("utf-8", "replace")
        stderr = err_fh.read().decode("utf-8", "replace")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"exit_code": code, "wall_s": wall, "cpu_s": cpu, "stdout": stdout, "stderr": stderr,
            "timed_out": timed_out, "rss_mb": rss if rss > 0 else float("nan")}


def classify(result: dict, timeout: float) -> tuple[str, str]:
    """(status, error text) of one launch."""
    code = result["exit_code"]
    if result["timed_out"]:
        return "timeout", f"no exit within the {timeout:g} s timeout; killed"
    text = result["stdout"][-20000:] + "\n" + result["stderr"][-20000:]
    if code == 0:
        return OK, ""
    last = next((ln.strip() for ln in reversed(result["stderr"].splitlines()) if ln.strip()),
                "") or next((ln.strip() for ln in reversed(result["stdout"].splitlines())
                             if ln.strip()), "")
    if code in (137, -9) or OOM_PATTERN.search(text):
        return "oom", f"exit code {code} (out of memory): {last[:300]}"
    return "failed", f"exit code {code}: {last[:300]}"


def run_external(plan: SweepPlan, out: str, partition, *, resume: bool = False,
                 fom_regex: str | None = None, launcher: str | None = None,
                 progress: bool = True) -> dict:
    """Launch every configuration of ``plan`` once and record it in ``out``."""
    import hashlib
    import json
    import socket

    from hpcds1mpi.launch import launchers
    from hpcds1mpi.measure import meters
    from hpcds1mpi.measure.rows import base_row
    from hpcds1mpi.records import telemetry

    pattern = None
    if fom_regex:
        try:
            pattern = re.compile(fom_regex)
        except re.error as exc:
            raise ConfigError(f"--fom-regex: {exc}") from None
        if pattern.groups < 1:
            raise ConfigError("--fom-regex needs a group, e.g. 'GFLOPS: ([0-9.]+)'")
    launch = launchers.local(launcher)
    mpi_library = launchers.library_version(getattr(launch, "command", "srun"))
    writer = telemetry.TelemetryWriter(out, resume=resume,
                                       attrs={"plan": json.dumps(plan.source)})
    writer.open()
    try:
        fp = meters.fingerprint(partition, hostnames=[socket.gethostname()],
                                 mpi_library=mpi_library, gpu_aware=False)
        writer.machine(fp)
        machine_id = fp["machine_id"]
        sweep_id = hashlib.sha1(json.dumps(plan.source, sort_keys=True).encode()).hexdigest()[:12]
        todo = [s for s in plan.runs if (machine_id, s.run_id) not in writer.store.runs]
        model = meters.power_model(partition)
        bar = Progress(len(todo), enabled=progress)
        counts: dict[str, int] = {}
        sweep_start = time.perf_counter()
        measured = 0.0
        for done, spec in enumerate(todo):
            row = base_row(spec, machine_id, partition, sweep_id)
            program = dict(spec.extra)["command"]
            tokens = launch.tokens(spec.config) + format_command(program, spec)
            row.update(kind="external", command=shlex.join(tokens))
            row["attempt"] = writer.start(row)
            row["started_at"] = time.time()
            env = dict(os.environ)
            env.update(launch.environment(spec.config))
            result = launch_once(tokens, env, plan.timeout)
            status, error = classify(result, plan.timeout)
            wall = result["wall_s"]
            row.update(status=status, error=error, exit_code=result["exit_code"],
                       finished_at=time.time(), elapsed_s=wall, runtime_s=wall,
                       runtime_min_s=wall, runtime_max_s=wall, repeats=1, noise=0.0,
                       measured_s=wall, cpu_s=result["cpu_s"], peak_rss_mb=result["rss_mb"],
                       peak_rss_source="psutil-sampled (largest process of the launch)",
                       hostnames=socket.gethostname(), binding="launcher default")
            if pattern is not None:
                match = pattern.search(result["stdout"])
                if match:
                    try:
                        row["fom"] = float(match.group(1))
                    except ValueError:
                        pass
            if status not in UNINFORMATIVE_STATUSES and wall > 0:  # it ran: it drew power
                watts = meters.modelled_power(model, nodes=spec.config.nodes, window_s=wall,
                                               cpu_s=result["cpu_s"])
                row.update(avg_power_w=watts, energy_j=watts * wall, energy_source="modelled",
                           power_model=model.describe())
            writer.record(row, {"repeats": [{"machine_id": machine_id, "run_id": spec.run_id,
                                             "repeat": 0, "wall_s": wall}]})
            counts[status] = counts.get(status, 0) + 1
            measured += wall
            bar.update(done + 1, f"({spec.workload} {spec.size} {spec.config.label()})")
        return {"configs": len(todo), "statuses": counts,
                "sweep_s": time.perf_counter() - sweep_start, "measured_s": measured,
                "skipped": len(plan.runs) - len(todo)}
    except HpcdsError:
        raise
    finally:
        writer.close()
