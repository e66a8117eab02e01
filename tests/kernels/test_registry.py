"""The registry's answers about what a workload may be offered (kernels/__init__.py)."""

from __future__ import annotations

import pytest

from hpcds1mpi import kernels
from hpcds1mpi.cluster import Partition

CPU = Partition(name="cpu", cores_per_node=8, memory_gb=32, max_nodes=4, gpus_per_node=0)
GPU = Partition(name="gpu", cores_per_node=8, memory_gb=32, max_nodes=4, gpus_per_node=2,
                gpu_memory_gb=16)


@pytest.mark.parametrize("workload, partition, expected", [
    ("allreduce", GPU, (False, ["fp64", "fp32"], ["cpu", "gpu"])),
    ("gemm", CPU, (True, ["fp64", "fp32", "bf16"], ["cpu"])),       # no GPU on the partition
    ("mltrain", GPU, (True, ["fp64", "fp32", "bf16"], ["cpu"])),    # declares CPU only
    (None, GPU, (True, None, ["cpu", "gpu"])),                      # a user's program
    ("my_app", CPU, (True, None, ["cpu"])),                         # a job-log label
    # a kernel's option deck keeps its kernel's rules (s41 tester D17: bf16 offered to it)
    ("stencil+sweeps.100", GPU, (True, ["fp64", "fp32"], ["cpu", "gpu"])),
    ("myapp+sweeps.100", CPU, (True, None, ["cpu"])),               # no kernel's deck
])
def test_offered_is_what_the_kernel_declares_and_the_partition_has(workload, partition, expected):
    assert kernels.offered(workload, partition) == expected


def test_a_builtin_kernel_is_answered_without_importing_the_others():
    """``recommend`` asks about one workload: only that kernel's module is imported, and no
    installed package's entry points are read (fresh process: the registry is module state)."""
    import subprocess
    import sys

    code = ("import sys, importlib.metadata as md\n"
            "md.entry_points = lambda **k: (_ for _ in ()).throw(SystemExit('entry points read'))\n"
            "from hpcds1mpi import kernels\n"
            "assert kernels.support('stencil') == (True, ['fp64', 'fp32'], ['cpu', 'gpu'])\n"
            "assert kernels.get('gemm').name == 'gemm'\n"
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules\n"
            "             if m.startswith('hpcds1mpi.kernels.') and not m.endswith(('base', '_parallel'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["['gemm',", "'stencil']"]


def test_names_still_lists_every_kernel_and_other_workloads_are_not_kernels():
    assert set(kernels.BUILTIN_MODULES) <= set(kernels.names())
    assert kernels.is_kernel("stencil") and not kernels.is_kernel("my_app")
    assert kernels.support("my_app") == (True, None, None)


@pytest.mark.parametrize("source, fragment", [
    ("def (\n", "failed to import (SyntaxError at line 1"),
    ("import numpy as np\nnp.nosuch\n", "failed to import (AttributeError: module 'numpy'"),
    ("raise SystemExit(0)\n", "exited while it was imported"),
    (None, "--kernel-module is empty"),
])
def test_a_kernel_module_that_does_not_import_is_one_line(tmp_path, source, fragment):
    """A site's broken module gave a traceback (SyntaxError, AttributeError, ValueError for an
    empty name); one that called exit() ended the sweep with exit 0 and nothing said."""
    from hpcds1mpi.errors import ConfigError

    spec = ""
    if source is not None:
        spec = str(tmp_path / "site_kernels.py")
        (tmp_path / "site_kernels.py").write_text(source)
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(")) as err:
        kernels.load_plugin(spec)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", kernels.BUILTIN_MODULES)
def test_every_builtin_kernel_declares_the_extra_keys_it_reads(name):
    """A key a kernel reads must be declared, else check_extra would refuse the real option;
    a kernel that declares nothing would let a typo through."""
    import re
    from pathlib import Path

    kernel = kernels.get(name)
    assert kernel.options is not None
    source = Path(kernels.__file__).with_name(f"{name}.py").read_text()
    read = set(re.findall(r"ctx\.extra(?:\.get\(|\[)\s*\"(\w+)\"", source))
    assert read == set(kernel.options)


def test_an_extra_key_the_kernel_does_not_read_is_refused_naming_the_keys_it_reads():
    from hpcds1mpi.errors import ConfigError

    with pytest.raises(ConfigError, match=r"does not read extra swepes; the keys it reads: sweeps"):
        kernels.get("stencil").check_extra({"sweeps": 10, "swepes": "many"})
    with pytest.raises(ConfigError, match="reads none: drop extra"):
        kernels.get("gemm").check_extra({"iterations": 3})
    kernels.get("stencil").check_extra({"sweeps": 3})


def test_a_plugin_kernel_that_declares_no_options_keeps_any_extra(tmp_path):
    source = tmp_path / "plug_noopts.py"
    source.write_text("from hpcds1mpi.kernels import Kernel, register\n\n"
                      "@register\nclass K(Kernel):\n    name = 'plug_noopts'\n")
    kernels.load_plugin(str(source))
    kernels.get("plug_noopts").check_extra({"anything": 1})


def test_an_option_deck_declares_what_its_kernel_does():
    """s41 tester D5, D17: ``stencil+sweeps.100`` is stencil with other options."""
    assert kernels.declaring("stencil") == "stencil"
    assert kernels.declaring("stencil+sweeps.100") == "stencil"
    assert kernels.declaring("io+workdir._scratch_a+1a2b3c") == "io"
    for other in ("myapp", "myapp+x.1", "+x.1", "stencil_2"):
        assert kernels.declaring(other) is None
