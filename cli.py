"""`python cli.py ARGS` is `lionsim ARGS`."""

from lionsim.cli import main

if __name__ == "__main__":
    main()
