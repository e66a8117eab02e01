"""Repeats of one configuration that collide on what the first left in their folder.

Every repeat of a configuration runs the same command line in the same folder. A program that
refuses an output it finds there then does its work only once: Ray's repeat 2 said "Error,
rayout_5000/ already exists" and exited 0 in 0.9 s after repeat 1's 35.6 s assembly, and the
median recorded was the errors' (s38 tester A2); ExaML's repeat 2 exited 255 on "ExaML output
files with the run ID <run_300> already exist" and the configuration was ``failed`` with Open
MPI's banner as its reason (A3).

**Told** (:func:`collision`), for any program: a later launch that printed error lines the
configuration's first ``ok`` launch did not (numbers aside), where the first created entries in
the folder (:func:`entries` before and after it) and the later launch either names one of them,
says a thing already exists (:data:`~.argument_files.EXISTING`) or ran :data:`SHORTER` times
shorter than the first: a launch that failed (or exited 0 with its error said) only because it
was not the first. So is a later launch that **skipped the work** without an error word: GARLI's
repeat 2 said "It appears that run 0 was completed in a previous MPI invocation. Run 0 will not
be re-run unless the hidden file ".d-lock0" ... are deleted", exited 0 in 0.4 s after repeat 1's
10.6 s, and the median recorded was the empty launches' (s42 tester E2). Told
(:func:`skipped_work`) where the later launch printed lines the first did not and either one of
them names an entry the first created (or says a thing exists) while it ran :data:`SHORTER`
times shorter or printed that many times less (or timed, by its own ``--time-regex`` time, less
than the first's over :data:`COLD`: a restart from a checkpoint), or it ran :data:`SKIPPED`
times shorter whatever its new lines say. A cold start is no such thing: its output is the same,
and of 192 program configurations swept on this machine (NWChem, PhyML, MPB, Python and C
programs; launch walls) the first launch took at most 1.6x the longest later one, where the
programs that skipped their work took 11-51x (Ray, ABySS, GARLI at 1 rank). Where no line shows
it, a launch :data:`SKIPPED` times the median of the others is noted (:func:`outlier_note`).

Neither shorter-time rule (new error lines, skipped work) holds against a later launch whose own
output **proves it ran** (:func:`ran_its_work`): it was ``ok`` and printed the program's own
time (``--time-regex``, read from what that launch wrote) within a cold start's band
(:data:`COLD`) of the first's, inside its own wall time (a stored time reprinted can be longer),
and every other reading the first printed. Its first launch was slower for a reason outside the
program's timed work: a cache or table it built once, a cold file cache (s44: a program that
built its tables in 2 s had every repeat run cold in a fresh folder, 2.35 s a launch for 0.29
s). The band is the cold start's, not :data:`SHORTER`: a program restarting from a periodic
checkpoint times only what is left (40 % of the work in 0.4x the time had been measured as a
full run, s44 review R1). A figure of merit alone proves nothing (a program that resumes prints
its stored result), nor does the wall time; a later launch naming what the first made in an
error line, or saying a thing exists, still collides.

**Then** that launch is not measured: it, and every repeat after it, runs again, each in a
fresh folder of its own (:meth:`RepeatFolders.folder`) that holds a link to every entry the
configuration's folder had before its first launch (its inputs; never what the first launch
wrote), made beside that folder (so ``../x`` reads what it read) or, where its parent is not
writable, inside it, and removed after the launch with the links (never their targets). The
first launch's outputs stay in the folder. It is said once per configuration. A fresh repeat
that fails is the run's failure, its reason saying it ran in a fresh folder.

A **first** launch that fails saying a thing already exists refuses outputs an earlier run
left in the folder (ExaML's "output files with the run ID <r> already exist", after the sweep
that measured it, s48 tester Q2, Q3: stored as the layout's failure, it had vetoed layouts a
model measured ok there, and replaced an ok row when a sweep was measured again). It runs
again, once, in a fresh folder linking the folder's entries but those its error names soundly:
whole as a quoted or path-like word, or by a quoted run tag: ``<r>`` names ``ExaML_info.r``,
never the input ``r.binary``, nor a file of the command line (:func:`leftovers`, s48 review
RY2: a name sharing a word with the error had been left out, an input among them, and the run
stored ok with a wrong time); only a failure there is the run's. Where its error names none of
them so, nothing tells the inputs from the leftovers: it stays the run's failure, with the
advice.

Decided so, rather than a fresh folder for every repeat or an option: a program that is fine
(rewrites its outputs, or writes none) runs exactly as before, in its folder, and a user need
not know in advance that the program refuses its outputs; the fresh folder is made only where
a launch shows the collision.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager

#: How many times shorter than the first launch a later one failing with new error lines ran,
#: to count as colliding without naming what collided (a timer's noise is far below this).
SHORTER = 3.0
#: How many times shorter than the first launch a later one that printed lines the first did
#: not, naming nothing the first made, ran to count as having skipped the work: above a cold
#: start's first launch (at most 1.6x the later ones' on this machine, see the module) and below
#: a skipped job's (11x and up). Also how many times the median of the others a launch the
#: sweep notes took (:func:`outlier_note`).
SKIPPED = 5.0
#: How many times a later launch's own time a cold first launch's took at most (192
#: configurations, see the module): a later launch timing less than the first's / COLD did not
#: do the first's work (a checkpoint restart), whatever else it printed.
COLD = 1.6
#: Words of a program that found its work done, to pick the line that says so.
_DONE = re.compile(r"\b(previous(ly)?|already|skip\w*|resum\w*|restart\w*|complete[ds]?|"
                   r"up[- ]to[- ]date|nothing to do|re-?run|exists?)\b", re.IGNORECASE)
#: The prefix of a fresh folder's name (never linked into another).
FRESH = ".hpcds1mpi-repeat-"
#: The end of the lock file the sweep keeps beside a program's ``--output-file``.
OWN_LOCK = ".hpcds1mpi-lock"
#: A number, set aside where lines are compared: an address in hex too ("[0x7f65d532b050]" in
#: a crash trace differs per run: it had been a new error line, read as a collision, s45 P2).
#: Its own: "1,5", "0:41", "0x7f" one number each, where ``rank_count.line_shape`` reads two.
_NUMBER = re.compile(r"[-+]?\b0[xX][0-9a-fA-F]+|[-+]?\d[\d.,:eE+-]*")
#: Words of a program that replaces what it found: no collision.
_GOES_ON = re.compile(r"(?<!not )\boverwrit(es|ing|ten)\b|(?<!not )\breplac(es|ing)\b", re.IGNORECASE)
#: The start of what an ``ok`` run measured in fresh folders keeps in its ``error``, followed
#: by the configuration's folder (absolute): a job script run there meets the outputs the
#: sweep left (s48 tester Q1; :func:`refused_in`).
FRESH_RUN = "measured in fresh folders: the program refuses outputs a run left in its folder "
#: A word an error line quotes (``<r>``, ``'out'``, ``"x"``, `` `x` ``, ``[x]``): a run ID or
#: name the earlier outputs carry.
_QUOTED = re.compile(r"<([^<>\s]+)>|'([^'\s]+)'|\"([^\"\s]+)\"|`([^`\s]+)`|\[([^\[\]\s]+)\]")


def entries(folder: str | None) -> set[str]:
    """The names in ``folder`` (None: the current one), a fresh folder's and the sweep's own
    ``--output-file`` lock aside (s38 tester E1: the lock was named as a file launch 1 made)."""
    try:
        return {n for n in os.listdir(folder or ".")
                if not n.startswith(FRESH) and not n.endswith(OWN_LOCK)}
    except OSError:
        return set()


def leftovers(error: str, names: set[str], args=(), home: str | None = None) -> set[str]:
    """The entries of ``names`` (a folder's, ``home``) that ``error``, a first launch's refusal
    of what is already there, names soundly (s48 review RY2): whole as a quoted word or a
    path-like token ('output', "result.h5", out.dat, a/b; never a plain word, "data"), or by a
    run tag it quotes as ``<r>`` where the name carries it after a '.' (``ExaML_info.r``,
    ``ExaML_binaryCheckpoint.r_3``; never ``r.binary``, the tag plus an extension, nor
    ``run_8000_10`` for ``<run_8000_1>``). Never an entry ``args``, the command's words after
    the program, names as a file: its input."""
    from hpcds1mpi.measure.argument_files import file_arguments

    here = os.path.abspath(home or ".")
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(error)]
    pathlike = [t for t in (w.strip("'\"`()[]<>,;:") for w in error.split())
                if "/" in t or re.search(r"[A-Za-z0-9]\.[A-Za-z0-9]", t.rstrip("."))]
    whole = {os.path.basename(t.rstrip("./")) for t in quoted + pathlike
             if os.path.abspath(os.path.join(here, t)) != here} - {""}
    tags = [re.compile(r"\." + re.escape(m.group(1)) + r"(_\d+)?$")
            for m in re.finditer(r"<([^<>\s/]+)>", error)]
    given = {os.path.normpath(a).split(os.sep)[0] for a in file_arguments(list(args))}
    return {name for name in names - given
            if name in whole or any(tag.search(name) for tag in tags)}


def refuses_leftovers(error: str) -> bool:
    """Whether a failed launch's reason says the program refused a thing already there."""
    from hpcds1mpi.measure.argument_files import EXISTING

    return bool(error and EXISTING.search(error))


def _error_lines(result: dict) -> dict[str, str]:
    """The program's error lines of a launch, keyed by their text with numbers blanked."""
    from hpcds1mpi.measure.argument_files import EXISTING
    from hpcds1mpi.measure.error_cause import ABSENT
    from hpcds1mpi.measure.program_launch import ERROR_WORDS
    from hpcds1mpi.measure.program_lines import kept_lines

    from hpcds1mpi.measure.error_cause import WARNING, WENT_ON
    from hpcds1mpi.measure.helper_crashes import CRASH_DETAIL

    lines = kept_lines(result["stdout"]) + kept_lines(result["stderr"])
    # A warning, or a line that says the program went on ("already exists, overwriting"), is
    # no sign of a collision: such a program is fine (s38 review 2b); nor is a crash's detail,
    # which differs per run (s45 tester P2).
    return {_NUMBER.sub("#", ln): ln for ln in lines
            if ln and (ERROR_WORDS.search(ln) or ABSENT.search(ln) or EXISTING.search(ln))
            and not WARNING.search(ln) and not WENT_ON.search(ln) and not _GOES_ON.search(ln)
            and not CRASH_DETAIL.search(ln)}


def _new_lines(first: dict, later: dict) -> list[str]:
    """The program's lines of ``later`` that ``first`` did not print (numbers aside), lines
    that say it replaced what it found ("overwriting") and a crash's details aside."""
    from hpcds1mpi.measure.helper_crashes import CRASH_DETAIL
    from hpcds1mpi.measure.program_lines import kept_lines

    def keyed(result):
        return {_NUMBER.sub("#", ln): ln for ln in kept_lines(result["stdout"]) +
                kept_lines(result["stderr"]) if ln and not CRASH_DETAIL.search(ln)}

    before = keyed(first)
    return [ln for key, ln in keyed(later).items() if key not in before
            and not _GOES_ON.search(ln)]


def ran_its_work(first: dict, later: dict) -> bool:
    """Whether ``later`` (an ``ok`` launch after ``first``) printed the program's own time,
    no shorter than ``first``'s over :data:`COLD` and no longer than its own wall time, and
    every reading ``first`` printed (``found``: the readings of that launch's own output), so it
    did the work ``first`` did. A time over the wall, which the sweep lets through within two
    clocks' slack, may be a stored one reprinted (s44 review R7)."""
    import math

    was, now = first.get("found") or {}, later.get("found") or {}
    time, then = now.get("time", math.nan), was.get("time", math.nan)
    if not (time > 0 and then > 0) or COLD * time < then or time > later["wall_s"]:
        return False
    return all(math.isfinite(now.get(name, math.nan)) for name in ("fom", "ranks")
               if math.isfinite(was.get(name, math.nan)))


def skipped_work(first: dict, later: dict, created: set[str]) -> str:
    """The line of ``later`` (see :func:`collision`) that shows it skipped the work ``first``
    did, with no error word (see the module); "" when none does."""
    import math

    from hpcds1mpi.measure.argument_files import EXISTING, _names

    if not created or not (new := _new_lines(first, later)):
        return ""

    def size(result):
        return len(result["stdout"]) + len(result["stderr"])

    then, time = ((result.get("found") or {}).get("time", math.nan) for result in (first, later))
    less = (first["wall_s"] > SHORTER * later["wall_s"] or size(first) > SHORTER * size(later)
            or then > COLD * time)  # NaN where either printed no own time: compares False
    named = [ln for ln in new if EXISTING.search(ln) or any(_names(ln, n) for n in created)]
    if named and less:
        return next((ln for ln in named if _DONE.search(ln)), named[0])
    if first["wall_s"] > SKIPPED * later["wall_s"]:
        return next((ln for ln in new if _DONE.search(ln)), new[0])
    return ""


def collision(first: dict, later: dict, created: set[str], ran: bool = False) -> str:
    """The line of ``later`` (a launch after ``first``, the configuration's first ``ok`` one,
    in the same folder, which ``first`` added ``created`` to) that shows it collided on what
    ``first`` left: a new error line, else one that shows it skipped the work
    (:func:`skipped_work`); "" when none does. ``ran``: ``later``'s own output proves it did
    the work (:func:`ran_its_work`), so a shorter time alone tells nothing."""
    from hpcds1mpi.measure.argument_files import EXISTING, _names

    if not created:
        return ""
    before = _error_lines(first)
    new = [ln for key, ln in _error_lines(later).items() if key not in before]
    for line in new:
        if EXISTING.search(line) or any(_names(line, name) for name in created):
            return line
    if ran:
        return ""
    if new and first["wall_s"] > SHORTER * later["wall_s"]:
        return new[-1]
    return skipped_work(first, later, created)


def outlier_note(run: str, times: list[float]) -> str:
    """The sweep's note on ``run`` (its workload, size and configuration), recorded ok, one of
    whose measured launches (``times``, as recorded, 3 or more: the program's own
    where ``--time-regex`` reads it, else the launches' walls) took :data:`SKIPPED` times
    the median of the others: no line told that the others skipped the work (see the module),
    but the median recorded may still not be the job's time; "" when none did."""
    import statistics

    if len(times) < 3:
        return ""
    top = max(range(len(times)), key=times.__getitem__)
    median = statistics.median(times[:top] + times[top + 1:])
    if not median > 0 or times[top] < SKIPPED * median:
        return ""
    return (f"note: {run}: measured launch {top + 1} took {times[top] / median:.0f}x the median "
            f"of the others ({times[top]:.3g} s, they {median:.3g} s), so the median recorded "
            "may not be the job's time: a program that skips or resumes work from files an "
            "earlier launch left in its folder does so (every repeat runs in one folder); if "
            "yours does, sweep into a new --out a wrapper script that removes those files, "
            "then runs the program")


class RepeatFolders:
    """Where each launch of one configuration runs (see the module).

    Args:
        folder: the configuration's folder (None: the current one).
        say: called with the note, once (None: not said).
        label: the configuration, for the note.
        own_folder: the configuration has a ``--workdir`` folder of its own (then the advice
            never asks for one: s48 tester Q3).
        args: the command's words after the program: the files it names are never left out
            of a fresh folder (:func:`leftovers`).
    """

    def __init__(self, folder: str | None, say=None, label: str = "", own_folder: bool = False,
                 args=()):
        self.home, self.say, self.label, self.own = folder, say, label, own_folder
        self.args = list(args)
        self.before = entries(folder)
        self.first: dict | None = None
        self.created: set[str] = set()
        self.fresh = False  # the launches from now on run in fresh folders
        self.launches = self.collided = 0
        self.left = ""  # the earlier outputs a first launch refused, named (s48 tester Q2)

    @contextmanager
    def folder(self):
        """The folder the next launch runs in: the configuration's, or a fresh one."""
        self.launches += 1
        if not self.fresh:
            yield self.home
            return
        home = os.path.abspath(self.home or ".")
        try:
            fresh = tempfile.mkdtemp(prefix=FRESH, dir=os.path.dirname(home))
        except OSError:  # the parent is not writable: inside the folder
            fresh = tempfile.mkdtemp(prefix=FRESH, dir=home)
        try:
            for name in self.before:
                os.symlink(os.path.join(home, name), os.path.join(fresh, name))
            yield fresh
        finally:
            shutil.rmtree(fresh, ignore_errors=True)

    def again(self, result: dict, status: str, error: str = "") -> bool:
        """Whether the launch just made (``result``, of ``status``, failed for ``error``)
        collided on what the first left, or is a first launch that refused what an earlier run
        left (:meth:`_refused_first`): it is measured again in a fresh folder. The first
        ``ok`` launch is kept as the one later ones are compared with, with what it created."""
        from hpcds1mpi.config import OK
        from hpcds1mpi.measure.printable import clipped

        if self.first is None:
            if status == OK:
                self.first = result
                self.created = set() if self.fresh else entries(self.home) - self.before
                return False
            return self._refused_first(error)
        ran = status == OK and ran_its_work(self.first, result)  # s44: a cold first launch
        if self.fresh or not (line := collision(self.first, result, self.created, ran)):
            return False
        self.fresh, self.collided = True, self.launches
        if self.say:
            self.say(f"note: {self.label}: launch {self.launches} said {clipped(line, 160)!r}, "
                     f"which launch 1 did not, after launch 1 created {_shown(self.created)} in "
                     f"{self.home or 'the current folder'}: every repeat runs the same command "
                     "in one folder, so that launch is not measured and it and the rest run "
                     "again, each in a fresh folder linking the folder's earlier files (removed "
                     "after; launch 1's outputs are kept)")
        return True

    def _refused_first(self, error: str) -> bool:
        """Whether a failed first launch refused outputs an earlier run left (see the module):
        then it, and every launch after it, runs in a fresh folder without them."""
        from hpcds1mpi.measure.printable import clipped

        if self.fresh or self.launches != 1 or not refuses_leftovers(error) or \
                not (left := leftovers(error, self.before, self.args, self.home)):
            return False
        self.before -= left
        # every name: an input left out by mistake must show (s48 review RY2)
        self.fresh, self.left = True, ", ".join(sorted(left))
        if self.say:
            self.say(f"note: {self.label}: launch 1 said {clipped(error, 160)!r}: the program "
                     f"refuses outputs an earlier run left in {self.home or 'the current folder'}"
                     f" ({self.left}), so it runs again, and so does every repeat, each in a "
                     "fresh folder linking the folder's other files (removed after; the earlier "
                     "outputs are kept)")
        return True

    def kept(self, status: str, error: str) -> str:
        """The ``error`` a run of ``status`` keeps: an ``ok`` one measured in fresh folders
        says so, with the configuration's folder (:data:`FRESH_RUN`)."""
        from hpcds1mpi.config import OK

        if status != OK or error or not self.fresh:
            return error
        return FRESH_RUN + os.path.abspath(self.home or ".")

    def reason(self, error: str) -> str:
        """A failed launch's reason, saying where it ran when that was a fresh folder, or that
        the program refuses outputs an earlier run left where its reason says a thing already
        exists (A3: "fix the command" had been all the advice)."""
        if self.left and error:
            return (f"{error} (in a fresh folder without {self.left}, which an earlier run left "
                    f"in {self.home or 'the current folder'} and launch 1 refused)")
        if not self.fresh and refuses_leftovers(error) and "of its command line" not in error:
            # its own folder, filled by an earlier sweep, needs no "--workdir" (s48 tester Q3)
            apart = ("or sweep into new, empty --workdir folders" if self.own else
                     "or give --workdir per configuration")
            return (f"{error} (the program refuses outputs already in its folder, which an "
                    "earlier run left: remove them, or name the outputs per run with "
                    f"placeholders, {apart})")
        if not self.fresh or not error:
            return error
        return (f"{error} (in a fresh folder, after launch {self.launches - 1} had collided "
                "on what launch 1 left in the configuration's folder)")


def refused_in(error: str) -> str:
    """The folder an ``ok`` run's ``error`` says it met outputs an earlier run left in
    (:meth:`RepeatFolders.kept`); "" where it says none."""
    return error[len(FRESH_RUN):] if error.startswith(FRESH_RUN) else ""


def _shown(names: set[str]) -> str:
    """Up to three of ``names``, sorted, and "..." for more."""
    return ", ".join(sorted(names)[:3]) + (", ..." if len(names) > 3 else "")
