"""A path written into a one-line message: shown, and as a word of a shell command the message
suggests.

A suggested ``mv /tmp/camp B /tmp/campB`` moved two wrong things when pasted (s35 tester R4:
a campaign folder named ``camp B``), and a path with a newline printed raw broke a "one line"
error in two (R8). :func:`shell_word` is the one quoting of a path in a suggested command;
:func:`shown_path` the one way a path is shown in a message's prose.
"""

from __future__ import annotations

import os
import shlex


def _text(path: str | os.PathLike | bytes) -> str:
    return os.fsdecode(path)


def _plain(text: str) -> bool:
    """Whether ``text`` prints as itself on one line (no control character, no byte that is
    not UTF-8, which Python keeps as a lone surrogate)."""
    return text.isprintable() and not any("\udc80" <= ch <= "\udcff" for ch in text)


def _ansi_c(text: str) -> str:
    """``text`` as bash's ``$'...'``: one line, read back by the shell as the same bytes."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\\'":
            out.append("\\" + ch)
        elif "\udc80" <= ch <= "\udcff":  # a byte of the name that is not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x80:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch, f"\\x{code:02x}"))
        else:  # \xHH would be one raw byte: a character's UTF-8 bytes need \u
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "$'" + "".join(out) + "'"


def shell_word(path: str | os.PathLike | bytes) -> str:
    """``path`` as one word of a shell command to paste: quoted where the shell would split or
    expand it (``'/tmp/camp B'``), bash's ``$'...'`` where it holds a newline or another
    unprintable character, so that the command stays on one line."""
    text = _text(path)
    return shlex.quote(text) if _plain(text) else _ansi_c(text)


def shown_path(path: str | os.PathLike | bytes) -> str:
    """``path`` as a message shows it: as it is where it prints as itself, else escaped as
    :func:`shell_word` writes it (``$'/tmp/a\\nb'``), so that the message stays one line."""
    text = _text(path)
    return text if _plain(text) else _ansi_c(text)
