"""Valid (or nearly valid) Python that has crashed, hung or exhausted libcst or the engine (issue 14).

Each shape is a function of a size `n` returning one top-level statement (or compound statement). The
tests use sizes just above the guard's limits (fast); `benchmarks/hostile_inputs.py` uses the sizes that
crashed the process before the guard. FOLLOWER is appended after each shape: its finding must survive.
"""
from __future__ import annotations

FOLLOWER = (
    "\n\nimport torch\n\n\n"
    "def after_the_hostile_block():\n"
    "    v = torch.ones(2, requires_grad=True)\n"
    "    v += 1\n"
)
FOLLOWER_FINDING = "GG101"


def _lines(n: int, first: str, each: str, last: str) -> str:
    return first + each * n + last


SHAPES: dict[str, callable] = {
    # boolean operators, one line and split over lines
    "and-chain": lambda n: "b = " + " and ".join(["x"] * n) + "\n",
    "and-chain-lines": lambda n: "b = (x\n" + "     and x\n" * n + ")\n",
    "or-chain-backslash": lambda n: "b = x" + " or \\\n    x" * n + "\n",
    # binary operators split over lines (the old guard counted operators per line only)
    "plus-chain-lines": lambda n: "s = (w\n" + "     + w\n" * n + ")\n",
    "plus-chain": lambda n: "s = " + "+".join(["w"] * n) + "\n",
    "compare-chain": lambda n: "c = " + " < ".join(["x"] * n) + "\n",
    "string-concat": lambda n: "t = (" + "\n".join(["    'a'"] * n) + ")\n",
    # statements
    "elif-chain": lambda n: "if x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, n)),
    # unary, right-associative and keyword chains
    "nested-lambda": lambda n: "f = " + "lambda: " * n + "0\n",
    # a lambda's parameter list: its `,` and `=` separate parameters, they do not end the chain
    "nested-lambda-params": lambda n: "f = " + "lambda a, b: " * n + "0\n",
    "nested-lambda-defaults": lambda n: "f = " + "lambda a=" * n + "0" + ": 0" * n + "\n",
    "not-chain": lambda n: "b = " + "not " * n + "x\n",
    "invert-chain": lambda n: "b = " + "~" * n + "x\n",
    "minus-chain": lambda n: "b = " + "- " * n + "x\n",
    "ternary-chain": lambda n: "b = " + "a if c else " * n + "a\n",
    "power-chain": lambda n: "b = " + "**".join(["x"] * n) + "\n",
    # trailers
    "attribute-chain": lambda n: "b = x" + ".a" * n + "\n",
    "call-chain": lambda n: "b = f" + "()" * n + "\n",
    "subscript-chain": lambda n: "b = x" + "[0]" * n + "\n",
    "method-chain": lambda n: "b = x" + ".f()" * n + "\n",
    "method-chain-lines": lambda n: "b = (x\n" + "     .f()\n" * n + ")\n",
    # brackets
    "nested-parens": lambda n: "b = " + "(" * n + "x" + ")" * n + "\n",
    "nested-lists": lambda n: "b = " + "[" * n + "x" + "]" * n + "\n",
    "nested-calls": lambda n: "b = " + "f(" * n + "x" + ")" * n + "\n",
    # inside an f-string's replacement fields (the scan once took an f-string for a plain string)
    "fstring-and-chain": lambda n: "b = f'{" + " and ".join(["x"] * n) + "}'\n",
    "fstring-nested-parens": lambda n: "b = f'{" + "(" * n + "x" + ")" * n + "}'\n",
    "fstring-attribute-chain": lambda n: "b = f'{x" + ".a" * n + "}'\n",
    "fstring-nested-lambda": lambda n: "b = f'{(" + "lambda: " * n + "0)}'\n",
    "fstring-format-spec": lambda n: "b = f'{x:{" + "y." * n + "z}}'\n",
    # size
    "list-literal": lambda n: "data = [" + ", ".join(str(i) for i in range(n)) + "]\n",
}

# Long but flat in libcst's tree (a Comparison holds a list): analysed in full, no note.
FLAT = {"compare-chain"}

# The sizes that crashed, hung or exhausted the process before the guard (issue 14), for the benchmark.
CRASH_SIZES = {
    "and-chain": 7000,
    "and-chain-lines": 7000,
    "or-chain-backslash": 7000,
    "plus-chain-lines": 10000,
    "plus-chain": 10000,
    "compare-chain": 10000,
    "string-concat": 10000,
    "elif-chain": 8000,
    "nested-lambda": 3500,
    "nested-lambda-params": 3500,  # SIGSEGV in libcst (the guard reset its count at each `,` and `=`)
    "nested-lambda-defaults": 3500,  # SIGSEGV
    "not-chain": 10000,
    "invert-chain": 10000,
    "minus-chain": 10000,
    "ternary-chain": 5000,
    "power-chain": 10000,
    "attribute-chain": 10000,
    "call-chain": 10000,
    "subscript-chain": 10000,
    "method-chain": 5000,
    "method-chain-lines": 5000,
    "nested-parens": 5000,
    "nested-lists": 5000,
    "nested-calls": 5000,
    "fstring-and-chain": 7000,  # the follower's block was left out instead ("too deeply nested")
    "fstring-nested-parens": 7000,  # SIGSEGV
    "fstring-attribute-chain": 7000,  # SIGSEGV
    "fstring-nested-lambda": 7000,  # SIGSEGV
    "fstring-format-spec": 7000,  # SIGSEGV
    "list-literal": 180000,  # about 1.2 MB
}


def program(shape: str, n: int) -> str:
    """The hostile statement followed by a function whose finding must still be reported."""
    return SHAPES[shape](n) + FOLLOWER
