"""``launch/program_label``: the workload label of a user's program, one rule for ``sweep
--command`` and ``tune --program``."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.program_label import program_word, workload_label


def test_a_file_name_no_label_can_hold_gives_a_label_built_from_it_and_says_so():
    """s39 tester D10: 'my app' was taken as the label and refused after the launch probe,
    as if the user had given it."""
    said = []
    cases = {"./my app": "my_app", "/x/a*b": "a_b", "it's": "it_s", "日本 x": "日本_x"}
    for program_file, label in cases.items():
        assert workload_label(program_file, None, said.append) == label, program_file
    assert len(said) == len(cases)  # every name was changed, and said
    # a name that is a label stays it (the review of s39: café had become cafe, ./.hidden
    # hidden, 日本 external — the label of every program swept without --label)
    for name in ("./app", "café.x", "./.hidden", "_run.sh", "日本"):
        assert workload_label(name, None, said.append) == name.removeprefix("./")
    assert len(said) == len(cases)
    assert "'my_app'" in said[0] and "'my app'" in said[0] and "--label NAME" in said[0]


def test_a_given_label_is_kept_or_refused_and_a_kernels_file_name_names_label():
    assert workload_label("./my app", "mine", print) == "mine"
    with pytest.raises(ConfigError, match="--label 'x y'"):
        workload_label("./app", "x y", print)
    with pytest.raises(ConfigError, match="give --label NAME"):
        workload_label("./gemm", None, print)
    # a kernel's option deck's label (s41 tester D8: ./stencil+sweeps.100 was taken)
    with pytest.raises(ConfigError, match=r"'stencil\+sweeps.100' is the label of kernel stencil "
                                          "run with options.*give --label NAME"):
        workload_label("./stencil+sweeps.100", None, print)
    assert workload_label("./myapp+mkl", None, print) == "myapp+mkl"


@pytest.mark.parametrize("command, word", [
    ("meep res={size} wg.ctl", "meep"), ("nrniv -mpi -c ncell={size} ring.hoc", "nrniv"),
    ("./bin/app --n {size}", "./bin/app"), ("env OMP_PLACES=cores nice -n 5 ./app {size}", "./app"),
    ("python3 -u solver.py {size}", "solver.py"), ("gpaw python h2.py {size}", "gpaw"),
    ("bash -c 'x={size}; ./a'", "bash"), ("/usr/bin/python3 -m pkg.run {size}", "pkg.run"),
    # s41 review F8: an interpreter option's value and a container runner had been the program
    ("python3 -O -W ignore app.py {size}", "app.py"), ("bash -o pipefail run.sh", "run.sh"),
    ("singularity exec img.sif ./app {size}", "./app"),
    ("apptainer exec --nv -B /a:/b img.sif python3 -u x.py", "x.py"),
    ("docker run --rm -it -v a:b ghcr.io/org/solver:1.2", "solver")])
def test_the_program_word_is_past_wrappers_and_interpreters(command, word):
    import shlex

    assert program_word(shlex.split(command)) == word


def test_a_container_runner_whose_words_are_not_read_is_said_to_be_the_label():
    """s41 review F8: ``singularity``, said as "the program's file name", labelled every
    containerised program, so two of them became one workload."""
    from hpcds1mpi.launch.program_label import program_label

    said = []
    assert program_label(["singularity", "shell", "img.sif"], None, said.append) == "singularity"
    assert len(said) == 1 and "first word" in said[0] and "--label NAME" in said[0]
    assert program_label(["podman", "run", "--unknown", "img"], "mine", said.append) == "mine"
    assert len(said) == 1
