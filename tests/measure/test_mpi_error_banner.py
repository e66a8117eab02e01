"""Open MPI's error-handler banner read as one message."""

from __future__ import annotations

from pathlib import Path

from hpcds1mpi.measure.mpi_error_banner import banner_messages
from hpcds1mpi.measure.program_lines import kept_lines

#: Real program outputs (tests/data/program_outputs/README.md says how each was captured).
OUTPUTS = Path(__file__).parent.parent / "data" / "program_outputs"
WIN_CREATE = "An error occurred in MPI_Win_create: MPI_ERR_WIN: invalid window"


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines()]


def test_a_real_banner_is_one_message_at_its_first_line():
    """Was (s32 tester X4): every line a "[host:pid]" log line or boilerplate; the reason was
    its last, "[vm:26902] ***    and potentially your MPI job)"."""
    lines = _lines((OUTPUTS / "opencoarrays-win-create-no-osc.stderr").read_text())
    [banner] = banner_messages(lines)
    assert (banner.first, banner.message) == (0, WIN_CREATE)
    assert banner.lines == frozenset(range(6))
    assert [ln for ln in kept_lines("\n".join(lines)) if ln] == [WIN_CREATE]


def test_interleaved_banners_of_two_ranks_are_kept_apart():
    one = ["*** An error occurred in MPI_Send", "*** reported by process [1,0]",
           "*** on communicator MPI_COMM_WORLD", "*** MPI_ERR_RANK: invalid rank",
           "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
           "***    and potentially your MPI job)"]
    two = [ln.replace("MPI_Send", "MPI_Recv").replace("MPI_ERR_RANK: invalid rank",
                                                      "MPI_ERR_TAG: invalid tag") for ln in one]
    lines = [f"[n{k}:{k}0] {ln}" for a, b in zip(one, two) for k, ln in ((1, a), (2, b))]
    assert [(b.first, b.message) for b in banner_messages(lines)] == [
        (0, "An error occurred in MPI_Send: MPI_ERR_RANK: invalid rank"),
        (1, "An error occurred in MPI_Recv: MPI_ERR_TAG: invalid tag")]


def test_a_banner_that_names_no_error_gives_none_and_a_call_outside_mpi_its_line():
    # an aborted MPI_Init: its help text says why (s30 tester L2)
    assert banner_messages(_lines("""\
*** An error occurred in MPI_Init_thread
*** on a NULL communicator
*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
***    and potentially your MPI job)
""")) == []
    [after] = banner_messages(_lines("""\
[vm:123] *** The MPI_Comm_rank() function was called after MPI_FINALIZE was invoked.
[vm:123] *** This is disallowed by the MPI standard.
[vm:123] *** Your MPI job will now abort.
"""))
    assert after.message == ("The MPI_Comm_rank() function was called after MPI_FINALIZE "
                             "was invoked.") and after.lines == frozenset({0, 1, 2})
    # glibc's / Open MPI's signal report is no error-handler banner
    assert banner_messages(["[vm:1] *** Process received signal ***",
                            "[vm:1] Signal: Segmentation fault (11)",
                            "[vm:1] *** End of error message ***"]) == []
