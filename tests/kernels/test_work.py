"""Kernel registry, class contract and the analytic work models (no MPI launch).

Also unit-checks pieces of the built-in kernels' references that the MPI tests rely on: the
stencil's dependency-cone reference equals the full-grid one, inputs do not depend on the split.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hpcds1mpi.runtime import jit
from hpcds1mpi import kernels
from hpcds1mpi.errors import ConfigError, UnknownKernelError
from hpcds1mpi.kernels.base import Kernel, WorkModel, block_range

NAMES = kernels.names()
MINE = ("stencil", "cg", "fft", "nbody")
TEXT_ATTRIBUTES = ("description", "decomposition", "communication", "size_meaning", "threads_via")


# Registry -----------------------------------------------------------------------------------

def test_unknown_kernel_names_the_known_ones():
    with pytest.raises(UnknownKernelError) as info:
        kernels.get("no-such-kernel")
    message = str(info.value)
    assert "no-such-kernel" in message
    for name in NAMES:
        assert name in message


def test_names_sorted_and_get_returns_fresh_instances():
    assert NAMES == sorted(NAMES)
    for name in NAMES:
        first, second = kernels.get(name), kernels.get(name)
        assert isinstance(first, Kernel) and first is not second
        assert first.name == name


# Class contract -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_kernel_declares_the_contract(name):
    kernel = kernels.get(name)
    for attribute in TEXT_ATTRIBUTES:
        value = getattr(kernel, attribute)
        assert isinstance(value, str) and value.strip(), f"{name}.{attribute} is empty"
    assert kernel.precisions and set(kernel.precisions) <= {"fp64", "fp32", "bf16"}
    for precision in kernel.precisions:
        assert 0 <= kernel.tolerance[precision] < 1, (name, precision)
    sizes = kernel.default_sizes
    assert len(sizes) >= 8, f"{name}: {len(sizes)} default sizes"
    assert list(sizes) == sorted(set(sizes)), f"{name}: default sizes not increasing"


@pytest.mark.parametrize("name", NAMES)
def test_default_sizes_span_30x_in_work(name):
    kernel = kernels.get(name)
    small = kernel.work(kernel.default_sizes[0], 1)
    large = kernel.work(kernel.default_sizes[-1], 1)
    # Work is flops for compute kernels, bytes for the data-movement ones.
    if small.flops > 0:
        ratio = large.flops / small.flops
    else:
        ratio = large.bytes_moved / small.bytes_moved
    assert ratio >= 30, f"{name}: largest/smallest default size is only {ratio:.1f}x the work"


@pytest.mark.parametrize("name", NAMES)
def test_work_model_is_finite_non_negative_and_no_bytes_sent_on_one_rank(name):
    kernel = kernels.get(name)
    for ranks in (1, 2, 3, 4, 64):
        size = max(kernel.default_sizes[2], kernel.min_size(ranks))
        work = kernel.work(size, ranks)
        assert isinstance(work, WorkModel)
        for key, value in work.as_dict().items():
            assert isinstance(value, (int, float)) and math.isfinite(value) and value >= 0, \
                (name, ranks, key, value)
    assert kernel.work(kernel.default_sizes[2], 1).comm_bytes == 0


@pytest.mark.parametrize("name", NAMES)
def test_memory_per_rank_does_not_grow_with_ranks(name):
    kernel = kernels.get(name)
    size = kernel.default_sizes[-1]
    memory = [kernel.work(size, ranks).memory_bytes for ranks in (1, 2, 4, 8)]
    assert memory == sorted(memory, reverse=True), (name, memory)


# Work models of stencil, cg, fft, nbody ------------------------------------------------------

@pytest.mark.parametrize("name", MINE)
def test_one_rank_sends_nothing(name):
    work = kernels.get(name).work(64, 1)
    assert work.messages == 0 and work.comm_bytes == 0


@pytest.mark.parametrize("name", MINE)
def test_memory_per_rank_drops_with_ranks(name):
    kernel = kernels.get(name)
    size = kernel.default_sizes[-1]
    assert kernel.work(size, 4).memory_bytes < 0.6 * kernel.work(size, 1).memory_bytes


def test_stencil_work_scales_with_volume_and_faces():
    kernel = kernels.get("stencil")
    assert kernel.work(128, 1).flops == pytest.approx(8 * kernel.work(64, 1).flops)
    assert kernel.work(128, 8).flops == pytest.approx(kernel.work(128, 1).flops / 8)
    # 8 ranks = 2x2x2 blocks of 64^3: each rank has exactly 3 neighbour faces of 64^2 fp64.
    work = kernel.work(128, 8)
    sweeps = 10
    assert work.messages == pytest.approx(3 * sweeps)
    assert work.comm_bytes == pytest.approx(3 * 64 * 64 * 8 * sweeps)
    # Bandwidth-bound: one read and one write of each point per sweep.
    assert kernel.work(128, 1).bytes_moved == pytest.approx(2 * 8 * 128 ** 3 * sweeps)


def test_cg_work_counts_planes_and_allreduces():
    kernel = kernels.get("cg")
    iterations = 50
    assert kernel.work(64, 1).flops == pytest.approx(8 * kernel.work(32, 1).flops)
    two = kernel.work(64, 2)
    # Each of 2 slabs sends one padded plane per iteration plus two 1-double Allreduces.
    assert two.messages == pytest.approx(3 * iterations)
    assert two.comm_bytes == pytest.approx((66 * 66 * 8 + 2 * 8) * iterations)


def test_fft_work_is_n_log_n_and_alltoall_volume():
    kernel = kernels.get("fft")
    small, large = kernel.work(64, 1), kernel.work(128, 1)
    assert large.flops / small.flops == pytest.approx(8 * math.log2(128 ** 3) / math.log2(64 ** 3))
    four = kernel.work(128, 4)
    # Each rank keeps 1/P of its slab and sends the rest (complex128).
    assert four.comm_bytes == pytest.approx(16 * 128 ** 3 / 4 * 3 / 4)
    assert four.messages == 3


def test_nbody_work_is_quadratic_and_ring_sized():
    kernel = kernels.get("nbody")
    assert kernel.work(2048, 1).flops == pytest.approx(4 * kernel.work(1024, 1).flops)
    assert kernel.work(2048, 4).flops == pytest.approx(kernel.work(2048, 1).flops / 4)
    three = kernel.work(1000, 3)
    # P-1 steps of the widest block (334 particles x 4 fp64 values).
    assert three.messages == 2
    assert three.comm_bytes == pytest.approx(2 * 334 * 4 * 8)


@pytest.mark.parametrize("name", MINE)
def test_size_below_the_decomposition_is_a_config_error(name):
    kernel = kernels.get(name)
    ranks = 4
    low = kernel.min_size(ranks)
    assert low >= 1
    kernel.validate_size(low, ranks)
    if low > 1:
        with pytest.raises(ConfigError, match="needs size"):
            kernel.validate_size(low - 1, ranks)


# References and inputs ----------------------------------------------------------------------

def test_block_range_covers_uneven_splits():
    for n, parts in ((10, 3), (7, 4), (4, 4), (100, 3)):
        ranges = [block_range(n, parts, i) for i in range(parts)]
        assert ranges[0][0] == 0 and ranges[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
        assert max(hi - lo for lo, hi in ranges) - min(hi - lo for lo, hi in ranges) <= 1


def test_stencil_cone_reference_equals_full_grid_reference():
    from hpcds1mpi.kernels.stencil import reference_block

    n, sweeps = 14, 4
    full = reference_block(3, n, ((0, n), (0, n), (0, n)), sweeps)
    box = ((5, 9), (0, 6), (8, 14))
    block = reference_block(3, n, box, sweeps)
    np.testing.assert_allclose(block, full[5:9, 0:6, 8:14], rtol=1e-14, atol=0)
    # and the sweeps really change the field (a no-op reference would pass the line above)
    from hpcds1mpi.kernels._parallel import global_planes

    start = global_planes(3, 11, (n + 2,) * 3, ((1, n + 1),) * 3)
    assert np.abs(full - start).max() > 1e-3


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_stencil_chunked_threaded_sweep_equals_whole_array_sweep(backend, monkeypatch):
    from hpcds1mpi.kernels import stencil

    if backend == "numpy":
        monkeypatch.setenv(jit.NO_JIT_ENV, "1")
    else:
        pytest.importorskip("numba")
        assert jit.compiled(stencil._fused_sweep) is not None  # the compiled path is the one tested

    rng = np.random.default_rng(0)
    src = rng.random((9, 37, 41))  # 7 planes of 1517 points: several 1024-point chunks
    expected = src.copy()
    expected[1:-1, 1:-1, 1:-1] = (src[:-2, 1:-1, 1:-1] + src[2:, 1:-1, 1:-1] + src[1:-1, :-2, 1:-1]
                                  + src[1:-1, 2:, 1:-1] + src[1:-1, 1:-1, :-2]
                                  + src[1:-1, 1:-1, 2:]) / 6
    saved = stencil.CHUNK_BYTES
    try:
        stencil.CHUNK_BYTES = 8  # the smallest chunks (1024 points), dealt to 2 threads
        dst = src.copy()
        faces = [((slice(1, -1), 0, slice(None)), src[1:-1, 0, :].copy()),
                 ((slice(1, -1), -1, slice(None)), src[1:-1, -1, :].copy()),
                 ((slice(1, -1), slice(None), 0), src[1:-1, :, 0].copy()),
                 ((slice(1, -1), slice(None), -1), src[1:-1, :, -1].copy())]
        stencil.jacobi_sweep(src, dst, threads=2, fixed_faces=faces)
    finally:
        stencil.CHUNK_BYTES = saved
    np.testing.assert_allclose(dst, expected, rtol=1e-15)


def test_stencil_sweep_plans_are_reused_and_give_the_same_field(monkeypatch):
    from hpcds1mpi.kernels import stencil

    monkeypatch.setenv(jit.NO_JIT_ENV, "1")  # plans belong to the numpy path
    src = np.random.default_rng(1).random((6, 20, 23))
    fresh, cached = src.copy(), src.copy()
    plans: dict = {}
    stencil.jacobi_sweep(src, fresh)
    stencil.jacobi_sweep(src, cached, plans=plans)
    stencil.jacobi_sweep(src, cached, plans=plans)
    assert len(plans) == 1  # built once for this (src, dst) pair, reused by the second sweep
    np.testing.assert_array_equal(cached, fresh)


@pytest.mark.parametrize("offset", [0, 1, 3, 7])
def test_aligned_chunks_cover_the_range_once_with_cache_line_starts(offset):
    from hpcds1mpi.kernels._parallel import aligned_chunks, aligned_empty

    flat = aligned_empty((5000,))
    assert flat.ctypes.data % 64 == 0
    view = flat[offset:]
    pieces = aligned_chunks(view, 11, 4000, 256)
    assert pieces[0][0] == 11 and pieces[-1][1] == 4000
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))  # contiguous, no overlap
    assert all(stop - start <= 256 for start, stop in pieces)
    for start, _ in pieces[1:]:
        assert (view.ctypes.data + start * view.itemsize) % 64 == 0


def test_inputs_do_not_depend_on_the_split():
    from hpcds1mpi.kernels.fft import input_planes

    whole = input_planes(5, 9, 0, 9)
    parts = np.concatenate([input_planes(5, 9, *block_range(9, 4, q)) for q in range(4)])
    np.testing.assert_array_equal(whole, parts)


def test_nbody_forces_match_direct_sum_and_drop_self_pairs():
    from hpcds1mpi.kernels.nbody import accumulate_forces, particles, reference_forces

    bodies = particles(1, 60)
    acc = np.zeros((60, 3))
    accumulate_forces(np.ascontiguousarray(bodies[:, :3]), bodies, acc, same=True)
    np.testing.assert_allclose(acc, reference_forces(bodies, 0, 60), rtol=1e-9, atol=1e-12)
    # Two bodies: equal and opposite momentum change (Newton's third law).
    pair = particles(2, 2)
    acc2 = np.zeros((2, 3))
    accumulate_forces(np.ascontiguousarray(pair[:, :3]), pair, acc2, same=True)
    np.testing.assert_allclose(pair[0, 3] * acc2[0], -pair[1, 3] * acc2[1], rtol=1e-12)


def test_stencil_reuses_its_cartesian_communicator():
    """Hundreds of setups in one sweep process must not create hundreds of communicators."""
    from hpcds1mpi.measure import runner
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.kernels import stencil
    from hpcds1mpi.runtime.mpi import get_mpi

    comm = get_mpi().COMM_SELF
    for _ in range(3):
        outcome = runner.execute(comm, kernels.get("stencil"), 8, Configuration(), warmup=0,
                                 max_repeats=1)
        assert outcome.status == "ok", outcome.error
    created = [key for key in stencil._CARTESIAN if key[1] == (1, 1, 1)]
    assert len(created) == 1


@pytest.mark.parametrize("name,size,knob,value", [
    ("stencil", 10, "CHUNK_BYTES", 8 * 50),
    ("cg", 10, "CHUNK_BYTES", 8 * 100),
    ("nbody", 90, "TILE_ELEMENTS", 64),
    ("fft", 12, None, None),
])
def test_two_thread_paths_match_reference(monkeypatch, name, size, knob, value):
    """The thread-pool paths (many small chunks on 2 threads) give the reference's answer."""
    import importlib

    from hpcds1mpi.measure import runner
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.runtime.mpi import get_mpi

    if knob is not None:
        monkeypatch.setattr(importlib.import_module(f"hpcds1mpi.kernels.{name}"), knob, value)
    kernel = kernels.get(name)
    for precision in ("fp64", "fp32"):
        outcome = runner.execute(get_mpi().COMM_SELF, kernel, size,
                                 Configuration(threads=2, precision=precision), warmup=0,
                                 max_repeats=1)
        assert outcome.status == "ok", (precision, outcome.error)
        assert outcome.rel_error <= kernel.tolerance[precision]


def test_a_work_model_is_recorded_under_the_runs_table_columns():
    from hpcds1mpi.kernels.base import WORK_COLUMNS, WorkModel

    work = WorkModel(flops=1.0, bytes_moved=2.0, messages=3.0, comm_bytes=4.0, memory_bytes=5.0)
    assert work.columns() == dict(zip(WORK_COLUMNS, (1.0, 2.0, 3.0, 4.0, 5.0)))
    assert WORK_COLUMNS == ("work_flops", "work_bytes", "comm_messages", "comm_bytes",
                            "mem_bytes_per_rank")
