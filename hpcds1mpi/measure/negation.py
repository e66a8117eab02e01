"""Words of a line read only where the line does not deny them (s45 tester F6).

:data:`~hpcds1mpi.measure.error_cause.WENT_ON`'s "from scratch", "fall back", "start afresh"
had read "restart.dat not found: cannot start from scratch in restart mode" and "no fallback;
will not start afresh" as a program that went on, keeping a bad exit-0 run ``ok``; and
:data:`~hpcds1mpi.measure.error_cause.REFUSAL_WORD`'s "exceed", "fail" had read "needs at least
1.2 GB of memory, which does not exceed the 64 GB available" and "... to avoid failure at
checkpoint" as refusals, failing a good run. :class:`Unnegated` is such a pattern whose
matches count only where the words just before them in their clause (:data:`CLAUSE`) do not
deny them, nor the words right after ("fall back not possible").
"""

from __future__ import annotations

import re

#: Where a clause of a line ends: its words before are another statement's ("chk.h5 not
#: found, starting from scratch" goes on; the "not" is the file's).
CLAUSE = re.compile(r"[,;:!?]|\.(?:\s|$)|\s[-–—]+\s")
#: How far beside a match its denying words are looked for: they are a few words at most, and
#: a clause read whole for each match was quadratic on long lines (s45 review RV4).
NEAR = 80
#: A program saying it cannot do what follows, right before it in its clause ("cannot start
#: from scratch", "will not start afresh", "does not fall back", "no fallback"), one word
#: between at most, and not what it could not read ("cannot open chk.h5 starting from scratch"
#: is a file's trouble the program went on from); a bare "not" or "no" only right before it or
#: its verb ("not starting from scratch"; "not found starting ..." is the file's). Nor what
#: the clause tells the user to do for it: an instruction opening the clause with the phrase
#: its aim ("set restart=no to start from scratch", "remove -cpi to start from scratch", "pass
#: --reset to reset ...") or a pointer to the manual ("(see the manual for the defaults
#: used)") or an option's name ("--reset", "-continue"): advice on a refusal, no program
#: that went on (s46 review RV5); a verb with no object is a past one ("set to 4 instead").
CANNOT = re.compile(r"\b(?:cannot|can ?not|can't|could(?: not|n't)|will not|won't|would not|"
                    r"wouldn't|(?:does|do|did) not|doesn't|don't|didn't|unable to|not able to|"
                    r"refus\w* to|fail(?:ed|s)? to)\s+(?:(?:simply|just|safely|automatically)\s+)?"
                    r"(?:(?!open|read|find|load|locate|access)\w+\s+)?$|"
                    r"\b(?:not|no|never)\s+(?:(?:be|start|go|do)\w*\s+)?$|"
                    r"(?:^|\()\W*(?:(?:please|or|and|then|else|otherwise|you\s+(?:can|could|may|"
                    r"must|should|need\s+to|have\s+to))\s+)*(?:(?:set|unset|remove|delete|use|pass|"
                    r"add|give|specify|provide|supply|rerun|re-run|edit|change|enable|omit|rename|"
                    r"select|choose)\s+(?!to\b)\S.*\bto\s+(?:\w+\s+)?|"
                    r"(?:see|consult|refer\s+to)\s.*)$|(?:^|\s)--?$", re.IGNORECASE)
#: Words right after a phrase that deny it: "fall back not possible", "restart impossible",
#: "fallback disabled", "defaults are used only with -d" (s46 review RV5).
NOT_POSSIBLE = re.compile(r"^\s*(?:(?:is|was|are|were)\s+)?(?:not\s+possible|impossible|"
                          r"not\s+allowed|failed|fails|disabled|(?:turned|switched)\s+off|"
                          r"not\s+(?:enabled|available|supported)|unavailable|unsupported|"
                          r"only\s+(?:with|if|when))\b", re.IGNORECASE)
#: A word denied right before it, at most one word between: "does not exceed", "doesn't
#: exceed", "never fails", "to avoid failure", "without error", "prevent a failure".
DENIED = re.compile(r"(?:\b(?:not|never|no|without|avoid(?:s|ed|ing)?|prevent(?:s|ed|ing)?)|"
                    r"n't)\s+(?:\w+\s+)?$", re.IGNORECASE)


class Unnegated:
    """A compiled ``pattern`` whose :meth:`search` skips matches that ``before`` (searched in
    the text of the match's clause before it) or ``after`` (in the text of its clause after
    it) denies."""

    def __init__(self, pattern: re.Pattern, before: re.Pattern,
                 after: re.Pattern | None = None) -> None:
        self.regex, self.before, self.after = pattern, before, after
        self.pattern = pattern.pattern

    def search(self, text: str) -> re.Match | None:
        """The first match of the pattern in ``text`` that its clause does not deny; None."""
        at = 0
        while (match := self.regex.search(text, at)) is not None:
            if not self.denied(text, match):
                return match
            at = match.start() + 1  # a later match may be the one not denied
        return None

    def denied(self, text: str, match: re.Match) -> bool:
        """Whether ``match``, in ``text``, is denied by the words beside it in its clause
        (within :data:`NEAR` characters of it)."""
        # Only the words next to it deny it: a window keeps a line of many matches linear.
        near = max(0, match.start() - NEAR)
        start = max((m.end() for m in CLAUSE.finditer(text, near, match.start())), default=near)
        if self.before.search(text[start:match.start()]):
            return True
        if self.after is None:
            return False
        rest = text[match.end():match.end() + NEAR]
        end = CLAUSE.search(rest)
        return bool(self.after.search(rest[:end.start()] if end else rest))
