"""The host as a :class:`~polyc.machine.model.Machine`: detected once per process.

The microarchitecture, vendor and instruction-set features come from ``archspec``
(Spack's CPU database: it knows every x86 generation's name and flags, and parses
``/proc/cpuinfo`` and the other platforms' equivalents so that polyc does not);
cache sizes from Linux's sysfs. Anything that cannot be read falls back to the
x86-64 baseline's figures, and ``source`` says so. This is the only module that
reads the system's description of its CPU.

archspec's answer (microarchitecture, vendor, features) costs about 5 ms per process
(its database, then every known target checked); given a directory, it is remembered
there, keyed by ``/proc/cpuinfo`` (less the fields that change while the machine runs)
and archspec's database file, so that a new process on the same CPU reads it back.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import platform
from pathlib import Path

from polyc.machine.memo import read_memo, write_memo
from polyc.machine.model import Machine, NAMED_MACHINES, is_cache_line

_SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
_CPUINFO = Path("/proc/cpuinfo")
# /proc/cpuinfo fields that differ between cores or change while the machine runs.
_VOLATILE = ("cpu MHz", "bogomips", "BogoMIPS", "processor", "core id", "apicid",
             "initial apicid", "physical id", "siblings", "cpu cores")
_FALLBACK = NAMED_MACHINES["x86-64"]
# What a memo holds: a new format leaves the memos of older ones unread.
_MEMO_FORMAT = "archspec name, the CPU's own vendor and flags"
_detected: tuple[str, str, frozenset[str]] | None = None


def host_machine(memo_dir: Path | None = None) -> Machine:
    """The machine this process runs on; ``memo_dir``: where archspec's answer may be
    remembered between processes."""
    return _host_machine(_microarchitecture(memo_dir))


@functools.lru_cache(maxsize=1)
def _host_machine(microarchitecture: tuple[str, str, frozenset[str]]) -> Machine:
    name, vendor, features = microarchitecture
    isa, vector_bits, registers, fma = _vector_unit(features)
    (l1, l2, l3, line), caches_from = _caches()
    return Machine(name=name, vendor=vendor, isa=isa, vector_bits=vector_bits,
                   vector_registers=registers, fma_units=fma, l1=l1, l2=l2, l3=l3,
                   line=line, cores=usable_cores(),
                   source=f"detected: archspec {name}, caches from {caches_from}")


@functools.lru_cache(maxsize=1)
def host_fingerprint() -> str:
    """The CPU's microarchitecture, vendor and features, hashed: code compiled with
    ``-march=native`` is only valid on a CPU like this one (a cache directory may be
    shared between machines over NFS)."""
    name, vendor, features = _microarchitecture()
    text = "\n".join([platform.machine(), name, vendor, " ".join(sorted(features))])
    return hashlib.sha256(text.encode()).hexdigest()


def host_features() -> frozenset[str]:
    """The instruction-set features of this CPU (``/proc/cpuinfo``'s flags, as archspec
    reads them): which ``-march`` targets its code may be compiled for."""
    return _microarchitecture()[2]


@functools.lru_cache(maxsize=1)
def host_brand() -> str:
    """The CPU's marketing name ("AMD EPYC 9R45"), for reports."""
    try:
        from archspec.cpu.detect import brand_string

        return brand_string() or platform.processor() or platform.machine()
    except Exception:  # an older archspec or an unknown platform
        return platform.processor() or platform.machine()


def _microarchitecture(memo_dir: Path | None = None) -> tuple[str, str, frozenset[str]]:
    """archspec's ``(name, vendor, features)`` of this CPU, detected once per process:
    read back from ``memo_dir`` where an earlier process left it, else asked of archspec
    (and left there)."""
    global _detected
    if _detected is None:
        memo = _memo_path(memo_dir) if memo_dir is not None else None
        found = _read_memo(memo) if memo is not None else None
        if found is None:
            found = _ask_archspec()
            if memo is not None:
                _write_memo(memo, found)
        _detected = found
    return _detected


def _ask_archspec() -> tuple[str, str, frozenset[str]]:
    """The name of the newest microarchitecture archspec knows this CPU to be, and the
    CPU's own vendor and features.

    The features are the CPU's, not those of the microarchitecture it was matched to:
    a virtual machine that hides one flag of its part (a Zen 4 without ``pku``) is
    matched to a generic level (``x86_64_v4``, vendor ``generic``) whose list lacks
    flags that ``-march=native`` still uses, so the vector unit and the cache's host
    fingerprint are taken from the flags themselves."""
    try:
        import archspec.cpu

        host = archspec.cpu.host()
    except Exception:  # an unknown platform: archspec's own parsing failed
        return platform.machine() or "unknown", "generic", frozenset()
    vendor, features = host.vendor, frozenset(host.features)
    try:
        from archspec.cpu.detect import detected_info

        info = detected_info()
        vendor = info.vendor if info.vendor and info.vendor != "generic" else vendor
        features |= frozenset(info.features)
    except Exception:  # an archspec without it, or no flags to read
        pass
    return host.name, vendor, features


def _memo_path(memo_dir: Path) -> Path | None:
    """Where archspec's answer for this CPU and this archspec is remembered; ``None``
    without ``/proc/cpuinfo`` or archspec."""
    try:
        lines = _CPUINFO.read_text(errors="replace").splitlines()
        spec = importlib.util.find_spec("archspec")
        database = Path(spec.origin).parent / "json" / "cpu" / "microarchitectures.json"
        info = database.stat()
    except (OSError, AttributeError, TypeError, ValueError, ImportError):
        return None
    stable = sorted({line for line in lines
                     if line.strip() and line.split(":")[0].strip() not in _VOLATILE})
    text = "\n".join([_MEMO_FORMAT, platform.machine(), str(database), str(info.st_size),
                      str(info.st_mtime_ns), *stable])
    return memo_dir / f"{hashlib.sha256(text.encode()).hexdigest()}.json"


def _read_memo(path: Path) -> tuple[str, str, frozenset[str]] | None:
    """The remembered answer (:func:`~polyc.machine.memo.read_memo`), if well-formed."""
    fields = read_memo(path) or {}
    name, vendor, features = fields.get("name"), fields.get("vendor"), fields.get("features")
    if not (isinstance(name, str) and isinstance(vendor, str) and isinstance(features, list)
            and all(isinstance(f, str) for f in features)):
        return None
    return name, vendor, frozenset(features)


def _write_memo(path: Path, found: tuple[str, str, frozenset[str]]) -> None:
    name, vendor, features = found
    write_memo(path, {"name": name, "vendor": vendor, "features": sorted(features)})


def _vector_unit(features: frozenset[str]) -> tuple[str, int, int, int]:
    """``(isa, vector bits, vector registers, FMA units)`` from the CPU's features.

    AVX-512 parts get 32 registers and are shaped for 512-bit vectors, Intel's too,
    although gcc's own tuning for them prefers 256-bit ones (512-bit instructions lower
    the clock of the older parts): on a Sapphire Rapids-class Xeon, a 1024³ matmul ran
    24 ms on one thread shaped for 512 bits and 34 ms for 256, OpenBLAS 18-23 ms
    (benchmarks/README.md). The named ``skylake-avx512`` model keeps 256-bit vectors."""
    fma = 2 if "fma" in features or "avx512f" in features else 0
    if "avx512f" in features:
        return "avx512", 512, 32, fma
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
    if not is_cache_line(line):
        line = _FALLBACK.line
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


def usable_cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1

