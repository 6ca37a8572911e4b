"""`python -m lionsim ARGS` is `lionsim ARGS`."""

from lionsim.cli import main

main()
