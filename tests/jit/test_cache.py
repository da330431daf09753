"""The kernel cache: memory and disk hits, corruption, concurrency, unsafe directories,
and compiler failures."""
import ctypes
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
import warnings
from pathlib import Path

import pytest

from polyc.errors import CompileError
from polyc.jit import CacheWarning, KernelCache, get_library
from polyc.jit.build import build_shared_object
from polyc.jit import toolchain
from polyc.jit.toolchain import compiler_identity
from polyc.options import Options
from child_process import child_environment, run_json

REPO = Path(__file__).resolve().parents[2]

# Loads the source from argv[2] through the cache at argv[1]; prints how it went.
CHILD = """
import json, sys
from polyc.jit import get_library
from polyc.options import Options
library = get_library(sys.argv[2], Options(cache_dir=sys.argv[1]))
print(json.dumps({"hit": library.cache_hit, "value": library.cdll.add1(41)}))
"""


def unique_source() -> str:
    """A C source no earlier test (nor the process-wide memory cache) has seen."""
    return f"int add1(int x) {{ return x + 1; }}\n/* {uuid.uuid4().hex} */\n"


def load_in_child(cache_dir: Path, source: str) -> dict:
    return run_json(CHILD, str(cache_dir), source, timeout=60)


def entry_files(cache_dir: Path, key: str) -> tuple[Path, Path]:
    return cache_dir / key[:2] / f"{key}.so", cache_dir / key[:2] / f"{key}.sha256"


@pytest.mark.needs_cc
def test_miss_then_memory_hit(tmp_path):
    options = Options(cache_dir=tmp_path / "cache")
    source = unique_source()
    first = get_library(source, options)
    assert first.cache_hit == "miss" and first.compile_seconds > 0
    assert first.cdll.add1(41) == 42
    so_path, sum_path = entry_files(tmp_path / "cache", first.key)
    assert first.so_path == so_path
    assert sum_path.read_text().strip() == hashlib.sha256(so_path.read_bytes()).hexdigest()
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o700

    second = get_library(source, options)
    assert second.cache_hit == "memory" and second.compile_seconds == 0
    assert second.cdll is first.cdll


@pytest.mark.needs_cc
def test_memory_hit_touches_no_file(tmp_path):
    options = Options(cache_dir=tmp_path / "cache")
    source = unique_source()
    get_library(source, options)
    for path in sorted((tmp_path / "cache").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (tmp_path / "cache").rmdir()
    assert get_library(source, options).cache_hit == "memory"
    assert not (tmp_path / "cache").exists()


@pytest.mark.needs_cc
def test_fresh_process_gets_disk_hit(tmp_path):
    source = unique_source()
    assert load_in_child(tmp_path, source) == {"hit": "miss", "value": 42}
    assert load_in_child(tmp_path, source) == {"hit": "disk", "value": 42}
    library = KernelCache().get_library(source, Options(cache_dir=tmp_path))
    assert library.cache_hit == "disk" and library.cdll.add1(1) == 2


@pytest.mark.needs_cc
def test_key_depends_on_flags(tmp_path):
    source = unique_source()
    plain = KernelCache().get_library(source, Options(cache_dir=tmp_path))
    other = KernelCache().get_library(source, Options(cache_dir=tmp_path,
                                                      extra_cflags=("-DPOLYC_TEST=1",)))
    assert plain.key != other.key and other.cache_hit == "miss"


@pytest.mark.needs_cc
def test_sources_that_differ_in_their_leading_comment_share_one_kernel(tmp_path):
    # the comment polyc puts first names the operator's options: the same C under two
    # fusion strategies is one shared object
    source = unique_source()
    options = Options(cache_dir=tmp_path)
    first = KernelCache().get_library("/*\n * options: fusion=default\n */\n" + source,
                                      options)
    second = KernelCache().get_library("/*\n * options: fusion=max\n */\n" + source,
                                       options)
    assert first.cache_hit == "miss" and second.cache_hit == "disk"
    assert second.key == first.key and second.cdll.add1(1) == 2
    # a comment further down is C the key covers, as is any other text
    moved = KernelCache().get_library(source + "/* options: fusion=max */\n", options)
    assert moved.key != first.key and moved.cache_hit == "miss"


def test_the_c_polyc_emits_names_no_line_number():
    # what lets the kernel key leave out the leading comment, whose length varies
    for path in sorted((REPO / "tests" / "golden" / "c").glob("*.c")):
        text = path.read_text()
        assert "__LINE__" not in text and not re.search(r"\bassert\s*\(", text), path.name


@pytest.mark.needs_cc
def test_truncated_shared_object_is_rebuilt(tmp_path):
    source = unique_source()
    # Populated by another process: truncating a file this process has mapped would crash it.
    load_in_child(tmp_path, source)
    [so_path] = tmp_path.rglob("*.so")
    with open(so_path, "r+b") as file:
        file.truncate(100)
    library = KernelCache().get_library(source, Options(cache_dir=tmp_path))
    assert library.cache_hit == "miss" and library.cdll.add1(1) == 2
    assert load_in_child(tmp_path, source)["hit"] == "disk"


@pytest.mark.needs_cc
def test_garbage_with_matching_checksum_is_rebuilt(tmp_path):
    source = unique_source()
    first = KernelCache().get_library(source, Options(cache_dir=tmp_path))
    so_path, sum_path = entry_files(tmp_path, first.key)
    garbage = b"\x7fELF this is not a shared object" * 10
    so_path.unlink()  # a new file: the loaded one must stay intact
    so_path.write_bytes(garbage)
    sum_path.unlink()
    sum_path.write_text(hashlib.sha256(garbage).hexdigest() + "\n")
    library = KernelCache().get_library(source, Options(cache_dir=tmp_path))
    assert library.cache_hit == "miss" and library.cdll.add1(2) == 3
    assert so_path.read_bytes() != garbage


@pytest.mark.needs_cc
def test_missing_checksum_is_rebuilt(tmp_path):
    source = unique_source()
    first = KernelCache().get_library(source, Options(cache_dir=tmp_path))
    so_path, sum_path = entry_files(tmp_path, first.key)
    sum_path.unlink()
    library = KernelCache().get_library(source, Options(cache_dir=tmp_path))
    assert library.cache_hit == "miss" and library.cdll.add1(2) == 3
    assert sum_path.read_text().strip() == hashlib.sha256(so_path.read_bytes()).hexdigest()


@pytest.mark.needs_cc
def test_concurrent_processes_compile_the_same_kernel(tmp_path):
    source = unique_source()
    children = [subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), source],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 cwd=REPO, env=child_environment())
                for _ in range(4)]
    for child in children:
        stdout, stderr = child.communicate(timeout=120)
        assert child.returncode == 0, stderr
        assert json.loads(stdout)["value"] == 42
    [so_path] = tmp_path.rglob("*.so")
    assert sorted(p.name for p in so_path.parent.iterdir()) == sorted(
        [so_path.name, so_path.stem + ".sha256"])  # no temporary left behind
    assert load_in_child(tmp_path, source)["hit"] == "disk"


@pytest.mark.needs_cc
def test_concurrent_threads_build_once(tmp_path):
    cache = KernelCache()
    source = unique_source()
    results = []
    threads = [threading.Thread(
        target=lambda: results.append(cache.get_library(source, Options(cache_dir=tmp_path))))
        for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.cache_hit for r in results) == ["memory"] * 5 + ["miss"]
    assert len({id(r.cdll) for r in results}) == 1


@pytest.mark.skipif(os.getuid() == 0, reason="root writes through chmod 0o500")
def test_read_only_cache_dir_falls_back(tmp_path):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir(mode=0o700)
    cache_dir.chmod(0o500)
    try:
        cache = KernelCache()
        with pytest.warns(CacheWarning, match="cannot write"):
            library = cache.get_library(unique_source(), Options(cache_dir=cache_dir))
        assert library.cdll.add1(1) == 2 and not library.so_path.is_relative_to(cache_dir)
    finally:
        cache_dir.chmod(0o700)


@pytest.mark.needs_cc
def test_uncreatable_cache_dir_falls_back_once(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    options = Options(cache_dir=tmp_path / "file" / "cache")
    cache = KernelCache()
    with pytest.warns(CacheWarning, match="cannot create") as record:
        first = cache.get_library(unique_source(), options)
        second = cache.get_library(unique_source(), options)
    assert len(record) == 1
    assert first.cdll.add1(1) == 2 and second.cdll.add1(2) == 3
    assert first.so_path.parent.parent == second.so_path.parent.parent  # one private dir


@pytest.mark.needs_cc
def test_world_writable_cache_dir_is_refused(tmp_path):
    cache_dir = tmp_path / "shared"
    cache_dir.mkdir()
    cache_dir.chmod(0o777)
    with pytest.warns(CacheWarning, match="writable by group or others"):
        library = KernelCache().get_library(unique_source(), Options(cache_dir=cache_dir))
    assert library.cdll.add1(1) == 2
    assert list(cache_dir.iterdir()) == []  # nothing written to, or loaded from, there


@pytest.mark.needs_cc
def test_cache_dir_under_a_world_writable_parent_is_refused(tmp_path):
    parent = tmp_path / "open"
    parent.mkdir()
    parent.chmod(0o777)  # anyone could rename `cache` and put their own in its place
    cache_dir = parent / "cache"
    with pytest.warns(CacheWarning, match="parent .*open is writable by group or others"):
        library = KernelCache().get_library(unique_source(), Options(cache_dir=cache_dir))
    assert library.cdll.add1(1) == 2
    assert list(cache_dir.iterdir()) == []


@pytest.mark.needs_cc
def test_cache_dir_under_a_sticky_world_writable_parent_is_used(tmp_path):
    parent = tmp_path / "like-tmp"
    parent.mkdir()
    parent.chmod(0o1777)  # the sticky bit: others cannot rename what is not theirs
    cache_dir = parent / "cache"
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        library = KernelCache().get_library(unique_source(), Options(cache_dir=cache_dir))
    assert library.cdll.add1(1) == 2
    assert library.so_path.is_relative_to(cache_dir)


@pytest.mark.needs_cc
@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a directory away")
def test_cache_dir_of_another_user_is_refused(tmp_path):
    cache_dir = tmp_path / "theirs"
    cache_dir.mkdir(mode=0o700)
    os.chown(cache_dir, 65534, 65534)
    with pytest.warns(CacheWarning, match="owned by user 65534"):
        library = KernelCache().get_library(unique_source(), Options(cache_dir=cache_dir))
    assert library.cdll.add1(1) == 2
    assert list(cache_dir.iterdir()) == []


def test_missing_compiler(tmp_path):
    with pytest.raises(CompileError, match=re.escape(
            "C compiler '/nonexistent/cc' not found (set POLYC_CC)")):
        get_library(unique_source(), Options(cache_dir=tmp_path, cc="/nonexistent/cc"))


@pytest.mark.needs_cc
def test_syntax_error_reports_compiler_output_and_keeps_source(tmp_path):
    source = "int add1(int x) { return x + ; }\n"
    with pytest.raises(CompileError) as error:
        KernelCache().get_library(source, Options(cache_dir=tmp_path))
    message = str(error.value)
    assert "error" in message and "exit status" in message
    [c_path] = re.findall(r"(/\S+\.c)\b", message.splitlines()[0])
    assert Path(c_path).read_text() == source
    assert Path(c_path).parent == tmp_path / "failed"
    assert not list(tmp_path.rglob("*.so"))


@pytest.mark.needs_cc
def test_long_compiler_output_is_truncated(tmp_path):
    source = "".join(f"int f{k}(void) {{ return undeclared{k}; }}\n" for k in range(200))
    with pytest.raises(CompileError) as error:
        build_shared_object(source, tmp_path / "k.so", Options(cache_dir=tmp_path))
    message = str(error.value)
    assert "undeclared0" in message and "more lines)" in message
    assert len(message) < 10_000


def test_a_failed_float16_build_names_a_compiler_without_float16(tmp_path):
    # A stand-in compiler that fails whatever it is given: the probe finds no _Float16,
    # and the float16 kernel's failed build says so first, then the compiler's output.
    cc = tmp_path / "cc"
    cc.write_text("#!/bin/sh\nexit 1\n")
    cc.chmod(0o755)
    options = Options(cache_dir=tmp_path, cc=str(cc))
    assert not toolchain.supports_float16(options)
    source = "_Float16 half(_Float16 x) { return x; }\n"
    with pytest.raises(CompileError, match=r"float16 tensors need a C compiler with _Float16 "
                                           r"\(GCC 12 or later, clang 15 or later\)"):
        build_shared_object(source, tmp_path / "k.so", options)


def fake_compiler(path: Path, hang_on_version: bool) -> str:
    path.write_text("#!/bin/sh\n"
                    + ("" if hang_on_version else
                       'case "$1" in --version) echo "fakecc 1.0"; exit 0;; '
                       '-dumpmachine) echo fake-linux; exit 0;; esac\n')
                    + "sleep 60\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("hang_on_version", [False, True])
def test_hanging_compiler_times_out(tmp_path, hang_on_version):
    cc = fake_compiler(tmp_path / "hangcc", hang_on_version)
    options = Options(cache_dir=tmp_path / "cache", cc=cc, cc_timeout=1)
    start = time.monotonic()
    with pytest.raises(CompileError, match="C compiler timed out after 1 s"):
        KernelCache().get_library(unique_source(), options)
    # The compiler's children (here `sleep`) die with it: no wait for them.
    assert time.monotonic() - start < 5


@pytest.mark.needs_cc
def test_compiler_identity_names_compiler_and_target():
    identity = compiler_identity(Options())
    path, version, machine = identity.splitlines()
    assert os.path.isabs(path) and version and machine
    assert compiler_identity(Options()) is identity


@pytest.mark.needs_cc
def test_compiler_identity_is_remembered_for_a_new_process(tmp_path, monkeypatch):
    options = Options(cache_dir=tmp_path)
    monkeypatch.setattr(toolchain, "_IDENTITIES", {})
    identity = compiler_identity(options)
    (memo,) = (tmp_path / "compilers").glob("*.json")
    monkeypatch.setattr(toolchain, "_IDENTITIES", {})   # a new process...

    def never(*args, **kwargs):
        raise AssertionError("the compiler was asked again")

    monkeypatch.setattr(toolchain, "run_compiler", never)
    assert compiler_identity(options) == identity       # ...reads it back
    memo.chmod(0o666)                                    # others could have written it
    monkeypatch.setattr(toolchain, "_IDENTITIES", {})
    with pytest.raises(AssertionError, match="asked again"):
        compiler_identity(options)


@pytest.mark.needs_cc
def test_a_wrapper_command_is_not_remembered(tmp_path, monkeypatch):
    monkeypatch.setattr(toolchain, "_IDENTITIES", {})
    compiler_identity(Options(cache_dir=tmp_path, cc="cc -w"))
    assert not (tmp_path / "compilers").exists()


@pytest.mark.needs_cc
def test_loads_with_ctypes_types(tmp_path):
    library = KernelCache().get_library(
        "double twice(double x) { return 2 * x; }\n", Options(cache_dir=tmp_path))
    twice = library.cdll.twice
    twice.restype, twice.argtypes = ctypes.c_double, [ctypes.c_double]
    assert twice(1.25) == 2.5


@pytest.mark.needs_cc
def test_unwritable_cache_entry_falls_back(tmp_path):
    # Works as root too: the entry's directory is taken by a file, so nothing can go there.
    from polyc.jit.cache import cache_key

    source = unique_source()
    options = Options(cache_dir=tmp_path)
    (tmp_path / cache_key(source, options)[:2]).write_text("in the way")
    with pytest.warns(CacheWarning, match="cannot write"):
        library = KernelCache().get_library(source, options)
    assert library.cache_hit == "miss" and library.cdll.add1(1) == 2
    assert not library.so_path.is_relative_to(tmp_path)
