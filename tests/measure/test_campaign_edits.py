"""A campaign edited after ``campaign emit`` (s39 tester H1): a part plan that no longer holds
what campaign.json records is refused by resubmit and submit.sh and said by status; a source
plan edited since is said, the campaign going on with its own copy."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure import campaign as cm
from hpcds1mpi.measure.campaign_edits import edited_plans
from hpcds1mpi.measure.campaign_status import campaign_status, summary_lines
from hpcds1mpi.measure.campaign_submit import resubmit
from tests.measure.test_campaign_status import PLAN, _emit, _scheduler


@pytest.fixture
def camp(tmp_path):
    (tmp_path / "plan.toml").write_text(PLAN)
    return _emit(tmp_path, 1)


def _status(folder, env) -> list[str]:
    manifest, parts = campaign_status(folder, env)
    return summary_lines(folder, manifest, parts)


def test_an_edited_part_plan_is_refused_by_resubmit_and_said_by_status(camp, tmp_path):
    env, log = _scheduler(tmp_path)
    assert edited_plans(camp, cm.read_manifest(camp)) == []
    plan = camp / "plans" / "n1-0.toml"
    plan.write_text(plan.read_text().replace("min_time = 0.0", "min_time = 0.5")
                    .replace("40]", "40, 48]"))
    with pytest.raises(ConfigError) as refused:
        resubmit(camp, env=env)
    line = str(refused.value)
    assert line.startswith("plans/n1-0.toml changed since `campaign emit`")
    assert "--out NEW" in line and line.endswith("nothing was submitted") and "\n" not in line
    with pytest.raises(ConfigError):
        resubmit(camp, env=env, dry_run=True)  # submit.sh's check too
    assert not log.exists() or log.read_text() == ""  # no sbatch ran
    assert cm.read_manifest(camp)["submissions"] == []
    lines = _status(camp, env)
    assert lines[-1].startswith("plans/n1-0.toml changed since")
    assert not any("to submit again" in line for line in lines)
    plan.unlink()  # gone is no plan of the campaign either
    assert edited_plans(camp, cm.read_manifest(camp)) == ["plans/n1-0.toml"]


def test_only_the_plans_of_the_parts_asked_of_are_checked(camp):
    """resubmit asks of the parts it would submit: a done part's edited plan runs no more."""
    (camp / "plans" / "n2-0.toml").write_text("# edited\n")
    manifest = cm.read_manifest(camp)
    assert edited_plans(camp, manifest, {"n1-0"}) == []
    assert edited_plans(camp, manifest) == ["plans/n2-0.toml"]


def test_a_source_plan_edited_since_emit_is_said_and_the_campaign_goes_on(camp, tmp_path):
    env, log = _scheduler(tmp_path)
    (tmp_path / "plan.toml").write_text(PLAN.replace("40]", "40, 48]"))
    result = resubmit(camp, env=env)
    assert result["jobs"] and len(result["notes"]) == 1
    assert result["notes"][0].startswith(f"{tmp_path / 'plan.toml'} changed since this "
                                         "campaign was emitted from it")
    assert f"runs its own copy ({camp / 'plan.toml'})" in result["notes"][0]
    assert any(line.startswith(f"note: {tmp_path / 'plan.toml'} changed")
               for line in _status(camp, env))
