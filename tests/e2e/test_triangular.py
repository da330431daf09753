"""Index-dependent ranges: triangular and banded domains, end to end, against numpy in
float64 (the kernels, written with where ranges and with selects: benchmarks/triangular.py)."""
import dataclasses
import functools
import importlib.util
import sys
from pathlib import Path

import islpy as isl
import numpy as np
import pytest

import polyc
from polyc.compiler import CANONICAL_FORM, frontend, generate
from polyc.lang.ranges import has_uneven_extent
from polyc.machine import NAMED_MACHINES
from polyc.options import Options
from polyc.poly.program import build_poly_program, isl_items

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from triangular import KERNELS, TERNARY, inputs  # noqa: E402
from gradcheck import directional, directions, finite_difference, relative_error  # noqa: E402

pytestmark = pytest.mark.needs_cc

# Sizes per kernel, in the order KERNELS names them: empty, one, small and not square,
# and large enough for several tiles and register blocks with edges.
SIZES = [(0, 0, 0), (1, 1, 1), (0, 3, 2), (3, 0, 2), (5, 3, 4), (37, 70, 9), (70, 37, 20)]


@functools.lru_cache(maxsize=None)
def _op(name: str, optimize: bool = True, spelling: str = "where") -> polyc.Operator:
    source = KERNELS[name][0] if spelling == "where" else TERNARY[name]
    return polyc.define(source, optimize=optimize)  # the environment's cache and model


def _check(op, name, values, seed=0):
    source, reference, size_names = KERNELS[name]
    sizes = dict(zip(size_names, values))
    args = inputs(name, sizes, np.random.default_rng(seed))
    got = op(*args)
    want = reference(*args)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * max(1.0, np.abs(want).max(
        initial=0.0)))


@pytest.mark.parametrize("values", SIZES, ids=lambda v: "x".join(map(str, v)))
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_triangular_kernels_agree_with_numpy(name, values):
    _check(_op(name), name, values)


@pytest.mark.parametrize("values", SIZES, ids=lambda v: "x".join(map(str, v)))
@pytest.mark.parametrize("name", sorted(TERNARY))
def test_the_select_spellings_agree_with_numpy(name, values):
    _check(_op(name, spelling="select"), name, values)


@pytest.mark.parametrize("name", sorted(TERNARY))
def test_a_select_on_the_indices_becomes_the_same_reduction_domains(name):
    # the sums of both spellings run over as many points: the select's zeros are gone
    assert _summed_points(_op(name, spelling="select")) == _summed_points(_op(name))


@pytest.mark.parametrize("name", sorted(TERNARY))
def test_both_spellings_are_one_operator(name):
    # the select's pieces are the where ranges, the zeros its other piece would store
    # over the initialisation's zeros are dropped (polyc.poly.redundant_stores), and the
    # bounds the triangle never reaches go (polyc.rewrite.redundant_bounds): one
    # canonical form, and one compilation where the statements' names agree too
    # (generate() finds it by that form; symm's second sum is S1 in one spelling, S0_1,
    # a piece of S0, in the other)
    def canonical(source):
        op = frontend(source)
        for rewrite in CANONICAL_FORM:
            op = rewrite(op)
        return op

    def unnamed(op):
        return dataclasses.replace(op, statements=tuple(
            dataclasses.replace(s, name="") for s in op.statements))

    select, where = canonical(TERNARY[name]), canonical(KERNELS[name][0])
    assert unnamed(select) == unnamed(where)
    assert (select == where) == (name != "symm")


def _summed_points(op) -> list[int]:
    """The points of each update with a reduction index, all sizes 7."""
    program = op.compilation().program
    counts = []
    for part in isl_items(program.domain.get_set_list()):
        stmt = program.statement(part.get_tuple_name())
        if stmt.is_init or not stmt.statement.reduction_indices:
            continue
        for k in range(part.dim(isl.dim_type.param)):
            part = part.fix_val(isl.dim_type.param, k, isl.Val(7))
        counts.append(part.count_val().to_python())
    return sorted(counts)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_triangular_kernels_agree_unoptimised(name):
    # isl's own schedule and AST over the same domains: the optimising passes add nothing
    for values in SIZES[4:]:
        _check(_op(name, optimize=False), name, values)


def test_the_domain_is_the_triangle_and_the_initialisation_the_box():
    program = build_poly_program(frontend(KERNELS["trmm"][0]))
    domain = program.domain
    assert domain.is_equal(domain.__class__(
        "[M, N] -> { S0_init[i, j] : 0 <= i < M and 0 <= j < N;"
        " S0[i, j, k] : 0 <= i < M and 0 <= j < N and i < k < M;"
        " S1[i, j] : 0 <= i < M and 0 <= j < N }"))


def test_the_python_form_is_the_same_operator():
    @polyc.op
    def trmm(alpha: polyc.f32, A: polyc.f32["M", "M"], B: polyc.f32["M", "N"]):
        with polyc.where(k in range(i + 1, M)):  # noqa: F821 (polyc reads the source)
            Out[i, j] += A[k, i] * B[k, j]  # noqa: F821
        Out[i, j] = alpha * (Out[i, j] + B[i, j])  # noqa: F821
        return Out  # noqa: F821

    assert str(trmm.ir) == str(_op("trmm").ir)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_printed_ranges_parse_back_to_the_same_operator(name):
    ir = _op(name).ir
    assert frontend(str(ir)) == ir


def test_two_triangles_make_a_whole_output():
    op = polyc.define("""
    def symmetrize(float(N, N) A) -> (S) {
      S(i, k) = A(i, k) where k in 0:i + 1
      S(i, k) = A(k, i) where k in i + 1:N
    }""")
    A = np.random.default_rng(1).standard_normal((6, 6)).astype(np.float32)
    np.testing.assert_array_equal(op(A), np.tril(A) + np.tril(A, -1).T)


def test_a_band_bound_by_max_and_min_is_convex():
    # max(...) in a lower bound and min(...) in an upper one: one constraint per argument
    program = build_poly_program(frontend(KERNELS["banded"][0]))
    [update] = [s for s in isl_items(program.domain.get_set_list()) if s.get_tuple_name() == "S0"]
    assert len(isl_items(update.get_basic_set_list())) == 1


def test_a_triangle_needs_no_precondition_where_it_stays_inside():
    op = frontend("def f(float(N, N) A) -> (y) { y(i) +=! A(i, k) where k in 0:i + 1 }")
    assert op.preconditions == ()
    op = frontend("def f(float(N, M) A) -> (y) { y(i) +=! A(i, k) where k in 0:i + 1 }")
    [needed] = op.preconditions
    assert "stays inside `A`" in needed.description


@pytest.mark.parametrize("source, message", [
    ("def f(float(N, N) A) -> (L) { L(i, j) = A(i, j) where j in 0:i + 1 }",
     r"output `L` is left unwritten at L\(0, 1\) for N = 2"),
    ("def f(float(N, N) A) -> (S) { T(i, k) = A(i, k) where k in 0:i + 1\n"
     "  S(i, k) = T(k, i) }",
     r"`T\(k, i\)` reads T\(0, 1\) for N = 2, which no earlier statement writes"),
    ("def f(float(N, N) A) -> (y) { y(i) +=! A(i, j) where j in 0:k, k in 0:j }",
     "index `k` has a range but is not used"),
    ("def f(float(N, N) A) -> (y) { y(i) +=! A(i, j) * A(k, j) where j in 0:k + 1, "
     "k in j:N }", "the range of `[jk]` depends on `[jk]`, whose ranges depend on it"),
    ("def f(float(N, N) A) -> (y) { y(i) +=! A(i, j) where j in i:j + 1 }",
     "the range of `j` depends on `j` itself"),
    ("def f(float(N, N) A) -> (y) { y(i) +=! A(i, j) where j in 0:q }",
     "`q` in a range bound is neither a size variable nor an index of this statement"),
    ("def f(float(N, N) A) -> (y) { y(i) +=! A(i, j) where j in 0:i * i }",
     r"must be affine in the indices and sizes \(or the min\(...\) of such\): `i \* i`"),
    ("def f(float(N, N) A, float(N) x) -> (y) { y(i) +=! A(i, j) * x(j) "
     "where j in i - 1:i + 2 }", r"clamp an index-dependent range to the extents"),
    ("def f(float(N, N) A) -> (C) { C(i, k) +=! A(i, k) where k in i + 1:N }",
     r"whose `!` initialises only 1:N, leaving the first elements of dimension 1"),
])
def test_bad_ranges_are_semantic_errors(source, message):
    with pytest.raises(polyc.SemanticError, match=message):
        frontend(source)


@pytest.mark.parametrize("values", [(1, 1, 1), (0, 3, 2), (5, 3, 4), (9, 7, 3)],
                         ids=lambda v: "x".join(map(str, v)))
@pytest.mark.parametrize("name, spelling", [(name, "where") for name in sorted(KERNELS)]
                         + [(name, "select") for name in sorted(TERNARY)])
def test_gradients_of_triangles_and_bands_agree_with_finite_differences(name, spelling,
                                                                         values):
    _, reference, size_names = KERNELS[name]
    rng = np.random.default_rng(sum(values))
    args = inputs(name, dict(zip(size_names, values)), rng)
    op = _op(name, spelling=spelling)
    cotangent = rng.standard_normal(op(*args).shape).astype(np.float32)
    gradients = polyc.grad(op)(*args, cotangent)
    direction = directions(args, [t.type.is_float for t in op.ir.inputs], rng)
    expected = finite_difference(lambda *a: reference(*a)[0], tuple(
        np.asarray(x, np.float64) if isinstance(x, np.ndarray) else x for x in args),
        direction, [cotangent.astype(np.float64)])
    assert relative_error(directional(gradients, direction), expected, 1e-6) <= 1e-3


@pytest.mark.parametrize("name", ["trmm", "syrk", "syr2k", "causal_attention"])
def test_the_adjoints_of_a_triangle_sum_over_triangles(name):
    # each sum of the backward runs over a triangle, as many points as the forward's sum
    # (the guards that inversion writes become domains again in the canonical form)
    forward = set(_summed_points(_op(name)))
    backward = _summed_points(polyc.grad(_op(name)))
    assert max(backward) <= max(forward)


def test_a_triangle_written_by_two_statements_differentiates():
    op = polyc.define("""def f(float(N, N) A) -> (L) {
      L(i, j) = A(i, j) * A(j, i) where j in 0:i + 1
      L(i, j) = exp(A(i, j)) where j in i + 1:N
    }""")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 6)).astype(np.float32)
    cotangent = rng.standard_normal((6, 6)).astype(np.float32)
    lower = np.tril(np.ones((6, 6), bool))
    expected = np.where(lower, cotangent * a.T, np.exp(a) * cotangent) \
        + np.where(lower, cotangent * a, 0).T
    np.testing.assert_allclose(polyc.grad(op)(a, cotangent), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("source, message", [
    ("def f(float(N, K) A) -> (y) { y(i) +=! A(i, k) where i in 0:k + 1, k in 0:K }",
     r"the range of `i`, an index it writes, depends on `k`, one it sums over"),
    ("def f(float(N) A) -> (y) { y(i) +=! A(2 * i + k) where k in 0:i + 1, "
     "i in 0:(N + 1) / 3 }", r"the range of `k` depends on an index read with a stride"),
])
def test_what_polyc_does_not_differentiate_in_triangles_is_refused_clearly(source, message):
    with pytest.raises(polyc.SemanticError, match=message):
        polyc.grad(polyc.define(source))


@pytest.mark.parametrize("source, uneven", [
    ("def f(float(N, M) A) -> (D) { D(i, j) +=! A(i, k) * A(j, k) where j in 0:i + 1 }", True),
    ("def f(float(M, M) A) -> (y) { y(i) +=! A(k, i) where k in i + 1:M }", True),
    (KERNELS["banded"][0], False),     # a band moves with i: the same work per row
    ("def f(float(M, M) A) -> (y) { y(i) +=! A(i, k) }", False),
])
def test_triangles_have_uneven_work_and_bands_do_not(source, uneven):
    [statement] = frontend(source).statements
    assert has_uneven_extent(statement) is uneven


def _compiled(name, machine, spelling="where"):
    source = KERNELS[name][0] if spelling == "where" else TERNARY[name]
    return generate(frontend(source), Options().with_(machine=machine))


def test_threads_share_a_triangle_where_its_work_divides_evenly(machine):
    # syrk's rows hold uneven work (row i: i + 1 columns), and so do its columns: only
    # the rows are shared (a grid's boxes would not hold a product of their works)
    syrk = _compiled("syrk", machine)
    [rows] = [p.loops for p in syrk.partitions.values() if any(l.work for l in p.loops)]
    assert len(rows) == 1 and str(rows[0].value).endswith("-> [(i)] }")
    assert rows[0].unit > 1   # whole register blocks
    # trmm: the columns' work is even, the rows' is not: a grid of both
    trmm = _compiled("trmm", machine)
    [loops] = [p.loops for p in trmm.partitions.values() if any(l.work for l in p.loops)]
    assert {str(l.value)[-7:]: bool(l.work) for l in loops} == {"[(j)] }": False,
                                                                 "[(i)] }": True}
    for compilation in (syrk, trmm):
        text = compilation.c_source.text
        assert "polyc_cut(polyc_work" in text and "schedule(dynamic)" not in text
    # a band moves with i: the same work per row, boxes of even extent as before
    assert "polyc_cut(polyc_work" not in _compiled("banded", machine).c_source.text


def _parameters(space_of) -> list[str]:
    return [space_of.get_dim_name(isl.dim_type.param, k)
            for k in range(space_of.dim(isl.dim_type.param))]


def _at(names: list[str], values: dict) -> isl.Set:
    fixed = " and ".join(f"{n} = {values[n]}" for n in names)
    return isl.Set(f"[{', '.join(names)}] -> {{ : {fixed} }}")


@pytest.mark.parametrize("name, spelling", [("trmm", "where"), ("syrk", "where"),
                                            ("symm", "where"), ("causal_attention", "where"),
                                            ("trmm", "select")])
def test_a_loops_work_counts_its_instances(name, spelling, machine):
    # the work polyc derives for each value v of a shared loop against isl's count of
    # the instances with that value, at a few sizes, for every v in the loop's range
    compilation = _compiled(name, machine, spelling)
    checked = 0
    for loop in (l for p in compilation.partitions.values() for l in p.loops if l.work):
        for piece in isl_items(loop.value.get_pw_aff_list()):
            extents = dict(loop.work)[piece.get_domain_space().get_tuple_name(isl.dim_type.set)]
            names = _parameters(piece)
            zero = isl.Aff.zero_on_domain(isl.LocalSpace.from_space(piece.get_domain_space()))
            for size in (1, 6, 11):
                sizes = {n: size + 3 * k for k, n in enumerate(names)}
                instances = compilation.program.domain.extract_set(
                    piece.domain().get_space()).intersect_params(_at(names, sizes))
                first, last = (_at(_parameters(end), sizes).sample_point()
                               for end in (loop.first, loop.last))
                for value in range(loop.first.eval(first).to_python(),
                                   loop.last.eval(last).to_python() + 1):
                    slice_ = instances.intersect(piece.eq_set(isl.PwAff.from_aff(
                        zero.set_constant_val(isl.Val(value)))))
                    product = 1
                    for extent in extents:
                        point = _at(_parameters(extent), dict(sizes, polyc_value=value))
                        product *= extent.eval(point.sample_point()).to_python()
                    assert product == slice_.count_val().to_python(), (sizes, value)
                    checked += 1
    assert checked


def test_explain_shows_the_triangle_and_its_isolated_blocks(machine):
    text = str(polyc.define(KERNELS["trmm"][0], machine=machine).explain())
    assert "k in i + 1:M" in text
    assert "isolate" in text  # the register band's full blocks (scheduling/full_blocks.py)
    assert "i (blocks of " in text and "cut where its work divides evenly" in text


def test_the_example_script_checks_its_operators_against_numpy(capsys):
    path = Path(__file__).resolve().parents[2] / "examples" / "triangles.py"
    spec = importlib.util.spec_from_file_location("triangles_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    errors = module.main(37)
    assert set(errors) == {"syrk (where)", "syrk (select)", "causal attention"}
    assert all(error < 1e-5 for error in errors.values()), errors
    assert "0 <= j <= i" in capsys.readouterr().out  # the triangle, as isl sees it
