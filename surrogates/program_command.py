"""A program's command line as its recorded rows ran it, the launcher left out.

Each row of a program sweep records its launch (``mpiexec -n 2 ./app 64 40``);
:func:`commands_of` reads those lines back as a script's launch line is read and puts the
placeholders whose values varied back (``./app {size} 40``): what ``advise`` matches a user's
script by. Rows of one label that ran different command lines (``learn`` on a sweep with an
option added: ``-ntomp {threads}``) give one command line each, the one most rows ran first
(:func:`command_of`). :func:`launched_words` reads one recorded line. The levels that keep
the result: :mod:`hpcds1mpi.surrogates.levels`.

Where the rows carry the command as the sweep was given it (:data:`TEMPLATE_COLUMN`, from the
telemetry's ``plan``), a line that template fills to is that template: the sweep's own words,
nothing guessed. Otherwise the placeholders are found from how the lines differ, inside a word
too (``s2.nw``, ``s4.nw`` -> ``s{size}.nw``).
"""

from __future__ import annotations

import itertools
import re
import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


#: The most distinct recorded command lines read per program (every configuration of a sweep
#: differs only in its launcher options and placeholders).
_COMMANDS_READ = 200
#: The rows' column holding the command as its sweep was given it (``nwchem s{size}.nw``).
TEMPLATE_COLUMN = "command_template"
#: The most places in one word a placeholder's value is tried at (each subset is tried).
_MOST_SPOTS = 6


def command_of(rows: "pd.DataFrame") -> str:
    """The command line most of a program's rows ran (the first of :func:`commands_of`); ""
    when none can be read."""
    found = commands_of(rows)
    return found[0] if found else ""


def commands_of(rows: "pd.DataFrame") -> tuple[str, ...]:
    """A program's command lines (see :func:`command_runs`), the one most rows ran first."""
    return tuple(line for line, _ in command_runs(rows))


def command_runs(rows: "pd.DataFrame") -> tuple[tuple[str, tuple[tuple, ...]], ...]:
    """A program's command lines from its rows' ``command`` (launcher and program, as
    launched): the launcher dropped (read as a script's launch line is), every word whose value
    follows the row's ``size`` (or another placeholder that varied) written back as ``{size}``
    (...); measured at one size, the one word equal to it.

    A line that its row's :data:`TEMPLATE_COLUMN` fills to (the row's placeholder values put
    in) is that template. Other lines that differ only where a placeholder's value did, inside
    a word too, are one command line; any other difference (a word more, another ``-nsteps``)
    makes another. Returns (command line, the configurations its rows ran: sorted distinct
    :data:`RUN_KEYS` tuples) per command line, the one most rows ran first (a tie: the one run
    last), then the others by rows; () when no line can be read. A script runs the line its
    picked configuration ran (:func:`command_for`: s30 tester O3).

    Before, rows of two command lines gave "" (no command at all), and ``advise`` no longer
    knew the program or where its size is."""
    from hpcds1mpi.launch.program import PLACEHOLDERS

    if "command" not in rows.columns:
        return ()
    if "kind" in rows.columns:
        rows = rows[rows["kind"].astype(str) == "external"]
    groups: list[dict] = []  # {"runs": [(words, values)], "rows": n, "last": row position,
    #                            "configs": {RUN_KEYS tuple of each row}}
    group_of: dict[str, dict | None] = {}  # each distinct line -> its group (None: unreadable)
    for at, row in enumerate(rows.to_dict("records")):
        text = row.get("command")
        if not isinstance(text, str) or not text:
            continue
        if text not in group_of:
            if len(group_of) >= _COMMANDS_READ:
                continue
            words = launched_words(text)
            run = (words, {k: _plain(row.get(k)) for k in PLACEHOLDERS})
            given = _given_template(row.get(TEMPLATE_COLUMN), run)
            group_of[text] = None if words is None else _group_for(groups, run, given)
        group = group_of[text]
        if group is not None:
            group["rows"] += 1
            group["last"] = at
            group["configs"].add(_run_key(row))
    _join_given(groups)
    groups.sort(key=lambda g: (g["rows"], g["last"]), reverse=True)
    found: dict[str, set] = {}
    for group in groups:
        line = group["given"] or _template(group["runs"])
        if line is not None:
            found.setdefault(line, set()).update(group["configs"])
    return tuple((line, tuple(sorted(configs))) for line, configs in found.items())


#: What says which configuration a row ran, in the order :func:`command_runs` keeps it.
RUN_KEYS = ("nodes", "ranks_per_node", "threads", "device", "precision", "size", "ok")


def _run_key(row: dict) -> tuple:
    """``row``'s :data:`RUN_KEYS` (numbers as int, -1 unknown; ``ok``: 1 when it ran ok)."""
    def number(key: str) -> int:
        try:
            return int(float(row.get(key)))
        except (TypeError, ValueError):
            return -1
    return (number("nodes"), number("ranks_per_node"), number("threads"),
            str(row.get("device") or ""), str(row.get("precision") or ""), number("size"),
            int(str(row.get("status") or "ok") == "ok"))


def command_for(lines: tuple[tuple[str, tuple[tuple, ...]], ...], pick: dict,
                size: float) -> tuple[str, str]:
    """(the command line of ``lines`` (:func:`command_runs`) that the picked configuration
    ``pick`` (``nodes``, ``ranks_per_node``, ``threads``, ``device``, ``precision``) ran with,
    at the measured size nearest ``size``; how it was chosen, in words).

    Where ``pick`` was never measured, the line of the nearest measured configuration of the
    same rank count (its threads, device, precision, nodes, then size); where no run had that
    many ranks, the line most rows ran (the first). An ok run counts before a failed one.
    Before, a script always ran the line most rows ran: ``icoFoam -parallel``, swept at 2
    ranks, at the 1 rank picked ("attempt to run parallel on 1 processor", s30 tester O3)."""
    want = (int(pick["nodes"]), int(pick["ranks_per_node"]), int(pick["threads"]),
            str(pick["device"]), str(pick["precision"]))
    ranks = want[0] * want[1]
    best, key_of_best = None, None
    for order, (line, configs) in enumerate(lines):
        for nodes, per_node, threads, device, precision, at, ok in configs:
            if nodes * per_node != ranks:
                continue
            key = ((nodes, per_node, threads, device, precision) != want, 1 - ok,
                   abs(threads - want[2]), device != want[3], precision != want[4],
                   nodes != want[0], abs(at - size), order)
            if key_of_best is None or key < key_of_best:
                best, key_of_best = line, key
    if best is None:
        return (lines[0][0] if lines else ""), "no run had that many ranks: the line most runs ran"
    how = "the line this configuration ran" if not key_of_best[0] else \
        "the line the nearest measured configuration of as many ranks ran"
    return best, how


def _given_template(template, run: tuple) -> str | None:
    """``template`` (a row's :data:`TEMPLATE_COLUMN`) written as :func:`_template` writes a
    line, when it fills to ``run``'s words with ``run``'s placeholder values; else None (no
    template, or one of another sweep: a merged file's rows)."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.program import program_tokens

    words, values = run
    if not isinstance(template, str) or not template or words is None:
        return None
    try:
        filled = program_tokens(template, {k: v for k, v in values.items() if v})
        tokens = program_tokens(template)
    except ConfigError:
        return None
    return _joined(tokens) if filled == words else None


def _join_given(groups: list[dict]) -> None:
    """Move each group of rows without a template whose every line a sweep's template fills
    to into that template's group (rows of an older file, or of a bundle, beside new ones)."""
    given = [g for g in groups if g["given"]]
    for group in [g for g in groups if not g["given"]]:
        home = next((g for g in given if all(_given_template(g["given"], run)
                                             for run in group["runs"])), None)
        if home is not None:
            home["runs"] += group["runs"]
            home["rows"] += group["rows"]
            home["last"] = max(home["last"], group["last"])
            home["configs"] |= group["configs"]
            groups.remove(group)


def _group_for(groups: list[dict], run: tuple, given: str | None = None) -> dict:
    """The group of ``groups`` of the template ``given`` (the sweep's, when it fills to
    ``run``), else one whose lines ``run`` differs from only by placeholders (it is added
    there), else a new group of its own."""
    for group in groups:
        if group["given"] == given and (given or _template([*group["runs"], run]) is not None):
            group["runs"].append(run)
            return group
    groups.append({"runs": [run], "rows": 0, "last": -1, "given": given, "configs": set()})
    return groups[-1]


def _template(runs: list[tuple[list[str], dict]]) -> str | None:
    """One command line of ``runs`` ((words, placeholder values) of each distinct line), the
    placeholders whose values varied put back; None when the lines differ elsewhere."""
    from hpcds1mpi.launch.program import PLACEHOLDERS

    if not runs or len({len(words) for words, _ in runs}) != 1:
        return None
    out = []
    for k in range(len(runs[0][0])):
        texts = [words[k] for words, _ in runs]
        token = texts[0] if len(set(texts)) == 1 else None
        for name in PLACEHOLDERS if token is None else ():
            values = [values[name] for _, values in runs]
            if len(set(values)) > 1 and (token := _placed(texts, values, name)) is not None:
                break
        if token is None:
            return None  # a word that varies with nothing the sweep filled in
        out.append(token)
    sizes = {values["size"] for _, values in runs}
    if len(sizes) == 1 and not any("{size}" in t for t in out):
        hits = [k for k, t in enumerate(out) if t == next(iter(sizes))]
        if len(hits) == 1:
            out[hits[0]] = "{size}"
    return _joined(out)


def _joined(words: list[str]) -> str:
    """``words`` as one command line, quoted where a shell needs it."""
    return " ".join(t if re.fullmatch(r"[\w@%+=:,./{}-]+", t) else shlex.quote(t) for t in words)


def _placed(texts: list[str], values: list[str], name: str) -> str | None:
    """One word with ``{name}`` that each of ``texts`` (one word of each run) is, filled with
    its run's value of ``values``: at the fewest places its value stands (not within a longer
    number), whole word or inside one (``s2.nw`` / ``s4.nw`` -> ``s{size}.nw``); None when
    none fits them all."""
    if not all(values):  # a row without the value: nothing to place
        return None
    first, value = texts[0], values[0]
    spots = [m.start() for m in re.finditer(rf"(?<![0-9]){re.escape(value)}(?![0-9])", first)]
    for count in range(1, min(len(spots), _MOST_SPOTS) + 1):
        for chosen in itertools.combinations(spots[:_MOST_SPOTS], count):
            cuts = [0, *(at for start in chosen for at in (start, start + len(value))), None]
            parts = [first[a:b] for a, b in zip(cuts[::2], cuts[1::2])]
            if all(v.join(parts) == t for t, v in zip(texts, values)):
                return ("{" + name + "}").join(parts)
    return None


def launched_words(command: str) -> list[str] | None:
    """[*wrapper, program, *args] of one recorded launch command line (``mpiexec -n 2 ./app
    64``), read as a script's launch line is, its exec-wrapper prefix kept (``env N=64``: s30
    tester K1, the recorded command had lost it and its size); None when it launches nothing
    readable."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.exec_wrappers import prefix_before
    from hpcds1mpi.launch.script_reading import read_script
    from hpcds1mpi.launch.script_placeholders import split_command

    try:
        launches = read_script(command + "\n").launches
    except ConfigError:
        return None
    if not launches or launches[0].program is None:
        return None
    wrapper = prefix_before(split_command(command[:launches[0].spans[0][0]]))
    return [*wrapper, launches[0].program, *launches[0].args]


def _plain(value) -> str:
    """A row's value as the program rule writes it into a command (``64``, not ``64.0``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


__all__ = ["RUN_KEYS", "command_for", "command_of", "command_runs", "commands_of",
           "launched_words"]
