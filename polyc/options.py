"""Options: every knob polyc has, read from the environment in one place.

Passes receive an :class:`Options` explicitly; no pass reads ``os.environ``.

| variable          | meaning                                   | default                   |
|-------------------|-------------------------------------------|---------------------------|
| POLYC_CACHE_DIR   | where compiled kernels are cached         | $XDG_CACHE_HOME/polyc or ~/.cache/polyc |
| POLYC_CC          | the C compiler                            | cc                        |
| POLYC_CFLAGS      | extra compiler flags (shell-split)        | (none)                    |
| POLYC_DEBUG       | comma-separated channels: ir, shapes, domains, deps, fusion, schedule, ast, c, cc, or all | (none) |
| POLYC_CC_TIMEOUT  | seconds before a hanging compiler is killed | 120                     |
| POLYC_MACHINE     | machine model: host, a name (zen3, ...) or a JSON file | host  |
| POLYC_PLACE_THREADS | 1: kernels pin their OpenMP threads       | 0                         |
| POLYC_LAUNCHER    | 0: calls go through ctypes, not the C launcher | 1                    |
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from polyc.errors import ConfigurationError
from polyc.machine import Machine, host_machine, named_machine

DEBUG_CHANNELS = ("ir", "shapes", "domains", "deps", "fusion", "schedule", "ast", "c", "cc")
BASE_CFLAGS = ("-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-fwrapv",
               "-fno-math-errno", "-std=gnu11")
# optimize=False is the reference schedule, and the C compiler's vectorizer stays out of
# it too: its loops run as isl wrote them. GCC 11.3 and 12.2 vectorized an in-order
# floating-point sum fed by loads in reverse order wrongly (GCC PR 110381: the plain
# float64 gradient of a 3 x 3 average pool was off by a third).
REFERENCE_CFLAGS = ("-fno-tree-vectorize",)


def _default_cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "polyc"


@dataclass(frozen=True)
class Options:
    """Compilation and runtime options; change with :meth:`with_`."""

    cache_dir: Path = field(default_factory=_default_cache_dir)
    cc: str = "cc"
    extra_cflags: tuple[str, ...] = ()
    debug: frozenset[str] = frozenset()
    cc_timeout: float = 120.0
    # Scheduling and code generation.
    fusion: str = "default"  # "default", "max" or "min"
    parallel: bool = True
    # False: isl's schedule is only fused (``fusion``) and marked parallel (``parallel``).
    # Off with it: the canonical form and layout copies (polyc.rewrite); band optimisation
    # (straightened bands, distributed members, loop order, tiling, simd marks, register
    # blocks and panel packing, jammed rows, fused vector passes); the thread partition,
    # contraction and folds; vector math calls and streaming stores in the C; and the C
    # compiler's own vectorizer (REFERENCE_CFLAGS).
    optimize: bool = True
    # With optimize: rewrite the IR to a canonical form before scheduling, so that the
    # spelling does not matter (polyc.rewrite.invariant_factors: factors and divisors
    # that no reduction index changes scale the finished sum; polyc.rewrite.common_values:
    # a library call two statements compute alike is computed once; polyc.rewrite.
    # merged_indices: indices that move together in a contraction become one).
    canonicalize: bool = True
    # Data-dependent indices (gathers) are checked against the gathered extent in the
    # kernel; False drops the check: an index out of range is then undefined behaviour
    # (reads or writes outside the array). Opt out only for inputs you have validated.
    check_gathers: bool = True
    # The machine every size is derived from (:mod:`polyc.machine`): a Machine, or a
    # name or JSON path that ``named_machine`` resolves.
    machine: Machine = field(default_factory=host_machine)
    # Kernels pin their OpenMP team's threads to CPUs of their own (and move the caller
    # off them for the call). Off by default: it changes threads' CPU affinity, which
    # other OpenMP code in the process shares.
    place_threads: bool = False
    # The C library's math functions with SIMD versions a vector loop may call (``expf``,
    # ...); None: those libmvec has (polyc.codegen.vector_math). Tests fix it so that
    # the generated C does not depend on the host's C library.
    vector_math: frozenset[str] | None = None
    # Calls go through polyc's C launcher (polyc.jit.launcher); False: through ctypes
    # (20 times the overhead; the same checks, errors and results). Not in the C.
    launcher: bool = True

    def __post_init__(self):
        if isinstance(self.machine, str):
            object.__setattr__(self, "machine", named_machine(self.machine))
        elif not isinstance(self.machine, Machine):
            raise ConfigurationError(f"machine must be a polyc.Machine or a name, not "
                                     f"{type(self.machine).__name__}")

    @property
    def cflags(self) -> tuple[str, ...]:
        return BASE_CFLAGS + self.machine.cflags + \
            (() if self.optimize else REFERENCE_CFLAGS) + self.extra_cflags

    def summary(self) -> str:
        """The options that shape the generated C, as one line (its header, explain())."""
        return (f"fusion={self.fusion} parallel={self.parallel} optimize={self.optimize} "
                f"canonicalize={self.canonicalize} check_gathers={self.check_gathers} "
                f"place_threads={self.place_threads} "
                f"machine={self.machine.name} "
                f"cc={self.cc} cflags={' '.join(self.cflags)}")

    def with_(self, **changes) -> Options:
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            known = ", ".join(f.name for f in fields(self))
            raise ConfigurationError(f"unknown option{'s' if len(unknown) > 1 else ''} "
                                     f"{', '.join(unknown)}; options are: {known}")
        return replace(self, **changes)

    @staticmethod
    def from_environment(environ=None) -> Options:
        env = os.environ if environ is None else environ
        cache_dir = (Path(env["POLYC_CACHE_DIR"]).expanduser() if env.get("POLYC_CACHE_DIR")
                     else _default_cache_dir())
        # The host's description is remembered beside the kernels (polyc.machine.detect).
        machine = (named_machine(env["POLYC_MACHINE"]) if env.get("POLYC_MACHINE")
                   else host_machine(memo_dir=cache_dir / "host"))
        options = Options(cache_dir=cache_dir, machine=machine)
        if env.get("POLYC_CC"):
            options = options.with_(cc=env["POLYC_CC"])
        if env.get("POLYC_CFLAGS"):
            options = options.with_(extra_cflags=tuple(shlex.split(env["POLYC_CFLAGS"])))
        if env.get("POLYC_DEBUG"):
            channels = {c.strip() for c in env["POLYC_DEBUG"].split(",") if c.strip()}
            if "all" in channels:
                channels = set(DEBUG_CHANNELS)
            options = options.with_(debug=frozenset(channels))
        if env.get("POLYC_PLACE_THREADS", "").strip() not in ("", "0"):
            options = options.with_(place_threads=True)
        if env.get("POLYC_LAUNCHER", "").strip() == "0":
            options = options.with_(launcher=False)
        if env.get("POLYC_CC_TIMEOUT"):
            try:
                options = options.with_(cc_timeout=float(env["POLYC_CC_TIMEOUT"]))
            except ValueError:
                pass
        return options
