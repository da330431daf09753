"""Generated C is well-formed C99 (pycparser) with the expected entry point and pragmas."""
import re

from pycparser import c_ast

import polyc
from c_parse import parse_entry
from polyc.codegen.translation_unit import kernel_code
from polyc.compiler import frontend, generate
from polyc.machine.rules import register_block
from polyc.options import Options


def generated(source: str, **options) -> str:
    return generate(frontend(source), Options().with_(**options)).c_source.text


MATMUL = "def matmul(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"


class Finder(c_ast.NodeVisitor):
    def __init__(self):
        self.functions, self.pragmas, self.fors = [], [], []

    def visit_FuncDef(self, node):
        self.functions.append(node)
        self.generic_visit(node)

    def visit_Compound(self, node):
        items = node.block_items or []
        for item, following in zip(items, items[1:] + [None]):
            if isinstance(item, c_ast.Pragma):
                self.pragmas.append((item.string, following))
        self.generic_visit(node)

    def visit_For(self, node):
        self.fors.append(node)
        self.generic_visit(node)


def test_entry_point_signature_and_parallel_loop():
    text = generated(MATMUL)
    finder = Finder()
    finder.visit(parse_entry(text))
    region, function, launch = finder.functions
    assert function.decl.name == "polyc_matmul"
    # The uniform entry the C launcher calls: sizes in an array, a pointer per tensor.
    assert launch.decl.name == "polyc_matmul_launch"
    assert [p.name for p in launch.decl.type.args.params] == ["polyc_sizes", "polyc_args"]
    assert "polyc_matmul(polyc_sizes[0], polyc_sizes[1], polyc_sizes[2], (const float *)" \
           "polyc_args[0], (const float *)polyc_args[1], (float *)polyc_args[2])" in text
    params = [(p.name, " ".join(p.type.quals) if isinstance(p.type, c_ast.PtrDecl) else "")
              for p in function.decl.type.args.params]
    assert [name for name, _ in params] == ["M", "K", "N", "A", "B", "C"]
    assert params[3][1] == "restrict" and params[5][1] == "restrict"
    assert "const" in function.decl.type.args.params[3].type.type.quals
    # The parallel region is a function of its own: the kernel calls it on a team of
    # threads when there is enough work, and directly (no OpenMP at all) when not.
    assert region.decl.name == "polyc_matmul_region0"
    assert [p.name for p in region.decl.type.args.params] == \
        ["polyc_status_at", "M", "K", "N", "A", "B", "C"]
    kernel_if = function.body.block_items[-2]
    assert isinstance(kernel_if, c_ast.If) and "polyc_work" in kernel_if.cond.left.name
    (pragma, call) = [(p, f) for p, f in finder.pragmas if p == "omp parallel"][0]
    assert isinstance(call, c_ast.FuncCall) and call.name.name == "polyc_matmul_region0"
    assert isinstance(kernel_if.iffalse.block_items[0], c_ast.FuncCall)
    # The threads share out boxes of rows and columns: the region computes this
    # thread's box, then runs the outermost loop over it.
    box = region.body.block_items[0]
    loop = box.block_items[-1]
    assert loop is finder.fors[0], "the region ends with the outermost loop"
    assert loop.init.decls[0].type.type.names == ["int64_t"]
    assert "polyc_thread_grid(omp_get_num_threads(), 2, polyc_extents, polyc_sizes, NULL, polyc_parts)" in text


def test_header_comment_names_operator_version_and_options():
    text = generated(MATMUL)
    header = text[:text.index("*/")]
    assert "operator `matmul`" in header and polyc.__version__ in header
    assert "fusion=" in header and "C(m, n) +=! A(m, k) * B(k, n)" in header


def test_math_functions_have_the_right_precision():
    single = generated("def f(float(N) X) -> (Y) { Y(i) = exp(X(i)) }")
    double = generated("def f(double(N) X) -> (Y) { Y(i) = exp(X(i)) }")
    assert re.search(r"\bexpf\(", single) and not re.search(r"\bexp\(", kernel_code(single))
    assert re.search(r"\bexp\(", kernel_code(double))


def test_no_parallel_pragma_when_disabled():
    finder = Finder()
    finder.visit(parse_entry(generated(MATMUL, parallel=False)))
    assert finder.pragmas and not any("parallel" in p for p, _ in finder.pragmas)


def test_simd_loops_are_innermost_and_unit_stride():
    finder = Finder()
    finder.visit(parse_entry(generated(MATMUL)))
    simd = [loop for pragma, loop in finder.pragmas if pragma == "omp simd"]
    assert simd
    for loop in simd:
        inner = Finder()
        inner.visit(loop.stmt)
        assert inner.fors == [], "nothing loops inside a SIMD loop"


def test_reduction_along_unit_stride_is_vectorised_with_a_scalar_accumulator():
    # A(i, j) is read once per output element: no copy pays, the dot product vectorises,
    # rows jammed by 8 (one load of x(j) for eight rows), a scalar accumulator each. The
    # initialisation stays apart: fused into the row loop, it cost the rows their jam
    # (4000 × 4000: 2.31 → 1.97 ms apart).
    text = generated("def mv(float(M, N) A, float(N) x) -> (y) { y(i) +=! A(i, j) * x(j) }")
    accumulators = ", ".join(f"polyc_acc{k}" for k in range(8))
    assert f"#pragma omp simd reduction(+:{accumulators})" in text
    finder = Finder()
    finder.visit(parse_entry(text))
    assert any(p.startswith("omp simd reduction") for p, _ in finder.pragmas)


def test_reused_strided_operand_is_copied_transposed_then_register_blocked(machine):
    # Copied transposed before the loops, or, where the register block packs it per tile,
    # transposed by the panels' copy (polyc.scheduling.packed_copies): never both.
    text = generated("def f(float(B, M) I, float(N, M) W) -> (O) { O(b, n) +=! I(b, m) * W(n, m) }",
                     machine=machine)
    transposing_panels = "polyc_panel_W[" in text and "polyc_transpose_" in text
    assert ("W_t10[" in text) != transposing_panels
    assert f"float polyc_acc[{register_block(machine, 4)[0]}][" in text


def test_optimisations_can_be_switched_off():
    text = generated(MATMUL, optimize=False)
    assert "simd" not in text.split("\nint polyc_")[1]
    assert "+= 128" not in text


def test_relu_epilogue_vectorises_without_a_libm_call():
    text = generated("""def fc(float(B, K) X, float(K, N) W, float(N) bias) -> (O) {
      O(b, n) +=! X(b, k) * W(k, n)
      O(b, n) = fmax(O(b, n) + bias(n), 0)
    }""")
    assert "polyc_fmaxf(" in text and not re.search(r"(?<!polyc_)fmaxf\(", text)
    epilogue = text.index("polyc_fmaxf((O[")
    assert "#pragma omp simd" in text[text.rindex("for (", 0, epilogue) - 40:epilogue]


def test_a_sum_of_products_accumulates_one_product_at_a_time(machine):
    # acc + (a*b + c*d) would cost a multiply, an FMA and an add; two FMAs instead
    text = generated("def f(float(N, M) A, float(N, M) B) -> (D) "
                     "{ D(i, j) +=! A(j, k) * B(i, k) + B(j, k) * A(i, k) }", machine=machine)
    updates = [line for line in text.splitlines()
               if "= ((polyc_acc[polyc_lane0][polyc_lane1] + " in line]
    assert updates and all(re.search(r"= \(\(polyc_acc\S* \+ \(.*\)\) \+ \(.*\)\);", line)
                           for line in updates)
    assert not re.search(r"polyc_acc\S* \+ \(\(\w+\[[^]]*\] \*", text)  # (acc + (a*b + ...
    plain = generated("def f(float(N, M) A) -> (y) { y(i) +=! A(i, k) + 1.0 }", optimize=False)
    assert re.search(r"y\[.*\] = \(\(y\[.*\] \+ A\[.*\]\) \+ 1\.0f\);", plain)
    whole = generated("def f(int32(N, M) A) -> (y) { y(i) +=! A(i, k) + 1 }", optimize=False)
    assert re.search(r"y\[.*\] = \(y\[.*\] \+ \(A\[.*\] \+ 1\)\);", whole)  # integers: as written
