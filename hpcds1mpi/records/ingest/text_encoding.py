"""How a job log's bytes become text: each line UTF-8 where it is UTF-8, else cp1252 (Latin-1), said.

An older site's passwd or LDAP, or an editor that re-saved the export, writes user and job names
in Latin-1. Decoding those bytes as UTF-8 with replacement turned every non-ASCII letter into
U+FFFD, silently, and two users ``jörg`` and ``jürg`` into one (s43 tester H1). Bytes that are
not valid UTF-8 are read as cp1252 instead (Latin-1 where cp1252 leaves a byte undefined), so
distinct byte strings stay distinct, and the report says how the file was read.
"""

from __future__ import annotations

from pathlib import Path

#: The fact a report carries for a file with lines read as cp1252 / Latin-1.
NOT_UTF8 = ("{bad} of {lines} lines not valid UTF-8 (first at line {first}): those read as "
            "cp1252/Latin-1 and the other {good} as UTF-8, so names keep their letters; if that "
            "is not the file's encoding, convert it first (iconv -f <encoding> -t utf-8)")


def decode_log(data: bytes) -> tuple[str, str | None]:
    """``data`` as text, and the fact to report when some of it was not UTF-8 (else None).

    Decoded line by line: two exports joined by ``cat`` may be one UTF-8 and one Latin-1, and
    a UTF-8 line read as cp1252 turns ``jürg`` into ``jÃ¼rg``, another user (s43 tester J2).
    A byte-order mark (an editor's) is dropped: it is not part of the first line.
    """
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        pass
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.splitlines(keepends=True)
    texts, bad = [], []
    for number, line in enumerate(lines, 1):
        try:
            texts.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            bad.append(number)
            texts.append(_cp1252(line))
    fact = NOT_UTF8.format(bad=len(bad), lines=len(lines), first=bad[0],
                           good=len(lines) - len(bad))
    return "".join(texts), fact


def _cp1252(line: bytes) -> str:
    try:
        return line.decode("cp1252")
    except UnicodeDecodeError:  # 0x81, 0x8d, 0x8f, 0x90, 0x9d: undefined in cp1252
        return line.decode("latin-1")


def read_log_text(path: str | Path, facts: list[str]) -> str:
    """The text of the file at ``path`` (:func:`decode_log`); how it was decoded, when not as
    UTF-8, appended to ``facts``."""
    text, fact = decode_log(Path(path).read_bytes())
    if fact:
        facts.append(fact)
    return text
