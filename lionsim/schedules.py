"""When a step's exchange runs: the two schedules a transport may declare it can run on
(Transport.overlap), a strategy's reference implementation runs (Strategy.schedule), and
`--overlap` picks from (lionsim.steptime.overlap). Plain names, no imports: the command layer
checks `--overlap` before torch loads."""

PER_BUCKET = "buckets"
"""A schedule: the exchange runs per gradient bucket while backward goes on, each bucket's as soon
as backward has produced it (DDP's buckets and comm hooks, Horovod's per-tensor hooks)."""
AFTER_BACKWARD = "after"
"""A schedule: the exchange runs once, over the whole payload, after backward (in the optimizer's
step: DeepSpeed's 1-bit Adam, the Lion Cub code, DeMo, Dion)."""
SCHEDULES = (PER_BUCKET, AFTER_BACKWARD)
