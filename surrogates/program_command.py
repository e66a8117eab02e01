"""A program's command line as its recorded rows ran it, the launcher left out.

Each row of a program sweep records its launch (``mpiexec -n 2 ./app 64 40``);
:func:`commands_of` reads those lines back as a script's launch line is read and puts the
placeholders whose values varied back (``./app {size} 40``): what ``advise`` matches a user's
script by. Rows of one label that ran different command lines (``learn`` on a sweep with an
option added: ``-ntomp {threads}``) give one command line each, the one most rows ran first
(:func:`command_of`). :func:`launched_words` reads one recorded line. The levels that keep
the result: :mod:`hpcds1mpi.surrogates.levels`.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


#: The most distinct recorded command lines read per program (every configuration of a sweep
#: differs only in its launcher options and placeholders).
_COMMANDS_READ = 200


def command_of(rows: "pd.DataFrame") -> str:
    """The command line most of a program's rows ran (the first of :func:`commands_of`); ""
    when none can be read."""
    found = commands_of(rows)
    return found[0] if found else ""


def commands_of(rows: "pd.DataFrame") -> tuple[str, ...]:
    """A program's command lines from its rows' ``command`` (launcher and program, as
    launched): the launcher dropped (read as a script's launch line is), every word whose value
    follows the row's ``size`` (or another placeholder that varied) written back as ``{size}``
    (...); measured at one size, the one word equal to it.

    Lines that differ only where a placeholder's value did are one command line; any other
    difference (a word more, another ``-nsteps``) makes another. Returns one per command line,
    the one most rows ran first (a tie: the one run last), then the others by rows; () when no
    line can be read.

    Before, rows of two command lines gave "" (no command at all), and ``advise`` no longer
    knew the program or where its size is."""
    from hpcds1mpi.launch.program import PLACEHOLDERS

    if "command" not in rows.columns:
        return ()
    if "kind" in rows.columns:
        rows = rows[rows["kind"].astype(str) == "external"]
    groups: list[dict] = []  # {"runs": [(words, values)], "rows": n, "last": row position}
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
            group_of[text] = None if words is None else _group_for(groups, run)
        group = group_of[text]
        if group is not None:
            group["rows"] += 1
            group["last"] = at
    groups.sort(key=lambda g: (g["rows"], g["last"]), reverse=True)
    return tuple(t for g in groups if (t := _template(g["runs"])) is not None)


def _group_for(groups: list[dict], run: tuple) -> dict:
    """The group of ``groups`` whose lines ``run`` differs from only by placeholders (it is
    added there), else a new group of its own."""
    for group in groups:
        if _template([*group["runs"], run]) is not None:
            group["runs"].append(run)
            return group
    groups.append({"runs": [run], "rows": 0, "last": -1})
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
            if len(set(values)) > 1:
                put = {re.sub(rf"(?<![0-9A-Za-z]){re.escape(v)}(?![0-9A-Za-z])",
                              "{" + name + "}", t) for t, v in zip(texts, values)}
                if len(put) == 1 and "{" + name + "}" in (token := put.pop()):
                    break
                token = None
        if token is None:
            return None  # a word that varies with nothing the sweep filled in
        out.append(token)
    sizes = {values["size"] for _, values in runs}
    if len(sizes) == 1 and not any("{size}" in t for t in out):
        hits = [k for k, t in enumerate(out) if t == next(iter(sizes))]
        if len(hits) == 1:
            out[hits[0]] = "{size}"
    return " ".join(t if re.fullmatch(r"[\w@%+=:,./{}-]+", t) else shlex.quote(t) for t in out)


def launched_words(command: str) -> list[str] | None:
    """[program, *args] of one recorded launch command line (``mpiexec -n 2 ./app 64``), read
    as a script's launch line is; None when it launches nothing readable."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.script_reading import read_script

    try:
        launches = read_script(command + "\n").launches
    except ConfigError:
        return None
    if not launches or launches[0].program is None:
        return None
    return [launches[0].program, *launches[0].args]


def _plain(value) -> str:
    """A row's value as the program rule writes it into a command (``64``, not ``64.0``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


__all__ = ["command_of", "commands_of", "launched_words"]
