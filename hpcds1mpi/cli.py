"""The ``hpcds1mpi`` command line: a click group whose subcommands load on first use.

Each subcommand lives in ``hpcds1mpi/commands/<name>.py`` as ``command``. Listing them for
``--help`` uses the short help written here, so ``--help`` imports none of them (and so none of
torch, h5py, lightgbm, botorch, cupy or MPI).
"""

from __future__ import annotations

import errno
import importlib
import sys

import click

from hpcds1mpi import __version__
from hpcds1mpi.errors import HpcdsError

# name -> short help. The module is hpcds1mpi.commands.<name with - as _>.
COMMANDS: dict[str, str] = {
    "kernels": "List the MPI kernels, their decompositions and knobs.",
    "cluster": "Show a cluster (file, Slurm or this machine) and its valid configurations.",
    "run": "Run one kernel once under the current launch (mpiexec/srun) and print its timing.",
    "sweep": "Measure kernels or your own MPI program over configurations into HDF5 telemetry.",
    "telemetry": "Show, export or merge telemetry files.",
    "ingest": "Read job logs (Slurm sacct, SWF, PM100, Adastra, Eagle, Eurora) into a job table.",
    "train": "Train the runtime/energy/failure surrogate bundle from telemetry or job tables.",
    "learn": "Retrain a bundle on newly collected runs (kept per machine).",
    "mobo": "Multi-objective Bayesian optimisation of runtime and energy over configurations.",
    "recommend": "Recommend nodes, ranks, threads, device and precision; write the batch script.",
    "tune": "System 2: tune a job with real runs inside an allocation.",
    "quickstart": "Measure this machine, train, recommend and write a Slurm script, end to end.",
    "campaign": "Split a sweep plan into batch jobs (per node count, array shards) and merge them.",
    "advise": "Read an existing Slurm/PBS script: what it asks for against what we recommend.",
    "serve": "Serve recommendations over HTTP (token, TLS) with a web console.",
}


class StdoutClosed(Exception):
    """The reader of stdout went away (``| head``). Raised past click, whose own handling of
    a broken pipe exits 1 without a word; :func:`main` exits quietly with 141."""


#: Exit status when stdout's reader went away: a shell's for a tool killed by SIGPIPE
#: (128 + 13), as ``cat big | head`` gives; not 0, since the command may not have finished.
BROKEN_PIPE_EXIT = 141


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand runs."""

    def make_context(self, *args, **kwargs):  # --help and --version print here
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError as exc:
            raise StdoutClosed() from exc

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            raise StdoutClosed() from exc

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        module_name = f"hpcds1mpi.commands.{name.replace('-', '_')}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            return _not_built(name)
        return refuse_repeated_options(module.command)

    def format_commands(self, ctx, formatter):
        rows = [(name, text) for name, text in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def refuse_repeated_options(command: click.Command) -> click.Command:
    """``command`` (and a group's subcommands) refusing an option given twice that takes one
    value: click keeps the last silently, so ``sweep --sizes 64 --sizes 128`` swept 128 alone
    while ``--kernel a --kernel b`` (``multiple``) swept both. Options that add up
    (``multiple``, ``count``) may repeat. Returns ``command``, changed in place once."""
    if getattr(command, "_refuses_repeats", False):
        return command
    command._refuses_repeats = True
    make_parser = command.make_parser

    def counting_parser(ctx):
        parser = make_parser(ctx)
        parse = parser.parse_args

        def parse_args(args):
            opts, rest, order = parse(args)
            if not ctx.resilient_parsing:  # shell completion parses half-typed lines
                _refuse_repeats(ctx, order)
            return opts, rest, order

        parser.parse_args = parse_args
        return parser

    command.make_parser = counting_parser
    for sub in getattr(command, "commands", {}).values():
        refuse_repeated_options(sub)
    return command


def _refuse_repeats(ctx: click.Context, order: list) -> None:
    """A usage error (exit 2) for the first one-value option that ``order`` (every option as
    parsed, one entry a use) holds twice; none when ``--help`` was asked for."""
    import re
    from collections import Counter

    if any(getattr(p, "is_eager", False) for p in order):
        return  # --help / --version answer whatever else was typed
    for param, uses in Counter(order).items():
        if uses < 2 or not isinstance(param, click.Option) or param.multiple or param.count:
            continue
        # every spelling of it ("-o/--output"): the user may have typed either, or both
        name = "/".join([*param.opts, *param.secondary_opts[:1]])
        if param.is_flag:
            ctx.fail(f"{name} is given {uses} times; give it once")
        hint = (f" (a list is one comma-separated value: {max(param.opts, key=len)} A,B)"
                if re.search(r"\w,\w", param.help or "") else "")
        ctx.fail(f"{name} is given {uses} times and takes one value (only the last would "
                 f"count); give it once{hint}")


def shown_name(name) -> str:
    """A file name as text: bytes that are not UTF-8 (Python's surrogate escapes) as ``\\xff``."""
    import os

    try:
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
        return str(name).encode("utf-8", "backslashreplace").decode("utf-8")


def refuse_non_utf8(names, option: str, why: str, error=None) -> None:
    """Refuse, in one line and before anything is read or written, a file name with bytes that
    are not UTF-8 where a library takes UTF-8 names only (``why`` says which; pyarrow had died
    with a UnicodeEncodeError traceback). ``error``: the HpcdsError class (exit 2)."""
    for name in (names if isinstance(names, (tuple, list)) else (names,)):
        if name is None or str(name).isascii():
            continue
        try:
            str(name).encode("utf-8")
        except UnicodeEncodeError:
            raise (error or HpcdsError)(
                f"{option} {shown_name(name)}: the name has bytes that are not UTF-8 and {why}; "
                "rename it (or link it under a UTF-8 name)") from None


def _not_built(name: str) -> click.Command:
    @click.command(name=name, help=COMMANDS[name], context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def missing(args):
        raise HpcdsError(f"'{name}' is not available in this version of hpcds1mpi yet")

    return missing


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hpcds1mpi")
def cli() -> None:
    """hpcds1mpi: measure MPI jobs, learn their runtime and energy, and pick the layout
    (nodes, ranks per node, threads, CPU/GPU, precision) before you submit."""


def one_line(text: str) -> str:
    """``text`` on one line: line breaks and runs of blanks become one space."""
    return " ".join(str(text).split())


def usage_message(exc: click.ClickException) -> str:
    """A click usage error as one line: the cause, then where the valid values are."""
    message = one_line(exc.format_message())
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        return f"{message} (see '{ctx.command_path} --help')"
    return message


def main(argv: list[str] | None = None) -> None:
    """Console entry point: user errors become one line on stderr and a non-zero exit.

    Exit codes (errors.py): 0 done; 2 a usage error (a bad option value or a bad file the user
    named; click's usage errors too); 1 a runtime failure (a failed launch, a full disk, a held
    lock, an interrupted sweep, stdout on a full disk); 130 interrupted; 141, without a word,
    stdout's reader went away (``| head``). A closed stdout (``>&-``) is /dev/null. Anything
    that is not an ``HpcdsError`` is a bug and keeps its traceback, except a name with bytes
    that are not UTF-8 that a library could not take, and a path the user may not enter, read
    or write (exit 2, the line saying which folder stops them).
    """
    from hpcds1mpi.runtime.site_binding import set_aside

    set_aside()  # before xgboost/torch load libgomp, which would pin us (s36 tester E1)
    if not getattr(sys.unraisablehook, "delivers_interrupts", False):
        sys.unraisablehook = _interrupt_not_ignored(sys.unraisablehook)
    _closed_streams_to_null()
    _names_printable()
    from hpcds1mpi.runtime import interrupt_line
    from hpcds1mpi.runtime.unstoppable_output import keep_going, restore

    interrupt_line.install()  # Ctrl-C says what SIGTERM says (s33 tester C9)

    # A print between two writes must not stop the command part-way (`| head -1`, a full
    # disk): the command finishes, then a failed stdout is reported as below.
    kept = {name: keep_going(name) for name in ("stdout", "stderr")}
    try:
        _run_command(argv, kept["stdout"])
    finally:
        for name, streams in kept.items():
            restore(name, streams)


def _run_command(argv: list[str] | None, stdout_kept) -> None:
    """The command, and what :func:`main` says of how it ended."""
    try:
        cli.main(args=argv, prog_name="hpcds1mpi", standalone_mode=False)
        try:  # what is still buffered meets a closed pipe or a full disk here, not at exit
            sys.stdout.flush()
        except OSError as exc:
            exc.on_stdout = True
            raise
        if stdout_kept is not None and stdout_kept[0].error is not None:
            stdout_kept[0].error.on_stdout = True
            raise stdout_kept[0].error
    except click.exceptions.Abort as exc:
        _ignore_interrupts()
        click.echo(_interrupt_message(exc, "hpcds1mpi: aborted"), err=True)
        sys.exit(130)
    except (StdoutClosed, BrokenPipeError) as exc:
        if not _stdout_closed():  # another pipe (a socket, a child's stdin): a bug
            raise (exc.__cause__ or exc) if isinstance(exc, StdoutClosed) else exc
        _quiet_stdout()
        sys.exit(BROKEN_PIPE_EXIT)
    except click.ClickException as exc:
        from hpcds1mpi.runtime.mpi import launch_rank

        # Under mpiexec/srun every rank parses the same command line: one line, from rank 0.
        if launch_rank() == 0:
            click.echo(f"hpcds1mpi: error: {usage_message(exc)}", err=True)
        sys.exit(exc.exit_code)
    except HpcdsError as exc:
        click.echo(f"hpcds1mpi: error: {one_line(exc) or type(exc).__name__}", err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT) and _on_stdout(exc):
            # s32 tester T6: `> /dev/full` had a traceback; the outputs are written by then
            _quiet_stdout()  # Python's own flush at exit would fail again, with a traceback
            click.echo(f"hpcds1mpi: error: standard output not written, the disk is full "
                       f"({exc.strerror}); free some space and rerun", err=True)
            sys.exit(1)
        from hpcds1mpi.runtime.denied_access import path_error_line

        path_line = path_error_line(exc)
        if path_line:  # s34 tester U1: a path the user named, or one under it, is closed to them
            click.echo(f"hpcds1mpi: error: {path_line}", err=True)
            sys.exit(2)
        if exc.errno != errno.ENAMETOOLONG:
            raise  # any other OSError is a bug: it keeps its traceback
        # Only a path the user typed can be too long for the file system, wherever it is opened.
        name = str(exc.filename or "")
        click.echo(f"hpcds1mpi: error: {name[:60]}...: file name too long ({len(name)} "
                   "characters); give a shorter path", err=True)
        sys.exit(2)
    except UnicodeEncodeError as exc:
        if "surrogates not allowed" not in str(exc.reason):
            raise
        # Only a name from the system holds them (a file name's bytes that are not UTF-8):
        # a library that takes UTF-8 text only, where no command refused it up front.
        click.echo(f"hpcds1mpi: error: {_undecodable(exc)}: a name with bytes that are not "
                   "UTF-8, which this command cannot store; rename the file (or link it under a "
                   "UTF-8 name)", err=True)
        sys.exit(2)
    except ImportError as exc:
        from hpcds1mpi.runtime.address_space import import_error_line

        line = import_error_line(exc)  # s36 tester E4: a model library that could not load
        if line is None:
            raise
        click.echo(f"hpcds1mpi: error: {line}", err=True)
        sys.exit(1)
    except KeyboardInterrupt as exc:
        _ignore_interrupts()
        click.echo(_interrupt_message(exc, "hpcds1mpi: interrupted"), err=True)
        sys.exit(130)
    sys.exit(0)


def _interrupt_message(exc: BaseException, bare: str) -> str:
    """What Ctrl-C printed: the line SIGTERM would have printed (what was kept, how to go
    on), else ``bare``."""
    from hpcds1mpi.runtime.interrupt_line import line_of

    return line_of(exc) or bare


def _closed_streams_to_null() -> None:
    """A closed stdin, stdout or stderr (``>&-``) becomes /dev/null, so the command runs as if
    it were (s32 tester T5: stdout None had failed every command after its work, and the next
    file opened would have taken descriptor 1 and received what the command printed)."""
    import io
    import os

    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
            continue  # open after all (an embedding program's): not ours to replace
        except OSError:
            pass
        try:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            setattr(sys, name, io.TextIOWrapper(io.FileIO(fd, mode, closefd=False),
                                                encoding="utf-8", errors="surrogateescape",
                                                line_buffering=mode == "w"))
        except OSError:
            pass


def _on_stdout(exc: OSError) -> bool:
    """Whether ``exc`` was raised writing to stdout: by ``click.echo`` (every command prints
    through it) to descriptor 1, or by the final flush of :func:`main`."""
    if getattr(exc, "on_stdout", False):
        return True
    echo, frame, tb = click.utils.echo.__code__, None, exc.__traceback__
    while tb is not None:  # the innermost echo: the write that failed
        if tb.tb_frame.f_code is echo:
            frame = tb.tb_frame
        tb = tb.tb_next
    if frame is None:
        return False
    try:
        return frame.f_locals.get("file").fileno() == 1
    except (AttributeError, OSError, ValueError):
        return False


def _names_printable() -> None:
    """A file name's bytes that are not UTF-8 are printed as they are (as ``ls`` does), not
    refused: under a UTF-8 locale Python's stdout is strict, and "wrote ... to NAME" had died
    after the file was written."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict":
            try:
                stream.reconfigure(errors="surrogateescape")
            except (AttributeError, ValueError, OSError):
                pass


def _ignore_interrupts() -> None:
    """Once an interrupt is being reported, a second one (``timeout -s INT`` signals the
    command and then its process group) must not add a traceback while Python shuts down."""
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass


def _interrupt_not_ignored(hook):
    """``sys.unraisablehook`` that does not print a Ctrl-C landing where Python cannot raise
    it (a weak-reference callback of the import system, interpreter shutdown: "Exception
    ignored in ... KeyboardInterrupt"): it is delivered again a moment later instead, so it
    still stops the command (a no-op once an interrupt was said and SIGINT is ignored). Every
    other unraisable error is printed."""
    def quiet(unraisable):
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            hook(unraisable)
            return
        import _thread
        import threading

        # From another thread, a moment later: raised inside this hook it is ignored again.
        later = threading.Timer(0.05, _thread.interrupt_main)
        later.daemon = True  # never keeps the process from exiting
        try:
            later.start()
        except RuntimeError:  # the interpreter is shutting down: nothing left to stop
            pass

    quiet.delivers_interrupts = True
    return quiet


def _stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone (poll reports an error on it)."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.__stdout__.fileno(), 0)  # POLLERR / POLLHUP are always reported
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poll.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: Python's final flush must not report the closed pipe."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.__stdout__.fileno())
        os.close(null)
    except (AttributeError, OSError, ValueError):
        pass


def _undecodable(exc: UnicodeEncodeError) -> str:
    """The name ``exc`` could not encode, as text: an argument of the command line that holds
    it, else the word of the text it stands in (up to blanks and quotes: a whole script's
    lines around it had been printed)."""
    for arg in sys.argv[1:]:
        if any("\udc80" <= ch <= "\udcff" for ch in arg):
            return shown_name(arg)
    text = exc.object if isinstance(exc.object, str) else ""
    start, end = exc.start, exc.end
    while start > 0 and exc.start - start < 200 and not _ends_name(text[start - 1]):
        start -= 1
    while end < len(text) and end - exc.end < 200 and not _ends_name(text[end]):
        end += 1
    return shown_name(text[start:end]) or "a name"


def _ends_name(ch: str) -> bool:
    return ch.isspace() or ch in "'\""


if __name__ == "__main__":  # pragma: no cover
    main()
