"""Whether a user's program can be started, checked before anything launches: given, found
(as a path, in its folder, or on ``PATH``, past ``env`` / ``nice`` / ``timeout`` wrappers) and
executable."""

from __future__ import annotations

import os
import shutil

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.exec_wrappers import program_past_wrappers
from hpcds1mpi.launch.program import check_executable_first


def check_program(tokens: list[str], env: dict | None = None, cwd: str | None = None,
                  option: str = "--command", setup: str | None = None) -> None:
    """Check that the program ``tokens[0]`` can be started, before anything launches
    (``option``: the option that gave it, for the message).

    Raises:
        ConfigError: it is an option (:func:`~hpcds1mpi.launch.program.check_executable_first`),
            not found (as a path, or on ``PATH``) or not an executable file.
    """
    name = tokens[0] if tokens else ""
    if not name:
        raise ConfigError(f"{option} is empty: give your program, e.g. {option} './app {{size}}'")
    try:  # tune checks its words before they pass through program_tokens
        check_executable_first(tokens)
    except ConfigError as exc:
        raise ConfigError(f"{option}: {exc}") from None
    given = tokens
    tokens, name, env = program_past_wrappers(tokens, env, option)  # s30 tester R6, R7
    after = f" (the word after `{' '.join(given[:len(given) - len(tokens)])}`)" \
        if len(tokens) < len(given) else ""
    if "/" in name:
        found = os.path.join(cwd, name) if cwd else name
        if not os.path.exists(found) and setup and cwd and not os.path.isabs(name):
            return  # in its folder, which the setup prepares (`cp ../app .`: s30 verifier V2)
        if not os.path.exists(found):
            from hpcds1mpi.launch.program import program_not_found

            raise ConfigError(program_not_found(name, cwd, option))
    else:
        found = shutil.which(name, path=(env or os.environ).get("PATH"))
        if found is None:
            raise ConfigError(f"{option}: program {name!r}{after} is not on PATH; give its "
                              "path (e.g. ./" + name + ") or install it")
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise ConfigError(f"{option}: {found!r} is not an executable file (chmod +x it, or "
                          "start it through its interpreter, e.g. 'python3 app.py')")
