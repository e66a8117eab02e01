"""The exec-wrapper prefix of a command: the words before the program that only start it.

``env POISSON_N=128 python3 app.py``, ``nice -n 5 ./app``, ``numactl --cpunodebind=0 ./app``,
``taskset -c 0-3 ./app``, ``stdbuf -oL ./app``, ``timeout 60 ./app``, ``time -p ./app``,
``nohup ./app``, ``chrt -f 10 ./app``, nested in any order. Every place that asks which
program a command runs (the pre-flight's MPI check, the fingerprint's library, the script
reader, advise's MPI check and size) reads the prefix here, so none reads ``env`` itself as
the program (s30 tester K1: ``env POISSON_N={size} python3 ...`` was read as ``env``, "links
no MPI library", and the recorded command lost ``env POISSON_N={size}``).

:func:`read_wrappers` reads words as the wrappers' own option parsers do (getopt: options
end at the first word that is none, or ``--``); a wrapper whose options are not known here
(``env -S STRING`` splits a string of its own) makes the command unreadable (None): no guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: ``NAME=VALUE`` as env(1) takes it before the program.
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)

#: Per wrapper: (short options taking a value, long options taking a value, short flags,
#: long flags, how many operands come before the program).
_WRAPPERS: dict[str, tuple[str, frozenset, str, frozenset, int]] = {
    "nice": ("n", frozenset({"adjustment"}), "", frozenset(), 0),
    "numactl": ("ipmNCwP", frozenset({"interleave", "preferred", "membind", "cpunodebind",
                                      "physcpubind", "weighted-interleave", "preferred-many"}),
                "lab", frozenset({"localalloc", "all", "balancing"}), 0),
    "taskset": ("", frozenset(), "ac", frozenset({"all-tasks", "cpu-list"}), 1),
    "stdbuf": ("ioe", frozenset({"input", "output", "error"}), "", frozenset(), 0),
    "timeout": ("ks", frozenset({"kill-after", "signal"}), "fv",
                frozenset({"foreground", "preserve-status", "verbose"}), 1),
    "time": ("fo", frozenset({"format", "output"}), "apqv",
             frozenset({"append", "portability", "quiet", "verbose"}), 0),
    "nohup": ("", frozenset(), "", frozenset(), 0),
    "chrt": ("TPD", frozenset({"sched-runtime", "sched-period",
                                                  "sched-deadline"}),
             "abdfiormRv", frozenset({"all-tasks", "batch", "deadline", "fifo", "idle",
                                      "other", "rr", "reset-on-fork", "verbose"}), 1),
}
#: timeout(1)'s duration: a number, with a unit of s, m, h or d.
DURATION = re.compile(r"\d+(\.\d+)?[smhd]?")
#: Every exec wrapper read here, by name.
WRAPPER_NAMES = frozenset({"env", *_WRAPPERS})
#: env(1)'s options: flags, and those taking a value (``-u NAME``, ``-C DIR``).
_ENV_FLAGS = frozenset({"-i", "-", "--ignore-environment", "-0", "--null", "-v", "--debug"})
_ENV_VALUED = {"-u": "unset", "--unset": "unset", "-C": "chdir", "--chdir": "chdir"}


@dataclass(frozen=True)
class ExecWrappers:
    """A command's exec-wrapper prefix, read.

    Attributes:
        program_at: the index of the program word (after the prefix; 0 without one).
        assigned: (name, value, index of the word) of each ``NAME=VALUE`` env sets.
        unset: the names ``env -u`` removes; cleared: ``env -i`` (the program gets only
            ``assigned``).
        chdir: the folder ``env -C DIR`` runs the program in (the last one), "" for none.
        operands: (wrapper name, word) of each operand a wrapper takes before the program
            (``timeout``'s duration, ``taskset``'s mask, ``chrt``'s priority), as its options
            parser reads them: the one reading every check of an operand uses.
    """

    program_at: int = 0
    assigned: tuple[tuple[str, str, int], ...] = ()
    unset: tuple[str, ...] = ()
    cleared: bool = False
    chdir: str = ""
    operands: tuple[tuple[str, str], ...] = ()

    def environment(self, env: dict) -> dict:
        """``env`` as the program finds it after the prefix (where its PATH is searched)."""
        out = {} if self.cleared else {k: v for k, v in env.items() if k not in self.unset}
        out.update((name, value) for name, value, _ in self.assigned)
        return out


def is_wrapper(word: str) -> bool:
    """Whether ``word`` (a command's first word, with or without a folder) is an exec
    wrapper read here."""
    return word.rsplit("/", 1)[-1] in WRAPPER_NAMES


def read_wrappers(words: list[str]) -> ExecWrappers | None:
    """The exec-wrapper prefix of ``words`` (see the module docstring); None where a
    wrapper's words cannot be read, or no program follows them."""
    k, assigned, unset, cleared, chdir, operands = 0, [], [], False, "", []
    while k < len(words) and is_wrapper(words[k]):
        name = words[k].rsplit("/", 1)[-1]
        k += 1
        if name == "env":
            while k < len(words) and words[k].startswith("-"):
                option = words[k]
                k += 1
                if option == "--":
                    break
                if option in _ENV_FLAGS or re.fullmatch(r"-[i0v]+", option):
                    cleared = cleared or option in ("-", "--ignore-environment") or (
                        option[1:2] != "-" and "i" in option)
                    continue
                if bunched := re.fullmatch(r"-([i0v]+)([uC])(.*)", option, re.S):
                    # flags bunched before -u / -C (`env -iu X`, `env -0C DIR`), as getopt
                    cleared = cleared or "i" in bunched.group(1)
                    option = f"-{bunched.group(2)}{bunched.group(3)}"
                key, _, value = option.partition("=")
                if key in _ENV_VALUED and not value:
                    if k >= len(words):
                        return None
                    value, k = words[k], k + 1
                elif key[:2] in ("-u", "-C") and len(key) > 2:
                    key, value = key[:2], key[2:]
                if key not in _ENV_VALUED:
                    return None  # -S/--split-string and the like: not read
                if _ENV_VALUED[key] == "unset":
                    unset.append(value)
                else:
                    chdir = value
            while k < len(words) and ASSIGNMENT.match(words[k]):
                found = ASSIGNMENT.match(words[k])
                assigned.append((found.group(1), found.group(2), k))
                k += 1
            continue
        *options, count = _WRAPPERS[name]
        k = _past_options(words, k, *options)
        if k is None or k + count > len(words):
            return None
        operands += [(name, word) for word in words[k:k + count]]
        k += count
    if k >= len(words):
        return None
    return ExecWrappers(k, tuple(assigned), tuple(unset), cleared, chdir, tuple(operands))


def _past_options(words: list[str], k: int, short_valued: str, long_valued: frozenset,
                  short_flags: str, long_flags: frozenset) -> int | None:
    """The index after one wrapper's options from ``words[k]`` (its first operand's); None
    where an option is not known here or a value is missing."""
    while k < len(words) and words[k].startswith("-") and words[k] != "-":
        option = words[k]
        k += 1
        if option == "--":
            break
        if option.startswith("--"):
            key, equals, _ = option[2:].partition("=")
            if key in long_valued and not equals:
                k += 1
            elif key not in long_valued and key not in long_flags:
                return None
            continue
        if re.fullmatch(r"-\d+", option) and "n" in short_valued:  # nice -5: an adjustment
            continue
        for at, letter in enumerate(option[1:], start=1):
            if letter in short_valued:
                k += 0 if option[at + 1:] else 1  # -n5 or -n 5
                break
            if letter not in short_flags:
                return None
    return k if k <= len(words) else None


def program_index(words: list[str]) -> int:
    """The index of the program in ``words`` after an exec-wrapper prefix (0 without one,
    or where the prefix cannot be read)."""
    found = read_wrappers(words) if words and is_wrapper(words[0]) else None
    return found.program_at if found is not None else 0


def prefix_before(words: list[str]) -> list[str]:
    """The exec-wrapper prefix that ``words`` end with (the words between a launcher's options
    and its program: ``mpiexec -n 2 env X=1``); [] where they end with none."""
    for start in range(len(words)):
        if is_wrapper(words[start]):
            found = read_wrappers([*words[start:], "program"])
            if found is not None and found.program_at == len(words) - start:
                return words[start:]
    return []


def past_wrappers(tokens: list[str], env: dict) -> tuple[list[str], dict] | None:
    """``tokens`` from their program on, and the environment it is found in (``env`` as the
    prefix changes it); None where the prefix cannot be read."""
    if not tokens or not is_wrapper(tokens[0]):
        return list(tokens), env
    found = read_wrappers(tokens)
    return None if found is None else (list(tokens[found.program_at:]), found.environment(env))


def program_past_wrappers(tokens: list[str], env: dict | None, option: str):
    """(tokens, program word, env) from the program on, past an exec-wrapper prefix
    (``env X=1``, ``nice -n 5``).

    Raises:
        ConfigError: a prefix that names no program, or ``env -i``, which clears the
            launcher's wire-up (s30 tester R7, R6: every launch failed, or timed ``nice``)."""
    import os

    from hpcds1mpi.errors import ConfigError

    if not is_wrapper(tokens[0]):
        return tokens, tokens[0], env
    found = read_wrappers(tokens)
    if found is None:
        raise ConfigError(f"{option}: {' '.join(tokens[:4])!r} names no program after "
                          f"{os.path.basename(tokens[0])}'s words (or an option not read here, "
                          f"such as env -S): give the program after them, e.g. {option} "
                          "'env OMP_PLACES=cores ./app {size}'")
    if found.cleared:
        raise ConfigError(f"{option}: env -i clears the variables the launcher gives each rank "
                          "(its MPI wire-up), so MPI_Init fails: set what the program needs "
                          "with env NAME=VALUE instead")
    if (bad := next((word for name, word in found.operands
                     if name == "timeout" and not DURATION.fullmatch(word)), None)) is not None:
        raise ConfigError(f"{option}: timeout's first word after its options is its duration "
                          f"(e.g. timeout 600 ./app), not {bad!r}")  # s30 verifier V2 D5
    rest = tokens[found.program_at:]
    return rest, rest[0], found.environment(dict(env if env is not None else os.environ))

