"""The majority vote's tie rules by name (lionsim.aggregators.ties says what each does). Plain names,
no imports: the command layer checks `--tie` before torch loads."""

TIE_RULES = ("zero", "alternate", "random")
