"""`python -m lionsim.published`: the published-results table with lionsim's figures, run now."""

from lionsim.published.cases import markdown_table, results

print(markdown_table(results()))
