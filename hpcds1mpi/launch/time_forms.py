"""The time values a scheduler takes as a job's time limit, checked as it checks them.

``sbatch`` refuses a ``--time`` it cannot parse ("Invalid --time specification") and ``qsub``
a walltime likewise; a script reader that noted "cannot read time 'Partition_Limit'; ignored"
and went on advised a script that never runs (s35 tester T8). Slurm's rule is
``_is_valid_timespec`` of ``src/common/parse_time.c``, held against sbatch 22.05 on the test
Slurm (``tests/slurm/test_script_reading.py``).
"""

from __future__ import annotations

import re

#: The forms sbatch takes, as a refusal names them.
SLURM_FORMS = ("minutes (90), MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or UNLIMITED for "
               "the partition's limit")
#: The forms qsub takes for a walltime (PBS Pro's ``[[HH:]MM:]SS``, Torque's days first).
PBS_FORMS = "seconds (3600), MM:SS or HH:MM:SS (hours may pass 24, e.g. 100:00:00)"
#: The words sbatch reads as no limit (case aside), beside any time that adds up to zero.
SLURM_NO_LIMIT = ("-1", "INFINITE", "UNLIMITED")


def slurm_time_accepted(value: str) -> bool:
    """Whether sbatch takes ``value`` as a ``--time`` (``-t``), as ``time_str2secs`` checks
    it: ``-1`` / INFINITE / UNLIMITED, else ASCII digits with at most one ``-`` (before any
    ``:``) and two ``:``, and enough digit groups around them (``2-`` and ``0:0`` pass;
    ``1:2:3:4``, ``1.5``, ``5:`` and ``-1:30`` do not)."""
    if value.upper() in SLURM_NO_LIMIT:
        return True
    if not value or re.search(r"[^0-9:-]", value):
        return False
    dashes, colons = value.count("-"), value.count(":")
    if dashes > 1 or colons > 2 or (dashes and ":" in value.split("-")[0]):
        return False
    groups = len(re.findall(r"[0-9]+", value))
    if colons:  # each field of a colon form written: 1:30, 2-1:30 (1:, -1:30 are not)
        return groups >= colons + dashes + 1
    return groups > 0


def slurm_asks_no_limit(value: str) -> bool:
    """Whether an accepted ``--time`` asks for no limit: the words, or a time of zero
    (``0``, ``00:00:00``, ``0-0``: sbatch gives a zero limit no limit)."""
    return value.upper() in SLURM_NO_LIMIT or (
        slurm_time_accepted(value) and not re.search(r"[1-9]", value))


def pbs_walltime_accepted(value: str) -> bool:
    """Whether qsub would take ``value`` as a walltime: ASCII digits and ``:`` (at most three,
    Torque's days field), a decimal part last; refused only where no PBS takes it
    (``1-00:00:00``, ``Partition_Limit``, an empty field of PBS Pro's ``::`` aside)."""
    return bool(re.fullmatch(r"[0-9]*(:[0-9]*){0,3}(\.[0-9]*)?", value)
                and re.search(r"[0-9]", value))
