"""What ``campaign status`` counts of the merged file: a run of no configuration of the campaign
(its part plan edited to sweep one more size) is said, not counted (s39 tester H1: status said
20/20 of a merged file of 21 runs)."""

from __future__ import annotations

from hpcds1mpi.measure.campaign_merged import merged_runs
from hpcds1mpi.measure.campaign_status import campaign_status, summary_lines
from tests.measure.test_campaign_status import PLAN, _emit, _scheduler, _sweep


def test_a_run_of_no_configuration_of_the_campaign_is_said_apart(tmp_path):
    (tmp_path / "plan.toml").write_text(PLAN.replace("nodes = [1, 2]", "nodes = [1]"))
    camp = _emit(tmp_path, 1)
    more = tmp_path / "more.toml"  # the part's plan and one more size
    more.write_text((camp / "plans" / "n1-0.toml").read_text().replace("40]", "40, 48]"))
    _sweep(camp, str(more), "merged.h5")
    manifest, parts = campaign_status(camp, _scheduler(tmp_path)[0])
    merged = merged_runs(camp, manifest)
    assert (len(merged.statuses), merged.twice, merged.foreign) == (4, 0, 1)
    assert "merged: 4/4 configurations in merged.h5 (and 1 run(s) of no configuration of " \
        "this campaign)" in summary_lines(camp, manifest, parts)


def test_every_part_done_but_no_merged_file_says_resubmit_submits_the_merge(tmp_path):
    """s39 tester H5: with merged.h5 gone, status said "merged: not yet" and nothing more,
    though resubmit submits just the merge."""
    (tmp_path / "plan.toml").write_text(PLAN.replace("nodes = [1, 2]", "nodes = [1]"))
    camp = _emit(tmp_path, 1)
    _sweep(camp, "plans/n1-0.toml", "telemetry/n1-0.h5")
    manifest, parts = campaign_status(camp, _scheduler(tmp_path)[0])
    lines = summary_lines(camp, manifest, parts)
    assert lines[-2:] == ["merged: not yet", f"every part is done but not merged into "
                          f"merged.h5: hpcds1mpi campaign resubmit {camp} submits the merge "
                          "alone"]


def test_status_reads_the_merged_file_once(tmp_path, monkeypatch):
    """campaign status opened the merged HDF5 twice, once for the parts and once for its
    summary line; it is read once, and one gone since is said gone."""
    from hpcds1mpi.records import telemetry

    (tmp_path / "plan.toml").write_text(PLAN.replace("nodes = [1, 2]", "nodes = [1]"))
    camp = _emit(tmp_path, 1)
    _sweep(camp, "plans/n1-0.toml", "merged.h5")
    loads = []
    load = telemetry.load
    monkeypatch.setattr(telemetry, "load", lambda path, *a, **k: (
        loads.append(str(path)), load(path, *a, **k))[1])

    def status() -> list[str]:
        manifest, parts = campaign_status(camp, _scheduler(tmp_path)[0])
        return summary_lines(camp, manifest, parts)

    assert "merged: 4/4 configurations in merged.h5" in status()
    assert [p for p in loads if p.endswith("merged.h5")] == [str(camp / "merged.h5")]
    (camp / "merged.h5").unlink()
    assert "merged: not yet" in status()
