"""Parsing polyc's C with pycparser in tests: the outlined parallel regions and the entry
functions of a translation unit, without the preamble (which needs the preprocessor)."""
import pycparser
from pycparser import c_ast

from polyc.codegen.translation_unit import kernel_code

# pycparser parses C without a preprocessor: stand-ins for the types the headers define.
_TYPEDEFS = """
typedef long int64_t; typedef unsigned long uint64_t; typedef int int32_t;
typedef unsigned int uint32_t; typedef short int16_t; typedef unsigned short uint16_t;
typedef signed char int8_t; typedef unsigned char uint8_t; typedef float _Float16;
typedef unsigned long size_t; typedef unsigned long uintptr_t;
typedef struct { int placed; } polyc_placement;
"""


def parse_entry(c_text: str) -> c_ast.FileAST:
    """Parse the outlined parallel regions and the entry functions of a generated
    translation unit (the preamble needs cpp; pycparser knows no attributes)."""
    c_text = "\n".join(line for line in kernel_code(c_text).splitlines()
                       if not line.startswith(("#define", "#undef")))
    c_text = c_text.replace("__attribute__((noinline)) ", "")
    helpers = ("int64_t polyc_floordiv(int64_t a, int64_t b);"
               "int64_t polyc_min(int64_t a, int64_t b); int64_t polyc_max(int64_t a, int64_t b);"
               "int64_t polyc_extent(int64_t a);"
               "void polyc_place_team(polyc_placement *p);"
               "void polyc_release_team(const polyc_placement *p);")
    return pycparser.CParser().parse(_TYPEDEFS + helpers + c_text, "kernel.c")
