"""A sweep's measuring defaults have one home, which ``sweep --help`` and the plans read, and a
``min_time`` given alone is measured, not cut at the default repeat cap (s38 tester B6)."""

from __future__ import annotations

from click.testing import CliRunner

from hpcds1mpi.measure.plan import SweepPlan
from hpcds1mpi.schemas.plan import SweepSettings, sweep_settings
from hpcds1mpi.schemas.sweep_defaults import KERNEL, PROGRAM, UNCAPPED, lifts_cap


def _help() -> str:
    from hpcds1mpi.commands.sweep import command

    out = CliRunner().invoke(command, ["--help"], terminal_width=400)
    assert out.exit_code == 0, out.output
    return " ".join(out.output.split())


def test_the_plans_use_the_defaults_the_help_states():
    settings, plan = SweepSettings(), SweepPlan(runs=[])
    for name, value in KERNEL._asdict().items():
        assert getattr(settings, name) == getattr(plan, name) == value, name
    text = _help()
    for words in (f"(default {KERNEL.min_time:g} s; --command {PROGRAM.min_time:g} s",
                  f"(default {KERNEL.min_repeats}; --command {PROGRAM.min_repeats} launches)",
                  f"(default {KERNEL.max_repeats}; --command {PROGRAM.max_repeats} launches",
                  f"(default {KERNEL.warmup}; --command {PROGRAM.warmup} launches)",
                  f"(default {KERNEL.timeout:g}; --command {PROGRAM.timeout:g})",
                  "even short of --min-time", "given alone, it lifts the default --max-repeats",
                  "--seed INTEGER Seed", "--launcher [srun|mpiexec] What starts the ranks"):
        assert words in text, words
    assert "Measure at least this long" not in text  # the repeat cap won over it


def test_a_min_time_given_alone_lifts_the_cap_and_a_given_cap_stays():
    assert sweep_settings({"min_time": 2}).max_repeats == UNCAPPED  # a TOML integer too
    assert sweep_settings({"min_time": 2.0, "max_repeats": 5}).max_repeats == 5
    assert sweep_settings({"min_time": 0.0}).max_repeats == KERNEL.max_repeats  # no time asked
    assert sweep_settings({}).max_repeats == KERNEL.max_repeats
    assert not lifts_cap(None, None) and not lifts_cap(1.0, 3) and lifts_cap(0.5, None)
