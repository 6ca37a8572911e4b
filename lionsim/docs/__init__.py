"""The README's tables, produced from real runs: `python -m lionsim.docs`.

Each generated part of README.md sits between two markers,

    <!-- generated: NAME (python -m lionsim.docs) -->
    ...
    <!-- end generated: NAME -->

and is what block NAME renders (blocks.py: the registry; bench.py, estimate.py: the blocks).
A block that needs training renders from a cache of the real run it made (`--refresh NAME`:
`reports/readme/<cache>/` holds steps.csv, summary.csv and run.json, committed), and says on
which CPU and date; the others (estimate: pure modelling) run their command each time.

    python -m lionsim.docs                    # print every block
    python -m lionsim.docs --check            # exit 1 if README.md differs (names the blocks)
    python -m lionsim.docs --write            # rewrite README.md's blocks
    python -m lionsim.docs --refresh default-bench --write   # real runs again (minutes), then rewrite

tests/test_readme_tables.py fails when README.md differs from what this prints, and when a
cached run no longer describes the code (its configuration, or the modelled columns of its
first steps rerun now). A new table: register a Block and put its markers in README.md.
"""
