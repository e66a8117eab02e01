"""Words of a program command that a shell would expand, which hpcds1mpi passes as written.

``sweep --command``, ``recommend --program`` and ``tune --program`` are split into argv like a
shell splits a line (quotes honoured) but never run through one, and every script written
from them quotes each word: ``~/in.dat``, ``$HOME/in.dat``, ``$(id)``, a backtick and
``*.c`` reach the program as that very text (s39 tester D7: "ERROR: cannot open ~/in.dat",
and a program writing to such a path wrote into a folder named ``~``). Redirections and pipes
were refused already (:func:`hpcds1mpi.launch.program.check_no_shell_syntax`); these are
refused the same way, naming the word, its expanded value where it is known here, and the
single-quoted form that passes it as written. Expansions are read as bash reads them: none
inside single quotes or after a backslash; ``$`` and backticks inside double quotes too;
``~`` only at a word's start; ``*``, ``?`` and ``[...]`` outside quotes, and only where the
pattern names files here: one that matches none, bash passes as written too
(``model.layers=[64,64]``, ``http://h/?a=b``: the review of s39).
"""

from __future__ import annotations

import glob
import os
import shlex

from hpcds1mpi.errors import ConfigError

#: What may follow ``$`` for a shell to expand it (a name, ``{``, ``(``, a positional or
#: special parameter); outside double quotes also ``'`` / ``"`` (``$'\t'`` quoting).
_AFTER_DOLLAR = "{(@*#?$!-_0123456789"
_ANSI_QUOTES = "'\""


def unexpanded_words(text: str) -> list[str]:
    """The words of ``text`` (as written, quotes and all) that a shell would expand, in order,
    each once; [] for none (also for text whose quotes do not balance: the split says so)."""
    found, word, quote, k = [], [], None, 0
    expands = pattern = False
    while k < len(text):
        c = text[k]
        after = text[k + 1] if k + 1 < len(text) else ""
        if quote is None and c.isspace():
            found += ["".join(word)] if expands or pattern and _names_files(word) else []
            word, expands, pattern = [], False, False
            k += 1
            continue
        if c == "\\" and quote != "'":
            word.append(text[k:k + 2])
            k += 2
            continue
        word.append(c)
        k += 1
        if quote == "'":
            quote = None if c == "'" else quote
        elif c == "`" or (c == "$" and after and (
                (after.isascii() and after.isalpha()) or after in _AFTER_DOLLAR
                or (quote is None and after in _ANSI_QUOTES))):  # a last "$" stays "$"
            expands = True
        elif quote == '"':
            quote = None if c == '"' else quote
        elif c in "'\"":
            quote = c
        elif c == "~" and len(word) == 1:
            expands = True
        elif c in "*?" or (c == "[" and "]" in _rest(text, k)):
            pattern = True
    found += ["".join(word)] if expands or pattern and _names_files(word) else []
    return list(dict.fromkeys(found)) if quote is None else []


def _names_files(word: list[str]) -> bool:
    """Whether the glob pattern ``word`` (its characters as written) matches a file in the
    current folder, so that bash would replace it."""
    try:
        parts = shlex.split("".join(word))
    except ValueError:
        return False
    return bool(parts) and bool(glob.glob(parts[0]))


def _rest(text: str, k: int) -> str:
    """The rest of the word from ``k`` (up to the next blank)."""
    return text[k:].split(None, 1)[0] if text[k:].strip() else ""


def check_no_expansion(text: str, option: str = "program") -> None:
    """Refuse a command line with words a shell would expand (:func:`unexpanded_words`).

    Raises:
        ConfigError: one line naming up to three such words, the first one's expanded value
            where it is known here, and its single-quoted form.
    """
    words = unexpanded_words(text)
    if not words:
        return
    said = [repr(w) for w in words[:3]]
    listed = said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"
    first = words[0]
    try:
        literal = shlex.join(shlex.split(first))
    except ValueError:
        literal = shlex.quote(first)
    expanded = os.path.expandvars(os.path.expanduser(first)) if "`" not in first else first
    value = f"the value itself (here {shlex.quote(expanded)}), or " if (
        expanded != first and "$" not in expanded and "*" not in expanded
        and "?" not in expanded) else "the value itself, or "
    raise ConfigError(
        f"{option} is not run by a shell: {listed} would reach the program as written, not "
        f"expanded (~, $VAR, $(...), `...`, * ? [...]); give {value}quote the word to pass it "
        f"as written ({literal})")
