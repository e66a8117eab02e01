"""Filling a command's placeholders (``{size}``, ``{ranks}``...) with one configuration's values.

One rule for every text the project fills — ``sweep --command`` / ``--setup`` / ``--workdir`` /
``--output-file``, ``tune``'s program, the written job scripts, advise's reading of a measured
command: ``{name}`` of a placeholder given a value becomes that value, and a placeholder's name
in doubled braces, ``{{size}}``, is the literal text ``{size}``, as Python's ``str.format``
writes it (s44 tester N7: a sed template's ``{{size}}`` in ``--setup`` had become ``{20}``, so
it matched nothing and every configuration ran the template's unfilled input). Any other
brace stays as written (``awk '{print $1}'``, ``${HOME}``, an awk program's ``}}``), as before.
"""

from __future__ import annotations

import re

from collections.abc import Mapping

#: ``{{word}}`` (an escaped placeholder) or ``{word}``, read left to right.
_BRACES = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_-]*)\}\}|\{([A-Za-z_][A-Za-z0-9_-]*)\}")


def fill(text: str, values: Mapping[str, object]) -> str:
    """``text`` with each ``{key}`` of ``values`` replaced by its value and each ``{{word}}``
    written ``{word}``; other braces as written."""
    def one(m: re.Match) -> str:
        if m.group(1) is not None:
            return "{" + m.group(1) + "}"
        return str(values[m.group(2)]) if m.group(2) in values else m.group(0)

    return _BRACES.sub(one, text)


def braced_words(text: str) -> list[str]:
    """The words ``text`` holds as ``{word}`` that :func:`fill` may replace (not ``{{word}}``),
    in order, each once."""
    return list(dict.fromkeys(m.group(2) for m in _BRACES.finditer(text or "")
                              if m.group(2) is not None))


def uses(text: str | None, key: str) -> bool:
    """Whether ``text`` holds the placeholder ``{key}`` to fill (``{{key}}`` is no use)."""
    return key in braced_words(text or "")


__all__ = ["braced_words", "fill", "uses"]
