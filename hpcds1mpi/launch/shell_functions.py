"""A shell function's definition head written before its body on one line: ``run_sim() {
srun ./app; }``, ``function run_sim { srun ./app; }``, ``run_sim() ( srun ./app )`` (a
subshell body). The body's commands run where the function is called; the script reader reads them past the head (s42: a one-line function
holding the launch was not read as a launch). A subshell's parentheses, a body's or a
top-level line's (``(cd run && srun ./app 20)``), are cut off its words by one rule."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.shell_words import Word

#: A function's name as bash takes it, with ``()`` glued to it or not.
_NAME_RE = re.compile(r"[A-Za-z_][\w.:-]*(\(\))?")
#: A name with ``()`` and the body's opener glued to it (``run_sim(){``).
_GLUED_RE = re.compile(r"([A-Za-z_][\w.:-]*)\(\)([{(])")


def definition_head(words: list[str]) -> tuple[str, int, str] | None:
    """The function a simple command's ``words`` (as written) begin to define: (its name, how
    many words its head is, its body's opener ``{`` or ``(`` included, that opener — "" where
    the body opens on a later line: ``run_sim()`` alone); None for no definition. The one
    reader of a head, for the script reader and for the work besides the launch (s43 review
    R17: two readers had disagreed, ``run_sim(){`` glued was a function to one alone)."""
    k = 1 if words[:1] == ["function"] else 0
    if len(words) <= k:
        return None
    if glued := _GLUED_RE.fullmatch(words[k]):  # `run_sim(){`
        return glued.group(1), k + 1, glued.group(2)
    if not (match := _NAME_RE.fullmatch(words[k])):
        return None
    name = words[k][:-2] if match.group(1) else words[k]
    k += 1
    if not match.group(1) and words[k:k + 1] == ["()"]:
        k += 1
    elif not match.group(1) and not words[0] == "function":
        return None  # `name {` is no definition without `function` or `()`
    if words[k:k + 1] in (["{"], ["("]):
        return name, k + 1, words[k]
    if words[k:k + 1] and words[k].startswith("("):
        return name, k, "("  # a subshell body glued to its parenthesis: `post() (cmd)`
    return (name, k, "") if k == len(words) else None


def function_head(words: list[str]) -> int:
    """How many of a simple command's ``words`` (as written) are a function definition's
    head, its ``{`` (or a subshell body's ``(``) included: 3 for ``run_sim () {``, 2 for
    ``run_sim() {``, 1 for ``run_sim(){``; 0 for none, and for a head whose body opens on a
    later line."""
    head = definition_head(words)
    return head[1] if head and head[2] else 0


def function_body(words: list[str]) -> slice:
    """The part of a simple command's ``words`` (as written) that a one-line function's
    body runs: past its head (:func:`function_head`), and before the ``)`` closing a
    subshell body (``run_sim() ( srun ./app )``: s43 tester J8); all of them for no head."""
    head = function_head(words)
    closed = head and words[head - 1] == "(" and words[-1:] == [")"]
    return slice(head, len(words) - 1 if closed else len(words))


def _bare(raw: str) -> str:
    """A word as written with its quoted text taken out."""
    return re.sub(r"'[^']*'|\"(\\.|[^\"])*\"", "", raw)


def _unclosed(raw: str) -> bool:
    """Whether a word as written ends with a ``)`` that closes no ``(`` of its own (quoted
    text skipped): ``20)`` closing a subshell, not ``$(nproc)`` nor ``"a)"``."""
    bare = _bare(raw)
    return bare.endswith(")") and bare.count(")") > bare.count("(")


def _unopened(raw: str) -> bool:
    """Whether a word as written starting with ``(`` leaves it open (quoted text skipped):
    ``(srun``, not a ``case`` arm's ``(standard)``, which closes itself (s45 review RV1: it
    opened a subshell that the next array's ``)`` closed, dropping an export between)."""
    bare = _bare(raw)
    return bare.count("(") > bare.count(")")


def _cut(command: list["Word"]) -> tuple[list["Word"], int, int]:
    """(:func:`subshell_words`, how many openers it cut, how many closers)."""
    from hpcds1mpi.launch.shell_words import Word

    body, opened, closed = list(command), 0, 0
    while body and body[0].raw.startswith("(") and not body[0].raw.startswith("((") and not (
            len(body) > 1 and not _unopened(body[0].raw)):
        first = body.pop(0)
        opened += 1
        if first.raw != "(":
            body.insert(0, Word(first.text[1:], first.start + 1, first.end, first.raw[1:]))
    while body and _unclosed(body[-1].raw):
        last = body.pop()
        closed += 1
        if last.raw != ")":
            body.append(Word(last.text[:-1], last.start, last.end - 1, last.raw[:-1]))
    return body, opened, closed


def subshell_words(command: list["Word"]) -> list["Word"]:
    """The words a simple command ``command`` runs, with the parentheses of a subshell it
    stands in cut off: a ``(`` before its first word, alone or glued (``(srun``, not the
    arithmetic ``((``), and a ``)`` after its last, alone or glued (``20)``). The closer may
    end a later command of the subshell (``(cd run && srun ./app 20)``), so it is read by
    balance, not paired with an opener here. One rule for function bodies and top-level
    lines (s44 tester O9: ``(srun -n 2 ./app 20)`` was no launch, ``20)`` its size word)."""
    return _cut(command)[0]


def subshell_edges(command: list["Word"]) -> tuple[int, int]:
    """(how many subshells a simple command ``command`` opens before its first word, how many
    it closes after its last), by :func:`subshell_words`'s rule, past a one-line function's
    head (a subshell body closed on its line opens none; one going on past it, ``run_sim()
    (``, opens one). A closer counts only where the words hold more ``)`` than ``(``:
    ``arr=(1 2 3)`` closes nothing. The script reader ends a subshell's assignments at its
    closer (s45 S1: ``( export X=8; ./prep )`` had set X for the launch after it)."""
    raws = [w.raw for w in command]
    body, head = function_body(raws), function_head(raws)
    _, opened, closed = _cut(command[body])
    opened += bool(head) and raws[head - 1] == "(" and body.stop == len(raws)
    net = opened + sum(_bare(raw).count(")") - _bare(raw).count("(") for raw in raws[body])
    return opened, min(closed, max(net, 0))


def body_words(command: list["Word"]) -> list["Word"]:
    """The words a one-line function definition ``command`` runs (:func:`function_body`),
    with a subshell's parentheses cut off (:func:`subshell_words`: ``run_sim() (srun
    ./app)`` runs ``srun``, ``./app``; s43's left list: its launch was not read); the words
    of ``command`` itself, so cut, for no definition."""
    return subshell_words(command[function_body([w.raw for w in command])])


__all__ = ["body_words", "definition_head", "function_body", "function_head",
           "subshell_edges", "subshell_words"]
