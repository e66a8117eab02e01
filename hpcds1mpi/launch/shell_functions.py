"""A shell function's definition head written before its body on one line: ``run_sim() {
srun ./app; }``, ``function run_sim { srun ./app; }``, ``run_sim() ( srun ./app )`` (a
subshell body). The body's commands run where the function is called; the script reader reads them past the head (s42: a one-line function
holding the launch was not read as a launch)."""

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


def body_words(command: list["Word"]) -> list["Word"]:
    """The words a one-line function definition ``command`` runs (:func:`function_body`),
    with a subshell body's parentheses glued to its first and last words cut off
    (``run_sim() (srun ./app)``: ``srun``, ``./app``; s43's left list: its launch was not
    read); ``command`` itself for no definition."""
    from hpcds1mpi.launch.shell_words import Word

    raws = [w.raw for w in command]
    head = definition_head(raws)
    body = command[function_body(raws)]
    if not head or head[2] != "(" or not body:
        return body
    first = body[0]
    if raws[head[1] - 1] != "(":  # `(srun`: the opener glued to the first word
        body = [Word(first.text[1:], first.start + 1, first.end, first.raw[1:]), *body[1:]]
    if body[-1].raw == ")":  # `(srun ./app )`: a closer of its own past a glued opener
        body = body[:-1]
    last = body[-1] if body else None
    if last is not None and last.raw.endswith(")"):
        body[-1] = Word(last.text[:-1], last.start, last.end - 1, last.raw[:-1])
    return [w for w in body if w.raw]


__all__ = ["body_words", "definition_head", "function_body", "function_head"]
