"""Run one operator under several option sets and compare schedules, results and times.

    result = polyc.compare(op, (A, B))           # default variants: fused, unfused, no-opt
    result = polyc.compare(op, (A, B), variants={"serial": {"parallel": False}})
    print(result)                                # a table; in Jupyter, an HTML table

Each variant is ``op.with_options(**options)``. Every variant's result is
checked against the first one's with ``np.allclose`` (tolerances scaled to the
element type and to the size of the values, since vectorised reductions sum in
another order); the time is the median of several calls into preallocated
outputs, after a warm-up call.
"""
from __future__ import annotations

import statistics
import time
import warnings
from dataclasses import dataclass

import numpy as np

from polyc.explore.schedule_view import ScheduleSummary, summarize_schedule

DEFAULT_VARIANTS = {
    "fused": {"fusion": "max"},
    "unfused": {"fusion": "min"},
    "no-opt": {"optimize": False},
}


@dataclass(frozen=True)
class Variant:
    name: str
    options: dict
    schedule: ScheduleSummary
    seconds: float               # median time of one call
    times: tuple[float, ...]
    max_difference: float        # largest |result - first variant's result|
    matches: bool                # np.allclose with the first variant's result
    compile: str                 # "cache miss 812 ms" / "cache disk"

    @property
    def options_text(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.options.items()) or "(defaults)"


@dataclass(frozen=True)
class Comparison:
    name: str
    variants: tuple[Variant, ...]

    @property
    def consistent(self) -> bool:
        """Whether every variant computed the same result (up to rounding)."""
        return all(v.matches for v in self.variants)

    def variant(self, name: str) -> Variant:
        return next(v for v in self.variants if v.name == name)

    def rows(self) -> tuple[list[str], list[list[str]]]:
        header = ["variant", "options", "loop nests", "parallel", "simd", "tiled",
                  "median time", "speed vs first", "same result"]
        base = self.variants[0].seconds if self.variants else 0.0
        rows = []
        for v in self.variants:
            rows.append([
                v.name, v.options_text, str(len(v.schedule.nests)),
                str(v.schedule.count("parallel")), str(v.schedule.simd_marks),
                "yes" if v.schedule.tiled else "no", _time(v.seconds),
                f"{base / v.seconds:.2f}x" if v.seconds > 0 else "-",
                "yes" if v.matches else f"NO (max |diff| {v.max_difference:.3g})",
            ])
        return header, rows

    def __str__(self) -> str:
        header, rows = self.rows()
        widths = [max(len(r[k]) for r in rows + [header]) for k in range(len(header))]
        lines = [f"polyc compare: {self.name}"]
        lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        for row in rows:
            lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        lines.append(_note(self))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<polyc Comparison of {self.name}: {', '.join(v.name for v in self.variants)}>"

    def _repr_html_(self) -> str:
        from polyc.explore.html import table_html

        header, rows = self.rows()
        return table_html(header, rows, f"polyc compare: {self.name}", [_note(self)])


def _note(comparison: Comparison) -> str:
    return ("median of repeated calls into preallocated outputs; speed vs first > 1 means "
            "faster than the first variant"
            + ("" if comparison.consistent else "; WARNING: the variants disagree"))


def _time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} us"


def compare(op, args, variants: dict | None = None, repeat: int | None = None,
            rtol: float | None = None, atol: float | None = None) -> Comparison:
    """Run ``op(*args)`` under each of ``variants`` (name -> options for ``with_options``).

    ``repeat``: calls to time per variant (default: as many as fit in about 0.2 s,
    3 to 25). Returns a :class:`Comparison`; warns when variants disagree.
    """
    variants = DEFAULT_VARIANTS if variants is None else variants
    if not variants:
        raise ValueError("compare needs at least one variant")
    args = tuple(args)
    results = []
    reference = None
    for name, options in variants.items():
        variant_op = op.with_options(**options)
        compilation = variant_op.compilation()
        kernel = variant_op.compile(*args)
        outputs = _as_tuple(variant_op(*args))  # fresh outputs: accumulations start at 0
        if reference is None:  # copied: timing below writes into `outputs` again
            reference = tuple(np.array(o, copy=True) for o in outputs)
        difference, matches = _agree(outputs, reference, rtol, atol)
        times = _measure(variant_op, args, outputs, repeat)
        compile_text = f"cache {kernel.cache_hit}" + (
            f" {kernel.compile_seconds * 1e3:.0f} ms" if kernel.cache_hit == "miss" else "")
        results.append(Variant(name, dict(options),
                               summarize_schedule(compilation.schedule, compilation.program),
                               statistics.median(times), tuple(times), difference, matches,
                               compile_text))
    comparison = Comparison(op.name, tuple(results))
    if not comparison.consistent:
        names = ", ".join(v.name for v in results if not v.matches)
        warnings.warn(f"polyc.compare({op.name}): {names} disagree with {results[0].name}",
                      RuntimeWarning, stacklevel=2)
    return comparison


def _as_tuple(result) -> tuple[np.ndarray, ...]:
    return result if isinstance(result, tuple) else (result,)


def _agree(outputs, reference, rtol, atol) -> tuple[float, bool]:
    difference, matches = 0.0, True
    for mine, theirs in zip(outputs, reference):
        mine, theirs = np.asarray(mine), np.asarray(theirs)
        if mine.shape != theirs.shape:
            return float("inf"), False
        if mine.size == 0:
            continue
        wide_mine, wide_theirs = mine.astype(np.float64), theirs.astype(np.float64)
        both_nan = np.isnan(wide_mine) & np.isnan(wide_theirs)
        delta = np.where(both_nan, 0.0, np.abs(wide_mine - wide_theirs))
        difference = max(difference, float(np.nanmax(delta)) if delta.size else 0.0)
        exact = not np.issubdtype(theirs.dtype, np.floating)
        relative = rtol if rtol is not None else (0.0 if exact else 1e-4 if
                                                  theirs.dtype.itemsize <= 4 else 1e-9)
        finite = np.abs(wide_theirs[np.isfinite(wide_theirs)])
        scale = float(finite.max()) if finite.size else 1.0
        absolute = atol if atol is not None else (0.0 if exact else relative * scale)
        matches &= bool(np.allclose(wide_mine, wide_theirs, rtol=relative, atol=absolute,
                                    equal_nan=True))
    return difference, matches


def _measure(op, args, outputs, repeat) -> list[float]:
    out = outputs[0] if len(outputs) == 1 else outputs
    op(*args, out=out)  # warm up
    if repeat is None:
        start = time.perf_counter()
        op(*args, out=out)
        once = max(time.perf_counter() - start, 1e-7)
        repeat = int(min(25, max(3, 0.2 / once)))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        op(*args, out=out)
        times.append(time.perf_counter() - start)
    return times
