"""``recommend --program`` (and the API's ``program``) against the command the pick's runs ran.

The prediction, and the time limit made from it, are for the program's measured command line
at the pick. A given command line can leave that in three ways, each said in one line:

* **another program** (``ph.x -in si.in`` for a model of ``pw.x -nk {ranks} -in si.in``): the
  script runs it as asked, said with what the model measured (:func:`another_program_note`;
  a wrapper script may run the measured program, which the tool cannot tell: s36 tester Q2);
* **a placeholder's value** (``pw.x -nk 2 -in si.in`` at a 1-rank pick): where the measured
  command has ``{ranks}`` (or another placeholder of the pick's layout) the runs had the
  configuration's own value, so the script has it too, as advise's ``--rewrite`` sets a rank
  count's words, and the note names both values (:func:`pick_values`; ``-nk 2`` at 1 rank had
  failed the job, "invalid number of pools": s36 tester Q1). A ``{size}`` value is run as
  given: the size is the user's, not the pick's, and a size other than the asked one is
  another job, which the verdict says (``unmeasured_command``); the script had run the asked
  size while the verdict judged the given one (s46 tester J4);
* **other arguments** (``T=2000`` added): the script runs them, noted
  (:func:`program_arguments_note`, advise's comparison: s32 tester U3).
"""

from __future__ import annotations

import os
import shlex
from types import SimpleNamespace

from hpcds1mpi.launch.script_placeholders import (placeholder_words, program_at, split_command,
                                                  stem)
from hpcds1mpi.launch.script_options import SIZE_DIGITS

#: A placeholder's value as it is written in a command (``{size}``'s digits, ``fp32``).
_VALUE = {"size": SIZE_DIGITS, "precision": r"\w+", "device": r"\w+"}


def given_program(program, command: str | None, config, size: int
                  ) -> tuple[str | list[str] | None, str]:
    """(the program a script of the pick ``config`` at ``size`` runs, a note or ""):
    ``program`` (a command line or its words) with each placeholder value of the measured
    ``command`` of the pick's layout that differs from the pick's put back as the
    placeholder, which the script fills (:func:`pick_values`; a ``{size}`` value as given,
    as the verdict judges it: :func:`script_words`); as given, with a note, where it runs
    another program (:func:`another_program_note`)."""
    words = split_command(program) if isinstance(program, str) else list(program or ())
    if not words or not command or " ".join(words) == command:
        return program, ""
    other = another_program_note(words, command)
    if other:
        return program, other
    words, named = measured_path(words, command)
    fixed, said = pick_values(words, command, config, size)
    if not said and not named:
        return program, ""
    return ((shlex.join(fixed) if isinstance(program, str) else fixed),
            "; ".join(note for note in (named, said) if note))


def script_words(words: list[str], command: str, config, size: int) -> list[str]:
    """``words`` (a given program's) as the script of the pick ``config`` at ``size`` runs
    them: each value given where the measured ``command`` has a placeholder made the pick's
    (:func:`pick_values`, filled as the script fills it); as given where they name another
    program. What the verdict judges (s45 tester A2: ``-nk 2`` at a 1-rank pick, which the
    script runs as ``-nk 1``, was judged "values other than this job's"). A ``{size}`` value
    is left as given, here and in the script (:func:`given_program`): the size is the user's
    question, not the pick's choice, so a command of another size than the asked one stays
    another job (s40 reviewer F5), run as written (s46 tester J4)."""
    from hpcds1mpi.launch.placeholder_fill import fill
    from hpcds1mpi.launch.program import placeholder_values

    if not words or not command or another_program_note(words, command):
        return words
    fixed, said = pick_values(words, command, config, size)
    if not said:
        return words
    values = {key: str(value) for key, value in placeholder_values(config, size).items()}
    return [fill(new, values) if new != old else old for new, old in zip(fixed, words)]


def measured_path(words: list[str], command: str) -> tuple[list[str], str]:
    """(``words`` with a relative program path that names, from here, the very file the
    measured ``command`` ran by its absolute path put back as that path, the note saying so;
    ``words`` and "" otherwise). The job runs the program in the measured folder (a sweep's
    ``--workdir``), where ``./run.sh`` given from the wrapper's own folder is not (s39 tester
    A5: the script ran ``./run.sh`` in ``runs/175-1`` and the job failed). A recorded
    ``command`` that does not split (a hand-made or older record) names no path: as given."""
    tokens = split_command(command)
    if not tokens or not words:
        return words, ""
    measured, k = tokens[program_at(tokens)], program_at(words)
    given = words[k]
    if not os.path.isabs(measured) or os.path.isabs(given) or "/" not in given:
        return words, ""
    try:
        same = os.path.samefile(given, measured)
    except OSError:
        return words, ""
    if not same:
        return words, ""
    return ([*words[:k], measured, *words[k + 1:]],
            f"--program's {given} is the measured {measured}: the script names it by that path, "
            "since the job runs it in the folder its runs ran in, not here")


def another_program_note(words: list[str], command: str) -> str:
    """The note for a given command line whose words do not name the measured ``command``'s
    program (past a wrapper or an interpreter, as :func:`program_arguments_note` finds it);
    "" where they do or either is unknown."""
    tokens = split_command(command)
    if not tokens or not words:
        return ""
    measured = tokens[program_at(tokens)]
    if any(stem(w) == stem(measured) for w in words):
        return ""
    asked = os.path.basename(words[program_at(words)])
    return (f"--program runs {asked}, not {os.path.basename(measured)}, the program the model "
            f"measured (as {command!r}): the prediction is {os.path.basename(measured)}'s, "
            f"and so is a time limit made from it; unless {asked} runs "
            f"{os.path.basename(measured)} as measured, give --time-limit (or sweep {asked} to "
            "measure it)")


def pick_values(words: list[str], command: str, config, size: int) -> tuple[list[str], str]:
    """(``words`` with each value given where ``command`` has a placeholder of the pick's
    layout put back as that placeholder where the pick's value differs, the note naming both;
    "" where none differs; ``{size}`` is the user's, left as given). The words are found as
    advise finds a script's (:func:`~hpcds1mpi.launch.script_placeholders.placeholder_words`)."""
    from hpcds1mpi.launch.program import PLACEHOLDERS, placeholder_values

    values = placeholder_values(config, size)
    launch = SimpleNamespace(program=words[0], program_raw=words[0], args=words[1:])
    found: dict[int, dict] = {}  # word index -> {its value's span: placeholder}
    for key in PLACEHOLDERS:
        if "{" + key + "}" not in command or key == "size":
            continue
        for k, m in placeholder_words(launch, command, key, _VALUE.get(key, "[0-9]+")):
            found.setdefault(k, {}).update({m.span(g): key for g in range(1, m.re.groups + 1)
                                            if m.group(g) != str(values[key])})
    fixed, said = list(words), []
    for k, spans in sorted(found.items()):
        if not spans:
            continue
        ran = fixed[k]
        for (start, end), key in sorted(spans.items(), reverse=True):
            fixed[k] = fixed[k][:start] + "{" + key + "}" + fixed[k][end:]
            ran = ran[:start] + str(values[key]) + ran[end:]
        option = words[k - 1] + " " if k > 1 and words[k - 1].startswith("-") \
            and not words[k].startswith("-") else ""
        where = "it" if said else f"the measured command {command!r}"
        keys = " and ".join(f"{{{key}}}, {values[key]}" for key in dict.fromkeys(spans.values()))
        said.append((f"{option + words[k]!r} where {where} has {keys} at this pick",
                     repr(option + ran)))
    if not said:
        return words, ""
    return fixed, (f"--program gives {'; '.join(g for g, _ in said)}: the script runs "
                   f"{', '.join(r for _, r in said)}, as the runs the prediction is for did")


def program_arguments_note(program: str | None, command: str | None,
                           time_limit_given: bool) -> str | None:
    """``recommend --program``'s note where the given command runs the program with other
    arguments than its measured command
    (:func:`~hpcds1mpi.decide.advise_launch.other_arguments`): the prediction, and the time
    limit made from it, are for the measured one (s32 tester U3: ``T=2000`` ran 41.8 s under
    the 1 min limit of the measured ``T=20``'s 808 ms)."""
    from hpcds1mpi.decide.advise_launch import other_arguments

    if not program or not command or program == command:
        return None
    said = other_arguments(split_command(program), command)
    if said is None:
        return None
    tokens = split_command(command)
    limit = ("(the script's time limit is yours; or sweep this command line to measure it)"
             if time_limit_given else "and so is the script's time limit made from it, which "
             "may end this job early: give --time-limit (or sweep this command line to "
             "measure it)")
    return (f"--program runs {os.path.basename(tokens[program_at(tokens)])} with other "
            f"arguments than its measured command {command!r} ({said}): the prediction is "
            f"for the measured command's arguments {limit}")
