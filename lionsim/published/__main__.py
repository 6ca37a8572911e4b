"""`python -m lionsim.published`: the published-results table with lionsim's figures, run now
(lionsim.published.cases: --markdown, --case KEY, --help)."""

import sys

from lionsim.published.cases import main

sys.exit(main(sys.argv[1:]))
