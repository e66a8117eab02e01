"""Which CPU generation a machine is: its signature from /proc/cpuinfo, and the CPU names
that do not say it (s38 tester K2)."""

from __future__ import annotations

import pytest

from hpcds1mpi import cpu_signature as cs

#: The first processor of a Zen 5 VM that calls itself "AMD EPYC" (this session's VM).
ZEN5 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC
stepping\t: 1
microcode\t: 0xffffffff
flags\t\t: fpu vme sse4_1 sse4_2 avx avx2 fma avx512f avx512bw avx512_vnni avx512_bf16 \
avx_vnni hypervisor rdrand

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 26
"""
#: A Zen 3 (EPYC 7763) host's first processor under the same VM name.
ZEN3 = ZEN5.replace("cpu family\t: 26", "cpu family\t: 25").replace("model\t\t: 2",
                                                                  "model\t\t: 1")
NEOVERSE = """processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp asimddp sve
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x1
CPU part\t: 0xd40
CPU revision\t: 1
"""


@pytest.mark.parametrize("name", ["AMD EPYC", "Intel(R) Xeon(R) Processor",
                                  "Common KVM processor", "QEMU Virtual CPU version 2.5+",
                                  "AMD EPYC Processor (with IBPB)", "aarch64", "x86_64"])
def test_a_name_without_a_model_number_or_code_name_is_generic(name):
    assert cs.generic_cpu_name(name)


@pytest.mark.parametrize("name", ["AMD EPYC 7763 64-Core Processor",
                                  "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
                                  "Intel Xeon Processor (Skylake, IBRS)", "AMD EPYC-Rome Processor",
                                  "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", "Neoverse-N1", ""])
def test_a_name_with_a_model_number_or_code_name_is_not(name):
    assert not cs.generic_cpu_name(name)


def test_the_signature_is_the_first_processors_family_model_stepping_and_speed_flags():
    assert cs.cpu_signature(ZEN5) == ("AuthenticAMD family 26 model 2 stepping 1; sse4_2 avx "
                                      "avx2 fma avx512f avx512bw avx512_vnni avx512_bf16 "
                                      "avx_vnni")
    assert cs.cpu_signature(ZEN3) != cs.cpu_signature(ZEN5)
    assert cs.cpu_signature(NEOVERSE) == ("arm implementer 0x41 part 0xd40 variant 0x1 "
                                          "revision 1; asimd asimddp sve")
    assert cs.cpu_signature("") == ""  # no /proc/cpuinfo: none


def test_the_signature_is_read_from_proc_cpuinfo_by_one_reader(monkeypatch):
    monkeypatch.setattr(cs, "_read_cpuinfo", lambda: ZEN3)
    assert cs.cpu_signature().startswith("AuthenticAMD family 25 model 1")


def test_only_a_generic_name_without_a_signature_leaves_its_generation_untold():
    assert cs.untold_generation({"cpu_model": "AMD EPYC"})
    assert cs.untold_generation({"cpu_model": "AMD EPYC", "cpu_signature": ""})
    assert not cs.untold_generation({"cpu_model": "AMD EPYC", "cpu_signature": "x"})
    assert not cs.untold_generation({"cpu_model": "AMD EPYC 7763"})
    assert not cs.untold_generation({"cpu_model": ""})
