"""run.json records as lionsim writes them (lionsim.training.record.timing_notes' wording), for the
tests of what a table says of how its step times were obtained."""

from __future__ import annotations

from lionsim.timing import DEFAULT_WARMUP

MODELLED_PART = "modelled for h100: memory passes at its bandwidth, at least kernels x 1e-05 s"
def measured_part(warmup: int, real: bool = False) -> str:
    """The encode/update note of a measured run whose first `warmup` steps were left out (`real`: gloo/nccl ranks)."""
    return ("measured: per step the median of its kind (same collectives) over each run's steps, the first "
            f"{warmup} left out; per worker" + ("; the slowest rank's" if real else ""))


def run_record(*, compute: str = "h100", backend: str = "sim", steps: int = 5, warmup: int | None = None,
               network: str = "1gbe", traits: str | None = None) -> dict:
    """A run.json's config, network and timing for a bench of `steps` on `backend` with --compute
    `compute` (a device: every time modelled; measured: timed here, 10 passes after 3 dropped); `warmup`:
    the steps left out of a measured run's medians (None: lionsim's DEFAULT_WARMUP)."""
    measured = compute == "measured" or backend != "sim"
    timing = {
        "compute_s": ("measured once per bench: median of 10 forward+backward passes of this process's workers "
                      "(after 3 dropped), per worker; the same figure on every step" if compute == "measured" else
                      "modelled: one worker's FLOPs (torch.utils.flop_counter) at the device's peak x mfu, at "
                      "least its kernels x the device's per-kernel floor"),
        "encode_s": measured_part(DEFAULT_WARMUP if warmup is None else warmup, backend != "sim") if measured else MODELLED_PART,
        "comm_s": ("measured: every real collective timed between two barriers, billed as its slowest rank's "
                   "time, summed per step, median of its kind; no overlap" if backend != "sim" else
                   f"modelled: the collectives priced on {network} for 2 workers, per bucket during backward"),
        "warmup_steps": warmup,
    }
    return {"config": {"steps": steps, "compute": compute, "backend": backend, "network": network, "traits": traits},
            "network": {"name": network}, "timing": timing}
