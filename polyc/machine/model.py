"""The machine model: a frozen description of the CPU that kernels are scheduled for.

Every size the scheduler and code generator choose (register blocks, tile sizes,
panel depths, buffer budgets, prefetch distances, streaming thresholds) is derived
from one :class:`Machine` by the rules of :mod:`polyc.machine.rules`. A machine is
detected once (:func:`polyc.machine.detect.host_machine`), named
(:data:`NAMED_MACHINES`, ``POLYC_MACHINE=zen3``) or read from a JSON file
(``POLYC_MACHINE=./box.json``: ``{"base": "zen3", "l2": 1048576}``), travels in
:class:`polyc.Options`, and is part of the kernel cache key.

The model schedules; it does not select instructions. Kernels are compiled with
``-march=native`` (they only ever run where they were built), plus
``-mprefer-vector-width`` set to the model's vector width, so that the compiler
uses the width the register blocks were shaped for (gcc's own tuning prefers 256-bit
vectors on Intel's AVX-512 parts), and ``-falign-loops`` set to its cache line: where a
hot loop starts decides how many of the front end's 64-byte fetch windows it spans.
With gcc's default alignment, a change elsewhere in gemm's C moved its unchanged inner
loop off a line, and gemm ran 4-5% slower; aligned, most contractions ran 0-6% faster
and symm 4.5% slower (benchmarks/README.md, "Compile time"). A model wider than the
host only costs speed: the compiler cannot use vectors the CPU lacks, and the C is
correct either way.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from pathlib import Path

from polyc.errors import ConfigurationError

ISAS = ("generic", "sse2", "avx2", "avx512")


@dataclass(frozen=True)
class Machine:
    """A CPU as the scheduler sees it.

    ``vector_bits``: the SIMD width kernels are shaped for and compiled to prefer (not
    necessarily the widest the ISA has); ``vector_registers``: architectural vector
    registers; ``fma_units``: vector FMAs issued per cycle (0 without FMA); cache sizes
    in bytes, ``l1``/``l2`` per core; ``cores``: the CPUs the process may use.
    ``source`` says where the figures came from and takes no part in equality.
    """

    name: str
    vendor: str
    isa: str
    vector_bits: int
    vector_registers: int
    fma_units: int
    l1: int
    l2: int
    l3: int
    line: int
    cores: int
    source: str = ""

    def __post_init__(self):
        if self.isa not in ISAS:
            raise ConfigurationError(f"machine {self.name!r}: unknown ISA {self.isa!r} "
                                     f"(one of {', '.join(ISAS)})")
        for name in ("vector_bits", "vector_registers", "l1", "l2", "l3", "line", "cores"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ConfigurationError(f"machine {self.name!r}: {name} must be a positive "
                                         f"integer, not {value!r}")
        if not is_cache_line(self.line):  # loops are aligned to it (cflags)
            raise ConfigurationError(f"machine {self.name!r}: a cache line of {self.line} "
                                     f"bytes is not a power of two")
        if self.vector_bits % 64 or self.vector_registers < 8:
            raise ConfigurationError(f"machine {self.name!r}: {self.vector_bits}-bit vectors "
                                     f"and {self.vector_registers} registers make no SIMD unit")

    def __eq__(self, other):
        return isinstance(other, Machine) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    @property
    def vector_bytes(self) -> int:
        return self.vector_bits // 8

    @property
    def streaming_stores(self) -> bool:
        """Whether the ISA has stores that bypass the cache (every x86-64 level does)."""
        return self.isa != "generic"

    @property
    def key(self) -> str:
        """Every field but ``source``, as text: part of the kernel cache key."""
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)
                           if f.name != "source"}, sort_keys=True)

    @property
    def cflags(self) -> tuple[str, ...]:
        """Compiler flags that make the compiler use the model's vector width and start
        each loop on a cache line (see the module docstring)."""
        aligned = (f"-falign-loops={self.line}",)
        if self.isa == "generic":
            return aligned
        return (f"-mprefer-vector-width={self.vector_bits}",) + aligned

    def __str__(self) -> str:
        return (f"{self.name} ({self.vendor}): {self.isa.upper()}, {self.vector_bits}-bit "
                f"vectors, {self.vector_registers} vector registers, {self.fma_units} FMA "
                f"units; L1d {size_text(self.l1)}, L2 {size_text(self.l2)}, "
                f"L3 {size_text(self.l3)}, "
                f"line {self.line} B; {self.cores} cores"
                + (f" [{self.source}]" if self.source else ""))


def is_cache_line(nbytes: int) -> bool:
    """Whether ``nbytes`` can be a cache line: a positive power of two."""
    return nbytes > 0 and not nbytes & (nbytes - 1)


def size_text(nbytes: int) -> str:
    """``nbytes`` exactly, in the largest of MiB, KiB and bytes that holds it whole."""
    if nbytes % (1024 * 1024) == 0:
        return f"{nbytes // (1024 * 1024)} MiB"
    return f"{nbytes // 1024} KiB" if nbytes % 1024 == 0 else f"{nbytes} B"


KIB, MIB = 1024, 1024 * 1024

# Named models of parts polyc is tuned and tested for; tests of schedule structure run
# under each, whatever the host. Sizes are per core (L1d, L2) and per socket (L3).
NAMED_MACHINES: dict[str, Machine] = {m.name: m for m in (
    # AMD Zen 3 (EPYC 7003): AVX2, 16 ymm registers, two FMA pipes.
    Machine("zen3", "AuthenticAMD", "avx2", 256, 16, 2, 32 * KIB, 512 * KIB, 32 * MIB, 64, 2,
            "named"),
    # AMD Zen 4 (EPYC 9004): AVX-512 on 256-bit halves, 32 zmm registers.
    Machine("zen4", "AuthenticAMD", "avx512", 512, 32, 2, 32 * KIB, 1 * MIB, 32 * MIB, 64, 2,
            "named"),
    # AMD Zen 5 (EPYC 9005): AVX-512 with a full 512-bit datapath.
    Machine("zen5", "AuthenticAMD", "avx512", 512, 32, 2, 48 * KIB, 1 * MIB, 32 * MIB, 64, 2,
            "named"),
    # Intel Skylake-SP shaped for 256-bit vectors, as gcc's tuning for it prefers (its
    # clock drops under 512-bit instructions); AVX-512VL still gives 32 ymm registers.
    # Detection shapes every AVX-512 host for 512 bits; this model is the other choice.
    Machine("skylake-avx512", "GenuineIntel", "avx512", 256, 32, 2, 32 * KIB, 1 * MIB,
            27 * MIB + 512 * KIB, 64, 2, "named"),
    # Intel Ice Lake-SP and later: shaped for 512-bit vectors, as polyc's detection shapes
    # every AVX-512 host (faster on a Sapphire Rapids-class Xeon; benchmarks/README.md).
    Machine("icelake-server", "GenuineIntel", "avx512", 512, 32, 2, 48 * KIB,
            1 * MIB + 256 * KIB, 48 * MIB, 64, 2, "named"),
    # Intel Sapphire Rapids: a 2 MiB L2 per core.
    Machine("sapphirerapids", "GenuineIntel", "avx512", 512, 32, 2, 48 * KIB, 2 * MIB,
            105 * MIB, 64, 2, "named"),
    # The x86-64 baseline: SSE2, 16 xmm registers, no FMA.
    Machine("x86-64", "generic", "sse2", 128, 16, 0, 32 * KIB, 256 * KIB, 8 * MIB, 64, 2,
            "named"),
)}


def named_machine(spec: str) -> Machine:
    """The machine ``spec`` names: a key of :data:`NAMED_MACHINES`, ``"host"``, or the
    path of a JSON file whose keys are :class:`Machine` fields, optionally over a
    ``"base"`` named model. Raises :class:`~polyc.errors.ConfigurationError`."""
    from polyc.machine.detect import host_machine

    spec = spec.strip()
    if spec == "host":
        return host_machine()
    if spec in NAMED_MACHINES:
        return NAMED_MACHINES[spec]
    path = Path(spec).expanduser()
    if not path.suffix == ".json" and not path.exists():
        raise ConfigurationError(f"unknown machine {spec!r}: use 'host', one of "
                                 f"{', '.join(NAMED_MACHINES)}, or the path of a JSON file")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"cannot read machine file {str(path)!r}: {error}") from None
    if not isinstance(data, dict):
        raise ConfigurationError(f"machine file {str(path)!r}: expected a JSON object")
    return machine_from_dict(data, f"file {path}")


def machine_from_dict(data: dict, source: str) -> Machine:
    """A machine from ``{"base": name, field: value, ...}`` (every field when no base)."""
    data = dict(data)
    base = data.pop("base", None)
    known = {f.name for f in fields(Machine)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigurationError(f"machine ({source}): unknown field(s) {', '.join(unknown)}; "
                                 f"known: {', '.join(sorted(known))}")
    if base is not None:
        if base not in NAMED_MACHINES:
            raise ConfigurationError(f"machine ({source}): unknown base {base!r}")
        return replace(NAMED_MACHINES[base], **{"name": f"{base}*", **data, "source": source})
    missing = sorted(known - set(data) - {"source"})
    if missing:
        raise ConfigurationError(f"machine ({source}): missing field(s) {', '.join(missing)} "
                                 f"(or give a \"base\" model)")
    return Machine(**{**data, "source": source})

