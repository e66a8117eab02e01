"""The pre-flight of a program's launches: a check that passed is not made again in the same
process for the same launcher, program and environment (one probe per tune, not per trial);
any change of those checks again. Real launchers; the probe is counted, not replaced."""

from __future__ import annotations

import os
import sys

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.launch import preflight, probe
from tests.helpers import error_lines, mpiexec, run_cli, system_program


@pytest.fixture
def probes(monkeypatch):
    """The real probe, counted; a fresh memo for each test."""
    made = []
    real = probe.run_probe

    def counted(tokens, env, family, timeout=60.0):
        made.append(list(tokens))
        return real(tokens, env, family, timeout)

    monkeypatch.setattr(probe, "run_probe", counted)
    monkeypatch.setattr(preflight, "_PASSED", {})
    return made


def _check(choice, config=Configuration(1, 2, 1), env=None, ranks=2, program=None):
    launch = choice.launcher_for(2)
    env = {**(env or os.environ), **launch.environment(config)}
    return preflight.check(launch, choice, program or [sys.executable, "-c", "pass"], env,
                           ranks)


def test_the_probe_runs_once_for_the_same_launcher_program_and_environment(probes):
    choice = preflight.LaunchChoice.of(mpiexec=mpiexec())
    first = _check(choice)
    assert len(probes) == 1 and "launch probe: 2 ranks joined" in first[1]
    # every trial of a tune: another configuration (threads, ranks), same launch otherwise
    for config in (Configuration(1, 1, 2), Configuration(1, 2, 2)):
        again = _check(choice, config)
        assert again[1].startswith(first[1]) and again[1].endswith("(checked earlier in this run)")
    assert len(_check(choice, Configuration(1, 1, 1), ranks=1)) == 2  # one rank: covered
    assert len(probes) == 1


def test_another_launcher_option_environment_or_program_checks_again(probes, tmp_path):
    choice = preflight.LaunchChoice.of(mpiexec=mpiexec())
    _check(choice)
    _check(preflight.LaunchChoice.of(mpiexec=mpiexec(), launcher_args="-genv PROBE_MARK 1"))
    _check(choice, env={**os.environ, "LD_LIBRARY_PATH": str(tmp_path)})
    other = tmp_path / "app"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    _check(choice, program=[str(other)])
    assert len(probes) == 4


def test_a_failed_check_is_not_remembered(probes, tmp_path):
    copies = tmp_path / "copies"  # starts -n N independent copies: never one job
    copies.write_text('#!/bin/sh\n[ "$1" = --version ] && { echo "HYDRA build details:"; '
                      'echo "Version: 4.1"; exit 0; }\nn=$2; shift 2\ni=0\n'
                      'while [ $i -lt $n ]; do "$@"; i=$((i+1)); done\n')
    copies.chmod(0o755)
    choice = preflight.LaunchChoice(mpiexec=str(copies), launcher="mpiexec")
    for _ in range(2):
        with pytest.raises(LaunchError, match="does not start 2 ranks as one job"):
            _check(choice)
    assert len(probes) == 2


def _hpcc_wrapper(tmp_path) -> str:
    system_program("hpcc")  # Debian's, linked against Open MPI
    system_program("mpirun.openmpi")
    wrapper = tmp_path / "my_app"
    wrapper.write_text('#!/bin/sh\nexport OMP_NUM_THREADS=1\nexec hpcc "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def _named_launcher(text: str) -> str:
    """The launcher a refusal names (``--mpiexec PATH`` last), as a real path."""
    return os.path.realpath(text.rsplit("--mpiexec ", 1)[1])


def test_a_wrapper_of_an_open_mpi_program_is_refused_under_hydra_before_any_launch(probes,
                                                                                  tmp_path):
    """s29 tester E1: "my_app is a script run by /bin/sh: its MPI cannot be read", so the
    wheel's hydra went on to start the wrapper's Open MPI program as 1-rank copies."""
    wrapper = _hpcc_wrapper(tmp_path)
    with pytest.raises(LaunchError, match=r"linked against Open MPI \(through the wrapper "
                                          r"my_app: its exec of hpcc: links libmpi\.so\.40\)"
                                          r".*--mpiexec \S*mpirun\.openmpi$") as caught:
        _check(preflight.LaunchChoice.of(mpiexec=mpiexec()), program=[wrapper])
    assert _named_launcher(str(caught.value)) == os.path.realpath("/usr/bin/mpirun.openmpi")
    assert probes == []  # refused before the probe: nothing launched
    # a wrapper naming its program by a variable is not guessed at: the probe decides
    unread = tmp_path / "by_variable"
    unread.write_text('#!/bin/sh\nexec $APP "$@"\n')
    unread.chmod(0o755)
    lines = _check(preflight.LaunchChoice.of(mpiexec=mpiexec()), program=[str(unread)])
    assert "program MPI: an unknown MPI (by_variable is a script run by /bin/sh that names " \
           "no one program outright" in lines[0] and len(probes) == 1


def test_sweep_of_a_wrapper_under_the_wrong_launcher_is_one_line_exit_1(tmp_path):
    """The real CLI: `sweep --command my_app` with the venv's MPICH mpiexec, 2 ranks."""
    wrapper, out = _hpcc_wrapper(tmp_path), tmp_path / "app.h5"
    proc = run_cli(["sweep", "--command", f"{wrapper} {{size}}", "--sizes", "1",
                    "--ranks-per-node", "2", "--mpiexec", mpiexec(), "--out", str(out),
                    "--no-progress"], timeout=120, cwd=tmp_path)  # hpcc writes hpccoutf.txt
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    (line,) = error_lines(proc.stderr)
    assert "through the wrapper my_app: its exec of hpcc" in line
    assert _named_launcher(line) == os.path.realpath("/usr/bin/mpirun.openmpi")
    assert not out.exists() and sorted(os.listdir(tmp_path)) == ["my_app"]  # nothing launched


# ---- srun: a Slurm to reach, the --mpi plugin it has, what is said --------------------------

#: srun stand-in: `--mpi=list` as Slurm 22.05 prints it (or fails like srun without a Slurm,
#: NO_SLURM set); a launch logs its argv and fails for a plugin it does not load (pmix), or,
#: STEP_SAYS set, saying that (a printf format) on stderr.
FAKE_SRUN = """#!/bin/sh
printf "%s\\n" "$*" >> "$SRUN_LOG"
if [ "$1" = --mpi=list ]; then
  [ -n "$NO_SLURM" ] && { echo "srun: fatal: Could not establish a configuration source" >&2; exit 1; }
  printf 'MPI plugin types are...\\n\\tpmix\\n\\tnone\\n\\tpmi2\\n'
  echo "specific pmix plugin versions available: pmix_v4"; exit 0
fi
[ -n "$STEP_SAYS" ] && { printf "$STEP_SAYS" >&2; exit 1; }
case " $* " in *" --mpi=pmix "*)
  echo "srun: error: Invalid MPI type 'pmix', --mpi=list for acceptable types" >&2; exit 1;; esac
while [ $# -gt 0 ]; do case "$1" in -c|-n|-N) shift 2;; -*) shift;; *) break;; esac; done
exec "$@"
"""


@pytest.fixture
def srun(tmp_path, monkeypatch):
    """A fake srun first on PATH; returns (the environment to check with, its argv log)."""
    monkeypatch.setattr(preflight, "_PASSED", {})
    (tmp_path / "srun").write_text(FAKE_SRUN)
    (tmp_path / "srun").chmod(0o755)
    log = tmp_path / "srun.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    return {**env, "PATH": f"{tmp_path}:{env['PATH']}", "SRUN_LOG": str(log),
            "SLURM_JOB_ID": "7"}, log


def _srun_check(env, mpi, ranks=1):
    choice = preflight.LaunchChoice(launcher="srun", mpi=mpi)
    return _check(choice, Configuration(1, ranks, 1), env=env, ranks=ranks,
                  program=["true"])


def test_srun_plugins_are_read_from_either_format():
    new = "MPI plugin types are...\n\tpmix\n\tnone\nspecific pmix plugin versions " \
          "available: pmix_v3,pmix_v4\n"
    assert preflight.srun_plugins(new) == ["pmix", "none", "pmix_v3", "pmix_v4"]
    old = "srun: MPI types are...\nsrun: none\nsrun: pmi2\n"
    assert preflight.srun_plugins(old) == ["none", "pmi2"]
    assert preflight.srun_plugins("slurm 23.02 (fake)") == []  # nothing to judge by


@pytest.mark.parametrize("ranks", [1, 2])
def test_a_plugin_srun_does_not_have_is_refused_before_anything_launches(srun, ranks):
    """It was a failed run and exit 0 (one rank) or a probe failure saying "check
    --mpiexec" (two)."""
    env, log = srun
    from hpcds1mpi.errors import ConfigError

    with pytest.raises(ConfigError, match=r"no --mpi plugin 'bogus'; `srun --mpi=list` names "
                                          r"pmix, none, pmi2, pmix_v4: pass one with --mpi"):
        _srun_check(env, "bogus", ranks)
    assert log.read_text().splitlines() == ["--mpi=list"]  # nothing else was started


def test_an_srun_that_reaches_no_slurm_is_refused_naming_salloc(srun):
    env, log = srun
    from hpcds1mpi.errors import ConfigError

    with pytest.raises(ConfigError, match=r"srun cannot reach a Slurm here \(srun: fatal: "
                                          r"Could not .*\(salloc / sbatch\)"):
        _srun_check({**env, "NO_SLURM": "1"}, "pmi2")


def test_one_rank_under_srun_proves_its_plugin_loads_with_a_one_task_step(srun):
    """A listed plugin may not load (pmix without its library); with one rank no probe ran,
    so every launch failed and was recorded."""
    env, log = srun
    with pytest.raises(LaunchError, match=r"one-task srun --mpi=pmix step failed \(exit 1: "
                                          r"srun: error: Invalid MPI type 'pmix'.*\(none, pmi2"):
        _srun_check(env, "pmix")
    lines = _srun_check(env, "pmi2")
    assert "a one-task srun --mpi=pmi2 step ran" in lines
    assert log.read_text().splitlines()[-1] == "-n 1 --mpi=pmi2 true"


def test_one_rank_of_an_open_mpi_without_slurms_pmi_is_refused_under_srun_pmi2(srun):
    """Was: one rank was taken for a singleton whatever the plugin, yet Debian's Open MPI
    aborts in MPI_Init under srun --mpi=pmi2 or none ("OMPI was not built with SLURM's PMI
    support"): every tune run of Elk failed (s30 tester L2)."""
    env, log = srun
    hpcc = system_program("hpcc")  # Debian's Open MPI, no mca_pmix_s1/s2
    for mpi in ("pmi2", "none"):
        choice = preflight.LaunchChoice(launcher="srun", mpi=mpi)
        with pytest.raises(ConfigError, match=r"Open MPI.*srun --mpi=(pmi2|none) .*--mpi=pmix"):
            _check(choice, Configuration(1, 1, 1), env=env, ranks=1, program=[hpcc])
    assert not log.exists() or "hpcc" not in log.read_text()  # nothing of it was started
    choice = preflight.LaunchChoice(launcher="srun", mpi="pmix_v4")  # the fake's PMIx
    _check(choice, Configuration(1, 1, 1), env=env, ranks=1, program=[hpcc])
    # an MPICH program's single rank needs no plugin: not refused under none
    _check(preflight.LaunchChoice(launcher="srun", mpi="none"), Configuration(1, 1, 1),
           env=env, ranks=1, program=[sys.executable, "-c", "pass"])
    # s31 tester P8: several MPICH ranks under --mpi none exited 1, under pmix 2: both a bad
    # --mpi value, exit 2 (ConfigError), before anything is started
    with pytest.raises(ConfigError, match=r"MPICH family.*--mpi=none gives its ranks no wire-up"):
        _check(preflight.LaunchChoice(launcher="srun", mpi="none"), Configuration(1, 2, 1),
               env=env, ranks=2, program=[system_program("NPmpich2")])


@pytest.mark.parametrize("says, reason", [
    ("srun: step launch failed: task 0 died\\n\\0", "task 0 died"),
    ("srun: step launch failed: task 0 \\377 died\\n\\0\\0", "task 0 \ufffd died")])
def test_a_failed_one_task_step_says_its_reason_without_the_nul_its_output_ends_with(
        srun, says, reason):
    """Was: read with text=True, the step's stderr kept the NUL a launcher's output ends with
    (Open MPI 5's, a C string's), its last line and so the reason ("exit 1: \\x00"), and a
    byte that is no UTF-8 raised a traceback; read now as the sweep and the probes read
    launcher output (help_text.launcher_text)."""
    env, _ = srun
    with pytest.raises(LaunchError) as caught:
        _srun_check({**env, "STEP_SAYS": says}, "pmi2")
    said = str(caught.value)
    assert "\0" not in said
    assert f"(exit 1: srun: step launch failed: {reason}); nothing was measured" in said


def test_srun_outside_an_allocation_is_said_not_refused(srun):
    env, _ = srun
    inside = _srun_check(env, "pmi2")
    outside = _srun_check({k: v for k, v in env.items() if k != "SLURM_JOB_ID"}, "pmi2")
    assert not any("allocation" in line for line in inside)
    assert any(line.startswith("not inside a Slurm allocation: each launch is a Slurm job")
               for line in outside)


def test_say_notes_says_each_launcher_note_once_then_runs():
    said, ran = [], []
    launch = preflight.LaunchChoice(launcher="mpiexec", mpiexec=mpiexec()).launcher_for(2)
    launch.notes = lambda config: [f"{config.ranks_per_node} share", "root"]
    note = preflight.say_notes(launch, said.append, then=lambda c: ran.append(c) or "row")
    assert [note(Configuration(1, r, 1)) for r in (4, 4, 8)] == ["row"] * 3
    assert said == ["4 share", "root", "8 share"] and len(ran) == 3


def test_the_program_behind_an_exec_wrapper_prefix_is_checked(probes):
    """s30 tester K1: `env POISSON_N={size} prog` was read as `env` ("links no MPI library"),
    so hydra started an Open MPI program as 1-rank copies, recorded ok."""
    hpcc = system_program("hpcc")
    system_program("mpirun.openmpi")
    with pytest.raises(LaunchError, match=r"linked against Open MPI \(links libmpi\.so\.40\)"):
        _check(preflight.LaunchChoice.of(mpiexec=mpiexec()),
               program=["env", "N=3", "nice", "-n", "5", hpcc])
    assert probes == []


def test_the_program_is_found_on_the_path_open_mpis_ranks_get(probes, tmp_path):
    """s30 tester K4: `python3` was read on pyenv's PATH (a shim: unknown MPI), while Open
    MPI's mpirun by absolute path runs its prefix's bin first: /usr/bin/python3 ran."""
    system_program("hpcc")
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "hpcc").write_text('#!/bin/sh\nexec $REAL "$@"\n')
    (shims / "hpcc").chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"}
    lines = _check(preflight.LaunchChoice.of(mpiexec=system_program("mpirun.openmpi")),
                   env=env, ranks=1, program=["hpcc"])
    assert lines[0].startswith("program MPI: Open MPI (links libmpi.so.40)"), lines


def test_a_cluster_files_mpiexec_that_is_no_launcher_is_refused_as_the_cluster_files(tmp_path):
    """s32 tester X1: a cluster file's `mpiexec = "/usr/bin/cafrun"` was refused as
    "--mpiexec '/usr/bin/cafrun' ...", naming an option not given; the program given, its
    MPI's launcher is named (a script around hydra stands for cafrun, not always installed)."""
    from hpcds1mpi.launch.mpi_family import launcher_family

    wrapper = tmp_path / "cafrun"
    wrapper.write_text('#!/bin/sh\n[ "$1" = --version ] && { echo "cafrun 2.10.1"; exit 0; }\n'
                       f'exec {system_program("mpiexec.mpich")} "$@"\n')
    wrapper.chmod(0o755)
    site = tmp_path / "caf.toml"
    site.write_text(f'[cluster]\nname = "vm"\nlauncher = "mpirun"\nmpiexec = "{wrapper}"\n\n'
                    "[partitions.local]\ncores_per_node = 2\nmemory_gb = 4\n")
    with pytest.raises(ConfigError) as refused:
        preflight.LaunchChoice.of(cluster_file=str(site), program=[system_program("hpcc")])
    said = str(refused.value)
    assert said.startswith(f"the cluster file's mpiexec '{wrapper}' is not an MPI launcher")
    named = said.split('use its launcher: set mpiexec = "', 1)[1].split('"')[0]
    assert launcher_family(named) == "openmpi", said
    with pytest.raises(ConfigError, match=rf"^--mpiexec '{wrapper}' is not an MPI launcher"):
        preflight.LaunchChoice.of(cluster_file=str(site), mpiexec=str(wrapper))


def test_a_launcher_of_another_installation_than_the_programs_libmpi_is_said(probes, tmp_path):
    """s35 tester I6: a program of Intel MPI's, launched (no --mpiexec) by the venv's MPICH 5
    mpiexec first in the documented order: said in one line naming Intel's own."""
    from tests.intel_mpi import build_hybrid, intel_env, intel_mpi

    root, app = intel_mpi(), str(build_hybrid(tmp_path))
    choice = preflight.LaunchChoice.of(mpiexec=mpiexec())
    lines = _check(choice, Configuration(1, 1, 1), env=intel_env(), ranks=1, program=[app])
    (said,) = [line for line in lines if "another installation's" in line]
    assert said.endswith(f"to launch it with its own, --mpiexec {root / 'bin' / 'mpiexec'}")
    own = preflight.LaunchChoice.of(mpiexec=str(root / "bin" / "mpiexec.hydra"))
    assert not [line for line in _check(own, Configuration(1, 1, 1), env=intel_env(), ranks=1,
                                        program=[app]) if "another installation's" in line]


def test_sweep_records_the_launcher_intels_mpirun_runs_or_refuses_it(tmp_path):
    """s35 tester I4, the real CLI: `--mpiexec .../bin/mpirun` (Intel's script running
    mpiexec.hydra by bare name) with the venv's bin first was accepted and run through the
    venv's MPICH hydra; now refused in one line, exit 2. With Intel's bin first the sweep
    runs through it and records it as given (s35 review 1: Intel's mpirun does the scheduler's
    placement), and a job script puts its folder first on PATH."""
    from tests.intel_mpi import build_hybrid, intel_env, intel_mpi

    root, app = intel_mpi(), str(build_hybrid(tmp_path))
    argv = ["sweep", "--command", f"{app} {{size}}", "--sizes", "1000", "--ranks-per-node",
            "2", "--mpiexec", str(root / "bin" / "mpirun"), "--no-progress"]
    venv_first = {"PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    refused = run_cli([*argv, "--out", str(tmp_path / "no.h5")], env=venv_first, timeout=120)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    (line,) = error_lines(refused.stderr)
    assert f"not {root}/bin/mpiexec.hydra beside the script" in line
    assert not (tmp_path / "no.h5").exists()
    ran = run_cli([*argv, "--out", str(tmp_path / "t.h5"), "--time-regex",
                   r"time ([0-9.]+) s"], env=intel_env(), timeout=240)
    assert ran.returncode == 0, ran.stderr
    assert f"launcher: {root}/bin/mpirun " in ran.stderr
    recorded = (tmp_path / "t.h5").read_bytes()
    assert f'"command": "{root}/bin/mpirun"'.encode() in recorded


@pytest.mark.slurm
def test_a_failed_one_task_step_names_the_plugins_and_launcher_the_programs_mpi_can_use(
        slurm, monkeypatch):
    """s36 tester Q4: a failed one-task ``srun --mpi=pmix`` step of an Open MPI program said
    "pass another --mpi (none, cray_shasta, pmi2, pmix_v4)": pmix_v4 is the same plugin, none
    and cray_shasta cannot start it, and pmi2 is refused for it; its own mpirun, which works,
    was never named. Real srun, whose step fails at once (a GRES no node has)."""
    monkeypatch.setattr(preflight, "_PASSED", {})
    env = {**slurm.env}
    for name, mpi, fix in (
            ("hpcc", "pmix", r"nothing was measured: launch with --mpiexec \S*mpirun\.openmpi "
                             r"in place of --launcher srun$"),
            ("NPmpich2", "pmi2", r"nothing was measured: launch with --mpiexec "
                                 r"\S*mpiexec\.mpich in place of --launcher srun$"),
            ("NPmpich2", "pmix", r"nothing was measured: pass another --mpi \(pmi2\), or "
                                 r"launch with --mpiexec \S*mpiexec\.mpich in place of")):
        choice = preflight.LaunchChoice(launcher="srun", mpi=mpi, args=("--gres=nothere:1",))
        with pytest.raises(LaunchError, match=r"one-task srun --mpi=\w+ step failed \(exit 1: "
                                              r"srun: error: Invalid generic resource.*" + fix):
            _check(choice, Configuration(1, 1, 1), env=env, ranks=1,
                   program=[system_program(name)])


SITE = """[clusters.lab]
{keys}
[clusters.lab.partitions.standard]
cores_per_node = 2
memory_gb = 25.3
max_nodes = 1
"""


def test_a_cluster_files_launcher_chooses_the_sweeps_as_its_scripts(tmp_path):
    """s42: a --command sweep used the file's mpiexec though its launcher = "srun" (its
    scripts launch with srun, leaving mpiexec unused); now the file's launcher is the sweep's
    where the command line names none, and an mpiexec it leaves unused is said."""
    file = tmp_path / "lab.toml"
    file.write_text(SITE.format(keys='launcher = "srun"\nmpiexec = "/usr/bin/mpirun.openmpi"'))
    choice = preflight.LaunchChoice.of(cluster_file=str(file))
    assert (choice.launcher, choice.mpiexec) == ("srun", None)
    assert choice.said == ("the cluster file's mpiexec = '/usr/bin/mpirun.openmpi' is not "
                           'used: its launcher = "srun" launches the ranks'), choice.said
    given = preflight.LaunchChoice.of(cluster_file=str(file), mpiexec=mpiexec())
    assert (given.launcher, given.mpiexec, given.said) == ("mpiexec", mpiexec(), "")
    file.write_text(SITE.format(keys=f'launcher = "mpirun"\nmpiexec = "{mpiexec()}"'))
    own = preflight.LaunchChoice.of(cluster_file=str(file))
    assert (own.launcher, own.mpiexec, own.said) == ("mpiexec", mpiexec(), "")


def test_sweep_launch_uses_and_checks_the_cluster_files_mpiexec(tmp_path):
    """s42: ``sweep --launch N --cluster FILE`` neither used nor checked the file's mpiexec:
    one that is not here, or Open MPI's for the kernels' MPICH mpi4py, is refused in one
    line before anything launches, naming the file's key."""
    file = tmp_path / "lab.toml"
    out = tmp_path / "k.h5"
    sweep = ["sweep", "--kernel", "stencil", "--sizes", "40", "--ranks-per-node", "2",
             "--threads", "1", "--cluster", str(file), "--out", str(out), "--launch", "2",
             "--no-progress"]
    file.write_text(SITE.format(keys='launcher = "mpiexec"\nmpiexec = "/nonexistent-s42/mpirun"'))
    proc = run_cli(sweep, timeout=120)
    assert proc.returncode == 2, proc.stderr
    [line] = error_lines(proc.stderr)
    assert f"{file}: mpiexec = '/nonexistent-s42/mpirun' of cluster 'lab' does not exist" in line
    if os.path.exists("/usr/bin/mpirun.openmpi"):
        file.write_text(SITE.format(keys='launcher = "mpiexec"\n'
                                         'mpiexec = "/usr/bin/mpirun.openmpi"'))
        proc = run_cli(sweep, timeout=120)
        assert proc.returncode == 2, proc.stderr
        [line] = error_lines(proc.stderr)
        assert "/usr/bin/mpirun.openmpi is Open MPI's launcher" in line, line
        assert "set mpiexec in the --cluster file to " in line and "--mpiexec" not in line
    assert not out.exists()


# ---- s44: --mpi where srun does not start the ranks ------------------------------------------

def test_a_plugin_where_mpiexec_starts_the_ranks_is_refused_naming_what_starts_them(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    given, site = preflight.LaunchChoice("mpiexec"), preflight.LaunchChoice("mpiexec", "pmi2",
                                                                           "/opt/mpi/mpiexec")
    assert given.started_by("mpiexec") == "--launcher mpiexec"
    assert site.started_by(None) == "mpiexec (/opt/mpi/mpiexec)"
    assert preflight.LaunchChoice().started_by(None) == "outside a Slurm allocation mpiexec"
    assert preflight.LaunchChoice("srun").started_by("srun") == ""
    with pytest.raises(ConfigError, match=r"^--mpi pmix is srun's PMI plugin and has no effect "
                       "here: --launcher mpiexec starts the ranks .*; drop --mpi"):
        preflight.refuse_unused_plugin("pmix", "--launcher mpiexec")
    preflight.refuse_unused_plugin(None, "--launcher mpiexec")  # not given: nothing to say
    preflight.refuse_unused_plugin("pmix", "")  # srun: it applies


@pytest.mark.parametrize("command", [
    ["sweep", "--command", "/bin/echo hi", "--sizes", "1", "--ranks-per-node", "1"],
    ["sweep", "--launch", "2", "--kernel", "gemm", "--sizes", "64"],
    ["tune", "--kernel", "gemm", "--size", "64", "--budget", "1"]])
def test_sweep_and_tune_refuse_mpi_under_launcher_mpiexec_before_anything_runs(command,
                                                                               tmp_path):
    out = tmp_path / "x.h5"
    proc = run_cli([*command, "--launcher", "mpiexec", "--mpi", "pmix", "--out", str(out),
                    "--no-progress"] if command[0] == "sweep" else
                   [*command, "--launcher", "mpiexec", "--mpi", "pmix", "--out", str(out)],
                   timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    (line,) = error_lines(proc.stderr)
    assert "--mpi pmix is srun's PMI plugin and has no effect here: --launcher mpiexec" in line
    assert not out.exists()
