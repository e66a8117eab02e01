"""External-program mode: sweep a user's own MPI program, one launch per configuration.

Each configuration is launched as ``<launcher tokens> <program>`` (see
:mod:`hpcds1mpi.launch.launchers`) with the program rule of :mod:`hpcds1mpi.launch.program`:
the placeholders ``{size} {nodes} {ranks_per_node} {ranks} {threads} {precision} {device}``
filled by replacement (other braces stay literal) and the environment the launcher's batch
script would export, so the measured job is the one a recommended script submits. The wall
time is measured around the launch; the exit is classified as ``ok``, ``failed``, ``timeout``
or ``oom`` (exit 137 / SIGKILL, or "out of memory" / "Killed" / ``MemoryError`` /
``bad_alloc`` / "oom-kill" in its output).

The program is started in its own session (process group). A launch that cannot start (the
program or the launcher missing or not executable) is an error of the sweep, never a
measurement: the program is checked before anything launches (exit 2), a launcher that fails to
start is a :class:`~hpcds1mpi.errors.LaunchError` (exit 1). SIGINT / SIGTERM of the sweep kill
the program's whole process group, record the run ``interrupted`` (``--resume`` runs it again)
and end the sweep with :class:`~hpcds1mpi.errors.SweepInterrupted` (exit 1).
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from hpcds1mpi.config import OK, UNINFORMATIVE_STATUSES, enumerate_configs
from hpcds1mpi.errors import ConfigError, LaunchError, SweepInterrupted
from hpcds1mpi.launch.program import placeholder_values, program_tokens
from hpcds1mpi.measure.plan import RunSpec, SweepPlan, parse_ints, parse_words
from hpcds1mpi.measure.progress import Progress
from hpcds1mpi.runtime.processes import die_with_parent, end_group

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
                        seed: int | None = None, snapshot_every: float | None = None
                        ) -> SweepPlan:
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
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"--timeout {timeout:g}: give a positive number of seconds")
    if snapshot_every is not None and not snapshot_every >= 0:
        raise ConfigError(f"--snapshot-every {snapshot_every:g}: give 0 or more seconds")
    plan = SweepPlan(runs=runs, timeout=float(timeout) if timeout else 600.0,
                     min_repeats=1, max_repeats=1, warmup=0,
                     snapshot_every=30.0 if snapshot_every is None else float(snapshot_every),
                     source={"command": program, "label": label, "sizes": str(sizes)})
    return plan


def check_program(tokens: list[str], env: dict | None = None) -> None:
    """Check that the program ``tokens[0]`` can be started, before anything launches.

    Raises:
        ConfigError: it is not found (as a path, or on ``PATH``) or not an executable file.
    """
    name = tokens[0] if tokens else ""
    if not name:
        raise ConfigError("--command is empty: give your program, e.g. --command './app {size}'")
    if "/" in name:
        found = name
        if not os.path.exists(found):
            raise ConfigError(f"--command: program {name!r} not found; give the path of an "
                              "executable (or a name on PATH)")
    else:
        found = shutil.which(name, path=(env or os.environ).get("PATH"))
        if found is None:
            raise ConfigError(f"--command: program {name!r} is not on PATH; give its path "
                              "(e.g. ./" + name + ") or install it")
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise ConfigError(f"--command: {found!r} is not an executable file (chmod +x it, or "
                          "start it through its interpreter, e.g. 'python3 app.py')")


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
    """Run ``tokens`` once in a session of its own; return exit code, wall seconds, CPU
    seconds of children, output.

    Raises:
        LaunchError: the launch could not start (launcher or program missing, not executable).
        BaseException: whatever interrupts the wait (KeyboardInterrupt, the SIGTERM handler's
            SweepInterrupted) passes on after the program's whole process group is killed.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile() as out_fh, tempfile.TemporaryFile() as err_fh:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(tokens, stdout=out_fh, stderr=err_fh, env=env,
                                    start_new_session=True, preexec_fn=die_with_parent())
        except OSError as exc:
            raise LaunchError(f"cannot start {tokens[0]}: {exc.strerror}; nothing was "
                              "recorded for this configuration (check the launcher and "
                              "--command)") from None
        sampler = _TreeSampler(proc.pid)
        timed_out = False
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            end_group(proc)
            code = proc.returncode if proc.returncode is not None else -9
        except BaseException:
            end_group(proc)  # Ctrl-C / SIGTERM of the sweep: no orphan of the user's
            sampler.stop()
            raise
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


#: What a launcher prints when it could not start the program on a node (hydra, srun).
LAUNCHER_NOT_STARTED = re.compile(r"execvp error|execve\(\)")
#: What a shell-like launcher prints with exit 126 / 127.
NOT_STARTED = re.compile(r"\bcommand not found\b|No such file or directory|Permission denied|"
                         r"cannot execute", re.IGNORECASE)


def launch_problem(result: dict) -> str:
    """The reason the launcher could not start the program ("" when it started): a launcher's
    execvp / execve error, or exit 126 / 127 with "not found" / "cannot execute" words."""
    if result["timed_out"] or result["exit_code"] == 0:
        return ""
    tail = result["stderr"][-4000:]
    match = LAUNCHER_NOT_STARTED.search(tail)
    if match is None and result["exit_code"] in (126, 127):
        match = NOT_STARTED.search(tail)
    if match is None:
        return ""
    line = next((ln.strip() for ln in tail.splitlines() if match.group(0) in ln), match.group(0))
    return line[:300]


class _Terminated(BaseException):
    """Raised in the main thread by the SIGTERM handler (a BaseException: passes every
    ``except Exception``)."""


def _on_sigterm(signum, frame):
    raise _Terminated()


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
                 progress: bool = True, mpi: str = "pmi2") -> dict:
    """Launch every configuration of ``plan`` once and record it in ``out``.

    Runs already in ``out`` are skipped, except ``interrupted`` ones (run again).

    Raises:
        ConfigError: the program cannot be started (checked before anything launches).
        LaunchError: the launcher could not start it (nothing recorded for that run).
        SweepInterrupted: SIGINT / SIGTERM; the program's process group is killed first and the
            run recorded ``interrupted``; every finished run is kept.
    """
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
    launch = launchers.local(launcher, mpi=mpi)
    # What the launch binds (the telemetry's binding column says it for kernels too).
    binding = "srun --cpu-bind=cores" if launch.binds_cores else f"{launch.name} default"
    first = plan.runs[0]
    first_env = {**os.environ, **launch.environment(first.config)}
    check_program(format_command(dict(first.extra)["command"], first), first_env)
    head = launch.tokens(first.config)
    if head and shutil.which(head[0], path=first_env.get("PATH")) is None:
        raise LaunchError(f"launcher {head[0]!r} not found on PATH; nothing was launched "
                          "(install an MPI, or pick another with --launcher)")
    mpi_library = launchers.library_version(getattr(launch, "command", "srun"))
    writer = telemetry.TelemetryWriter(out, resume=resume, snapshot_every_s=plan.snapshot_every,
                                       attrs={"plan": json.dumps(plan.source)})
    writer.open()
    previous = signal.getsignal(signal.SIGTERM)
    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        fp = meters.fingerprint(partition, hostnames=[socket.gethostname()],
                                 mpi_library=mpi_library, gpu_aware=False)
        writer.machine(fp)
        machine_id = fp["machine_id"]
        sweep_id = hashlib.sha1(json.dumps(plan.source, sort_keys=True).encode()).hexdigest()[:12]
        done_keys = {k for k, r in writer.store.runs.items() if r["status"] != "interrupted"}
        todo = [s for s in plan.runs if (machine_id, s.run_id) not in done_keys]
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
            try:
                result = launch_once(tokens, env, plan.timeout)
            except (KeyboardInterrupt, _Terminated) as exc:
                why = "SIGINT (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else "SIGTERM"
                row.update(status="interrupted", finished_at=time.time(),
                           error=f"the sweep was stopped by {why} while this ran; its program "
                                 "was killed; --resume runs it again")
                writer.record(row, {})
                kept = sum(r["status"] != "interrupted" for r in writer.store.runs.values())
                raise SweepInterrupted(
                    f"sweep stopped by {why}: {spec.workload} size {spec.size} "
                    f"{spec.config.label()} was killed and is recorded interrupted; "
                    f"{kept} finished runs are kept in {out}; rerun with --resume") from None
            problem = launch_problem(result)
            if problem:
                raise LaunchError(f"the launcher could not start the program ({problem}); "
                                  "nothing was recorded for this configuration: check "
                                  "--command and --launcher")
            status, error = classify(result, plan.timeout)
            wall = result["wall_s"]
            row.update(status=status, error=error, exit_code=result["exit_code"],
                       finished_at=time.time(), elapsed_s=wall, runtime_s=wall,
                       runtime_min_s=wall, runtime_max_s=wall, repeats=1, noise=0.0,
                       measured_s=wall, cpu_s=result["cpu_s"], peak_rss_mb=result["rss_mb"],
                       peak_rss_source="psutil-sampled (largest process of the launch)",
                       hostnames=socket.gethostname(), binding=binding)
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
    except (KeyboardInterrupt, _Terminated) as exc:  # between two launches
        why = "SIGINT (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else "SIGTERM"
        raise SweepInterrupted(f"sweep stopped by {why}; every finished run is kept in {out}; "
                               "rerun with --resume") from None
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
        writer.close()
