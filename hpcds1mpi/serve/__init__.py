"""The recommendation service and its web console (``hpcds1mpi serve``)."""
