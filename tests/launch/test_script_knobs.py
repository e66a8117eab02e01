"""The precision and device a script's launched program asks for (its own options, the
word where its measured command has ``{device}``, or HPCDS1MPI_DEVICE / _PRECISION)."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.script_knobs import device_of
from hpcds1mpi.launch.script_reading import read_script


@pytest.mark.parametrize("text, device", [
    # the tester's h_gpucpu: GPUs asked, the program runs on the CPU
    ("#SBATCH -N 1\n#SBATCH --gpus-per-node=4\nsrun hpcds1mpi run gemm --size 8 --device cpu\n",
     "cpu"),
    ("#SBATCH -N 1\nsrun hpcds1mpi run gemm --size 8 --device=gpu\n", "gpu"),
    ("#SBATCH -N 1\n#SBATCH --gres=gpu:2\nsrun hpcds1mpi run gemm --size 8\n", "cpu"),  # default
    ("#SBATCH -N 1\nexport HPCDS1MPI_DEVICE=gpu\nsrun ./app 8\n", "gpu"),
    ("#SBATCH -N 1\nHPCDS1MPI_DEVICE=cpu srun ./app 8\n", "cpu"),
    ("#SBATCH -N 1\nsrun ./app 8\nexport HPCDS1MPI_DEVICE=gpu\n", None),  # after the launch
    ("#SBATCH -N 1\n#SBATCH --gres=gpu:2\nsrun ./app 8\n", None),  # the GPUs asked tell
])
def test_the_programs_own_device_is_read_where_the_script_says_it(text, device):
    script = read_script(text)
    got, said = device_of(script, script.launch)
    assert got == device and bool(said) == (device is not None)


def test_the_device_where_the_measured_command_has_it():
    script = read_script("#SBATCH -N 1\n#SBATCH --gres=gpu:1\nsrun ./app --on cpu 8\n")
    script.command = "./app --on {device} {size}"
    assert device_of(script, script.launch) == ("cpu", "line 3: cpu")


@pytest.mark.parametrize("line, precision", [
    ("srun hpcds1mpi run gemm --size 8 --precision bf16\n", ("bf16", True)),
    ("HPCDS1MPI_PRECISION=fp32 srun ./app 8\n", ("fp32", True)),
    ("export HPCDS1MPI_PRECISION=bf16\nsrun ./app 8\n", ("bf16", True)),
    ("srun ./app --precision fp16 8\n", ("fp64", True)),  # said, not swept: a note (F10)
    ("srun ./app 8\n", ("fp64", False)),
])
def test_the_programs_precision_is_one_hpcds1mpi_sweeps(line, precision):
    """s31 review M3: the precisions had a copy of their own in script_request, which only
    this module read; they are hpcds1mpi.config's."""
    from hpcds1mpi.config import PRECISIONS
    from hpcds1mpi.launch import script_knobs, script_request
    from hpcds1mpi.launch.script_knobs import precision_of

    script = read_script("#SBATCH -N 1\n" + line)
    assert precision_of(script, script.launch) == precision
    assert script_knobs.PRECISIONS is PRECISIONS and not hasattr(script_request, "PRECISIONS")


@pytest.mark.parametrize("text, precision", [
    # the tester's m_prec32eq: the = form click takes, as --device=gpu was read
    ("srun hpcds1mpi run --threads=2 stencil --size=128 --precision=fp32\n", ("fp32", True)),
    # y_envafter: a setting after the launch never reaches it
    ("srun hpcds1mpi run stencil --size 128\nexport HPCDS1MPI_PRECISION=fp32\n",
     ("fp64", False)),
    # the last setting before the launch is the one it sees, as for the device
    ("export HPCDS1MPI_PRECISION=fp32\nexport HPCDS1MPI_PRECISION=bf16\nsrun ./app 8\n",
     ("bf16", True)),
])
def test_the_precision_is_read_by_the_devices_rule(text, precision):
    """s45 tester C2: ``--precision=fp32`` was not read (fp64 predicted and recommended, "the
    script does not say the precision"), and an export after the launch line was."""
    from hpcds1mpi.launch.script_knobs import precision_of

    script = read_script("#SBATCH -N 1\n" + text)
    assert precision_of(script, script.launch) == precision


@pytest.mark.parametrize("args, given", [
    ("--precision single", "single"), ("--precision=float32", "float32"),
    ("--precision=FP32", "FP32"), ("--precision fp16", "fp16"),
])
def test_a_precision_hpcds1mpi_does_not_know_is_named_not_called_unsaid(args, given):
    """s45 tester F10: ``--precision single`` was "the script does not say the precision";
    it says one, in a spelling ``hpcds1mpi run --precision`` (the same list) refuses."""
    from hpcds1mpi.commands.run import command
    from hpcds1mpi.config import PRECISIONS
    from hpcds1mpi.launch.script_knobs import precision_of

    script = read_script(f"#SBATCH -N 1\nsrun ./app {args} 8\n")
    assert precision_of(script, script.launch) == ("fp64", True)
    assert any(f"--precision {given} is not a precision hpcds1mpi knows" in n
               for n in script.notes)
    choice = next(p.type for p in command.params if p.name == "precision")
    assert list(choice.choices) == list(PRECISIONS)


@pytest.mark.parametrize("args, precision", [
    ("-precision fp32", ("fp32", True)), ("-precision=bf16", ("bf16", True)),
    ("--precision fp64 -precision fp32", ("fp32", True)),
])
def test_a_programs_one_dash_precision_is_read_as_the_two_dash_one(args, precision):
    """Was (s45): ``-precision fp32`` (Go's flag package takes one dash or two) was "the
    script does not say the precision", fp64."""
    from hpcds1mpi.launch.script_knobs import precision_of

    script = read_script(f"#SBATCH -N 1\nsrun ./app {args} 8\n")
    assert precision_of(script, script.launch) == precision


def test_a_one_dash_precision_unknown_is_named_as_written_and_hpcds1mpi_run_takes_two():
    from hpcds1mpi.launch.script_knobs import precision_of

    script = read_script("#SBATCH -N 1\nsrun ./app -precision single 8\n")
    assert precision_of(script, script.launch) == ("fp64", True)
    assert any("-precision single is not a precision" in n and "--precision single" not in n
               for n in script.notes)
    # click reads no -precision: hpcds1mpi run's precision is its --precision alone
    script = read_script("#SBATCH -N 1\nsrun hpcds1mpi run gemm -precision fp32\n")
    assert precision_of(script, script.launch) == ("fp64", False)


def test_a_repeated_precision_option_takes_its_last_value():
    """s45 tester F10: ``--precision=fp64 --precision fp32`` was read as fp64; click and
    argparse take the last."""
    from hpcds1mpi.launch.script_knobs import precision_of

    script = read_script("#SBATCH -N 1\nsrun ./app --precision=fp64 --precision fp32 8\n")
    assert precision_of(script, script.launch) == ("fp32", True)


@pytest.mark.parametrize("text", [
    "export HPCDS1MPI_PRECISION=fp32\nunset HPCDS1MPI_PRECISION\nsrun ./app 8\n",
    "export HPCDS1MPI_PRECISION=fp32\nsrun --export=NONE ./app 8\n",
    "export HPCDS1MPI_PRECISION=fp32\nsrun env -u HPCDS1MPI_PRECISION ./app 8\n",
    "export HPCDS1MPI_PRECISION=fp32\nsrun env -i ./app 8\n",
])
def test_a_precision_variable_the_launch_never_gets_is_not_read(text):
    """s45 tester F4 (q2-q4): an ``unset``, ``srun --export=NONE`` or ``env -u`` takes the
    variable from the program, which ran fp64; advise read fp32."""
    from hpcds1mpi.launch.script_knobs import precision_of

    script = read_script("#SBATCH -N 1\n" + text)
    assert precision_of(script, script.launch) == ("fp64", False)


@pytest.mark.parametrize("text, precision", [
    # not exported: read, as OMP_NUM_THREADS is (sbatch may pass the variable already)
    ("HPCDS1MPI_PRECISION=fp32\nsrun ./app 8\n", ("fp32", True)),
    ("export HPCDS1MPI_PRECISION=fp32\nsrun --export=ALL ./app 8\n", ("fp32", True)),
    ("export HPCDS1MPI_PRECISION=fp32\nsrun --export=NONE,HPCDS1MPI_PRECISION ./app 8\n",
     ("fp32", True)),
    ("srun --export=NONE,HPCDS1MPI_PRECISION=bf16 ./app 8\n", ("bf16", True)),
    ("unset HPCDS1MPI_PRECISION\nexport HPCDS1MPI_PRECISION=fp32\nsrun ./app 8\n",
     ("fp32", True)),
    ("export HPCDS1MPI_PRECISION=fp32\nsrun ./app 8\nunset HPCDS1MPI_PRECISION\n",
     ("fp32", True)),
])
def test_a_precision_variable_that_reaches_the_launch_is_still_read(text, precision):
    from hpcds1mpi.launch.script_knobs import precision_of

    script = read_script("#SBATCH -N 1\n" + text)
    assert precision_of(script, script.launch) == precision


@pytest.mark.parametrize("text", [
    "HPCDS1MPI_PRECISION=fp32 HPCDS1MPI_DEVICE=gpu srun hpcds1mpi run stencil --size 128\n",
    "export HPCDS1MPI_PRECISION=fp32\nexport HPCDS1MPI_DEVICE=gpu\n"
    "srun hpcds1mpi run stencil --size 128\n",
])
def test_hpcds1mpi_run_reads_neither_variable(text):
    """s45 tester F4 (p3): ``hpcds1mpi run`` runs fp64 on the CPU whatever
    HPCDS1MPI_PRECISION / _DEVICE say; advise read fp32 (and refused a GPU job)."""
    from hpcds1mpi.launch.script_knobs import device_of, precision_of

    script = read_script("#SBATCH -N 1\n" + text)
    assert precision_of(script, script.launch) == ("fp64", False)
    assert device_of(script, script.launch)[0] == "cpu"
    assert any("HPCDS1MPI_PRECISION=fp32 is not read by hpcds1mpi run" in n
               for n in script.notes)
    assert any("HPCDS1MPI_DEVICE=gpu is not read by hpcds1mpi run" in n for n in script.notes)


def _after_fp32(text: str) -> tuple[tuple[str, bool], list[str]]:
    """(the precision read, the notes) of a script that exports fp32, runs ``text``, then
    its launch."""
    from hpcds1mpi.launch.script_knobs import precision_of

    script = read_script("#!/bin/bash\n#SBATCH -N 1\nexport HPCDS1MPI_PRECISION=fp32\n"
                         + text + "srun ./app 8\n")
    return precision_of(script, script.launch), script.notes


@pytest.mark.parametrize("text", [
    "( unset HPCDS1MPI_PRECISION; ./prep.sh )\n",
    "unset HPCDS1MPI_PRECISION | cat\n",
    "cleanup() { unset HPCDS1MPI_PRECISION; }\ntrap cleanup EXIT\n",
    "cleanup() {\n  echo bye\n  unset HPCDS1MPI_PRECISION\n}\ntrap cleanup EXIT\n",
    "later() {\n  unset HPCDS1MPI_PRECISION\n}\n",
])
def test_an_unset_that_never_reaches_the_launch_keeps_the_precision(text):
    """s46 review RV8: an unset in a subshell or in a function only an EXIT trap calls (or
    none) took the precision from the launch; bash gives the launch fp32."""
    precision, notes = _after_fp32(text)
    assert precision == ("fp32", True) and not any("unset" in n for n in notes)


@pytest.mark.parametrize("text", [
    "cleanup() { unset HPCDS1MPI_PRECISION; }\ncleanup\n",
    "cleanup() {\n  unset HPCDS1MPI_PRECISION\n}\nprep() { cleanup; }\nprep\n",
    "run()\n{\n  unset HPCDS1MPI_PRECISION\n}\nrun\n",
    "{ unset HPCDS1MPI_PRECISION; }\n",
    "unset HPCDS1MPI_PRECISION && ./prep\n",
])
def test_an_unset_that_runs_before_the_launch_still_removes_the_precision(text):
    assert _after_fp32(text)[0] == ("fp64", False)


@pytest.mark.parametrize("text", [
    'if [ -n "$DEBUG" ]; then unset HPCDS1MPI_PRECISION; fi\n',
    'if [ -n "$DEBUG" ]; then\n  echo\nelse\n  unset HPCDS1MPI_PRECISION\nfi\n',
    '[ -n "$DEBUG" ] && unset HPCDS1MPI_PRECISION\n',
    "case $P in\n  big) unset HPCDS1MPI_PRECISION ;;\nesac\n",
    "cleanup() {\n  unset HPCDS1MPI_PRECISION\n}\nif [ -n \"$D\" ]; then cleanup; fi\n",
])
def test_a_conditional_unset_keeps_the_precision_and_says_so(text):
    """s46 review RV8: the branch may not run; the script's precision is read, noted."""
    precision, notes = _after_fp32(text)
    assert precision == ("fp32", True)
    assert any("`unset HPCDS1MPI_PRECISION` runs only under a condition;"
               " HPCDS1MPI_PRECISION=fp32 (line 3) is read" in n for n in notes)
