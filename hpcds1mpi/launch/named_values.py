"""A placeholder given as a ``name=value`` word: libctl's ``res={size}``, make's ``N={size}``.

Meep's ``meep res={size} wg.ctl`` launched as ``meep res=18 T=20 wg.ctl`` gave advise no size
(s32 tester U4): ``T=20`` shifts the words, and ``res=18`` is no ``-option``, so neither the
word-by-word reading nor the options-aside one took it. A ``name=value`` word names its
value: where the measured command has ``NAME=...{key}...`` once and the launched command
one word ``NAME=...`` (after its program) that fits it, that word gives the value, whatever
else the line adds or leaves out.
"""

from __future__ import annotations

import re
from typing import Callable

#: A ``name=`` word's name: libctl's and make's variables, not an option (``--n=``).
_NAME = re.compile(r"^([A-Za-z_][\w.]*)=")


def named_hits(launched: list[str], recorded: list[str], key: str, value: str,
               word_pattern: Callable[..., str]) -> list[tuple[int, re.Match]]:
    """(index in ``launched``, its match with ``value`` as group 1) of each word that gives
    ``{key}`` as a ``NAME=`` word of ``recorded`` (the measured command's words after its
    program; ``launched``: the launched command's); [] where a name is given twice on either
    side or its word does not fit. ``word_pattern(token, key="", group="")``: a recorded
    word as a regex (:func:`~hpcds1mpi.launch.script_placeholders.word_pattern`)."""
    found = []
    for token in recorded:
        name = _NAME.match(token)
        if "{" + key + "}" not in token or name is None:
            continue
        prefix = name.group(0)
        if sum(t.startswith(prefix) for t in recorded) != 1:
            return []
        given = [i for i, word in enumerate(launched) if word.startswith(prefix)]
        if len(given) != 1:
            return []
        m = re.fullmatch(word_pattern(token, key, f"({value})"), launched[given[0]])
        if m is None:
            return []
        found.append((given[0], m))
    return found
