"""The package imported from a source checkout, as a Python started in its root imports it."""

import subprocess
import sys
from pathlib import Path

import hpcds1mpi

ROOT = Path(__file__).resolve().parents[1]


def test_a_checkout_reaches_the_subpackages_pyproject_maps_in(tmp_path):
    # s38 tester B1, B5: with the wheel installed, `python analysis/runtime_eval.py` and any
    # Python started in the checkout's root imported the checkout's hpcds1mpi/, which has no
    # surrogates/ inside: "No module named 'hpcds1mpi.surrogates'". `-S` keeps this
    # environment's install (and its editable finder) out, as a wheel elsewhere would be.
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import hpcds1mpi.surrogates, "
            "hpcds1mpi.analysis, hpcds1mpi.jobscripts; print(hpcds1mpi.surrogates.__file__)")
    done = subprocess.run([sys.executable, "-S", "-c", code, str(ROOT)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == ROOT / "surrogates" / "__init__.py"


def test_the_mapped_subpackages_are_the_ones_pyproject_maps():
    text = (ROOT / "pyproject.toml").read_text()
    for name in hpcds1mpi.MAPPED_SUBPACKAGES:
        assert f'"hpcds1mpi.{name}" = "{name}"' in text
