"""What ScaLAPACK's test drivers (Debian's ``scalapack-mpi-test``) print when a size does not
fit their compiled-in workspace: no result line, exit 0. One framing for every driver —
the skipped case's lines and the summary —, each driver's own table header and refusal line,
as they print them (``xdlu`` at 1 rank; ``xdhrd`` at 1 x 1, s44 tester M3)."""

from __future__ import annotations


def _skipped(header: str, refusal: str, finished: str) -> str:
    """A driver's whole output for one case it skipped: its ``header`` (the table's two
    lines), its ``refusal`` line, and the summary (``finished``: its ``Finished`` word with
    the driver's own padding)."""
    return f"""\
{header}

{refusal}
Bad MEMORY parameters: going on to next test case.

{finished} 1 tests, with the following results:
    0 tests completed and passed residual checks.
    0 tests completed and failed residual checks.
    1 tests skipped because of illegal input values.


END OF TESTS.
"""


#: ``xdlu`` (LU) at N=700 on 1 rank: its workspace refuses it.
XDLU_TOTMEM = _skipped(
    "TIME     M     N  NB NRHS NBRHS    P    Q  LU Time Sol Time  MFLOPS  CHECK\n"
    "---- ----- ----- --- ---- ----- ---- ---- -------- -------- -------- ------",
    "Unable to perform factorization: need TOTMEM of at least    4494136", "Finished     ")
#: ``xdhrd`` (Hessenberg reduction) at N=700 on a 1 x 1 grid: its workspace refuses it.
XDHRD_TOTMEM = _skipped(
    "TIME      N    ILO    IHI  NB     P     Q  HRD Time      MFLOPS Residual  CHECK\n"
    "---- ------ ------ ------ --- ----- ----- --------- ----------- -------- ------",
    "Unable to perform Hessenberg reduction: need TOTMEM of at least    4863400",
    "Finished  ")
