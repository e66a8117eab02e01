"""Whether the folder of a job's output file (``--job-output``) is there.

Neither ``sbatch`` nor ``qsub`` creates it: a Slurm job whose ``--output`` names a missing
folder fails at once (FAILED 0:53) and writes its output nowhere, so the user sees nothing
(s46 tester J3). The tool already checks the program's folder and inputs; the output's
folder is said the same way, before the script is submitted.
"""

from __future__ import annotations

import os
import shlex


def missing_output_folder(output: str | None, scheduler: str) -> str:
    """The one warning line where ``output``'s folder does not exist ("" for none): a
    relative one is taken from this folder, where the script is submitted from. A folder
    with a Slurm pattern (``%j``) cannot be looked for: nothing is said."""
    folder = os.path.dirname(output or "")
    if not folder or "%" in folder or os.path.isdir(folder):
        return ""
    where = "" if os.path.isabs(folder) else " here (the folder you submit from)"
    fails = ("Slurm does not create it: the job fails with no output" if scheduler == "slurm"
             else "PBS does not create it: the job's output is not delivered there")
    return (f"warning: --job-output {output}: its folder {folder!r} does not exist{where}; "
            f"{fails}; create it before you submit: mkdir -p {shlex.quote(folder)}")
