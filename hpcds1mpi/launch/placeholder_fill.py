"""Filling a command's placeholders (``{size}``, ``{ranks}``...) with one configuration's values.

One rule for every text the project fills — ``sweep --command`` / ``--setup`` / ``--workdir`` /
``--output-file``, ``tune``'s program, the written job scripts, advise's reading of a measured
command: ``{name}`` of a placeholder given a value becomes that value, and a placeholder's name
in doubled braces, ``{{size}}``, is the literal text ``{size}``, and in tripled ones,
``{{{size}}}``, the value in braces (``{20}``: a JSON or Lua input), as Python's ``str.format``
writes them (s44 tester O7: tripled had read as the literal ``{{size}}``; s44 tester N7: a sed template's ``{{size}}`` in ``--setup`` had become ``{20}``, so
it matched nothing and every configuration ran the template's unfilled input). Any other
brace stays as written (``awk '{print $1}'``, ``${HOME}``, an awk program's ``}}``), as before.
"""

from __future__ import annotations

import re

from collections.abc import Mapping

_WORD = r"([A-Za-z_][A-Za-z0-9_-]*)"
#: ``{{{word}}}`` (a placeholder in literal braces), ``{{word}}`` (an escaped placeholder) or
#: ``{word}``, read left to right.
_BRACES = re.compile(r"\{\{\{" + _WORD + r"\}\}\}|\{\{" + _WORD + r"\}\}|\{" + _WORD + r"\}")


def fill(text: str, values: Mapping[str, object]) -> str:
    """``text`` with each ``{key}`` of ``values`` replaced by its value and each ``{{word}}``
    written ``{word}``; other braces as written."""
    def one(m: re.Match) -> str:
        braced, escaped, word = m.groups()
        if escaped is not None:
            return "{" + escaped + "}"
        if braced is not None:
            return "{" + str(values[braced]) + "}" if braced in values else m.group(0)
        return str(values[word]) if word in values else m.group(0)

    return _BRACES.sub(one, text)


def braced_words(text: str) -> list[str]:
    """The words ``text`` holds as ``{word}`` that :func:`fill` may replace (not ``{{word}}``),
    in order, each once."""
    return list(dict.fromkeys(m.group(1) or m.group(3) for m in _BRACES.finditer(text or "")
                              if m.group(2) is None))


def uses(text: str | None, key: str) -> bool:
    """Whether ``text`` holds the placeholder ``{key}`` to fill (``{{key}}`` is no use)."""
    return key in braced_words(text or "")


__all__ = ["braced_words", "fill", "uses"]
