"""One error hierarchy for the whole tool.

Every error a user can cause derives from :class:`HpcdsError`. The CLI turns these into a
one-line message and a non-zero exit; anything else is a bug and keeps its traceback.

Exit codes (``exit_code`` per class; the CLI exits with it):

- **2, usage**: the user's input is wrong and rerunning it unchanged fails the same way: a bad
  option value, type or range; a file the user named that is missing, of the wrong kind or
  with bad content (cluster or plan TOML, telemetry, job log, bundle, training data); an
  output path that cannot be used (missing or read-only directory, a directory given for a
  file). Classes: :class:`ConfigError` (and :class:`ClusterFileError`,
  :class:`UnknownKernelError`, :class:`UnsupportedError`), :class:`TelemetryError`,
  :class:`IngestError`, :class:`ModelError`, :class:`DataError`, :class:`OutputError`.
  click's own usage errors (unknown option, value not an int) also exit 2.
- **1, runtime failure**: the input was fine but running it failed, and a rerun may succeed:
  a launch that failed or found no launcher, a scheduler that refused the job, a lock held by
  another writer, the disk full while writing, a sweep interrupted (SIGINT/SIGTERM, a rank that
  left), a kernel whose answer is wrong. Classes: :class:`RuntimeFailure` and its children
  :class:`LaunchError`, :class:`SchedulerError`, :class:`LockError`, :class:`WriteError`,
  :class:`SweepInterrupted`, :class:`ResultMismatch`.
- 130: interrupted by Ctrl-C before a command could say more (click's Abort, KeyboardInterrupt).

:class:`HpcdsError` itself is a usage error (2); raise a :class:`RuntimeFailure` for anything
that went wrong while running.
"""

from __future__ import annotations

#: Exit code of a usage error (bad option value, bad file content the user named).
USAGE = 2
#: Exit code of a runtime failure (launch failed, disk full, lock held, sweep interrupted).
RUNTIME = 1


class HpcdsError(Exception):
    """Base of every user-facing error. ``exit_code`` is what the CLI exits with."""

    exit_code = USAGE


class RuntimeFailure(HpcdsError):
    """The input was valid but running it failed (exit 1); a rerun may succeed."""

    exit_code = RUNTIME


class ConfigError(HpcdsError):
    """A configuration (nodes, ranks, threads, device, precision) or a plan is invalid."""


class ClusterFileError(ConfigError):
    """A cluster TOML file is missing, malformed, or has a bad key/value."""


class UnknownKernelError(ConfigError):
    """A kernel name that no registered kernel answers to."""


class UnsupportedError(ConfigError):
    """The kernel cannot run this configuration (precision, device, missing library)."""


class LaunchError(RuntimeFailure):
    """No launcher (mpiexec/srun) could be found or the launch itself failed."""


class SchedulerError(RuntimeFailure):
    """A scheduler command (sbatch, qsub, scontrol) is missing or refused the job."""


class SweepInterrupted(RuntimeFailure):
    """The sweep itself was stopped (signal, a rank that exited); finished runs are kept."""


class TelemetryError(HpcdsError):
    """A telemetry file is unreadable, of the wrong kind, or has the wrong schema."""


class LockError(TelemetryError):
    """Another process holds the telemetry file open for writing (runtime, exit 1)."""

    exit_code = RUNTIME


class OutputError(HpcdsError):
    """An output path the user gave cannot be written: a directory where a file is expected,
    a missing or read-only parent, or a folder that is not ours to replace."""


class WriteError(RuntimeFailure):
    """Writing an output failed part-way (disk full, I/O error); nothing partial is left."""


class IngestError(HpcdsError):
    """A job log is of the wrong kind or cannot be parsed at all."""


class NoEndedJobs(IngestError):
    """A job log read whole, none of whose jobs has ended yet (pending, running, requeued):
    among several logs it is skipped, said, not a failure of them all (s43 tester H6)."""

    def __init__(self, message: str, report=None):
        super().__init__(message)
        self.report = report  # the log's FileReport, its lines counted


class ModelError(HpcdsError):
    """A model bundle is missing, incompatible, or cannot answer this input."""


class DataError(HpcdsError):
    """Training data is empty, all-failed, NaN-filled, or has unexpected columns."""


class ResultMismatch(RuntimeFailure):
    """A kernel's answer differs from the fp64 serial reference beyond its tolerance."""
