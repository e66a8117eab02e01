"""One validation layer: every boundary where outside data enters the tool has one schema here.

Boundaries, one module each: cluster TOML (:mod:`.cluster`), sweep-plan TOML (:mod:`.plan`),
the bundle manifest (:mod:`.manifest`), telemetry file attributes (:mod:`.telemetry`), job
tables from ingest (:mod:`.jobs`, checked column by column, vectorised) and the commands'
numbers (:mod:`.numbers`: click parameter types). The bounds they share: :mod:`.limits`.
:func:`.base.validate` is the one helper that turns a schema's verdict into the project's
one-line error: the file, the key path, what is wrong and what to do.

Why pydantic (v2, already a dependency): typed models read like the file formats they check;
strict mode refuses what Python would coerce (``valid_only = "no"`` is not ``True``, ``4.5``
is not a node count, ``true`` is not a number); ``allow_inf_nan=False`` refuses NaN and
infinities; ``extra="forbid"`` refuses unknown keys; and every error carries its location
(``clusters.a.partitions.cpu.memory_gb``), so a message names the key without hand-written
bookkeeping. Its core is compiled, so validating a file costs microseconds. Considered:
attrs + cattrs (good typed classes, but strictness, finite floats and error locations have to
be assembled by hand through converters) and jsonschema (validates dicts against a JSON
document, but gives no typed result, and its messages name schema paths rather than keys).
Job tables are not validated row by row through pydantic (300k rows): :mod:`.jobs` checks
each column with numpy masks and counts the bad rows per reason.

Stage: core. Modules here import only :mod:`hpcds1mpi.errors` and :mod:`hpcds1mpi.config`;
pydantic is imported by the schema modules, so callers on the ``--help`` / ``recommend`` path
import them inside the functions that need them. This ``__init__`` imports nothing.
"""
