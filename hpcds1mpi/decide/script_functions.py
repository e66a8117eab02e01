"""A job script's shell functions, for the work it runs besides its launch
(:mod:`~hpcds1mpi.decide.work_after_launch`): where each is defined, which definition a
call runs, and whether its body launches or works.

A body runs where the function is called, as the definition last given before the call
has it (a function defined again before its call runs its new body; s43 tester J8), its
body in braces or in parentheses (``post() ( python3 plot.py )``, a subshell). The first
call of a definition whose body holds the launch is that launch (s42 tester F5); a later
call launches again and is work, as is a first call inside a loop. A call of a definition
whose body runs no work (``post() { :; }``) is none. A definition holding the launch that
no call runs never runs it: :func:`uncalled_launch` says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NamedTuple

from hpcds1mpi.decide.shell_lines import line_commands, lines_after, simple_commands

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Words that open or end a structure before a command (the called name follows them).
_CONTROL = frozenset({"if", "then", "else", "elif", "fi", "while", "until", "do", "done",
                      "{", "}", "(", ")", "!", "command", "builtin"})


class Definition(NamedTuple):
    """One definition of a shell function: its name, its first and last lines, whether its
    body holds a launch, and the first work it runs (or whether it runs any; ``launches``
    aside)."""

    name: str
    first: int
    last: int
    launches: bool
    works: bool | str


def definitions(script: "JobScript",
                works: Callable[[str], "bool | str"] = lambda line: True) -> list[Definition]:
    """Each function definition of ``script``, in the order written; ``works``: the work a
    line of a body runs, or whether it runs any (the caller's reading, by the rules of a
    command written where the function is called; by default each line does)."""
    launch_lines = {n for x in script.launches for n in range(x.line, x.last_line + 1)}
    found: list[Definition] = []
    name, opener, first, depth, body = "", "", 0, 0, []
    for number, text in lines_after(script.text, 1, 0):
        if not name and (head := _head(text)):
            (name, opener, text), first, depth, body = head, number, 0, []
        elif not name:
            continue
        opener = opener or text.lstrip()[:1]
        depth += _depth(text, opener)
        body.append(text)
        if opener and depth <= 0:
            holds = any(first <= n <= number for n in launch_lines)
            found.append(Definition(name, first, number, holds,
                                    next(filter(None, map(works, body)), False)))
            name = ""
    return found


def body_lines(script: "JobScript", defined: list[Definition]) -> set[int]:
    """The lines of the bodies that do not run where they are written: every definition's
    but a called one's holding the launch (the launch is read at its own line)."""
    called = _launch_calls(script, defined)
    return {n for d in defined if not (d.launches and d in called)
            for n in range(d.first, d.last + 1)}


def idle_calls(script: "JobScript", defined: list[Definition]) -> dict[int, frozenset[str]]:
    """The lines with a call that runs no work, each with the names so called: the first
    call of the definition holding the launch (the launch itself), and a call of a
    definition whose body runs no work."""
    found: dict[int, set[str]] = {}
    for number, name, d in _calls(script, defined):
        if not d.works and not d.launches:
            found.setdefault(number, set()).add(name)
    for d, number in _launch_calls(script, defined).items():
        found.setdefault(number, set()).add(d.name)
    return {n: frozenset(names) for n, names in found.items()}


def launch_call(script: "JobScript", defined: list[Definition],
                launch: "Launch") -> tuple[Definition, int] | None:
    """The definition whose body holds ``launch`` and the line of the call that runs it
    (where the launch runs: s43 review R13, work between the definition and the call had
    been read as after the launch); None for a launch outside a called function."""
    return next(((d, number) for d, number in _launch_calls(script, defined).items()
                 if d.first <= launch.line <= d.last), None)


def uncalled_launch(script: "JobScript", launch: "Launch") -> str:
    """The one line for a ``launch`` in a function's body that no call runs — never called,
    or defined again before its call — so that the job never launches; "" for none."""
    defined = definitions(script)
    holder = next((d for d in defined if d.first <= launch.line <= d.last), None)
    if holder is None or _called_anywhere(script, defined, holder):
        return ""
    again = next((d.first for d in defined if d.name == holder.name and d.first > holder.last),
                 0)
    why = (f"defined again on line {again} before any call" if again else "never called")
    return (f"line {launch.line}: the launch is in the function `{holder.name}` (line "
            f"{holder.first}), which is {why}, so the job never runs it; call `{holder.name}` "
            f"after that definition")


def _head(text: str) -> tuple[str, str, str] | None:
    """(name, opener, the line's text from its opener on) of a line that begins a function's
    definition (:func:`~hpcds1mpi.launch.shell_functions.definition_head`); None for none."""
    from hpcds1mpi.launch.shell_functions import definition_head

    words = next(iter(line_commands(text)), [])
    if not (head := definition_head(words)):
        return None
    name, size, opener = head
    at = 0
    for word in words[:size]:  # past the head's words as written, its opener included
        at = text.index(word, at) + len(word)
    rest = text[at:].lstrip()
    return name, opener, rest if rest.startswith(opener) else f"{opener} {rest}"


def _depth(text: str, opener: str) -> int:
    """How many braces (``opener`` ``{``) or parentheses (``(``) ``text`` opens, less those
    it closes."""
    words = [w for c in line_commands(text) for w in c]
    if opener == "{":
        return sum({"{": 1, "}": -1}.get(w, 0) for w in words)
    return sum(w.count("(") - w.count(")") for w in words if not w.startswith("$("))


def _calls(script: "JobScript", defined: list[Definition]):
    """(line, name, the definition it runs) of each call of a function outside the bodies,
    with ``None``'s left out: the definition is the last one ended before the call."""
    inside = {n for d in defined for n in range(d.first, d.last + 1)}
    for number, text in lines_after(script.text, 1, 0):
        if number in inside:
            continue
        for name, _loops in _names_called(text):
            runs = [d for d in defined if d.name == name and d.last < number]
            if runs:
                yield number, name, runs[-1]


def _names_called(text: str):
    """(the name each simple command of ``text`` calls, whether it opens or closes a loop:
    +1, -1, 0)."""
    from hpcds1mpi.launch.exec_wrappers import ASSIGNMENT

    if head := _head(text):  # a definition's head calls nothing
        text = head[2]
    for words, _ in simple_commands(line_commands(text)):
        called = next((w for w in words if w not in _CONTROL and not ASSIGNMENT.match(w)), "")
        loop = words[:1] in (["for"], ["while"], ["until"], ["select"])
        yield called, int(loop) - ("done" in words)


def _launch_calls(script: "JobScript", defined: list[Definition]) -> dict[Definition, int]:
    """Each definition holding a launch with the line of its first call outside a loop
    (a call inside one launches once per pass: work)."""
    inside = {n for d in defined for n in range(d.first, d.last + 1)}
    found: dict[Definition, int] = {}
    loops = 0
    for number, text in lines_after(script.text, 1, 0):
        if number in inside:
            continue
        for name, loop in _names_called(text):
            loops += loop
            runs = [d for d in defined if d.name == name and d.last < number]
            if runs and runs[-1].launches and loops <= 0:
                found.setdefault(runs[-1], number)
    return found


def _called_anywhere(script: "JobScript", defined: list[Definition], holder: Definition) -> bool:
    """Whether a call may run ``holder``: one outside the bodies while it is the last
    definition, or one in another function's body (run when that one is called)."""
    if any(d == holder for _, _, d in _calls(script, defined)):
        return True
    others = {n for d in defined if d != holder for n in range(d.first, d.last + 1)}
    return any(name == holder.name for number, text in lines_after(script.text, 1, 0)
               if number in others for name, _ in _names_called(text))


__all__ = ["Definition", "body_lines", "definitions", "idle_calls", "launch_call",
           "uncalled_launch"]
