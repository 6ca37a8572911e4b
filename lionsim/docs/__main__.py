"""`python -m lionsim.docs`: print, check or rewrite README.md's generated blocks (lionsim.docs)."""

from __future__ import annotations

import argparse
import sys

import lionsim.docs.bench  # noqa: F401  (registers its blocks)
import lionsim.docs.estimate  # noqa: F401
from lionsim.docs.blocks import BLOCKS, readme_blocks, readme_path, with_blocks
from lionsim.errors import LionsimError
from lionsim.reports.files import write_atomic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lionsim.docs", description=__doc__)
    parser.add_argument("--only", action="append", metavar="NAME", help=f"a block: {', '.join(BLOCKS.names())}")
    parser.add_argument("--refresh", action="append", metavar="CACHE", default=[],
                        help="train the cached run again for real (default-bench: minutes)")
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md differs, naming the blocks")
    parser.add_argument("--write", action="store_true", help="rewrite README.md's blocks")
    args = parser.parse_args(argv)
    try:
        names = [BLOCKS.canonical(n) for n in args.only] if args.only else BLOCKS.names()
        for cache in args.refresh:
            if cache != "default-bench":
                raise LionsimError(f"unknown cache {cache!r}; choose from: default-bench")
            from lionsim.docs.bench import refresh

            print(f"wrote {refresh()}", file=sys.stderr)
        bodies = {name: BLOCKS.get(name).render() for name in names}
        path = readme_path()
        text = path.read_text(encoding="utf-8")
    except LionsimError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.check:
        stale = [name for name, body in bodies.items() if readme_blocks(text).get(name) != body]
        for name in stale:
            print(f"README.md block {name} differs from what python -m lionsim.docs prints", file=sys.stderr)
        return 1 if stale else 0
    if args.write:
        write_atomic(path, lambda f: f.write(with_blocks(text, bodies)))
        print(f"rewrote {', '.join(bodies)} in {path}", file=sys.stderr)
        return 0
    for name, body in bodies.items():
        print(f"--- {name}\n{body}", end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
