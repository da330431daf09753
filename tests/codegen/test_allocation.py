"""Temporaries are allocated on cache lines (``polyc_alloc`` in the kernels' preamble):
a 64-byte vector at malloc's 16-byte alignment would span two lines at every access."""
import ctypes
import subprocess

import pytest

from polyc.codegen.c_names import PREAMBLE, allocation_statement
from polyc.options import Options

PROBE = PREAMBLE + """
int64_t polyc_probe(uint64_t bytes) {
  char *p = (char *)polyc_alloc((size_t)bytes);
  if (!p) return -1;
  p[0] = 1; p[bytes - 1] = 1;  /* the whole request is usable */
  int64_t offset = (int64_t)((uintptr_t)p & 63);
  free(p);
  return offset;
}
"""


@pytest.mark.needs_cc
def test_temporaries_start_on_a_cache_line_and_impossible_sizes_fail_cleanly(tmp_path):
    source, library = tmp_path / "probe.c", tmp_path / "probe.so"
    source.write_text(PROBE)
    cc = Options().cc
    subprocess.run([cc, "-O1", "-fopenmp", "-fPIC", "-shared", "-std=gnu11", str(source),
                    "-o", str(library)], check=True, capture_output=True)
    probe = ctypes.CDLL(str(library)).polyc_probe
    probe.restype, probe.argtypes = ctypes.c_int64, [ctypes.c_uint64]
    for size in (1, 3, 63, 64, 65, 1000, 4096, 1 << 20):
        assert probe(size) == 0, size
    assert probe(2 ** 64 - 8) == -1  # rounding up to a line would wrap around


def test_kernels_allocate_through_the_aligned_helper():
    text = str(allocation_statement("float", "e", "N"))
    assert text == ("float *restrict e = "
                    "(float *)polyc_alloc(sizeof(float) * (size_t)polyc_max(1, N));")
