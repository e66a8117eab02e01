"""hpcds1mpi: pick node count, ranks, threads, device and precision from measurements.

Kept import-light on purpose: ``hpcds1mpi --help`` must not pull in torch, h5py or MPI.
"""

from pathlib import Path

__version__ = "0.1.0"

#: The model bundle shipped with the package (``recommend`` without ``--model`` uses it).
SHIPPED_MODEL = Path(__file__).resolve().parent / "data" / "default_model"
