"""The order of collapsed parallel loops (polyc.scheduling.sharing_order): loops over a
window or a constant range go inside the loops that grow with the tensors, so that
OpenMP's static chunks split along the long loops."""
import islpy as isl
import numpy as np

import polyc
from polyc.compiler import generate
from polyc.poly.program import isl_items
from polyc.scheduling.marks import PARALLEL_MARK, node_mark
from polyc.scheduling.sharing_order import growth_points, sharing_order

CONV = """def conv(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) {
  O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s)
}"""
MATMUL = "def matmul(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"


def _parallel_bands(tree: isl.Schedule):
    """The bands right under a parallel mark (and a collapse mark)."""
    found = []

    def visit(node):
        if node_mark(node) == PARALLEL_MARK:
            band = node.child(0)
            while band.get_type() == isl.schedule_node_type.mark:
                band = band.child(0)
            found.append(band)
            return
        for k in range(node.n_children()):
            visit(node.child(k))
    visit(tree.get_root())
    return found


def _member_indices(band, statement: str) -> list[str]:
    """For each member of ``band``, the index of ``statement`` it walks (``r`` for
    ``r - r mod 2``)."""
    result = []
    partial = band.band_get_partial_schedule()
    for k in range(band.band_n_member()):
        for pw_aff in isl_items(partial.get_at(k).get_pw_aff_list()):
            space = pw_aff.get_domain_space()
            if space.get_tuple_name(isl.dim_type.set) != statement:
                continue
            result.append(next(space.get_dim_name(isl.dim_type.set, d)
                               for d in range(space.dim(isl.dim_type.set))
                               if pw_aff.involves_dims(isl.dim_type.in_, d, 1)))
    return result


def test_the_weight_gradient_shares_out_its_output_channels_not_its_windows(machine):
    """d_F(k, c, r, s) is computed with its windows outermost; collapsed as r, s, k, c a
    static schedule would give one thread the first r tile (two rows of three)."""
    grad = polyc.grad(polyc.define(CONV, machine=machine), wrt=("F",))
    compilation = grad.compilation()
    writer = next(s.name for s in compilation.program.statements
                  if s.statement.tensor.startswith("d_F") and not s.is_init
                  and s.statement.reduction_indices)
    band = next(b for b in _parallel_bands(compilation.schedule.tree)
                if writer in b.get_domain().to_str())
    members = _member_indices(band, writer)
    long_first = [m for m in members if m in ("k", "c")]
    assert members[:len(long_first)] == long_first and len(long_first) == 2, members
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    f = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    d_o = rng.standard_normal((2, 4, 4, 6)).astype(np.float32)
    expected = np.einsum("nkhw,nchrws->kcrs", d_o.astype(np.float64), np.lib.stride_tricks
                         .sliding_window_view(x.astype(np.float64), (3, 2), axis=(2, 3))
                         .transpose(0, 1, 2, 4, 3, 5))
    np.testing.assert_allclose(grad(x, f, d_o), expected, rtol=1e-4, atol=1e-4)


def test_no_member_or_every_member_short_keeps_the_order():
    compilation = generate(polyc.define(MATMUL).ir, polyc.Options())
    for band in _parallel_bands(compilation.schedule.tree):
        count = band.band_n_member()
        points = growth_points(compilation.program)
        assert sharing_order(band, count, points) == list(range(count))
    small = "def f(float(3, 4) X) -> (Y) { Y(i, j) = X(i, j) * 2.0 }"
    compilation = generate(polyc.define(small).ir, polyc.Options())
    for band in _parallel_bands(compilation.schedule.tree):
        count = band.band_n_member()
        points = growth_points(compilation.program)
        assert sharing_order(band, count, points) == list(range(count))
