"""The words of a batch script: shell splitting with offsets, times, GPU counts, and the
option rules of ``sbatch`` / ``srun`` and the MPI launchers (``$`` expansion:
:mod:`hpcds1mpi.launch.script_expansion`).

:mod:`hpcds1mpi.launch.script_reading` reads a whole script with these; every option keeps the
offsets of its value in the text, so :mod:`hpcds1mpi.launch.script_rewrite` can replace the
value and nothing else.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from hpcds1mpi.launch.shell_words import Word, comment_start, words  # noqa: F401 - read here

# Option tables: spelled -> (canonical name, number of values). getopt_long's optional
# arguments (--exclusive[=x]) take a value only after '=': listed with 0.
_SLURM_LONG = {
    "nodes": 1, "ntasks": 1, "ntasks-per-node": 1, "cpus-per-task": 1, "gpus": 1,
    "gpus-per-node": 1, "gpus-per-task": 1, "gres": 1, "time": 1, "partition": 1, "account": 1,
    "job-name": 1, "qos": 1, "constraint": 1, "output": 1, "error": 1, "input": 1,
    "distribution": 1, "nodelist": 1, "exclude": 1, "chdir": 1, "dependency": 1, "array": 1,
    "mem": 1, "mem-per-cpu": 1, "mem-per-gpu": 1, "cpu-bind": 1, "cpu_bind": 1, "gpu-bind": 1,
    "mem-bind": 1, "hint": 1, "export": 1, "mpi": 1, "mail-type": 1, "mail-user": 1,
    "threads-per-core": 1, "ntasks-per-core": 1, "ntasks-per-socket": 1, "ntasks-per-gpu": 1,
    "cpus-per-gpu": 1, "reservation": 1, "licenses": 1, "signal": 1, "switches": 1,
    "time-min": 1, "begin": 1, "comment": 1, "wckey": 1, "network": 1, "open-mode": 1,
    "clusters": 1, "tmp": 1, "gpu-freq": 1, "cpu-freq": 1, "core-spec": 1, "extra-node-info": 1,
    # Named so they are read as themselves, not as the longer name they are a prefix of
    # (s29 R5: --extra=tag$1 was taken for --extra-node-info, and refused under that name).
    "extra": 1, "container": 1, "bb": 1, "bbf": 1,
    "exclusive": 0, "kill-on-bad-exit": 0, "overlap": 0, "exact": 0, "label": 0,
    "unbuffered": 0, "requeue": 0, "no-requeue": 0, "contiguous": 0, "overcommit": 0,
    "spread-job": 0, "wait": 0, "hold": 0, "multi-prog": 0, "oversubscribe": 0, "verbose": 0,
    "quiet": 0, "test-only": 0, "get-user-env": 0, "export-file": 1, "parsable": 0,
}
_SLURM_SHORT = {"N": "nodes", "n": "ntasks", "c": "cpus-per-task", "G": "gpus", "t": "time",
                "p": "partition", "A": "account", "J": "job-name", "q": "qos", "C": "constraint",
                "o": "output", "e": "error", "i": "input", "m": "distribution", "w": "nodelist",
                "x": "exclude", "D": "chdir", "d": "dependency", "a": "array", "B":
                "extra-node-info", "S": "core-spec", "K": "kill-on-bad-exit", "l": "label",
                "u": "unbuffered", "O": "overcommit", "H": "hold", "W": "wait", "v": "verbose",
                "Q": "quiet", "s": "oversubscribe"}
# Open MPI's ``-c N`` is ``-np N`` (mpirun(1); s46 review RV2: the rank count was read as
# the program), an option no other launcher read by this table has
_MPI = {"n": ("ntasks", 1), "np": ("ntasks", 1), "c": ("ntasks", 1), "N": ("ntasks-per-node", 1),
        "npernode": ("ntasks-per-node", 1), "ppn": ("ntasks-per-node", 1),
        "perhost": ("ntasks-per-node", 1), "map-by": ("map-by", 1), "bind-to": ("bind-to", 1),
        "d": ("cpus-per-task", 1), "depth": ("cpus-per-task", 1),
        "cpus-per-rank": ("cpus-per-task", 1), "cpus-per-proc": ("cpus-per-task", 1),
        "x": ("env", 1), "env": ("env", -1), "genv": ("env", -1), "mca": ("mca", 2),
        "gmca": ("mca", 2), "H": ("host", 1), "host": ("host", 1), "hosts": ("host", 1),
        "hostfile": ("hostfile", 1), "f": ("hostfile", 1), "machinefile": ("hostfile", 1),
        "rankfile": ("rankfile", 1), "wdir": ("wdir", 1), "cpu-bind": ("cpu-bind", 1),
        "mem-bind": ("mem-bind", 1), "rank-by": ("rank-by", 1), "genvlist": ("genvlist", 1),
        "launcher": ("launcher", 1), "bootstrap": ("bootstrap", 1), "iface": ("iface", 1),
        "prefix": ("prefix", 1),
        # Open MPI 4.1's options that take a value (mpirun(1)), so the value is not read as
        # the program (s43 tester J4: `--npersocket 1 ./hyb` ran "the program '1'")
        "npersocket": ("npersocket", 1), "nperboard": ("npersocket", 1),
        "default-hostfile": ("hostfile", 1), "output-filename": ("output-filename", 1),
        "path": ("path", 1), "tmpdir": ("tmpdir", 1), "timeout": ("timeout", 1),
        "cpu-set": ("cpu-set", 1), "cpu-list": ("cpu-set", 1), "am": ("mca", 1),
        "tune": ("mca", 1), "preload-files": ("preload-files", 1), "report-uri": ("report-uri", 1),
        "stdin": ("stdin", 1)}
_APRUN = {"n": ("ntasks", 1), "N": ("ntasks-per-node", 1), "d": ("cpus-per-task", 1),
          "j": ("cpus-per-core", 1), "cc": ("cpu-bind", 1), "e": ("env", 1)}
_IBRUN = {"n": ("ntasks", 1), "o": ("offset", 1)}
#: Option table of each launcher kind but srun (which reads sbatch's).
TABLES = {"mpi": _MPI, "aprun": _APRUN, "ibrun": _IBRUN}
#: Commands that start MPI ranks, by the option table they follow. OpenCoarrays' ``cafrun``
#: wraps its MPI's mpiexec: ``cafrun -n N prog`` runs ``mpiexec -n N prog`` (cafrun(1):
#: ``cafrun [-s] -np <N> prog [args]``), so it reads as mpirun (s32 tester X3). Left unknown
#: (the honest "no launch line" note): ``jsrun`` (its ``-n`` counts resource sets, not
#: ranks), ``charmrun`` (``+pN``), ``mpirun_rsh`` (``NAME=value`` words before the program).
#: ``prterun`` is Open MPI 5's own launcher (PRRTE), with mpirun's options (s40 tester A9).
LAUNCHERS = {"srun": "slurm", "mpirun": "mpi", "mpiexec": "mpi", "orterun": "mpi",
             "prterun": "mpi", "ibrun": "ibrun", "aprun": "aprun", "cafrun": "mpi"}
#: Wrappers that read their rank count as their first option and hand every later word to
#: the MPI's launcher (``cafrun -n 4 --oversubscribe ./a``; ``cafrun --oversubscribe -n 4``
#: only prints its usage): a launcher option is added after the rank count.
RANKS_FIRST = frozenset({"cafrun"})
#: Distributions name their MPIs' launchers by suffix (Debian: mpirun.mpich, mpiexec.hydra,
#: mpirun.openmpi); each takes the mpirun options.
_SUFFIXED_LAUNCHER = re.compile(r"mpi(run|exec)\.[A-Za-z0-9_+-]+")


def launcher_kind(command: str) -> str | None:
    """The option table (:data:`TABLES` key, or ``slurm``) of the launcher a script line's
    first word runs (a path or a bare name), None when it starts no MPI ranks."""
    name = os.path.basename(command)
    if name in LAUNCHERS:
        return LAUNCHERS[name]
    return "mpi" if _SUFFIXED_LAUNCHER.fullmatch(name) else None
#: Thread variables a script may set (the program rule sets the same ones).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "OMP_PLACES", "OMP_PROC_BIND")
ASSIGN_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
#: The separators that end a ``case`` arm's commands (s46 review RV3: not read as ends, so
#: ``big) export OMP_NUM_THREADS=4 ;;`` was no assignment).
ARM_ENDS = (";;", ";&", ";;&")
#: Words that end a simple command.
SHELL_STOP = {"|", "||", "&&", ";", "&", "|&", *ARM_ENDS}
#: Shell words that open a loop (``done`` closes one): a launch inside runs more than once.
LOOP_WORDS = ("for", "while", "until", "select")
REDIRECT_RE = re.compile(r"^(\d*|&)(>>?|<)(&\d+)?$|^(\d*|&)(>>?|<)\S")


@dataclass
class Option:
    """One option in a directive or launch line.

    Attributes:
        name: the canonical long name (``nodes``, ``ntasks-per-node``, ``select`` ...).
        value: its value as the scheduler sees it (quotes removed); None for a flag.
        line: 1-based line number.
        span: (start, end) of the whole option (with its value) in the script's text.
        value_span: (start, end) of the value's text, None for a flag.
        raw: the value as written (quotes kept), where ``$`` shows it is not a literal.
    """

    name: str
    value: str | None
    line: int
    span: tuple[int, int]
    value_span: tuple[int, int] | None = None
    raw: str = ""


# ---- words: hpcds1mpi.launch.shell_words ---------------------------------------------------


def commands_after(line: list[Word], last: Word) -> tuple[str, ...]:
    """The words of ``line`` from the first command separator after the word ``last`` on
    (``; ./post 9``, ``| tee log``): what the line runs after that command, () for none; a
    ``case`` arm's end (``;;``) runs none of the rest."""
    rest = [w for w in line if w.start >= last.end]
    at = next((k for k, w in enumerate(rest) if w.raw in SHELL_STOP), len(rest))
    return () if rest[at:at + 1] and rest[at].raw in ARM_ENDS else tuple(w.text for w in rest[at:])


#: A number in a directive: ASCII digits only (as the schedulers read them; ``\d`` would take
#: any script's digits, and Python's ``int`` refuses over 4,300 of them with a ValueError), at
#: most 12 of them (more than any count or time a scheduler takes).
DIGITS = "[0-9]{1,12}"


#: A problem size in a script's command line: ASCII digits, fewer than ``int``'s 4,300-digit
#: limit (a size over 2^40 is then refused with where it was read: ``decide/advise.py``).
SIZE_DIGITS = "[0-9]{1,4000}"


def whole(text: str) -> int | None:
    """``text`` as a count if it is :data:`DIGITS`, else None."""
    return int(text) if re.fullmatch(DIGITS, text) else None


def to_int(value: str | None) -> int | None:
    """A positive count, or None (``2-4`` ranges count their minimum)."""
    if value is None:
        return None
    m = re.fullmatch(rf"\s*({DIGITS})(?:-{DIGITS})?\s*", value)
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


def count_range(value: str | None) -> tuple[int, int] | None:
    """(minimum, maximum) of a count written as a range (``--nodes=1-4``), else None."""
    m = re.fullmatch(rf"\s*({DIGITS})-({DIGITS})\s*", value or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def range_note(line: int, name: str, value: str | None) -> str | None:
    """The note a range count gets (its minimum is what is read), or None for a plain count."""
    span = count_range(value)
    if span is None or span[0] == span[1]:
        return None
    return (f"line {line}: {name} {value.strip()} is a range: its minimum {span[0]} is read "
            f"(the scheduler may give up to {span[1]})")


def parse_slurm_time(value: str) -> int | None:
    """Seconds of an sbatch ``--time``: minutes, min:sec, h:m:s, d-, d-h, d-h:m, d-h:m:s, with
    seconds rounded up to the next minute as Slurm does; None for 0 / UNLIMITED / INFINITE
    (no limit) or a malformed value."""
    value = value.strip()
    if value.upper() in ("UNLIMITED", "INFINITE", "0"):
        return None
    m = re.fullmatch(rf"(?:({DIGITS})-)?({DIGITS})(?::({DIGITS}))?(?::({DIGITS}))?", value)
    if not m:  # d- alone is d days to sbatch (s35 tester T8)
        days = re.fullmatch(rf"({DIGITS})-", value)
        return int(days.group(1)) * 86400 or None if days else None
    days, a, b, c = (int(g) if g is not None else None for g in m.groups())
    if days is not None:  # d-h, d-h:m, d-h:m:s
        seconds = days * 86400 + a * 3600 + (b or 0) * 60 + (c or 0)
    elif c is not None:
        seconds = a * 3600 + b * 60 + c
    else:
        seconds = a * 60 + (b or 0)
    return -(-seconds // 60) * 60 or None


def parse_pbs_time(value: str) -> int | None:
    """Seconds of a PBS ``walltime``: ``[[[days:]hours:]minutes:]seconds`` (the days field is
    Torque's: ``1:00:00:00`` is a day, s33 tester P6)."""
    parts = value.strip().split(":")
    if not 1 <= len(parts) <= 4 or not all(re.fullmatch(rf"{DIGITS}(\.{DIGITS})?", p)
                                           for p in parts):
        return None
    seconds = 0.0
    for p, unit in zip(reversed(parts), (1, 60, 3600, 86400)):
        seconds += float(p) * unit
    return int(math.ceil(seconds)) or None


#: GPU items in a ``--gres`` list (``gres/gpu`` as ``--tres-per-*`` spell it). ``shard`` and
#: ``mps`` are shares of a GPU, and every other GRES (``lscratch:200``, ``nvme:1``) no GPU.
GPU_GRES = ("gpu", "gres/gpu")
#: A GRES item's socket binding, ``gpu:2(S:0)``: not part of its count.
GRES_BINDING_RE = re.compile(r"\(.*?\)")


def gpu_items(value: str, option: str) -> list[tuple[int, int | None]]:
    """(index of the item in the comma list, its GPU count) of each GPU item of an option's
    value, count None where it cannot be read. ``--gres`` items are ``name[:type][:count]``
    and only ``gpu`` items count (``lscratch:200,gpu:a100:2``: 2; ``gpu`` or ``gpu:a100``
    alone: 1); ``--gpus`` / ``--gpus-per-node`` / ``--gpus-per-task`` items are
    ``[type:]count`` (``a100:2``, ``2``)."""
    out = []
    for k, item in enumerate(value.split(",")):
        fields = GRES_BINDING_RE.sub("", item).strip().split(":")
        if fields[0] in GPU_GRES:
            fields = fields[1:]
        elif option == "gres":
            continue  # another GRES, never a GPU
        if option == "gres" and len(fields) <= 1 and (not fields or whole(fields[0]) is None):
            out.append((k, 1))  # gpu, gpu:a100: one GPU
            continue
        count = whole(fields[-1]) if 1 <= len(fields) <= 2 else None
        out.append((k, count))
    return out


def gpu_count(value: str, option: str) -> int:
    """GPUs in the value of ``option`` (``gres``, ``gpus``, ``gpus-per-node`` or
    ``gpus-per-task``), as :func:`gpu_items` reads them; an unreadable item counts none."""
    return sum(count or 0 for _, count in gpu_items(value, option))


# ---- options --------------------------------------------------------------------------------


def _long_name(spelled: str, table) -> tuple[str | None, list[str]]:
    """getopt_long's rule: the exact name, else the one name it is a unique prefix of; with
    the names it could mean when it is ambiguous."""
    if spelled in table:
        return spelled, [spelled]
    hits = [name for name in table if name.startswith(spelled)]
    return (hits[0] if len(hits) == 1 else None), hits


def _value_in_next_word(out: list, name: str, tokens, i: int, line: int) -> int:
    """Append option ``name`` of word ``i``: with the next word as its value where it takes
    one (``-N 2``, ``--nodes 2``), else without. Returns the words used beyond word ``i``."""
    _, start, end, _ = tokens[i]
    if _SLURM_LONG[name] and i + 1 < len(tokens):
        nxt = tokens[i + 1]
        out.append(Option(name, nxt[0], line, (start, nxt[2]), (nxt[1], nxt[2]), nxt.raw))
        return 1
    out.append(Option(name, None, line, (start, end)))
    return 0


def slurm_options(tokens, line: int, note) -> list[Option]:
    """sbatch / srun options of a word list; stops at the first word that is not an option."""
    out, i = [], 0
    while i < len(tokens):
        word, start, end, _ = tokens[i]
        if word.startswith("--") and len(word) > 2:
            spelled, eq, value = word[2:].partition("=")
            name, hits = _long_name(spelled, _SLURM_LONG)
            if name is None:
                note(f"line {line}: sbatch refuses the ambiguous option --{spelled} (--"
                     + ", --".join(hits) + ")" if hits else
                     f"line {line}: option --{spelled} is not one hpcds1mpi reads; skipped")
                i += 1
                continue
            if eq:
                vstart = start + len(word) - len(value) if word == tokens[i].raw else None
                out.append(Option(name, value, line, (start, end),
                                  (vstart, end) if vstart is not None else None, value))
            else:
                i += _value_in_next_word(out, name, tokens, i, line)
        elif word.startswith("-") and len(word) > 1 and word[1] in _SLURM_SHORT:
            name = _SLURM_SHORT[word[1]]
            if _SLURM_LONG[name] and len(word) > 2:  # -N2
                out.append(Option(name, word[2:], line, (start, end), (start + 2, end),
                                  word[2:]))
            else:
                i += _value_in_next_word(out, name, tokens, i, line)
        else:
            return out + [Option("", word, line, (start, end))]  # the first operand
        i += 1
    return out


def mpi_options(tokens, line: int, table) -> list[Option]:
    """mpirun / mpiexec / aprun / ibrun options (one or two dashes); stops at the program."""
    out, i = [], 0
    while i < len(tokens):
        word, start, end, _ = tokens[i]
        if not word.startswith("-") or word == "-":
            return out + [Option("", word, line, (start, end))]
        spelled, eq, value = word.lstrip("-").partition("=")
        name, count = table.get(spelled, (spelled, 0))
        if eq:
            out.append(Option(name, value, line, (start, end), (end - len(value), end), value))
        elif count == -1:  # -env NAME=value (PALS) or -env NAME value (hydra)
            count = 1 if i + 1 < len(tokens) and "=" in tokens[i + 1][0] else 2
        if not eq and count and i + count < len(tokens):
            vals = tokens[i + 1:i + 1 + count]
            value = "=".join(v[0] for v in vals)
            out.append(Option(name, value, line, (start, vals[-1][2]),
                              (vals[-1][1], vals[-1][2]), vals[-1].raw))
            i += count
        elif not eq:
            out.append(Option(name, None, line, (start, end)))
        i += 1
    return out


def pbs_options(tokens: list[Word], number: int) -> list[Option]:
    """qsub options: ``-l a=b,c=d`` (or ``-la=b``) split into resources named ``l:a``."""
    out, i = [], 0
    while i < len(tokens):
        word = tokens[i]
        if not word.text.startswith("-") or len(word.text) < 2:
            out.append(Option("", word.text, number, (word.start, word.end)))
            i += 1
            continue
        flag = word.text[1]
        value, vstart = (word.text[2:], word.start + 2) if len(word.text) > 2 else (None, 0)
        if value is None and i + 1 < len(tokens) and not tokens[i + 1].text.startswith("-"):
            i += 1
            value, vstart = tokens[i].text, tokens[i].start
        if flag == "l" and value:
            pos = vstart
            for item in value.split(","):
                key, _, val = item.partition("=")
                out.append(Option(f"l:{key}", val, number, (pos, pos + len(item)),
                                  (pos + len(key) + 1, pos + len(item)), val))
                pos += len(item) + 1
        else:
            span = (vstart, vstart + len(value)) if value is not None else None
            out.append(Option(flag, value, number, (word.start, tokens[i].end), span,
                              value or ""))
        i += 1
    return out
