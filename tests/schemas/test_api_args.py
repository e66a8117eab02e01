"""The Python API's argument schema names the same choices as the rest of the code."""

from __future__ import annotations

import typing

import pytest

from hpcds1mpi.config import DEVICES
from hpcds1mpi.decide.system1 import OBJECTIVES
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.schemas.api_args import ApiArguments, check_api_arguments


def _choices(name: str) -> tuple:
    annotation = ApiArguments.model_fields[name].annotation
    literal = next(a for a in typing.get_args(annotation) if a is not type(None)) \
        if typing.get_origin(annotation) is typing.Union else annotation
    return typing.get_args(literal)


def test_devices_and_objectives_are_the_ones_the_code_knows():
    assert _choices("device") == DEVICES
    assert _choices("objective") == OBJECTIVES


@pytest.mark.parametrize("device", DEVICES)
def test_every_known_device_is_accepted(device):
    check_api_arguments("recommend", device=device)


def test_an_unknown_device_is_one_error_naming_the_choices():
    with pytest.raises(ConfigError, match=r"recommend\(\): device must be 'cpu' or 'gpu'"):
        check_api_arguments("recommend", device="tpu")


def test_a_required_argument_given_none_is_refused_like_a_wrong_type():
    """recommend(None, 128) was accepted (and escalated) while recommend(5, 128) was refused."""
    with pytest.raises(ConfigError, match=r"recommend\(\): workload is required, got None"):
        check_api_arguments("recommend", required=("workload", "size"), workload=None, size=128)
    with pytest.raises(ConfigError, match=r"recommend\(\): workload must be a string"):
        check_api_arguments("recommend", required=("workload", "size"), workload=5, size=128)


def test_a_blank_name_says_blank_not_the_pattern():
    with pytest.raises(ConfigError) as err:
        check_api_arguments("recommend", workload="  ")
    assert "workload is blank" in str(err.value) and "pattern" not in str(err.value)


def test_cli_options_in_shared_texts_are_said_as_api_arguments():
    from hpcds1mpi.schemas.api_args import API_NAMES, reworded

    text = "no configuration meets --deadline; relax --deadline or --energy-budget; " \
           "pass --cluster FILE; --max-nodes 2; --nodes 3; --unknown stays"
    assert reworded(text, API_NAMES) == (
        "no configuration meets deadline_s; relax deadline_s or energy_budget_j; pass cluster; "
        "max_nodes 2; nodes 3; --unknown stays")


def test_a_submit_time_is_a_date_and_time_or_one_line():
    """s45 tester C3: submit_time="yesterday" was a pandas DateParseError traceback."""
    import datetime

    import pandas as pd

    from hpcds1mpi.schemas.api_args import submit_time_argument

    assert submit_time_argument(None) is None
    for given in ("2014-08-01", datetime.date(2014, 8, 1), pd.Timestamp("2014-08-01")):
        assert submit_time_argument(given) == pd.Timestamp("2014-08-01")
    for bad, said in (("yesterday", "'yesterday' is not a date and time"),
                      ("NaT", "'NaT' is not a date and time"),
                      (1406851200, "must be a date and time, got int")):
        with pytest.raises(ConfigError, match=r"^propose_walltime\(\): submit_time " + said):
            submit_time_argument(bad)


def test_a_submit_time_with_a_zone_is_put_on_the_job_tables_utc_clock():
    """s45 tester F9: '2026-06-01T12:00Z' (or any zone-aware time) was compared with the job
    table's naive UTC times: a TypeError traceback. Now the same instant, naive UTC."""
    import datetime

    import pandas as pd

    from hpcds1mpi.schemas.api_args import submit_time_argument

    noon = pd.Timestamp("2026-06-01 12:00")
    for given in ("2026-06-01T12:00Z", "2026-06-01T14:00+02:00",
                  pd.Timestamp("2026-06-01 08:00", tz="America/New_York"),
                  datetime.datetime(2026, 6, 1, 12, tzinfo=datetime.timezone.utc)):
        stamp = submit_time_argument(given)
        assert stamp == noon and stamp.tzinfo is None, given


def test_a_partition_limit_is_checked_as_a_time_limit_is():
    """s45 tester F9: partition_limit_s=-5 was taken, and -5 s proposed."""
    check_api_arguments("propose_walltime", partition_limit_s=3600)
    for bad, said in ((-5, "must be > 0, got -5.0"), (float("nan"), "must be a finite number"),
                      ("3600", "must be a number, got '3600'")):
        with pytest.raises(ConfigError, match=r"^propose_walltime\(\): partition_limit_s " + said):
            check_api_arguments("propose_walltime", partition_limit_s=bad)
