"""No source text, however malformed, gets anything but a PolycError out of the front end."""
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polyc
from corpus import CORPUS
from polyc.compiler import frontend

SOURCES = [c.source for c in CORPUS]


def front_end_outcome(source: str) -> None:
    try:
        frontend(source)
    except polyc.PolycError as error:
        str(error)  # formatting the message must not fail either


@settings(max_examples=int(os.environ.get("POLYC_FUZZ_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SOURCES), st.data())
def test_mutated_programs_raise_only_polyc_errors(source, data):
    position = data.draw(st.integers(0, len(source)))
    action = data.draw(st.sampled_from(["truncate", "delete", "insert", "swap"]))
    if action == "truncate":
        text = source[:position]
    elif action == "delete":
        text = source[:position] + source[position + data.draw(st.integers(1, 8)):]
    elif action == "insert":
        text = source[:position] + data.draw(st.sampled_from(
            ["(", ")", ",", "i", "N", "+=!", "where", "k in 0:", "A(", "0", ".5", "?", ":",
             "exp(", "-", "!", "max=!", "def", "{", "}", "->", "float", "T.1"])) + \
            source[position:]
    else:
        words = source.split(" ")
        a = data.draw(st.integers(0, len(words) - 1))
        b = data.draw(st.integers(0, len(words) - 1))
        words[a], words[b] = words[b], words[a]
        text = " ".join(words)
    front_end_outcome(text)


@settings(max_examples=int(os.environ.get("POLYC_FUZZ_EXAMPLES", "200")), deadline=None)
@given(st.text(alphabet=st.sampled_from(list("defAOijkMN(),=+*-/<>!?:.{}01 \n#whr")),
               max_size=120))
def test_token_soup_raises_only_polyc_errors(text):
    front_end_outcome(text)


@pytest.mark.parametrize("terms", [3000])
def test_long_expressions_are_errors_or_fine_never_recursion(terms):
    source = "def f(float(N) A) -> (O) { O(i) = " + " + ".join(["A(i)"] * terms) + " }"
    limit = sys.getrecursionlimit()
    try:
        front_end_outcome(source)
    finally:
        assert sys.getrecursionlimit() == limit


def test_define_compiles_nothing(tmp_path, monkeypatch):
    import polyc.api

    def refuse(*args, **kwargs):
        raise AssertionError("define() must not compile")

    monkeypatch.setattr(polyc.api, "load_operator", refuse)
    op = polyc.define(CORPUS[0].source, CORPUS[0].def_name)
    assert op.name == CORPUS[0].def_name
