"""Which trained workload a user's batch script runs, and why its problem size cannot be read.

``advise`` (:mod:`hpcds1mpi.decide.advise`) matches each launch line's program against the
workloads the model was trained on: the telemetry labels, and the programs swept with
``sweep --command``, whose command lines the bundle keeps
(:func:`hpcds1mpi.surrogates.levels.program_command_lines`: several for a label whose rows
ran several, any of which the script may run). When no size is found, :func:`no_size` is the
one line that says why and what to do.
"""

from __future__ import annotations

import re

from typing import Sequence

from hpcds1mpi.decide.script_functions import running_launches
from hpcds1mpi.launch.job_script import JobScript, Launch
from hpcds1mpi.launch.script_options import to_int
from hpcds1mpi.launch.script_placeholders import (fits_command, program_at, size_from,
                                                 size_values, split_command, stem)
from hpcds1mpi.surrogates.levels import program_command_lines


#: ``hpcds1mpi run``'s options that take no value (every other takes the next word).
_RUN_FLAGS = frozenset({"--json", "-h", "--help"})


class RecordedCommands(dict):
    """Workload label -> the command line most of its rows ran (``./app {size} 40``), with
    every command line the label's rows ran in :attr:`lines`; :meth:`line_for` picks the one a
    launch line runs. Never changed once made (one bundle's answers share it)."""

    def __init__(self, lines: dict[str, tuple[str, ...]], launches: dict | None = None):
        super().__init__({label: found[0] for label, found in lines.items() if found})
        self.lines = {label: tuple(found) for label, found in lines.items() if found}
        #: label -> how its sweep launched it (``launched_with``): which file a bare program
        #: word ran as (:func:`~hpcds1mpi.launch.measured_program.measured_command`)
        self.launches = dict(launches or {})

    def line_for(self, label: str, launch: Launch | None) -> str | None:
        """The recorded command line ``label``'s ``launch`` is read by: the one that reads a
        size from it, then that it fits best (:func:`fits_command`), then that shows a size;
        the first (most rows) of equals. None for a label with no command line."""
        from hpcds1mpi.launch.measured_program import measured_command

        lines = self.lines.get(label, ())
        line = max(lines, key=lambda c: (size_from(launch, c) is not None,
                                         fits_command(launch, c), "{size}" in c)) \
            if len(lines) > 1 and launch is not None else self.get(label)
        # with the file its program word ran as, for advise's other-program warning (s33 B2)
        return None if line is None else measured_command(line, self.launches.get(label))


def recorded_commands(bundle) -> RecordedCommands:
    """The command lines of the programs swept with ``sweep --command`` (the bundle's
    ``measured_levels.json``), per workload label."""
    try:
        lines = program_command_lines(bundle)
    except Exception:  # noqa: BLE001 - a bundle without its levels or rows still has labels
        return RecordedCommands({})
    return RecordedCommands(lines, _single_launches(bundle))


def _single_launches(bundle) -> dict:
    """Label -> the one launcher its sweep ran it with (``launched_with``); a label pooled
    from sweeps of several launchers, or of none recorded, is left out."""
    from hpcds1mpi.decide.bundle_cache import measured_levels

    try:
        levels = measured_levels(bundle) or {}
    except Exception:  # noqa: BLE001 - no levels: no file is known
        return {}
    return {label: lv.launched_with for label, lv in levels.items()
            if isinstance(getattr(lv, "launched_with", None), dict)
            and lv.launched_with.get("launcher")}


def _lines_of(commands: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Every recorded command line per label: :attr:`RecordedCommands.lines`, or one each."""
    return getattr(commands, "lines", None) or {k: (v,) for k, v in commands.items()}


def match_workload(launch: Launch, labels: Sequence[str], commands: dict[str, str]
                   ) -> str | None:
    """The label the launched program is: its name (an interpreter's program: ``python3
    app.py``; the kernel of ``hpcds1mpi run stencil``), or the program of a recorded command
    line by that name, any of a label's when its rows ran several (:class:`RecordedCommands`).
    Only the program word names it: ``./wrap ./stencil`` runs ``wrap``, whatever it passes
    ``./stencil`` to (s42: it was read as the kernel stencil). A line the launch runs with
    other input files (``pvbatch sph.py`` for ``pvbatch wav.py {size}``) is another program,
    as train tells them apart (s45 tester E3)."""
    words = [w for w in [launch.program or launch.program_raw, *launch.args] if w]
    naming = _program_word(words)

    def ours(line: str) -> bool:  # not the program given other input files (s45 tester E3)
        return not _other_inputs(words, line)

    by_program: dict[str, list[tuple[str, str]]] = {}
    for label, lines in sorted(_lines_of(commands).items()):
        for command in lines:
            if tokens := split_command(command):
                by_program.setdefault(stem(tokens[program_at(tokens)]), []).append(
                    (label, command))
    for word in naming:
        if deck := _deck(word, words, launch):  # hpcds1mpi run --option (s40 B13)
            if deck in labels:
                return deck
            continue  # another deck than the plain kernel's runs
        lines = _lines_of(commands).get(stem(word), ())
        if stem(word) in labels and (not lines or any(map(ours, lines))):
            return stem(word)
        # one program swept as several: the one whose command the script's is, else whose
        # size it shows
        found = [x for x in by_program.get(stem(word), []) if ours(x[1])]
        if found:
            return max(found, key=lambda x: (fits_command(launch, x[1]), "{size}" in x[1]))[0]
    return None


def _other_inputs(words: list[str], line: str) -> tuple | None:
    """Where launched ``words`` (the program and its arguments) run recorded ``line``'s program
    with other input files, (theirs, the line's), by train's rule
    (:func:`~hpcds1mpi.surrogates.label_programs.other_inputs`); else None."""
    import shlex

    from hpcds1mpi.surrogates.label_programs import other_inputs

    return other_inputs(shlex.join(words), line)


def launched_program(launch: Launch) -> str | None:
    """The program ``launch`` runs as written, past its container runners and tools
    (``./myapp`` of ``srun nsys profile -o out ./myapp``: s42 tester F7), for the note that it
    matches no workload; the runner's or tool's own word where none is read past it."""
    from hpcds1mpi.launch.tool_wrappers import program_starts

    words = [w for w in [launch.program or launch.program_raw, *launch.args] if w]
    starts = program_starts(words)
    return words[starts[0]] if starts else (words[0] if words else None)


def _deck(word: str, words: list[str], launch: Launch) -> str | None:
    """The kernel deck an ``hpcds1mpi run KERNEL --option ...`` line runs
    (:func:`~hpcds1mpi.records.kernel_options.run_deck`); None for any other word.

    Raises:
        ConfigError: an ``hpcds1mpi run`` line whose options it refuses: the job fails at
            once, and it is no run of the plain kernel (s41 tester D14).
    """
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.records.kernel_options import run_deck

    try:
        return run_deck(stem(word), launch.args)
    except ConfigError as exc:
        if "run" not in words or "hpcds1mpi" not in map(stem, words):
            return None  # a program of a kernel's name: its arguments are its own
        raise ConfigError(f"line {launch.line}: hpcds1mpi run {stem(word)} refuses its "
                          f"options, so the job fails at once ({exc}); fix the --option as "
                          "hpcds1mpi run takes it (KEY=VALUE of the kernel's options, each "
                          "once)") from None


def _program_word(words: list[str]) -> list[str]:
    """The word that names a launched command's workload, in a list ([] for none): its program
    as the command check finds it (past exec wrappers, launchers and an interpreter's options;
    a shell's ``-c`` string read as its command, s41 tester B3; a container runner's command,
    as the label rule reads it; after a profiler or debugger, the program it runs, read the
    same way from there, :mod:`~hpcds1mpi.launch.tool_wrappers`: s42 review R1, tester F7),
    or for ``hpcds1mpi run KERNEL`` the kernel. No other argument names it."""
    from hpcds1mpi.decide.unmeasured_command import program_in

    from hpcds1mpi.launch.container_runners import container_program, image_name, \
        is_container_runner
    from hpcds1mpi.launch.tool_wrappers import is_tool, program_positions

    words = _shell_command(words) or words
    words = words[program_in(words):] if words else []
    if words and is_container_runner(words[0]) and (inside := container_program(words)):
        image, command = inside  # the command run in the image, as the label rule reads it
        return _program_word(words[command:]) if command is not None \
            else [image_name(words[image])]
    if words and is_tool(words[0]):  # a profiler or debugger: the program after its options
        return [w for k in program_positions(words) for w in _program_word(words[k:])]
    if not words or stem(words[0]) != "hpcds1mpi":
        return words[:1]
    if words[1:2] != ["run"]:
        return []
    k = 2
    while k < len(words) and words[k].startswith("-"):  # each of run's options but its
        k += 1 if "=" in words[k] or words[k] in _RUN_FLAGS else 2  # flags takes a value
    return words[k:k + 1]


def _shell_command(words: list[str]) -> list[str]:
    """The words of the ``-c`` string where ``words`` run a shell with one (the command
    check's reader: :func:`~hpcds1mpi.decide.unmeasured_command.shell_string`), else []."""
    import os

    from hpcds1mpi.decide.unmeasured_command import shell_string
    from hpcds1mpi.launch.wrapper_program import SHELLS

    if not words or not SHELLS.match(os.path.basename(words[0])):
        return []
    return shell_string(words[1:]) or []


def _size_argument(launch: Launch | None) -> str | None:
    """The value of a ``--size`` argument on the launch line, as written, or None."""
    args = launch.args if launch is not None else []
    for k, word in enumerate(args):
        if word == "--size" and k + 1 < len(args):
            return args[k + 1]
        if word.startswith("--size="):
            return word[7:]
    return None


def no_size(label: str, launch: Launch | None, template: str | None, bundle,
            script: JobScript | None = None) -> str:
    """Why ``script`` gives no size for ``label`` (read from ``launch``; None: no launch line
    was recognised, and ``script`` names the line that runs its program), and what to do
    (one line)."""
    head = f"no problem size for {label} in the script"
    if launch is None:  # s29 tester B5: it was "line ? runs ''"
        from hpcds1mpi.launch.script_unlaunched import LAUNCHERS_SAID, no_launch

        said = no_launch(script) if script is not None else \
            f"no launch line ({LAUNCHERS_SAID}) was recognised"
        return f"{head}: {said}; pass --size"
    given = _size_argument(launch)
    if given is not None:
        shown = given if len(given) <= 40 else given[:40] + "..."
        why = " (its $ expression could not be resolved)" if "$" in given or "`" in given \
            else ""
        return (f"{head}: line {launch.line} gives the size as {shown!r}, which is no whole "
                f"number{why}; pass --size")
    if not template:
        return f"{head}; pass --size"
    values = size_values(launch, template) if launch is not None else []
    if len(values) > 1:  # s29 tester C3: the first of -da_grid_x 120 -da_grid_y 480 was read
        shown = ", ".join(str(v) for v in values[:-1]) + f" and {values[-1]}"
        return (f"{head}: line {launch.line} gives {shown} where its measured command "
                f"{template!r} has {{size}} in each place, so which is the size is not "
                "guessed; pass --size")
    if "{size}" in template:
        ran = " ".join([launch.program or launch.program_raw, *launch.args]) if launch else ""
        unresolved = _unresolved_size(script, launch, template)
        if unresolved:  # the form is right, its value is not known here (s38 tester D5)
            return f"{head}: line {launch.line} runs {ran!r}, whose {unresolved}"
        fed = (f" (its input comes from {launch.stdin!r}: advise reads the program's arguments, "
               "not what a standard-input redirection feeds it)") if launch and launch.stdin else ""
        glued = launch and script and re.search(r"(?:^|\s)([0-9]{2,})([<>])", _line(
            script, launch.line))  # s41 tester B4: `./grow 8000>log`
        fed += (f" (the shell reads {glued.group(1)}{glued.group(2)} as a redirection of file "
                f"descriptor {glued.group(1)}, not as an argument: put a space before "
                f"'{glued.group(2)}')") if glued else ""
        return (f"{head}: line {launch.line if launch else '?'} runs {ran!r}, which does not "
                f"have the form of its measured command {template!r}, so the size cannot be "
                f"read{fed}; pass --size")
    from hpcds1mpi.decide.folder_size import folder_size_why, swept_workdir

    lo, hi = (getattr(bundle, "size_range", {}) or {}).get(label, (None, None))
    why = f"it was measured at one size only ({lo:g})" if lo is not None and lo == hi else \
        folder_size_why(script, launch, swept_workdir(bundle, label)) or \
        "the same command ran at every size measured: the size is in its input"
    return f"{head}: its measured command {template!r} does not show it ({why}); pass --size"


def _line(script: JobScript, number: int) -> str:
    """The text of line ``number`` of ``script``."""
    lines = script.text.split("\n")
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _unresolved_size(script: JobScript | None, launch: Launch, template: str) -> str:
    """What stands where the measured ``template`` has ``{size}``, when it is a ``$``
    expression not resolved here, why (a ``for`` loop's variable and its values, an array
    task's index) and what to pass, as the end of a sentence; "" otherwise."""
    from hpcds1mpi.launch.script_placeholders import placeholder_words

    hits = [launch.spans[k][2] for k, _ in placeholder_words(launch, template, "size", r"\S+")
            if k < len(launch.spans)]
    raw = next((w for w in hits if "$" in w or "`" in w), None)
    if raw is None:
        return ""
    said = (f"{raw} stands where its measured command {template!r} has {{size}}, but could "
            "not be resolved")
    name = re.search(r"\$\{?(\w+)", raw)
    values = _loop_values(script, launch, name.group(1)) if name and script and launch.in_loop \
        else None
    if values:
        shown = ", ".join(values[:-1]) + f" and {values[-1]}" if len(values) > 1 else values[0]
        return (f"{said}: it is a for loop's variable, so the line runs {len(values)} sizes "
                f"({shown}); pass --size with each in turn")
    setting = [st for st in (script.settings_before(launch) if script else [])
               if name and st.name == name.group(1)]
    if "ARRAY_TASK" in raw or (setting and "ARRAY_TASK" in setting[-1].value):
        return (f"{said}: it follows the array task's index, so each array task runs its own "
                "size; pass --size with each in turn")
    return f"{said}; pass --size"


def _loop_values(script: JobScript, launch: Launch, name: str) -> list[str] | None:
    """The words a ``for NAME in ...`` line before ``launch`` gives ``name`` (the last such
    line), None where there is none or its list is not plain words."""
    lines = script.text.split("\n")[:launch.line - 1]
    pattern = re.compile(rf"^\s*for\s+{re.escape(name)}\s+in\s+([^;]*?)\s*(?:;|$)")
    found = [m.group(1) for line in lines if (m := pattern.match(line))]
    words = found[-1].removesuffix(" do").split() if found else []
    return words if words and all(re.fullmatch(r"[\w.+-]+", w) for w in words) else None


def choose_launch(script: JobScript, labels: Sequence[str], commands: dict[str, str]
                  ) -> tuple[str | None, Launch | None]:
    """The workload the script runs and the launch line that runs it: the first launch whose
    program :func:`match_workload` knows; else (None, the launch that starts the most ranks,
    the first of equals), named in a note where there are several. The command line its size
    is read by: :meth:`RecordedCommands.line_for`. A launch in a function no call runs (one
    defined again before its call: :func:`~.script_functions.uncalled_launch`) is taken only
    where every launch is (s44 tester N4: ``b() { a; }`` read the ``a`` it never runs)."""
    launches = running_launches(script)
    for launch in launches:
        label = match_workload(launch, labels, commands)
        if label is not None:
            return label, launch
    _say_unmeasured_decks(script, labels)
    _say_other_inputs(script, launches, commands)
    if len(launches) < 2:
        return None, (launches[0] if launches else None)
    # s29 tester D3: the first of `srun -n 1 ./preprocess; srun -n 4 ./app; ...` was taken,
    # and its one rank spread over the advised layout
    main = max(launches, key=_ranks_started)
    tied = sum(_ranks_started(x) == _ranks_started(main) for x in launches) > 1
    script.note(f"line {main.line} `{_shown(script, main)}` taken as the workload among "
                f"{len(launches)} launches: no launched program matches a trained "
                "workload, and it starts the most ranks"
                + (" (the first of those starting as many)" if tied else "")
                + "; the other launches are left as written")
    return None, main


def _say_unmeasured_decks(script: JobScript, labels: Sequence[str]) -> None:
    """A note for each ``hpcds1mpi run KERNEL --option ...`` line of a deck the model was never
    trained on (``--option sweeps=10`` is its own workload, not plain stencil): it had read as
    "matches no workload" without why (s41 tester D14)."""
    for launch in script.launches:
        words = [w for w in [launch.program or launch.program_raw, *launch.args] if w]
        deck = next((d for w in _program_word(words) if (d := _deck(w, words, launch))), None)
        if deck is not None and deck not in labels:
            script.note(f"line {launch.line} runs the kernel deck {deck!r} (hpcds1mpi run with "
                        "--option), which the model was never trained on: measure it with "
                        "sweep --plan FILE (its options in the [[kernel]]'s extra), then "
                        "hpcds1mpi learn")


def _say_other_inputs(script: JobScript, launches: list[Launch], commands: dict[str, str]
                      ) -> None:
    """A note for each launch line that runs a trained program with other input files than
    its runs (``pvbatch sph.py`` where they ran ``pvbatch wav.py {size}``): it matches no
    workload, as train refuses two such lines under one label, and the note says why (s45
    tester E3: it was advised as "other arguments" at the measured runs' confidence)."""
    for launch in launches:
        if found := other_computation(launch, commands):
            label, line, (mine, theirs) = found
            script.note(f"line {launch.line} runs {launched_program(launch)} with "
                        f"{' '.join(mine)} where the runs of {label!r} ran {' '.join(theirs)} "
                        f"({line!r}): another computation, which train keeps apart as another"
                        " program, so the model never measured it; sweep it with --command "
                        "and its own --label")


def other_computation(launch: Launch, commands: dict[str, str]) -> tuple | None:
    """(label, its first command line, (the launch's input files, the line's)) for the first
    label whose every recorded line ``launch`` runs with other input files
    (:func:`_other_inputs`); None where none."""
    words = [w for w in [launch.program or launch.program_raw, *launch.args] if w]
    for label, lines in sorted(_lines_of(commands).items()):
        if (found := _other_inputs(words, lines[0])) and all(
                _other_inputs(words, line) for line in lines):
            return label, lines[0], found
    return None


def _ranks_started(launch: Launch) -> tuple[float, float]:
    """(ranks, nodes) ``launch`` starts as it writes them: one that does not say, or says it
    through a value unknown here, starts the whole allocation's (the most)."""
    def count(name: str) -> float:
        opt = launch.options.get(name)
        value = to_int(launch.value(name, launch.scope)) if opt is not None else None
        return float("inf") if value is None else value

    return count("ntasks"), count("nodes") if launch.kind == "slurm" else float("inf")


def _shown(script: JobScript, launch: Launch, width: int = 60) -> str:
    """The launch line as written, on one line, cut to ``width`` characters."""
    lines = script.text.split("\n")[launch.line - 1:launch.last_line]
    said = " ".join(" ".join(lines).replace("\\ ", " ").split())
    return said if len(said) <= width else said[:width - 3] + "..."
