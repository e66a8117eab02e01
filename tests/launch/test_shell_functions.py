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
