"""Tests for hpcds1mpi.launch.placeholder_fill: one filling rule, {{name}} a literal {name}."""

from __future__ import annotations

from hpcds1mpi.config import Configuration
from hpcds1mpi.launch.placeholder_fill import braced_words, fill, uses
from hpcds1mpi.launch.program import program_note, program_tokens
from hpcds1mpi.measure.readings import Readings
from hpcds1mpi.measure.setup_command import filled_setup
from hpcds1mpi.measure.workdirs import folder_of


def test_a_doubled_placeholder_is_written_as_the_literal_placeholder():
    """s44 tester N7: --setup "sed 's/{{size}}/{size}/' tmpl > in" became sed 's/{20}/20/',
    which matched nothing, so every configuration ran the template's unfilled input."""
    values = {"size": 20, "ranks": 4}
    assert fill("sed 's/{{size}}/{size}/' t > in; echo {{x}} {ranks}", values) == \
        "sed 's/{size}/20/' t > in; echo {x} 4"
    # any other brace stays as written: awk's program, the shell's ${X}, a word not given
    assert fill("awk '{if($1){print}}' ${HOME} {rank} {{ x }}", values) == \
        "awk '{if($1){print}}' ${HOME} {rank} {{ x }}"
    assert braced_words("{size} {{ranks}} {threads}") == ["size", "threads"]
    assert uses("a {{size}}", "size") is False and uses("a {size}", "size")


def test_every_filled_text_takes_the_same_rule():
    """--command, --setup, --workdir and --output-file are filled alike."""
    config = Configuration(1, 2, 1, "cpu", "fp64")
    assert program_tokens("./app {size} {{size}}", {"size": 20}) == ["./app", "20", "{size}"]
    assert filled_setup("echo '{{size}} {size}' > s.txt", config, 20) == "echo '{size} 20' > s.txt"
    assert folder_of("runs/{size}-{{ranks}}", config, 20) == "runs/20-{ranks}"
    readings = Readings(output_file="out.{size}.{{size}}")
    assert readings.output_path("w", {"size": 20}).endswith("out.20.{size}")
    # a doubled placeholder is no slip of a placeholder's name
    assert program_note("./app {{rank}} {size}") is None


def test_a_placeholder_in_tripled_braces_is_its_value_in_braces():
    """s44 tester O7: ``{{{size}}}`` (a JSON or Lua input's ``n = {{{size}}}``) is ``{20}``, as
    str.format writes it, and the size is used; it had read as the literal ``{{size}}``."""
    assert fill("n = {{{size}}}", {"size": 20}) == "n = {20}" == "n = {{{size}}}".format(size=20)
    assert uses("n = {{{size}}}", "size") and braced_words("{{{size}}} {{ranks}}") == ["size"]
    assert fill("{{{other}}}", {"size": 20}) == "{{{other}}}"  # not ours: as written
