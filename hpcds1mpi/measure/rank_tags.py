"""The rank tag before a line of a parallel program's output, and the trailers under its errors.

Many parallel programs tag each line a rank writes with that rank: OpenFOAM's ``[0] --> FOAM
FATAL ERROR:``, PETSc's ``[0]PETSC ERROR:``, Global Arrays' ``[0] ARMCI Error:``, and Open
MPI's ``mpirun --tag-output`` writes ``[1,0]<stderr>:``. Read as part of the message, the tags
made a reason of ``[0] --> FOAM FATAL ERROR: [0] number of processor directories = 2 is not
equal to the number of processors = 4 [0] FOAM parallel run exiting [0]`` (s29 tester A5):
:func:`untagged` gives the line as the program wrote it, a line of a bare tag a blank line
(which ends a paragraph, as it does untagged).
"""

from __future__ import annotations

import re

#: A rank's tag at the start of a line: "[0] ", "[12]" (PETSc's "[0]PETSC ERROR:" keeps its
#: label), Open MPI's --tag-output "[1,0]<stderr>: " (job, rank), srun -l's "1: " (s30 V2
#: D4: "1: Error: none" had been read as an error line). Not Open MPI's own log lines'
#: "[host:pid]" nor a backtrace's "[ 0]" frame.
RANK_TAG = re.compile(r"^\[\d+\]\s*|^\[\d+,\d+\]<std(?:out|err)>:\s*|^\d+: ")
#: Lines a program writes under every error of its, whatever it was: OpenFOAM's "FOAM
#: exiting", "FOAM aborting" and "FOAM parallel run exiting" / "... aborting".
ERROR_TRAILER = re.compile(r"^FOAM (?:parallel run )?(?:exiting|aborting)$")
#: A line that only says the line above it is an error: OpenFOAM's "For debug level (= 2) > 1
#: this is considered fatal" under "fileName::stripInvalid() called for invalid fileName ...";
#: read alone it was the reason, what was wrong dropped (s29 V1-3).
FATAL_TRAILER = re.compile(r"\bconsidered (?:as )?fatal[.!]?$", re.IGNORECASE)


def untagged(line: str) -> str:
    """``line`` (stripped) without its rank tag."""
    return RANK_TAG.sub("", line, count=1).strip()
