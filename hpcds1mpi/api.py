"""The Python API: the answers of ``recommend``, ``advise`` and the model, as typed objects.

For notebooks and workflow tools (``import hpcds1mpi`` stays light; this module loads on first
use of one of its names)::

    import hpcds1mpi

    model = hpcds1mpi.load_model()               # the shipped bundle (hpcds1mpi.SHIPPED_MODEL)
    rec = model.recommend("stencil", 128, cluster="lab.toml", objective="energy")
    rec.pick.config, rec.pick.runtime_s, rec.confidence, rec.verdict
    model.predict([hpcds1mpi.Configuration(2, 2, 1)], "stencil", 128, cluster="lab.toml")
    hpcds1mpi.advise("job.sbatch", cluster="lab.toml").summary()
    hpcds1mpi.propose_walltime("jobs.parquet", "alice", time_limit_s=7200).lines()

Every runtime and energy here is a prediction of the model (System 1), never a measurement;
``energy_source`` says whether the energy it learned from was measured or modelled. A job the
model does not know gets the guard's verdict (``escalate``) and no pick. The answers' types
(:class:`Prediction`, :class:`Predictions`, :class:`Recommendation`) live in
:mod:`hpcds1mpi.api_answers` and are served from here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Union

from hpcds1mpi import SHIPPED_MODEL
from hpcds1mpi.schemas.limits import MAX_COUNT, MAX_JOULES, MAX_MEMORY_GB, MAX_SECONDS, MAX_SIZE
from hpcds1mpi.api_answers import (PREDICTED, Prediction, Predictions, Recommendation,
                                   prediction_from_scores)
from hpcds1mpi.config import DEVICES, Configuration
from hpcds1mpi.errors import ConfigError, ModelError

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition
    from hpcds1mpi.decide.advise_answer import Advice
    from hpcds1mpi.decide.walltime import WalltimeProposal
    from hpcds1mpi.launch.job_script import JobScript

#: Each argument's type and range, as ``schemas/api_args.ApiArguments`` checks them: an
#: error's "see help(hpcds1mpi.api)" points here (it pointed to help(hpcds1mpi), which shows
#: no range: s37 tester P11).
ARGUMENT_RANGES = f"""
Arguments (a wrong one is one ConfigError naming it):
    workload, partition, user, job_name: non-blank text.
    size: an integer, 1 to {MAX_SIZE:,} (2**40); ``Model.size_range`` gives the measured ones.
    max_nodes, nodes, procs: integers, 1 to {MAX_COUNT:,}.
    deadline_s, time_limit_s (and partition_limit_s in hpcds1mpi.decide.walltime): seconds,
    above 0 and at most {MAX_SECONDS:,.0f} (a year).
    energy_budget_j: joules, above 0 and at most {MAX_JOULES:.3g}.
    objective: 'time', 'energy', 'edp' or 'balanced'; device: {' or '.join(map(repr, DEVICES))}.
    coverage (quantile in hpcds1mpi.decide.walltime): from 0.5 to below 1.
    account (hpcds1mpi.decide.walltime): non-blank text; mem_req_gb (there too): GB, 0 to
    {MAX_MEMORY_GB * MAX_COUNT:.3g}.
    Integers stand for floats (deadline_s=60); numpy numbers are taken as numbers; None leaves
    an optional argument out.
"""
if __doc__:  # None under python -OO
    __doc__ += ARGUMENT_RANGES

#: Where a job may run: a cluster TOML path, a Cluster, a Partition, or None (this Slurm
#: allocation, else this machine).
ClusterLike = Union[str, os.PathLike, "Cluster", "Partition", None]


def _places(cluster: ClusterLike, partition: str | None) -> list:
    """The (cluster, partition) pairs ``cluster`` and ``partition`` allow (``allowed_places``)."""
    from hpcds1mpi.places import allowed_places

    return allowed_places(cluster, [partition] if partition is not None else ())


class Model:
    """A loaded model bundle: predictions, recommendations and advice from it.

    Attributes:
        path: the bundle's directory.
        bundle: the :class:`~hpcds1mpi.surrogates.bundle.Bundle` itself.
    """

    def __init__(self, bundle, path: Path):
        self.bundle, self.path = bundle, Path(path)
        self._guard_state = None

    def _guard(self) -> tuple:
        """The guard's (calibration, reference) for this bundle, loaded on first use."""
        if self._guard_state is None:
            from hpcds1mpi.decide import guard

            ref = guard.reference(self.bundle)
            self._guard_state = (guard.load_calibration(self.bundle, self.path, ref), ref)
        return self._guard_state

    def __repr__(self) -> str:
        return f"Model({str(self.path)!r}, workloads={self.workloads})"

    @property
    def workloads(self) -> list[str]:
        """The workloads (telemetry labels) the model was trained on."""
        return [str(w) for w in self.bundle.workloads]

    @property
    def size_range(self) -> dict[str, tuple[int, int]]:
        """Workload -> (smallest, largest) size measured, as ints as ``recommend`` takes
        them (floats, which recommend refused: s37 tester P11)."""
        def size(value) -> int | float:  # a bundle stores them as floats
            return int(value) if float(value).is_integer() else float(value)

        return {str(k): (size(v[0]), size(v[1])) for k, v in
                (self.bundle.size_range or {}).items()}

    def recommend(self, workload: str, size: int, cluster: ClusterLike = None, *,
                  partition: str | None = None, objective: str = "time",
                  max_nodes: int | None = None, deadline_s: float | None = None,
                  energy_budget_j: float | None = None, device: str | None = None,
                  program: str | os.PathLike | list[str] | None = None) -> Recommendation:
        """Recommend a configuration for ``workload`` at ``size`` (``hpcds1mpi recommend``).

        Args:
            workload / size: the problem.
            cluster / partition: where it may run (see :data:`ClusterLike`).
            objective: ``time``, ``energy``, ``edp`` or ``balanced``.
            max_nodes / deadline_s / energy_budget_j: constraints (predicted upper bounds).
            device: only ``cpu`` or only ``gpu``.
            program: the command the job runs (``recommend --program``: a command line such
                as ``"./app {size}"``, a path or a list of its arguments; None: the measured
                one). A workload that is no kernel and the model never measured gets its
                calibration sweep only with it (no command of it is known otherwise); one
                that is not a measured command makes the verdict at most ``confirm``. The
                recommendation's :meth:`~Recommendation.script` runs it unless given another.
        """
        from hpcds1mpi.places import is_this_machine
        from hpcds1mpi.decide.offer import runtime_note
        from hpcds1mpi.decide.predict_job import row_extrapolation
        from hpcds1mpi.decide.recommend import recommend
        from hpcds1mpi.decide.recommendation import TOP_ALTERNATIVES, format_time
        from hpcds1mpi.decide.run_scatter import run_scatter
        from hpcds1mpi.decide.system1 import Constraints
        from hpcds1mpi.launch.program import program_precisions
        from hpcds1mpi.schemas.api_args import api_wording, check_api_arguments, \
            program_argument

        check_api_arguments("recommend", required=("workload", "size"), workload=workload,
                            size=size, partition=partition, objective=objective,
                            max_nodes=max_nodes, deadline_s=deadline_s,
                            energy_budget_j=energy_budget_j, device=device)
        size = int(size)  # a numpy integer too
        program = program_argument(program, "recommend")
        with api_wording():  # a calibration at the precisions the program takes, as the CLI's
            rec = recommend(self.bundle, workload, size, _places(cluster, partition),
                            objective=objective, device=device, model_dir=self.path,
                            constraints=Constraints(max_nodes, deadline_s, energy_budget_j),
                            program=program, program_precisions=program_precisions(
                                program if program is None or isinstance(program, str)
                                else " ".join(program)))
        pick, alternatives, front, confidence, calibrated = None, [], [], None, False
        single_run = None
        if rec.picked is not None:
            ch = rec.picked.choice
            # Each row extrapolated as predict() says it for the same job on its own
            # partition (s37 tester P3; reviewer R7: not the pick's partition's lines).
            per_part = {pl.partition.name: row_extrapolation(
                self.bundle, workload, size, pl.partition,
                pl.verdict if pl.verdict is not None else rec.verdict)
                for pl in rec.places if not pl.rejected or pl is rec.picked}
            pick_lines = row_extrapolation(self.bundle, workload, size, rec.picked.partition,
                                           rec.verdict)

            def prediction(i) -> Prediction:
                row = ch.scores.row(i)
                lines = per_part.get(str(row.get("partition")), pick_lines)
                return prediction_from_scores(ch.scores.cols, i, lines(row))

            pick = prediction(ch.index)
            alternatives = [prediction(i) for i in ch.ranking[1:1 + TOP_ALTERNATIVES]]
            front = [prediction(i) for i in ch.front]
            confidence, calibrated = float(ch.confidence), bool(ch.calibrated)
            single_run = run_scatter(ch, format_time)  # recommend's band (s38 tester B3)
        return Recommendation(
            workload, int(size), objective, pick, confidence, calibrated, rec.verdict.verdict,
            list(rec.verdict.reasons), alternatives, front,
            [s.config for s in rec.calibration_steps],
            {pl.label: pl.rejected for pl in rec.places if pl.rejected}, rec.energy_label, rec,
            this_machine=is_this_machine(cluster), runtime=runtime_note(self.bundle, workload),
            single_run=single_run, program=program)

    def predict(self, configs: Iterable[Configuration | Mapping], workload: str, size: int,
                cluster: ClusterLike = None, *, partition: str | None = None
                ) -> Predictions:
        """System 1's predictions for the given configurations, in their order, with the
        job's ``verdict`` and ``reasons`` (:class:`Predictions`).

        Args:
            configs: :class:`~hpcds1mpi.config.Configuration` objects or dicts of their
                fields (``nodes``, ``ranks_per_node``, ``threads``, ``device``, ``precision``).
            workload / size: the problem; cluster / partition: the hardware (the first
                partition when several).

        A configuration the partition cannot run is ``valid=False`` with its ``reason`` and
        no prediction; a job the model never saw says so first in each row's
        ``extrapolated``: ``/v1/predict``'s one function, ``decide.predict_job``.
        """
        from hpcds1mpi.decide.job_verdict import recommend_verdict
        from hpcds1mpi.decide.predict_job import predict_job
        from hpcds1mpi.schemas.api_args import api_wording, check_api_arguments, \
            configurations_argument

        check_api_arguments("predict", required=("workload", "size"), workload=workload,
                            size=size, partition=partition)
        configs = configurations_argument(configs)
        with api_wording():
            place = _places(cluster, partition)[0]
            verdict, rows = predict_job(self.bundle, workload, int(size), place[1], configs,
                                        *self._guard())
            verdict = recommend_verdict(self.bundle, workload, int(size), place, verdict,
                                        model_dir=self.path)  # as /v1/predict (s31 tester Q6)
        return Predictions([Prediction(cfg, row["partition"], *(  # NaN: nothing predicted
            float("nan") if row[k] is None else row[k] for k in PREDICTED),
            feasible=row["feasible"], reason=row["reason"], valid=row["valid"],
            extrapolated=tuple(row["extrapolated"]), measured_runs=row["measured_runs"])
            for cfg, row in zip(configs, rows)],
            verdict.verdict, list(verdict.reasons))

    def advise(self, script: str | os.PathLike, *, workload: str | None = None,
               size: int | None = None, cluster: ClusterLike = None, objective: str = "time",
               job_folder: str | os.PathLike | None = None) -> "Advice":
        """Compare a batch script (text or path) with the recommendation (``hpcds1mpi
        advise``); see :func:`advise`."""
        from hpcds1mpi.decide.advise import advise as advise_text
        from hpcds1mpi.places import is_this_machine
        from hpcds1mpi.launch.sbatch_partition import from_environment
        from hpcds1mpi.launch.script_file import check_first_line, script_text
        from hpcds1mpi.schemas.api_args import api_wording, check_api_arguments

        check_api_arguments("advise", workload=workload, size=size, objective=objective)
        folder = _job_folder(job_folder)
        text, name = _script(script, script_text)
        check_first_line(text)  # text as a file is checked: sbatch refuses it (s29 tester D7)
        with api_wording():
            return advise_text(text, self.bundle, _places(cluster, None), workload=workload,
                               size=size, objective=objective, model_dir=self.path, name=name,
                               job_folder=folder, default_queue=is_this_machine(cluster),
                               sbatch_partition=from_environment())  # as the command reads it


def _job_folder(job_folder: str | os.PathLike | None) -> str:
    """The folder the job is submitted from, where advise reads its launcher and program files:
    the current folder unless given, as ``hpcds1mpi advise`` reads them (without it the API
    skipped the MPI and interpreter checks the command makes, s33 tester B5)."""
    if job_folder is None:
        return os.getcwd()
    if not isinstance(job_folder, (str, os.PathLike)) or not str(job_folder).strip():
        raise ConfigError("advise(): job_folder must be the folder the job is submitted from "
                          f"(str or Path), got {job_folder!r}")
    if not Path(job_folder).is_dir():
        raise ConfigError(f"advise(): job_folder {job_folder} is not a folder; give the folder "
                          "the job is submitted from, or leave it out for the current one")
    return os.fspath(Path(job_folder).resolve())


def _script(script: str | os.PathLike, read) -> tuple[str, str]:
    """(text, name) of a script given as text or as a path.

    A ``Path`` (any ``os.PathLike``) is a path; a ``str`` is a path when it is one line that
    does not start with ``#`` (a batch script's text has at least a directive or ``#!`` line
    and a launch line, so it is never read as a path), else it is the script's text. A path
    that does not exist or is a folder is one ConfigError saying so.
    """
    if isinstance(script, str) and ("\n" in script or script.lstrip().startswith("#")
                                    or not script.strip()):
        return script, "<text>"
    if not isinstance(script, (str, os.PathLike)):
        raise ConfigError(f"script must be text or a path, got {type(script).__name__}")
    return read(script), Path(script).name


def load_model(path: str | os.PathLike | None = None) -> Model:
    """Load a model bundle (None: the shipped one, :data:`hpcds1mpi.SHIPPED_MODEL`).

    A bundle is Python pickles: it runs code when loaded; load only bundles you trust. A
    bundle that another user could have changed (its folder or a file in it writable by
    everyone, or owned by someone other than you or root and writable by its group) is
    refused; its SHA-256 list catches damage, not a hostile author.

    Raises:
        hpcds1mpi.errors.ConfigError: a path of another type, or an empty one (only None
            means the shipped bundle).
        hpcds1mpi.errors.ModelError: missing, damaged or writable-by-others bundle, or a file
            (one line).
    """
    return _load_model(path, "load_model(): path")


def _load_model(path, argument: str) -> Model:
    """:func:`load_model`, its errors naming ``argument`` (``"advise(): model"``)."""
    from hpcds1mpi.decide.model_bundle import load_model as load

    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"{argument} must be a bundle directory (str or Path) or "
                          f"None for the shipped one, got {type(path).__name__}")
    if path is not None and not str(path).strip():  # "" loaded the shipped one (s37 tester P5)
        raise ConfigError(f"{argument} is empty, got {path!r}; give a bundle directory, or "
                          "None for the shipped one (an unset environment variable?)")
    if path is not None and Path(path).is_file():  # "not found" misled (s37 tester P5)
        raise ModelError(f"model bundle {path} is a file, not a bundle folder; give the "
                         "directory of a trained bundle (hpcds1mpi train --out DIR) or None "
                         "for the shipped one")
    if path is not None and not Path(path).is_dir():  # in the API's words, not --model DIR's
        raise ModelError(f"model bundle {path} not found; give the directory of a trained "
                         "bundle (hpcds1mpi train --out DIR) or None for the shipped one")
    return Model(load(path), Path(path) if path is not None else SHIPPED_MODEL)


def advise(script: str | os.PathLike, *, model: Model | str | os.PathLike | None = None,
           workload: str | None = None, size: int | None = None, cluster: ClusterLike = None,
           objective: str = "time", job_folder: str | os.PathLike | None = None) -> "Advice":
    """What a Slurm / PBS script asks for against what hpcds1mpi recommends.

    Args:
        script: the script's text, or a path to it (a ``Path``, or a one-line string that
            does not start with ``#``; a missing path or a folder is a ConfigError).
        model: the model: a :class:`Model` from :func:`load_model`, a bundle directory
            (``str`` or ``Path``) or None for the shipped one.
        workload / size: override what is read from the script.
        cluster: where it runs (see :data:`ClusterLike`).
        objective: ``time``, ``energy``, ``edp`` or ``balanced``.
        job_folder: the folder the job is submitted from, where the script's launcher and
            program files are read for the MPI checks (None: the current folder, as
            ``hpcds1mpi advise``; the script's own ``--chdir`` still applies).

    Returns:
        an :class:`~hpcds1mpi.decide.advise_answer.Advice`: ``asked`` / ``recommended`` layouts with
        predictions, ``verdict``, ``changes`` and ``rewritten`` (the script with the
        recommended layout), ``summary()`` and ``to_dict()``.
    """
    return _model(model, "advise").advise(script, workload=workload, size=size,
                                           cluster=cluster, objective=objective,
                                           job_folder=job_folder)


def _model(model, function: str) -> Model:
    """``model`` as a :class:`Model`: None is the shipped bundle and a bundle directory (a
    ``str`` or ``Path``, as ``load_model`` and ``--model DIR`` take) is loaded; anything else
    is one ConfigError (it was an AttributeError)."""
    if model is None or isinstance(model, (str, os.PathLike)):
        return _load_model(model, f"{function}(): model")
    if not isinstance(model, Model):
        raise ConfigError(f"{function}(): model must be a Model from load_model(), a bundle "
                          f"directory (str or Path) or None for the shipped one, got "
                          f"{type(model).__name__}")
    return model


def read_script(script: str | os.PathLike) -> "JobScript":
    """Read a batch script (text or path): directives, launch line, what it asks for."""
    from hpcds1mpi.launch.script_file import script_text
    from hpcds1mpi.launch.script_reading import read_script as read

    return read(_script(script, script_text)[0])


def propose_walltime(history, user: str, *, job_name: str | None = None,
                     partition: str | None = None, nodes: int | None = None,
                     procs: int | None = None, time_limit_s: float | None = None,
                     coverage: float = 0.95) -> "WalltimeProposal":
    """The ``--time`` to request for a job, from the user's finished jobs in ``history``
    (``recommend --history``): a calibrated upper quantile of its run time, capped at
    ``time_limit_s``, with the share it covered of the history's newest jobs, the ones its
    choice was made on (the choice's score, not a check on other jobs).

    Args:
        history: a job table (DataFrame from :mod:`hpcds1mpi.records.ingest`), or a path to
            one written by ``hpcds1mpi ingest`` or to any job log ``ingest`` reads; either is
            checked as ``recommend --history`` checks a table (rows with absurd or
            out-of-order times, and copies of a job, dropped: said in one ``UserWarning``).
        user: whose job it is.
        job_name / partition / nodes / procs: what the job asks for (narrow its history).
        time_limit_s: the user's own request (the proposal never exceeds it).
        coverage: the share of jobs like it the walltime is meant to cover.

    Returns:
        a :class:`~hpcds1mpi.decide.walltime.WalltimeProposal` (``time_s`` None and a
        ``reason`` when the user has no history to propose from); ``lines()``, ``to_dict()``.

    Raises:
        ConfigError: a wrong argument. IngestError / DataError: a history that cannot be
            read, names no user, or keeps no job.
    """
    from hpcds1mpi.decide.walltime import dropped_jobs_said
    from hpcds1mpi.decide.walltime import propose_walltime as propose
    from hpcds1mpi.schemas.api_args import check_api_arguments

    check_api_arguments("propose_walltime", required=("user",), user=user, job_name=job_name,
                        partition=partition, nodes=nodes, procs=procs,
                        time_limit_s=time_limit_s, coverage=coverage)
    notes: list[str] = []
    if isinstance(history, (str, os.PathLike)):
        from hpcds1mpi.records.ingest.job_logs import read_job_table

        history = read_job_table(history, what="history", notes=notes)
    elif not hasattr(history, "columns"):
        raise ConfigError(f"propose_walltime(): history must be a job table (DataFrame) or a "
                          f"path to one, got {type(history).__name__}")
    else:  # a frame gets a file's row checks (s39 tester C8: a pandas traceback, or used as is)
        from hpcds1mpi.records.ingest.table_rows import frame_history

        history, report = frame_history(history)
        notes = report.lines()
    said = dropped_jobs_said(notes)
    if said:  # as recommend --history says them on stderr
        import warnings

        warnings.warn(f"propose_walltime(): {'; '.join(said)}", UserWarning, stacklevel=2)
    return propose(history, user, workload=job_name, account=None, partition=partition,
                   nodes=nodes, procs=procs, time_limit_s=time_limit_s, submit_time=None,
                   quantile=coverage)


def configurations(cluster: ClusterLike = None, *, partition: str | None = None,
                   workload: str | None = None, max_nodes: int | None = None
                   ) -> list[Configuration]:
    """Every valid configuration of a partition (the space a sweep plan or ``recommend``
    covers), narrowed to what ``workload`` supports when it is a kernel."""
    from hpcds1mpi.config import enumerate_configs, powers_up_to
    from hpcds1mpi.kernels import offered
    from hpcds1mpi.schemas.api_args import check_api_arguments

    check_api_arguments("configurations", partition=partition, workload=workload,
                        max_nodes=max_nodes)
    _, part = _places(cluster, partition)[0]
    uses_threads, precisions, devices = offered(workload, part)
    nodes = powers_up_to(min(max_nodes, part.max_nodes)) if max_nodes else None
    return list(enumerate_configs(part, nodes=nodes, devices=devices, precisions=precisions,
                                  uses_threads=uses_threads))


__all__ = ["ClusterLike", "Configuration", "Model", "Prediction", "Predictions", "Recommendation",
           "advise", "configurations", "load_model", "propose_walltime", "read_script"]
