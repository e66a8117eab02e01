"""Work a job script does besides its launch: the job's time limit must cover it too.

A launch that runs its program under a profiler or debugger (``srun valgrind ./app``) is
such a case as well: the model measured the program without the tool (:func:`slowing_tool`).

A recommended walltime covers one launch of the measured program. A script that runs a program
after it — on a later line (``python3 plot.py``, ``./postprocess``, ``gnuplot run.gp``) or after
``;`` / ``&&`` / ``|`` on the launch's own line — needs that program's time as well, which the
model never measured, so ``advise`` keeps the script's own time limit and says so in one line
naming the line and the command (:func:`work_after_note`; s42: only a second launch line, or
another command than a program's measured one, kept it).

What costs next to nothing is no work: comments, assignments, control words, set-up and output
handling — :data:`~hpcds1mpi.launch.wrapper_program.SETUP_COMMANDS` (``echo``, ``cd``,
``module``, ``export``, ``cp``, ``mv``, ``wait``, ``exit``, ...) and :data:`CHEAP` (``tar``,
``gzip``, ``grep``, ``seff``, ...). ``sleep``, ``source`` / ``.`` and ``eval`` are work: they
take time, or run commands not read here; a ``sleep`` in a loop polling a background job
(``while kill -0 $PID``) waits for it, as ``wait`` does. Any other program is work, a name not
known here included: a limit kept that need not be costs queue time, one cut that should not be
kills the job. Before the launch the same, but set-up (``source env.sh``, ``eval "$(conda
shell.bash hook)"``) is none: a pre-processing program (``python3 make_mesh.py``) is work
(:func:`work_before`; s42 review R3). A later launch line is the launches-more-than-once note's
(:mod:`~hpcds1mpi.launch.script_repeats`); here-document bodies are no commands; a command
substitution's commands are read as the line's own (``RESULT=$(python3 summarize.py)``); an
exec wrapper that runs no program (``env``, ``numactl --hardware``) prints and exits; a command
in the background (``./monitor.sh &``) is work only where a later ``wait`` waits for it: a
bare one, or one (or a poll) naming its PID (``PID=$!``, ``$!``) or program. A launch in a
function runs at the first call of it; a later call is work. Any other function's body runs
where it is called, as its last definition before the call has it, judged by the rules of
that place: its work is said at the call's line (:mod:`~hpcds1mpi.decide.script_functions`).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from hpcds1mpi.decide.script_functions import (body_lines, called_work, definitions, idle_calls,
                                                launch_call)
from hpcds1mpi.decide.shell_lines import line_commands, lines_after, simple_commands

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Commands after a launch that cost next to nothing, beside the set-up commands: archiving
#: and copying results, reading logs, asking the scheduler about the job or chaining the next
#: one (Slurm's and PBS's: s42 tester F6, `qsub -W depend=afterok:...` had kept the limit),
#: what a ``$(...)`` commonly asks (``$(seq 1 4)``, ``$(id -u)``), and recording the job's
#: software and machine (``git rev-parse HEAD``, ``ldd ./app``, ``lfs setstripe``: s42 F4),
#: and asking whether a process still runs (``ps -p $PID``, ``pgrep``).
CHEAP = frozenset({"tar", "gzip", "gunzip", "bzip2", "xz", "zstd", "zip", "unzip", "rsync",
                   "du", "df", "wc", "head", "tail", "grep", "sort", "uniq", "cut", "tr",
                   "sed", "awk", "seff", "sstat", "mail", "basename", "dirname", "realpath",
                   "readlink", "printenv", "stat", "tee", "sbatch", "scancel", "squeue",
                   "sacct", "scontrol", "jobstats", "kill", "deactivate", "nproc", "free",
                   "uname", "date", "hostname", "ls", "cat", "rm", "mkdir", "touch", "ln",
                   "chmod", "true", "false", "sync", "qsub", "qstat", "qdel", "qalter",
                   "qhold", "qrls", "qsig", "pbsnodes", "tracejob", "seq", "expr", "bc", "id",
                   "whoami", "mktemp", "git", "ldd", "lfs", "lstopo", "lstopo-no-graphics",
                   "hwloc-ls", "numastat", "getconf", "lsb_release", "ulimit", "ps",
                   "pgrep", "pidof"})
#: Set-up commands that take time or run commands not read here: work after a launch.
TAKE_TIME = frozenset({"sleep", "source", ".", "eval"})
#: Tools of :data:`~hpcds1mpi.launch.tool_wrappers.TOOLS` that pin or containerise the
#: program, at no cost to its run time.
NO_SLOWDOWN = frozenset({"likwid-pin", "shifter"})
#: Words before a command that open or continue a structure (the command follows them).
_CONTROL = frozenset({"if", "then", "else", "elif", "fi", "while", "until", "do", "done",
                      "esac", "{", "}", "(", ")", "!", "exec", "command", "builtin"})
#: Words whose simple command names no program (``for i in 1 2``: ``i`` is none).
_NO_PROGRAM = frozenset({"for", "select", "case", "function"})
#: A loop condition that asks whether a process still runs: ``kill -0``, ``ps``, ``pgrep``,
#: ``pidof``, its ``/proc`` entry (``test -d``, ``[ -e ]``, ``[[ -d ]]``).
_PROBE_RE = re.compile(r"\bkill\s+(-0|-s\s+0)\b|\bps\s|\bpgrep\s|\bpidof\s|/proc/")
#: A variable read in a command (``$PID``, ``${PID}``; ``$!``: the last background PID).
_VARIABLE_RE = re.compile(r"\$\{?([A-Za-z_]\w*|!)\}?")
#: An assignment of the last background command's PID (``PID=$!``).
_PID_SET_RE = re.compile(r"(?:^|[\s;&])([A-Za-z_]\w*)=\"?\$!")
#: The most characters of a command shown.
_SHOWN = 60


def work_after(script: "JobScript", launch: "Launch") -> tuple[int, str] | None:
    """(line number, the command as written, cut to 60 characters) of the first program that
    ``script`` runs after ``launch`` and that is work (see the module's text), an exit trap's
    set before the launch last; None where it runs none."""
    waits, defined = _wait_lines(script.text), definitions(script, _body_work)
    idle = idle_calls(script, defined)
    found = first_work([list(launch.then)], waited=_waited(waits, script.text, launch.line),
                       launching=idle.get(launch.line, frozenset()))
    if found:
        return launch.line, found
    launch_lines = {n for x in script.launches for n in range(x.line, x.last_line + 1)}
    polls, bodies = _polling_lines(script.text), body_lines(script, defined)
    if called := launch_call(script, defined, launch):  # runs at its call, not its definition
        bodies = bodies | set(range(called[0].last + 1, called[1]))
    for number, text in lines_after(script.text, launch.line, launch.last_line):
        if number in launch_lines or number in bodies:
            continue
        found = first_work(line_commands(text), waited=_waited(waits, script.text, number),
                           launching=idle.get(number, frozenset()),
                           polling=polls.get(number, 0))
        if found:
            return number, _said_with_body(script, found, number, defined)
    return _exit_trap_work(script.text, launch.line)


def work_before(script: "JobScript", launch: "Launch") -> tuple[int, str] | None:
    """(line number, the command) of the first program that ``script`` runs before ``launch``
    and that is work: a pre-processing step (``python3 make_mesh.py``, ``./preprocess &&
    srun ...``) takes job time too (s42 review R3: the limit was cut to the launch's).
    Set-up before a launch (``source env.sh``, ``eval "$(conda shell.bash hook)"``) is none;
    None where it runs no such program."""
    launch_lines = {n for x in script.launches for n in range(x.line, x.last_line + 1)}
    waits = _wait_lines(script.text)
    defined = definitions(script, lambda line: _body_work(line, before=True))
    idle = idle_calls(script, defined)
    polls, bodies = _polling_lines(script.text), body_lines(script, defined)
    called = launch_call(script, defined, launch)  # runs at its call, not its definition
    if called:
        bodies = bodies | set(range(launch.last_line + 1, called[0].last + 1))
    for number, text in lines_after(script.text, 1, 0):
        if number >= (called[1] if called else launch.line):
            break
        if number in launch_lines or number in bodies:
            continue
        found = first_work(line_commands(text), before=True,
                           waited=_waited(waits, script.text, number),
                           launching=idle.get(number, frozenset()),
                           polling=polls.get(number, 0))
        if found:
            return number, _said_with_body(script, found, number, defined)
    return None


def work_after_note(script: "JobScript", launch: "Launch | None") -> str | None:
    """The one line for a script that runs work before or after ``launch``, or runs its
    program under a profiler or debugger (:func:`slowing_tool`): its time limit is kept;
    None where it does neither."""
    if launch is not None and (tool := slowing_tool(launch)):
        return (f"line {launch.line} runs the program under `{tool}`, which slows it: the "
                f"recommended walltime is the program's alone, measured without it, so "
                f"--rewrite keeps {_kept(script)}; check it covers the run under {tool}")
    found = work_after(script, launch) if launch is not None else None
    before = work_before(script, launch) if launch is not None and found is None else None
    if before is not None:
        number, command = before
        called = launch_call(script, definitions(script), launch)
        at = f" (run by `{called[0].name}` on line {called[1]})" if called else ""
        return (f"line {number} runs `{command}` before the launch on line {launch.line}{at}: "
                f"the recommended walltime covers the launch alone, so --rewrite keeps "
                f"{_kept(script)}; check it covers both")
    if found is None:
        return None
    number, command = found
    where = "its launch" if number == launch.line else f"the launch on line {launch.line}"
    called = launch_call(script, definitions(script), launch)
    if called and number == called[1]:  # a function that runs the launch and more (s44 N4)
        where += " (which that call runs)"
    runs = "runs" if number >= launch.line else "sets an exit trap that runs"  # before it
    return (f"line {number} {runs} `{command}` after {where}: the recommended walltime covers "
            f"the launch alone, so --rewrite keeps {_kept(script)}; check it covers both")


def slowing_tool(launch: "Launch") -> str:
    """The profiler or debugger ``launch`` runs its program under (``srun valgrind
    --tool=memcheck ./app``: memcheck runs it 10-50 times slower, ``gdb --args`` waits on its
    input), past exec wrappers; "" for none, or for a binder or container runner that costs
    no time (:data:`NO_SLOWDOWN`). The model measured the program without it (s42 tester F9:
    the bare program's walltime had been proposed)."""
    from hpcds1mpi.launch.exec_wrappers import program_index
    from hpcds1mpi.launch.tool_wrappers import is_tool

    words = [launch.program_raw or launch.program or "", *launch.args]
    word = os.path.basename(words[program_index(words)]) if words[0] else ""
    return word if is_tool(word) and word not in NO_SLOWDOWN else ""


def _kept(script: "JobScript") -> str:
    """The time limit the rewrite keeps, as the note says it."""
    from hpcds1mpi.launch.directives import format_time_limit

    limit = "--time" if script.scheduler == "slurm" else "walltime"
    return f"its {limit} ({format_time_limit(script.time_s, script.scheduler)})" \
        if script.time_s else "its time limit as it is (none set: the partition's default)"


def _body_work(line: str, before: bool = False) -> str:
    """The work a line of a function's body runs (:func:`first_work`), by the rules of
    commands written where the function is called (``before`` the launch: set-up such as
    ``source env.sh`` is none; s43 review R7)."""
    commands = line_commands(line)  # a body from its `{` or `(` on (:func:`definitions`)
    if commands and commands[0][:1] == ["("] and commands[-1][-1:] == [")"]:
        commands[-1] = commands[-1][:-1]  # a one-line subshell body's closing `)`
    return first_work(commands, before=before)


def _said_with_body(script: "JobScript", found: str, number: int, defined: list) -> str:
    """``found`` (a command that is work), with the work of the function it calls, where it
    calls one: ``finish (runs python3 plot.py)``; past a call of the launch's function
    in its body (``outer() { inner; python3 post.py; }``: s44 tester N4)."""
    name = found.split()[0] if found else ""
    runs = [d for d in defined if d.name == name and d.last < number]
    if not runs or runs[-1].launches or not isinstance(
            works := called_work(script, defined, name, number, _body_work), str):
        return found
    said = f"{found} (runs {works})"
    return said if len(said) <= 2 * _SHOWN else f"{found} (runs {works[:_SHOWN]}...)"


def first_work(commands: list[list[str]], before: bool = False, waited: bool = False,
               launching: frozenset[str] = frozenset(), polling: int = 0) -> str:
    """The first simple command among ``commands`` (each a line's words, separators among
    them) that is work (``before`` the launch: set-up such as ``source`` is none), as
    written on one line; "". An exit trap's command runs at the end, after the launch
    (:func:`_exit_trap`): work there, none before it. A command run in the background
    (``./monitor.sh &``) holds no job time unless a ``wait`` waits for it: later on its
    line, or on a later line (``waited``; s42 tester F4). A call of a function in
    ``launching`` is a launch. In a loop polling a background job (``polling`` of them open
    at the line's start, :func:`_poll_depths`), ``sleep`` waits for it, as ``wait`` would:
    no work."""
    simple = list(simple_commands(commands))
    polled = _poll_depths(simple, polling)
    for k, (words, separator) in enumerate(simple):
        if separator == "&" and not (waited or any(_is_wait(w) for w, _ in simple[k + 1:])):
            continue
        handler = _exit_trap(words)
        at = None if handler is not None else _work_at(words, before, launching,
                                                          polled[k] > 0)
        if handler and not before and (found := first_work(line_commands(handler))):
            return found
        if at is not None:
            shown = " ".join(words[at:])
            return shown if len(shown) <= _SHOWN else shown[:_SHOWN - 3] + "..."
    return ""


def _is_wait(words: list[str]) -> bool:
    """Whether a simple command's ``words`` wait for background jobs."""
    return next((w for w in words if w not in _CONTROL), None) == "wait"


def _wait_lines(text: str) -> dict[int, frozenset[str] | None]:
    """The shell lines of ``text`` that run a ``wait`` or open a loop polling a process until
    it ends, each with what it waits for: the variables it reads (``wait $PID``, ``while
    kill -0 $PID``) and the programs it asks for (``pgrep -f ./app``); None for every
    background job (a bare ``wait``; s43 review R15: any wait had waited for all)."""
    found: dict[int, frozenset[str] | None] = {}
    for number, line in lines_after(text, 1, 0):
        for words, _ in simple_commands(line_commands(line)):
            targets = _poll_targets(words) or (_wait_targets(words) if _is_wait(words) else ())
            if targets != ():
                old = found.get(number, frozenset())
                found[number] = None if targets is None or old is None else old | targets
    return found


def _wait_targets(words: list[str]) -> frozenset[str] | None:
    """The variables a ``wait``'s ``words`` name (``wait $PID``); None for a bare ``wait``."""
    named = frozenset(m.group(1) for w in words for m in _VARIABLE_RE.finditer(w))
    return named or None


def _poll_targets(words: list[str]) -> frozenset[str]:
    """What a loop head's ``words`` poll until it ends (s43 review R8): the variables and
    program names its condition asks a process probe about (``while kill -0 $PID``, ``until
    ! ps -p $PID``, ``while test -d /proc/${PID}``, ``while pgrep -f ./app``); empty for no
    such loop (``while ! [ -f done.flag ]`` waits for a file, not a process)."""
    if next((w for w in words if w != "!"), "") not in ("while", "until"):
        return frozenset()
    condition = " ".join(words)
    if not _PROBE_RE.search(condition + " "):
        return frozenset()
    named = {m.group(1) for m in _VARIABLE_RE.finditer(condition)}
    for k, word in enumerate(words):
        if word in ("pgrep", "pidof"):
            named |= {os.path.basename(w) for w in words[k + 1:]
                      if not w.startswith("-") and w not in ("]", "]]", ")")}
    return frozenset(named)


def _waited(waits: dict[int, frozenset[str] | None], text: str, number: int) -> bool:
    """Whether a later wait or poll (:func:`_wait_lines`) waits for a command put in the
    background on line ``number``: a bare ``wait`` does; one naming a variable, where it
    holds that command's PID (``PID=$!`` after it) or names its program."""
    keys = _background_keys(text, number)
    return any(n > number and (targets is None or targets & keys
                               or ("!" in targets and _last_background(text, n) == number))
               for n, targets in waits.items())


def _last_background(text: str, before: int) -> int:
    """The line of the last command put in the background before line ``before`` (whose
    PID ``$!`` holds there); 0 for none."""
    return max((number for number, line in lines_after(text, 1, 0) if number < before
                and any(sep == "&" for _, sep in simple_commands(line_commands(line)))),
               default=0)


def _background_keys(text: str, number: int) -> frozenset[str]:
    """What names the commands put in the background on line ``number``: their programs'
    names, and the variable set to the last one's PID (``PID=$!``) before another is."""
    keys: set[str] = set()
    for at, line in lines_after(text, number - 1, number - 1):
        simple = list(simple_commands(line_commands(line)))
        if at == number:
            keys |= {os.path.basename(w) for words, sep in simple if sep == "&"
                     for w in words[:1]}
            keys |= {os.path.basename(w) for words, sep in simple if sep == "&"
                     for w in words[1:] if not w.startswith("-")}
        if at > number and any(sep == "&" for _, sep in simple):
            break  # `$!` is another command's from here on
        if pid_set := set(_PID_SET_RE.findall(line)):
            keys |= pid_set
            break
    return frozenset(keys)


def _polling_lines(text: str) -> dict[int, int]:
    """The lines of the loops of ``text`` that poll a background job until it ends (``while
    kill -0 $PID; do sleep 60; done``, ``until ! ps -p $PID``, ``while [ -d /proc/$PID ]``),
    from the loop's head to its ``done``, each with the loops open at its start
    (:func:`_poll_depths`): their ``sleep`` waits for the job (s42: it had been work, and
    kept the limit of a launch run in the background and polled)."""
    lines, depth = {}, 0
    for number, line in lines_after(text, 1, 0):
        depths = _poll_depths(list(simple_commands(line_commands(line))), depth)
        if depth or any(depths):
            lines[number] = depth
        depth = depths[-1] if depths else depth
    return lines


def _poll_depths(simple: list, depth: int) -> list[int]:
    """How many loops are open, a polling one outermost (0: none), as each of the simple
    commands ``simple`` (:func:`simple_commands`) runs, from ``depth`` before them, and
    after the last (one more item): only a ``sleep`` inside a polling loop's body waits for
    its job, never one after its ``done`` on the same line (s43 tester J7: ``done; sleep
    3600`` had been read as the poll's wait)."""
    found = []
    for words, _ in simple:
        head = next((w for w in words if w not in ("do", "then", "else", "!")), "")
        if not depth and _poll_targets(words):
            depth = 1
        elif depth and head in ("while", "until", "for", "select"):
            depth += 1
        found.append(depth)
        depth = max(depth - ("done" in words), 0) if depth else 0
    return found + [depth]


def _exit_trap(words: list[str]) -> str | None:
    """The command a ``trap CMD EXIT`` (or ``0``) sets to run when the script ends (s42
    tester F2: ``trap 'python3 post.py' EXIT`` post-processes after the launch); "" for a
    trap on signals alone or one reset (``trap - EXIT``); None where ``words`` set none."""
    k = next((k for k, w in enumerate(words) if w not in _CONTROL), len(words))
    if words[k:k + 1] != ["trap"] or len(words) < k + 3 or words[k + 1].startswith("-"):
        return None
    exits = {"EXIT", "SIGEXIT", "0"}
    return words[k + 1] if any(w.upper() in exits for w in words[k + 2:]) else ""


def _exit_trap_work(text: str, before_line: int) -> tuple[int, str] | None:
    """(line number, command) of the first work an exit trap set before line
    ``before_line`` runs at the script's end; None where none."""
    for number, line in lines_after(text, 1, 0):
        if number >= before_line:
            return None
        for words, _ in simple_commands(line_commands(line)):
            if (handler := _exit_trap(words)) and (found := first_work(line_commands(handler))):
                return number, found
    return None


def _work_at(words: list[str], before: bool = False,
             launching: frozenset[str] = frozenset(), polling: bool = False) -> int | None:
    """Where the command that a simple command's ``words`` run starts (past control words and
    assignments), if it runs a program that takes time; None where it does not."""
    from hpcds1mpi.launch.exec_wrappers import ASSIGNMENT, is_wrapper, program_index
    from hpcds1mpi.launch.informational_launches import starts_no_ranks
    from hpcds1mpi.launch.wrapper_program import SETUP_COMMANDS

    k = 0
    while k < len(words) and (words[k] in _CONTROL or ASSIGNMENT.match(words[k])
                              or words[k].endswith(")")):  # a case pattern, `f()`
        k += 1
    if k == len(words) or words[k] in _NO_PROGRAM:
        return None
    program = words[k:][program_index(words[k:]):]  # past `env X=1`, `nice -n 5`, `time -p`
    name = os.path.basename(program[0]) if program else ""
    if is_wrapper(name) and all(w.startswith("-") for w in program[1:]):
        return None  # runs no program: prints and exits (`env`, `numactl --hardware`)
    takes_time = name == "sleep" if before else name in TAKE_TIME  # before: set-up
    takes_time = takes_time and not (polling and name == "sleep")  # waits for a job
    if not name or name in launching or (not takes_time and (name in SETUP_COMMANDS
                                                              or name in CHEAP)):
        return None
    if starts_no_ranks(program):  # `mpirun --version`: prints and exits (s42 tester F3)
        return None
    return k


#: How the recommended side's walltime was set where work besides the launch keeps it.
AFTER_BASIS = "it runs more than the measured program, see the note"
