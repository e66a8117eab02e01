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
    "ingest": "Read Slurm sacct / PM100 / Adastra job logs into a job table.",
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


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand runs."""

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
        return _refusing_empty_paths(module.command)

    def format_commands(self, ctx, formatter):
        rows = [(name, text) for name, text in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _refusing_empty_paths(command: click.Command) -> click.Command:
    """``command`` (and its subcommands) with every path parameter refusing an empty value:
    ``--model "$MODEL"`` with ``MODEL`` unset had been read as no option, so the shipped
    bundle answered for the user's own silently."""
    if getattr(command, "_empty_paths_refused", False):
        return command
    for param in command.params:
        if isinstance(param.type, click.Path):
            param.callback = _no_empty_path(param.callback)
    for sub in getattr(command, "commands", {}).values():
        _refusing_empty_paths(sub)
    command._empty_paths_refused = True
    return command


def _no_empty_path(then):
    def check(ctx, param, value):
        values = value if isinstance(value, (tuple, list)) else (value,)
        if any(v is not None and str(v).strip() == "" for v in values):
            option = isinstance(param, click.Option)
            name = max(param.opts, key=len) if option else param.human_readable_name
            raise click.UsageError(f"{name} is empty; give a path"
                                   f"{', or leave the option out' if option else ''} (an unset "
                                   "shell variable?)", ctx=ctx)
        return then(ctx, param, value) if then is not None else value

    return check


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
    lock, an interrupted sweep); 130 interrupted. Anything that is not an ``HpcdsError`` is a
    bug and keeps its traceback.
    """
    try:
        cli.main(args=argv, prog_name="hpcds1mpi", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("hpcds1mpi: aborted", err=True)
        sys.exit(130)
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
        if exc.errno != errno.ENAMETOOLONG:
            raise  # any other OSError is a bug: it keeps its traceback
        # Only a path the user typed can be too long for the file system, wherever it is opened.
        name = str(exc.filename or "")
        click.echo(f"hpcds1mpi: error: {name[:60]}...: file name too long ({len(name)} "
                   "characters); give a shorter path", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("hpcds1mpi: interrupted", err=True)
        sys.exit(130)
    sys.exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
