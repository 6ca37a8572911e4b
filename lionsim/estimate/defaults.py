"""Constants the `lionsim estimate` options show in their help: importing them costs nothing
(no torch), so `lionsim --help` answers at once."""

DEFAULT_STRATEGIES = ("adamw@bf16-allreduce", "lion@bf16-allreduce", "dlion-mavo", "dlion-mavo@a2a-1bit",
                      "lioncub-l1")

ACCEPTED = "workers=N,N,... | workers=START:END:COUNT | bandwidth=GBPS,... | bandwidth=START:END:COUNT"
"""The --sweep forms."""
