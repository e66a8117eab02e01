"""A user's regex proven cheap to compile before it is compiled.

The ``regex`` package's searches can be timed out (:data:`MATCH_TIMEOUT_S`), its
compiling cannot: it unrolls counted repeats, so ``(?:(?:(?:x{99}){99}){99}){99}``, 30
characters, asks for ~10^8 nodes — gigabytes and an OOM kill on a shared login node, a
MemoryError (HTTP 500) and a bloated worker in ``hpcds1mpi serve`` (s29 tester H1).

So the pattern is first parsed by the ``regex`` package's own parser (the one
``regex.compile`` runs: verbose mode, nested sets and every ``regex``-only construct read as
it reads them; parsing costs time and memory in proportion to the text, nothing unrolled),
and its *unrolled size* is bounded: every node counts once (a literal string once per
character), times the least counts of the repeats around it: ``{n}`` by ``n``, ``{m,n}`` and
``{m,}`` by ``m``, as the compiler copies a repeat's body only for its minimum
(``(?:x{300,1000}){300,1000}`` compiles as dearly as ``(?:x{300}){300}``, 30 ms;
``.{0,100000}`` and ``(?:(?:x{1,99}){1,99}){1,99}`` in under a millisecond: s29 verifier V3-4,
where counting ``n`` refused them). Measured (regex 2026.12): compiling costs ~0.1-1 KB and ~0.1-2.5 us
per unrolled item, so a pattern at :data:`MAX_UNROLLED` compiles in at most ~25 ms and 10 MB
(``(?fi)``, full case folding, the dearest), while the patterns that read a program's output
(``HPL_time=([0-9.eE+-]+)``, ``\\d{1,3}``, HPCC's result line) unroll to tens of items. Group
calls (``(?1)``) and fuzzy constraints (``{e<=1}``) are not unrolled by the compiler and count
once. The parser is the package's private one (``regex._regex_core``, the same since 2023.12):
``tests/measure/test_regex_cost.py`` fails, not a user, where a release changes it.
"""

from __future__ import annotations

import sys

from hpcds1mpi.errors import ConfigError

#: Longest one search of a program's output by a user's regex may take. A pattern such as
#: ``(a|aa)+b`` backtracks without end on a few dozen characters, and Python's ``re`` cannot be
#: stopped (a sweep spun until its walltime), so these patterns are compiled by the ``regex``
#: package (re's syntax, kept by the author of re's own matcher), whose searches can be.
MATCH_TIMEOUT_S = 5.0

#: Longest pattern compiled; output-reading patterns are a few dozen characters (HPCC's result
#: line: 50), and the service's fields stop at 200 already.
MAX_PATTERN_CHARS = 2000
#: Most items a pattern may unroll to when compiled (see the module's docstring).
MAX_UNROLLED = 10_000
#: Parse-tree nodes walked at most (see ``_size``).
_MAX_VISITS = 10 * MAX_PATTERN_CHARS
#: What the refusals suggest instead of a counted repeat.
_SIMPLER = r"write \d+ or \S+ where it counts characters"


def compile_bounded(text: str, option: str, flags: int | None = None):
    """``text`` compiled by ``regex`` (``flags``: MULTILINE when None) once its length and
    unrolled size are within :data:`MAX_PATTERN_CHARS` and :data:`MAX_UNROLLED`.

    Raises:
        ConfigError: not a regular expression, or too costly to compile (``option`` named).
    """
    import regex

    flags = regex.MULTILINE if flags is None else flags
    if len(text) > MAX_PATTERN_CHARS:
        raise ConfigError(f"{option} is {len(text):,} characters, over the "
                          f"{MAX_PATTERN_CHARS:,} a pattern that reads a program's output "
                          "needs: give the words of the line and a group for the number")
    size = unrolled_size(text, flags, option)
    if size > MAX_UNROLLED:
        raise ConfigError(f"{option}: counted repeats ({{n}}) unroll this pattern to "
                          f"{size:,} items when compiled, over the {MAX_UNROLLED:,} a pattern "
                          f"that reads a program's output needs: {_SIMPLER}")
    try:  # not kept in regex's cache of 500 patterns: a service's worker would hold them
        return regex.compile(text, flags, cache_pattern=False)
    except regex.error as exc:
        raise ConfigError(f"{option}: {exc}") from None
    except (MemoryError, RecursionError):  # not expected within the bounds; never a traceback
        raise ConfigError(f"{option} is too costly to compile: {_SIMPLER}") from None
    finally:  # nor in its per-pattern locale note, emptied only when that cache is
        vars(sys.modules[regex.compile.__module__]).get("_locale_sensitive", {}).pop(
            (str, text), None)


def unrolled_size(text: str, flags: int, option: str = "the regex") -> int:
    """How many items ``text`` unrolls to when ``regex`` compiles it with ``flags`` (an upper
    bound: see the module's docstring).

    Raises:
        ConfigError: not a regular expression, or groups nested too deep to parse.
    """
    import regex

    try:
        tree = _parse(text, flags)
    except regex.error as exc:
        raise ConfigError(f"{option}: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{option} nests its groups too deep to compile; "
                          "a pattern that reads a program's output needs a few") from None
    return _size(tree)


def _parse(text: str, flags: int):
    """``text``'s parse tree, as ``regex.compile`` parses it (regex/_main.py ``_compile``:
    a global flag set inline, ``(?x)`` say, restarts the parse with it)."""
    import regex
    from regex import _regex_core as core

    core.DEFAULT_VERSION = regex.DEFAULT_VERSION  # as _compile sets it before parsing
    global_flags = flags
    while True:
        source = core.Source(text)
        info = core.Info(global_flags, source.char_type, {})
        info.guess_encoding = core.UNICODE
        source.ignore_space = bool(info.flags & regex.VERBOSE)
        if hasattr(source, "use_unicode_space"):  # newer than 2023.12, as _compile does
            source.use_unicode_space(bool(info.flags & regex.VERSION1))
        try:
            tree = core._parse_pattern(source, info)
        except core._UnscopedFlagSet:
            global_flags = info.global_flags
            continue
        if not source.at_end():
            raise regex.error("unbalanced parenthesis", text, source.pos)
        return tree


def _size(tree) -> int:
    """The unrolled size of a parse tree: each node once (a string once per character) times
    the counts of the repeats around it. Walked with a stack (the tree is as deep as the
    pattern's nesting), each node visited once per path to it: a parse tree has about two
    nodes per character, so more visits than :data:`_MAX_VISITS` (a shape this walk does not
    expect) count as over the bound instead of walking on."""
    from regex import _regex_core as core

    total, stack, visits = 0, [(tree, 1)], 0
    while stack:
        node, times = stack.pop()
        total += times * (1 + len(getattr(node, "characters", ())))
        visits += 1
        if visits > _MAX_VISITS:
            return max(total, MAX_UNROLLED + 1)
        if isinstance(getattr(node, "min_count", None), int):  # a repeat: its body copied
            times *= max(1, node.min_count)  # for its minimum only (the docstring's timings)
        # Children: whatever node attributes hold (sequence items, branches, a group's
        # subpattern, a conditional's yes and no), by value, so no node kind is missed.
        for value in vars(node).values():
            if isinstance(value, core.RegexBase):
                stack.append((value, times))
            elif isinstance(value, (list, tuple)):
                stack.extend((v, times) for v in value if isinstance(v, core.RegexBase))
    return total
