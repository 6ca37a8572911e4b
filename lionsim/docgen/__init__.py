"""The documentation's tables, produced from real runs: `python -m lionsim.docgen`.

Each generated part of a page (README.md or docs/*.md) sits between two markers,

    <!-- generated: NAME (python -m lionsim.docgen) -->
    ...
    <!-- end generated: NAME -->

and is what block NAME renders (blocks.py: the registry and the pages; bench.py, estimate.py,
comm.py, to_target.py: the blocks). A block's markers may sit in any page, once. A block that
needs training renders from a cache of the real run it made (`--refresh NAME`:
`reports/readme/<cache>/` holds steps.csv, summary.csv and run.json, committed: bench.py's and
gpt_bench.py's, through cached.py; to_target.py's sweep keeps sweep.json and sweep_summary.csv,
what `estimate --from-run` reads), and says on which CPU and date; the others (estimate, comm:
pure modelling) run their command each time.

    python -m lionsim.docgen                    # print every block
    python -m lionsim.docgen --check            # exit 1 if a page differs (names page, block)
    python -m lionsim.docgen --write            # rewrite the pages' blocks
    python -m lionsim.docgen --refresh default-bench --write   # real runs again, then rewrite

tests/docs/test_generated_tables.py fails when a page differs from what this prints, and when a
cached run no longer describes the code (its configuration, or the modelled columns of its first steps
rerun now). A new table: register a Block and put its markers in the page that shows it.
"""
