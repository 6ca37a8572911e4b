"""Published measurements of data-parallel communication, side by side with lionsim's figures.

    cases.py       single published figures (a thread's or paper's table row) and the lionsim
                   command that models each: `python -m lionsim.published`
    sweeps.py      published nccl-tests sweeps across nodes, and the fabrics fitted on some of
                   them: `python -m lionsim.published.sweeps [--fit]`
    compressed.py  published step times of compressed methods: `python -m
                   lionsim.published.compressed [--holdout] [--holdout2]`
    local.py       published bandwidth needs of local-step methods: `python -m
                   lionsim.published.local [--holdout]`
    grace.py       GRACE's compressor costs against lionsim's codec: `python -m lionsim.published.grace`
    terminal.py    what the commands print in a terminal (a compact table fitted to its width;
                   --markdown the docs' Markdown, --case KEY one case in full: every command
                   takes both), their --help, the one-line refusals (a flag given twice, two
                   that would override each other), and exit 0 when piped into `head`

The cases' commands are printed as typed from the repository's root; the modules run them from
any directory (cases.in_checkout resolves their examples/ paths against the checkout).

Each table in docs/clusters.md is generated from these modules and checked by a test.
"""
