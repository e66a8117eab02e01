"""Open MPI's help text: its first paragraph as what happened (real captured boxes)."""

from __future__ import annotations

from hpcds1mpi.launch.help_text import TITLE_CHARS, help_titles, launcher_says, launcher_text
from tests.measure.test_program_launch import OUTPUTS

RULE = "-" * 74


def test_a_help_texts_title_is_its_first_paragraph_joined():
    """Was (s29 tester A5): "Your job has requested more processes than the ppr for", its
    first line, cut mid-sentence."""
    stderr = (OUTPUTS / "openmpi-ppr-too-many.stderr").read_text()
    assert help_titles(stderr) == ["Your job has requested more processes than the ppr for "
                                   "this topology can support: App: true Number of procs:  2 "
                                   "PPR: 1:node"]


def test_a_title_ending_in_a_colon_keeps_the_detail_it_introduces():
    """s36 tester E6: Open MPI under a read-only TMPDIR said "...unable to create the desired
    directory:" and stopped: the folder and the error were in the next paragraph. A longer
    paragraph after the colon is advice, not kept."""
    box = (f"{RULE}\nA call to mkdir was unable to create the desired directory:\n\n"
           "  Directory: /tmp/ro/ompi.vm.0\n  Error:     Read-only file system\n\n"
           f"Please check to ensure you have adequate permissions to perform\nthe desired "
           f"operation.\n{RULE}\n")
    assert help_titles(box) == ["A call to mkdir was unable to create the desired directory: "
                                "Directory: /tmp/ro/ompi.vm.0 Error:     Read-only file system"]
    long = f"{RULE}\nTitle:\n\n" + "".join(f"line {i}\n" for i in range(6)) + f"\n{RULE}\n"
    assert help_titles(long) == ["Title:"]


def test_a_long_first_paragraph_is_cut():
    words = " ".join(["word"] * 200)
    (title,) = help_titles(f"{RULE}\n\n{words}\n\nadvice\n{RULE}\n")
    assert len(title) == TITLE_CHARS and title.endswith("...") and "advice" not in title


def test_a_launchers_failure_is_its_help_title_else_its_last_line_that_is_no_rule():
    """Was (s29 tester A5): the probe's "(exit 1: -----...)", the help text's closing rule."""
    root = (OUTPUTS / "openmpi-run-as-root.stderr").read_text()
    assert launcher_says(root) == "mpirun.openmpi has detected an attempt to run as root."
    assert launcher_says("bad option --x\n=====\n\n") == "bad option --x"
    assert launcher_says(f"{RULE}\n{RULE}\n") == ""


def test_hydras_error_stack_is_said_by_its_cause_not_its_last_line():
    """s36 tester M5: hydra prints its stack cause first; its last line says nothing."""
    stack = ("[mpiexec@vm] HYDU_create_process (utils/launch/launch.c:73): execvp error on file "
             "/m/broken/hydra_pmi_proxy (No such file or directory)\n"
             "[mpiexec@vm] HYD_pmcd_pmiserv_proxy_init_cb (pm/pmiserv/pmiserv_cb.c:446): "
             "assert (!closed) failed\n"
             "[mpiexec@vm] main (ui/mpich/mpiexec.c:325): process manager error waiting for "
             "completion\n")
    assert launcher_says(stack) == ("[mpiexec@vm] execvp error on file /m/broken/hydra_pmi_proxy"
                                    " (No such file or directory)")
    assert launcher_says("plain failure\nlast words\n") == "last words"


def test_launcher_text_is_utf8_without_nuls():
    """One rule for a launcher's output, the sweep's and the probes' (s40 review G1)."""
    assert launcher_text(b"rank 1 failed\n\0\0") == "rank 1 failed\n"
    assert launcher_text("a\0b") == "ab" and launcher_text(None) == ""
    assert launcher_text(b"bad \xff byte\0") == "bad \ufffd byte"
    assert launcher_says(launcher_text(b"some error line\n\0")) == "some error line"
