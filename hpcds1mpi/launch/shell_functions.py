"""A shell function's definition head written before its body on one line: ``run_sim() {
srun ./app; }``, ``function run_sim { srun ./app; }``, ``run_sim() ( srun ./app )`` (a
subshell body). The body's commands run where the function is called; the script reader reads them past the head (s42: a one-line function
holding the launch was not read as a launch)."""

from __future__ import annotations

import re

#: A function's name as bash takes it, with ``()`` glued to it or not.
_NAME_RE = re.compile(r"[A-Za-z_][\w.:-]*(\(\))?")


def function_head(words: list[str]) -> int:
    """How many of a simple command's ``words`` (as written) are a function definition's
    head, its ``{`` (or a subshell body's ``(``) included: 3 for ``run_sim () {``, 2 for
    ``run_sim() {``; 0 for none."""
    k = 1 if words[:1] == ["function"] else 0
    if len(words) <= k or not (match := _NAME_RE.fullmatch(words[k])):
        return 0
    k += 1
    if not match.group(1) and words[k:k + 1] == ["()"]:
        k += 1
    elif not match.group(1) and not words[0] == "function":
        return 0  # `name {` is no definition without `function` or `()`
    return k + 1 if words[k:k + 1] in (["{"], ["("]) else 0


def function_body(words: list[str]) -> slice:
    """The part of a simple command's ``words`` (as written) that a one-line function's
    body runs: past its head (:func:`function_head`), and before the ``)`` closing a
    subshell body (``run_sim() ( srun ./app )``: s43 tester J8); all of them for no head."""
    head = function_head(words)
    closed = head and words[head - 1] == "(" and words[-1:] == [")"]
    return slice(head, len(words) - 1 if closed else len(words))


__all__ = ["function_body", "function_head"]
