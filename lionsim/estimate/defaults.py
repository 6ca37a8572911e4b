"""Constants the `lionsim estimate` options show in their help: importing them costs nothing
(no torch), so `lionsim --help` answers at once."""

from lionsim.forms import RUN, STEP

DEFAULT_STRATEGIES = ("adamw@bf16-allreduce", "lion@bf16-allreduce", "dlion-mavo", "dlion-mavo@a2a-1bit",
                      "lioncub-l1")
"""Like with like: both global optimizers all-reduce bf16 gradients (DDP's bf16_compress_hook,
what large runs use), so adamw (the baseline) and lion differ only in the optimizer; the
vote rows then show what the 1-bit exchange gains over the same optimizer's gradient
all-reduce. (Was adamw@bf16 against lion@fp32, which charged Lion twice the bytes.)"""

ACCEPTED = "workers=N,N,... | workers=START:END:COUNT | bandwidth=GBPS,... | bandwidth=START:END:COUNT"
"""The --sweep forms."""


def estimate_reads(priced, whole_run: bool) -> bool:
    """Whether estimate reads a strategy flag whose options (one per strategy it sets, among the runs)
    are priced `priced`: a STEP one always, a RUN one in a whole run, a TRAINING one never. The one
    rule of both lionsim.estimate.config.check_priced (which refuses what it does not read) and
    estimate's --help (which hides a flag read in no case: every strategy, a whole run)."""
    priced = set(priced)
    return STEP in priced or (RUN in priced and whole_run)


def hidden_in_help(specs) -> bool:
    """Whether estimate's --help leaves a strategy flag out: estimate refuses it whatever runs, every
    option it sets changing only training (`specs`: the flag's options, each with `priced`)."""
    return not estimate_reads((s.priced for s in specs), whole_run=True)
