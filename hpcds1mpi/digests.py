"""SHA-256 of bytes and of files, one implementation for every checksum the tool keeps: a
bundle's file hashes, an export's checksum file, a campaign's plan, the guard cache's key.

CPython's builtin ``_sha256`` where there is one (the same digest; hashlib's OpenSSL binding
costs a cold ``recommend`` ~4 ms to load); files are read in 1 MiB blocks, never whole.
"""

from __future__ import annotations

import os

__all__ = ["sha256", "sha256_file"]


def sha256(data: bytes = b""):
    """A SHA-256 object over ``data`` (``.update`` more, ``.hexdigest()`` at the end)."""
    try:
        from _sha256 import sha256 as new  # CPython <= 3.11
    except ImportError:  # pragma: no cover - other versions and interpreters
        from hashlib import sha256 as new
    return new(data)


def sha256_file(path: str | os.PathLike) -> str:
    """The hex SHA-256 of the file at ``path``'s bytes."""
    digest = sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
