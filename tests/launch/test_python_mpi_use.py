"""Whether a Python program uses MPI, read from its source (s33 tester D4)."""

from __future__ import annotations

from hpcds1mpi.launch.python_mpi_use import python_target, python_without_mpi


def test_what_python_runs():
    assert python_target(["-u", "-X", "dev", "app.py", "1"]) == ("file", "app.py")
    assert python_target(["-m", "pkg.main"]) == ("module", "pkg.main")
    assert python_target(["-c", "print(1)"]) == ("code", "print(1)")


def test_scripts_of_packages_built_on_mpi_are_not_read_as_mpi_free(tmp_path):
    for text in ("import dolfinx\n", "from petsc4py import PETSc\n", "import meep as mp\n",
                 "import gpaw\n", "import h5py\n", "x = __import__('mpi4py')\n"):
        (tmp_path / "app.py").write_text(text)
        assert python_without_mpi(["app.py"], str(tmp_path)) is None, text


def test_a_serial_script_and_its_local_package(tmp_path):
    (tmp_path / "serial.py").write_text("import numpy as np\nimport helpers.io\n")
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "__init__.py").write_text("")
    (tmp_path / "helpers" / "io.py").write_text("import json\n")
    assert "imports no MPI" in python_without_mpi(["serial.py"], str(tmp_path))
    (tmp_path / "helpers" / "io.py").write_text("from mpi4py import MPI\n")
    assert python_without_mpi(["serial.py"], str(tmp_path)) is None
    assert python_without_mpi(["missing.py"], str(tmp_path)) is None
