"""The machine model: named models, detection, overrides, and where it reaches."""
import dataclasses
import json
from pathlib import Path

import pytest

import polyc
from polyc.compiler import frontend, generate
from polyc.machine import NAMED_MACHINES, Machine, host_machine, named_machine
from polyc.machine import detect, rules
from polyc.machine.memo import private_directory, read_memo, write_memo
from polyc.options import Options

from child_process import run_json

MATMUL = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"


def test_the_host_is_detected_once_as_a_valid_model():
    host = host_machine()
    assert host is host_machine()
    assert host.isa in ("generic", "sse2", "avx2", "avx512")
    assert host.l1 < host.l2 <= host.l3 and host.line >= 16 and host.cores >= 1
    assert "detected" in host.source
    assert Options().machine == host


CPUINFO = ("processor\t: {core}\nvendor_id\t: AuthenticAMD\ncpu MHz\t\t: {mhz}\n"
           "flags\t\t: fpu sse2 {flags}\n\n")


def test_archspecs_answer_is_remembered_per_cpu(tmp_path, monkeypatch):
    cpuinfo = tmp_path / "cpuinfo"
    monkeypatch.setattr(detect, "_CPUINFO", cpuinfo)
    cpuinfo.write_text(CPUINFO.format(core=0, mhz="2000.1", flags="avx2"))
    memo = detect._memo_path(tmp_path / "host")
    if memo is None:
        pytest.skip("archspec's database is not a file here")
    cpuinfo.write_text(CPUINFO.format(core=1, mhz="3499.9", flags="avx2"))  # clock, core
    assert detect._memo_path(tmp_path / "host") == memo
    cpuinfo.write_text(CPUINFO.format(core=0, mhz="2000.1", flags="avx2 avx512f"))
    assert detect._memo_path(tmp_path / "host") != memo     # another CPU
    found = ("zen3", "AuthenticAMD", frozenset({"avx2", "fma"}))
    detect._write_memo(memo, found)
    assert detect._read_memo(memo) == found
    memo.chmod(0o666)                                       # others could have written it
    assert detect._read_memo(memo) is None
    memo.chmod(0o600)
    memo.write_text('{"name": "zen3"')
    assert detect._read_memo(memo) is None


def test_a_memo_written_first_leaves_the_cache_directory_private(tmp_path):
    # The compiler's memo is the first file of a fresh cache in some processes: every
    # directory it creates on the way, the cache itself included, is the user's alone.
    cache = tmp_path / "cache"
    write_memo(cache / "compilers" / "cc.json", {"identity": "cc"})
    assert read_memo(cache / "compilers" / "cc.json") == {"identity": "cc"}
    for directory in (cache, cache / "compilers"):
        assert directory.stat().st_mode & 0o777 == 0o700
    mode = tmp_path.stat().st_mode
    private_directory(tmp_path / "a" / "b")
    assert tmp_path.stat().st_mode == mode
    assert all((tmp_path / part).stat().st_mode & 0o777 == 0o700 for part in ("a", "a/b"))


# Defines an operator with the environment's options, says whether archspec was asked.
HOST_CHILD = """
import json, sys
import polyc
polyc.define("def f(float(N) A) -> (B) { B(i) = A(i) }")
from polyc.api import environment_options
print(json.dumps({"archspec": "archspec.cpu" in sys.modules,
                  "machine": environment_options().machine.key}))
"""


def test_a_new_process_reads_the_host_back_instead_of_asking_archspec(tmp_path):
    # the host model even where the caller's POLYC_MACHINE names another ("" is the host)
    env = {"POLYC_CACHE_DIR": str(tmp_path), "POLYC_MACHINE": ""}
    first = run_json(HOST_CHILD, env=env)
    second = run_json(HOST_CHILD, env=env)
    assert first["archspec"] and first["machine"] == second["machine"]
    if list((tmp_path / "host").glob("*.json")):  # where the platform has /proc/cpuinfo
        assert not second["archspec"]


@pytest.mark.parametrize("features, unit", [
    ({"avx512f", "avx2", "fma"}, ("avx512", 512, 32, 2)),  # Intel's too (measured faster)
    ({"avx2", "fma"}, ("avx2", 256, 16, 2)),
    ({"sse2"}, ("sse2", 128, 16, 0)),
])
def test_the_vector_unit_follows_the_features(features, unit, monkeypatch):
    monkeypatch.setattr(detect.platform, "machine", lambda: "x86_64")
    assert detect._vector_unit(frozenset(features)) == unit


def test_named_models_differ_in_their_keys_and_compare_without_their_source():
    keys = {m.key for m in NAMED_MACHINES.values()}
    assert len(keys) == len(NAMED_MACHINES)
    zen3 = NAMED_MACHINES["zen3"]
    assert dataclasses.replace(zen3, source="elsewhere") == zen3
    assert dataclasses.replace(zen3, l2=zen3.l2 * 2) != zen3
    assert "AVX2" in str(zen3) and "L2 512 KiB" in str(zen3)


def test_the_machine_is_chosen_by_name_file_or_environment(tmp_path):
    assert named_machine("zen5") is NAMED_MACHINES["zen5"]
    assert named_machine("host") == host_machine()
    path = tmp_path / "box.json"
    path.write_text(json.dumps({"base": "zen3", "l2": 2 * 1024 * 1024}))
    box = named_machine(str(path))
    assert box.l2 == 2 * 1024 * 1024 and box.isa == "avx2" and str(path) in box.source
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps({k: v for k, v in dataclasses.asdict(NAMED_MACHINES["zen4"])
                                 .items() if k != "source"}))
    assert named_machine(str(whole)) == NAMED_MACHINES["zen4"]
    assert Options.from_environment({"POLYC_MACHINE": "skylake-avx512"}).machine == \
        NAMED_MACHINES["skylake-avx512"]
    assert Options(machine="x86-64").machine is NAMED_MACHINES["x86-64"]
    assert polyc.define(MATMUL, machine="zen3").options.machine is NAMED_MACHINES["zen3"]


@pytest.mark.parametrize("content, message", [
    (None, "unknown machine 'pentium'"),
    ("{", "cannot read machine file"),
    ("[1, 2]", "expected a JSON object"),
    ('{"base": "zen3", "l4": 1}', "unknown field"),
    ('{"base": "zen9"}', "unknown base"),
    ('{"name": "x"}', "missing field"),
    ('{"base": "zen3", "isa": "avx1024"}', "unknown ISA"),
    ('{"base": "zen3", "l1": 0}', "l1 must be a positive integer"),
    ('{"base": "zen3", "vector_bits": 100}', "make no SIMD unit"),
    ('{"base": "zen3", "line": 48}', "not a power of two"),
])
def test_a_bad_machine_is_a_configuration_error(tmp_path, content, message):
    spec = "pentium"
    if content is not None:
        spec = str(tmp_path / "bad.json")
        Path(spec).write_text(content)
    with pytest.raises(polyc.ConfigurationError, match=message):
        Options.from_environment({"POLYC_MACHINE": spec})
    with pytest.raises(polyc.ConfigurationError, match="must be a polyc.Machine or a name"):
        Options(machine=3)


@pytest.mark.parametrize("line, expected", [("128", 128), ("48", 64), ("0", 64)])
def test_the_caches_come_from_sysfs_and_a_line_no_machine_takes_falls_back(
        tmp_path, monkeypatch, line, expected):
    for index, (level, size) in enumerate([(1, "48K"), (2, "2048K"), (3, "16384K")]):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        for name, text in [("type", "Data" if level == 1 else "Unified"),
                           ("level", str(level)), ("size", size),
                           ("coherency_line_size", line)]:
            (folder / name).write_text(text + "\n")
    monkeypatch.setattr(detect, "_SYSFS_CACHE", tmp_path)
    assert detect._caches() == ((48 * 1024, 2048 * 1024, 16384 * 1024, expected), "sysfs")


def test_the_model_reaches_the_schedule_the_flags_and_explain(machine):
    compilation = generate(frontend(MATMUL), Options(machine=machine))
    rows, columns = rules.register_block(machine, 4)
    assert f"float polyc_acc[{rows}][{columns}]" in compilation.c_source.text
    assert f"machine={machine.name}" in compilation.c_source.text  # the header comment
    assert f"-mprefer-vector-width={machine.vector_bits}" in Options(machine=machine).cflags
    assert f"-falign-loops={machine.line}" in Options(machine=machine).cflags
    stats = polyc.define(MATMUL, machine=machine).explain((8, 8), (8, 8)).section("stats")
    assert str(machine).split(" [")[0] in stats
    assert f"register block {rows} × {columns}" in stats


@pytest.mark.needs_cc
def test_the_kernel_cache_key_covers_the_machine():
    from polyc.jit.cache import cache_key

    zen3, wider = Options(machine="zen3"), Options(machine=dataclasses.replace(
        NAMED_MACHINES["zen3"], l3=64 * 1024 * 1024))
    assert cache_key("int x;", zen3) != cache_key("int x;", wider)
    assert cache_key("int x;", zen3) == cache_key("int x;", Options(machine="zen3"))


def test_only_the_detection_module_reads_the_cpu_description():
    package = Path(polyc.__file__).parent
    readers = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                     if any(s in p.read_text() for s in ("/proc/cpuinfo", "/sys/devices")))
    assert readers == ["machine/detect.py"]


@pytest.mark.parametrize("name", sorted(NAMED_MACHINES))
def test_every_rule_holds_its_stated_bound(name):
    machine: Machine = NAMED_MACHINES[name]
    for element in (2, 4, 8):
        rows, columns = rules.register_block(machine, element)
        assert 2 * rows + 3 <= machine.vector_registers and rows <= rules.MAX_BLOCK_ROWS
        assert columns == 2 * machine.vector_bytes // element
        depth = rules.panel_depth(machine, columns, element)
        assert depth in (rules.MIN_PANEL_DEPTH, rules.MAX_PANEL_DEPTH) \
            or depth * columns * element <= machine.l1 // 2 < 2 * depth * columns * element
        deeper = rules.streamed_depth(machine, element, depth, 1, False)
        assert deeper == depth or rows * deeper * element <= machine.l1 // 2
    assert rules.tile_budget(machine) == machine.l2 // 2
    assert rules.panel_budget(machine) <= machine.l2 // 4
    tile = rules.transpose_tile(machine)
    assert tile == 16 or tile * machine.line <= machine.l1 // 2
    for element in (2, 4, 8):
        subtile = rules.transpose_subtile(machine, element)
        assert tile % subtile == 0 and subtile * element <= machine.line


def test_an_unknown_option_is_a_configuration_error_naming_it():
    source = "def f(float(N) x) -> (y) { y(i) = x(i) }"
    with pytest.raises(polyc.ConfigurationError, match="unknown option threads; options are"):
        polyc.define(source, threads=2)
    with pytest.raises(polyc.ConfigurationError, match="unknown options colour, size"):
        Options().with_(size=1, colour="red")
    assert polyc.define(source, fusion="min").options.fusion == "min"


def test_the_vendor_and_vector_unit_come_from_the_cpus_own_flags(monkeypatch):
    # A VM hiding one flag of its part is matched to a generic level (x86_64_v3 here,
    # vendor "generic") whose feature list lacks AVX-512: the CPU's flags still decide.
    import archspec.cpu
    import archspec.cpu.detect

    generic = archspec.cpu.TARGETS["x86_64_v3"]
    flags = frozenset(generic.features) | {"avx512f", "avx512vl", "fma"}
    info = archspec.cpu.Microarchitecture("", [], "AuthenticAMD", set(flags), {})
    monkeypatch.setattr(archspec.cpu, "host", lambda: generic)
    monkeypatch.setattr(archspec.cpu.detect, "detected_info", lambda: info)
    name, vendor, features = detect._ask_archspec()
    assert (name, vendor) == ("x86_64_v3", "AuthenticAMD") and "avx512f" in features
    assert detect._vector_unit(features)[:2] == ("avx512", 512)
