"""The host as a :class:`~polyc.machine.model.Machine`: detected once per process.

The microarchitecture, vendor and instruction-set features come from ``archspec``
(Spack's CPU database: it knows every x86 generation's name and flags, and parses
``/proc/cpuinfo`` and the other platforms' equivalents so that polyc does not);
cache sizes from Linux's sysfs. Anything that cannot be read falls back to the
x86-64 baseline's figures, and ``source`` says so. This is the only module that
reads the system's description of its CPU.
"""
from __future__ import annotations

import functools
import hashlib
import os
import platform
from pathlib import Path

from polyc.machine.model import Machine, NAMED_MACHINES

_SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
_FALLBACK = NAMED_MACHINES["x86-64"]


@functools.lru_cache(maxsize=1)
def host_machine() -> Machine:
    """The machine this process runs on."""
    name, vendor, features = _microarchitecture()
    isa, vector_bits, registers, fma = _vector_unit(vendor, features)
    (l1, l2, l3, line), caches_from = _caches()
    return Machine(name=name, vendor=vendor, isa=isa, vector_bits=vector_bits,
                   vector_registers=registers, fma_units=fma, l1=l1, l2=l2, l3=l3,
                   line=line, cores=_cores(),
                   source=f"detected: archspec {name}, caches from {caches_from}")


@functools.lru_cache(maxsize=1)
def host_fingerprint() -> str:
    """The CPU's microarchitecture, vendor and features, hashed: code compiled with
    ``-march=native`` is only valid on a CPU like this one (a cache directory may be
    shared between machines over NFS)."""
    name, vendor, features = _microarchitecture()
    text = "\n".join([platform.machine(), name, vendor, " ".join(sorted(features))])
    return hashlib.sha256(text.encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def host_brand() -> str:
    """The CPU's marketing name ("AMD EPYC 9R45"), for reports."""
    try:
        from archspec.cpu.detect import brand_string

        return brand_string() or platform.processor() or platform.machine()
    except Exception:  # an older archspec or an unknown platform
        return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=1)
def _microarchitecture() -> tuple[str, str, frozenset[str]]:
    try:
        import archspec.cpu

        host = archspec.cpu.host()
        return host.name, host.vendor, frozenset(host.features)
    except Exception:  # an unknown platform: archspec's own parsing failed
        return platform.machine() or "unknown", "generic", frozenset()


def _vector_unit(vendor: str, features: frozenset[str]) -> tuple[str, int, int, int]:
    """``(isa, vector bits, vector registers, FMA units)`` from the CPU's features.

    AVX-512 parts get 32 registers; Intel's are shaped for 256-bit vectors, as gcc's
    tuning for them prefers (512-bit instructions lower their clock)."""
    fma = 2 if "fma" in features or "avx512f" in features else 0
    if "avx512f" in features:
        return "avx512", 256 if vendor == "GenuineIntel" else 512, 32, fma
    if "avx2" in features:
        return "avx2", 256, 16, fma
    if "sse2" in features or platform.machine().lower() in ("x86_64", "amd64"):
        return "sse2", 128, 16, fma
    return "generic", 128, 16, fma


def _caches() -> tuple[tuple[int, int, int, int], str]:
    """``((l1, l2, l3, line), source)`` of CPU 0's data caches."""
    sizes: dict[int, int] = {}
    line = _FALLBACK.line
    try:
        for index in sorted(_SYSFS_CACHE.glob("index*")):
            if (index / "type").read_text().strip() not in ("Data", "Unified"):
                continue
            sizes[int((index / "level").read_text())] = _parse_size((index / "size").read_text())
            line_file = index / "coherency_line_size"
            if line_file.exists():
                line = int(line_file.read_text())
    except (OSError, ValueError):
        sizes = {}
    if not {1, 2} <= sizes.keys():
        fallback = _FALLBACK
        return (fallback.l1, fallback.l2, fallback.l3, fallback.line), "x86-64 defaults"
    return (sizes[1], sizes[2], sizes.get(3, sizes[2]), line), "sysfs"


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1

