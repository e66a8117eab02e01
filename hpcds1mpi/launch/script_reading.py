"""Reading a batch script a user already has: its directives, launch line and thread variables.

:func:`read_script` turns the text of a Slurm or PBS script into a :class:`JobScript`: every
``#SBATCH`` / ``#PBS`` option with its line and the place of its value in the text, the
``srun`` / ``mpirun`` / ``mpiexec`` / ``ibrun`` / ``aprun`` / ``cafrun`` lines with their options
and the program (after an exec-wrapper prefix such as ``env NAME=value``:
:mod:`~hpcds1mpi.launch.exec_wrappers`), the ``OMP_NUM_THREADS`` (and friends) settings
(``export NAME=value``, csh's ``setenv NAME value``), and what all of it asks for: nodes,
ranks, threads, GPUs, the time limit. :mod:`hpcds1mpi.launch.script_rewrite` edits the same
places, so a rewrite touches only the lines it must.

Directives follow ``sbatch``'s own reader (``_opt_batch_script`` in Slurm's ``opt.c``): a
directive starts at column 0; blank and comment lines are skipped; the first other line ends
the directives, and later ones are ignored (in ``ignored``, and one note); words split like a
shell (quotes, backslashes), and an unquoted ``#`` ends the line. Options are read as
getopt_long does: ``-N2``, ``-N 2``, ``--nodes=2``, ``--nodes 2``, a long name abbreviated to a
unique prefix, the last occurrence wins. PBS ``qsub`` reads ``#PBS`` lines by the same rule (its
``select`` / ``place`` request: :mod:`hpcds1mpi.launch.pbs_request`).
Shell lines are split with :mod:`shlex` after joining ``\\`` continuations; ``$VAR``,
``${VAR:-x}``, ``$((...))`` and ``$[...]`` are expanded from the script's own assignments and
the variables the scheduler sets from the directives (``SLURM_CPUS_PER_TASK``, ...:
:mod:`hpcds1mpi.launch.directive_request`, which reads what the directives ask for)
(:mod:`hpcds1mpi.launch.script_expansion`). What the script asks for is held in
:mod:`hpcds1mpi.launch.job_script`.
"""

from __future__ import annotations

import os
import re

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.case_arms import CaseArms
from hpcds1mpi.launch.directive_mistakes import (check_unexpanded, check_value_form,
                                                 late_directives_note)
from hpcds1mpi.launch.exec_wrappers import is_wrapper, read_wrappers
from hpcds1mpi.launch.foreign_schedulers import READ_HERE, check_scheduler
from hpcds1mpi.launch.informational_launches import starts_no_ranks
from hpcds1mpi.launch.job_script import JobScript, Launch, Setting
from hpcds1mpi.launch.directive_request import resolve_directives, scheduler_scope
from hpcds1mpi.launch.script_expansion import MAX_EXPANSION_WORK, ExpansionBudget, expand
from hpcds1mpi.launch.script_components import check_directive_words, check_one_program
from hpcds1mpi.launch.script_file import check_script_text
from hpcds1mpi.launch.script_scope import Subshells, lists_apart
from hpcds1mpi.launch.script_unsets import Unsets
from hpcds1mpi.launch.shell_functions import body_words, subshell_edges
from hpcds1mpi.launch.script_options import (
    ASSIGN_RE, LOOP_WORDS, RANKS_FIRST, REDIRECT_RE, SHELL_STOP, TABLES, Option, Word,
    commands_after, comment_start, launcher_kind, mpi_options, pbs_options, slurm_options, words)

#: Directive prefixes, by scheduler (``#SLURM`` is sbatch's old spelling, still read).
MAGIC = {"#SBATCH": "slurm", "#SLURM": "slurm", "#PBS": "pbs"}
#: The largest script read, in UTF-8 bytes: Slurm's default ``max_script_size``, 4 MiB, which
#: sbatch takes (s32 tester S5: an input deck in a heredoc, 1.4 MB, was refused at 256 kB).
#: Reading is linear in it: about 1.4 s per MB of short command lines, heredoc bodies skipped.
MAX_SCRIPT_CHARS = 4 * 2**20
#: The longest line read (``\\`` continuations joined). Real lines are a few hundred
#: characters; the shell splitting costs the square of a word's length, so a longer line is
#: skipped with a note.
MAX_LINE_CHARS = 32_768


# ---- reading --------------------------------------------------------------------------------


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(line number, start offset, text without its newline) of every physical line."""
    out, pos = [], 0
    for number, line in enumerate(text.split("\n"), start=1):  # sbatch splits at \n only
        out.append((number, pos, line[:-1] if line.endswith("\r") else line))
        pos += len(line) + 1
    return out if not text.endswith("\n") else out[:-1]


def _magic(line: str) -> str | None:
    """The directive prefix ``line`` starts with at column 0 (as sbatch compares), or None."""
    return next((m for m in MAGIC if line.startswith(m)), None)


def _read_directives(script: JobScript, lines) -> int:
    """Read the directives up to the first command; return the index of that line."""
    for k, (number, start, line) in enumerate(lines):
        magic = _magic(line)
        if magic is None:
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                script.first_command = number
                return k
            continue
        if MAGIC[magic] != script.scheduler:
            script.note(f"line {number}: {magic} line in a {script.scheduler} script; skipped")
            continue
        if len(line) > MAX_LINE_CHARS:
            script.note(_too_long(number))
            continue
        body = line[len(magic):]
        body = body[:comment_start(body, anywhere=True)]
        tokens = words(body, start + len(magic))
        if script.scheduler == "slurm":
            check_directive_words(tokens[0].text if tokens else "", number)
            options = slurm_options(tokens, number, script.note)
        else:
            options = pbs_options(tokens, number)
        for opt in options:
            check_unexpanded(script, opt, magic)  # each occurrence: sbatch refuses the first
            check_value_form(script, opt, magic)  # a time, memory or count sbatch refuses
            if opt.name:
                script.directives[opt.name] = opt  # the last one counts, as getopt's
            else:
                script.note(f"line {number}: {opt.value!r} is no option; skipped")
        script.directives_end = lines[k + 1][1] if k + 1 < len(lines) else len(script.text)
    return len(lines)


def _too_long(number: int) -> str:
    return f"line {number} is over {MAX_LINE_CHARS:,} characters long; not read"


def unread_lines(script: JobScript) -> list[int]:
    """The lines read past as too long (:data:`MAX_LINE_CHARS`): counted directives and shell
    lines (a continued line by its first). A rewrite must refuse such a script: it cannot know
    what those lines ask for (a long ``select`` kept beside an added one asks twice)."""
    lines = _lines(script.text)
    end = script.first_command - 1 if script.first_command else len(lines)
    unread = [number for number, _, line in lines[:end]
              if _magic(line) and MAGIC[_magic(line)] == script.scheduler
              and len(line) > MAX_LINE_CHARS]
    return unread + [number for number, _, _, text in _logical(lines, end)
                     if not _magic(text) and len(text) > MAX_LINE_CHARS]


def _logical(lines, k: int):
    """(first line, last line, start offset, text) of each shell line from index ``k`` on:
    ``\\``-continued lines are joined (the backslash-newline becomes two blanks, so offsets in
    the joined text are offsets in the script); here-document bodies are skipped."""
    heredoc = None
    while k < len(lines):
        number, start, line = lines[k]
        if heredoc is not None:
            k += 1
            if (line.lstrip("\t") if heredoc[1] else line) == heredoc[0]:
                heredoc = None
            continue
        parts, last, current = [], k, line
        while (len(current) - len(current.rstrip("\\"))) % 2 == 1 and last + 1 < len(lines):
            # the backslash and the line end become blanks, so offsets stay the script's
            parts.append(current[:-1] + " " * (lines[last + 1][1] - lines[last][1]
                                               - len(current) + 1))
            last += 1
            current = lines[last][2]
        text = "".join(parts) + current
        # "<<" first: comment_start walks the line character by character (s32 tester S5)
        m = "<<" in text and re.search(r"(?<!<)<<(?!<)(-?)\s*['\"]?([A-Za-z_]\w*)['\"]?",
                                       text[:comment_start(text, False)])
        if m:
            heredoc = (m.group(2), bool(m.group(1)))
        yield number, lines[last][0], start, text
        k = last + 1


def _commands(tokens: list[Word]):
    """Simple commands of a line's words (split at ; | && || &, redirections dropped), each
    with its standard-input redirection as written ("" for none) and the separators before
    and after it ("" for none: a pipe's stages are subshells, s45 tester F3)."""
    current: list[Word] = []
    stdin, target, before = "", None, ""  # target: whose redirection the next word is for
    for word in tokens:
        if target is not None:
            stdin += f" {word.raw}" if target == "stdin" else ""
            target = None
        elif word.raw in SHELL_STOP:
            yield current, stdin, before, word.raw
            current, stdin, before = [], "", word.raw
        elif REDIRECT_RE.match(word.raw):
            reads = re.match(r"0?<", word.raw)
            stdin = word.raw if reads else stdin
            if re.fullmatch(r"(\d*|&)(>>?|<|<<-?|<<<)", word.raw):  # its target is next
                target = "stdin" if reads else "other"
        else:
            current.append(word)
    yield current, stdin, before, ""


def _launch(script: JobScript, command: list[Word], prefix: list[Word], number: int,
            last: int, scope: dict, budget: ExpansionBudget) -> Launch:
    head = command[0]
    launcher = os.path.basename(head.text)
    kind = launcher_kind(launcher)
    rest = command[1:]
    if kind == "slurm":
        options = slurm_options(rest, number, script.note)
    else:
        options = mpi_options(rest, number, TABLES[kind])
    launch = Launch(launcher, kind, number, last, (head.start, head.end))
    if launcher in RANKS_FIRST and options and options[0].name == "ntasks":
        launch.options_at = options[0].span[1]  # cafrun -n 4 <mpiexec's options> ./prog
    for opt in options:
        if not opt.name:
            continue
        launch.options[opt.name] = opt
        if opt.name == "env" and opt.value and "=" in opt.value:
            key, _, val = opt.value.partition("=")
            launch.env[key] = (expand(val, scope, budget), opt)
        elif opt.name == "mca" and kind == "mpi" and "=" in (opt.value or ""):
            key, _, val = opt.value.partition("=")
            launch.mca[key] = expand(val, scope, budget)
        elif opt.name == "export" and opt.value:
            for item in opt.value.split(","):
                if "=" in item:
                    key, _, val = item.partition("=")
                    launch.env[key] = (expand(val, scope, budget), opt)
    # the launcher's own words end at the program (all of them are its own without one)
    has_program = options and not options[-1].name
    program_start = options[-1].span[0] if has_program else len(script.text)
    check_one_program(launch, rest, program_start)
    for word in prefix:
        _launch_env(launch, word, number, scope, budget)
    operands = [w for w in rest if w.start >= (options[-1].span[0] if options else 0)]
    if options and not options[-1].name:
        # ``mpiexec -n 2 env X=2 nice ./app``: env sets the ranks' variables, and the program
        # is the word after the exec-wrapper prefix (s30 tester K1)
        found = read_wrappers([w.text for w in operands]) if is_wrapper(operands[0].text) \
            else None
        if found is not None:
            for _, _, k in found.assigned:
                _launch_env(launch, operands[k], number, scope, budget)
            operands = operands[found.program_at:]
            launch.wrapper_unset, launch.wrapper_cleared = found.unset, found.cleared
        program = operands[0]
        launch.program_raw = program.text
        launch.program = expand(program.text, scope, budget)
        launch.spans = [(program.start, program.end, script.text[program.start:program.end])]
        for w in operands[1:]:
            arg = w.text if (value := expand(w.text, scope, budget)) is None else value
            # a quoted empty word ('', "$EMPTY") is an argument, an unquoted $EMPTY none (D6)
            if arg or "'" in w.raw or '"' in w.raw:
                launch.args.append(arg)
                launch.spans.append((w.start, w.end, w.raw))
    return launch


def _launch_env(launch: Launch, word: Word, number: int, scope: dict,
                budget: ExpansionBudget) -> None:
    """A variable set for the ranks by a ``NAME=value`` word (``VAR=x srun``, ``env VAR=x``)."""
    key, _, val = word.text.partition("=")
    launch.env[key] = (expand(val, scope, budget),
                       Option("env", word.text, number, (word.start, word.end),
                              (word.start + len(key) + 1, word.end), word.raw[len(key) + 1:]))


def _assign(script: JobScript, scope: dict, budget: ExpansionBudget, setting: Setting,
            subshells: Subshells) -> None:
    """Keep a variable the script sets, its value resolved from the variables known here."""
    setting.resolved = expand(setting.value, scope, budget)
    subshells.assigned(scope, setting.name, len(script.settings))
    script.settings.append(setting)
    if setting.resolved is None:
        scope.pop(setting.name, None)
    else:
        scope[setting.name] = setting.resolved


def _read_commands(script: JobScript, lines, k: int) -> None:
    base = scheduler_scope(script)
    scope = dict(base)
    budget = ExpansionBudget()
    loops = 0  # open loops: a launch inside one runs more than once
    subshells, arms, unsets = Subshells(script.unsets), CaseArms(), Unsets(script.unsets)
    spent_at = None
    for number, last, _start, text in _logical(lines, k):
        if _magic(text):
            script.ignored.append(number)
            continue
        if len(text) > MAX_LINE_CHARS:
            script.note(_too_long(number))
            continue
        cut = text[:comment_start(text, anywhere=False)] if "#" in text else text
        line = arms.cut(words(cut, lines[number - 1][1], shell=True))  # `big) srun ..;;`
        commands = list(_commands(line))
        apart = lists_apart(commands)  # `export X=1 && ./a &` (s46)
        for at, (command, stdin, before, after) in enumerate(commands):
            if at in apart:
                subshells.apart(script.settings)
            opened, closed = subshell_edges(command)
            subshells.enter(opened, script.settings)
            subshells.start(command, before, after, script.settings)
            end, whole = (command[-1].end if command else 0), command
            command = body_words(command)  # `f() { srun ..; }`, `f() (srun ..)`
            while command and command[0].raw in ("then", "do", "else", "{", "exec",
                                                  "command", "export", "declare", "local",
                                                  "readonly", "-x"):
                command = command[1:]
            head = command[0].raw if command else ""
            loops = loops + 1 if head in LOOP_WORDS else max(0, loops - (head == "done"))
            prefix = []
            while command and ASSIGN_RE.match(command[0].text):
                prefix.append(command.pop(0))
            wrapped = read_wrappers([w.text for w in command]) if command and is_wrapper(
                command[0].text) else None
            if wrapped is not None and launcher_kind(command[wrapped.program_at].text):
                # ``timeout 3600 srun ./app``, ``env X=1 mpirun ./app``: the launcher's line
                prefix += [command[k] for _, _, k in wrapped.assigned]
                command = command[wrapped.program_at:]
            unsets.command(whole, command, before, number)  # `unset X`, a call of one
            if not command:  # only assignments: they set the script's variables
                for word in prefix:
                    name, _, value = word.text.partition("=")
                    _assign(script, scope, budget, Setting(
                        name, value, None, number, (word.start + len(name) + 1, word.end)),
                        subshells)
            elif command[0].raw == "setenv" and len(command) == 3 and ASSIGN_RE.match(
                    f"{command[1].text}="):  # csh: setenv NAME VALUE, as export NAME=VALUE
                name, value = command[1].text, command[2]
                _assign(script, scope, budget, Setting(name, value.text, None, number,
                                                       (value.start, value.end)), subshells)
            elif launcher_kind(command[0].text) is not None and not starts_no_ranks(
                    [w.text for w in command]):  # `mpirun --version` is set-up (s42 F3)
                launch = _launch(script, command, prefix, number, last, scope, budget)
                launch.origin = (base, script.settings, len(script.settings))
                launch.in_loop = loops > 0
                launch.stdin, launch.then = stdin, commands_after(line, command[-1])
                script.launches.append(launch)
            subshells.finish(whole, after, scope, script.settings, end)
            subshells.leave(closed, scope, script.settings, end)
            if at in apart.values():
                subshells.apart_ends(scope, script.settings, end)
        if budget.spent and spent_at is None:  # the line where it ran out
            spent_at = number
    script.scope = scope
    late = [n for n in script.ignored if MAGIC[_magic(lines[n - 1][2])] == script.scheduler]
    if late:  # sbatch skips them without a word: said, or the user never learns it
        script.note(late_directives_note(script, late, _magic(lines[late[0] - 1][2])))
    if spent_at is not None:
        script.note(f"line {spent_at}: the script's variables expand to over "
                    f"{MAX_EXPANSION_WORK:,} characters by here; values from this line on are "
                    "read as unknown")


def read_script(text: str, name: str | None = None) -> JobScript:
    """Read a Slurm or PBS batch script (its text, never a path).

    Args:
        text: the script's text.
        name: what to call the script in an error (its path); None: "the script".

    Raises:
        ConfigError: text that is no batch script (binary, too long, unbalanced quotes in a
            directive, neither directives nor a launch line), or another scheduler's
            (:mod:`~hpcds1mpi.launch.foreign_schedulers`).
    """
    if not isinstance(text, str):
        raise ConfigError("a job script must be text")
    where = f"{name}: " if name else ""
    if "\x00" in text:
        raise ConfigError(f"{where}this is no job script (binary: it holds NUL bytes); pass "
                          "the sbatch or qsub script")
    if len(text) > MAX_SCRIPT_CHARS // 4 and _utf8_size(text) > MAX_SCRIPT_CHARS:
        raise ConfigError(f"{where or 'the script: '}over {MAX_SCRIPT_CHARS / 2**20:g} MiB, "
                          "Slurm's default max_script_size (Slurm refuses a larger one unless "
                          "SchedulerParameters raises it); keep input data in a file the "
                          "script reads")
    # an LSF / Grid Engine / ... job read as Slurm's asks 1 node x 1 rank (s35 tester X1)
    check_script_text(text)  # a BOM, DOS line breaks, a heterogeneous job: said as such first
    both = check_scheduler(text, MAGIC, where)
    lines = _lines(text)
    found = [MAGIC[m] for _, _, line in lines if (m := _magic(line))]
    script = JobScript(text, found[0] if found else "slurm")
    if both:
        script.note(both)
    k = _read_directives(script, lines)
    resolve_directives(script)
    _read_commands(script, lines, k)
    if not script.directives and not script.launches:
        raise ConfigError("no #SBATCH / #PBS directive and no srun / mpirun / mpiexec line "
                          f"found; is this a batch script? {READ_HERE}")
    from hpcds1mpi.launch.script_request import resolve_launch

    resolve_launch(script)
    return script


def _utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8, as sbatch counts a script (a lone surrogate as 3)."""
    return len(text.encode("utf-8", "surrogatepass"))
