"""Whether a command's arguments are its measured command's in another order.

A command line's options are order-free by convention (``-in f -var x 1`` is
``-var x 1 -in f``: LAMMPS, LIGGGHTS, most getopt programs), its positional arguments are not
(``a.inp b.out`` is not ``b.out a.inp``). The arguments are read as the positional words before
the first option (the *head*, kept in order) and *option groups*: an option word and the
non-option words after it, up to the next option (its values). Where the heads agree, the
launched command's groups are moved into the measured command's order
(:func:`in_measured_order`), so that the word-by-word comparison of
:mod:`hpcds1mpi.decide.advise_launch` sees only what differs (s43 tester G2: a reordered
LIGGGHTS line was said to "leave out '-in in.gran'; add '-in in.gran'").

Conservative: a reorder is made only where no reading of the words gives it another
meaning. Nothing is moved where the heads differ (``-v a.inp -x`` against ``a.inp -v -x``) or
after a ``--``; no two groups of *related* options change places (:func:`related`: the same
option, ``--x`` / ``--no-x``, ``-x`` / ``+x``, one a prefix of the other, ``-q`` in a bundle
``-vq``, ``-Ifoo`` / ``-Ibar``: the last one may win, or the order is the search order); and no two groups that hold values change places where both
options may be flags (:func:`may_be_flag`), their words then positional arguments that would
swap (``-v in.nml -q out.h5`` is ``in.nml out.h5`` to getopt, ``-q out.h5 -v in.nml`` is
``out.h5 in.nml``: s43 tester J9). There :func:`same_words` lets the caller say "the same
arguments in another order" rather than "leaves out X; adds X".
"""

from __future__ import annotations

import re

from hpcds1mpi.launch.script_placeholders import word_pattern

#: A negative number is a value, not an option (``-shift -1.5e3``).
_NUMBER = re.compile(r"-[0-9.][0-9.eE+-]*")


def is_option(word: str) -> bool:
    """Whether ``word`` starts an option: ``-x``, ``--long``, ``--long=value``."""
    return len(word) > 1 and word.startswith("-") and not _NUMBER.fullmatch(word)


def option_groups(words: list[str]) -> tuple[list[str], list[list[str]]] | None:
    """``words`` as (head, groups): the positional words before the first option, and each
    option with the non-option words after it; None where a ``--`` ends the options."""
    if "--" in words:
        return None
    head: list[str] = []
    groups: list[list[str]] = []
    for word in words:
        if is_option(word):
            groups.append([word])
        elif groups:
            groups[-1].append(word)
        else:
            head.append(word)
    return head, groups


def _fits(ran: list[str], measured: list[str]) -> bool:
    """Whether the words ``ran`` are ``measured``'s, a placeholder fitting any word."""
    return len(ran) == len(measured) and all(
        re.fullmatch(word_pattern(m), r) for r, m in zip(ran, measured))


def in_measured_order(ran: list[str], measured: list[str]) -> list[str] | None:
    """``ran`` with its option groups in the order of the ``measured`` groups they are (or,
    failing that, share an option word with), a group of neither kept after the one before it;
    None where nothing may be moved (see the module's note) or nothing moved."""
    read, model = option_groups(ran), option_groups(measured)
    if read is None or model is None or not _fits(read[0], model[0]):
        return None
    groups, targets, taken = read[1], model[1], set()
    keys: list[float] = []
    for group in groups:  # the measured group it is, else one of its option left unmatched
        at = next((k for k, t in enumerate(targets) if k not in taken and _fits(group, t)),
                  None)
        keys.append(at if at is not None else -1)
        if at is not None:
            taken.add(at)
    for n, group in enumerate(groups):
        if keys[n] < 0:
            at = next((k for k, t in enumerate(targets)
                       if k not in taken and t[0] == group[0]), None)
            if at is not None:
                taken.add(at)
            keys[n] = at if at is not None else (keys[n - 1] if n else -1) + 0.5
    order = sorted(range(len(groups)), key=lambda n: keys[n])  # stable: ties keep their order
    if order == list(range(len(groups))):
        return None
    for a in range(len(groups)):  # no swap that a reading of the words makes count
        for b in range(a + 1, len(groups)):
            if order.index(a) > order.index(b) and (
                    related(groups[a], groups[b])
                    or all(len(g) > 1 and may_be_flag(g[0], ran, measured)
                            for g in (groups[a], groups[b]))):
                return None
    return read[0] + [word for n in order for word in groups[n]]


def _names(group: list[str]) -> set[str]:
    """The option names a group sets: its option's (``--no-x=1`` gives ``no-x`` and ``x``) and
    those of its ``+x`` words (``-x`` / ``+x`` set one thing)."""
    names = set()
    for word in group[:1] + [w for w in group[1:] if len(w) > 1 and w.startswith("+")]:
        name = word.lstrip("-+").split("=", 1)[0]
        names.add(name)
        for no in ("no-", "no_", "no"):
            if name.startswith(no) and len(name) > len(no):
                names.add(name[len(no):])
    return names - {""}


def related(one: list[str], other: list[str]) -> bool:
    """Whether two option groups may set the same thing, so that their order may count: one
    name a prefix of the other's (``-I`` / ``-I``, ``--mode`` / ``--no-mode``, ``--mo`` /
    ``--mode``, ``-x`` / ``+x``), a one-letter short option inside a bundle of them
    (``-q`` / ``-vq``), or two one-dash words without values that start with one letter
    (``-Ifoo`` / ``-Ibar``: getopt's ``-I`` twice; a word option with values, LAMMPS's
    ``-sf omp`` / ``-screen none``, is not read so)."""
    for a in _names(one):
        for b in _names(other):
            if a.startswith(b) or b.startswith(a):
                return True
    shorts = [g[0] for g in (one, other) if not g[0].startswith("--")]
    if len(shorts) == 2 and len(one) == len(other) == 1 and shorts[0][1] == shorts[1][1]:
        return True  # -Ifoo / -Ibar, -O2 / -O3: one short option, its value attached
    return len(shorts) == 2 and any(
        len(s) == 2 and s[1] in t[1:].split("=", 1)[0] for s, t in (shorts, shorts[::-1]))


def may_be_flag(option: str, *lines: list[str]) -> bool:
    """Whether ``option`` may take no value, the words after it then positional arguments: a
    one-letter short option (getopt's ``-v``), a long one (``--verbose``; ``--n=2``'s value is
    its own), or one that one of ``lines`` shows without a value (followed by an option or by
    nothing). A word option such as LAMMPS's ``-in`` / ``-var`` / ``-log`` is read as taking
    the words after it (s43 tester G2)."""
    if option.startswith("--") or len(option) == 2:
        return True
    name = option.split("=", 1)[0]
    return any(w.split("=", 1)[0] == name and (k + 1 == len(words) or is_option(words[k + 1]))
               for words in lines for k, w in enumerate(words))


def same_words(ran: list[str], measured: list[str]) -> bool:
    """Whether ``ran`` holds ``measured``'s words, each once, in any order (a placeholder
    fitting any word)."""
    if len(ran) != len(measured):
        return False
    left = list(ran)
    for word in sorted(measured, key=lambda w: "{" in w):  # literal words first
        pattern = re.compile(word_pattern(word))
        at = next((k for k, w in enumerate(left) if pattern.fullmatch(w)), None)
        if at is None:
            return False
        del left[at]
    return True
