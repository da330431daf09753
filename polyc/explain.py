"""Every stage of one operator's compilation, readable in a terminal.

``explain(operator, args)`` returns an :class:`Explanation`; ``str()`` gives
the text, and each stage is a named section for programs and tests.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

from polyc.lang import sizes as sz
from polyc.lang.printer import statement_to_tc, to_tc
from polyc.poly.program import isl_items

STAGES = ("ir", "shapes", "domains", "deps", "schedule", "ast", "c")


@dataclass(frozen=True)
class Explanation:
    name: str
    sections: tuple[tuple[str, str, str], ...]  # (key, title, text)

    def section(self, key: str) -> str:
        return next(text for k, _, text in self.sections if k == key)

    def __str__(self) -> str:
        parts = []
        for _, title, text in self.sections:
            parts.append(f"== {title} ==\n{text.rstrip()}\n")
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        parts = [f"<h3>polyc: {html.escape(self.name)}</h3>"]
        for _, title, text in self.sections:
            parts.append(f"<h4>{html.escape(title)}</h4><pre>{html.escape(text)}</pre>")
        return "\n".join(parts)


def stage_texts(compilation) -> dict[str, str]:
    """The text of every stage of a :class:`polyc.compiler.Compilation`."""
    op = compilation.op
    program = compilation.program
    shapes = []
    for tensor in op.inputs + op.outputs + op.temporaries:
        dims = ", ".join(sz.to_tc(d) for d in tensor.shape)
        shapes.append(f"{tensor.role:9} {tensor.name}: {tensor.type.name}({dims})")
    for stmt in op.statements:
        shapes.append(f"{stmt.name}: {statement_to_tc(stmt)}")
    for precondition in op.preconditions:
        shapes.append(f"precondition: {precondition.description}")
    domains = "\n".join(str(s) for s in isl_items(program.domain.get_set_list()))
    deps = []
    for (kind, source, sink), relation in sorted(
            compilation.dependences.by_statement_pair().items(), key=lambda kv: kv[0]):
        deps.append(f"{kind:5} {source} -> {sink}: {relation}")
    return {
        "ir": to_tc(op),
        "shapes": "\n".join(shapes),
        "domains": domains + f"\ncontext: {program.context}",
        "deps": "\n".join(deps) or "(none)",
        "schedule": str(compilation.schedule),
        "ast": compilation.ast_text,
        "c": compilation.c_source.text,
    }


def explain(operator, args=()) -> Explanation:
    compilation = operator.compilation()
    texts = stage_texts(compilation)
    titles = {"ir": "operator (TC, ranges explicit)", "shapes": "tensors, statements, ranges",
              "domains": "iteration domains", "deps": "dependences",
              "schedule": "schedule tree", "ast": "loop nest", "c": "C source"}
    sections = [(key, titles[key], texts[key]) for key in STAGES]
    kernel = operator.compile(*args) if args else None
    seconds = compilation.seconds
    stats = [f"polyc: {1000 * sum(seconds.values()):.1f} ms ("
             + ", ".join(f"{k} {1000 * v:.1f}" for k, v in seconds.items()) + ")"]
    if kernel is not None:
        stats.append(f"C compiler: {kernel.compile_seconds * 1000:.0f} ms, "
                     f"cache {kernel.cache_hit}, {kernel.so_path}")
    sections.append(("stats", "compile statistics", "\n".join(stats)))
    return Explanation(operator.name, tuple(sections))
