"""Command line: ``python -m polyc FILE.tc [--name NAME] [--emit STAGE] [--grad]``.

Prints one stage of the compilation of an operator: ``ir`` (TC with every
range explicit), ``shapes``, ``domains``, ``deps``, ``schedule``, ``ast``
(the loop nest) or ``c``; with ``--grad``, of its backward operator
(``polyc.grad``). Errors print as ``file:line:col: message`` with a
caret excerpt and exit with status 1.
"""
from __future__ import annotations

import argparse
import sys

from polyc.errors import PolycError


def main(argv=None) -> int:
    from polyc.compiler import frontend, generate
    from polyc.explain import STAGES, stage_texts
    from polyc.api import environment_options

    parser = argparse.ArgumentParser(prog="python -m polyc",
                                     description="Compile a Tensor Comprehension and print "
                                                 "a stage of the compilation.")
    parser.add_argument("file", help="a .tc source file ('-' for standard input)")
    parser.add_argument("--name", help="the def to compile when the file has several")
    parser.add_argument("--emit", choices=STAGES, default="c", help="the stage to print")
    parser.add_argument("--fusion", choices=("default", "max", "min"), default=None)
    parser.add_argument("--grad", action="store_true",
                        help="the backward operator (polyc.grad) instead of the operator")
    args = parser.parse_args(argv)
    try:
        if args.file == "-":
            text, filename = sys.stdin.read(), "<stdin>"
        else:
            with open(args.file, encoding="utf-8") as handle:
                text, filename = handle.read(), args.file
    except OSError as error:
        print(f"polyc: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return 2
    options = environment_options()
    if args.fusion:
        options = options.with_(fusion=args.fusion)
    try:
        op = frontend(text, args.name, filename)
        if args.grad:
            from polyc.api import Operator, grad

            op = grad(Operator(op, options)).ir
        print(stage_texts(generate(op, options))[args.emit])
    except PolycError as error:
        print(str(error), file=sys.stderr)
        return 1
    except BrokenPipeError:  # `python -m polyc f.tc | head`: the reader left early
        sys.stderr.close()
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
