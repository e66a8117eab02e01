"""Whether a Python program uses MPI, read from its source (s33 tester D4)."""

from __future__ import annotations

import pytest

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


#: Debian's /usr/bin/gpaw (setuptools' easy_install wrapper): no `import gpaw` in it.
EASY_INSTALL_WRAPPER = """#! /usr/bin/python3
# EASY-INSTALL-ENTRY-SCRIPT: '{dist}==22.8.0','console_scripts','{name}'
import re
import sys

__requires__ = '{dist}==22.8.0'

try:
    from importlib.metadata import distribution
except ImportError:
    from pkg_resources import load_entry_point


def importlib_load_entry_point(spec, group, name):
    dist_name, _, _ = spec.partition('==')
    matches = (entry_point for entry_point in distribution(dist_name).entry_points
               if entry_point.group == group and entry_point.name == name)
    return next(matches).load()


globals().setdefault('load_entry_point', importlib_load_entry_point)

if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])
    sys.exit(load_entry_point('{dist}==22.8.0', 'console_scripts', '{name}')())
"""
#: pip's wrapper: the entry point's module imported by name.
PIP_WRAPPER = """#!/usr/bin/python3
# -*- coding: utf-8 -*-
import re
import sys
from {dist}.cli import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def test_a_console_script_wrapper_is_read_as_its_package_never_as_mpi_free(tmp_path):
    """s41 tester A2: Debian's gpaw, a wrapper naming its distribution only, was read as "a
    Python program that imports no MPI"; the MPICH mpiexec was accepted and 2 copies of GPAW
    recorded as one 2-rank run."""
    from hpcds1mpi.launch.python_mpi_use import script_names_mpi

    for wrapper in (EASY_INSTALL_WRAPPER, PIP_WRAPPER):
        gpaw = wrapper.format(dist="gpaw", name="gpaw")
        (tmp_path / "gpaw").write_text(gpaw)
        assert script_names_mpi(gpaw, str(tmp_path)) is True  # a package built on MPI
        assert python_without_mpi([], str(tmp_path), script=str(tmp_path / "gpaw")) is None
        # another package's entry point: its code is not read here, so no guess either way
        other = wrapper.format(dist="some_solver", name="solve")
        (tmp_path / "solve").write_text(other)
        assert script_names_mpi(other, str(tmp_path)) is None
        assert python_without_mpi([], str(tmp_path), script=str(tmp_path / "solve")) is None


#: The wrappers pip (``removesuffix``) and distlib write today, the module's function called.
TODAYS_WRAPPERS = [
    "#!/usr/bin/python3\nimport sys\nfrom {dist}.cli import main\nif __name__ == '__main__':\n"
    "    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n    sys.exit(main())\n",
    "#!/usr/bin/python3\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom {dist}.cli import main\n"
    "if __name__ == '__main__':\n    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', "
    "sys.argv[0])\n    sys.exit(main())\n"]


@pytest.mark.parametrize("wrapper", TODAYS_WRAPPERS)
def test_pips_and_distlibs_wrappers_are_read_as_their_installed_package(tmp_path, wrapper):
    """s41 review F2: only easy_install's templates were known; the wrappers pip and distlib
    write now were read as their own text, "a Python program that imports no MPI", whatever
    their package did."""
    from hpcds1mpi.launch.python_mpi_use import script_names_mpi

    (tmp_path / "bin").mkdir()
    package = tmp_path / "lib" / "python3.12" / "site-packages" / "myapp"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "cli.py").write_text("from myapp import solver\n\ndef main():\n    solver.run()\n")
    (package / "solver.py").write_text("from mpi4py import MPI\n\ndef run():\n    MPI.COMM_WORLD\n")
    (tmp_path / "bin" / "myapp").write_text(text := wrapper.format(dist="myapp"))
    assert script_names_mpi(text, str(tmp_path / "bin")) is True
    assert python_without_mpi([], str(tmp_path), script=str(tmp_path / "bin" / "myapp")) is None
    (package / "solver.py").write_text("def run():\n    pass\n")  # a serial package: read so
    assert script_names_mpi(text, str(tmp_path / "bin")) is False
    # a package the wrapper's environment does not hold: not read, so no guess
    other = wrapper.format(dist="some_solver")
    assert script_names_mpi(other, str(tmp_path / "bin")) is None
