"""The shared libraries a binary loads, read without running it.

:func:`elf_needed` reads the ``DT_NEEDED`` entries of an ELF file's dynamic section with the
standard library alone (``readelf`` is not on every cluster); :func:`ldd_text` asks ``ldd``
which files the loader resolves, where ``ldd`` exists. Which of those libraries is an MPI, and
of which family, is :mod:`hpcds1mpi.launch.mpi_family`'s question.
"""

from __future__ import annotations

import shutil
import struct
import subprocess


def elf_needed(path: str) -> list[str] | None:
    """The ``DT_NEEDED`` libraries of an ELF file ([] for a static one), None if not ELF.

    Reads the section headers, the ``SHT_DYNAMIC`` section and the string table it links to.

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, "rb") as fh:
        head = fh.read(64)
        if len(head) < 52 or head[:4] != b"\x7fELF":
            return None
        wide, end = head[4] == 2, "<" if head[5] == 1 else ">"
        if wide:
            shoff, = struct.unpack_from(end + "Q", head, 0x28)
            shentsize, shnum = struct.unpack_from(end + "HH", head, 0x3A)
        else:
            shoff, = struct.unpack_from(end + "I", head, 0x20)
            shentsize, shnum = struct.unpack_from(end + "HH", head, 0x2E)
        if not shoff or not shnum:
            return []
        fh.seek(shoff)
        table = fh.read(shentsize * shnum)
        sections = []
        for i in range(shnum):
            raw = table[i * shentsize:(i + 1) * shentsize]
            if wide:
                _, stype, _, _, off, size, link, _, _, entsize = struct.unpack_from(
                    end + "IIQQQQIIQQ", raw)
            else:
                _, stype, _, _, off, size, link, _, _, entsize = struct.unpack_from(
                    end + "IIIIIIIIII", raw)
            sections.append((stype, off, size, link, entsize))
        needed = []
        for stype, off, size, link, _ in sections:
            if stype != 6 or link >= len(sections):  # SHT_DYNAMIC
                continue
            fh.seek(off)
            dyn = fh.read(size)
            _, str_off, str_size, _, _ = sections[link]
            fh.seek(str_off)
            strings = fh.read(str_size)
            step, fmt = (16, end + "qQ") if wide else (8, end + "iI")
            for pos in range(0, len(dyn) - step + 1, step):
                tag, value = struct.unpack_from(fmt, dyn, pos)
                if tag == 0:
                    break
                if tag == 1 and value < len(strings):  # DT_NEEDED
                    needed.append(strings[value:strings.index(b"\0", value)].decode(
                        "utf-8", "replace"))
        return needed


def ldd_text(path: str, env: dict) -> str | None:
    """What ``ldd`` says of ``path`` (the libraries the loader resolves), None without it."""
    ldd = shutil.which("ldd", path=env.get("PATH"))
    try:
        return subprocess.run([ldd, path], capture_output=True, text=True, timeout=20,
                              env=env).stdout if ldd else None
    except (OSError, subprocess.SubprocessError):
        return None
