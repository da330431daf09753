"""Compile C with the system compiler, cache and load kernels, bind call arguments.

``get_library(c_source, options)`` gives a loaded shared object (memory cache,
then disk cache, then the compiler); ``load_operator(op, options, generate)`` finds
an operator's kernel by its checked IR and options before generating any C;
``ArgumentBinder(op).bind(args, out)`` checks a call's numpy arguments against an
operator and prepares them for its kernel.
"""
from polyc.jit.arguments import ArgumentBinder, BoundCall, bind_arguments
from polyc.jit.cache import (CacheWarning, CompiledOperator, KernelCache, LoadedLibrary,
                             get_library, load_operator)

__all__ = ["ArgumentBinder", "BoundCall", "CacheWarning", "CompiledOperator", "KernelCache",
           "LoadedLibrary", "bind_arguments", "get_library", "load_operator"]
