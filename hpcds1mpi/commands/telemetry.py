"""``hpcds1mpi telemetry show|export|merge``: look at, export and merge telemetry files."""

from __future__ import annotations

import os
from pathlib import Path

import click

from hpcds1mpi.measure.printable import printable
from hpcds1mpi.schemas.numbers import COUNT0
from hpcds1mpi.schemas.paths import NonEmptyPath

#: A telemetry file argument: a directory is refused by click (one line, exit 2).
TELEMETRY_FILE = NonEmptyPath(dir_okay=False)


@click.group(name="telemetry")
def command() -> None:
    """Show, export or merge telemetry files."""


@command.command(name="show")
@click.argument("path", type=TELEMETRY_FILE)
@click.option("--rows", type=COUNT0, default=20, show_default=True, help="Runs to list (0: none).")
def show(path, rows) -> None:
    """Summarise PATH: schema, machines, runs per workload and status."""
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.records.kernel_options import labelled

    runs = labelled(telemetry.read_runs(path))  # the workloads train reads (s41 tester D19)
    machines = telemetry.read_machines(path)
    why = [printable(line) for line in _why_not_ok(runs)]  # first lines read before escaping
    setups = _setup_lines(path, runs)  # what prepared each configuration's folder
    # text from the file is shown, never obeyed by the terminal
    for frame, columns in ((runs, telemetry.RUN_COLUMNS), (machines, telemetry.MACHINE_COLUMNS)):
        for column in (name for name, kind in columns if kind == "str"):
            frame[column] = frame[column].map(printable)
    click.echo(f"{printable(path)}: schema_version {telemetry.SCHEMA_VERSION}, {len(runs)} "
               f"runs, {len(machines)} machine(s)")
    for m in machines.itertuples():
        cpu = f"{m.cpu_model} ({m.cpu_signature})" if m.cpu_signature else m.cpu_model
        click.echo(f"  machine {m.machine_id}: {cpu}, {m.physical_cores} cores, "
                   f"{m.memory_gb} GB, GPU {m.gpu_model or 'none'} x{m.gpu_count}, "
                   f"{m.mpi_library}; hosts {m.hostnames}")
    for line in setups:
        click.echo(line)
    if line := _foreign_line(path):
        click.echo(line)
    if len(runs):
        table = runs.groupby(["workload", "status"]).size().unstack(fill_value=0)
        click.echo(table.to_string())
        for line in why:
            click.echo(line)
        if rows:
            cols = ["workload", "size", "nodes", "ranks_per_node", "threads", "device",
                    "precision", "status", "runtime_s", "noise", "energy_j", "energy_source"]
            # 4 significant digits, not pandas' 6 decimals: a gemm run of 8.6 us showed as
            # 0.000009 (s37 tester P11); export has every digit
            click.echo(runs[cols].head(rows).to_string(index=False,
                                                       float_format=_significant))


def _significant(value: float) -> str:
    """A measured number with 4 significant digits, whatever its magnitude."""
    return f"{value:.4g}"


def _foreign_line(path) -> str:
    """What other programs added to ``path``, kept by a rewrite or refused (s37 tester P1:
    nothing said they were there)."""
    import h5py

    from hpcds1mpi.records.telemetry.foreign_content import find_foreign
    from hpcds1mpi.records.telemetry.layout import TABLES

    with h5py.File(path, "r") as f:  # names and attributes only: the tables are read already
        foreign = find_foreign(f, TABLES)
    if not foreign:
        return ""
    kept = [f"/{name}" for name in foreign.top] + [f"attributes of /{name}"
                                                    for name in foreign.attributed]
    said = []
    if kept:
        said.append(", ".join(kept[:6]) + (f" and {len(kept) - 6} more" if len(kept) > 6
                                           else "") + " (kept when runs are added)")
    if foreign.in_tables:
        said.append(", ".join(f"/{name}" for name in foreign.in_tables[:3])
                    + " inside its tables (adding runs is refused until they are moved out)")
    words = "  also holds, from other programs: " + "; ".join(said)
    return printable(words)


_SETUP = "setup (once per configuration, before its first launch)"


def _setup_lines(path, runs) -> list[str]:
    """The ``--setup`` of the program sweep that wrote ``path``; of a merged file whose sweeps
    differ (its rows keep their own), each sweep's, with its command (s31: none was shown)."""
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.records.telemetry.merged_settings import row_sweeps, setup_of

    sweeps = row_sweeps(runs)
    if len(sweeps) > 1:
        return [f"  sweep {printable(w)} {printable(command)!r} ({n} runs): " +
                (f"{_SETUP}: {printable(setup)}" if setup else "no setup")
                for w, command, setup, n in sweeps]
    setup = setup_of(telemetry.load(path).attrs.get("launch") or "") or (
        sweeps[0][2] if sweeps else "")
    return [f"  {_SETUP}: {printable(setup)}"] if setup else []


#: Distinct reasons :func:`_why_not_ok` lists (the most frequent first), and their width.
_REASONS, _REASON_WIDTH = 10, 160


def _why_not_ok(runs) -> list[str]:
    """Why runs did not end ``ok``: one line per status and first line of its error, the most
    frequent first, with how many and one configuration it happened to (the table lists none
    of it: a user saw "failed 2" and had to export the file to learn why)."""
    bad = runs[runs["status"] != "ok"]
    if not len(bad):
        return []
    first = bad["error"].fillna("").astype(str).map(
        lambda text: (text.strip().splitlines() or ["(no message recorded)"])[0])
    groups = sorted(bad.groupby([bad["status"], first], sort=False),
                    key=lambda item: -len(item[1]))
    lines = ["not ok (status, runs, the error's first line, e.g. where):"]
    for (status, reason), group in groups[:_REASONS]:
        r = group.iloc[0]
        reason = reason if len(reason) <= _REASON_WIDTH else reason[:_REASON_WIDTH - 3] + "..."
        lines.append(f"  {status} x{len(group)}: {reason} (e.g. {r['workload']} size {r['size']}, "
                     f"{r['nodes']} node(s) x {r['ranks_per_node']} rank(s) x {r['threads']} "
                     f"thread(s), {r['device']}, {r['precision']})")
    if len(groups) > _REASONS:
        lines.append(f"  ... and {len(groups) - _REASONS} more reasons (telemetry export "
                     "--table runs has every error)")
    return lines


@command.command(name="export")
@click.argument("path", type=TELEMETRY_FILE)
@click.option("--out", required=True, type=NonEmptyPath(dir_okay=False),
              help="Output file: .csv, .parquet or .json (lines).")
@click.option("--table", type=click.Choice(["runs", "machines", "repeats", "ranks",
                                            "rank_repeats"]), default="runs", show_default=True)
@click.option("--force", is_flag=True,
              help="Replace an existing --out that is not an export written here and "
                   "unchanged since.")
def export(path, out, table, force) -> None:
    """Write one table of PATH to CSV, Parquet or JSON lines.

    Beside OUT goes a hidden .OUT.hpcds1mpi.sha256 (sha256sum -c reads it): a rerun replaces
    OUT only while OUT is unchanged since, never a file of the user's or an edited export."""
    from hpcds1mpi.atomic import check_output_file, check_replace
    from hpcds1mpi.errors import OutputError
    from hpcds1mpi.output_paths import refuse_inputs, refuse_inside_bundle, written_path

    if out.endswith(".csv"):
        def write(frame, tmp):
            frame.to_csv(tmp, index=False)
    elif out.endswith(".parquet"):
        def write(frame, tmp):
            with open(tmp, "wb") as fh:  # pyarrow opens UTF-8 names only; Python any name
                frame.to_parquet(fh, index=False)
    elif out.endswith(".json") or out.endswith(".jsonl"):
        write = _write_json_lines
    else:
        raise OutputError(f"--out {out}: use a .csv, .parquet or .json file name")
    # --force or not: x.csv -> e.h5 had replaced the telemetry with its CSV (s33 tester C1)
    refuse_inputs(check_output_file(out, "export"), files=[("telemetry file", path)],
                  what="export")
    target = written_path(out, "export")  # a link's target, its checksum beside it (C3)
    refuse_inputs(checksum_path(target), files=[("telemetry file", path)], what="export")
    refuse_inside_bundle(out, what="export")  # learn and train then refused it (M11)
    from hpcds1mpi.writers import catch_sigterm, hold_lock, uncatch_sigterm

    # checked and replaced under the lock, held to the end: two exports to one file had both
    # said "wrote" (s47 tester M6)
    hold_lock(target, "export", "--out")
    existed = target.is_file()
    state = export_state(target) if existed and not force else None  # one hash of it
    if state == "edited":
        raise OutputError(f"{out} has been changed since telemetry export wrote it (it no "
                          f"longer matches the checksum in {checksum_path(target).name}); "
                          "pass --force to replace it, or choose another --out")
    check_replace(target, ours=lambda p: state == "unchanged", force=force,
                  what="table telemetry export", option="--out")
    catch_sigterm(out, "export")  # from the first read: SIGTERM had killed it silently (C7)
    try:
        frame = _write_export(path, table, target, write)
    finally:
        uncatch_sigterm()
    click.echo(f"wrote {len(frame)} rows of {table} to {printable(out)}"
               + (" (the earlier export replaced)" if existed else ""))


def _write_json_lines(frame, tmp: str) -> None:
    """``frame`` as JSON lines, one object per row, every float as Python writes it (the
    shortest text that reads back to the same float64) and NaN as null. pandas' ``to_json``
    keeps 10 decimals at most: a kernel's 6e-15 rel_error was exported as 0.0 (s37 tester
    P2); CSV and Parquet were exact."""
    import json
    import math

    import numpy as np

    def values(col):
        arr = frame[col].to_numpy()
        if arr.dtype.kind == "f":
            return [x if math.isfinite(x) else None for x in arr.tolist()]
        if arr.dtype.kind in "iub":
            return arr.tolist()
        return [None if v is None or (isinstance(v, float) and not math.isfinite(v))
                else v.item() if isinstance(v, np.generic) else v for v in arr.tolist()]

    names = [str(c) for c in frame.columns]
    columns = [values(c) for c in frame.columns]
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in zip(*columns):
            fh.write(json.dumps(dict(zip(names, row)), allow_nan=False) + "\n")


def _write_export(path, table: str, target: Path, write):
    """Read ``table`` of telemetry ``path`` and write it with ``write(frame, tmp)`` to ``target``,
    with its checksum beside it as one set (a stop between the two had left an export that no
    checksum vouched for, which the next run refused without --force)."""
    from hpcds1mpi.digests import sha256_file
    from hpcds1mpi.output_sets import write_set
    from hpcds1mpi.records import telemetry

    if table == "runs":
        frame = telemetry.read_runs(path)
    elif table == "machines":
        frame = telemetry.read_machines(path)
    else:
        frame = telemetry.read_detail(path, table)
    digest = []

    def write_table(tmp):
        write(frame, str(tmp))
        digest.append(sha256_file(tmp))

    def write_checksum(tmp):
        Path(tmp).write_bytes(_CHECKSUM_HEAD + digest[0].encode() + b"  "
                              + os.fsencode(target.name) + b"\n")

    write_set(target.parent, {target.name: ("export", write_table),
                              checksum_path(target).name: ("export checksum", write_checksum)})
    return frame


#: The first line of an export's checksum file (sha256sum -c skips lines starting with #).
_CHECKSUM_HEAD = (b"# hpcds1mpi telemetry export replaces the file below only while it "
                  b"matches this checksum\n")


def checksum_path(out: Path) -> Path:
    """The hidden checksum file beside export ``out`` (its name shortened where a long export
    name would make it pass NAME_MAX: :func:`~hpcds1mpi.writers.side_name`)."""
    from hpcds1mpi.writers import side_name

    return out.with_name(side_name(out.name, ".", ".hpcds1mpi.sha256"))


def export_state(out: Path) -> str:
    """``"unchanged"`` (what telemetry export wrote there, byte for byte: its checksum file
    matches), ``"edited"`` (a checksum file, which the file no longer matches) or
    ``"foreign"``. A checksum, not the columns: an inventory with a machine_id column, or an
    export edited by hand, had been replaced without a word. One rule for CSV, Parquet and
    JSON lines alike, none of which can hold a checksum line that every reader skips."""
    try:
        with open(checksum_path(out), "rb") as fh:
            head, line = fh.read(4096).split(b"\n", 1)
    except (OSError, ValueError):
        return "foreign"
    if head + b"\n" != _CHECKSUM_HEAD:
        return "foreign"
    from hpcds1mpi.digests import sha256_file

    try:
        return "unchanged" if line[:64].decode("ascii") == sha256_file(out) else "edited"
    except (OSError, UnicodeDecodeError):
        return "edited"


@command.command(name="merge")
@click.argument("sources", nargs=-1, required=True, type=TELEMETRY_FILE)
@click.option("--out", required=True, type=TELEMETRY_FILE,
              help="Merged telemetry file (created or extended).")
@click.option("--force", is_flag=True,
              help="Extend an OUT that belongs to another user (it becomes yours, keeping its "
                   "group and mode).")
def merge(sources, out, force) -> None:
    """Merge telemetry shards (job-array tasks, several machines) into OUT, idempotently."""
    from hpcds1mpi.atomic import check_output_file, check_replace
    from hpcds1mpi.output_paths import refuse_inside_bundle, written_path
    from hpcds1mpi.records import telemetry

    check_output_file(out, "merged telemetry")
    refuse_inside_bundle(out, what="merged telemetry")  # learn and train then refused it (M11)
    # rewritten, another user's OUT became the caller's and lost its group's write: refused
    # as recommend -o and export refuse one (s34 tester U7)
    check_replace(written_path(out, "merged telemetry"), ours=lambda p: True, force=force,
                  what="merged telemetry", option="--out")
    from hpcds1mpi.commands.merge_labels import MergeLabels

    labels = MergeLabels()  # one label's two programs the merge would add refused (s42)
    counts = telemetry.merge(list(sources), out, check=labels)
    click.echo(f"{printable(out)}: {counts['rows']} runs ({counts['added']} added, "
               f"{counts['replaced']} replaced, {counts['kept']} already there)"
               + (f"; {counts['repeated']} source(s) given more than once, read once"
                  if counts.get("repeated") else "") + _conflict_words(counts)
               + _launcher_words(counts)
               + (f"; {counts['renamed']} of the sources' runs were under a machine id a "
                  "resume has since replaced: taken as that machine's"
                  if counts.get("renamed") else "")
               + ("; nothing to add: --out left as it was, byte for byte"
                  if counts.get("unchanged") else ""))
    for line in labels.warnings:  # --out's own, kept: said, never hidden
        click.echo(f"warning: {printable(line)}", err=True)
    from hpcds1mpi.measure.same_machine import untold_twins

    for line in untold_twins(telemetry.load(out).machines):  # s38 tester K2
        click.echo(f"note: {line}", err=True)


def _launcher_words(counts: dict) -> str:
    """The runs merged that another record of was measured under another launcher: one of the
    two measurements is kept (s40 tester A7: said as "replaced" alone)."""
    if not counts.get("other_launcher"):
        return ""
    run_id, kept, other = counts["launchers"]
    return (f"; {counts['other_launcher']} of them the same run measured under two launchers, "
            f"one measurement kept (e.g. run {printable(run_id)}: {printable(kept)}'s kept, "
            f"{printable(other)}'s dropped): merge one launcher's runs, or sweep the other with "
            "another --label")


def _conflict_words(counts: dict) -> str:
    """The runs merged that another record of holds other values with the same finished_at
    (s37 tester P8: counted as "already there", the first named kept without a word)."""
    if not counts.get("conflicts"):
        return ""
    run_id, column, source = counts["conflict"]
    return (f"; {counts['conflicts']} conflicting duplicate(s): the same run with other "
            f"values and the same finished_at (e.g. run {printable(run_id)}'s {column} in "
            f"{printable(source)}), the first kept (--out's own, then the sources in the order "
            "given); check which is right")
