"""The telemetry attribute naming a program sweep's input stamps (JSON: path -> [bytes, mtime,
sha256 or ""]): written by the sweep (:mod:`hpcds1mpi.measure.input_stamps`), read onto the
training rows (:mod:`hpcds1mpi.records.telemetry_rows`). Here, in the records stage, so that
the rows' reader need not import the measuring stage."""

INPUTS = "inputs"
