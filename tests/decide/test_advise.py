"""``advise`` with the shipped bundle on the lab partition (the hardware it was measured on):
the workload found from the program, both layouts predicted by System 1 as ``recommend``
predicts them, the script's precision kept, and an unknown program left to the guard."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from hpcds1mpi import cluster as cluster_mod
from hpcds1mpi.decide.advise import advise
from hpcds1mpi.launch.script_placeholders import size_from
from hpcds1mpi.decide.script_workload import match_workload
from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL, load_model
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_reading import read_script

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "jobscripts"
ASKED = """#!/bin/bash
#SBATCH --partition=standard
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
#SBATCH --time=00:30:00
export OMP_NUM_THREADS=2
srun hpcds1mpi run stencil --size 128 --precision fp64
"""


@pytest.fixture(scope="module")
def bundle():
    return load_model(None)


@pytest.fixture(scope="module")
def places():
    clusters = cluster_mod.load_clusters(SCRIPTS / "lab.toml")
    return [(c, p) for c in clusters.values() for p in c.partitions.values()]


@pytest.fixture(autouse=True)
def user_files(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "cache" / "failures.json"))


def run(text, bundle, places, **kw):
    return advise(text, bundle, places, model_dir=DEFAULT_MODEL, **kw)


def test_a_familiar_script_gets_both_layouts_predicted(bundle, places):
    a = run(ASKED, bundle, places)
    assert (a.workload, a.workload_source) == ("stencil", "the program on line 8")
    assert a.size == 128 and a.verdict["verdict"] in ("auto", "confirm")  # never escalated
    assert a.asked.config.as_dict() == {"nodes": 2, "ranks_per_node": 1, "threads": 1,
                                        "device": "cpu", "precision": "fp64"}
    assert a.asked.walltime_s == 1800 and a.asked.lines == [3, 4, 5, 6, 7, 8]
    assert math.isfinite(a.asked.runtime_s) and math.isfinite(a.recommended.runtime_s)
    # the recommended layout's numbers are the ones recommend() ranked it by
    ch = a.recommendation.picked.choice
    cols = ch.scores.cols
    # (the first measured fp64: the unmeasured 2 nodes' interval is not wholly below it, so
    # recommend's rule keeps the measured one first, s35 tester R6)
    row = [i for i in ch.ranking if cols["precision"][i] == "fp64" and not cols["unmeasured"][i]][0]
    assert a.recommended.config == ch.config(row) and a.recommended.unmeasured == []
    assert a.recommended.runtime_s == pytest.approx(float(cols["runtime_s"][row]), rel=1e-9)
    assert a.recommended.energy_j == pytest.approx(float(cols["energy_j"][row]), rel=1e-9)
    # the asked layout is one of the grid's, and predicted the same way on its own
    asked = np.flatnonzero((cols["nodes"] == 2) & (cols["ranks_per_node"] == 1)
                           & (cols["threads"] == 1) & (cols["precision"] == "fp64"))
    assert a.asked.runtime_s == pytest.approx(float(cols["runtime_s"][asked[0]]), rel=1e-9)
    assert a.energy_saving_pct == pytest.approx(
        100 * (1 - a.recommended.energy_j / a.asked.energy_j))
    assert a.recommended.walltime_s >= 60 and a.recommended.walltime_s % 60 == 0
    assert "nodes 2 above the most measured (1)" in a.asked.unmeasured


def test_the_rewrite_asks_for_the_recommended_layout(bundle, places):
    a = run(ASKED, bundle, places)
    again = read_script(a.rewritten)
    r = a.recommended.config
    assert again.layout(2) == (r.nodes, r.ranks_per_node, r.threads)
    assert again.time_s == a.recommended.walltime_s
    assert a.changes and all(c.line in (3, 4, 5, 6, 7, 8) for c in a.changes)


def test_the_scripts_precision_is_kept(bundle, places):
    a = run(ASKED, bundle, places)
    overall = a.recommendation.picked.choice.pick["precision"]
    assert a.recommended.config.precision == "fp64"
    if overall != "fp64":
        assert any("which is kept" in n for n in a.notes)


def test_an_unknown_program_gets_the_guards_verdict_and_no_numbers(bundle, places):
    text = ASKED.replace("hpcds1mpi run stencil --size 128 --precision fp64", "./lulesh -s 40")
    a = run(text, bundle, places)
    assert a.workload is None and a.verdict["verdict"] == "escalate"
    assert "'./lulesh' matches no workload" in a.verdict["reasons"][0]
    assert a.recommended is None and not a.asked.predicted and a.rewritten is None


def test_a_script_without_a_launch_line_says_so_not_program_none(bundle, places):
    text = ASKED.replace("srun hpcds1mpi run stencil --size 128 --precision fp64", "./app 100")
    a = run(text, bundle, places)
    assert a.verdict["verdict"] == "escalate"
    assert a.verdict["reasons"][0].startswith("no launch line (srun / mpirun / mpiexec / "
                                              "aprun / ibrun) was recognised (line 8 runs "
                                              "`./app 100`)"), a.verdict
    assert "None" not in a.verdict["reasons"][0]


def test_a_named_workload_never_measured_escalates_with_a_calibration_sweep(bundle, places):
    text = ASKED.replace("hpcds1mpi run stencil --size 128 --precision fp64", "./lulesh -s 40")
    a = run(text, bundle, places, workload="lulesh", size=40)
    assert a.verdict["verdict"] == "escalate" and a.verdict["checks"]["name"] == "escalate"
    assert a.recommended is None and not a.asked.predicted and a.calibration
    # each step named as recommend names it (s29 tester C8: advise printed dict reprs)
    steps = a.recommendation.calibration_steps
    assert [c["label"] for c in a.calibration] == [s.config.label() for s in steps]
    assert all(re.fullmatch(r"N\d+xR\d+xT\d+-(cpu|gpu)-\w+", c["label"]) for c in a.calibration)


def test_a_known_program_without_a_size_is_asked_for_one(bundle, places):
    with pytest.raises(ConfigError, match="pass --size"):
        run(ASKED.replace(" --size 128", ""), bundle, places)


@pytest.mark.parametrize("size", ["99999999999999999999999", "2000000000000", "0", "9" * 3000])
def test_a_size_in_the_script_out_of_range_is_refused(bundle, places, size):
    """--size on the command line is bounded by the CLI; the script's own must be too (a huge
    one overflowed the candidate grid with a traceback)."""
    with pytest.raises(ConfigError, match=r"outside 1\.\.1099511627776; pass --size"):
        run(ASKED.replace("--size 128", f"--size {size}"), bundle, places)


@pytest.mark.parametrize("size", ["\u0663\u0660", "\u00b2", "9" * 5000])
def test_a_size_in_the_script_is_ascii_digits_or_none(bundle, places, size):
    """Arabic-Indic digits were read as 30, a superscript two and 5,000 digits raised
    ValueError: none is a size (asked for one), none a traceback."""
    with pytest.raises(ConfigError, match="no problem size for stencil in the script"):
        run(ASKED.replace("--size 128", f"--size {size}"), bundle, places)


def test_a_partition_the_cluster_lacks_is_refused(bundle, places):
    with pytest.raises(ConfigError, match="partition 'gpu' .* pass --cluster"):
        run(ASKED.replace("=standard", "=gpu"), bundle, places)


def test_a_layout_that_does_not_fit_is_said_and_still_advised(bundle, places):
    a = run(ASKED.replace("--ntasks-per-node=1", "--ntasks-per-node=8"), bundle, places)
    assert "16 CPUs per node" in a.asked.problem and not a.asked.predicted
    assert a.recommended is not None


def test_the_answer_is_plain_json(bundle, places):
    data = a_dict = run(ASKED, bundle, places).to_dict()
    text = json.dumps(data, allow_nan=False)
    assert "recommendation" not in a_dict and json.loads(text)["summary"].startswith("asked: ")
    assert data["predictions"].startswith("predicted by System 1")


def test_the_workload_and_size_from_a_recorded_command():
    script = read_script("#SBATCH -N 1\nsrun ./bin/myapp.x -n 4096 --steps 10\n")
    commands = {"myapp-run": "./myapp -n {size} --steps {threads}"}
    assert match_workload(script.launch, ["stencil"], commands) == "myapp-run"
    assert size_from(script.launch, commands["myapp-run"]) == 4096
    assert size_from(script.launch, None) is None


# ---- a user's own program (swept with sweep --command) -----------------------------------------

PROGRAM = """#!/bin/bash
#SBATCH --partition=cpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --time=01:00:00
srun {line}
"""


@pytest.fixture
def program_bundle():
    """The analytic stand-in, knowing a program ``myjac`` by its measured command line (the
    label is not the program's name) and ``fixed``, whose size is in its input."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from tests.fake_bundle import WIDE_SIZES, FakeBundle

    bundle = FakeBundle(workloads=("stencil", "myjac", "fixed", "once"), sizes=WIDE_SIZES)
    levels = dict(precisions=("fp64",), devices=("cpu",), threads=(1, 2),
                  ranks_per_node=(1, 2, 4), nodes=(1, 2))
    bundle._measured_levels = {
        "myjac": MeasuredLevels("myjac", True, **levels, command="./jacobi {size} 40"),
        "fixed": MeasuredLevels("fixed", True, **levels, command="./solver input.dat"),
        "once": MeasuredLevels("once", True, **levels, command="./once 40 40")}
    bundle.size_range["once"] = (40, 40)
    return bundle


def fake_places():
    from tests.fake_bundle import fake_places as places

    return places("cpu")


def test_a_programs_size_is_read_from_its_measured_command(program_bundle):
    a = advise(PROGRAM.format(line="/home/u/bin/jacobi 1024 40"), program_bundle,
               fake_places())
    assert (a.workload, a.size, a.size_source) == ("myjac", 1024, "the command on line 6")
    assert a.recommended is not None


@pytest.mark.parametrize("line, why", [
    ("./jacobi 1024", "line 6 runs './jacobi 1024', which does not have the form of its "
                      "measured command './jacobi {size} 40'"),
    ("./solver input.dat", "its measured command './solver input.dat' does not show it (the "
                           "same command ran at every size measured: the size is in its input)"),
    ("./once 40 40", "does not show it (it was measured at one size only (40))"),
])
def test_a_program_whose_size_cannot_be_read_says_why_in_one_line(program_bundle, line, why):
    with pytest.raises(ConfigError) as caught:
        advise(PROGRAM.format(line=line), program_bundle, fake_places())
    message = str(caught.value)
    assert why in message and message.endswith("pass --size") and "\n" not in message


def test_one_launch_in_a_loop_keeps_the_scripts_time_limit(bundle, places):
    """The recommended walltime covers one launch: written over a loop's --time it would
    kill the job after its first runs."""
    looped = ASKED.replace("srun hpcds1mpi", "for i in 1 2 3; do srun hpcds1mpi") \
        .replace("fp64\n", "fp64; done\n")
    a = run(looped, bundle, places)
    once = run(ASKED, bundle, places)
    assert a.recommended.config == once.recommended.config
    assert a.recommended.walltime_s == 1800 and read_script(a.rewritten).time_s == 1800
    assert not any(c.line == 6 for c in a.changes)  # the --time line
    notes = [n for n in a.notes if "launches more than once" in n]
    assert len(notes) == 1 and "(line 8, inside a loop)" in notes[0]
    assert "keeps its --time (00:30:00)" in notes[0]
    assert "kept from the script" in a.recommended.walltime_basis


def test_several_launch_lines_keep_the_scripts_time_limit(bundle, places):
    two = ASKED + "srun hpcds1mpi run stencil --size 256 --precision fp64\n"
    a = run(two, bundle, places)
    assert read_script(a.rewritten).time_s == 1800
    assert any("(lines 8, 9)" in n and "line 8 only" in n for n in a.notes), a.notes


@pytest.mark.parametrize("after, line", [
    ("python3 plot.py\n", 9),  # s42: a program on the next line had the limit cut
    ("echo done\n./postprocess out.dat > post.log\n", 10),
    ("; python3 plot.py", 8),  # after a kernel's launch on its own line
    ("&& ./postprocess", 8)])
def test_a_program_after_the_launch_keeps_the_scripts_time_limit(bundle, places, after, line):
    """A job script that post-processes after its launch needs the time of both; the
    recommended walltime covers the launch alone, so the script's --time is kept and said."""
    text = ASKED.rstrip("\n") + " " + after if after[0] in ";&" else ASKED + after
    a = run(text, bundle, places)
    assert a.recommended.walltime_s == 1800 and read_script(a.rewritten).time_s == 1800
    assert not any(c.line == 6 for c in a.changes)  # the --time line
    said = [n for n in a.notes if "after" in n and "keeps its --time (00:30:00)" in n]
    assert len(said) == 1 and said[0].startswith(f"line {line} runs `"), a.notes
    assert a.recommended.walltime_basis == ("kept from the script: it runs more than the measured "
                                            "program, see the note")


def test_set_up_and_copying_after_the_launch_still_get_one_launchs_limit(bundle, places):
    cheap = ASKED + "echo done\ncp out.dat $HOME/\ntar czf out.tgz out\nexit 0\n"
    a, once = run(cheap, bundle, places), run(ASKED, bundle, places)
    assert a.recommended.walltime_s == once.recommended.walltime_s < 1800
    assert not any("after" in n and "keeps its --time" in n for n in a.notes)


def test_a_launcher_of_another_mpi_family_is_a_warning(bundle, places, tmp_path):
    from tests.helpers import system_program

    text = ASKED.replace("srun hpcds1mpi run stencil --size 128 --precision fp64",
                         f"{system_program('mpirun.openmpi')} -np 2 "
                         f"{system_program('NPmpich2')} -u 8")
    a = run(text, bundle, places, job_folder=str(tmp_path))
    # and Open MPI's default one-core binding of its 2 ranks of 2 threads (s46 tester H3)
    binding = [w for w in a.warnings if "binds each rank to one core by default" in w]
    assert len(a.warnings) == 2 and "NPmpich2 is linked against the MPICH family" in \
        a.warnings[0] and len(binding) == 1
    assert a.to_dict()["warnings"] == a.warnings
    # text alone (a web request): no files, the launcher's own name only
    assert run(text, bundle, places).warnings == binding


def test_a_bundle_trained_on_a_job_table_is_refused_before_the_script_is_read(bundle, places):
    import copy

    from hpcds1mpi.errors import ModelError

    jobs_bundle = copy.copy(bundle)
    spec = {**bundle.manifest["feature_spec"], "request_columns": ["time_limit_s"]}
    jobs_bundle.manifest = {**bundle.manifest, "feature_spec": spec}
    with pytest.raises(ModelError, match=r"train --jobs.*advise cannot use it"):
        run("#!/bin/bash\n#SBATCH -N 1\nsrun ./unknown_program\n", jobs_bundle, places)


@pytest.mark.parametrize("changes, problem", [
    # the scheduler refuses these ("Requested node configuration is not available"); the
    # threads alone (OMP_NUM_THREADS=2) did not show it and the layout was predicted
    ([("--cpus-per-task=2", "--cpus-per-task=64")],
     "1 rank x 64 CPUs per task = 64 CPUs per node, but partition 'standard' has 2"),
    ([("srun hpcds1mpi", "srun -c 3 hpcds1mpi")],
     "1 rank x 3 CPUs per task = 3 CPUs per node, but partition 'standard' has 2"),
    ([("--ntasks-per-node=1", "--ntasks-per-node=2"), ("THREADS=2", "THREADS=1")],
     "2 ranks x 2 CPUs per task = 4 CPUs per node, but partition 'standard' has 2"),
    ([("THREADS=2", "THREADS=1")], ""),  # 1 thread in 2 CPUs: it fits
    ([("--ntasks-per-node=1", "--ntasks-per-node=3")], "3 ranks x 2 CPUs per task = 6 CPUs per node"),
])
def test_a_request_the_scheduler_refuses_is_the_asked_sides_problem(bundle, places, changes,
                                                                     problem):
    text = ASKED
    for old, new in changes:
        text = text.replace(old, new)
    a = run(text, bundle, places)
    assert a.asked.problem.startswith(problem) if problem else a.asked.problem == ""
    assert a.asked.predicted == (not problem) and a.recommended is not None


def test_a_pbs_chunk_or_gpus_beyond_the_node_are_the_asked_sides_problem(bundle, places):
    pbs = ("#!/bin/bash\n#PBS -q standard\n#PBS -l select=2:ncpus=64:mpiprocs=1:ompthreads=1\n"
           "mpiexec -n 2 hpcds1mpi run stencil --size 128\n")
    a = run(pbs, bundle, places)
    assert a.asked.problem == ("line 3: each chunk asks for ncpus=64, but partition 'standard' "
                               "has 2 cores per node")
    gpu = [(None, cluster_mod.Partition("gpu", 8, 64.0, max_nodes=2, gpus_per_node=4,
                                        gpu_memory_gb=40.0))]
    a = run("#!/bin/bash\n#SBATCH -N 1\n#SBATCH --gres=gpu:8\nsrun -n 4 ./lulesh -s 40\n",
            bundle, gpu)
    assert a.asked.problem == "8 GPUs per node asked, but partition 'gpu' has 4"


def test_a_size_from_a_variable_bomb_is_one_line_fast(bundle, places):
    """60 doubling assignments (807 bytes) took 15 GB in the server's worker; now the
    value past the cap is unknown and the answer is one line naming where the size was."""
    text = "#!/bin/bash\n#SBATCH -N 2\na0=1\n" + "".join(
        f"a{i}=$a{i - 1}$a{i - 1}\n" for i in range(1, 60)) + \
        "srun hpcds1mpi run stencil --size $a59\n"
    with pytest.raises(ConfigError, match=r"line 63 gives the size as '\$a59', which is no "
                                          r"whole number \(its \$ expression could not be "
                                          r"resolved\); pass --size"):
        run(text, bundle, places)
    arith = "#!/bin/bash\n#SBATCH -N 1\nx=$((" + "+".join(["1"] * 5000) + "))\n" \
        "srun hpcds1mpi run stencil --size $x\n"  # was a RecursionError
    with pytest.raises(ConfigError, match=r"gives the size as '\$x'"):
        run(arith, bundle, places)


def test_a_pick_predicted_worse_than_the_asked_layout_is_said_and_never_auto(bundle, places,
                                                                             monkeypatch):
    """The tester's case: the asked layout (threads never measured) is predicted faster and
    cheaper than the best measured one; advise must say so, not claim a gain, and stay at
    confirm at most, while --rewrite is still offered."""
    from hpcds1mpi.commands.advise import format_advice
    from hpcds1mpi.decide import advise as advise_mod

    real = advise_mod.predict_side

    ends = ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo", "energy_hi")

    def measured(bundle, workload, size, partition, config, side, grid=None, asked_by=10.0):
        side = real(bundle, workload, size, partition, config, side, grid)
        if not side.lines:  # the recommended side: the tester's was a measured layout (an
            side.unmeasured = []  # extrapolated one is confirm at most, whatever the guard)
        else:  # the asked side ten times slower: the recommendation a gain (since s35 R6 the
            for key in ends:  # measured 1 node is shown, the unmeasured 2 nodes read faster)
                setattr(side, key, getattr(side, key) * asked_by)
        return side

    def asked_predicted_better(bundle, workload, size, partition, config, side, grid=None):
        side = measured(bundle, workload, size, partition, config, side, grid, asked_by=1.0)
        if side.lines:  # the asked side: extrapolated to a tenth of the time and energy
            for key in ends:
                setattr(side, key, getattr(side, key) / 10)
            side.unmeasured = ["threads 2 never measured (measured: 1)"]
        return side

    real_recommend = advise_mod.recommend

    def sure_guard(*args, **kw):  # the tester's guard said auto
        rec = real_recommend(*args, **kw)
        rec.verdict = dataclasses.replace(rec.verdict, verdict="auto")
        return rec

    monkeypatch.setattr(advise_mod, "recommend", sure_guard)
    monkeypatch.setattr(advise_mod, "predict_side", measured)
    assert run(ASKED, bundle, places).verdict["verdict"] == "auto"
    monkeypatch.setattr(advise_mod, "predict_side", asked_predicted_better)
    for objective in ("time", "energy", "edp", "balanced"):
        a = run(ASKED, bundle, places, objective=objective)
        assert a.recommended.runtime_s > a.asked.runtime_s
        assert a.verdict["verdict"] == "confirm"
        first = a.verdict["reasons"][0]
        assert first.startswith("the recommended layout is predicted worse than the asked one "
                                f"on {objective} (")
        assert "% longer runtime" in first and "% more energy" in first
        assert "extrapolated (threads 2 never measured (measured: 1))" in first
        assert "only the best measured layout" in first and "not to a predicted gain" in first
        assert a.changes and a.rewritten  # --rewrite stays available
        text = format_advice(a)
        assert "verdict confirm" in text and "verdict auto" not in text
        assert "less energy" not in text and "shorter runtime" not in text
    # a pick predicted better keeps the guard's verdict and says nothing of the kind
    monkeypatch.setattr(advise_mod, "predict_side", measured)
    again = run(ASKED, bundle, places)
    assert again.verdict["verdict"] == "auto"
    assert not any("predicted worse" in r for r in again.verdict["reasons"])


# ---- GPU scripts (the analytic stand-in, on its 2-GPU partition) -------------------------------

GPU_JOB = """#!/bin/bash
#SBATCH --partition=gpu-big
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=2
{gpus}
#SBATCH --time=01:00:00
{setting}
srun {step}hpcds1mpi run gemm --size 1024 --device {device} --precision fp32 --threads 2
"""


@pytest.fixture
def gpu_bundle():
    from tests.fake_bundle import WIDE_SIZES, FakeBundle

    return FakeBundle(sizes=WIDE_SIZES)


def gpu_advise(bundle, gpus="#SBATCH --gpus-per-node=2", setting="", step="", device="gpu"):
    from tests.fake_bundle import fake_places as places

    text = GPU_JOB.format(gpus=gpus, setting=setting, step=step, device=device)
    return advise(text, bundle, places("gpu-big", "cpu"))


def test_the_programs_own_device_is_predicted_not_the_gpus_asked(gpu_bundle):
    """h_gpucpu: GPUs asked, the program run with --device cpu; advise predicted a GPU run
    and rewrote for 8 nodes x 1 GPU the program never uses."""
    a = gpu_advise(gpu_bundle, device="cpu")
    assert a.asked.config.device == "cpu" and a.recommended.config.device == "cpu"
    assert a.asked.predicted
    assert any(n.startswith("line 9: --device cpu: the program runs on the CPU, so both layouts "
                            "are predicted on the CPU; the 2 GPUs per node the job asks for "
                            "(line 6) go unused") for n in a.notes), a.notes
    assert read_script(a.rewritten).gpus_per_node == 0
    assert "--gpus-per-node" not in a.rewritten


def test_gpus_asked_only_on_the_step_are_refused_and_the_rewrite_asks_the_job(gpu_bundle):
    """d_srun_gpt: srun --gpus-per-task=1 and no GPU directive was read as a CPU job; Slurm
    refuses such a step."""
    a = gpu_advise(gpu_bundle, gpus="", step="--gpus-per-task=1 ")
    assert a.asked.config.device == "gpu" and not a.asked.predicted
    assert a.asked.problem.startswith("line 9: srun asks for 2 GPUs per node (--gpus-per-task=1)"
                                      " but the job holds none (no GPU in its directives): "
                                      "Slurm refuses the step")
    again = read_script(a.rewritten)
    assert again.base[0]["gpus_per_node"] == again.gpus_per_node > 0  # the job holds them


def test_a_gres_list_with_other_resources_is_predicted(gpu_bundle):
    """g_lscratch: --gres=lscratch:200,gpu:2 was 202 GPUs, a request said to be refused."""
    a = gpu_advise(gpu_bundle, gpus="#SBATCH --gres=lscratch:200,gpu:2")
    assert a.asked.problem == "" and a.asked.predicted
    assert "lscratch:200" in a.rewritten


def test_more_ranks_than_gpus_is_the_models_limit_not_a_refusal(gpu_bundle):
    """c_over: more ranks per node than GPUs is valid under Slurm (ranks share a GPU)."""
    a = gpu_advise(gpu_bundle, gpus="#SBATCH --gpus-per-node=1")
    assert a.asked.problem == ("2 ranks per node share the job's 1 GPU per node (Slurm accepts "
                               "it); the model predicts one GPU per rank only, so this layout "
                               "has no prediction")
    assert not a.asked.predicted and a.recommended is not None


def test_gpus_picked_by_hand_are_said(gpu_bundle):
    """e_cvd: CUDA_VISIBLE_DEVICES=0 puts both ranks on one GPU; it was predicted as two."""
    a = gpu_advise(gpu_bundle, setting="export CUDA_VISIBLE_DEVICES=0")
    assert a.asked.problem.startswith("line 8 sets CUDA_VISIBLE_DEVICES=0: the 2 ranks per node "
                                      "see 1 GPU, so they share it")
    assert not a.asked.predicted
    both = gpu_advise(gpu_bundle, setting="export CUDA_VISIBLE_DEVICES=0,1")
    assert both.asked.predicted
    assert "line 8 sets CUDA_VISIBLE_DEVICES=0,1 by hand: every rank sees those 2 GPUs only" \
        in both.notes


def test_the_verdicts_reasons_are_the_recommended_layouts(gpu_bundle):
    """a_gres: the reasons listed the overall pick's unmeasured levels (precision bf16), not
    the fp32 layout shown."""
    a = gpu_advise(gpu_bundle)
    overall = a.recommendation.picked.choice
    assert overall.pick["precision"] == "bf16" and a.recommended.config.precision == "fp32"
    reasons = " ".join(a.verdict["reasons"])
    # the overall pick is named with its confidence (capped: bf16 never measured), never its
    # unmeasured levels as if they were the shown layout's
    assert "precision bf16" not in reasons and "the pick is beyond" not in reasons
    # the shown layout's own levels, where it has unmeasured ones (a measured one is shown
    # since an unmeasured level no longer wins on the trees' interval alone: s40 tester B9)
    said = "the recommended layout is beyond what gemm was measured at"
    if a.recommended.unmeasured:
        assert f"{said}, its predictions extrapolated: {'; '.join(a.recommended.unmeasured)}" \
            in a.verdict["reasons"]
    else:
        assert said not in reasons


@pytest.mark.parametrize("command, known", [
    ("gmx_mpi mdrun -s w/{size}/topol.tpr -nsteps 100 -ntomp {threads} -deffnm run", True),
    ("gmx_mpi mdrun -s w/{size}/topol.tpr -nsteps 100 -deffnm run", False),
])
def test_the_programs_own_threads_change_or_the_rewrite_says_they_stay(command, known):
    """Tester g: advise --rewrite cut --cpus-per-task and kept gmx_mpi's -ntomp with no word;
    the job ran 2 OpenMP threads on 1 CPU while the advice said 1 thread. Where the measured
    command shows -ntomp {threads}, the rewrite changes it; elsewhere one note says it stays."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from tests.fake_bundle import WIDE_SIZES, FakeBundle
    from tests.fake_bundle import fake_places as places

    bundle = FakeBundle(workloads=("gromacs",), sizes=WIDE_SIZES)
    bundle._measured_levels = {"gromacs": MeasuredLevels(
        "gromacs", True, precisions=("fp64",), devices=("cpu",), threads=(1, 2),
        ranks_per_node=(1, 2), nodes=(1,), command=command)}
    text = ("#!/bin/bash\n#SBATCH --job-name=water2\n#SBATCH --nodes=1\n"
            "#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=1\n#SBATCH --time=00:30:00\n"
            "cd runs/30-1-2\nmpirun.openmpi -np 1 gmx_mpi mdrun -s w/1024/topol.tpr "
            "-nsteps 300 -ntomp 1 -deffnm run\n")
    a = advise(text, bundle, places("cpu"))
    threads = a.recommended.config.threads
    assert a.size == 1024 and a.asked.config.threads == 1 and threads == 2
    said = [n for n in a.notes if "thread option" in n]
    if known:
        assert "-ntomp 2 -deffnm" in a.rewritten and said == [], a.notes
    else:
        assert "-ntomp 1 -deffnm" in a.rewritten
        assert said == ["line 8: --rewrite does not change gmx_mpi's own thread option "
                        "(-ntomp 1): it sets 2 threads per rank in `--cpus-per-task=2` and "
                        "`OMP_NUM_THREADS=2` only, and the job runs with "
                        "the program's option as it is; set it to 2 by hand"]


def test_a_thread_option_against_omp_num_threads_is_a_warning():
    """s37 tester G2: OMP_NUM_THREADS=2 with gmx_mpi mdrun -ntomp 1 was a note beside a
    prediction; mdrun stops at once on it. Said as advise's other warnings of a job that fails
    as written (a launcher of another MPI): a warning, the answer still given."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from tests.fake_bundle import WIDE_SIZES, FakeBundle
    from tests.fake_bundle import fake_places as places

    bundle = FakeBundle(workloads=("gromacs",), sizes=WIDE_SIZES)
    bundle._measured_levels = {"gromacs": MeasuredLevels(
        "gromacs", True, precisions=("fp64",), devices=("cpu",), threads=(1, 2),
        ranks_per_node=(1, 2), nodes=(1,),
        command="gmx_mpi mdrun -s w/{size}/topol.tpr -nsteps 100 -ntomp {threads} -deffnm run")}
    text = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n"
            "#SBATCH --cpus-per-task=2\n#SBATCH --time=00:30:00\nexport OMP_NUM_THREADS=2\n"
            "mpirun.openmpi -np 1 gmx_mpi mdrun -s w/1024/topol.tpr -nsteps 300 -ntomp 1 "
            "-deffnm run\n")
    a = advise(text, bundle, places("cpu"))
    assert a.asked.config.threads == 1
    said = [w for w in a.warnings if "disagree" in w]
    assert said and said[0].startswith("line 7: the program's -ntomp 1 and OMP_NUM_THREADS=2 "
                                       "disagree: GROMACS's mdrun stops at once"), a.warnings
    assert not any("-ntomp 1 is read as" in n for n in a.notes)


def test_a_gpu_program_without_gpus_is_said(gpu_bundle, bundle, places):
    """The program runs --device gpu while the job asks for no GPU: the asked side says so;
    with no GPU partition allowed at all, one line refuses."""
    a = gpu_advise(gpu_bundle, gpus="")
    assert a.asked.problem == ("line 9: --device gpu: the program runs on the GPU, but the job "
                               "asks for no GPU")
    assert read_script(a.rewritten).gpus_per_node == a.recommended.config.ranks_per_node
    text = ASKED.replace("--precision fp64", "--precision fp64 --device gpu")
    with pytest.raises(ConfigError, match=r"^the script runs on GPUs \(line 8: --device gpu\) "
                                          r"but no allowed partition \(standard\) has any"):
        run(text, bundle, places)


def test_a_script_without_a_partition_gets_the_advised_one_added():
    """A script naming no partition runs in the default one (read as the first); a pick on
    another partition was rewritten without saying where, so the job ran where it was not
    advised (s26 fixer fla's note)."""
    from tests.fake_bundle import WIDE_SIZES, FakeBundle, fake_places

    text = GPU_JOB.replace("#SBATCH --partition=gpu-big\n", "").format(
        gpus="", setting="", step="", device="cpu")
    moved = advise(text, FakeBundle(sizes=WIDE_SIZES), fake_places("gpu-big", "cpu"))
    assert moved.recommendation.picked.partition.name == "cpu"
    assert read_script(moved.rewritten).partition == "cpu"
    stays = advise(text, FakeBundle(sizes=WIDE_SIZES), fake_places("cpu", "gpu-big"))
    assert "partition" not in stays.rewritten  # the default it was read on: nothing added


def test_open_mpis_core_set_per_rank_follows_the_recommended_threads(bundle, places):
    # tester T's T1: PE=2 kept for one thread per rank made mpirun refuse to start
    text = ASKED.replace("export OMP_NUM_THREADS=2\n", "export OMP_NUM_THREADS=2\n"
                         "export OMP_PLACES=cores\nexport OMP_PROC_BIND=close\n").replace(
        "srun hpcds1mpi run stencil --size", "mpirun.openmpi --map-by ppr:1:node:PE=2 "
        "hpcds1mpi run stencil --threads 2 --size")
    a = run(text, bundle, places)
    r = a.recommended.config
    launch = next(ln for ln in a.rewritten.splitlines() if ln.startswith("mpirun"))
    mapping = f"ppr:{r.ranks_per_node}:node" + (f":PE={r.threads}" if r.threads > 1 else "")
    assert launch.startswith(f"mpirun.openmpi --map-by {mapping} hpcds1mpi run stencil "
                             f"--threads {r.threads} ")
    assert ("OMP_PLACES" in a.rewritten) == (r.threads > 1)  # ranks keep cores of their own


def test_a_directive_too_long_to_read_refuses_the_rewrite(bundle, places):
    """s28 tester Z7: a select of 2000 chunks (over 32,768 characters) was skipped, and the
    rewrite added a second select beside it: two conflicting requests. The reading stays."""
    select = "+".join(["1:ncpus=1:mpiprocs=1"] * 2000)
    text = (f"#!/bin/bash\n#PBS -l select={select}\n#PBS -l place=scatter:excl\n"
            "#PBS -l walltime=00:05:00\nmpiexec -n 2 hpcds1mpi run stencil --size 128 "
            "--threads 1\n")
    a = run(text, bundle, places)
    assert a.recommended is not None and a.rewritten is None
    assert a.rewrite_refused.startswith("--rewrite refused: line 2 is over 32,768 characters")
    assert a.rewrite_refused.replace("refused", "would be refused", 1) in a.notes
    assert a.to_dict()["rewrite_refused"] == a.rewrite_refused
    assert run(text.replace(select, "2:ncpus=2:mpiprocs=1"), bundle, places).rewritten


def test_an_escalation_for_partitions_that_cannot_run_it_names_each_ones_reason(monkeypatch):
    """Was (s31 tester Q8): "no allowed partition can run this job (see the lines below)" and
    no line below: recommend's per-partition lines were not among advise's reasons."""
    from hpcds1mpi.decide.advise import advise
    from tests.decide.test_measured_here import RUNS, Small
    from tests.fake_bundle import fake_places

    monkeypatch.setitem(RUNS, (1, 1), ("failed", 0.7))  # no layout ran ok at size 1
    text = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=2\nsrun ./prog 1\n"
    reasons = advise(text, Small(), fake_places("cpu"), workload="psmall",
                     size=1).verdict["reasons"]
    assert reasons[0] == "no allowed partition can run this job (see the lines below)"
    assert reasons[1].startswith("lab/cpu: every configuration is predicted to fail here "
                                 "(measured failing at size 1: 1 node x 1 rank x 1 thread")


def test_a_cafrun_line_is_read_as_its_mpiexecs_launch(program_bundle):
    """s32 tester X3: ``cafrun -n 8 ./jacobi 1024 40`` (OpenCoarrays' launcher, a wrapper of
    mpiexec) had been no launch line: the directives' 4 ranks were advised, the workload was
    not known, and a rewrite left -n as written (the job then failed for want of slots)."""
    text = PROGRAM.replace("srun {line}", "cafrun -n 8 ./jacobi 1024 40")
    a = advise(text, program_bundle, fake_places())
    assert (a.workload, a.size, a.size_source) == ("myjac", 1024, "the command on line 6")
    assert a.asked.config.nodes * a.asked.config.ranks_per_node == 8
    assert not any("no launch line" in n for n in a.notes)


def test_the_kept_precision_is_picked_by_recommends_rules(tmp_path, bundle):
    """s35 tester R6: 64 nodes of stencil 256 fp64 was advised 2 nodes x 2 ranks fp64, never
    measured (65.4 ms, 36.1-111 ms), over the measured 1 node x 2 ranks fp64 (89.9 ms at its
    lower end), and called "the best measured layout"; recommend keeps a measured layout
    first unless the unmeasured one's whole interval is below it."""
    toml = tmp_path / "reach.toml"
    toml.write_text((SCRIPTS / "lab.toml").read_text().replace("max_nodes = 4",
                                                               "max_nodes = 4096"))
    clusters = cluster_mod.load_clusters(toml)
    reach = [(c, p) for c in clusters.values() for p in c.partitions.values()]
    text = ("#!/bin/bash\n#SBATCH --partition=standard\n#SBATCH --nodes=64\n"
            "#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2\n#SBATCH --time=00:30:00\n"
            "export OMP_NUM_THREADS=2\n"
            "srun hpcds1mpi run --threads 2 stencil --size 256 --precision fp64\n")
    got = run(text, bundle, reach)
    shown = got.recommended
    assert shown.config.as_dict() == {"nodes": 1, "ranks_per_node": 2, "threads": 1,
                                      "device": "cpu", "precision": "fp64"}
    assert shown.unmeasured == []
    assert "nodes 2 above" not in json.dumps(got.to_dict())
    cols = got.recommendation.picked.choice.scores.cols
    fp64 = [i for i in range(len(cols["nodes"])) if cols["precision"][i] == "fp64"
            and not cols["unmeasured"][i]]
    assert shown.runtime_s == min(float(cols["runtime_s"][i]) for i in fp64)


def test_a_script_naming_no_partition_on_this_machine_is_checked_on_slurms_default(
        bundle, places, monkeypatch):
    """s47 tester K2: advised on this machine ('local', no Slurm partition), a script naming
    no partition was checked against nothing, though sbatch sends it to the default partition
    (as recommend --emit says): its --mem above those nodes' memory went unmentioned and
    --rewrite kept it."""
    from hpcds1mpi.launch import partition_limits

    monkeypatch.setattr(partition_limits, "_CACHE", {
        (None, ""): partition_limits.PartitionLimits("debug", node_memory_mb=4000),
        ("standard", ""): None})
    monkeypatch.setenv("SLURM_CONF", "")
    text = ASKED.replace("#SBATCH --partition=standard\n", "").replace(
        "#SBATCH --time=00:30:00\n", "#SBATCH --time=00:30:00\n#SBATCH --mem=4G\n")
    a = run(text, bundle, places, default_queue=True)
    assert any(w.startswith("--mem=4G (line 6) is above the memory of partition debug's "
                            "nodes (4000M)") for w in a.warnings), a.warnings
    assert a.rewritten is None and a.rewrite_refused.startswith("--rewrite refused: --mem=4G")
    kept = run(text, bundle, places)  # a cluster file's partition: read as it is named
    assert not any("debug" in w for w in kept.warnings) and kept.rewrite_refused == ""


def test_a_script_naming_no_partition_is_checked_on_slurms_default_alone_and_says_so(
        bundle, places, monkeypatch):
    """s48 (s47 tester K2, review RX2): advised on this machine with Slurm answering, a script
    naming no partition had its memory checked on this machine's partition beside Slurm's
    default one (two warnings for one --mem, a --mem-per-cpu above the default partition's
    nodes unsaid), and recommend's "the default partition takes the job" note was not said."""
    from hpcds1mpi.launch import partition_limits

    monkeypatch.setattr(partition_limits, "_CACHE", {
        (None, ""): partition_limits.PartitionLimits("debug", node_memory_mb=4000)})
    monkeypatch.setenv("SLURM_CONF", "")
    text = ASKED.replace("#SBATCH --partition=standard\n", "").replace(
        "#SBATCH --time=00:30:00\n", "#SBATCH --time=00:30:00\n#SBATCH --mem=30G\n")
    a = run(text, bundle, places, default_queue=True)
    (memory,) = [w for w in a.warnings if "--mem" in w]  # once, on debug (not 'standard')
    assert "partition debug's nodes (4000M)" in memory, a.warnings
    (said,) = [n for n in a.notes if "takes the job" in n]
    assert "Slurm's default partition 'debug' takes the job" in said
    # the user's script, not one chosen for this machine (s48 review RX3)
    assert "its layouts are predicted from runs on this machine" in said, said
    assert "chosen for this machine" not in said and said.endswith("to judge it there"), said
    per_cpu = run(text.replace("--mem=30G", "--mem-per-cpu=3000M"), bundle, places,
                  default_queue=True)  # 2 CPUs x 3000M: above debug's 4000 MiB nodes
    assert any("above the 4000 MiB a node of partition 'debug' has" in w
               for w in per_cpu.warnings), per_cpu.warnings
    monkeypatch.setattr(partition_limits, "_CACHE", {(None, ""): None})  # no Slurm: as before
    alone = run(text, bundle, places, default_queue=True)
    assert any("partition 'standard' has" in w for w in alone.warnings), alone.warnings
    assert any("so the default partition takes the job" in n for n in alone.notes)


def test_the_asked_nodes_are_judged_on_slurms_default_partition_not_this_machine(
        bundle, monkeypatch):
    """s48 tester Q5: advised on this machine ('local', 1 node) with Slurm answering, a script
    naming no partition and asking 2 nodes got "2 nodes asked but partition 'local' has at
    most 1" and no prediction, while its note said Slurm's 'debug' (2 nodes) takes the job,
    which ran there. The fit is debug's; the prediction is this machine's model's, said
    beyond what was measured."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.launch import partition_limits

    monkeypatch.setattr(partition_limits, "_CACHE", {(None, ""): partition_limits.PartitionLimits(
        "debug", node_memory_mb=4000, node_cpus={"n1": 2, "n2": 2})})
    monkeypatch.setenv("SLURM_CONF", "")
    local = [(None, Partition("local", cores_per_node=2, memory_gb=25.3))]  # max_nodes 1
    text = ASKED.replace("#SBATCH --partition=standard\n", "")
    a = run(text, bundle, local, default_queue=True)
    assert a.asked.problem == "" and a.asked.predicted, a.asked.problem
    assert a.asked.config.nodes == 2 and "nodes 2 above the most measured (1)" in \
        a.asked.unmeasured
    assert any(n.startswith("the asked layout is more than this machine has (2 nodes asked "
                            "but partition 'local' has at most 1); Slurm's partition 'debug' "
                            "(2 nodes, 2 CPUs a node) takes and holds it") for n in a.notes)
    one = run(text.replace("--nodes=2", "--nodes=1"), bundle, local, default_queue=True)
    assert one.asked.predicted and not any("more than this machine" in n for n in one.notes)
    three = run(text.replace("--nodes=2", "--nodes=3"), bundle, local, default_queue=True)
    assert three.asked.problem == "3 nodes asked but partition 'debug' has at most 2"
    wide = run(text.replace("--cpus-per-task=2", "--cpus-per-task=4"), bundle, local,
               default_queue=True)  # debug's nodes have 2 CPUs
    assert wide.asked.problem.endswith("= 4 CPUs per node, but partition 'debug' has 2")
