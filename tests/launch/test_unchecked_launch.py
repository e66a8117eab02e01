"""The note on a launch line whose program's MPI neither its file nor the model tells
(:mod:`hpcds1mpi.launch.unchecked_launch`; s42 tester E4: advise said nothing)."""

from __future__ import annotations

import os

from hpcds1mpi.launch.recorded_mpi import recorded_mpi
from hpcds1mpi.launch.script_reading import read_script
# the fixtures dispatcher and launchers are used by name
from tests.launch.recorded_launch_cases import (SRUN_PMIX, checks, dispatcher,  # noqa: F401
                                                launchers, swept)


def _note(text: str, folder, recorded):
    from hpcds1mpi.launch.unchecked_launch import unread_launch

    script = read_script(text)
    env = {"PATH": os.environ["PATH"], "SLURM_CONF": str(folder / "none.conf")}
    return unread_launch(script, script.launches[-1], str(folder), env, recorded)


def test_where_neither_file_nor_model_tells_the_line_is_said_unchecked(launchers, dispatcher):
    srun = recorded_mpi(SRUN_PMIX)
    text = f"#!/bin/bash\n#SBATCH --ntasks=2\n{launchers['mpich']} -n 2 ./app in.bf\n"
    assert checks(text, dispatcher, srun) == ([], [])  # no MPI finding: this module's note
    assert _note(text, dispatcher, srun) == ("line 3: app's MPI cannot be read from its file and the model records "
                        "only that its sweep ran it with srun --mpi=pmix, so this line's "
                        "launcher is not checked: launch it as measured (srun --mpi=pmix)")
    same = "#!/bin/bash\n#SBATCH --ntasks=2\nsrun --mpi=pmix ./app in.bf\n"
    assert _note(same, dispatcher, srun) is None  # as measured: nothing to say
    none = _note(text, dispatcher, None)  # pooled launchers, or a model before them
    assert "the model records no one launcher its sweep ran it with" in none
    known = recorded_mpi(swept(launchers["openmpi"]))  # a family: launch_checks's warning
    assert _note(text, dispatcher, known) is None
