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
