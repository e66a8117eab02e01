"""The lines ``hpcds1mpi tune`` ends with: the answer, the front, where every run is.

Values are said as what they are: the runtime and energy measured by this session's runs, an
energy *modelled* where no meter was read (the row's ``energy_source``), the noise measured or
the floor assumed (:attr:`~hpcds1mpi.decide.system2.TuneResult.noise_said`), runs the
telemetry file already held as reused, not made.
"""

from __future__ import annotations

import os

from hpcds1mpi.config import MIN_OK_RUNS


def energy_unit(source: str) -> str:
    """"J", or "J modelled" when the energy was not read from a meter."""
    return "J modelled" if "modelled" in (source or "") else "J"


def report_lines(result, out: str, objective: str, other_model: str = "",
                 model_dir: str | None = None) -> tuple[list[str], bool]:
    """(the lines to print, whether the tune found an answer). ``other_model``: the --model
    set aside as of other hardware ("" when none was); ``model_dir``: the --model its runs
    may be learnt into (None: none was given, DIR stands for it).

    Paths in the suggested commands are quoted to paste as one word each (s39 tester D5:
    `learn --model DIR --telemetry tune 2's.h5` left bash waiting for a quote), and shown in
    the prose as one line.

    A tune with no successful run names ``out`` only when the file exists (every launch may
    have failed before writing it).
    """
    from hpcds1mpi.runtime.message_paths import shell_word, shown_path

    shown, word = shown_path(out), shell_word(out)
    made = f"{result.runs} run(s)" + (f" and {result.reused} stored in {shown} (not run again)"
                                      if result.reused else "")
    if result.best is None:
        where = f"see {shown}" if os.path.exists(out) else "nothing was recorded"
        return [f"no configuration ran successfully in {made}; {where}"], False
    first = result.trials[0]
    unit = energy_unit(result.energy_source) if objective == "energy" else "s"
    how = "" if unit.endswith("modelled") else " measured"
    # A start that failed has no value: said as failed, not "nan s" (s39 tester B5).
    began = f"{first.value:.4g} {unit}" if first.status == "ok" and first.value == first.value \
        else first.status
    lines = [f"best: {result.best.label()}  {result.best_value:.4g} {unit}{how} "
             f"(start {first.config.label()} {began}) after {made}; "
             f"{result.stop_reason}"]
    if result.note:
        lines.append(result.note)
    joules = energy_unit(result.energy_source)
    lines += [f"  front: {point['label']}  {point['runtime_s']:.4g} s  "
              f"{point['energy_j']:.4g} {joules}" for point in result.front]
    ok_runs = sum(1 for t in result.trials if t.status == "ok")
    if other_model:  # learn refuses another machine's runs (s30 tester L: told, then refused)
        train = f"`hpcds1mpi train --telemetry {word} --out DIR`"
        then = (f"and a model of this machine needs at least {MIN_OK_RUNS} ok runs ({ok_runs} "
                f"here): tune again into {shown} with a larger --budget, or sweep this machine, "
                f"then {train}" if ok_runs < MIN_OK_RUNS  # train refuses so few (s38 tester F8)
                else f"so make a model of this machine: {train}")
        lines.append(f"every run is in {shown}; {shown_path(other_model)} is of other "
                     f"hardware, {then}")
    else:
        model = shell_word(model_dir) if model_dir else "DIR"
        lines.append(f"every run is in {shown}; add them to the model with "
                     f"`hpcds1mpi learn --model {model} --telemetry {word}`")
    return lines, True
