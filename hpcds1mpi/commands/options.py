"""Shim, to be deleted: the commands' number types are :mod:`hpcds1mpi.schemas.numbers` (one
module). Kept only while a committed command still imports these names (tune.py's switch to
schemas.numbers sits uncommitted in its owner's working copy)."""

from __future__ import annotations

from hpcds1mpi.schemas.limits import MAX_COUNT, MAX_SECONDS, MAX_SIZE
from hpcds1mpi.schemas.numbers import COUNT, COUNT0, SECONDS, SEED, SIZE, BoundedFloat
from hpcds1mpi.schemas.numbers import FRACTION as RATE

#: A fraction in [0, 1] (tune's noise floor).
FRACTION = BoundedFloat(0.0, 1.0, "relative noise")

__all__ = ["COUNT", "COUNT0", "FRACTION", "MAX_COUNT", "MAX_SECONDS", "MAX_SIZE", "RATE",
           "SECONDS", "SEED", "SIZE"]
