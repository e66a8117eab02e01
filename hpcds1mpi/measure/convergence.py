"""A program's own statement that its solver stopped before it converged, in a run it called
fine (exit 0).

CP2K with ``MAX_SCF`` too small prints ``*** WARNING in qs_scf.F:601 :: SCF run NOT converged
***`` and exits 0; ABINIT writes a ``--- !ScfConvergenceWarning`` document and exits 0 (s28
tester T). Such a run stays ``ok``: the program decided so, and its time is still its time.
But the sweep says so, once per configuration (:func:`convergence_warning` gives the line to
quote), and names ``--fail-regex`` for a user who counts it a failure
(:meth:`~hpcds1mpi.measure.readings.Readings.fail_problem`).

The same note is given for a run whose program said it never used options it was given
(:mod:`~hpcds1mpi.measure.unused_options`: PETSc's "Option left: name:-ksp_typo", s29 tester
C7), for what it measured is not what was asked: the sweep's one reading of an ok run the
program warned about is :func:`convergence_warning`; and for a run whose program said it aborted
after its own error line (:func:`~hpcds1mpi.measure.ending_error.error_then_abort`: GARLI's
"ERROR: ..." then "***process 0 aborted run 0", s42 tester E3); for a hoc interpreter's
error the run went on from (:mod:`~hpcds1mpi.measure.hoc_error`: NEURON's "nrniv: hhx is not a
MECHANISM" over " near line 1", a model that then computed without the mechanism, s46 tester G2);
and for any error line of the program's own in it (:func:`~hpcds1mpi.measure.ending_error.
mid_run_error`: "Error: ... results are invalid" then its time line, s47 tester K4).

Only the kept ends of the output are read (:data:`~hpcds1mpi.measure.program_launch.TAIL`
bytes of stdout and of stderr), where a run's last SCF and its final report are: a note is no
reason to read a whole output that ``--time-regex`` found its time at the end of.
"""

from __future__ import annotations

import re
import shlex

#: Words of a solver that stopped short: CP2K's "SCF run NOT converged", Quantum ESPRESSO's
#: "convergence NOT achieved", ABINIT's "nstep 2 was not enough SCF cycles to converge",
#: "did not converge", "failed to converge", "no convergence", "unconverged"; Elk's "failed to
#: reach self-consistency" and "Reached self-consistent loops maximum" (s30 tester L4),
#: "self-consistency not reached", Gaussian's "Convergence failure"; BAGEL's "* Max iteration
#: reached in SCF." (s48 tester O3: kept ok with no note), "maximum number of iterations reached",
#: not a tally or a setting ("Max iterations reached: 0", "max iterations reached = false").
NOT_CONVERGED = re.compile(r"\bNOT\s+converged?\b|\bconvergence\s+(NOT|never)\s+(achieved|reached)"
                           r"\b|\b(did|does|could)\s*n[o']t\s+converge\b|\bfailed\s+to\s+"
                           r"(converge\b|reach\s+(self[- ]?consistency|convergence)\b)|"
                           r"\bself[- ]?consistency\s+(was\s+)?(not|never)\s+(achieved|reached)\b|"
                           r"\breached\s+self[- ]?consistent\s+loops\s+maximum\b|"
                           r"\bconvergence\s+failure\b|\bno\s+convergence\b|\bnot\s+enough\b.{0,40}"
                           r"\bto\s+converge\b|\bunconverged\b|"
                           r"\bmax(?:imum)?\.?\s+(?:number\s+of\s+)?iterations?\s+"
                           r"(?:(?:was|were|has\s+been)\s+)?reached\b(?!\s*[:=?])",
                           re.IGNORECASE)
#: The header of a YAML warning document about convergence (ABINIT's
#: "--- !ScfConvergenceWarning", "--- !RelaxConvergenceWarning").
CONVERGENCE_DOCUMENT = re.compile(r"^--- !(\w*Converg\w*)\s*$", re.IGNORECASE)


def convergence_warning(stdout: str, stderr: str) -> tuple[str, str]:
    """``(line, words)``: the program's statement that it did not converge, as it wrote it
    (a convergence document's tag and message, ABINIT's "ScfConvergenceWarning: nstep 2 was
    not enough SCF cycles to converge."; else the last line with :data:`NOT_CONVERGED` words,
    stdout first), and the words that matched, for a ``--fail-regex`` to suggest; else its
    statement that options it was given were not used
    (:func:`~hpcds1mpi.measure.unused_options.unused_options`), else that it aborted after
    its error line (:func:`~hpcds1mpi.measure.ending_error.error_then_abort`), else a hoc
    interpreter's error it went on from (:func:`~hpcds1mpi.measure.hoc_error.hoc_error`:
    NEURON's "nrniv: hhx is not a MECHANISM near line 1", s46 tester G2), else an error line
    of its own (:func:`~hpcds1mpi.measure.ending_error.mid_run_error`, s47 tester K4); ``("", "")``
    when it said nothing of the kind. The line's control characters are escaped
    (:func:`~hpcds1mpi.measure.printable.printable`: it is printed, s29 tester H5); ``words``
    stay as matched, for the regex."""
    from hpcds1mpi.measure.ending_error import error_then_abort, mid_run_error
    from hpcds1mpi.measure.hoc_error import hoc_error
    from hpcds1mpi.measure.printable import printable
    from hpcds1mpi.measure.yaml_errors import yaml_documents
    from hpcds1mpi.measure.unused_options import unused_options

    for stream in (stdout, stderr):
        documents = yaml_documents(stream, CONVERGENCE_DOCUMENT)
        if documents and (words := NOT_CONVERGED.search(documents[-1])):
            return printable(" ".join(documents[-1].split())), words.group(0)
        lines = [ln for ln in stream.splitlines() if NOT_CONVERGED.search(ln)]
        if lines:
            words = NOT_CONVERGED.search(lines[-1]).group(0)
            return printable(" ".join(lines[-1].split())), words
    unused = unused_options(stdout, stderr)
    if unused[0]:
        return unused
    for reading in (error_then_abort, hoc_error, mid_run_error):  # the most telling first
        if (said := reading(stdout, stderr))[0]:
            return said
    return "", ""


def convergence_note(run: str, line: str, words: str) -> str:
    """The sweep's note on ``run`` (its workload, size and configuration), recorded ok though
    its program said ``line``: its time is kept, and ``--fail-regex`` with ``words`` (as a
    regex, shell-quoted) would record such runs failed. Both are printed escaped
    (:func:`~hpcds1mpi.measure.printable.printable`, s29 tester H5): an escaped pattern
    (``\\x1f``) is still a regex for the same text."""
    from hpcds1mpi.measure.printable import printable
    from hpcds1mpi.measure.unused_options import option_names

    line = printable(line)
    pattern = printable(re.escape(words).replace("\\ ", " "))  # re.escape escapes spaces
    names = option_names(line)
    many = len(names) > 1
    said = (f"the program did not use option{'s' if many else ''} {', '.join(names)[:200]}, "
            f"so {'their settings were' if many else 'its setting was'} not measured (a "
            "misspelled option leaves the program's default in force)" if names else
            f"the program said \"{line[:200]}\"")
    return (f"note: {run}: ok, but {said}; its time is kept (the program exited 0): to "
            "record such runs failed, sweep into a new --out with "
            f"--fail-regex {shlex.quote(pattern)}")
