"""The folder a job script's launch runs in, followed through its `cd` lines (s39 tester D8:
the words "cd line" in an echo were read as a move, and a cd to an absolute folder here was
given up on, so advise's launcher check was skipped on every script recommend wrote for a
program swept without --workdir)."""

from __future__ import annotations

import math

from hpcds1mpi.launch.script_folder import (folder_moves, launch_folder, unknown_move,
                                            written_folder)
from hpcds1mpi.launch.script_reading import read_script


def _folder(lines: str, cwd, scheduler: str = "slurm") -> str | None:
    head = "#SBATCH -N 1\n" if scheduler == "slurm" else "#PBS -l select=1\n"
    script = read_script(f"#!/bin/bash\n{head}{lines}mpiexec -n 2 ./app\n")
    return launch_folder(script, script.launches[-1], str(cwd))


def test_only_a_cd_run_as_a_command_moves_the_job():
    text = ('echo "job: no run: put it there, or edit the cd line, then submit again" >&2\n'
            "[ -e x ] || { echo 'cd elsewhere' >&2; exit 1; }  # cd /gone\n"
            "if [ -d a ]; then cd a; fi; (cd b && make)\n"
            "cd -P \"$SLURM_SUBMIT_DIR\" >/dev/null && pushd 'c d'\n")
    assert [(m.line, m.command, m.word, m.undone_at == math.inf)
            for m in folder_moves(text)] == [
        (3, "cd", ("a", True), True), (3, "cd", ("b", True), False),
        (4, "cd", ("$SLURM_SUBMIT_DIR", False), True), (4, "pushd", ("c d", True), True)]


def test_a_folder_of_this_machine_is_followed(tmp_path):
    run = tmp_path / "run dir"
    run.mkdir()
    nl = tmp_path / "nl\nfolder $x"
    nl.mkdir()
    assert _folder(f"cd '{run}'\n", tmp_path / "submit") == str(run)
    assert _folder("cd \"$SLURM_SUBMIT_DIR\"\ncd 'run dir'\n", tmp_path) == str(run)
    assert _folder("cd .\ncd ../" + tmp_path.name + "\n", tmp_path) == str(tmp_path)
    assert _folder("cd $'" + str(nl).replace("\n", "\\n") + "'\n", tmp_path) == str(nl)
    assert _folder('cd "${PBS_O_WORKDIR:-.}"\n', tmp_path, "pbs") == str(tmp_path)


def test_a_folder_not_known_here_is_none_and_its_line_said(tmp_path):
    for lines in ("cd $SCRATCH/run\n", "cd /no/such/folder\n", "cd -\n", "pushd a\npopd\n",
                  "cd ${SCRATCH:-/tmp}\n", "cd run*\n"):
        assert _folder(lines, tmp_path) is None, lines
    script = read_script("#!/bin/bash\n#SBATCH -N 1\ncd $SCRATCH\nmpiexec -n 2 ./app\n")
    assert unknown_move(script, script.launches[-1]) == 3
    assert _folder("cd $SCRATCH\ncd \"$SLURM_SUBMIT_DIR\"\n", tmp_path) == str(tmp_path)
    assert _folder("", tmp_path, "pbs") is None  # a PBS job starts in the home folder


def test_a_cd_in_a_subshell_moves_only_the_subshell(tmp_path):
    """s39 review 5: ``( cd build && make )`` had moved the job to build/, and ``(cd build``
    with no blank after the parenthesis had not been seen at all."""
    (tmp_path / "build").mkdir()
    build = str(tmp_path / "build")
    for lines in ("( cd build && echo building )\n", "(cd build && make)\n",
                  "(\n  cd build\n  make\n)\n", "x=$( cd build; pwd )\n",
                  "diff <(cd build; ls) x\n", "arr=(cd build)\n",
                  "case $1 in\n  cd) echo;;\nesac\n", "cat <<'EOF'\ncd build\nit's\nEOF\n",
                  "( case $1 in a) cd build;; esac )\n"):
        assert _folder(lines, tmp_path) == str(tmp_path), lines
    for lines in ("(cd /tmp) && cd build\n", "case $1 in\n  a) cd build ;;\nesac\n",
                  "f() { cd build; }\n", "echo $((1+(2)))\ncd build\n"):
        assert _folder(lines, tmp_path) == build, lines
    # a launch inside the subshell runs where the subshell moved
    script = read_script("#!/bin/bash\n#SBATCH -N 1\n(cd build && srun ./app)\n"
                         "(\ncd build\nsrun ./app\n)\nsrun ./app\n")
    assert [launch_folder(script, launch, str(tmp_path)) for launch in script.launches] == [
        build, build, str(tmp_path)]
    # a subshell whose end is not read here: its move's reach is not known, and said
    script = read_script("#!/bin/bash\n#SBATCH -N 1\n(\ncd build\nsrun ./app\n")
    assert launch_folder(script, script.launches[-1], str(tmp_path)) is None
    assert unknown_move(script, script.launches[-1]) == 4


def test_a_dollar_quote_is_read_as_bash_reads_it(tmp_path):
    """s39 review 6: ``cd $'a\\x'`` anywhere in a script had stopped advise with a traceback;
    bash keeps an escape with no digits as written, and a code point no UTF-8 holds as the
    bytes it writes."""
    odd = tmp_path / "a\\x"
    odd.mkdir()
    assert _folder("cd $'a\\x'\n", tmp_path) == str(odd)
    assert _folder("echo $'\\u' $'\\U7fffffff' $'\\ud800' $'\\xZ'\ncd $'a\\x'\n",
                   tmp_path) == str(odd)
    assert _folder("cd $'\\141\\x5cx'\n", tmp_path) == str(odd)  # octal and hex
    assert _folder("cd $'a\\x'/b\n", tmp_path) is None  # a folder not known here


def _written(lines: str, scheduler: str = "slurm"):
    head = "#SBATCH -N 1\n" if scheduler == "slurm" else "#PBS -l select=1\n"
    script = read_script(f"#!/bin/bash\n{head}{lines}mpiexec -n 2 ./app\n")
    return written_folder(script, script.launches[-1])


def test_the_written_folder_is_the_cd_lines_whether_or_not_this_machine_has_it():
    """s44 tester M4: the folder a sweep's --workdir 'c{size}' names, read from the text."""
    assert _written("cd c20\n") == ("c20", 3)
    assert _written("cd runs\ncd ./c20/\n") == ("runs/c20", 4)
    assert _written('cd "${SLURM_SUBMIT_DIR:-.}"\ncd /scratch/u/c16\n') == ("/scratch/u/c16", 4)
    assert _written("cd /a\ncd \"$SLURM_SUBMIT_DIR\"\ncd c8\n") == ("c8", 5)
    assert _written("#SBATCH --chdir=run\ncd c8\n") == ("run/c8", 4)
    assert _written("(cd elsewhere && make)\ncd c8\n") == ("c8", 4)
    for unknown in ("cd $X\n", "cd c8\ncd -\n", "pushd c8\npopd\n", "cd c8\n( cd x\n"):
        assert _written(unknown) is None, unknown
    assert _written("") is None  # no cd: nothing written
    assert _written("cd c8\n", "pbs") is None  # a PBS job starts in the home folder
    assert _written('cd "$PBS_O_WORKDIR"\ncd c8\n', "pbs") == ("c8", 4)
