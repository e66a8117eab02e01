"""Job-log ingestion: Slurm ``sacct`` output, Standard Workload Format logs, PM100 / Adastra
parquet tables and the NREL Eagle / CINECA Eurora CSV -> one job table.

Readers, one per kind, each return one row per job with the columns of :data:`JOB_COLUMNS`.
Names follow the runs table (docs/architecture.md) where the meaning is the same: ``workload``
(job name), ``nodes``, ``ranks`` (tasks), ``ranks_per_node``, ``threads`` (CPUs per task),
``gpus``, ``runtime_s``, ``status``, ``energy_j``, ``avg_power_w``, ``energy_source``,
``partition``, ``peak_rss_mb``, ``cpu_s``; job-log columns come on top (``job_id``, ``user``,
times, ``time_limit_s``, ``exit_code``, ``mem_req_gb``, ``source_file``, ``source_kind``) and
what is known at submission (``account``, ``queue``, ``req_nodes``, ``req_procs``,
``req_gpus``, ``wait_s``).

Kinds:
    ``sacct-p``: ``sacct -P`` / ``-p`` output with a header, any column subset, including the
        109-column ``--format=ALL`` whose ``SubmitLine`` values may hold newlines.
    ``sacct-json``: ``sacct --json``, the 22.05 layout (``openapi/dbv0.0.38``) and the newer
        ones (``data_parser/v0.0.39+``, where numbers are ``{"set", "infinite", "number"}``).
    ``sacct-csv``: a sacct export saved as CSV (e.g. Cambridge CSD3's 16 fields).
    ``pm100``: PM100 parquet, both column-name generations.
    ``adastra``: Adastra parquet (PM100-compatible names, one average power per job).
    ``swf``: Standard Workload Format, plain or gzip / bzip2 / xz-compressed (CEA Curie, UniLu
        Gaia, ALCF Theta).
    ``eagle``: the NREL Eagle CSV (requested resources, three times, state).
    ``eurora``: the CINECA Eurora CSV; its power is the dataset authors' PREDICTION, labelled
        so in ``energy_source``.
    ``job-table``: a job table ``ingest`` wrote, read back (to merge histories); its jobs keep
        their own source.

Times are naive UTC (sacct ``-P``'s local times converted), in one format per file, between
1970 and 2261 (:mod:`.times`).

A row that cannot be read is never dropped silently: it is counted under a reason in the
file's :class:`FileReport` (a fraction in a count included: never rounded). A file of the
wrong kind raises :class:`IngestError`, and so does one whose time limits or run times cannot
be in the unit its reader takes (:mod:`.time_limits`, :mod:`.run_times`).

Modules: :mod:`.schema` (the job table's columns, the one row constructor, the file report),
:mod:`.slurm_fields` (Slurm's value formats and job states), one reader per format
(:mod:`.sacct_text`, :mod:`.sacct_json`, :mod:`.sacct_csv`, :mod:`.parquet_tables`,
:mod:`.swf`, :mod:`.eagle`, :mod:`.eurora`, :mod:`.job_tables`), :mod:`.csv_tables` (what the
CSV readers share), :mod:`.compressed` (a file's compression, read or refused),
:mod:`.time_limits` (a limit of 0 is none; a wrong unit refused), :mod:`.run_times` (a run
time checked against end - start; a wrong unit refused), :mod:`.times` (time formats,
range and zone), :mod:`.wrong_exports` (what a common wrong export is told),
:mod:`.same_jobs` (the same job in several files, kept once), :mod:`.file_zones` (files read
in different time zones, shifted onto a ``--json`` file's UTC) and :mod:`.job_logs` (kind
detection and the entry points re-exported here).
"""

from __future__ import annotations

from .job_logs import detect_kind, ingest, read_job_log, write_job_table
from .eagle import read_eagle
from .eurora import ENERGY_PREDICTED, read_eurora
from .parquet_tables import read_job_parquet
from .sacct_csv import read_sacct_csv
from .sacct_json import read_sacct_json
from .sacct_text import read_sacct_parsable
from .schema import JOB_COLUMNS, KINDS, FileReport, job_row, normalise
from .swf import read_swf
from .slurm_fields import (SLURM_STATUS, gpus_from_tres, parse_duration, parse_exit,
                           parse_memory_bytes, parse_tres)

__all__ = ["ENERGY_PREDICTED", "FileReport", "JOB_COLUMNS", "KINDS", "SLURM_STATUS",
           "detect_kind", "gpus_from_tres", "ingest", "job_row", "normalise", "parse_duration",
           "parse_exit", "parse_memory_bytes", "parse_tres", "read_eagle", "read_eurora",
           "read_job_log", "read_job_parquet", "read_sacct_csv", "read_sacct_json",
           "read_sacct_parsable", "read_swf", "write_job_table"]
