"""``sweep --resume`` of a file written before the ``extra`` column gives the plan's kernel
options to the runs it finds done (s41 tester D3: they stayed the plain kernel, silently, and
trained pooled with it)."""

from __future__ import annotations

from tests.helpers import ONE_QUICK_LAYOUT, run_cli

PLAN = ONE_QUICK_LAYOUT + """
[[kernel]]
name = "stencil"
sizes = {sizes}

[[kernel]]
name = "stencil"
sizes = {sizes}
extra = {{ sweeps = 3 }}
"""


def _drop_extra_column(path) -> None:
    """Make ``path`` a file as an hpcds1mpi before the ``extra`` column wrote it."""
    import h5py

    with h5py.File(path, "a") as f:
        del f["runs/extra"]
        f["runs"].attrs["columns"] = [c for c in f["runs"].attrs["columns"]
                                      if (c.decode() if isinstance(c, bytes) else c) != "extra"]


def test_a_resume_gives_older_runs_the_plans_options_and_says_so(tmp_path):
    from hpcds1mpi.records.telemetry import read_runs

    (tmp_path / "a.toml").write_text(PLAN.format(sizes="[16, 24]"))
    (tmp_path / "b.toml").write_text(PLAN.format(sizes="[16, 24, 32]"))
    first = run_cli(["sweep", "--plan", "a.toml", "--out", "d.h5", "--no-progress"],
                    cwd=tmp_path, timeout=300)
    assert first.returncode == 0, first.stderr
    _drop_extra_column(tmp_path / "d.h5")
    assert set(read_runs(tmp_path / "d.h5")["extra"]) == {""}
    again = run_cli(["sweep", "--plan", "b.toml", "--out", "d.h5", "--resume",
                     "--no-progress"], cwd=tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "2 run(s) in d.h5 were measured with the plan's kernel options" in again.stderr
    runs = read_runs(tmp_path / "d.h5")
    assert runs.groupby("extra").size().to_dict() == {"": 3, '{"sweeps": 3}': 3}
    # nothing left to fill: no second line
    last = run_cli(["sweep", "--plan", "b.toml", "--out", "d.h5", "--resume",
                    "--no-progress"], cwd=tmp_path, timeout=300)
    assert last.returncode == 0 and "kernel options" not in last.stderr, last.stderr
