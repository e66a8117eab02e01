"""A script's GPUs: a step asking for GPUs its job does not hold (Slurm refuses it), ranks that
share GPUs (valid, but beyond the model's one GPU per rank), and GPUs picked by hand with
``CUDA_VISIBLE_DEVICES``."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.script_gpus import shared_gpus, step_refused, visible_gpus, visible_note
from hpcds1mpi.launch.script_reading import read_script

HEAD = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n"


def test_a_step_asking_for_gpus_the_job_does_not_hold_is_refused():
    """The tester's d_srun_gpt: srun --gpus-per-task=1 with no GPU directive was read as a CPU
    job, and nobody said Slurm refuses the step."""
    script = read_script(HEAD + "srun --gpus-per-task=1 ./app\n")
    assert script.device == "gpu" and script.gpus_per_node == 4
    why = step_refused(script)
    assert why.startswith("line 4: srun asks for 4 GPUs per node (--gpus-per-task=1) but the "
                          "job holds none (no GPU in its directives): Slurm refuses the step")
    more = read_script(HEAD + "#SBATCH --gpus-per-node=2\nsrun --gpus-per-node=4 ./app\n")
    assert "but the job holds 2 per node: Slurm refuses the step" in step_refused(more)
    for fits in ("#SBATCH --gpus-per-node=4\nsrun --gpus-per-task=1 ./app\n",
                 "#SBATCH --gres=gpu:4\nsrun ./app\n", "srun ./app\n"):
        assert step_refused(read_script(HEAD + fits)) == "", fits


def test_ranks_sharing_gpus_are_the_models_limit_not_a_refusal():
    """c_over: 8 ranks on a node's 4 GPUs is a request Slurm accepts (2 ranks per GPU); it
    was shown as one the scheduler refuses."""
    script = read_script("#SBATCH -N 1 --ntasks-per-node=8 --gpus-per-node=4 -c 8\n"
                         "srun ./app\n")
    why = shared_gpus(script, 8)
    assert why == ("8 ranks per node share the job's 4 GPUs per node (Slurm accepts it); the "
                   "model predicts one GPU per rank only, so this layout has no prediction")
    assert shared_gpus(script, 4) == "" and shared_gpus(script, 2) == ""


@pytest.mark.parametrize("setting, count", [
    ("export CUDA_VISIBLE_DEVICES=0\n", 1), ("export CUDA_VISIBLE_DEVICES=0,1\n", 2),
    ("export CUDA_VISIBLE_DEVICES=-1\n", 0), ("export CUDA_VISIBLE_DEVICES=\n", 0),
    ("export ROCR_VISIBLE_DEVICES=GPU-1a2b,GPU-3c4d\n", 2),
    ("export CUDA_VISIBLE_DEVICES=$MYGPUS\n", None)])
def test_gpus_picked_by_hand_are_counted(setting, count):
    script = read_script("#SBATCH -N 1 --ntasks-per-node=2\n#SBATCH --gres=gpu:a100:2\n"
                         + setting + "srun ./app\n")
    seen = visible_gpus(script)
    assert seen is not None and seen.line == 3 and seen.count == count


def test_ranks_pinned_by_hand_to_fewer_gpus_share_them():
    """e_cvd: --gres=gpu:a100:2, 2 ranks, export CUDA_VISIBLE_DEVICES=0: both ranks share
    GPU 0, which advise predicted as two GPUs with no word."""
    text = ("#SBATCH -N 1 --ntasks-per-node=2\n#SBATCH --gres=gpu:a100:2\n"
            "export CUDA_VISIBLE_DEVICES=0\nsrun ./app\n")
    script = read_script(text)
    assert shared_gpus(script, 2) == (
        "line 3 sets CUDA_VISIBLE_DEVICES=0: the 2 ranks per node see 1 GPU, so they share "
        "it; the model predicts one GPU per rank only, so this layout has no prediction")
    assert shared_gpus(script, 1) == ""
    assert visible_note(script, "gpu") == ("line 3 sets CUDA_VISIBLE_DEVICES=0 by hand: every "
                                           "rank sees that GPU only")
    assert visible_note(script, "cpu") is None
    assert visible_note(script, "gpu", 1) is None  # one rank per node: nothing to share
    assert "which --rewrite keeps: the recommended 4 ranks per node would see 1 GPU" in \
        visible_note(script, "gpu", 4)
    on_line = read_script("#SBATCH -N 1 --ntasks-per-node=2 --gres=gpu:2\n"
                          "CUDA_VISIBLE_DEVICES=1 srun ./app\n")
    assert visible_gpus(on_line).count == 1 and shared_gpus(on_line, 2).startswith("line 2 ")
    unknown = read_script("#SBATCH -N 1 --gres=gpu:2\nexport CUDA_VISIBLE_DEVICES=$X\n"
                          "srun ./app\n")
    assert "cannot be read here" in visible_note(unknown, "gpu")
    assert visible_gpus(read_script("#SBATCH -N 1\nsrun ./app\n")) is None


def test_ranks_sharing_gpus_name_the_scheduler_the_script_is_for():
    """s33 tester P5 (p_gpu): a PBS script's shared GPUs were said to be what "Slurm accepts"."""
    script = read_script("#!/bin/bash\n#PBS -l select=1:ncpus=16:mpiprocs=2:ompthreads=8:ngpus=1"
                         "\nmpiexec -n 2 ./app\n")
    assert shared_gpus(script, 2) == (
        "2 ranks per node share the job's 1 GPU per node (PBS accepts it); the model "
        "predicts one GPU per rank only, so this layout has no prediction")
