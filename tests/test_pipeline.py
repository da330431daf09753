"""polyc/compiler.py: the pipeline is a list of named stages over one record."""
import islpy as isl

from polyc.compiler import PIPELINE, Compilation, frontend, generate
from polyc.options import Options

MATMUL = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"


def test_every_stage_that_applies_runs_once_in_order_and_is_timed():
    compilation = generate(frontend(MATMUL), Options())
    assert list(compilation.seconds) == [stage.name for stage in PIPELINE]
    assert isinstance(compilation, Compilation) and compilation.c_source is not None


def test_stages_are_skipped_by_their_own_predicate():
    plain = generate(frontend(MATMUL), Options(optimize=False, parallel=False))
    assert list(plain.seconds) == ["domains", "dependences", "schedule", "ast", "c"]
    assert plain.partitioned is None and plain.contractions == {} and plain.folded == {}
    serial = generate(frontend(MATMUL), Options(parallel=False))
    assert "thread partition" not in serial.seconds and "folds" in serial.seconds


def test_stage_names_are_unique():
    names = [stage.name for stage in PIPELINE]
    assert len(names) == len(set(names))


def _same(a, b) -> bool:
    """Whether two compilations are one generation (each call times its canonical form)."""
    return a.c_source is b.c_source and a.ast is b.ast


def test_the_same_operator_and_options_are_generated_once_per_process():
    first = generate(frontend(MATMUL), Options())
    assert _same(generate(frontend(MATMUL), Options()), first)  # parsed again: equal IR
    assert not _same(generate(frontend(MATMUL), Options(fusion="min")), first)
    other = frontend(MATMUL.replace("mm(", "mm2("))
    assert generate(other, Options()).op.name == "mm2"
    generate.forget()
    again = generate(frontend(MATMUL), Options())
    assert not _same(again, first) and again.c_source.text == first.c_source.text


def test_two_spellings_with_one_canonical_form_are_generated_once():
    # a lower triangle chosen by a select on the indices, and written as its domain
    where = ("def syrk(float(N, M) A) -> (D) {\n"
             "  D(i, j) +=! A(i, k) * A(j, k) where j in 0:i + 1 }")
    select = ("def syrk(float(N, M) A) -> (D) {\n"
              "  D(i, j) +=! j <= i ? A(i, k) * A(j, k) : 0.0 where j in 0:N }")
    generate.forget()
    first = generate(frontend(where), Options())
    second = generate(frontend(select), Options())
    assert frontend(where) != frontend(select) and _same(first, second)
    unoptimized = Options(optimize=False)  # no canonical form: the spellings stay two
    assert not _same(generate(frontend(where), unoptimized),
                     generate(frontend(select), unoptimized))


def test_remember_sets_how_many_compilations_the_process_keeps():
    import polyc.compiler as compiler

    kept = compiler._remembered
    try:
        compiler.remember(1)
        first = generate(frontend(MATMUL), Options())
        assert _same(generate(frontend(MATMUL), Options()), first)
        generate(frontend(MATMUL), Options(fusion="min"))  # pushes the first out
        assert not _same(generate(frontend(MATMUL), Options()), first)
        compiler.remember(0)
        assert not _same(generate(frontend(MATMUL), Options()),
                         generate(frontend(MATMUL), Options()))
    finally:
        compiler._remembered = kept


def test_a_patched_pipeline_runs_again_and_is_not_remembered(monkeypatch):
    # tests/conftest.py: under monkeypatch, generate() runs the pipeline every time
    import polyc.compiler as compiler

    assert generate(frontend(MATMUL), Options()).c_source is not None
    monkeypatch.setattr(compiler, "PIPELINE", tuple(
        stage for stage in compiler.PIPELINE if stage.name != "c"))
    assert generate(frontend(MATMUL), Options()).c_source is None


def test_the_scheduler_answers_the_same_constraints_once():
    # one operator's fusion candidates and strategies ask isl the same questions: the
    # remembered answer is the schedule isl gives, and the C is the same
    from polyc.scheduling import schedule_tree

    softmax = ("def softmax(float(N, D) X) -> (Y) { m(n) max=! X(n, d)\n"
               "  s(n) +=! exp(X(n, d) - m(n))\n  Y(n, d) = exp(X(n, d) - m(n)) / s(n) }")
    generate.forget()
    schedule_tree._SCHEDULES.clear()
    first = generate(frontend(softmax), Options(fusion="min"))
    asked = dict(schedule_tree._SCHEDULES)
    assert asked
    generate.forget()
    again = generate(frontend(softmax), Options(fusion="min"))
    assert dict(schedule_tree._SCHEDULES) == asked  # no new question
    assert again.c_source.text == first.c_source.text
    schedule_tree._SCHEDULES.clear()  # each question asked of isl afresh
    for (text, whole, serialize), schedule in asked.items():
        fresh = isl.ScheduleConstraints.read_from_str(isl.DEFAULT_CONTEXT, text)
        assert schedule_tree.isl_schedule(fresh, first.program, whole, serialize) \
            .get_map().is_equal(schedule.get_map())
