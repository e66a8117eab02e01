"""``hpcds1mpi quickstart``: measure this machine, train, recommend, write a Slurm script."""

from __future__ import annotations

import click

from hpcds1mpi.measure.printable import printable
from hpcds1mpi.schemas.numbers import COUNT, SECONDS
from hpcds1mpi.schemas.paths import NonEmptyPath

KERNELS = ("stencil", "gemm", "fft")
#: Which of each kernel's default sizes the sweep measures: the smaller ones (so it fits in a few
#: minutes on 2 cores), leaving out the sixth, for which quickstart then recommends.
MEASURED_INDICES = (0, 1, 2, 3, 4, 6)
UNMEASURED_INDEX = 5
UNMEASURED_WORKLOAD = "stencil"
#: The file that marks a folder as quickstart's (a rerun resumes there; --force starts over).
MARK = ".hpcds1mpi-quickstart"
#: Its first line; a whole run adds what its model was made from (:mod:`.quickstart_model`).
MARK_TEXT = "written by hpcds1mpi quickstart; a rerun resumes here\n"
#: Everything quickstart writes into its folder (and the telemetry's journal, lock, notes).
FILES = frozenset({MARK, "plan.toml", "telemetry.h5", "model", "job.sbatch", "pareto.png",
                   "recommendation.json"})


def is_quickstart_folder(path) -> bool:
    """Whether folder ``path`` holds only what quickstart writes, and is marked as ours (or
    has quickstart's own plan.toml: a folder from before the mark)."""
    from pathlib import Path

    from hpcds1mpi.atomic import TMP_PREFIX

    path = Path(path)
    names = {p.name for p in path.iterdir()}
    side = ("telemetry.h5.", ".telemetry.h5.", TMP_PREFIX)
    if any(n not in FILES and not n.startswith(side) for n in names):
        return False
    if MARK in names:
        return True
    try:
        plan = (path / "plan.toml").read_text()
    except (OSError, UnicodeDecodeError):
        return False
    return plan.startswith("[sweep]\nranks_per_node = ") and '[[kernel]]\nname = "stencil"' in plan


def check_own_script(out) -> bool:
    """Refuse, before any work, a job.sbatch in quickstart's folder that a rerun may not replace,
    and say whether the recommend step must be told ``--force`` to replace it. Was (s34 tester
    O1): a folder of an older quickstart, whose script has no checksum line, was refused by that
    step after the sweep and the training, with advice quickstart does not take (``-o``).

    A script of ours with a matching checksum line is replaced as it is. One without a checksum
    line (an older hpcds1mpi's) is quickstart's own as written where it is no newer than the
    recommendation.json that quickstart writes after it: nobody changed it after that run.

    Returns:
        Whether the recommend step needs ``--force``.

    Raises:
        OutputError: (exit 2) job.sbatch is edited, not ours, or may have been edited since.
    """
    import os
    from pathlib import Path

    from hpcds1mpi.errors import OutputError
    from hpcds1mpi.launch.script_seal import script_state

    script = Path(out) / "job.sbatch"
    if not os.path.lexists(script):
        return False
    try:
        state = script_state(script)
    except OSError:
        state = "foreign"
    if state == "unchanged":
        return False
    if state == "unsealed" and _not_newer(script, Path(out) / "recommendation.json"):
        return True
    why = {"edited": "it was changed after quickstart wrote it (its checksum line no longer "
                     "matches)",
           "unsealed": "it has no checksum line (an older hpcds1mpi wrote it) and is newer than "
                       "the recommendation.json written after it, so it may have been edited",
           }.get(state, "it is not a batch script hpcds1mpi wrote")
    raise OutputError(f"{script}: a rerun of quickstart writes a new one there, but {why}; move "
                      f"it out of {out} to keep it and rerun quickstart (the sweep resumes), or "
                      "pass --force to start the folder over")


def runs_beyond_the_sweep(model, telemetry) -> list[str]:
    """The sources of bundle ``model`` other than quickstart's own sweep ``telemetry`` (empty
    when there is no bundle, or it was trained on that sweep alone).

    A rerun used to retrain ``model`` from the sweep alone, with ``--force``: the runs ``learn``
    had added (the README's first session: tune, then learn into the model) were dropped, the
    recommendation reverted, exit 0 and nothing said (s37 tester K3). A rerun resumes (README:
    "a plain quickstart rerun resumes its own folder"), so it keeps them: quickstart then learns
    the sweep into the bundle (the union, the bundle's own settings) rather than refusing, and
    ``--force`` remains the way to start the folder over. A bundle of the sweep alone is
    retrained as before (nothing is lost; an older version's bundle is rewritten in this one's
    format).
    """
    import json
    import os
    from pathlib import Path

    from hpcds1mpi.surrogates.bundle_files import MANIFEST, is_bundle

    model, telemetry = Path(model), Path(telemetry)
    if not is_bundle(model):
        return []
    try:
        sources = json.loads((model / MANIFEST).read_text()).get("sources") or []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return []

    def is_the_sweep(source) -> bool:
        try:  # a source is recorded as given (relative to where train / learn ran)
            return os.path.samefile(source, telemetry)
        except (OSError, TypeError, ValueError):
            return str(source) == str(telemetry)

    return list(dict.fromkeys(str(s) for s in sources if not is_the_sweep(s)))


def _not_newer(path, than) -> bool:
    """Whether file ``path`` was last changed no later than file ``than`` (False when either
    cannot be read)."""
    import os

    try:
        return os.stat(path).st_mtime_ns <= os.stat(than).st_mtime_ns
    except OSError:
        return False


def _run(cmd: list[str], what: str, timeout: float) -> str:
    import subprocess

    from hpcds1mpi.errors import RuntimeFailure
    from hpcds1mpi.runtime.processes import run_child

    from hpcds1mpi.runtime.message_paths import shell_word

    # each word quoted as the shell reads it back: the step can be pasted to run it again
    click.echo(f"→ {what}: {' '.join(shell_word(word) for word in cmd)}")
    try:  # every child dies with quickstart, even by kill -9 (s33 tester C5)
        proc = run_child(cmd, timeout=timeout)
    except subprocess.TimeoutExpired:
        # A run cut short by its time limit is a runtime failure (exit 1), as a sweep's.
        resumes = " (the sweep resumes where it stopped)" if what == "measuring sweep" else ""
        raise RuntimeFailure(f"{what} did not finish in {timeout:.0f} s; rerun quickstart"
                             f"{resumes}") from None
    if proc.returncode != 0:
        raise child_error(what, proc.returncode, proc.stderr, proc.stdout)
    return proc.stdout


#: How every command of ours starts its one-line error (cli.py).
ERROR_PREFIX = "hpcds1mpi: error: "


def child_error(what: str, returncode: int, stderr: str, stdout: str = ""):
    """The error of a failed child command: its own one-line error once (not nested in ours:
    "measuring sweep failed: hpcds1mpi: error: ...", s33 tester C5), with its exit code's
    class (1 a runtime failure such as a held lock, 2 a usage error); a child ended by a
    signal is a runtime failure."""
    from hpcds1mpi.errors import HpcdsError, RuntimeFailure

    lines = stderr.strip().splitlines() or stdout.strip().splitlines() or ["?"]
    said = [ln[len(ERROR_PREFIX):] for ln in lines if ln.startswith(ERROR_PREFIX)]
    if returncode < 0:
        return RuntimeFailure(f"{what} ended by signal {-returncode}; rerun quickstart (it "
                              "resumes where it stopped)")
    kind = HpcdsError if returncode == HpcdsError.exit_code else RuntimeFailure
    return kind(f"{what} failed: {said[-1] if said else lines[-1].strip()}")


def check_ranks(ranks: int, cores: int) -> None:
    """Refuse more sweep ranks than cores before anything starts: the sweep keeps only layouts
    that fit the node (``valid_only``: ranks x threads <= cores), so more ranks would only sit
    idle on oversubscribed cores (1000 processes on 2 cores).

    Raises:
        ConfigError: ``ranks`` exceeds ``cores`` (exit 2).
    """
    from hpcds1mpi.errors import ConfigError

    if ranks > cores:
        raise ConfigError(f"--ranks {ranks} is more than this machine's {cores} cores (the sweep "
                          "measures only layouts with ranks x threads <= cores); pass --ranks "
                          f"{cores} or fewer")


@click.command(name="quickstart")
@click.option("--out", "out_dir", default="hpcds1mpi-quickstart", show_default=True,
              type=NonEmptyPath(), help="Folder for the telemetry, model, script and plot.")
@click.option("--ranks", type=COUNT, default=None,
              help="MPI ranks for the sweep, at most the cores (default: cores).")
@click.option("--sweep-timeout", type=SECONDS, default=480.0, show_default=True,
              help="Seconds the measuring sweep may take.")
@click.option("--force", is_flag=True,
              help="Start over in an earlier quickstart's --out (only a quickstart folder is "
                   "replaced); without it a rerun resumes there.")
def command(out_dir, ranks, sweep_timeout, force):
    """Measure this machine, train a model, recommend for an unmeasured size, write a Slurm
    script and a Pareto plot."""
    from pathlib import Path

    from hpcds1mpi.runtime.address_space import check_room

    check_room("quickstart")  # its train step loads torch and scipy: before measuring (E4)

    from hpcds1mpi.cluster import detect_local
    from hpcds1mpi.writers import catch_sigterm, uncatch_sigterm

    cluster = detect_local()
    part = cluster.partition()
    cores = max(1, part.cores_per_node)
    nranks = ranks or cores
    check_ranks(nranks, cores)
    out = Path(out_dir)
    # The folder is filled in place and a rerun resumes there: a stop says so (taken before
    # the folder's lock, whose own line, "no partial output is left", would be printed).
    # --force over an earlier run builds aside: a stop leaves that run as it was (s47 M1).
    catch_sigterm(out, "quickstart folder", "the earlier quickstart folder there is left as it "
                  "was: rerun to start over (--force) or to resume it" if _aside(out, force)
                  else "the runs measured so far are kept there: rerun with the same --out "
                  "(without --force) to resume")
    try:
        _quickstart(out, nranks, cores, part, sweep_timeout, force)
    finally:
        uncatch_sigterm()


def _aside(out, force: bool) -> bool:
    """Whether this run builds its folder beside ``out`` and swaps it in at the end: --force
    over an earlier run's folder, which stays whole until then (:mod:`.quickstart_aside`)."""
    try:
        return force and out.is_dir() and any(out.iterdir())
    except OSError:  # unreadable: check_output_dir says so
        return False


def _quickstart(out, nranks: int, cores: int, part, sweep_timeout: float, force: bool) -> None:
    from hpcds1mpi.atomic import atomic_dir, check_output_dir, write_error

    # A rerun in quickstart's own folder resumes; any other non-empty folder is refused.
    check_output_dir(out, ours=is_quickstart_folder, force=True, what="quickstart folder")
    if _aside(out, force):  # was: rmtree before measuring, a stop left nothing (s47 M1)
        click.echo(f"note: --force: the new folder is built beside {printable(out)} and "
                   "replaces it when whole; until then the earlier one stays")
        with atomic_dir(out, "quickstart folder") as work:
            _fill(work, out, nranks, cores, part, sweep_timeout, replace_script=False)
    else:
        replace_script = not force and out.is_dir() and check_own_script(out)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_error(exc, out, "quickstart folder") from None
        _fill(out, out, nranks, cores, part, sweep_timeout, replace_script)
    click.echo("\nwhere everything is:")
    for label, name in (("telemetry", "telemetry.h5"), ("model", "model"),
                        ("Slurm script", "job.sbatch"), ("Pareto plot", "pareto.png"),
                        ("recommendation", "recommendation.json")):
        click.echo(f"  {label:<15} {printable(out / name)}")


def _fill(out, final, nranks: int, cores: int, part, sweep_timeout: float,
          replace_script: bool) -> None:
    """Measure, train (or learn), recommend and plot into folder ``out``, which becomes
    ``final`` (itself, or the folder built aside for it)."""
    import sys
    from pathlib import Path

    from hpcds1mpi.atomic import write_text
    from hpcds1mpi.launch.launcher_discovery import mpiexec_path

    from .quickstart_model import is_up_to_date, outputs_unchanged, read_record, record_line

    record = read_record(out / MARK)  # what the last whole run made (s37 tester K3)
    write_text(out / MARK, MARK_TEXT)  # until this run ends whole, no record: all made again
    click.echo(f"this machine: {part.cores_per_node} cores, {part.memory_gb:g} GB, "
               f"{part.gpus_per_node} GPUs ({part.cpu_model})")
    exe = str(Path(sys.executable).parent / "hpcds1mpi")
    rpn = ",".join(str(r) for r in sorted({1, max(1, nranks // 2), nranks}))
    threads = ",".join(str(t) for t in sorted({1, 2} if cores >= 2 else {1}))
    telemetry = out / "telemetry.h5"
    from hpcds1mpi import kernels

    plan = out / "plan.toml"
    lines = ["[sweep]", f'ranks_per_node = "{rpn}"', f'threads = "{threads}"',
             'precisions = "fp64,fp32"', "valid_only = true", "min_time = 0.1", "min_repeats = 3",
             "max_repeats = 3", ""]
    for name in KERNELS:
        sizes = kernels.get(name).default_sizes
        lines += ["[[kernel]]", f'name = "{name}"',
                  f"sizes = {[sizes[i] for i in MEASURED_INDICES]}", ""]
    write_text(plan, "\n".join(lines), "sweep plan")
    _run([mpiexec_path(), "-n", str(nranks), exe, "sweep",
          "--plan", str(plan), "--out", str(telemetry), "--resume", "--no-progress"],
         "measuring sweep", sweep_timeout)
    model = out / "model"
    script, plot = out / "job.sbatch", out / "pareto.png"
    outputs = [script, out / "recommendation.json", plot]
    beyond = runs_beyond_the_sweep(model, telemetry)
    up_to_date = is_up_to_date(record, model, telemetry)
    if up_to_date:  # s37 tester K3: every rerun trained (or learnt) again, for nothing
        click.echo(f"{printable(model)} is up to date: made from this sweep's runs as they are, by this "
                   "hpcds1mpi; not trained again (--force starts the folder over)")
    elif beyond:  # keep what learn (or a user's train) added: learn the sweep into it (s37 K3)
        click.echo(f"note: {printable(model)} holds runs beyond this folder's sweep (from "
                   f"{', '.join(beyond)}): they are kept and the sweep's runs are learnt into "
                   "it, not retrained from the sweep alone (--force starts the folder over)")
        _run([exe, "learn", "--model", str(model), "--telemetry", str(telemetry)],
             "learning", 300)
    else:
        _run([exe, "train", "--telemetry", str(telemetry), "--out", str(model), "--members",
              "3", "--epochs", "20", "--force"], "training", 300)
    if up_to_date and outputs_unchanged(record, outputs):
        click.echo("the recommendation made from it stands (job.sbatch, recommendation.json and "
                   "pareto.png unchanged)")
    else:
        _recommend(exe, model, script, plot, out, replace_script)
    if out != final:
        from .quickstart_aside import name_as_final

        name_as_final(out, final)
    write_text(out / MARK, MARK_TEXT + record_line(model, telemetry, outputs))


def _recommend(exe: str, model, script, plot, out, replace_script: bool) -> None:
    """The recommendation for the unmeasured size: script, JSON, table and plot."""
    import json

    from hpcds1mpi import kernels
    from hpcds1mpi.atomic import atomic_path, write_text

    size = kernels.get(UNMEASURED_WORKLOAD).default_sizes[UNMEASURED_INDEX]  # not measured
    text = _run([exe, "recommend", "--workload", UNMEASURED_WORKLOAD, "--size", str(size),
                 "--model", str(model), "--json", "--emit", "slurm", "-o", str(script),
                 *(["--force"] if replace_script else [])],
                "recommending", 120)
    data = json.loads(text)
    table = _run([exe, "recommend", "--workload", UNMEASURED_WORKLOAD, "--size", str(size),
                  "--model", str(model)], "recommending (table)", 120)
    click.echo(table)
    with atomic_path(plot, "Pareto plot") as tmp:
        _plot(data, tmp)
    write_text(out / "recommendation.json", json.dumps(data, indent=2), "recommendation")


def _plot(data: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    rows = data.get("front") or []
    alt = data.get("alternatives") or []
    if alt:
        ax.scatter([r["runtime_s"] for r in alt], [r["energy_j"] for r in alt], s=12,
                   color="0.6", label="top alternatives")
    if rows:
        ax.plot([r["runtime_s"] for r in rows], [r["energy_j"] for r in rows], "o-",
                label="predicted runtime–energy front")
        picks = [r for r in rows if r.get("pick")]
        if picks:
            ax.scatter([picks[0]["runtime_s"]], [picks[0]["energy_j"]], s=120, marker="*",
                       color="C3", zorder=5, label="pick")
    ax.set_xlabel("predicted runtime (s)")
    ax.set_ylabel(f"predicted energy (J, {data.get('energy', 'modelled')})")
    ax.set_title(f"{data.get('workload')} size {data.get('size')}: verdict "
                 f"{(data.get('verdict') or {}).get('verdict')}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
