"""Who may call the service: the state directory, the bearer token and how it is checked.

The token is ``HPCDS1MPI_SERVE_TOKEN`` when set, else the content of ``token`` in the state
directory, which the first start creates with mode 0600 (``O_CREAT | O_EXCL``, so it is never
readable by others, not even for an instant) from 32 random bytes. A token file that group or
others can read is refused, as ssh refuses such a key: the token may already have leaked. The
state directory (default ``$XDG_STATE_HOME/hpcds1mpi/serve``, i.e.
``~/.local/state/hpcds1mpi/serve``) is created 0700 and is the only place the server writes.
An existing one that group or others may enter or read is refused in one line, as the token
file is: its mode is never changed, since the directory may be one the user shares or needs
open (``--state-dir ~``, a project folder, ``/tmp`` under root), and a chmod there would break
other things without a word.

Tokens are compared with :func:`hmac.compare_digest` (constant time), on bytes, so a wrong
token's length or first differing character cannot be learnt from response times.
"""

from __future__ import annotations

import errno
import hmac
import os
import secrets
import shlex
import stat
from pathlib import Path

from hpcds1mpi.errors import ConfigError, OutputError, WriteError

TOKEN_ENV = "HPCDS1MPI_SERVE_TOKEN"
TOKEN_FILE = "token"
#: Shortest token accepted from the environment (a guessable token is no protection).
MIN_TOKEN = 16


def default_state_dir() -> Path:
    """``$XDG_STATE_HOME/hpcds1mpi/serve``, ``~/.local/state/hpcds1mpi/serve`` without it."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "hpcds1mpi" / "serve"


def state_dir(path: str | os.PathLike | None) -> Path:
    """The state directory, created 0700 if missing.

    Raises:
        OutputError: it cannot be created, is not a directory, is not writable, or is an
            existing directory that group or others may enter or read.
    """
    where = Path(path) if path else default_state_dir()
    if where.exists() and not where.is_dir():
        raise OutputError(f"{where} is not a directory; pass --state-dir DIR")
    try:
        where.mkdir(mode=0o700, parents=True)
        os.chmod(where, 0o700)  # ours: the umask may have taken the owner's bits
    except FileExistsError:
        pass
    except OSError as exc:
        raise OutputError(f"{where}: cannot create the state directory ({exc.strerror}); "
                          "pass --state-dir DIR") from None
    if not where.is_dir():
        raise OutputError(f"{where} is not a directory; pass --state-dir DIR")
    mode = stat.S_IMODE(os.stat(where).st_mode)
    if mode & 0o077:
        raise OutputError(f"{where} is open to others (mode {mode:o}) and the server keeps "
                          f"its token there: chmod 700 {shlex.quote(str(where))}, or pass a "
                          "new --state-dir")
    if not os.access(where, os.W_OK | os.X_OK):
        raise OutputError(f"{where}: state directory is not writable; pass --state-dir DIR")
    return where


def load_token(where: Path) -> tuple[str, str]:
    """(token, where it came from): the environment, or the token file (made on first start).

    Raises:
        ConfigError: the environment's token is shorter than :data:`MIN_TOKEN`, or the token
            file is readable by group or others, empty or not a regular file.
    """
    env = os.environ.get(TOKEN_ENV)
    if env is not None:
        env = env.strip()
        if len(env) < MIN_TOKEN:
            raise ConfigError(f"{TOKEN_ENV} is {len(env)} characters; use at least {MIN_TOKEN} "
                              "(e.g. python -c 'import secrets; print(secrets.token_urlsafe())')")
        return env, TOKEN_ENV
    path = where / TOKEN_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read_token(path), str(path)
    except OSError as exc:
        raise disk_full(exc, where) or OutputError(
            f"{path}: cannot create the token file ({exc.strerror}); pass --state-dir DIR") \
            from None
    token = secrets.token_urlsafe(32)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(token + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        path.unlink(missing_ok=True)  # an empty token file would refuse every later start
        raise disk_full(exc, where) or OutputError(
            f"{path}: cannot write the token file ({exc.strerror}); pass --state-dir DIR") \
            from None
    return token, str(path)


def disk_full(exc: BaseException, where: Path) -> WriteError | None:
    """The one-line error (exit 1) for ``exc`` when it is a full disk or a spent quota while
    serve writes in its state directory ``where`` (the token, numba's and the guard's caches),
    else None (s32 tester T2: a traceback, in the server or from a worker)."""
    if not isinstance(exc, OSError) or exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    return WriteError(f"{where}: serve cannot write its token and caches there, the disk is "
                      f"full ({exc.strerror}); free some space and rerun, or pass --state-dir "
                      "DIR on another disk")


def _read_token(path: Path) -> str:
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the token file ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path} is not a regular file; remove it and start again")
    if info.st_mode & 0o077:
        raise ConfigError(f"{path} is readable by others (mode {stat.S_IMODE(info.st_mode):o}); "
                          "the token may have leaked: remove the file to get a new one")
    try:
        token = path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        raise ConfigError(f"{path}: cannot read the token file; remove it to get a new one") \
            from None
    if len(token) < MIN_TOKEN:
        raise ConfigError(f"{path} holds no usable token; remove it to get a new one")
    return token


def refusal(header: str | None, token: str) -> str | None:
    """Why an ``Authorization`` header is refused, or None when it carries the token."""
    if not header:
        return "no Authorization header; send 'Authorization: Bearer <token>'"
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return "Authorization is not 'Bearer <token>'"
    if not hmac.compare_digest(given.strip().encode("utf-8", "surrogateescape"),
                               token.encode()):
        return "wrong token"
    return None
