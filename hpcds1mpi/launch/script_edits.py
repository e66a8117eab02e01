"""The edits of a script rewrite: values replaced where they stand, lines added or removed,
and the changed lines as ``advise`` shows them (:mod:`hpcds1mpi.launch.script_rewrite`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hpcds1mpi.launch.script_options import Option

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
        order = sorted(range(len(self.edits)), reverse=True,
                       key=lambda k: (self.edits[k][0], self.edits[k][1], k))
        for k in order:
            start, end, new = self.edits[k]
            text = text[:start] + new + text[end:]
        return text


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


def drop_resource(e: Edits, opt: "Option") -> None:
    """Remove a PBS ``-l`` resource (``ncpus=4`` of ``-l ncpus=4,walltime=1:00:00``) with the
    comma that joins it to the others; the whole ``-l`` when it was its only resource, and the
    whole line when that was the line's only option."""
    text = e.script.text
    start, end = opt.span
    if text[end:end + 1] == ",":
        e.edits.append((start, end + 1, ""))
    elif text[start - 1:start] == ",":
        e.edits.append((start - 1, end, ""))
    else:  # the -l's only resource: the -l goes too (qsub refuses a -l without one)
        line_start = text.rfind("\n", 0, start) + 1
        flag = re.search(r"-l[ \t]*$", text[line_start:start])
        begin = line_start + flag.start() if flag else start
        drop_option(e, Option("l", opt.value, opt.line, (begin, end)), directive=True)


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
