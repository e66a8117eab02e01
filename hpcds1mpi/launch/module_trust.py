"""Which of a job script's module lines may be run here: the module system's own files only,
and only where no other user could have written them.

``advise`` runs a script's module lines to learn the PATH they give
(:mod:`~hpcds1mpi.launch.module_path`), and a script may be anyone's: a ``source FILE`` whose
folder was merely named ``modules/`` ran that file's code (s36 review 1). So a sourced file
is run only where it is a module system's init file by its exact path (Lmod's
``.../lmod/init/bash``, Environment Modules' ``.../Modules/init/bash``, their
``/etc/profile.d`` scripts, or the ``init`` folder of this environment's ``$LMOD_PKG`` /
``$MODULESHOME``), and a ``module use DIR`` folder only where it, its direct entries and the
folders of the modules the lines load from it are no other user's to change. Each is
"changeable" (:func:`changeable_by_others`) where it or a folder above it belongs to another
user than root or this one, or is writable by its group or everyone (a sticky folder such as
``/tmp`` excepted: others cannot replace what is in it), as ssh's ``StrictModes`` judges key
files. A module the loaded ones put on ``MODULEPATH`` in turn (a hierarchy) cannot be told
before it runs; its folder is the site's.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence

#: A module system's init file for bash/sh, by its path: Lmod's (``lmod/init/bash``, or a
#: version folder's, ``lmod/8.7.1/init/bash``), Environment Modules' (``Modules/init/bash``,
#: Debian's ``modules/init/bash``), and the scripts their packages put in ``/etc/profile.d``.
_INIT_PATH = re.compile(r"/(lmod|Modules|modules)(/\d[\w.-]*)?/init/(bash|sh|profile|"
                        r"profile\.sh)$|^/etc/profile\.d/(lmod|z00_lmod|modules)\.sh$")
#: The init files of a module system named by this environment's variables.
_INIT_NAMES = ("bash", "sh", "profile", "profile.sh")
#: ``module`` verbs whose operands are folders (``use``) or modules to load.
_VERBS = ("use", "load", "add", "try-load", "try-add", "swap", "switch", "sw")
#: Entries of one module folder judged at most (a site's tree is root's and shallow).
_MAX_ENTRIES = 5000


def init_file(word: str, env: Mapping[str, str]) -> bool:
    """Whether ``word`` (a ``source`` line's file) is a module system's init file by its
    path, as written or as its links resolve."""
    written = os.path.normpath(os.path.abspath(word))
    real = os.path.realpath(word)
    if any(_INIT_PATH.search(path) for path in (written, real)):
        return True
    homes = [env.get(name) for name in ("LMOD_PKG", "MODULESHOME")]
    return any(real == os.path.realpath(os.path.join(home, "init", name))
               for home in homes if home for name in _INIT_NAMES)


def changeable_by_others(path: str) -> str | None:
    """Why another user could change ``path`` (a file or folder, its links followed), or
    None where only root and this user can: it and every folder above it belong to one of
    them and are not writable by group or others (a sticky folder above excepted)."""
    if not hasattr(os, "geteuid"):
        return None  # no POSIX owners to judge
    me = os.geteuid()
    real = os.path.realpath(path)
    item, first = real, True
    while True:
        try:
            st = os.stat(item)
        except OSError as exc:
            return f"{item} cannot be read ({exc.strerror})"
        mode = stat.S_IMODE(st.st_mode)
        sticky = not first and stat.S_ISDIR(st.st_mode) and mode & stat.S_ISVTX
        if st.st_uid not in (0, me):
            return f"{item} belongs to another user (uid {st.st_uid})"
        if mode & (stat.S_IWGRP | stat.S_IWOTH) and not sticky:
            return f"{item} is writable by {'everyone' if mode & stat.S_IWOTH else 'its group'}" \
                f" (mode {mode:04o})"
        parent = os.path.dirname(item)
        if parent == item:
            return None
        item, first = parent, False


def module_folders_why(lines: Sequence[str]) -> str | None:
    """Why the module folders that ``lines`` (``module``/``ml`` lines, split in words) add
    with ``use`` cannot be run here (:func:`changeable_by_others`, for the folder, its
    direct entries and the folders of the modules the lines load), or None."""
    used, loaded = [], []
    for words in lines:
        if words[0] == "module" or (len(words) > 1 and words[1] in _VERBS):
            verb, names = words[1] if len(words) > 1 else "", _operands(words[2:])
        else:  # `ml NAME...` loads
            verb, names = "load", _operands(words[1:])
        if verb == "use":
            used += [os.path.abspath(name) for name in names]
        elif verb in _VERBS:
            loaded += names
    for name in loaded:  # a module file given by its path (``module load ./x.lua``)
        if name.startswith(("/", "./", "../")) and (why := changeable_by_others(name)):
            return why
    for folder in used:
        if (why := changeable_by_others(folder)) or (why := _entries_why(folder, loaded)):
            return why
    return None


def _operands(words: Sequence[str]) -> list[str]:
    """The words that are no options (``--priority N``'s value neither)."""
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word == "--priority"
        else:
            out.append(word)
    return out


def _entries_why(folder: str, loaded: Sequence[str]) -> str | None:
    """:func:`changeable_by_others` for the entries of a module ``folder`` the module system
    reads: its direct ones (``.modulerc``, ``NAME.lua``) and, in the folder of each module
    ``loaded`` (``openmpi`` of ``openmpi/4.1``), everything."""
    try:
        entries = os.listdir(folder)[:_MAX_ENTRIES]
    except OSError:
        return None  # no folder: `module use` itself fails or warns, in its own words
    me = os.geteuid()
    for entry in entries:
        path = os.path.join(folder, entry)
        if why := _item_why(path, me):
            return why
    for top in {name.split("/")[0] for name in loaded}:
        root = os.path.join(folder, top)
        if not os.path.isdir(root):
            continue
        count = 0
        for base, dirs, files in os.walk(root):
            for entry in (*dirs, *files):
                count += 1
                if count > _MAX_ENTRIES:
                    return f"{root} holds more than {_MAX_ENTRIES} files to judge"
                if why := _item_why(os.path.join(base, entry), me):
                    return why
    return None


def _item_why(path: str, me: int) -> str | None:
    """Why another user could change ``path`` itself (its folders are judged apart; a
    link's target and the folders above it, for it leads elsewhere)."""
    if os.path.islink(path):
        return changeable_by_others(path)
    try:
        st = os.stat(path)
    except OSError:
        return None  # a dangling link: nothing to read
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid not in (0, me):
        return f"{path} belongs to another user (uid {st.st_uid})"
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by {'everyone' if mode & stat.S_IWOTH else 'its group'} " \
            f"(mode {mode:04o})"
    return None
