"""Which CPU generation a machine is, where its model name does not say.

A VM's CPU often reports a name without a model number (``AMD EPYC``, ``Intel(R) Xeon(R)
Processor``, ``Common KVM processor``, ``QEMU Virtual CPU version 2.5+``): one name for
several generations, whose kernels run at other speeds (s38 tester K2: a Zen 5 VM was taken
for the Zen reference machine behind the same ``AMD EPYC``, and the bundle's runs, 22.1 ms,
were called "measured" where 8.8-9.3 ms were measured). The CPU's signature -- vendor, family,
model, stepping and the instruction-set flags that change kernel speed, from /proc/cpuinfo
(:func:`cpu_signature`) -- tells them apart: the machines table records it, and a machine id
hashes it where the name is generic (:func:`generic_cpu_name`), so a specific name keeps the
id it had. A record of a generic name made before the signature was recorded
(:func:`untold_generation`) cannot be told apart from any other generation: it is taken as
other hardware, and :func:`untold_note` says so and what to do.
"""

from __future__ import annotations

import re

#: The /proc/cpuinfo flags that change how fast the kernels run (vector width, fused
#: multiply-add, bf16/fp16/int8 dot products, matrix tiles; Arm's ``Features`` alike), in the
#: order written. Others (microcode, mitigations, a hypervisor's) are left out: they vary
#: between hosts of one generation and would split one machine into several ids.
SPEED_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni",
               "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8",
               "amx_fp16", "asimd", "asimddp", "sve", "sve2", "bf16", "i8mm", "sme")

#: Words a CPU's name has besides which generation it is: vendor, product line, a
#: virtualiser's, an architecture's, and "cpu", "processor", "version" (its number is the
#: virtualiser's, not the CPU's). A name of these words only is generic.
_BRAND_WORDS = frozenset({
    "amd", "intel", "genuineintel", "authenticamd", "epyc", "xeon", "opteron", "ryzen",
    "threadripper", "athlon", "core", "pentium", "celeron", "atom", "arm", "armv8", "armv9",
    "neoverse", "ampere", "graviton", "power", "ibm", "common", "kvm", "qemu", "virtual", "tcg",
    "hypervisor", "host", "cpu", "processor", "family", "version", "x86_64", "x86", "amd64",
    "i386", "i686", "aarch64", "arm64", "ppc64le", "ppc64", "s390x", "riscv64", "unknown",
    # QEMU's names of a model with a mitigation: "AMD EPYC Processor (with IBPB)"
    "with", "no", "ibpb", "ibrs", "ssbd", "tsx"})
#: Marks and clock or core counts in a name: "(R)", "(TM)", "@ 2.40GHz", "64-Core".
_NAME_NOISE = re.compile(r"\((?:r|tm|c)\)|@?\s*\d+(?:\.\d+)?\s*[gm]hz\b|\b\w+-cores?\b|@")
#: A virtualiser's version number ("QEMU Virtual CPU version 2.5+"), not a model number.
_VERSION = re.compile(r"\bversion\s+\S+")


def generic_cpu_name(model) -> bool:
    """Whether CPU name ``model`` names no generation: nothing in it but the words of
    :data:`_BRAND_WORDS` once marks, clock, core counts and a virtualiser's version are
    dropped ("AMD EPYC", "Intel(R) Xeon(R) Processor", "Common KVM processor", "aarch64").
    An empty name is not generic: it names nothing, and is never compared."""
    text = _VERSION.sub(" ", _NAME_NOISE.sub(" ", str(model or "").casefold()))
    words = re.findall(r"[a-z0-9_+.]+", text)
    return bool(words) and all(w.strip("+.") in _BRAND_WORDS or not w.strip("+.")
                               for w in words)


def _read_cpuinfo() -> str:
    """/proc/cpuinfo's text; "" where there is none (macOS, Windows) or it cannot be read."""
    try:
        with open("/proc/cpuinfo") as fh:
            return fh.read()
    except OSError:
        return ""


def cpu_signature(text: str | None = None) -> str:
    """This CPU's signature, short and stable: ``"AuthenticAMD family 26 model 2 stepping 1;
    avx avx2 fma avx512f avx512_bf16"`` (x86), ``"arm implementer 0x41 part 0xd0c variant 0x3
    revision 1; asimd sve"`` (Arm), from the first processor of /proc/cpuinfo (``text``: that
    file's text, read when None); flags only of :data:`SPEED_FLAGS`. "" where there is no
    /proc/cpuinfo or it names neither."""
    text = _read_cpuinfo() if text is None else text
    first: dict[str, str] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(":")
        if sep:
            first.setdefault(key.strip().casefold(), value.strip())
    if "vendor_id" in first and "cpu family" in first:
        ident = (f"{first['vendor_id']} family {first['cpu family']} model "
                 f"{first.get('model', '?')} stepping {first.get('stepping', '?')}")
        flags = first.get("flags", "").split()
    elif "cpu implementer" in first:
        ident = (f"arm implementer {first['cpu implementer']} part {first.get('cpu part', '?')}"
                 f" variant {first.get('cpu variant', '?')} revision "
                 f"{first.get('cpu revision', '?')}")
        flags = first.get("features", "").split()
    else:
        return ""
    have = set(flags)
    speed = [f for f in SPEED_FLAGS if f in have]
    return f"{ident}; {' '.join(speed)}" if speed else ident


def untold_generation(row: dict) -> bool:
    """Whether machines-table ``row`` (or a bundle's partition record) names a generic CPU
    (:func:`generic_cpu_name`) without its signature: recorded before hpcds1mpi read one
    (session 38), so it does not say which CPU generation it was."""
    return generic_cpu_name(row.get("cpu_model")) and not str(row.get("cpu_signature")
                                                                  or "").strip()


def untold_note(what: str, cpu_model, fix: str) -> str:
    """One line: ``what`` (the model's partition local, the runs of machine X) was recorded
    on CPU ``cpu_model``, a name of no generation, without its signature, so it is taken as
    other hardware; ``fix`` says what to do."""
    return (f"{what} was recorded on CPU {str(cpu_model).strip()!r}, a name that does not say "
            f"which CPU generation, by an older hpcds1mpi that did not record the CPU's "
            f"signature: taken as other hardware; {fix}")
