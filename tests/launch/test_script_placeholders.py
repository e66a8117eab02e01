"""Where a script's launch line gives what the program's measured command has as a
placeholder: its size lined up with the measured command, and how well the two fit."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch import script_placeholders as sp
from hpcds1mpi.launch.script_reading import read_script


def launch_of(line: str, head: str = "#SBATCH -N 1\n"):
    return read_script(head + line + "\n").launch


@pytest.mark.parametrize("line, template, size", [
    ("srun ./bin/app.x 4096 40", "./app {size} 40", 4096),
    ("srun ./wrap.sh ./app 512 40", "./app {size} 40", 512),  # a wrapper before the program
    ("srun python app.py --n 77", "python3 app.py --n {size}", 77),
    ("srun ./app.py --n 78", "python3 app.py --n {size}", 78),  # run directly by its #!
    ("mpirun -np 4 ./app --grid=64x64", "./app --grid={size}x{size}", 64),
    ("srun ./app 512", "./app {size} 40", None),  # not the measured form
    ("srun ./other 512 40", "./app {size} 40", None),
    ("srun ./app 512 40", "./app 512 {ranks}", None),  # the command does not carry the size
    # An option's value, the launch with options left out or added (before: None, "pass --size")
    ("mpirun -np 2 lmp -in in.lj -var x 12", "lmp -in in.lj -var x {size} -log none", 12),
    ("srun lmp -log none -in in.lj -sf opt -var x 20", "lmp -in in.lj -var x {size}", 20),
    ("srun ./app --n=96 -v", "./app --n={size}", 96),
    ("srun ./app -q --n 48", "python3 app.py --n {size} --check", 48),
    ("srun lmp -in in.lj -var y 12", "lmp -in in.lj -var x {size} -log none", None),
    ("srun ./app --n 4 --n 8", "./app --n {size}", None),  # which one: not guessed
    # s29 tester C3: {size} in two places that disagree was read as the first (120)
    ("mpirun.openmpi -np 2 ./poisson -da_grid_x 120 -da_grid_y 480 -ksp_type cg -pc_type "
     "jacobi -log_view", "./poisson -da_grid_x {size} -da_grid_y {size} -ksp_type cg "
     "-pc_type jacobi -log_view", None),
    ("mpirun.openmpi -np 2 ./poisson -da_grid_x 120 -da_grid_y 120 -ksp_type cg -pc_type "
     "jacobi -log_view", "./poisson -da_grid_x {size} -da_grid_y {size} -ksp_type cg "
     "-pc_type jacobi -log_view", 120),
    ("srun ./poisson -da_grid_x 120 -log_view -da_grid_y 480",
     "./poisson -da_grid_x {size} -da_grid_y {size}", None),  # options moved: not lined up
    ("mpirun -np 4 ./app --grid=64x32", "./app --grid={size}x{size}", None),  # in one word
])
def test_the_size_is_read_where_the_measured_command_has_it(line, template, size):
    assert sp.size_from(launch_of(line), template) == size


def test_how_well_a_launch_fits_a_measured_command():
    launch = launch_of("srun ./jacobi 128 40")
    assert sp.fits_command(launch, "./jacobi {size} 40") == 2
    assert sp.fits_command(launch, "./jacobi {size} {ranks}") == 2
    assert sp.fits_command(launch, "./jacobi {size} 80") == 1  # its size, another argument
    assert sp.fits_command(launch, "./jacobi 200 {ranks}") == 0


@pytest.mark.parametrize("line, template, size", [
    # s30 tester K2: options after or before the size ("does not have the form ..."), read
    ("mpirun -n 2 /usr/bin/python3 poisson.py 320 --ksp cg --pc gamg",
     "/usr/bin/python3 poisson.py {size}", 320),
    ("srun /usr/bin/python3 poisson.py --pc gamg 320", "/usr/bin/python3 poisson.py {size}", 320),
    ("srun ./app 320 -v --mode=fast 40", "./app {size} 40", 320),
    ("srun ./app --log out 320 40", "./app {size} 40 --log x", 320),
    # ambiguous: each refused as before
    ("srun ./app -v 320", "./app {size}", None),  # 320 may be -v's value
    ("srun ./app 320 640 --x y", "./app {size}", None),  # more words than places
    ("srun lmp -in in.lj -var y 12", "lmp -in in.lj -var x {size} -log none", None),
])
def test_the_size_is_read_with_options_set_aside_when_unambiguous(line, template, size):
    assert sp.size_from(launch_of(line), template) == size


@pytest.mark.parametrize("line, template, size", [
    # s32 tester U4: libctl's name=value words, another one added
    ("srun meep res=18 T=20 wg.ctl", "meep res={size} wg.ctl", 18),
    ("mpirun -n 2 meep T=20 wg.ctl res=24", "meep res={size} wg.ctl", 24),
    ("srun meep res=18 res=20 wg.ctl", "meep res={size} wg.ctl", None),  # given twice
])
def test_the_size_is_read_from_its_name_equals_value_word(line, template, size):
    assert sp.size_from(launch_of(line), template) == size


@pytest.mark.parametrize("script", [
    "mpirun -n 2 env POISSON_N=320 /usr/bin/python3 poisson_cfg.py",
    "mpirun -n 2 -x POISSON_N=320 /usr/bin/python3 poisson_cfg.py",
    "POISSON_N=320 srun /usr/bin/python3 poisson_cfg.py",
    "export POISSON_N=320\nmpirun -n 2 /usr/bin/python3 poisson_cfg.py",
])
def test_the_size_is_read_where_the_measured_command_sets_it_in_env(script):
    """s30 tester K1: measured as `env POISSON_N={size} ...`, the script's 320 was not read."""
    launch = read_script(f"#SBATCH -n 2\n{script}\n").launches[0]
    template = "env POISSON_N={size} /usr/bin/python3 poisson_cfg.py"
    assert sp.size_from(launch, template) == 320 and sp.fits_command(launch, template) == 2


@pytest.mark.parametrize("line", ["srun env -u POISSON_N /usr/bin/python3 poisson_cfg.py",
                                  "srun env -i /usr/bin/python3 poisson_cfg.py"])
def test_a_size_the_launch_line_removes_with_env_is_not_read(line):
    """Was (s30 tester R6): `export SZ=4000000; srun env -u SZ ./hello` read as size 4000000,
    though the program never got SZ."""
    launch = read_script(f"#SBATCH -n 2\nexport POISSON_N=320\n{line}\n").launches[0]
    assert sp.size_from(launch, "env POISSON_N={size} /usr/bin/python3 poisson_cfg.py") is None


@pytest.mark.parametrize("line, template, size", [
    # s33 tester B8: the measured command, then an output file: "no problem size ... pass --size"
    ("/usr/bin/mpirun.openmpi -np 2 /usr/bin/python3 h5write.py 1200 result.h5",
     "/usr/bin/python3 h5write.py {size}", 1200),
    ("srun ./app 4096 40 --log out.txt", "./app {size} 40", 4096),
    ("srun ./app 4096 2 out.h5", "./app {size} {ranks}", None),  # 2 out.h5 lines up too
    # two readings that disagree: the size is not guessed
    ("srun ./app 1200 300", "./app {size}", None),
    ("srun ./app 1200 40 300 40", "./app {size} 40", None),
    ("srun ./app 4096 80 out.h5", "./app {size} 40", None),  # the measured words differ
])
def test_the_size_is_read_before_extra_trailing_arguments(line, template, size):
    assert sp.size_from(launch_of(line), template) == size


def test_trailing_extra_arguments_are_named_by_advise():
    """s33 tester B8: once the size is read, advise names the argument the measured command
    did not have."""
    from hpcds1mpi.decide.advise_launch import argument_note

    launch = launch_of("/usr/bin/mpirun.openmpi -np 2 /usr/bin/python3 h5write.py 1200 "
                       "result.h5")
    assert "(adds 'result.h5')" in argument_note(launch, "/usr/bin/python3 h5write.py {size}")
