"""A job whose command is not the one its workload's runs measured.

A bundle's predictions for a program are for the command line(s) its runs ran under that label
(recorded with it: :attr:`~hpcds1mpi.surrogates.levels.MeasuredLevels.command`). A job that
runs another program under the label, another file of the program's name, or the program with
other arguments (another input deck) is one the model never measured: the measured runs'
interval and confidence are another command's (s40 tester B3: ``fall`` asked as ``grow`` ran
4-8x below the "measured" interval). So its verdict is at most ``confirm``, with the
difference as its reason, in every answer that carries the verdict (text, JSON, API, service,
script), and no time limit of the user's is cut from it (s40 tester B5, B10).

A placeholder's value is the job's where it is known (``grow 16000000`` where the measured
line has ``grow {size}`` and the job is asked at 8000 is another job: s40 reviewer F5), else
any value (tune's, whose layouts vary). The command is read as a shell would run it: a wrapper
before the program is skipped, a shell's ``-c`` string is the command it runs, an output
redirection is no argument (s40 reviewer F8), and a list or pipeline that runs another
program after it is more than the measured command (s41 tester B1), unless the measured
line was that list; output handling or set-up after it (``| tee log``, ``; echo done``) is
no more. Only the shell's own words, known exec wrappers and MPI launchers come before the
program (s41 tester B2), and a line too long to compare is not the measured one. A program
of another name is the measured one where it is the same file (a symbolic link to it), and a
program file is compared only where both files can be read here (a path this machine lacks
says nothing).
"""

from __future__ import annotations

import os
import re
from typing import Mapping

from hpcds1mpi.launch.script_placeholders import program_at, split_command, stem

#: The verdict's check name for this one.
CHECK = "command"


#: Shell builtins that run the command after them (and their options).
_SHELL_RUNNERS = frozenset({"exec", "command"})
#: bash's long options that take the next word.
_SHELL_VALUED = frozenset({"--rcfile", "--init-file"})
#: Words that end a command: what follows is another command (a pipe, a list).
_SEPARATORS = frozenset({"|", "|&", "||", "&&", ";", "&"})
#: Set-up commands (:data:`~hpcds1mpi.launch.wrapper_program.SETUP_COMMANDS`) that may take
#: a job's time, or run another command: after the measured command they are more than it.
_TAKE_TIME = frozenset({"sleep", "wait", "source", ".", "eval", "srun", "scontrol"})
#: Words that close a structure and run nothing (``run() { srun ./app; }``'s ``}``).
_CLOSING = frozenset({"}", ")", "fi", "done", "esac"})
#: An output redirection, its target in the word (``>out``, ``2>&1``) or the next one (``>``).
_OUTPUT_RE = re.compile(r"^(\d*>>?|&>>?|\d*>&|\d*>\|)(.*)$")


def command_difference(words: list[str], command: str | None, cwd: str | None = None,
                       stdin: str = "", values: Mapping[str, object] | None = None,
                       files: bool = True) -> str:
    """How the command ``words`` (its program among them) differs from the measured
    ``command``, one phrase: another program, another file of the program's name (a relative
    path read from ``cwd``, default here), other arguments (or a standard input), or a value
    other than the job's where ``command`` has its placeholder (``values``: the job's, by
    placeholder name; one not given takes any value); "" where it runs the measured command
    or either is unknown. ``files`` False (a web request's command): no file is opened or
    looked at, the words alone are compared, a program of the measured one's name taken for
    it (s41 tester B7)."""
    from hpcds1mpi.decide.advise_launch import MAX_WORDS, other_arguments

    tokens = as_run(split_command(command or ""))
    words = as_run([w for w in words if w])
    if not tokens or not words:
        return ""
    measured = tokens[program_in(tokens)]
    name = os.path.basename(measured)
    # the program is the word past known wrappers and launchers only: a word of the measured
    # program's name further on is an argument (s41 tester B2: `fall grow {size}` passed)
    words = words[program_in(words):]
    if not files:  # a bare name is looked up nowhere (:func:`_found_here`)
        words = [os.path.basename(words[0]), *words[1:]]
    if stem(words[0]) != stem(measured):
        if not _same_file(words[0], measured, cwd):
            return f"it runs {os.path.basename(words[0])}, not {name}"
        words = [measured, *words[1:]]  # a link to it: the measured program
    else:
        other = _other_file(words[0], measured, cwd)
        if other:
            return f"it runs {other}, another file than the measured {measured}"
    more = next((k for k, w in enumerate(words) if w in _SEPARATORS), None)
    if more is not None and not any(t in _SEPARATORS for t in tokens):
        return (f"it runs more than {name} ({' '.join(words[more:])!r} after it), all in one "
                "run time")  # s41 tester B1: `grow {size} ; fall 99999999` was the measured
    if max(len(words), len(tokens)) > MAX_WORDS:  # not compared: cannot be called the same
        return (f"it runs {name} with a command line of over {MAX_WORDS} words, too long to "
                "compare with the measured one")  # (s41 tester B5: read as "no difference")
    said = other_arguments(words, _joined(tokens), stdin)
    if said:
        return f"it runs {name} with other arguments ({said})"
    filled = {key: str(value) for key, value in (values or {}).items()
              if any("{" + key + "}" in t for t in tokens)}
    said = other_arguments(_filled(words, filled), _joined(_filled(tokens, filled)), stdin)
    if not said:
        return ""
    job = ", ".join(f"{{{key}}} {value}" for key, value in filled.items())
    return f"it runs {name} with values other than this job's ({said}; the job's {job})"


def program_in(words: list[str]) -> int:
    """The index of the program among a command's words: past an exec-wrapper prefix, an MPI
    launcher's own options (``mpiexec -n 2 env X=1 ./app``) and an interpreter
    (:func:`~hpcds1mpi.launch.script_placeholders.program_at`), as those read their words;
    no other word is stepped over."""
    at = _started_at(words)
    return at + program_at(words[at:])


def _started_at(words: list[str]) -> int:
    """The index of the command that ``words`` run past the shell's own words (``A=1``,
    ``exec``), exec wrappers (:mod:`~hpcds1mpi.launch.exec_wrappers`) and MPI launchers with
    their options."""
    from hpcds1mpi.launch.exec_wrappers import program_index
    from hpcds1mpi.launch.script_options import (TABLES, Word, launcher_kind, mpi_options,
                                                 slurm_options)

    at = _past_shell_prefix(words)
    at += program_index(words[at:])
    kind = launcher_kind(words[at]) if at < len(words) else None
    if kind is None:
        return at
    rest = [Word(w, k, k, w) for k, w in enumerate(words[at + 1:])]
    options = slurm_options(rest, 0, lambda _: None) if kind == "slurm" else mpi_options(
        rest, 0, TABLES[kind])
    if not options or options[-1].name:
        return at  # a launcher that names no program: itself
    inner = at + 1 + options[-1].span[0]
    return inner + _started_at(words[inner:])


def _past_shell_prefix(words: list[str]) -> int:
    """The index past the words a shell reads before a command: assignments (``A=1``) and
    ``exec`` / ``command`` with their options (``exec -a NAME``)."""
    from hpcds1mpi.launch.exec_wrappers import ASSIGNMENT

    k = 0
    while k < len(words) and (ASSIGNMENT.match(words[k]) or words[k] in _SHELL_RUNNERS):
        runner, k = words[k], k + 1
        while runner in _SHELL_RUNNERS and k < len(words) and words[k].startswith("-"):
            option, k = words[k], k + 1
            if option == "--":
                break
            k += runner == "exec" and "a" in option  # exec -a NAME
    return k


def as_run(words: list[str]) -> list[str]:
    """A command's words as a shell runs them: a shell's ``-c`` string split into the command
    it runs (past the shell's own options), without output redirections (``> out.txt``,
    ``2>&1``: where the output goes, not the job's input), and with what a list or pipeline
    runs after it (:func:`_runs_after`; ``| tee log`` dropped). An input redirection stays:
    it is the job's input."""
    from hpcds1mpi.launch.wrapper_program import SHELLS

    k = _started_at(words)  # past ``env X=1``, ``mpiexec -n 2`` and the like
    if k < len(words) and SHELLS.match(os.path.basename(words[k])):  # its -c string runs
        inner = shell_string(words[k + 1:])
        if inner is not None:
            return as_run([*words[:k], *inner])
    out, skip = [], False
    for at, word in enumerate(words):
        if skip:
            skip = False
        elif word in _SEPARATORS:
            return out + _runs_after(word, words[at + 1:])
        elif m := _OUTPUT_RE.match(word):
            skip = not m.group(2)  # ``>`` alone: its target is the next word
        else:
            out.append(word)
    return out


def _runs_after(separator: str, rest: list[str]) -> list[str]:
    """What a list or pipeline runs after a command (``; ./fall 9``: the ``separator`` and
    ``rest`` as run), [] where it runs nothing but output handling or set-up (``| tee log``,
    ``; echo done``, a trailing ``;``): the job's run time is then the command's alone."""
    from hpcds1mpi.launch.wrapper_program import SETUP_COMMANDS

    tail = as_run(rest)
    end = next((k for k, w in enumerate(tail) if w in _SEPARATORS), len(tail))
    first = tail[_past_shell_prefix(tail[:end]):end]
    name = os.path.basename(first[0]) if first else ""
    if name in _CLOSING:  # `; }` of a one-line function: nothing more runs
        return tail[end:]
    if separator != "&" and (not first or name == "tee" or (
            name in SETUP_COMMANDS and name not in _TAKE_TIME)):
        return tail[end:]  # the next command on (its own separator first)
    return [separator, *tail]  # ``&``: the job goes on without waiting for it


def shell_string(args: list[str]) -> list[str] | None:
    """The words of the ``-c`` string a shell given ``args`` runs (split as sh splits a line:
    :mod:`~hpcds1mpi.launch.shell_words`); None without one (a script file, or a string that
    does not split). The shell's options are read as sh and bash read them: ``-o pipefail``,
    ``-O extglob`` and bash's ``--rcfile FILE`` take the next word (s41 tester B3: ``sh -o
    pipefail -c '...'`` was read as running ``pipefail``), ``+o`` alike."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.shell_words import words as shell_words

    k, command = 0, False
    while k < len(args) and args[k][:1] in ("-", "+") and args[k] not in ("-", "+"):
        option, k = args[k], k + 1
        if option == "--":
            break
        if option.startswith("--"):
            k += option in _SHELL_VALUED
            continue
        command = command or "c" in option[1:]
        k += sum(letter in "oO" for letter in option[1:])  # each takes a word
    if not command or k >= len(args):
        return None
    try:
        return [w.text for w in shell_words(args[k], shell=True)] or None
    except ConfigError:
        return None


def _filled(words: list[str], values: Mapping[str, str]) -> list[str]:
    """``words`` with each ``{key}`` of ``values`` replaced by its value (``{{key}}``: the
    text ``{key}``, as the sweep ran it)."""
    from hpcds1mpi.launch.placeholder_fill import fill

    return [fill(w, values) for w in words]


def _joined(tokens: list[str]) -> str:
    """``tokens`` as one command line that splits back into them."""
    import shlex

    return shlex.join(tokens)


def _same_file(given: str, measured: str, cwd: str | None) -> bool:
    """Whether ``given`` and the measured program are found here and run one program (a
    symbolic link to it: s40 reviewer F8)."""
    from hpcds1mpi.launch.measured_program import same_program

    path = _found_here(given, measured, cwd)
    return bool(path) and same_program(measured, path)


def _other_file(given: str, measured: str, cwd: str | None) -> str:
    """``given`` as the file it names where it and the measured file are both found here and
    are not one program; "" otherwise."""
    from hpcds1mpi.launch.measured_program import same_program

    path = _found_here(given, measured, cwd)
    return os.path.normpath(path) if path and not same_program(measured, path) else ""


def _found_here(given: str, measured: str, cwd: str | None) -> str:
    """The file ``given`` names (a relative path read from ``cwd``, default here) where it and
    the ``measured`` file are both found here; "" otherwise (a bare word is found on the job's
    PATH, not here)."""
    if "/" not in given or not os.path.isabs(measured) or not os.path.isfile(measured):
        return ""
    path = given if os.path.isabs(given) else os.path.join(cwd or os.getcwd(), given)
    return path if os.path.isfile(path) else ""


def unmeasured_reason(workload: str, command: str, difference: str) -> str:
    """The verdict's one line for a job whose command differs from the measured one."""
    return (f"the job's command is not the one {workload} was measured with ({command!r}): "
            f"{difference}; the predictions, interval and confidence are that command's, not "
            f"this job's: keep your own time limit, or measure it (sweep --command with its "
            f"own --label)")


def confirm_unmeasured(verdict, reason: str) -> None:
    """``verdict`` (a :class:`~hpcds1mpi.decide.guard.Verdict` or its dict), changed in place:
    at most ``confirm``, ``reason`` added once, its :data:`CHECK` recorded."""
    as_dict = isinstance(verdict, dict)
    get = verdict.get if as_dict else lambda key: getattr(verdict, key)
    if reason in get("reasons"):
        return
    get("reasons").append(reason)
    get("checks")[CHECK] = "confirm"
    if get("verdict") == "auto":
        if as_dict:
            verdict["verdict"] = "confirm"
        else:
            verdict.verdict = "confirm"


def measured_lines(rec) -> tuple[str, ...]:
    """Every command line ``rec``'s workload's runs ran, the pick's first."""
    levels = getattr(rec, "program_levels", None)
    others = (getattr(levels, "command", None), *getattr(levels, "other_commands", ()))
    return tuple(dict.fromkeys(c for c in (rec.program_command, *others) if c))


def judge_given_program(rec, program, cwd: str | None = None, files: bool = True) -> str:
    """For a recommendation ``rec`` with a pick and a given ``program`` (``recommend
    --program``, the service's and the API's ``program``: a command line or its words): the
    reason it is not the measured command (a placeholder's value other than the pick's and
    the asked size among them), with ``rec.verdict`` made at most ``confirm``
    (:func:`confirm_unmeasured`); "" where it runs a measured line, or there is nothing to
    compare (no pick, a kernel, no recorded command). ``files`` False (the service): the
    command's words alone are compared, no path it names opened or looked at, and the reason
    says so (s41 tester B7: the service had told a client which files exist on its host)."""
    from hpcds1mpi.launch.program import placeholder_values

    if program is None:
        return ""
    words = given_words(program)  # refused before anything is judged (s41 tester B6)
    if rec.picked is None or not rec.program_command:
        return ""
    from hpcds1mpi.decide.given_program import script_words

    lines = measured_lines(rec)
    config = rec.picked.choice.config()
    values = placeholder_values(config, rec.size)
    words = script_words(words, rec.program_command, config, rec.size)  # as the script runs
    differences = [command_difference(words, line, cwd, values=values, files=files)
                   for line in lines]
    if not differences or not all(differences):
        return ""
    reason = unmeasured_reason(rec.workload, lines[0], differences[0] + (
        "" if files else " (compared by its words only: no file it names is looked at)"))
    confirm_unmeasured(rec.verdict, reason)
    return reason


def given_words(program) -> list[str]:
    """The words of a given program (a command line, or its words as a list).

    Raises:
        ConfigError: a line that cannot be split (an unbalanced quote), or a blank one: it
            names no command to compare, so it cannot be called the measured one (s41 tester
            B6: both were judged "the measured command")."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.shell_words import words as shell_words

    if isinstance(program, str):  # split as sh does: ``{size}>log`` is a word and a
        try:  # redirection (s41 tester B4), as advise's script reader splits a line
            words = [w.text for w in shell_words(program, shell=True)]
        except ConfigError:
            raise ConfigError(f"program {program!r} cannot be parsed (unbalanced quotes); "
                              "fix its quoting") from None
    else:
        words = [str(w) for w in program]
    if not any(w.strip() for w in words):
        raise ConfigError("the program command is empty; give the program to run, e.g. "
                          "\"./my_app {size}\", or leave it out for the measured command")
    return words


def judge_launch(launch, command: str | None, workload: str, job_folder: str | None,
                 values: Mapping[str, object] | None = None) -> str:
    """``advise``'s reason (or "") where a script's ``launch`` line runs another command than
    its workload's measured ``command`` (at the job's ``values`` of its placeholders, where
    given): the files it names are read in ``job_folder`` (None, a web request's text: none
    is read, a program file is not compared)."""
    from hpcds1mpi.launch.script_placeholders import launch_words

    if launch is None or not command:
        return ""
    then = list(launch.then)  # ``; ./fall 9`` after it (s41 tester B1)
    if then[:1] == ["&"] and all(w in _CLOSING for w in then[1:]):
        then = []  # the launch itself in the background: the script waits for it, or ends
    words = [*launch_words(launch), *then]
    difference = command_difference(words, str(command), job_folder, launch.stdin or "",
                                    values, files=job_folder is not None)
    return unmeasured_reason(workload, str(command), difference) if difference else ""
