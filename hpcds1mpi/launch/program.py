"""The program rule: how a user's program command line becomes argv, and what environment it gets.

One rule for every place a program is started or written down: the sweep's external-program
mode (``sweep --command``), System 2's launches, the calibration script and the recommended
batch script. So the job a user submits is the job that was measured.

* **Placeholders** ``{size} {nodes} {ranks_per_node} {ranks} {threads} {precision} {device}``
  are filled by plain text replacement; any other ``{...}`` (``awk '{print $1}'``, a JSON
  argument) stays literal. :func:`program_tokens` is the only place that fills them.
* **Executable first**: the first word is the program, never an option: it follows the
  launcher's own options, which it would otherwise override (:func:`check_executable_first`).
* **Environment**: :func:`environment` is the only place that says which variables a program's
  ranks get.
"""

from __future__ import annotations

import re
import shlex
from typing import Sequence

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError

#: Placeholders a program command line may use; filled per configuration.
PLACEHOLDERS = ("size", "nodes", "ranks_per_node", "ranks", "threads", "precision", "device")

#: The placeholder a program's command takes its precision from.
PRECISION_PLACEHOLDER = "{precision}"


def program_precisions(program: str | None) -> tuple[str, ...] | None:
    """The precisions a tune may try for a program: fp64 alone unless its command takes
    ``{precision}`` (None: no restriction). Without the placeholder the runs of the other
    precisions would be the same computation under another label (the sweep of a program
    defaults to fp64 for the same reason)."""
    if program is None or PRECISION_PLACEHOLDER in program:
        return None
    return ("fp64",)


#: Control characters (newline, carriage return, NUL, ...): never allowed in a script.
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def no_control(value: str, what: str) -> str:
    """Return ``value`` if it is text without control characters, else raise ConfigError.

    A newline or carriage return in anything written into a script would start a new line
    there (a new directive or command), so it is refused everywhere.
    """
    if not isinstance(value, str):
        raise ConfigError(f"{what} must be text, got {value!r}")
    if CONTROL_RE.search(value):
        raise ConfigError(f"{what} {value!r} contains a newline or control character; remove it")
    return value


def placeholder_values(config: Configuration, size: int | None = None) -> dict:
    """The placeholder values of ``config`` (``size`` only when known)."""
    values = {"precision": config.precision, "device": config.device,
              "threads": config.threads, "ranks": config.ranks, "nodes": config.nodes,
              "ranks_per_node": config.ranks_per_node}
    if size is not None:
        values["size"] = size
    return values


#: Shell operators a command line may hold by habit: ``--command`` / ``--program`` is not run
#: by a shell, so each would reach the program as an argument.
_SHELL_TOKEN_RE = re.compile(r"^(\d?>&\d|\d?>>?|&>|<|\|\||\||&&|;|&)")
_ASSIGNMENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: Quoted or escaped text, which a shell would not read as an operator either ('a > b', \>).
_QUOTED_RE = re.compile(r"""'[^']*'|"(?:[^"\\]|\\.)*"|\\.""", re.DOTALL)


def program_note(program: str | Sequence[str] | None, option: str = "--program"
                 ) -> str | None:
    """A note on ``program``'s text that would run otherwise than its author meant, or None:
    ``{word}`` text that is no placeholder but looks like one (``{rank}``, ``{Size}``,
    ``{n-threads}``): it is passed as it is, so a typo would run every configuration with the
    same literal argument.

    Raises:
        ConfigError: shell syntax outside quotes (:func:`check_no_shell_syntax`, naming
            ``option``), or words a shell would expand (``~``, ``$VAR``, ``*``:
            :mod:`~hpcds1mpi.launch.unexpanded_words`). A token list is argv already: not
            checked.
    """
    import difflib

    text = program if isinstance(program, str) else " ".join(map(str, program or ()))
    notes, slips = [], []
    from hpcds1mpi.launch.placeholder_fill import braced_words

    for word in braced_words(text or ""):  # {{word}} is written {word}: no slip
        if word in PLACEHOLDERS:
            continue
        plain = word.lower().replace("-", "_")
        meant = difflib.get_close_matches(plain, PLACEHOLDERS, n=1, cutoff=0.75)
        meant = meant or [p for p in PLACEHOLDERS if plain.endswith(p) or plain.startswith(p)]
        if meant:
            slips.append(f"{{{word}}} (did you mean {{{meant[0]}}}?)")
    if slips:
        notes.append(f"{option} has {', '.join(slips)}: not a placeholder, passed as written; "
                     f"the placeholders are {' '.join('{' + p + '}' for p in PLACEHOLDERS)}")
    if isinstance(program, str):
        from hpcds1mpi.launch.unexpanded_words import check_no_expansion

        check_no_shell_syntax(program, option)
        check_no_expansion(program, option)  # ~, $VAR, *: passed as written (s39 tester D7)
        check_no_per_configuration_env(program, option)
    return "; ".join(notes) or None


#: The variables :func:`environment` sets per configuration, each with its placeholder.
PER_CONFIGURATION = {"OMP_NUM_THREADS": "{threads}", "OPENBLAS_NUM_THREADS": "{threads}",
                     "MKL_NUM_THREADS": "{threads}", "HPCDS1MPI_THREADS": "{threads}",
                     "HPCDS1MPI_PRECISION": "{precision}", "HPCDS1MPI_DEVICE": "{device}"}


def check_no_per_configuration_env(text: str, option: str = "program") -> None:
    """Refuse a command whose exec-wrapper prefix (``env OMP_NUM_THREADS=2 ./app``, ``env -u
    ...``) sets or removes a variable the runs get per configuration (:func:`environment`):
    it would override every run's, so the runs of ``--threads 1`` ran 2 threads and were
    recorded as 1 (s36 tester E5). Its placeholder (``OMP_NUM_THREADS={threads}``) is kept.

    Raises:
        ConfigError: naming the variable and the placeholder to write instead.
    """
    from hpcds1mpi.launch.exec_wrappers import read_wrappers

    try:
        found = read_wrappers(shlex.split(text))
    except ValueError:  # unbalanced quotes: program_tokens says so
        return
    if found is None:
        return
    for name, value, _ in found.assigned:
        if PER_CONFIGURATION.get(name, value) != value:
            raise ConfigError(
                f"{option} sets {name}={value} itself, which each run gets per configuration: "
                f"it would override every run's, whatever its recorded "
                f"{PER_CONFIGURATION[name].strip('{}')}; write "
                f"{name}={PER_CONFIGURATION[name]}, or leave it out (each run gets it)")
    for name in found.unset:
        if name in PER_CONFIGURATION:
            raise ConfigError(
                f"{option} removes {name} (env -u), which each run gets per configuration "
                f"({PER_CONFIGURATION[name]}); leave it in, or write "
                f"{name}={PER_CONFIGURATION[name]}")


def check_no_shell_syntax(text: str, option: str = "program") -> None:
    """Refuse shell syntax outside quotes in a command line given as text (``< in.txt``,
    ``> out.txt``, ``| tee log``, ``&&``, a leading ``VAR=value``): the command is not run by
    a shell, so it would reach the program as arguments and never do what was meant
    (``pw.x < si.in`` ran pw.x reading no input). Every path a command enters by comes here
    (:func:`program_tokens`; the CLI first through :func:`program_note`, naming its option).

    Raises:
        ConfigError: naming the tokens and the way out (a script).
    """
    bare = _QUOTED_RE.sub("q", text).split()
    shell = [m.group(0) for t in bare if (m := _SHELL_TOKEN_RE.match(t))]  # (">out": '>')
    if bare and _ASSIGNMENT_RE.match(bare[0]):
        try:
            shell.insert(0, shlex.split(text)[0])
        except ValueError:  # unbalanced quotes: program_tokens says so
            shell.insert(0, bare[0])
    if shell:
        said = [repr(t) for t in dict.fromkeys(shell)][:3]
        listed = said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"
        raise ConfigError(
            f"{option} is not run by a shell: {listed} would be passed on as part of the "
            "command, not read as shell syntax; put the redirection, pipe or variable in a "
            "script and give the script "
            f"(e.g. run.sh holding 'exec ./app < \"in-$1.txt\"', given as {option} "
            "'./run.sh {size}')")


def program_tokens(program: str | Sequence[str], values: dict | None = None) -> list[str]:
    """Split a program command line into argv tokens and fill placeholders.

    Args:
        program: a command line (split like a POSIX shell would, quotes honoured) or a token
            list.
        values: placeholder values, e.g. ``{"precision": "fp32"}`` (see
            :func:`placeholder_values`); ``{precision}`` in any token is replaced. Unknown
            ``{...}`` text, and placeholders without a value, are left as they are.

    Returns:
        The tokens, not yet quoted.

    Raises:
        ConfigError: empty program, unbalanced quotes, a control character, or a first word
            that is an option (:func:`check_executable_first`).
    """
    if isinstance(program, str):
        no_control(program, "program")
        check_no_shell_syntax(program)
        try:
            tokens = shlex.split(program)
        except ValueError as exc:
            raise ConfigError(f"program {program!r} cannot be parsed ({exc}); fix its quoting")
    else:
        tokens = [no_control(str(t), "program argument") for t in program]
    if not tokens:
        raise ConfigError("the program command is empty; give the program to run, e.g. "
                          "\"./my_app {size}\"")
    values = values or {}
    from hpcds1mpi.launch.placeholder_fill import fill

    known = {key: values[key] for key in PLACEHOLDERS if key in values}
    filled = [fill(token, known) for token in tokens]  # {{size}}: the text {size}
    check_executable_first(filled)
    return filled


def check_executable_first(tokens: Sequence[str]) -> None:
    """Refuse a program whose first word is an option (``-n 99 ./app``, ``--ntasks=1 ...``).

    The program's words follow the launcher's own options (``srun --ntasks=R ... PROGRAM``),
    so a leading option would be read by the launcher and override the layout the tool chose
    (rank count, binding, environment) under its own "recommended" header.

    Raises:
        ConfigError: ``tokens[0]`` starts with ``-``.
    """
    if tokens and str(tokens[0]).startswith("-"):
        first = str(tokens[0])
        raise ConfigError(
            f"program starts with {first!r}, an option: it must start with its executable "
            f"(a file named so: ./{first}); launcher options go in the cluster file's "
            "launcher_args (sweep and tune: --launcher-args), never before the program")


def program_not_found(name: str, cwd: str | None = None, option: str = "--command") -> str:
    """The one line for a program path ``name`` (one holding a ``/``) that does not exist.

    With ``--workdir`` (``cwd``: the configuration's folder) the program starts in that folder,
    so a relative path is looked up there: ``./heat_mpich`` beside the sweep was "not found"
    with no word of where it was looked for (s28 tester Y7a).
    """
    import os

    from hpcds1mpi.runtime.denied_access import closed_folder, denied_line

    looked = name if not cwd or os.path.isabs(name) else os.path.join(cwd, name)
    if closed_folder(looked) is not None:  # there or not, it cannot be run (s34 tester U5)
        return f"{option}: {denied_line(looked, 'program')}"
    if not cwd or os.path.isabs(name):
        return (f"{option}: program {name!r} not found; give the path of an executable (or a "
                "name on PATH)")
    here = os.path.abspath(name)
    absolute = f" ({here})" if os.path.exists(here) else ""
    return (f"{option}: program {name!r} not found in --workdir {cwd!r}: the program starts in "
            "each configuration's folder, so a relative path is looked up there; give its "
            f"absolute path{absolute}, or put the program in each folder")


def quote_tokens(tokens: Sequence[str]) -> str:
    """Join argv tokens into one shell-inert command line."""
    return " ".join(shlex.quote(t) for t in tokens)


def environment(config: Configuration, *, binds_cores: bool,
                extra: dict | None = None) -> dict[str, str]:
    """The environment variables a program's ranks get for ``config``, in a fixed order.

    * ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``: the threads per
      rank. An HPC program threads through OpenMP or through its BLAS; a BLAS left at its
      default starts one thread per core in every rank and oversubscribes the node.
    * ``OMP_PLACES=cores``, ``OMP_PROC_BIND=close`` only where the launcher binds every rank
      to its own cores (``srun -c T --cpu-bind=cores``): threads then stay on their rank's
      cores. Where ranks are not bound, or bound to a shared socket (``mpiexec`` without
      options), close binding would pin every rank's first thread to the same core.
    * ``HPCDS1MPI_THREADS``, ``HPCDS1MPI_PRECISION``, ``HPCDS1MPI_DEVICE``: the configuration,
      for programs that read it (placeholders are the other way).

    Args:
        config: the configuration the ranks run.
        binds_cores: whether the launcher binds each rank to its own cores.
        extra: more variables (validated names, values without control characters).

    Returns:
        ``{name: value}``, values unquoted.

    Raises:
        ConfigError: an invalid name or a control character in an extra value.
    """
    threads = str(config.threads)
    env = {"OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
           "MKL_NUM_THREADS": threads}
    if binds_cores:
        env.update(OMP_PLACES="cores", OMP_PROC_BIND="close")
    env.update(HPCDS1MPI_THREADS=threads, HPCDS1MPI_PRECISION=config.precision,
               HPCDS1MPI_DEVICE=config.device)
    for key, value in (extra or {}).items():
        if not _ENV_NAME_RE.match(str(key)):
            raise ConfigError(f"environment variable name {key!r} is not valid")
        env[str(key)] = no_control(str(value), f"value of {key}")
    return env


def size_not_given_note(program: str | Sequence[str], size: int, measured: str = "",
                        carried_by: Sequence[str] = ()) -> str | None:
    """The comment for a script of ``program`` recommended for ``size`` whose command does not
    carry it (no ``{size}``): the size lives in the program's input, which the script does not
    show (s28 testers U, T: ABINIT's ``abinit si.abi``, CP2K's ``-i h2o.inp`` while the model
    measured ``-i h2o-{size}.inp``); ``measured``, the command its sweep ran, is named where it
    differs. None when the command carries the size, or is our own ``hpcds1mpi run``, or one
    of ``carried_by`` does (its sweep's ``--setup`` or ``--workdir``, which the script repeats
    filled for the size: an input written from ``{size}``, s30 testers N7b, O7)."""
    text = program if isinstance(program, str) else " ".join(program)
    from hpcds1mpi.launch.placeholder_fill import uses

    if uses(text, "size") or text.startswith("hpcds1mpi run ") or \
            any(uses(other, "size") for other in carried_by):
        return None
    said = f"; it was measured as {measured!r}" if measured and measured != text else ""
    return (f"the command carries no {{size}}: the prediction is for size {size}, which must "
            f"be in the program's input{said}")
