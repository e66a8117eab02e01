"""NonEmptyPath: an empty or blank file name is a usage error at the parameter, never read as
no option, whether the command is reached through the group or called directly."""

import click
import pytest
from click.testing import CliRunner

from hpcds1mpi.schemas.paths import NonEmptyPath


@click.command()
@click.option("--model", type=NonEmptyPath(), default=None)
@click.option("-o", "--output", type=NonEmptyPath(fix="give the file, or - to print it"))
@click.argument("files", nargs=-1, type=NonEmptyPath(dir_okay=False))
def _command(model, output, files):
    click.echo(f"model={model!r} output={output!r} files={files!r}")


@pytest.mark.parametrize("argv, line", [
    (["--model", ""], "--model is empty; give a path, or leave the option out (an unset shell "
                      "variable?)"),
    (["--model", "  "], "--model is empty; give a path, or leave the option out"),
    (["-o", ""], "--output is empty; give the file, or - to print it"),
    (["a.h5", ""], "FILES is empty; give a path (an unset shell variable?)"),
])
def test_an_empty_value_is_a_usage_error_that_says_what_to_do(argv, line):
    result = CliRunner().invoke(_command, argv)
    assert result.exit_code == 2 and line in result.output, result.output
    assert "model=" not in result.output


def test_a_value_given_or_left_out_passes_as_click_path_would():
    result = CliRunner().invoke(_command, ["--model", "m", "-o", "-", "a.h5"])
    assert result.exit_code == 0, result.output
    assert "model='m' output='-' files=('a.h5',)" in result.output
    assert "model=None" in CliRunner().invoke(_command, []).output


def test_every_path_parameter_of_every_command_refuses_an_empty_value():
    """Was a callback the group attached when it resolved a command: a command called directly
    (tests, the API) took '' silently, and two commands needed an exception list."""
    from hpcds1mpi.cli import COMMANDS, cli

    ctx = click.Context(cli)
    plain = []
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        for sub in [command, *getattr(command, "commands", {}).values()]:
            plain += [f"{name} {param.name}" for param in sub.params
                      if isinstance(param.type, click.Path)
                      and not isinstance(param.type, NonEmptyPath)]
    assert plain == []


def test_a_folder_where_a_file_is_asked_says_to_give_the_file(tmp_path):
    """s41 tester C4: click's own "File 'x' is a directory." said no fix."""
    result = CliRunner().invoke(_command, [str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert f"{tmp_path}: is a directory; give a file" in result.output
    assert "Invalid value" not in result.output
