"""Precompiled headers: the kernels' opening lines are parsed once per compiler and
flags, the C that is cached stays whole, and a header that is damaged or that the
compiler cannot read never fails a build."""
import hashlib
import time
import uuid
from pathlib import Path

import pytest

from polyc.codegen.c_names import PREAMBLE
from polyc.errors import CompileTimeout
from polyc.jit import KernelCache, headers
from polyc.jit.headers import GCC_MAGIC, HEADER_NAME, leading_lines, precompiled_header
from polyc.jit.toolchain import compiler_command
from polyc.options import Options


def kernel_source(body: str = "") -> str:
    """A kernel as polyc writes one: its comment, the preamble, then functions."""
    return (f"/*\n * a test kernel {uuid.uuid4().hex}\n */\n{PREAMBLE}\n"
            f"int add1(int x) {{ {body} return x + 1; }}\n")


@pytest.fixture(autouse=True)
def _fresh_process_state(monkeypatch):
    """Each test starts as a new process would: no header checked or refused yet."""
    monkeypatch.setattr(headers, "_CHECKED", set())
    monkeypatch.setattr(headers, "_REFUSED", set())


def test_the_leading_lines_are_the_preamble_defines_and_includes():
    lines = leading_lines(kernel_source())
    assert lines.splitlines()[0].startswith("#define _GNU_SOURCE")
    assert [line for line in lines.splitlines() if line.startswith("#include")] == \
        [line for line in PREAMBLE.splitlines() if line.startswith("#include")]
    assert leading_lines("int add1(int x) { return x + 1; }\n") is None
    assert leading_lines("/* a comment */\n#define N 3\nint x[N];\n") is None


def test_the_compiled_text_blanks_the_headers_and_keeps_every_line_number():
    source = kernel_source()
    header = headers.PrecompiledHeader(Path("h.h"), leading_lines(source))
    text = header.compiled_text(source)
    assert "#include" not in text
    assert text.count("\n") == source.count("\n")
    assert text.splitlines()[-1] == source.splitlines()[-1]
    # a unit whose text does not open with the header's lines is left as it is
    assert header.compiled_text("int y;\n") == "int y;\n"


def _gcc_header(tmp_path, options) -> headers.PrecompiledHeader:
    header = precompiled_header(kernel_source(), options, compiler_command(options),
                                tmp_path / "headers")
    if header is None:
        pytest.skip("the C compiler writes no GCC precompiled header")
    return header


@pytest.mark.needs_cc
def test_kernels_share_one_precompiled_header_per_compiler_and_flags(tmp_path):
    options = Options(cache_dir=tmp_path)
    header = _gcc_header(tmp_path, options)
    compiled = header.header.parent / f"{HEADER_NAME}.gch"
    assert compiled.read_bytes().startswith(GCC_MAGIC)
    assert header.header.read_text() == leading_lines(kernel_source())
    built = compiled.stat().st_mtime_ns
    for body in ("", "x *= 2;"):
        library = KernelCache().get_library(kernel_source(body), options)
        assert library.cache_hit == "miss" and library.cdll.add1(20) in (21, 41)
    assert compiled.stat().st_mtime_ns == built
    assert len(list((tmp_path / "headers").iterdir())) == 1
    # other flags: another header beside it
    _gcc_header(tmp_path, options.with_(extra_cflags=("-DPOLYC_TEST=1",)))
    assert len(list((tmp_path / "headers").iterdir())) == 2


@pytest.mark.needs_cc
def test_each_cache_directory_has_its_own_header(tmp_path):
    # one process, two caches: the second builds its own (the first's check is no proof)
    for cache in ("a", "b"):
        options = Options(cache_dir=tmp_path / cache)
        header = _gcc_header(tmp_path / cache, options)
        assert header.header.is_file() and header.header.is_relative_to(tmp_path / cache)
        assert KernelCache().get_library(kernel_source(), options).cdll.add1(2) == 3
    assert not headers._REFUSED


@pytest.mark.needs_cc
def test_a_damaged_header_is_built_again(tmp_path):
    options = Options(cache_dir=tmp_path)
    header = _gcc_header(tmp_path, options)
    compiled = header.header.parent / f"{HEADER_NAME}.gch"
    good = compiled.read_bytes()
    compiled.write_bytes(good[:1000])  # its checksum no longer matches
    headers._CHECKED.clear()
    assert _gcc_header(tmp_path, options) == header
    assert compiled.read_bytes().startswith(GCC_MAGIC) and len(compiled.read_bytes()) > 1000


@pytest.mark.needs_cc
def test_a_header_the_compiler_cannot_read_is_dropped_and_the_kernel_still_builds(tmp_path):
    options = Options(cache_dir=tmp_path)
    header = _gcc_header(tmp_path, options)
    folder = header.header.parent
    compiled = folder / f"{HEADER_NAME}.gch"
    # cut short, with a checksum to match: gcc 12 stops with "cannot read PCH file"
    broken = compiled.read_bytes()[:len(compiled.read_bytes()) // 2]
    compiled.write_bytes(broken)
    (folder / f"{HEADER_NAME}.gch.sha256").write_text(hashlib.sha256(broken).hexdigest())
    headers._CHECKED.clear()
    library = KernelCache().get_library(kernel_source(), options)
    assert library.cdll.add1(1) == 2
    assert folder in headers._REFUSED and not compiled.exists()
    assert precompiled_header(kernel_source(), options, compiler_command(options),
                              tmp_path / "headers") is None


def test_a_compiler_that_hangs_on_the_header_times_out_once(tmp_path):
    cc, runs = tmp_path / "hangcc", tmp_path / "runs"
    cc.write_text('#!/bin/sh\ncase "$1" in --version) echo "fakecc 1.0"; exit 0;; '
                  '-dumpmachine) echo fake-linux; exit 0;; esac\n'
                  f'echo "$*" >> {runs}\nsleep 60\n')
    cc.chmod(0o755)
    options = Options(cache_dir=tmp_path / "cache", cc=str(cc), cc_timeout=1)
    start = time.monotonic()
    with pytest.raises(CompileTimeout, match="C compiler timed out after 1 s"):
        KernelCache().get_library(kernel_source(), options)
    assert time.monotonic() - start < 5
    # the header's build, and no kernel tried after it
    assert [("c-header" in line) for line in runs.read_text().splitlines()] == [True]


def test_a_kernel_that_hangs_with_the_header_is_not_compiled_again(tmp_path):
    # the header builds at once; the kernel hangs, and is not tried again without it
    cc, runs = tmp_path / "hangcc", tmp_path / "runs"
    cc.write_text('#!/bin/sh\ncase "$1" in --version) echo "fakecc 1.0"; exit 0;; '
                  '-dumpmachine) echo fake-linux; exit 0;; esac\n'
                  f'echo "$*" >> {runs}\n'
                  'case "$*" in *c-header*) printf gpch-fake > polyc_headers.h.gch; exit 0;; '
                  'esac\nsleep 60\n')
    cc.chmod(0o755)
    options = Options(cache_dir=tmp_path / "cache", cc=str(cc), cc_timeout=1)
    with pytest.raises(CompileTimeout, match=r"(?s)timed out after 1 s.*C source: .*failed"):
        KernelCache().get_library(kernel_source(), options)
    assert ["-include" in line for line in runs.read_text().splitlines()] == [False, True]


def test_a_kernel_that_fails_only_with_the_header_keeps_no_failed_source(tmp_path):
    # a compiler that cannot read the header it built: the kernel builds without it
    cc = tmp_path / "picky"
    cc.write_text('#!/bin/sh\ncase "$1" in --version) echo "fakecc 1.0"; exit 0;; '
                  '-dumpmachine) echo fake-linux; exit 0;; esac\n'
                  'case "$*" in *c-header*) printf gpch-fake > polyc_headers.h.gch; exit 0;; '
                  '*-include*) echo "cannot read PCH" >&2; exit 1;; esac\n'
                  f'exec {compiler_command(Options())[0]} "$@"\n')
    cc.chmod(0o755)
    options = Options(cache_dir=tmp_path / "cache", cc=str(cc))
    library = KernelCache().get_library(kernel_source(), options)
    assert library.cdll.add1(4) == 5
    assert not list((tmp_path / "cache").glob("failed/*.c"))
    assert len(headers._REFUSED) == 1
