"""recommend's question set up before System 1 scores it (what is offered)."""

from __future__ import annotations

from hpcds1mpi.decide import recommend_prepare


def test_a_program_that_cannot_use_threads_is_offered_one_thread(tmp_path):
    """s28 tester U5: ABINIT (Open MPI, no OpenMP) had 1 rank x 2 threads on recommend's front,
    the same computation as 1 x 1; the sweep and tune already said it cannot use threads."""
    from types import SimpleNamespace

    from hpcds1mpi.surrogates.measured_offer import Offer
    from tests.helpers import build_unthreaded

    exe = build_unthreaded(tmp_path)

    def offer(command):
        levels = SimpleNamespace(external=True, command=command, workload="serial")
        return Offer(threads=[1, 2], levels=levels)

    plain = offer(f"{exe} {{size}}")
    recommend_prepare._one_thread_if_unthreaded(plain, None)
    assert plain.threads == [1] and not plain.uses_threads
    assert plain.left_out == ["threads = 1 only: serial links no OpenMP runtime nor threaded "
                              "BLAS and its command has no {threads}"]
    told = offer(f"{exe} {{size}} --threads {{threads}}")  # the program takes its count
    recommend_prepare._one_thread_if_unthreaded(told, None)
    assert told.threads == [1, 2] and told.left_out == []
    named = offer(f"{exe} {{size}} log-{{threads}}.txt")  # s48: a name, no count given
    recommend_prepare._one_thread_if_unthreaded(named, None)
    assert named.threads == [1] and named.left_out == [
        "threads = 1 only: serial links no OpenMP runtime nor threaded BLAS and its command "
        "has no {threads} giving its thread count (in log-{threads}.txt it is part of a name)"]
