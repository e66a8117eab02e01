"""A shell function's definition head written before its body on one line: ``run_sim() {
srun ./app; }``, ``function run_sim { srun ./app; }``, ``run_sim() ( srun ./app )`` (a
subshell body). The body's commands run where the function is called; the script reader reads them past the head (s42: a one-line function
holding the launch was not read as a launch)."""

from __future__ import annotations

import re

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


__all__ = ["definition_head", "function_body", "function_head"]
