"""train and learn under a login node's ``ulimit -v`` (s36 tester E4)."""

import resource
import subprocess
import sys

import pytest

from hpcds1mpi.runtime import address_space

LIMIT = 1_500_000 * 1024  # the tester's ulimit -v 1500000 (KiB)


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


@pytest.mark.parametrize("command", ["train", "learn"])
def test_train_and_learn_refuse_a_small_address_space_in_one_line(command, tmp_path):
    """s36 tester E4: under ulimit -v 1500000 train printed a 37-line traceback (libtorch_cpu.so:
    failed to map segment) and learn hung for ever, ignoring SIGTERM, in OpenBLAS's retry
    loop while scipy loaded. Refused before they load: one line, exit 1."""
    (tmp_path / "m.h5").write_bytes(b"")  # never read: refused before anything is
    args = {"train": ["--telemetry", "m.h5", "--out", "model"],
            "learn": ["--model", "model", "--telemetry", "m.h5", "--out", "new"]}[command]
    (tmp_path / "model").mkdir()
    done = subprocess.run([sys.executable, "-m", "hpcds1mpi", command, *args], cwd=tmp_path,
                          preexec_fn=_limited, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.startswith("hpcds1mpi: error: virtual memory is limited to 1.5 GB "
                                  "(ulimit -v 1500000); ") and done.stderr.count("\n") == 1
    assert f"or run {command} in a batch job" in done.stderr


def test_a_model_library_that_cannot_load_is_one_line():
    """s36 tester E4: torch's ImportError under the limit, read as the CLI says it."""
    # what train had taken of the space before torch loaded, held as one reservation
    code = ("import mmap, resource, sys\n"
            f"resource.setrlimit(resource.RLIMIT_AS, ({LIMIT}, {LIMIT}))\n"
            "from hpcds1mpi.runtime.address_space import import_error_line\n"
            "held = mmap.mmap(-1, 1_300_000_000)\n"
            "try:\n    import torch\nexcept ImportError as exc:\n"
            "    print(import_error_line(exc))\nelse:\n    print('loaded')\n")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=60).stdout.strip()
    if not shown.startswith("cannot load"):
        pytest.skip(f"torch did not fail to load with an ImportError here: {shown[:80]!r}")
    assert shown.startswith("cannot load torch (") and "\n" not in shown
    assert shown.endswith("ulimit -v 1500000): raise it to at least "
                          f"{-(-address_space.needed_bytes() // 1024)}, or run in a batch job")


def test_an_import_error_of_our_own_is_not_the_libraries():
    try:
        import hpcds1mpi.no_such_module  # noqa: F401
    except ImportError as exc:
        assert address_space.import_error_line(exc) is None


def test_the_need_grows_with_the_usable_cpus():
    assert address_space.needed_bytes(1) < address_space.needed_bytes(2)
    assert 2.5e9 < address_space.needed_bytes(1) < 3.5e9
