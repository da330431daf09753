"""polyc: a polyhedral tensor compiler for Python."""
from polyc.errors import (ArgumentError, CompileError, InternalError, ParseError, PolycError,
                          SemanticError)

__version__ = "0.1.0"

__all__ = ["ArgumentError", "CompileError", "InternalError", "ParseError", "PolycError",
           "SemanticError", "__version__"]
