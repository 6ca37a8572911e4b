"""The strategy machinery the methods in lionsim.strategies are built from (each method is one
module there; this package holds what they share):

    base.py           Strategy (the template a method fills in), StrategyConfig, Hyper, the
                      STRATEGIES registry, which transports a strategy can use
    form.py           the one-file form: a method's Options dataclass, its fields (`option`),
                      the flags, TOML keys and checks generated from them
    given.py          options as given to a command, read against the registry
    options.py        option fields several methods share (inner optimizer, H, outer step)
    inner.py          INNER_OPTIMIZERS: the optimizer a method steps with on its own
    layout.py         the flat parameter layout ([P] replica, [W, P] per-worker state)
    draws.py          counter-hash uniform draws per virtual worker
    momentum_sync.py  Lion Cub's selective momentum sync (--momentum-sync, --sync-tensors)
    schedule.py       how a strategy's steps repeat (next_change, repeats), trusted or walked
    sends.py          what a run sends over its steps (run_spec walked), known before training
"""
