"""Local SGD and DiLoCo (Douillard et al. 2023): every worker takes H inner
steps on its own replica with no communication, then the replicas are synced through an
outer step.

    every step, on every worker i:  theta_i <- inner optimizer step on g_i      (no traffic)
    every H-th step (a sync):       delta_i = theta - theta_i                   (the outer or
                                    pseudo-gradient: start of the round minus its end)
                                    Delta = mean_i delta_i                      (the transport)
                                    theta <- Nesterov SGD step on Delta         (outer optimizer)
                                    theta_i <- theta                            (every replica)

theta, the shared replica the template passes as `params`, is the global model: it moves only
at syncs, and evaluation scores it. Each worker keeps its own inner optimizer state across
syncs (DiLoCo's inner AdamW moments are never averaged). The inner optimizer is AdamW by
default (--inner-optimizer lion | sgd), with the strategy's lr, weight decay and betas.

    localsgd   outer SGD, lr 1, no momentum: theta <- mean_i theta_i, the plain average
    diloco     outer Nesterov SGD on the mean of delta_i in fp32 (bf16 over bf16-allreduce);
               diloco-int8 and diloco-sign (outer_codecs.py) send it quantized. The paper's
               outer step is lr 0.7, momentum 0.9 at H = 500 (--outer-lr 0.7 --outer-momentum
               0.9); lionsim's short runs default to H = 2, lr 1.0, momentum 0.3 (its `tuning`)

Only syncs communicate, so a step between syncs sends nothing (steps.csv: synced 0,
wire_bytes 0) and time to target counts every step, local or not. The pseudo-gradient exists
only after the H-th inner step, so its reference exchange runs after backward (after_step);
the inner step being elementwise, `--overlap buckets` prices an implementation that runs it in
backward bucket by bucket and exchanges each bucket's pseudo-gradient at once (step_in_backward).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from torch import Tensor

from lionsim.backends import Comm
import dataclasses

from lionsim.compute.kernel_ops import stream
from lionsim.optim.functional import nesterov_update_
from lionsim.optim.steps import ADAMW, INNER_STEPS, SGD_NESTEROV
from lionsim.steptime.strategy_bytes import F32, StrategyBytes
from lionsim.strategies.core.base import STRATEGIES, Hyper, Strategy
from lionsim.strategies.core.inner import InnerOptimizer
from lionsim.strategies.core.options import INNER_OPTIMIZERS, inner_optimizer
from lionsim.strategies.core import options as shared
from lionsim.timing import Clock
from lionsim.transports import AFTER_BACKWARD, Payload, PayloadSpec


OUTER_DELTA = (stream(3 * F32, "delta_i = p - p_i at a sync (read 8, write 4)"),)
"""A sync step's outer gradient, after the inner step."""
REPLICA_COPY = (stream(2 * F32, "p copied into the replica p_i (read 4, write 4)"),)
"""After the outer step every worker restarts from p."""


DILOCO_PAPER = "DiLoCo, Douillard et al. 2023, arXiv 2311.08105"


@dataclass(frozen=True, slots=True)
class AuthorsH:
    """The H a local-step method's authors train with at scale, and where they say so."""

    steps: str
    """H as they give it: "500", or a range ("15 to 30")."""
    source: str
    """The paper or code that gives it."""


class LocalSteps(Strategy):
    """The template of local-step strategies: inner steps on [w, P] replicas, an outer step at syncs."""

    authors_h: ClassVar[AuthorsH | None] = None
    """Its authors' H at scale, where its Options default (lionsim's, measured on the 100-step vit
    bench: docs/methods-2025-defaults.md) differs: `estimate` names it under its table."""

    payload_kind = "dense"
    default_transport = "fp32-allreduce"
    schedule = AFTER_BACKWARD  # its payload exists only after the inner step (after_step)
    after_step = True
    step_in_backward = True  # the inner step and the outer delta are elementwise: run per bucket in backward,
    # each bucket's outer gradient can be exchanged at once (--overlap buckets; torchft and the authors' code
    # run the step after backward, the papers' simulations overlap the reduction with backward)
    defaults = Hyper(lr=3e-3, weight_decay=0.01, betas=(0.9, 0.999))  # the default inner AdamW's
    local_step_bytes = 7 * F32
    """A local step (no sync) is the inner AdamW step alone (reads g, p_i, m_i, v_i, writes p_i, m_i,
    v_i); nothing is decoded or applied to p."""

    @dataclass(frozen=True, kw_only=True)
    class Options:
        """For lionsim's short runs, measured on the default vit bench (`tuning`); the paper's H is 500."""

        local_steps: int = shared.local_steps(2)
        """H, the inner steps each worker takes on its own replica between syncs."""
        outer_lr: float = shared.outer_lr(1.0)
        """lr of the outer SGD step on the averaged pseudo-gradient (the DiLoCo paper's is 0.7)."""
        outer_momentum: float = shared.outer_momentum(0.0)
        """Nesterov momentum of the outer step (the paper's 0.9 suits its H = 500)."""
        inner_optimizer: str = inner_optimizer()
        """The optimizer of the inner steps: adamw | lion | sgd (momentum beta1; 0 for plain SGD)."""

    # vit (the default bench: 100 steps, 8 workers x 32 images, 1 GbE, seed 0), final loss / eval accuracy
    # (AdamW: 0.600 / 79.5%). localsgd (outer lr 1, no momentum): H = 2: 0.919 / 73.3%, H = 5: 1.130 / 66.8%,
    # H = 25: 1.669 / 46.7%. diloco (inner AdamW, lr 3e-3): the paper's outer step (lr 0.7, Nesterov 0.9) at
    # H = 10: 1.399 / 49.5%, at H = 2: 2.277 / 19.6% (the momentum builds to ~7x the plain average over many
    # short rounds); outer lr 1.0, momentum 0.5, H = 5: 1.572 / 43.8%, H = 10: 1.429 / 49.3%; lr 0.7, momentum
    # 0.3, H = 5: 1.125 / 66.5%, H = 3: 1.017 / 72.0%, H = 2: 0.939 / 72.7%; lr 0.5, momentum 0.5, H = 2: 0.976
    # / 71.6%; lr 1.0, momentum 0.3, H = 2: 0.915 / 72.1% (kept: diloco's defaults), with inner lr 1e-3: 1.524
    # / 45.4%, 6e-3: 0.904 / 63.6%. Per step, local steps on 32 images each trail AdamW on 256: neither
    # reaches the default bench's target (0.855) in 100 steps; both reach loss 1.0 about 1.2x sooner than
    # AdamW (half its bytes at H = 2). diloco-int8 (same defaults) reached it at step 100, 2.02x sooner than
    # AdamW; diloco-sign did not (1.082 / 69.2%). mlp (checked, not tuned; 100 steps, 8 workers): AdamW
    # 0.700; diloco at these defaults 0.862, with H = 10 0.863 (a fifth of the bytes), the paper's outer
    # step at H = 10 0.881.
    tuning = {"vit": {"local_steps": 2}}

    def __init__(self, cfg, layout, comm) -> None:
        super().__init__(cfg, layout, comm)
        self.local_steps = self.opts.local_steps
        self.outer_lr = float(self.opts.outer_lr)
        self.outer_momentum = float(self.opts.outer_momentum)
        h = self.hyper
        self.inner = InnerOptimizer(self.opts.inner_optimizer, h.lr, h.weight_decay, h.betas,
                                    (self.local, layout.numel), layout.device)  # [w, P]: each worker its own
        self.outer_buf = self.zeros(1)[0]  # [P]: the outer momentum (one, as theta is one)
        self.steps = 0

    @classmethod
    def extra_rows(cls, cfg) -> int:
        """The replica and the inner optimizer's state, less the one state row counted for all."""
        return INNER_OPTIMIZERS.get(cls.resolve_options(cfg).inner_optimizer).states  # 1 replica + its state - the shared row

    @classmethod
    def steps_per_sync(cls, cfg) -> int:
        return cls.resolve_options(cfg).local_steps

    @property
    def sync_every(self) -> int:
        return self.local_steps

    def _not_authors_h(self) -> tuple[AuthorsH, object] | None:
        """(its authors' H, the --local-steps spec) where this run's H was not given and is not theirs."""
        from lionsim.strategies.core.form import option_spec

        authors, spec = self.authors_h, option_spec(self.name, self.Options, "local_steps")
        if authors is None or spec.given_in(self.cfg.options) or str(self.local_steps) == authors.steps:
            return None
        return authors, spec

    def short_bench_default(self) -> str:
        """Its authors' H where this run's H is the Options default (no --local-steps given) and not theirs."""
        found = self._not_authors_h()
        if found is None or self.local_steps != found[1].default:
            return ""  # a workload's tuned H (bench), or the authors' own
        return f"H = {found[0].steps} ({found[0].source})"

    def scale_note(self) -> str:
        """H, where not given and not its authors' at scale (a short bench's, or its workload's tuned one)."""
        found = self._not_authors_h()
        if found is None:
            return ""
        authors = found[0]
        return (f"{self.name}: H = {self.local_steps}, lionsim's default for a short bench; its authors train with "
                f"H = {authors.steps} at scale ({authors.source}): --local-steps sets it (estimate --from-run prices "
                "the H a run trained with)")

    def start(self, params: Tensor) -> None:
        self.replicas = params.expand(self.local, -1).clone()  # [w, P]

    def phase(self, step: int) -> str:
        return "sync" if step % self.local_steps == 0 else "local"

    def run_spec(self, step: int, steady: PayloadSpec) -> PayloadSpec | None:
        return steady if step % self.local_steps == 0 else None

    def next_change(self, step: int) -> int:
        """A sync step alone, then the local steps up to the next sync."""
        h = self.local_steps
        return step + 1 if step % h == 0 else (step // h + 1) * h

    def repeats(self) -> tuple[int, int]:
        """A round: its sync step sends what every sync does."""
        return (0, self.local_steps)

    def syncing(self) -> bool:
        """Whether the current step (already counted) ends a round."""
        return self.steps % self.local_steps == 0

    def payload_spec(self) -> PayloadSpec:
        return PayloadSpec(kind="dense", numel=self.layout.numel)

    def kernel_bytes(self) -> StrategyBytes | None:
        """The inner step is the --inner-optimizer's (the class's bytes count AdamW's)."""
        return dataclasses.replace(self.bytes, rule_step=INNER_STEPS[self.opts.inner_optimizer])

    def encode(self, grads: Tensor, params: Tensor, comm: Comm, clock: Clock) -> Payload | None:
        self.steps += 1
        self.inner_step(grads, clock)
        if not self.syncing():
            return None
        delta = params.unsqueeze(0) - self.replicas  # [w, P]: the outer gradient
        return self.encode_outer(delta, comm, clock)

    def inner_step(self, grads: Tensor, clock: Clock) -> None:
        """Every worker's inner optimizer step on its own replica, with its own state: booked as an update
        (one worker's share of the w rows, as the momentum sync books its copies), not a codec."""
        with clock.section("update", scale=1 / self.local):
            self.inner.step(self.replicas, grads)

    def encode_outer(self, delta: Tensor, comm: Comm, clock: Clock) -> Payload:
        """What each worker sends of its outer gradient delta [w, P] (here: all of it)."""
        return Payload(self.payload_spec(), delta)

    def outer_gradient(self, aggregate: Tensor) -> Tensor:
        """The averaged outer gradient [P] from the transport's aggregate [w, P]."""
        return aggregate[0]

    def apply(self, params: Tensor, aggregate: Tensor | None) -> None:
        if aggregate is None:  # between syncs the global model stays where the round began
            return
        nesterov_update_(params, self.outer_gradient(aggregate), self.outer_buf, self.outer_lr, self.outer_momentum)
        self.replicas.copy_(params.expand_as(self.replicas))  # every worker starts the next round from it


@STRATEGIES.register("localsgd")
class LocalSGD(LocalSteps):
    name = "localsgd"
    authors_h = AuthorsH("500", DILOCO_PAPER)  # DiLoCo's outer SGD at lr 1 is this plain average
    summary = "local SGD: H inner steps per worker (AdamW by default), then the replicas averaged"
    bytes = StrategyBytes(
        10 * F32, 6 * F32, "rule: the inner AdamW step (reads g, p_i, m_i, v_i, writes p_i, m_i, v_i), then reads p, p_i, "
        "writes delta_i; update: the outer step reads p, buf, writes p, buf, then p copied to p_i (read, write)",
        rule_step=ADAMW, update_step=SGD_NESTEROV, rule_ops=OUTER_DELTA, update_ops=REPLICA_COPY,
    )


@STRATEGIES.register("diloco")
class DiLoCo(LocalSteps):
    name = "diloco"
    summary = "DiLoCo: H inner AdamW steps per worker, then a Nesterov outer step on the mean pseudo-gradient"
    authors_h = AuthorsH("500", DILOCO_PAPER)

    @dataclass(frozen=True, kw_only=True)
    class Options(LocalSteps.Options):
        """The paper's outer step (lr 0.7, Nesterov 0.9, for H = 500 over ~10^5 steps) overshoots in a
        100-step run (vit: loss 2.28 at H = 2, 1.40 at H = 10); these were measured best there (`tuning`)."""

        outer_momentum: float = shared.outer_momentum(0.3)
        """Nesterov momentum of the outer step (the paper's 0.9 suits its H = 500)."""

    tuning = {"vit": {"local_steps": 2, "outer_lr": 1.0, "outer_momentum": 0.3}}  # measured: LocalSteps' comment
    bytes = StrategyBytes(
        10 * F32, 6 * F32, "rule: the inner AdamW step (reads g, p_i, m_i, v_i, writes p_i, m_i, v_i), then reads p, p_i, "
        "writes delta_i; update: the outer Nesterov step reads p, buf, writes p, buf, then p copied to p_i",
        rule_step=ADAMW, update_step=SGD_NESTEROV, rule_ops=OUTER_DELTA, update_ops=REPLICA_COPY,
    )
