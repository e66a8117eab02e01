"""A program's own statement that options it was given were never used, in a run it called
fine (exit 0).

PETSc with ``-options_left`` ends such a run with::

    WARNING! There are options you set that were not used!
    WARNING! could be spelling mistake, etc!
    There are 2 unused database options. They are:
    Option left: name:-ksp_typo value: cg
    Option left: name:-pc_typ value: jacobi

and exits 0: a misspelled solver option silently measured the default solver (s29 tester C7).
Other programs say "unused option -x", "unrecognized option '--y'" or "ignoring unknown
argument -z" and go on. Such a run stays ``ok`` (the program decided so); the sweep says so
once per configuration (:mod:`~hpcds1mpi.measure.convergence` gives the note), naming the
options and the ``--fail-regex`` that records such runs failed.
"""

from __future__ import annotations

import re

#: PETSc's line per unused option: "Option left: name:-ksp_typo value: cg" (3.18; later
#: versions add " source: command line").
OPTION_LEFT = re.compile(r"\bOption left:\s*name:\s*(?P<name>\S+)")
#: Another program's statement that it did not use an option it names: "unused option -x",
#: "unrecognized option '--y'", "ignoring unknown argument -z", "unknown parameter: --w".
UNUSED_OPTION = re.compile(r"\b(?P<words>(unused|unrecogni[sz]ed|unknown|ignored|ignoring( "
                           r"unknown)?)\s+(command[- ]line\s+)?(option|argument|parameter|"
                           r"flag)s?)\b\W{0,3}(?P<name>--?[A-Za-z][\w.-]*)", re.IGNORECASE)


def unused_options(stdout: str, stderr: str) -> tuple[str, str]:
    """``(line, words)``: the program's lines naming options it did not use, as it wrote them
    (joined with "; ", each option once), and the words a ``--fail-regex`` would match
    ("Option left", "unused option"); ``("", "")`` when it said nothing of the kind. The
    line's control characters are escaped (:func:`~hpcds1mpi.measure.printable.printable`):
    PETSc echoes an option's name as given, ``-ksp\\x1b]0;TITLE\\x07`` and all (s29 tester
    H5); ``words`` stay as matched, for the regex."""
    from hpcds1mpi.measure.printable import printable

    for stream in (stdout, stderr):
        said, names = [], set()
        for line in stream.splitlines():
            found = OPTION_LEFT.search(line) or UNUSED_OPTION.search(line)
            if found and found.group("name") not in names:
                names.add(found.group("name"))
                said.append((printable(" ".join(line.split())), found))
        if said:
            first = said[0][1]
            words = "Option left" if first.re is OPTION_LEFT else first.group("words")
            return "; ".join(line for line, _ in said), words
    return "", ""


def option_names(line: str) -> list[str]:
    """The options :func:`unused_options`'s ``line`` names, in order."""
    return [found.group("name") for part in line.split("; ")
            if (found := OPTION_LEFT.search(part) or UNUSED_OPTION.search(part))]
