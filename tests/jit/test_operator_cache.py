"""Operators found again by their checked IR and options: a process that has compiled
an operator before, or another with the same cache, runs no polyhedral stage and no C
compiler for it; anything that changes the C changes the key; a damaged record is
deleted and the operator compiled again."""
import json
import uuid
from pathlib import Path

import numpy as np
import pytest

import polyc
from polyc.jit import cache
from polyc.jit.cache import KernelCache, operator_key
from polyc.options import Options
from child_process import run_json

pytestmark = pytest.mark.needs_cc


def unique_source() -> tuple[str, str, int]:
    """A scaled matmul whose IR no earlier test has compiled (a name of its own)."""
    name, scale = f"scaled_{uuid.uuid4().hex[:12]}", 1 + uuid.uuid4().int % 100
    return f"""def {name}(float(M, K) A, float(K, N) B) -> (C) {{
      C(m, n) +=! A(m, k) * B(k, n) * {scale}
    }}""", name, scale


# Defines the operator of argv[2] with the cache at argv[1], calls it, prints how it went.
CHILD = """
import json, sys
import numpy as np
import polyc
op = polyc.define(sys.argv[2], cache_dir=sys.argv[1])
C = op(np.ones((3, 4), np.float32), np.ones((4, 5), np.float32))
kernel = op.compile()
print(json.dumps({"hit": kernel.cache_hit, "generated": op._compilation is not None,
                  "value": float(C[0, 0]), "c": kernel.c_source,
                  "compiler loaded": "polyc.compiler" in sys.modules}))
"""


def run_child(cache_dir: Path, source: str) -> dict:
    return run_json(CHILD, str(cache_dir), source)


def records(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "operators").rglob("*.json"))


def test_a_second_process_generates_nothing(tmp_path):
    source, name, scale = unique_source()
    first = run_child(tmp_path, source)
    assert first["hit"] == "miss" and first["generated"] and first["value"] == 4 * scale
    (record,) = records(tmp_path)
    fields = json.loads(record.read_text())
    assert fields["c_source"] == first["c"] and fields["entry"] == f"polyc_{name}"
    second = run_child(tmp_path, source)
    assert second["hit"] == "disk" and not second["generated"]
    assert first["compiler loaded"] and not second["compiler loaded"]  # not even imported
    assert second["value"] == 4 * scale and second["c"] == first["c"]


def test_the_same_operator_twice_in_one_process_is_generated_once(tmp_path):
    source, _, _ = unique_source()
    first = polyc.define(source, cache_dir=tmp_path)
    first.compile()
    again = polyc.define(source, cache_dir=tmp_path)
    kernel = again.compile()
    assert again._compilation is None and kernel.cache_hit == "memory"
    assert kernel.c_source == first.compile().c_source


def test_everything_that_shapes_the_c_is_in_the_key():
    op = polyc.define("def add(float(N) A) -> (B) { B(i) = A(i) + 1 }")
    other = polyc.define("def add(float(N) A) -> (B) { B(i) = A(i) + 2 }")
    doubled = polyc.define("def add(double(N) A) -> (B) { B(i) = A(i) + 1 }")
    options = Options()
    key = operator_key(op.ir, options)
    assert key == operator_key(polyc.define(str(op)).ir, options)  # the same IR
    variants = [operator_key(other.ir, options), operator_key(doubled.ir, options)]
    for change in ({"fusion": "min"}, {"parallel": False}, {"optimize": False},
                   {"canonicalize": False}, {"check_gathers": False},
                   {"place_threads": True}, {"machine": "x86-64"},
                   {"vector_math": frozenset({"expf"})}, {"extra_cflags": ("-O1",)}):
        variants.append(operator_key(op.ir, options.with_(**change)))
    assert len({key, *variants}) == len(variants) + 1


def test_a_changed_compiler_source_is_another_key(monkeypatch):
    op = polyc.define("def add(float(N) A) -> (B) { B(i) = A(i) + 1 }")
    before = operator_key(op.ir, Options())
    monkeypatch.setattr(cache, "source_fingerprint", lambda: "another polyc")
    assert operator_key(op.ir, Options()) != before


@pytest.mark.parametrize("damage", ["garbage", "fields", "entry", "kernel"])
def test_a_damaged_record_is_deleted_and_the_operator_compiled_again(tmp_path, damage):
    source, name, scale = unique_source()
    options = Options(cache_dir=tmp_path)
    op = polyc.define(source, options=options)
    op.compile()
    (record,) = records(tmp_path)
    fields = json.loads(record.read_text())
    if damage == "garbage":
        record.write_bytes(b"\xff{ not json")
    elif damage == "fields":
        record.write_text(json.dumps({"key": fields["key"]}))
    elif damage == "entry":
        record.write_text(json.dumps({**fields, "entry": "polyc_nothing"}))
    else:
        for path in tmp_path.glob(f"{fields['key'][:2]}/{fields['key']}.*"):
            path.unlink()
    fresh = KernelCache()  # a new process: nothing in memory
    library, compiled = fresh.load_operator(op.ir, options, op._generated)
    # The C is generated again; only a deleted kernel is compiled again.
    assert library.cache_hit == ("miss" if damage == "kernel" else "disk")
    assert compiled.entry == f"polyc_{name}" and compiled.c_source == fields["c_source"]
    assert json.loads(record.read_text()) == {**fields, "key": compiled.key}
    A, B = np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)
    again = polyc.define(source, options=options)
    np.testing.assert_allclose(again(A, B), np.full((2, 2), 3 * scale))
