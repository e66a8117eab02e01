"""The shared libraries a binary loads, read without running it.

:func:`elf_needed` reads the ``DT_NEEDED`` entries of an ELF file's dynamic section with the
standard library alone (``readelf`` is not on every cluster); :func:`needed_tree` follows them
through the libraries' own ``NEEDED``, finding each file as the loader would (``RUNPATH`` /
``RPATH``, ``/etc/ld.so.conf``, the default folders) without running anything;
:func:`ldd_text` asks ``ldd`` which files the loader resolves, where ``ldd`` exists. Which of
those libraries is an MPI, and of which family, is :mod:`hpcds1mpi.launch.mpi_family`'s
question.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import struct
import subprocess
import sysconfig
from collections import deque

#: Dynamic-section tags read: DT_NEEDED, DT_RPATH, DT_RUNPATH.
_NEEDED, _RPATH, _RUNPATH = 1, 15, 29
#: How deep (libraries of libraries) and how many library files :func:`needed_tree` reads.
#: Not 64 files (s45 tester E5): ParaView's pvbatch reaches libmpi.so.40 as its 150th library
#: (228 files read to depth 4, 80-140 ms); 1024 only bounds a pathological tree.
MAX_DEPTH, MAX_FILES = 4, 1024
#: The loader's configuration (``include`` lines followed).
LD_SO_CONF = "/etc/ld.so.conf"


def elf_needed(path: str) -> list[str] | None:
    """The ``DT_NEEDED`` libraries of an ELF file ([] for a static one), None if not ELF.

    Raises:
        OSError: the file cannot be read.
    """
    dynamic = elf_dynamic(path)
    return None if dynamic is None else dynamic[_NEEDED]


def _kind(head: bytes) -> tuple:
    """(class, byte order, machine) of an ELF header: a library must match its program's."""
    end = "<" if head[5] == 1 else ">"
    return head[4], head[5], struct.unpack_from(end + "H", head, 0x12)[0]


def elf_dynamic(path: str) -> dict | None:
    """``{1: NEEDED names, 15: RPATH folders, 29: RUNPATH folders, "kind": (class, byte
    order, machine)}`` of an ELF file (empty lists for a static one), None if not ELF.

    Reads the section headers, the ``SHT_DYNAMIC`` section and the string table it links to.

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, "rb") as fh:
        head = fh.read(64)
        if len(head) < 52 or head[:4] != b"\x7fELF":
            return None
        try:
            return _dynamic(fh, head)
        except struct.error:  # a truncated or damaged file: no ELF this reader can use
            return None


def _dynamic(fh, head: bytes) -> dict:
    """:func:`elf_dynamic` of the open file ``fh`` whose first bytes are ``head`` (the
    last review of s40: a truncated launcher file raised struct.error)."""
    found = {_NEEDED: [], _RPATH: [], _RUNPATH: [], "kind": _kind(head)}
    wide, end = head[4] == 2, "<" if head[5] == 1 else ">"
    if wide:
        shoff, = struct.unpack_from(end + "Q", head, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", head, 0x3A)
    else:
        shoff, = struct.unpack_from(end + "I", head, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", head, 0x2E)
    if not shoff or not shnum:
        return found
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
            if tag in found and value < len(strings):
                stop = strings.find(b"\0", value)
                text = strings[value:stop if stop >= 0 else None].decode("utf-8", "replace")
                found[tag].extend([text] if tag == _NEEDED else text.split(":"))
    return found


@functools.lru_cache(maxsize=1)
def library_dirs(conf: str = LD_SO_CONF) -> tuple[str, ...]:
    """The folders the loader searches after an object's own paths: those of ``conf`` (and
    the files its ``include`` lines name), then the defaults (``/lib``, ``/usr/lib``, their
    ``64`` and multiarch folders)."""
    dirs: list[str] = []

    def read(path: str, depth: int) -> None:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if line.startswith("include") and depth < 4:
                for pattern in line.split()[1:]:
                    pattern = os.path.join(os.path.dirname(path), pattern)
                    for name in sorted(glob.glob(pattern)):
                        read(name, depth + 1)
            elif line.startswith("/"):
                dirs.append(line)

    read(conf, 0)
    arch = sysconfig.get_config_var("MULTIARCH") or ""
    for top in ("/lib", "/usr/lib"):
        dirs.extend([*([f"{top}/{arch}"] if arch else []), f"{top}64", top])
    return tuple(dict.fromkeys(os.path.normpath(d) for d in dirs))


def _find(name: str, dirs: list[str], kind: tuple) -> str | None:
    """The file of library ``name`` in the first of ``dirs`` that holds one of ``kind``."""
    if "/" in name:
        return name if os.path.isfile(name) else None
    for folder in dirs:
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as fh:
                head = fh.read(20)
        except OSError:
            continue
        if len(head) == 20 and head[:4] == b"\x7fELF" and _kind(head) == kind:
            return path
    return None


def needed_tree(path: str, max_depth: int = MAX_DEPTH, max_files: int = MAX_FILES):
    """``(name, via)`` for each library ``path`` needs, breadth first: its own ``NEEDED``
    (``via`` ()), then theirs (``via``: the names that led there), each name once, at most
    ``max_depth`` levels and ``max_files`` library files read. Each file is found as the
    loader would (the object's ``RUNPATH``, else its and its loaders' ``RPATH``, ``$ORIGIN``
    filled in; then :func:`library_dirs`); one not found is yielded but not followed.

    Raises:
        OSError: ``path`` itself cannot be read.
    """
    for name, via, _ in needed_files(path, max_depth, max_files):
        yield name, via


def needed_files(path: str, max_depth: int = MAX_DEPTH, max_files: int = MAX_FILES):
    """:func:`needed_tree` with the file each library was found at: ``(name, via, file)``,
    ``file`` None where it was not found or not read (beyond ``max_depth`` or ``max_files``).

    Raises:
        OSError: ``path`` itself cannot be read.
    """
    top = elf_dynamic(path)
    if top is None:
        return
    kind, seen, read = top["kind"], set(), 0
    todo = deque([(path, top, (), [])])
    while todo:
        obj, dynamic, via, loader_rpath = todo.popleft()
        origin = os.path.dirname(os.path.realpath(obj))
        own = [d.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)
               for d in (dynamic[_RUNPATH] or dynamic[_RPATH] + loader_rpath) if d]
        rpath = [] if dynamic[_RUNPATH] else own
        for name in dynamic[_NEEDED]:
            if name in seen:
                continue
            seen.add(name)
            if len(via) + 1 >= max_depth or read >= max_files:
                yield name, via, None
                continue
            found = _find(name, [*own, *library_dirs()], kind)
            yield name, via, found
            if found is None:
                continue
            read += 1
            try:
                child = elf_dynamic(found)
            except OSError:
                continue
            if child is not None:
                todo.append((found, child, (*via, name), rpath))


#: An OpenMP runtime (GNU, LLVM, Intel) or a BLAS that runs threads, by the file name a
#: library resolves to: Debian's ``libblas.so.3`` is an alternative that may be OpenBLAS, and
#: its ``libopenblas.so.0`` lives in ``openblas-pthread/`` or ``openblas-openmp/``. OpenBLAS
#: counts as threaded unless its file says serial; MKL by its threading layer.
_THREADING = re.compile(r"/lib(g?omp|iomp5|omp5)[.-][^/]*$|/libmkl_\w*thread[^/]*$"
                        r"|openblas(?!.*serial)[^/]*/?[^/]*$|/libblis-?mt[^/]*$")
#: How far :func:`threading_libraries` follows the libraries (further than the MPI reading:
#: a runtime is often a few libraries down, and a missed one would be a wrong claim).
THREADING_DEPTH, THREADING_FILES = 8, 256


def threading_libraries(path: str) -> list[str] | None:
    """The OpenMP runtimes and threaded BLAS libraries binary ``path`` loads, by the names it
    and its libraries need them under ([] for none); None when that cannot be told: not an ELF
    file, a library not found, or more libraries than :data:`THREADING_FILES` (nothing is
    run).

    Raises:
        OSError: ``path`` itself cannot be read.
    """
    if elf_dynamic(path) is None:
        return None
    found = []
    for name, _, file in needed_files(path, THREADING_DEPTH, THREADING_FILES):
        if file is None:
            return None
        if _THREADING.search(os.path.realpath(file)) or _THREADING.search("/" + name):
            found.append(name)
    return found


def ldd_text(path: str, env: dict) -> str | None:
    """What ``ldd`` says of ``path`` (the libraries the loader resolves), None without it."""
    ldd = shutil.which("ldd", path=env.get("PATH"))
    try:
        return subprocess.run([ldd, path], capture_output=True, text=True, timeout=20,
                              env=env).stdout if ldd else None
    except (OSError, subprocess.SubprocessError):
        return None
