"""Reading a job script a user names: one-line errors, never a wait on a FIFO."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_file import check_script_text, script_text


def test_a_script_is_read_and_what_is_not_one_is_one_line(tmp_path):
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH -N 2\n")
    assert script_text(tmp_path / "job.sh").startswith("#!/bin/bash")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    for name, fragment in (("fifo", "not a regular file"), ("missing", "not found"),
                           ("bin", "not UTF-8"), (".", "is a directory")):
        with pytest.raises(ConfigError, match=fragment) as err:
            script_text(tmp_path / name)
        assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="not a regular file"):
        script_text("/dev/zero")


@pytest.mark.parametrize("text", [
    # the tester's q03_noshebang.sbatch: sbatch says "line must start with #! followed by ..."
    "#SBATCH --partition=debug\n#SBATCH --nodes=2\nsrun ./app 128\n",
    "\n#!/bin/bash\n#SBATCH --nodes=2\nsrun ./app 128\n",
    "# my job\n#SLURM --nodes=2\nsrun ./app 128\n",
])
def test_a_slurm_script_without_a_shebang_line_is_refused_with_the_fix(tmp_path, text):
    (tmp_path / "job.sbatch").write_text(text)
    with pytest.raises(ConfigError, match="add #!/bin/bash as the first line") as err:
        script_text(tmp_path / "job.sbatch")
    assert "is not #! and sbatch refuses it" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("text", [
    "#PBS -l select=1:ncpus=2\nmpiexec ./app\n",  # qsub takes a script without #!
    "#!/bin/bash\n#SBATCH --nodes=2\nsrun ./app\n", "#!/bin/sh\nsrun ./app\n", "",
])
def test_a_script_qsub_or_sbatch_takes_is_read(tmp_path, text):
    (tmp_path / "job.sh").write_text(text)
    assert script_text(tmp_path / "job.sh") == text


@pytest.mark.parametrize("text, what", [
    # the tester's q01_pbs_crlf.pbs: no word, and the job ran cd "dir\r" and ./app "128\r"
    ("#!/bin/bash\r\n#PBS -l select=2:ncpus=2\r\ncd $PBS_O_WORKDIR\r\nmpiexec ./app 128\r\n",
     "the shell that runs the PBS job reads a carriage return"),
    ("#PBS -l nodes=2:ppn=2\r\nmpirun ./app\r\n", "convert it with dos2unix"),
    ("#!/bin/bash\r\n#SBATCH --nodes=2\r\nsrun ./app\r\n", "which sbatch refuses"),
])
def test_dos_line_breaks_are_refused_for_pbs_as_for_slurm(text, what):
    with pytest.raises(ConfigError, match="DOS line breaks") as err:
        check_script_text(text)
    assert what in str(err.value) and "\n" not in str(err.value)
