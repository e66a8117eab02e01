"""A reading's regex that matched nothing: the line nearest it, not the program's last line."""

from __future__ import annotations

from hpcds1mpi.measure.regex_miss import nearest_line, pattern_words, program_reason
from hpcds1mpi.measure.readings import Readings

#: The end of MrBayes 3.2.7a's output (Debian's mrbayes-mpi, `mcmc ngen=2000`): a run under
#: a second says "less than 1 second", and the last line is its closing banner.
MRBAYES_END = """\
      Average standard deviation of split frequencies: 0.089688

      Analysis completed in less than 1 second
      Analysis used 0.14 seconds of CPU time
      Likelihood of best state for "cold" chain of run 1 was -1877.04
      Likelihood of best state for "cold" chain of run 2 was -1876.39

      Deleting previously defined characters
      Deleting previously defined taxa
   Quitting program


   Tasks completed, exiting program because mode is noninteractive
   To return control to the command line after completion of file processing, 
   set mode to interactive with 'mb -i <filename>' (i is for interactive)
   or use 'set mode=interactive'
"""
COMPLETED = r"Analysis completed in (\d+) seconds?"


def test_a_patterns_words_leave_out_escapes_classes_and_optional_letters():
    assert pattern_words(COMPLETED) == ["analysis", "completed", "second"]
    assert pattern_words(r"(?P<t>[0-9.eE+-]+)\s*s\b|TIME=(\S+)") == ["time"]


def test_the_nearest_line_holds_most_of_the_regexs_words():
    assert nearest_line(COMPLETED, MRBAYES_END, "") == "Analysis completed in less than 1 second"
    assert nearest_line(r"Wall: ([0-9.]+)", MRBAYES_END, "") == ""  # none of its words


def test_a_time_regex_that_matched_nothing_names_the_line_it_missed_not_the_banner():
    """s35 tester A4: "matched no number in its output; the program said: or use 'set
    mode=interactive'", MrBayes's closing banner, as if it were the reason."""
    readings = Readings.of(time_regex=COMPLETED)
    assert readings.time_problem(readings.read(MRBAYES_END, ""), 0.33) == (
        "exit 0, but --time-regex 'Analysis completed in (\\d+) seconds?' matched no number in "
        "its output (the line nearest it: 'Analysis completed in less than 1 second')")


def test_the_programs_last_line_is_its_reason_only_with_an_error_word():
    assert program_reason("or use 'set mode=interactive'", MRBAYES_END) == ""
    failed = "step 3\nconvergence NOT achieved after 2 iterations\n"
    assert program_reason("convergence NOT achieved after 2 iterations", failed) != ""
    assert program_reason("warning: bad input", "done\n") == "warning: bad input"  # stderr's


#: Debian's /usr/bin/cmsearch wrapper on a CPU without SSE2 (its text, exit 0).
CMSEARCH_NO_SSE2 = """\
To run cmsearch from infernal package your proccessor needs SSE2 which is not
available on this machine.
 ... Exiting
"""


def test_a_time_regex_miss_quotes_the_programs_refusal_closing_its_output():
    """s47 tester L5: the wrapper's refusal (exit 0) was reported as the regex's miss alone."""
    readings = Readings.of(time_regex=r"Elapsed: (\S+)")
    assert readings.time_problem(readings.read(CMSEARCH_NO_SSE2, ""), 0.05) == (
        "exit 0, but --time-regex 'Elapsed: (\\S+)' matched no number in its output; the "
        "program said: To run cmsearch from infernal package your proccessor needs SSE2 which "
        "is not available on this machine. ... Exiting")
    # a closing stop with no cause, or a cause with no stop: no reason, as before
    for stdout in ("step 1\nDone, exiting\n", "result 3\n0 errors\nexiting\n",
                   "AVX2 not supported\nresult 3\n"):
        assert program_reason(stdout.splitlines()[-1], stdout) == "", stdout
    assert program_reason("or use 'set mode=interactive'", MRBAYES_END) == ""
