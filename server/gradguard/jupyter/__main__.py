"""`python -m gradguard.jupyter [--virtual-dir DIR] [--with KEY -- ARGV...]`: what jupyter-lsp runs (see __init__.py)."""

import asyncio
import sys

from .proxy import run


def main(argv: list) -> int:
    name, primary, virtual_dir = "", [], ""
    if argv[:1] == ["--virtual-dir"] and len(argv) >= 2:
        virtual_dir, argv = argv[1], argv[2:]
    if argv[:1] == ["--with"] and len(argv) >= 4 and argv[2] == "--":
        name, primary = argv[1], argv[3:]
    elif argv:
        print("usage: python -m gradguard.jupyter [--virtual-dir DIR] [--with KEY -- ARGV...]", file=sys.stderr)
        return 2
    return asyncio.run(run(name, primary, virtual_dir))


sys.exit(main(sys.argv[1:]))
