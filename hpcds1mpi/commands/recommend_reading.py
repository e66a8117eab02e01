"""How ``recommend --emit``'s calibration sweep reads a user's ``--program``: the sweep's
reading options (``--time-regex``, ``--workdir``, ``--fail-regex`` ...), declared as ``sweep``
declares them, given or as the model's bundle recorded its earlier sweep."""

from __future__ import annotations

import click

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.sweep_step import READING_KEYS

#: The sweep's options for reading a program, taken as they are: a calibration sweep of the
#: program must read it as its earlier sweep did (their keys as the telemetry records them:
#: ``launch.sweep_step.READING_KEYS``, ``--fail-regex`` included).
READING_OPTIONS = tuple("--" + key.replace("_", "-") for key in READING_KEYS)


def reading_options(func):
    """Add :data:`READING_OPTIONS` to ``func`` with the sweep's declarations and help text."""
    from hpcds1mpi.commands.sweep import command as sweep

    by_flag = {opt: p for p in sweep.params for opt in getattr(p, "opts", ())}
    for flag in reversed(READING_OPTIONS):
        param = by_flag[flag]
        func = click.option(*param.opts, param.name, default=None,
                            help=f"Calibration sweep of --program: "
                                 f"{param.help.replace('--command', '--program')} (default: as "
                                 "the model's bundle recorded it)")(func)
    return func


def calibration_reading(bundle, workload: str, program, given: dict, escalated: bool):
    """The reading options of a calibration sweep of ``program`` and the notes about them
    (:func:`~hpcds1mpi.decide.calibration_sweep.calibration_measurement`); ({}, []) for a
    kernel; none, given ones said unused, where not ``escalated`` (the script runs the program
    itself). Given without --program: refused in one line; with it: checked all the same."""
    used = [f"--{k.replace('_', '-')}" for k, v in given.items() if v is not None]
    if program is None:
        if used:
            raise ConfigError(f"{', '.join(used)} applies to --program only (how a calibration "
                              "sweep reads your program); add --program, or drop "
                              f"{'them' if len(used) > 1 else 'it'}")
        return {}, []
    from hpcds1mpi.decide.calibration_sweep import READING_NOT_USED, calibration_measurement
    from hpcds1mpi.measure.readings import Readings
    from hpcds1mpi.measure.setup_command import check_setup
    from hpcds1mpi.surrogates.levels import bundle_levels

    Readings.of(time_regex=given["time_regex"], fom_regex=given["fom_regex"],  # checked now
                ranks_regex=given["ranks_regex"], output_file=given["output_file"],
                fail_regex=given["fail_regex"])
    check_setup(given["setup"])
    if not escalated:  # the bundle's levels file is read only for a calibration sweep
        return {}, [READING_NOT_USED] if used else []
    return calibration_measurement(bundle_levels(bundle, workload), given)
