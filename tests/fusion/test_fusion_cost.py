"""The fusion cost model (polyc.scheduling.fusion_cost) and the default fusion's use of it:
expectations derived from the machine model's rules, under every named model."""
import islpy as isl
import pytest

import polyc
from corpus import CORPUS
from polyc.compiler import frontend, generate
from polyc.machine import rules
from polyc.options import Options
from polyc.poly.program import build_poly_program
from polyc.scheduling.fusion_choice import COST_TOLERANCE, FusionCandidate, cheapest_candidate
from polyc.scheduling.fusion_cost import (FusionCost, NestCost, NestShape, nominal_sizes,
                                          operations, schedule_cost)

LAYERNORM = """def ln(float(N, D) X) -> (Y) {
  mu(i) +=! X(i, j) / D
  var(i) +=! (X(i, j) - mu(i)) * (X(i, j) - mu(i)) / D
  Y(i, j) = (X(i, j) - mu(i)) / sqrt(var(i) + 1e-5)
}"""
MM2 = """def mm2(float(M, K) A, float(K, N) B, float(N, L) C) -> (E) {
  T(m, n) +=! A(m, k) * B(k, n)
  E(m, l) +=! T(m, n) * C(n, l)
}"""
BICG = """def bicg(float(N, M) A, float(N) r, float(M) p) -> (s, q) {
  s(j) +=! r(i) * A(i, j)
  q(i) +=! A(i, j) * p(j)
}"""
PASSES = """def passes(float(N) A, float(N) B) -> (C, D, E) {
  C(i) = A(i) + 1
  D(i) = B(i) + 1
  E(i) = A(i) * 2
}"""


def compiled(source, machine, **options):
    return generate(frontend(source), Options(machine=machine).with_(**options))


def program_of(source):
    return build_poly_program(frontend(source))


@pytest.mark.parametrize("source", [LAYERNORM, MM2, BICG])
def test_the_default_takes_the_most_fused_of_the_cheapest_acceptable_candidates(
        source, machine):
    schedule = compiled(source, machine).schedule
    scored = [c for c in schedule.candidates if c.cost is not None]
    chosen = [c for c in schedule.candidates if c.chosen]
    assert len(chosen) == 1 and chosen[0].cost is not None
    cheapest = min(c.cost.cycles for c in scored)
    assert chosen[0].cost.cycles <= cheapest * COST_TOLERANCE
    for earlier in scored[:scored.index(chosen[0])]:
        assert earlier.cost.cycles > cheapest * COST_TOLERANCE
    assert schedule.decision.startswith(chosen[0].name)
    assert scored[-1].name == "no fusion"  # always a candidate, never turned down
    for turned_down in set(schedule.candidates) - set(scored):
        assert turned_down.verdict


def test_fusion_saves_the_passes_over_data_between_nests(machine):
    """Layer norm fused reads X once and writes Y once, from and to memory, its
    temporaries never leaving L1; apart, two more nests read X again."""
    schedule = compiled(LAYERNORM, machine).schedule
    by_name = {c.name: c for c in schedule.candidates}
    fused, apart = by_name["maximal fusion"], by_name["no fusion"]
    assert fused.chosen
    x_bytes = rules.NOMINAL_EXTENT * rules.NOMINAL_EXTENT * 4
    assert fused.cost.bytes_from("memory") == 2 * x_bytes   # X in, Y out
    assert all(fused.cost.bytes_from(level) == 0 for level in ("L2", "L3"))
    beyond_l1 = sum(apart.cost.bytes_from(level) for level in ("L2", "L3", "memory"))
    assert beyond_l1 >= 4 * x_bytes                          # and X twice more
    assert apart.cost.cycles > fused.cost.cycles


def test_a_tensor_read_again_comes_from_the_nearest_level_holding_what_came_between(machine):
    program = program_of(PASSES)
    elements = machine.l1 // 2 // 4  # each tensor half of L1
    nests = tuple(NestShape((name,), False, frozenset(), frozenset())
                  for name in ("S0", "S1", "S2"))
    cost = schedule_cost(program, nests, machine, {"N": elements})
    size = elements * 4
    # the third nest reads A again after the second touched B and D
    expected = next(name for name, capacity, _ in rules.memory_levels(machine)
                    if 3 * size <= capacity)
    assert dict(cost.nests[2].transfer) == {expected: size, "memory": size}  # A, E
    assert dict(cost.nests[0].transfer) == {"memory": 2 * size}             # A, C first


def test_compute_runs_at_the_rate_the_loops_give_it(machine):
    program = program_of(PASSES)
    sizes = {"N": 4096}

    def compute(**shape):
        nest = NestShape(("S0",), shape.get("parallel", False),
                         frozenset({"S0"}) if shape.get("vector") else frozenset(),
                         frozenset({"S0"}) if shape.get("blocked") else frozenset())
        return schedule_cost(program, (nest,), machine, sizes).nests[0]

    scalar, vector = compute(), compute(vector=True)
    assert scalar.compute == 4096 * operations(program.statement("S0"))
    assert scalar.compute / vector.compute == rules.operations_per_cycle(machine, 4, True, False)
    assert compute(vector=True, blocked=True).compute == pytest.approx(
        scalar.compute / rules.operations_per_cycle(machine, 4, True, True))
    assert compute(parallel=True).threads == machine.cores
    assert compute(parallel=True).cycles == pytest.approx(scalar.cycles / machine.cores)


def test_window_sizes_are_nominally_small():
    program = program_of("""def conv(float(H) I, float(R) W) -> (O) {
      O(h) +=! I(h + r) * W(r)
    }""")
    assert nominal_sizes(program) == {"H": rules.NOMINAL_EXTENT, "R": rules.NOMINAL_WINDOW}


@pytest.mark.parametrize("entry", CORPUS, ids=[c.name for c in CORPUS])
def test_the_nominal_sizes_satisfy_what_is_known_of_the_sizes(entry):
    program = build_poly_program(frontend(entry.source, entry.def_name))
    sizes = nominal_sizes(program)
    point = isl.Set("[" + ", ".join(sizes) + "] -> { : "
                    + " and ".join(f"{k} = {v}" for k, v in sizes.items()) + " }"
                    ) if sizes else isl.Set("{ : }")
    assert not program.context.intersect_params(point).is_empty()


def _cost(cycles):
    return FusionCost((NestCost(("S",), 1, cycles, (), 0.0),), (("N", 1),))


def test_estimates_within_the_tolerance_count_as_equal_and_the_more_fused_wins():
    fused = FusionCandidate("maximal fusion", _cost(100.0 * COST_TOLERANCE * 0.999), "")
    apart = FusionCandidate("no fusion", _cost(100.0), "")
    assert cheapest_candidate([fused, apart]) is fused
    costly = FusionCandidate("maximal fusion", _cost(100.0 * COST_TOLERANCE * 1.01), "")
    assert cheapest_candidate([costly, apart]) is apart
    turned_down = FusionCandidate("isl's default fusion", None, "would serialise")
    assert cheapest_candidate([turned_down, apart]) is apart


def test_explain_shows_the_candidates_and_their_costs():
    text = str(polyc.define(BICG).explain())
    assert "candidates (cost estimated at N = 1024, M = 1024)" in text
    assert "→ no fusion:" in text and "M cycles" in text
    assert "turned down: maximal fusion would lose the vector loop" in text


def test_a_walk_across_lines_moves_a_line_per_element(machine):
    program = program_of("def t(float(N, N) A) -> (B) { B(i, j) = A(j, i) }")
    n = 1024
    size = n * n * 4

    def moved(walked):
        nest = NestShape(("S0",), False, frozenset(), frozenset(), (("S0", walked),))
        return sum(count for _, count in schedule_cost(program, (nest,), machine,
                                                       {"N": n}).nests[0].transfer)

    line = rules.line_elements(machine, 4)
    assert moved(frozenset({1})) == size * line + size   # along j: A's columns
    assert moved(frozenset({0})) == size + size * line   # along i: B's columns
    assert moved(frozenset()) == 2 * size                # no walk known: no penalty


def test_fusion_that_turns_a_row_walk_into_a_column_walk_costs_more(machine):
    """bicg's column sum fused with its initialisation runs its vector loop down A's
    columns; apart it runs along A's rows."""
    schedule = compiled(BICG, machine).schedule
    chosen = next(c for c in schedule.candidates if c.chosen)
    assert chosen.name == "no fusion"
    for other in schedule.candidates:
        if other.cost is not None and other is not chosen:
            assert other.cost.cycles > chosen.cost.cycles * COST_TOLERANCE
