"""hpcds1mpi: pick node count, ranks, threads, device and precision from measurements.

Kept import-light on purpose: ``hpcds1mpi --help`` must not pull in torch, h5py or MPI.
"""

__version__ = "0.1.0"
