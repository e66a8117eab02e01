"""The edits of a script rewrite: values replaced where they stand, lines added or removed,
and the changed lines as ``advise`` shows them (:mod:`hpcds1mpi.launch.script_rewrite`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hpcds1mpi.launch.script_options import Option, comment_start, pbs_options, words

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Setting

#: A value the scheduler fills in from the directives (``$SLURM_NTASKS``, ``$PBS_NUM_PPN``).
SCHEDULER_VAR_RE = re.compile(r"^\$\{?(SLURM|SRUN|PBS)_\w+\}?$")


@dataclass(frozen=True)
class Change:
    """One changed, added or removed line: its number in the old script (for an added line,
    the line it follows), the old text (empty when added) and the new (empty when removed)."""

    line: int
    old: str
    new: str


class Edits:
    """The edits of one rewrite: (start, end, new text) spans of the script's text."""

    def __init__(self, script: "JobScript"):
        self.script, self.edits = script, []

    def put(self, opt: "Option", value, spelled: str) -> None:
        """Set an option's value where it stands (the whole option when its value is quoted)."""
        value = str(value)
        if opt.value == value:
            return
        if opt.value_span is not None and opt.value_span[0] is not None:
            self.edits.append((*opt.value_span, value))
        else:
            self.edits.append((*opt.span, f"{spelled}={value}"))

    def launch_value(self, opt: "Option", value, spelled: str) -> None:
        if opt.raw and SCHEDULER_VAR_RE.match(opt.raw.strip("\"'")):
            return  # filled in by the scheduler from the directives, which change
        self.put(opt, value, spelled)

    def insert(self, at: int, text: str) -> None:
        if text.endswith("\n") and "\r\n" in self.script.text:
            text = text.replace("\n", "\r\n")  # added lines end as the script's lines do
        self.edits.append((at, at, text))

    def changes(self) -> list[Change]:
        """The lines the edits change or add, in the order of the script."""
        text, out = self.script.text, []
        starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        by_line: dict[int, list] = {}
        for start, end, new in self.edits:
            number = max(k for k, s in enumerate(starts) if s <= start) + 1
            if start == end and new.endswith("\n") and start == starts[number - 1]:
                out += [Change(number - 1, "", added) for added in new.splitlines()]
            else:
                by_line.setdefault(number, []).append((start, end, new))
        lines = [x[:-1] if x.endswith("\r") else x for x in text.split("\n")]
        for number, edits in by_line.items():
            base = starts[number - 1]
            line = lines[number - 1]
            for start, end, new in sorted(edits, reverse=True):
                line = line[:start - base] + new + line[end - base:]
            out.append(Change(number, lines[number - 1], line))
        return sorted(out, key=lambda c: (c.line, c.old == ""))

    def apply(self) -> str:
        """The edited text. Lines added at one place keep the order they were added in:
        directives first, then an export (an export first would end the directives, and
        sbatch would ignore the added ones)."""
        text = self.script.text
        self._check_disjoint()
        order = sorted(range(len(self.edits)), reverse=True,
                       key=lambda k: (self.edits[k][0], self.edits[k][1], k))
        for k in order:
            start, end, new = self.edits[k]
            text = text[:start] + new + text[end:]
        return text

    def _check_disjoint(self) -> None:
        """Raise on two edits of one stretch of text: applied one after the other, the second
        would cut what the first left, wrecking lines no edit meant to touch.

        Raises:
            ValueError: an internal error (a bug in the rewrite, not the script's).
        """
        reached = 0
        for start, end, _ in sorted(self.edits, key=lambda edit: edit[:2]):
            if start < reached:
                raise ValueError(f"internal error: the rewrite edits text offsets {start}-{end} "
                                 f"twice (an edit before ends at {reached}); please report it "
                                 "with the script")
            reached = max(reached, end)


def env_value_at(text: str, name: str, opt: "Option") -> tuple[int, int] | None:
    """Where the value of variable ``name`` stands in launch option ``opt`` (``-x NAME=2``,
    ``--export=ALL,NAME=2``, ``env NAME=2``, hydra's ``-genv NAME 2``), None if not there."""
    m = re.search(r"(?<![\w$])" + name + r"=([^\s,]*)", text[opt.span[0]:opt.span[1]])
    if m:
        return opt.span[0] + m.start(1), opt.span[0] + m.end(1)
    return opt.value_span  # ``-genv NAME 2`` (s29 tester D1): the value is a word of its own


def directive_line(script: "JobScript") -> int:
    """Where a new directive goes: after the last one read, else after the ``#!`` line."""
    if script.directives_end:
        return min(script.directives_end, len(script.text))
    first = script.text.split("\n", 1)[0]
    return len(first) + 1 if first.startswith("#!") else 0


def drop_option(e: Edits, opt: "Option", directive: bool) -> None:
    """Remove an option: its whole line when it is a directive line's only option, else the
    option and the blanks before it."""
    text = e.script.text
    start = text.rfind("\n", 0, opt.span[0]) + 1
    end = text.find("\n", opt.span[1])
    end = len(text) if end < 0 else end
    rest = text[start:opt.span[0]] + text[opt.span[1]:end]
    if directive and re.fullmatch(r"#\w+\s*(#.*)?", rest.strip()):
        e.edits.append((start, min(end + 1, len(text)), ""))
        return
    before = opt.span[0]
    while before > start and text[before - 1] in " \t":
        before -= 1
    e.edits.append((before, opt.span[1], ""))


def drop_resources(e: Edits, dropped: list["Option"]) -> None:
    """Remove PBS ``-l`` resources (``ncpus=4`` of ``-l ncpus=4,walltime=1:00:00``), each with
    one comma that joins it to a resource kept; an ``-l`` all of whose resources go goes
    whole, and so does a line all of whose options go. Cut one by one, two neighbours would
    both take the comma between them (``-l ncpus=4,mem=8gb``), and the cuts overlap."""
    text, gone = e.script.text, {o.span for o in dropped}
    for line_start in sorted({text.rfind("\n", 0, o.span[0]) + 1 for o in dropped}):
        options, groups = _line_options(text, line_start)
        if all(o.span in gone for o in options):  # nothing left for the line to ask
            end = text.find("\n", line_start)
            e.edits.append((line_start, len(text) if end < 0 else end + 1, ""))
            continue
        for group in groups:
            if all(o.span in gone for o in group):  # qsub refuses a -l without a resource
                flag = re.search(r"-l[ \t]*$", text[line_start:group[0].span[0]])
                begin = line_start + flag.start() if flag else group[0].span[0]
                drop_option(e, Option("l", None, group[0].line, (begin, group[-1].span[1])),
                            directive=True)
                continue
            for k, opt in enumerate(group):
                if opt.span not in gone:
                    continue
                if any(o.span not in gone for o in group[k + 1:]):  # the comma after it
                    e.edits.append((opt.span[0], group[k + 1].span[0], ""))
                else:  # the last kept one is before it: the comma before it
                    e.edits.append((group[k - 1].span[1], opt.span[1], ""))


def _line_options(text: str, line_start: int) -> tuple[list["Option"], list[list["Option"]]]:
    """The options of the PBS directive line at ``line_start`` as :mod:`~.script_reading`
    reads them, and its ``-l`` resources grouped by the ``-l`` they are written in (one
    ``-l``'s resources stand one comma apart)."""
    end = text.find("\n", line_start)
    body = text[line_start + len("#PBS"):len(text) if end < 0 else end].rstrip("\r")
    body = body[:comment_start(body, anywhere=True)]
    options = pbs_options(words(body, line_start + len("#PBS")), 0)
    groups: list[list[Option]] = []
    for opt in options:
        joined = groups and opt.span[0] == groups[-1][-1].span[1] + 1 \
            and text[groups[-1][-1].span[1]] == ","
        if opt.name.startswith("l:") and joined:
            groups[-1].append(opt)
        elif opt.name.startswith("l:"):
            groups.append([opt])
    return options, groups


def drop_setting(e: Edits, setting: "Setting") -> None:
    """Remove a variable the script sets: its whole line where that is all the line does
    (``export OMP_PLACES=cores``, ``setenv OMP_PLACES cores``, a comment after it), else the
    ``NAME=value`` word and the blanks before it (``export A=1 OMP_PLACES=cores``)."""
    text = e.script.text
    value_start, value_end = setting.value_span
    start = text.rfind("\n", 0, value_start) + 1
    end = text.find("\n", value_end)
    end = len(text) if end < 0 else end
    word = value_start - len(setting.name) - 1
    assigned = text[word:value_start] == setting.name + "="
    rest = (text[start:word] + text[value_end:end]) if assigned else \
        re.sub(rf"^\s*setenv\s+{re.escape(setting.name)}\s*", "",
               text[start:value_start]) + text[value_end:end]
    if re.fullmatch(r"\s*(export|declare\s+-x)?\s*(#.*)?", rest.rstrip("\r")):
        e.edits.append((start, min(end + 1, len(text)), ""))
    elif assigned:
        while word > start and text[word - 1] in " \t":
            word -= 1
        e.edits.append((word, value_end, ""))
