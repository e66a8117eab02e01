"""How a job log's bytes become text: UTF-8 where they are UTF-8, else cp1252 (Latin-1), said.

An older site's passwd or LDAP, or an editor that re-saved the export, writes user and job names
in Latin-1. Decoding those bytes as UTF-8 with replacement turned every non-ASCII letter into
U+FFFD, silently, and two users ``jörg`` and ``jürg`` into one (s43 tester H1). Bytes that are
not valid UTF-8 are read as cp1252 instead (Latin-1 where cp1252 leaves a byte undefined), so
distinct byte strings stay distinct, and the report says how the file was read.
"""

from __future__ import annotations

from pathlib import Path

#: The fact a report carries for a file read as cp1252 / Latin-1.
NOT_UTF8 = ("not valid UTF-8 (first bad byte at offset {at}): read as cp1252/Latin-1, so names "
            "keep their letters; if that is not the file's encoding, convert it first "
            "(iconv -f <encoding> -t utf-8)")


def decode_log(data: bytes) -> tuple[str, str | None]:
    """``data`` as text, and the fact to report when it was not UTF-8 (else None).

    A byte-order mark (an editor's) is dropped: it is not part of the first line.
    """
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        at = exc.start
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:  # 0x81, 0x8d, 0x8f, 0x90, 0x9d: undefined in cp1252
        text = data.decode("latin-1")
    return text, NOT_UTF8.format(at=at)


def read_log_text(path: str | Path, facts: list[str]) -> str:
    """The text of the file at ``path`` (:func:`decode_log`); how it was decoded, when not as
    UTF-8, appended to ``facts``."""
    text, fact = decode_log(Path(path).read_bytes())
    if fact:
        facts.append(fact)
    return text
