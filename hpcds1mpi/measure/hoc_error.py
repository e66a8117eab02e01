"""A hoc interpreter's error in a run that exited 0: NEURON's, said as a note (s46 tester G2).

NEURON states a hoc error as ``<program>: <message>`` over its place, `` near line N`` (or `` in
FILE near line N``), then the statement and a caret. An error in a statement a Python model runs
through ``h(...)`` does not stop it: ``nrniv: hhx is not a MECHANISM`` (a misspelled mechanism),
and the model goes on without it, prints its results (``spikes=0`` against 102) and exits 0. The
run was stored ``ok`` with no word. Failing it would fail good runs as well (a ``load_file`` of
an optional file that is not there, "nrniv: Couldn't find: ringparams.hoc", is followed by a
good run's results), so :func:`hoc_error` gives the line for the sweep's note
(:func:`~hpcds1mpi.measure.convergence.convergence_warning`), with the words for a
``--fail-regex`` that records such runs failed.
"""

from __future__ import annotations

import re

#: An error's place on the line under it, NEURON's " near line 1", tagged with its rank ("0  near
#: line 1") at several ranks: :func:`~hpcds1mpi.measure.program_lines.program_lines` joins it to
#: the line above (interleaved ranks' too) unless that was blank then, an error section's one
#: line put back as its message after (s47: the only input left to it).
PLACE = re.compile(r"^(?:\d+ +)?(?:in \S.* )?near line \d+$")
#: The error, "<program>: <message>" (its rank tag aside): "nrniv: hhx is not a MECHANISM",
#: "0 nrniv: ...", "nrniv: syntax error in ring.hoc near line 12".
ERROR = re.compile(r"^(?:\d+ +)?(?P<said>[\w.+-]+: +\S.*)$")
#: A place joined to the error's line, closing it (its "in FILE" found by the last " in "
#: before: one pattern with ".*?" and ".*" was quadratic on long lines).
JOINED_PLACE = re.compile(r" near line \d+$")


def hoc_error(stdout: str, stderr: str) -> tuple[str, str]:
    """``(line, words)``: the last hoc error (see the module) of ``stdout``, else of ``stderr``,
    with its place ("nrniv: hhx is not a MECHANISM near line 1"), and the error without its
    place, for a ``--fail-regex``; ``("", "")`` when neither has one. A warning, or a line that
    reports no error, is none."""
    from hpcds1mpi.measure.error_cause import WARNING
    from hpcds1mpi.measure.printable import printable
    from hpcds1mpi.measure.program_lines import NO_ERROR, kept_lines

    for text in (stdout, stderr):
        kept = kept_lines(text)
        for i in range(len(kept) - 1, -1, -1):
            found = ERROR.match(kept[i])
            if found is None or WARNING.search(kept[i]) or NO_ERROR.search(kept[i]):
                continue
            said = found["said"]
            if joined := JOINED_PLACE.search(said):
                # " in FILE near line N", or a bare " near line N" joined since s46 (tester G3)
                at = said.rfind(" in ", 0, joined.start())
                return printable(said), said[:at if at > 0 else joined.start()]
            if i + 1 < len(kept) and (place := PLACE.match(kept[i + 1])):
                where = re.sub(r"^\d+ +", "", place[0])
                return printable(f"{said} {where}"), said
    return "", ""
