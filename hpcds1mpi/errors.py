"""One error hierarchy for the whole tool.

Every error a user can cause derives from :class:`HpcdsError`. The CLI turns these into a
one-line message and a non-zero exit; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class HpcdsError(Exception):
    """Base of every user-facing error. ``exit_code`` is what the CLI exits with."""

    exit_code = 2


class ConfigError(HpcdsError):
    """A configuration (nodes, ranks, threads, device, precision) or a plan is invalid."""


class ClusterFileError(ConfigError):
    """A cluster TOML file is missing, malformed, or has a bad key/value."""


class UnknownKernelError(ConfigError):
    """A kernel name that no registered kernel answers to."""


class UnsupportedError(ConfigError):
    """The kernel cannot run this configuration (precision, device, missing library)."""


class LaunchError(HpcdsError):
    """No launcher (mpiexec/srun) could be found or the launch itself failed."""


class SchedulerError(HpcdsError):
    """A scheduler command (sbatch, qsub, scontrol) is missing or refused the job."""


class TelemetryError(HpcdsError):
    """A telemetry file is unreadable, of the wrong kind, or has the wrong schema."""


class LockError(TelemetryError):
    """Another process holds the telemetry file open for writing."""


class IngestError(HpcdsError):
    """A job log is of the wrong kind or cannot be parsed at all."""


class ModelError(HpcdsError):
    """A model bundle is missing, incompatible, or cannot answer this input."""


class DataError(HpcdsError):
    """Training data is empty, all-failed, NaN-filled, or has unexpected columns."""


class ResultMismatch(HpcdsError):
    """A kernel's answer differs from the fp64 serial reference beyond its tolerance."""
