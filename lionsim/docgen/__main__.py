"""`python -m lionsim.docgen`: print, check or rewrite the generated blocks of README.md and
docs/*.md (lionsim.docgen)."""

from __future__ import annotations

import argparse
import os
import sys

import lionsim.docgen.bench  # noqa: F401  (registers its blocks)
import lionsim.docgen.break_even  # noqa: F401
import lionsim.docgen.comm  # noqa: F401
import lionsim.docgen.estimate  # noqa: F401
import lionsim.docgen.figures  # noqa: F401
import lionsim.docgen.gpt_bench  # noqa: F401
import lionsim.docgen.hierarchy  # noqa: F401
import lionsim.docgen.methods  # noqa: F401
import lionsim.docgen.kernels  # noqa: F401
import lionsim.docgen.listing  # noqa: F401
import lionsim.docgen.local_7b  # noqa: F401
import lionsim.docgen.time_model  # noqa: F401
import lionsim.docgen.to_target  # noqa: F401
from lionsim.docgen.blocks import BLOCKS, missing_markers, page_blocks, pages, where_blocks, with_blocks
from lionsim.errors import LionsimError
from lionsim.reports.files import write_atomic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lionsim.docgen", description=__doc__)
    parser.add_argument("--only", action="append", metavar="NAME", help=f"a block: {', '.join(BLOCKS.names())}")
    parser.add_argument("--refresh", action="append", metavar="CACHE", default=[],
                        help="train a cached run again for real (minutes): "
                        + ", ".join(("default-bench", "from-run-sweep", "methods-2025-b-gpt")))
    parser.add_argument("--check", action="store_true", help="exit 1 if a page differs, naming the blocks")
    parser.add_argument("--write", action="store_true", help="rewrite the pages' blocks")
    args = parser.parse_args(argv)
    # the blocks are what a user sees at 80 columns off a terminal, whatever COLUMNS the caller's
    # shell exports (tables follow an explicit COLUMNS: lionsim.reports.widths.table_width)
    os.environ["COLUMNS"] = "80"
    try:
        names = [BLOCKS.canonical(n) for n in args.only] if args.only else BLOCKS.names()
        refreshers = {"default-bench": lionsim.docgen.bench.refresh, "from-run-sweep": lionsim.docgen.to_target.refresh,
                      "methods-2025-b-gpt": lionsim.docgen.gpt_bench.refresh}
        for cache in args.refresh:
            if cache not in refreshers:
                raise LionsimError(f"unknown cache {cache!r}; choose from: {', '.join(refreshers)}")
            print(f"wrote {refreshers[cache]()}", file=sys.stderr)
        found = where_blocks(pages())
        if (error := missing_markers(names, found)) is not None and (args.check or args.write):
            raise error
        bodies = {name: BLOCKS.get(name).render() for name in names}
    except LionsimError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    by_page: dict = {}
    for name in names:
        if name in found:
            by_page.setdefault(found[name], []).append(name)
    if args.check:
        stale = []
        for path, held in by_page.items():
            text = page_blocks(path.read_text(encoding="utf-8"))
            stale += [(path, name) for name in held if text[name] != bodies[name]]
        for path, name in stale:
            where = f"docs/{path.name}" if path.parent.name == "docs" else path.name
            print(f"{where} block {name} differs from what python -m lionsim.docgen prints", file=sys.stderr)
        return 1 if stale else 0
    if args.write:
        for path, held in by_page.items():
            text = path.read_text(encoding="utf-8")
            write_atomic(path, lambda f, text=text, held=held: f.write(with_blocks(text, {n: bodies[n] for n in held})))
            print(f"rewrote {', '.join(held)} in {path}", file=sys.stderr)
        return 0
    for name, body in bodies.items():
        print(f"--- {name}\n{body}", end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
