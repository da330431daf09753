"""``python -m tests.models``: which compiler target each named model runs under, and
which models a host without their instruction set skips."""
import pytest

import models
from polyc.machine import NAMED_MACHINES


@pytest.mark.parametrize("name", sorted(NAMED_MACHINES))
def test_every_named_model_compiles_for_its_own_instruction_set(name, monkeypatch):
    monkeypatch.delenv("POLYC_CFLAGS", raising=False)
    isa = NAMED_MACHINES[name].isa
    env = models.environment(name)
    assert env["POLYC_MACHINE"] == name
    expected = {"avx512": "-march=skylake-avx512", "avx2": "-march=haswell",
                "sse2": "-march=x86-64"}[isa]
    assert env["POLYC_CFLAGS"] == expected
    assert env["POLYC_CACHE_DIR"].endswith(name)


def test_a_host_without_the_instruction_set_skips_the_model_and_says_what_it_lacks(
        monkeypatch):
    monkeypatch.setattr(models, "host_features", lambda: frozenset({"sse2", "avx"}))
    assert models.runnable("x86-64") is None
    reason = models.runnable("zen3")
    assert reason is not None and "avx2" in reason and "fma" in reason
    assert "avx512f" in models.runnable("zen5")


def test_the_campaign_names_an_unknown_model_and_runs_nothing(capsys):
    assert models.main(["zen9"]) == 2
    assert "zen9" in capsys.readouterr().err


def test_the_callers_flags_stay_and_the_models_target_comes_last(monkeypatch):
    monkeypatch.setenv("POLYC_CFLAGS", "-g -march=native")
    assert models.environment("zen3")["POLYC_CFLAGS"] == "-g -march=native -march=haswell"
