"""A job script's shell functions, for the work it runs besides its launch
(:mod:`~hpcds1mpi.decide.work_after_launch`): where each is defined, which definition a
call runs, and whether its body launches or works.

A body runs where the function is called, as the definition last given before the call
has it (a function defined again before its call runs its new body; s43 tester J8), its
body in braces or in parentheses (``post() ( python3 plot.py )``, a subshell). The first
call of a definition whose body holds the launch is that launch (s42 tester F5); a later
call launches again and is work, as is a first call inside a loop. A body's own calls
resolve when it runs, as bash does: at the outer call's line, by the definitions given
before it; ``outer() { inner; }`` called on line 7 launches there where ``inner`` holds the
launch, and ``b() { a; }`` runs the ``a`` last defined before ``b``'s call (s44 tester
N4). A call of a definition whose body runs no work (``post() { :; }``) is none. A definition holding the launch that
no call runs never runs it: :func:`uncalled_launch` says so.
"""

from __future__ import annotations

import functools
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
    aside); ``each``: (line, its work) of each line of its body."""

    name: str
    first: int
    last: int
    launches: bool
    works: bool | str
    each: tuple = ()


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
        body.append((number, works(text)))
        if opener and depth <= 0:
            holds = any(first <= n <= number for n in launch_lines)
            found.append(Definition(name, first, number, holds,
                                    next(filter(None, (w for _, w in body)), False),
                                    tuple(body)))
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
    for number, name in _launch_calls(script, defined).values():
        if _only_launches(script, defined, name, number):
            found.setdefault(number, set()).add(name)
    return {n: frozenset(names) for n, names in found.items()}


def launch_call(script: "JobScript", defined: list[Definition],
                launch: "Launch") -> tuple[Definition, int] | None:
    """The definition whose body holds ``launch`` and the line of the call that runs it
    (where the launch runs: s43 review R13, work between the definition and the call had
    been read as after the launch); None for a launch outside a called function."""
    return next(((d, number) for d, (number, _) in _launch_calls(script, defined).items()
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


def running_launches(script: "JobScript") -> list["Launch"]:
    """``script``'s launches but those in a function no call runs (:func:`uncalled_launch`:
    ``a`` defined again before ``b() { a; }`` is called); all of them where every one is
    such, so that the one read is said never to run."""
    defined = definitions(script)
    holders = [d for d in defined if d.launches]
    if not holders:
        return list(script.launches)
    called = {d for number, _, c in _calls(script, defined)
              for d in _reached(script, defined, c, number)}
    unrun = [d for d in holders if d not in called]
    return [x for x in script.launches
            if not any(d.first <= x.line <= d.last for d in unrun)] or list(script.launches)


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
    for called, words in _commands_called(text):
        loop = words[:1] in (["for"], ["while"], ["until"], ["select"])
        yield called, int(loop) - ("done" in words)


def _commands_called(text: str):
    """(the name it calls, its words) of each simple command of ``text``."""
    from hpcds1mpi.launch.exec_wrappers import ASSIGNMENT

    if head := _head(text):  # a definition's head calls nothing
        text = head[2]
    for words, _ in simple_commands(line_commands(text)):
        yield next((w for w in words if w not in _CONTROL and not ASSIGNMENT.match(w)),
                   ""), words


def _launch_calls(script: "JobScript", defined: list[Definition]
                  ) -> dict[Definition, tuple[int, str]]:
    """Each definition holding a launch with the line of its first call outside a loop
    (a call inside one launches once per pass: work) and the name called there: its own,
    or that of a function whose body calls it (:func:`_reached`)."""
    inside = {n for d in defined for n in range(d.first, d.last + 1)}
    found: dict[Definition, tuple[int, str]] = {}
    loops = 0
    for number, text in lines_after(script.text, 1, 0):
        if number in inside:
            continue
        for name, loop in _names_called(text):
            loops += loop
            if loops > 0 or (runs := _runs(defined, name, number)) is None:
                continue
            for d in _reached(script, defined, runs, number):
                if d.launches:
                    found.setdefault(d, (number, name))
    return found


def _runs(defined: list[Definition], name: str, at: int) -> Definition | None:
    """The definition a call of ``name`` runs when it runs on line ``at``: the last one
    ended before it; None for no function."""
    runs = [d for d in defined if d.name == name and d.last < at]
    return runs[-1] if runs else None


def _body_names(script: "JobScript", d: Definition) -> list[tuple[int, list[str]]]:
    """(line, the names its simple commands call) of each line of ``d``'s body."""
    return list(_body_names_in(script.text, d.first, d.last))


@functools.lru_cache(maxsize=256)
def _body_names_in(text: str, first: int, last: int) -> tuple:
    """:func:`_body_names`, read once per body: every call of a function reads its body
    (a generated script may call one thousands of times)."""
    lines = _lines(text)
    return tuple((n, [name for name, _ in _names_called(lines[n]) if name])
                 for n in range(first, last + 1) if n in lines)


@functools.lru_cache(maxsize=8)
def _lines(text: str) -> dict[int, str]:
    """Line number -> the shell line (:func:`~.shell_lines.lines_after`) of ``text``."""
    return dict(lines_after(text, 1, 0))


def _reached(script: "JobScript", defined: list[Definition], called: Definition, at: int,
             seen: tuple = ()) -> list[Definition]:
    """``called`` and each definition its body runs when it is called on line ``at``, its
    body's calls resolved there (bash reads them when the body runs), recursion cut."""
    found = [called]
    for _, names in _body_names(script, called):
        for name in names:
            inner = _runs(defined, name, at)
            if inner is None or inner in found or inner in seen:
                continue
            found += [d for d in _reached(script, defined, inner, at, (*seen, *found))
                      if d not in found]
    return found


def called_work(script: "JobScript", defined: list[Definition], name: str, at: int,
                works: Callable[[str], "bool | str"]) -> bool | str:
    """The first work (``works``: a command's, as :func:`definitions` takes it) a call of
    ``name`` on line ``at`` runs past its body's calls that only launch
    (:func:`_only_launches`): ``outer() { inner; python3 post.py; }`` runs ``python3
    post.py`` besides ``inner``'s launch; its definition's first work where it runs no
    other, False for no function."""
    called = _runs(defined, name, at)
    if called is None:
        return False
    lines = _lines(script.text)
    for number in range(called.first, called.last + 1):
        for inner, words in _commands_called(lines.get(number, "")):
            if inner and _only_launches(script, defined, inner, at, (called,)):
                continue
            if found := works(" ".join(words)):
                return found
    return called.works


def _only_launches(script: "JobScript", defined: list[Definition], name: str, at: int,
                   seen: tuple = ()) -> bool:
    """Whether a call of ``name`` on line ``at`` is the launch and no other work: it runs
    the definition holding the launch (its other lines are read where written), or one
    each working line of which only calls such a function."""
    called = _runs(defined, name, at)
    if called is None or called in seen:
        return False
    if called.launches:
        return True
    works = dict(called.each)
    return all(not works.get(number) or (names and all(
        _only_launches(script, defined, n, at, (*seen, called)) for n in names))
        for number, names in _body_names(script, called))


def _called_anywhere(script: "JobScript", defined: list[Definition], holder: Definition) -> bool:
    """Whether a call runs ``holder``: one outside the bodies while it is the last
    definition, or one in the body of a function so called, resolved at that call."""
    return any(holder in _reached(script, defined, d, number)
               for number, _, d in _calls(script, defined))


__all__ = ["Definition", "body_lines", "called_work", "definitions", "idle_calls", "launch_call",
           "running_launches", "uncalled_launch"]
