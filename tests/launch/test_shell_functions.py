"""A shell function's definition head on one line with its body: the body is read past it
(s42: ``run_sim() { srun ...; }`` was not read as a launch)."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.shell_functions import function_body, function_head

HEAD = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=4\n#SBATCH --time=00:30:00\n"


@pytest.mark.parametrize("words, head", [
    (["run_sim()", "{", "srun", "./app"], 2),
    (["run_sim", "()", "{", "srun", "./app"], 3),
    (["function", "run_sim", "{", "srun", "./app"], 3),
    (["function", "run_sim()", "{", "srun", "./app"], 3),
    (["run_sim()", "(", "srun", "./app", ")"], 2),
    (["srun", "./app"], 0), (["run_sim", "{"], 0), (["echo", "()"], 0), ([], 0)])
def test_a_definition_head_is_its_name_and_brace(words, head):
    assert function_head(words) == head


@pytest.mark.parametrize("body", [
    "run_sim() { srun ./prog 128; }\nrun_sim\n",
    "function run_sim { mpirun -np 4 ./prog 128; }\nrun_sim\n",
    "run_sim () { srun ./prog 128 > out.log 2>&1; }\nrun_sim\n",
    "run_sim() ( mpirun -np 4 ./prog 128 )\nrun_sim\n"])  # a subshell body (s43 tester J8)
def test_a_one_line_function_holding_the_launch_is_read_as_a_launch(body):
    from hpcds1mpi.decide.work_after_launch import work_after, work_before

    script = read_script(f"{HEAD}{body}")
    assert script.launch is not None and script.launch.line == 5
    assert script.launch.program == "./prog" and script.launch.args == ["128"]
    assert work_after(script, script.launch) is None  # its call is the launch
    assert work_before(script, script.launch) is None


@pytest.mark.parametrize("words, body", [
    (["run_sim()", "(", "srun", "./app", ")"], ["srun", "./app"]),
    (["run_sim()", "{", "srun", "./app"], ["srun", "./app"]),
    (["srun", "./app", ")"], ["srun", "./app", ")"]),
])
def test_a_subshell_bodys_closing_parenthesis_is_no_word_of_its_command(words, body):
    assert words[function_body(words)] == body


@pytest.mark.parametrize("words, head", [
    (["run_sim(){", "srun", "./app", ";", "}"], ("run_sim", 1, "{")),
    (["run_sim()"], ("run_sim", 1, "")),  # its `{` on the next line
    (["function", "run_sim"], ("run_sim", 2, "")),
    (["run_sim", "()", "{"], ("run_sim", 3, "{")),
    (["run_sim", "{"], None), (["srun", "./app"], None)])
def test_one_reader_gives_a_definitions_name_head_and_opener(words, head):
    """s43 review R17: the script reader and the work reader had each read heads their way."""
    from hpcds1mpi.launch.shell_functions import definition_head

    assert definition_head(words) == head


def test_a_glued_head_holding_the_launch_is_read_by_both_readers():
    from hpcds1mpi.decide.script_functions import definitions
    from hpcds1mpi.decide.work_after_launch import work_after

    script = read_script(HEAD + "run_sim(){ srun ./app 96 20; }\nrun_sim\npython3 plot.py\n")
    assert script.launch is not None and script.launch.program == "./app"
    assert [d.name for d in definitions(script)] == ["run_sim"]
    assert work_after(script, script.launch) == (7, "python3 plot.py")


@pytest.mark.parametrize("body", ["run_sim() (srun -n 2 ./app 96 20)",
                                  "run_sim() (srun -n 2 ./app 96 20 )",
                                  "run_sim() ( srun -n 2 ./app 96 20)",
                                  "function run_sim() (srun -n 2 ./app 96 20)"])
def test_a_launch_glued_to_a_subshell_bodys_parenthesis_is_read(body):
    """s43's left list: `run_sim() (srun ./app)` was read as no launch line at all."""
    script = read_script(f"{HEAD}{body}\nrun_sim\n")
    assert script.launch is not None and script.launch.program == "./app"
    assert script.launch.args == ["96", "20"] and script.ntasks == 2


@pytest.mark.parametrize("line", ["(srun -n 2 ./app 96 20)", "( srun -n 2 ./app 96 20 )",
                                  "(srun -n 2 ./app 96 20 )", "( srun -n 2 ./app 96 20)",
                                  "(cd run && srun -n 2 ./app 96 20)",
                                  "(cd run || exit 1; srun -n 2 ./app 96 20) > out.log"])
def test_a_launch_in_a_top_level_subshell_is_read_as_a_function_bodys_is(line):
    """s44 tester O9: `(srun ./app 20)` was no launch line, and `20)` the size word after a
    `cd` in the subshell; the function body's rule (85c7eb3) now serves every line."""
    script = read_script(f"{HEAD}{line}\n")
    assert script.launch is not None and script.launch.program == "./app"
    assert script.launch.args == ["96", "20"] and script.ntasks == 2


@pytest.mark.parametrize("raws, kept", [
    (["(srun", "./app", "20)"], ["srun", "./app", "20"]),
    (["srun", "./app", "20)"], ["srun", "./app", "20"]),  # after `(cd run &&`
    (["srun", "-n", "$(nproc)", "./app", '"a)"'], ["srun", "-n", "$(nproc)", "./app", '"a)"']),
    (["(", ")"], [])])
def test_only_a_subshells_own_parentheses_are_cut(raws, kept):
    from hpcds1mpi.launch.shell_functions import subshell_words

    assert [w.raw for w in subshell_words(_command(raws))] == kept


def _command(raws: list[str]) -> list:
    """A simple command's words, as the script reader splits them, from their raw text."""
    from hpcds1mpi.launch.shell_words import Word

    command, at = [], 0
    for raw in raws:
        command.append(Word(raw.strip('"'), at, at + len(raw), raw))
        at += len(raw) + 1
    return command


@pytest.mark.parametrize("line, edges", [
    ("( export X=8", (1, 0)), ("(srun ./app 20)", (1, 1)), ("./prep )", (0, 1)),
    ("./prep 20))", (0, 2)), ("( ( srun ./app ) )", (2, 2)), ("echo '(' \"a)\"", (0, 0)),
    ("arr=(1 2 3)", (0, 0)), ("(arr=(1 2 3))", (1, 1)), ("(( n = 2 ))", (0, 0)),
    ("srun -n $(nproc) ./app", (0, 0)), ("run_sim() (", (1, 0)),
    ("run_sim() ( srun ./app )", (0, 0)), ("run_sim() (srun ./app 20)", (1, 1)),
    ("(standard) module load x ;;", (0, 0)), ("(a|b) srun ./app ;;", (0, 0))])
def test_a_command_opens_and_closes_the_subshells_it_stands_at_the_edge_of(line, edges):
    """s45 S1: the reader ends a subshell's assignments at its closer; an array's or an
    arithmetic's parentheses, a one-line function body's and a ``case`` arm's ``(pat)``
    (s45 review RV1) open or close none."""
    from hpcds1mpi.launch.shell_functions import subshell_edges

    assert subshell_edges(_command(line.split())) == edges
