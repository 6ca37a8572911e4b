"""Streaming DiLoCo against a plain reference of torchft's DiLoCo with fragments
(tests/reference/streaming_diloco.py: the staggered schedule, the all-reduce in flight for tau
steps, the alpha mix, Nesterov outer steps per fragment; its emulation of torchft's fp8 quantized
all-reduce), the fp4 all-reduce against a brute-force loop, its bytes per send against the closed
form, the overlap in the time model, and its options' bad values."""

import itertools
import math
from fractions import Fraction

import pytest
import torch

import tests.reference.streaming_diloco as ref
from lionsim.backends import SimComm
from lionsim.strategies import STRATEGIES, ParamLayout, StrategyConfig
from lionsim.strategies.streaming_diloco import fragments
from lionsim.transports import TRANSPORTS, Payload, PayloadSpec
from lionsim.transports.minifloat_allreduce import BLOCK, blocks
from tests.helpers.steps import run_seeded

SHAPES = [(6, 5), (7,), (4, 4), (3,), (5, 2)]
H, P = 6, 3


def _layout(shapes):
    return ParamLayout.of([(f"t{i}", torch.zeros(s)) for i, s in enumerate(shapes)])


def _run(shapes, workers, steps, transport, seed=0, **options):
    layout = _layout(shapes)
    given = {"streaming-diloco." + k: v for k, v in options.items()}
    cfg = StrategyConfig(lr=1e-2, weight_decay=0.0, betas=(0.9, 0.999), options=given)
    return layout, *run_seeded("streaming-diloco", transport, layout, cfg, workers, steps, seed)


def _groups(layout, strategy):
    """Each fragment's tensor indices, from its flat range."""
    starts = [s.start for s in layout.slices]
    return [[i for i, s in enumerate(starts) if any(a <= s < b for a, b in ranges)] for ranges in strategy.fragments]


@pytest.mark.parametrize("workers,delay,alpha,pattern", [(1, 0, 0.0, "sequential"), (2, 1, 0.5, "sequential"),
                                                         (3, 1, 1.0, "sequential"), (3, 0, 0.5, "sequential"),
                                                         (2, 1, 0.5, "strided"), (3, 0, 0.5, "strided")])
def test_streaming_diloco_equals_torchfts_schedule(workers, delay, alpha, pattern):
    # strided: tensors 0 and 3 in fragment 0, 1 and 4 in 1, 2 in 2 (the reference takes any grouping)
    steps = 3 * H
    layout, grads, x0, x, strategy, sent = _run(SHAPES, workers, steps, "fp32-allreduce", seed=workers,
                                                local_steps=H, fragments=P, delay=delay, alpha=alpha,
                                                outer_lr=0.7, outer_momentum=0.9, pattern=pattern)
    if pattern == "strided":
        assert _groups(layout, strategy) == [[0, 3], [1, 4], [2]]
    split = [x0[s].reshape(shape) for s, shape in zip(layout.slices, SHAPES)]
    per_worker = [[[g[i][s].reshape(shape) for s, shape in zip(layout.slices, SHAPES)] for g in grads]
                  for i in range(workers)]
    local, glob, log = ref.ref_streaming_diloco(per_worker, split, steps, H=H, fragments=_groups(layout, strategy),
                                                tau=delay, alpha=alpha, outer_lr=0.7, outer_momentum=0.9,
                                                inner="adamw", inner_lr=1e-2, inner_betas=(0.9, 0.999))
    torch.testing.assert_close(x, torch.cat([p.reshape(-1) for p in glob[-1]]), rtol=0, atol=2e-6)
    for i in range(workers):
        torch.testing.assert_close(strategy.replicas[i], torch.cat([p.reshape(-1) for p in local[-1][i]]),
                                   rtol=0, atol=2e-6)
    # a send every H / P steps, tau before the merge; nothing else
    sends = [t + 1 for t, row in enumerate(log) if row[0]["fragment"] is not None]
    assert [not s.local for s in sent] == [t in sends for t in range(1, steps + 1)]


def _fp8_reference(deltas, workers):
    """The reference's fp8 all-reduce (torchft's, row by row) on the vectors cut in rows of BLOCK,
    the rows padded to a multiple of N as lionsim does."""
    n = deltas[0].numel()
    rows = blocks(n, workers)
    padded = [torch.cat([d, torch.zeros(rows * BLOCK - n)]).reshape(rows, BLOCK) for d in deltas]
    return ref.fp8_allreduce_avg(padded).reshape(-1)[:n]


def _fp4(x):
    """Brute force: the e2m1 value nearest to x (a tie to the smaller magnitude), sign kept."""
    grid = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    out = []
    for v in x.tolist():
        m = min(abs(v), 6.0)
        best = min(grid, key=lambda g: (abs(m - g), g))
        out.append(-best if v < 0 else best)
    return torch.tensor(out)


def _fp4_reference(deltas, workers):
    """torchft's algorithm in a plain loop with e2m1 rounding: per block scale to 6, round, sum the
    N decoded blocks from the owner's own, scale the sum to 6, round, decode, divide by N."""
    n = deltas[0].numel()
    rows = blocks(n, workers)
    padded = [torch.cat([d, torch.zeros(rows * BLOCK - n)]).reshape(rows, BLOCK) for d in deltas]
    out = torch.zeros(rows, BLOCK)
    for r in range(rows):
        owner = r // (rows // workers)
        acc = torch.zeros(BLOCK)
        for j in range(workers):
            row = padded[(owner + j) % workers][r]
            scale = 6.0 / row.abs().max() if row.abs().max() > 0 else torch.tensor(1.0)
            acc = acc + _fp4(row * scale) / scale
        scale = 6.0 / acc.abs().max() if acc.abs().max() > 0 else torch.tensor(1.0)
        out[r] = _fp4(acc * scale) / scale
    return (out / workers).reshape(-1)[:n]


@pytest.mark.parametrize("name,reference", [("fp8-allreduce", _fp8_reference), ("fp4-allreduce", _fp4_reference)])
@pytest.mark.parametrize("workers", [2, 3])
def test_minifloat_allreduce_equals_the_plain_loop(name, reference, workers):
    gen = torch.Generator().manual_seed(workers)
    n = 3 * BLOCK + 17
    x = torch.randn(workers, n, generator=gen) * torch.logspace(-3, 1, n)  # blocks of different scales
    x[:, :BLOCK] = 0.0  # an all-zero block: scale 1
    got = TRANSPORTS.get(name)().aggregate(Payload(PayloadSpec(kind="dense", numel=n), x), SimComm(workers))
    expected = reference(list(x), workers)
    torch.testing.assert_close(got, expected.expand(workers, -1), rtol=0, atol=1e-6)
    exact = x.mean(0)
    assert (got[0] - exact).abs().max() <= (0.3 if name == "fp4-allreduce" else 0.05) * exact.abs().max()


def test_fp8_streaming_run_equals_the_reference_with_torchfts_fp8():
    """One fragment's tensors as the reference sees them through lionsim's blocks: each fragment one
    matrix of BLOCK-wide rows (zero padded: their pseudo-gradient stays 0)."""
    workers, steps = 2, 2 * H
    shapes = [(300,), (200,), (260,)]  # fragments of 300 and 460 values: 2 blocks each at N = 2
    layout, grads, x0, x, strategy, _ = _run(shapes, workers, steps, "fp8-allreduce", local_steps=H, fragments=2,
                                             delay=1, alpha=0.5)
    ranges = [r for (r,) in strategy.fragments]
    assert ranges == [(0, 300), (300, 760)]

    def as_rows(flat):
        return [torch.cat([flat[a:b], torch.zeros(blocks(b - a, workers) * BLOCK - (b - a))]).reshape(-1, BLOCK)
                for a, b in ranges]
    local, glob, _ = ref.ref_streaming_diloco([[as_rows(g[i]) for g in grads] for i in range(workers)], as_rows(x0),
                                              steps, H=H, fragments=[[0], [1]], tau=1, alpha=0.5, outer_lr=1.0,
                                              outer_momentum=0.3, inner="adamw", inner_lr=1e-2,
                                              inner_betas=(0.9, 0.999), quantize="fp8")
    expected = torch.cat([glob[-1][f].reshape(-1)[:b - a] for f, (a, b) in enumerate(ranges)])
    # lionsim's fp8-allreduce (lionsim.transports.fp8_allreduce, every dense payload's) divides by
    # amax / 448 and sums in worker order; torchft multiplies by 448 / amax and sums from the slice's
    # owner: a code can land one fp8 step apart. Nearly every value is equal; none is far.
    close = (x - expected).abs() <= 1e-6
    assert close.float().mean() >= 0.99
    torch.testing.assert_close(x, expected, rtol=0, atol=2e-3)


def _partitions(numels, count):
    """Brute force: every way to cut the tensors into `count` non-empty runs, as lists of run sizes."""
    for cuts in itertools.combinations(range(1, len(numels)), count - 1):
        edges = [0, *cuts, len(numels)]
        yield [sum(numels[a:b]) for a, b in zip(edges, edges[1:])]


def test_fragments_are_runs_of_tensors_with_the_smallest_largest_run():
    assert fragments([10, 10, 10, 10], 2) == [(0, 20), (20, 40)]
    assert fragments([100, 1, 1, 1], 3) == [(0, 100), (100, 102), (102, 103)]  # every fragment gets a tensor
    assert fragments([5], 1) == [(0, 5)]
    # the first tensor boundary past half the parameters gave 400 / 116 here; the best cut is 200 / 316
    assert fragments([200, 200, 116], 2) == [(0, 200), (200, 516)]
    gen = torch.Generator().manual_seed(0)
    for trial in range(200):
        numels = torch.randint(1, 50, (int(torch.randint(1, 9, (1,), generator=gen)),), generator=gen).tolist()
        count = int(torch.randint(1, len(numels) + 1, (1,), generator=gen))
        got = fragments(numels, count)
        sizes = [b - a for a, b in got]
        assert len(got) == count and all(sizes) and got[0][0] == 0 and got[-1][1] == sum(numels)
        assert all(a == b for (_, a), (b, _) in zip(got, got[1:]))  # consecutive runs, tensor boundaries
        starts = set(itertools.accumulate(numels, initial=0))
        assert all(a in starts for a, _ in got)
        assert max(sizes) == min(max(p) for p in _partitions(numels, count)), (numels, count)


def test_bytes_per_send_are_the_closed_form():
    """Each send: the fragment's blocks (padded to N) of BLOCK values at `bits` each plus a float32
    scale, (N - 1) / N of it in the all-to-all and again in the all-gather (ring)."""
    layout, _, _, _, strategy, sent = _run(SHAPES, 4, 2 * H, "fp4-allreduce", local_steps=H, fragments=P, delay=1)
    specs = [s.spec for s in sent if not s.local]
    assert [s.numel for s in specs] == [sum(b - a for a, b in f) for f in strategy.fragments] * 2
    for bits, name in ((4, "fp4-allreduce"), (8, "fp8-allreduce")):
        for spec in specs:
            blocks = math.ceil(math.ceil(spec.numel / 256) / 4) * 4
            calls = TRANSPORTS.get(name)().plan(spec, 4)
            assert sum(c.nbytes for c in calls if c.op == "all_to_all") == blocks * (256 * bits // 8 + 4)
            assert sum(c.nbytes for c in calls if c.op == "all_gather") == blocks * (256 * bits // 8 + 4)
    # 7B-like: 4096 x 4096 in fp4 at N = 8 is 2(N-1)/N x (0.5 + 4/256) bytes a value
    from lionsim.network.presets import NETWORKS
    from lionsim.steptime.timeline import price_calls

    spec = PayloadSpec(kind="dense", numel=4096 * 4096)
    calls = TRANSPORTS.get("fp4-allreduce")().plan(spec, 8)
    priced = price_calls(calls, 8, NETWORKS.get("h100x8-10gbe"))
    assert priced.sent_bytes == pytest.approx(2 * 7 / 8 * 4096 * 4096 * (0.5 + 4 / 256), rel=1e-6)


def test_a_send_waits_only_for_what_tau_steps_do_not_hide():
    from lionsim.network.presets import NETWORKS
    from lionsim.steptime.timeline import price_step
    from lionsim.steptime.overlap import OverlapConfig
    from lionsim.steptime.timeline import StepWork

    network = NETWORKS.get("1gbe")
    work = StepWork(forward_s=0.1, backward_s=0.2)
    transport = TRANSPORTS.get("fp4-allreduce")()
    for tau in (0, 1, 3):
        spec = PayloadSpec(kind="dense", numel=10**8, hidden_steps=tau)
        priced = price_step(transport=transport, spec=spec, workers=8, network=network, overlap=OverlapConfig(),
                            strategy=STRATEGIES.get("streaming-diloco"))
        comm = priced.comm.time_s
        times = priced.times(work)
        assert times.comm_exposed_s == pytest.approx(max(0.0, comm - tau * 0.3))
        assert times.comm_s == pytest.approx(comm)


@pytest.mark.parametrize("args,message", [
    (["--local-steps", "1", "--streaming-fragments", "2"], "bad --local-steps 1: fewer than --streaming-fragments 2; accepted: a whole number at least 2"),
    (["--local-steps", "5", "--streaming-fragments", "2", "--streaming-delay", "2"], "bad --streaming-delay 2"),
    (["--local-steps", "4", "--streaming-fragments", "2", "--streaming-delay", "2"], "bad --streaming-delay 2"),
    (["--streaming-alpha", "1.5"], r"bad --streaming-alpha 1.5; accepted: a number from 0 to 1"),
    (["--streaming-fragments", "0"], "bad --streaming-fragments 0; accepted: a whole number at least 1"),
    (["--streaming-fragments", "500", "--local-steps", "500"], "bad --streaming-fragments 500"),
])
def test_bad_options_are_refused_in_one_line(args, message, tmp_path, monkeypatch, capsys):
    import re

    from lionsim.cli.app import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit:
        main(["bench", "-w", "mlp", "-s", "streaming-diloco", "--steps", "1", *args])
    err = capsys.readouterr().err.strip()
    assert exit.value.code == 2 and len(err.splitlines()) == 1 and re.search(message, err), err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("delay", [0, 1])
def test_a_whole_run_prices_a_send_where_training_sends(delay):
    """`estimate --steps` asks run_spec of every step: a send every H / P steps (tau before its merge),
    the steps on which training sends, not one every H."""
    *_, strategy, sent = _run(SHAPES, 2, 2 * H, "fp32-allreduce", local_steps=H, fragments=P, delay=delay)
    steady = strategy.payload_spec()
    priced = [strategy.run_spec(step, steady) is not None for step in range(1, 2 * H + 1)]
    assert priced == [not s.local for s in sent] and sum(priced) == 2 * P


def test_the_padding_table_is_what_the_transports_send():
    """The docs' padding table (lionsim.docgen.methods): a 116-value fragment at N = 4 pads to 4 blocks of
    256 fp4 values and a 4-byte scale each, 528 bytes, of which a ring sends 2 (N - 1) / N: 792 bytes, 54.6
    bits a value."""
    from lionsim.docgen.methods import padding_table

    row = next(line for line in padding_table().splitlines() if line.startswith("| 116 | 4 |"))
    assert row.split(" | ")[2:5] == ["4", "792 B", "54.6"]


@pytest.mark.parametrize("h,p,delay", [(5, 2, 0), (5, 2, 1), (7, 3, 1), (100, 8, 1), (6, 3, 1)])
def test_where_p_does_not_divide_h_the_mth_merge_is_at_ceil_m_h_over_p(h, p, delay):
    # the closed form, listed: merges at ceil(m H / P), sends tau steps before; P merges in every H
    # steps, each fragment once, round-robin (with P dividing H: every H / P steps, torchft's schedule)
    layout = _layout([(3,)] * p)
    cfg = StrategyConfig(options={"streaming-diloco.local_steps": h, "streaming-diloco.fragments": p,
                                  "streaming-diloco.delay": delay})
    strategy = STRATEGIES.get("streaming-diloco")(cfg, layout, SimComm(2))
    steps = 3 * h
    merges = [math.ceil(m * h / p) for m in range(1, 3 * p + 1)]
    assert [s for s in range(1, steps + 1) if strategy.merges(s)] == merges
    assert [s for s in range(1, steps + 1) if strategy.sends(s)] == [m - delay for m in merges]
    assert strategy.send_rate == Fraction(p, h)
    assert all(b - a >= h // p > delay for a, b in zip(merges, merges[1:]))


@pytest.mark.parametrize("delay", [0, 1])
def test_where_p_does_not_divide_h_training_merges_each_fragment_once_per_round(delay):
    # 5 steps, 2 fragments: merges after steps 3 and 5, 8 and 10; each fragment's replica is mixed
    # with the global model once per round (a merge leaves only that fragment changed on p)
    layout, grads, x0, x, strategy, sent = _run(SHAPES, 2, 10, "fp32-allreduce", local_steps=5, fragments=2,
                                                delay=delay, alpha=0.0, outer_lr=1.0, outer_momentum=0.0)
    assert [s.spec is not None for s in sent] == [strategy.sends(t) for t in range(1, 11)]
    assert strategy.synced == 4 and sum(s.spec is not None for s in sent) == 4


@pytest.mark.parametrize("pattern", ["sequential", "strided"])
def test_the_steady_row_is_the_mean_step_of_a_whole_run_where_p_does_not_divide_h(pattern):
    # estimate's steady row prices P / H of a sending step (Strategy.send_rate); a whole run of m rounds
    # asks run_spec of every step: m P sends, each priced alone. Both must agree to rounding.
    from lionsim.estimate import EstimateConfig, estimate

    cfg = EstimateConfig(params=10**8, tensors=12, tokens_per_worker=4096, workers=2, network="1gbe",
                         strategies=["streaming-diloco@fp4-allreduce"], steps=3 * 10,
                         options={"local_steps": 10, "streaming_fragments": 4, "streaming_delay": 1,
                                  "streaming_pattern": pattern})
    (row,) = estimate(cfg).itertuples()
    assert row.run_phases.count("send") and row.local_steps == 2
    assert row.mean_step_s == pytest.approx(row.step_s, rel=1e-9)
    assert row.comm_exposed_s > 0  # the 1 GbE link does not hide a 25M-parameter fragment


ONE_TENSOR = '''
import torch
from torch import nn


def make():
    with torch.device("cpu"):  # real data also when lionsim first calls make() on the meta device
        g = torch.Generator().manual_seed(0)
        x = torch.randn(512, 8, generator=g)
        data = torch.utils.data.TensorDataset(x, (x[:, 0] > 0).long())
    return nn.Linear(8, 2, bias=False), data, nn.functional.cross_entropy
'''
"""A plug-in workload whose model is one tensor."""
PRICED = ["estimate", "--params", "1e8", "--tokens-per-worker", "1000", "-s", "streaming-diloco", "--format", "csv"]


def _priced(args, capsys):
    import io

    import pandas as pd

    from tests.helpers.cli import run_cli

    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    return pd.read_csv(io.StringIO(out)), " ".join(err.split())


def test_the_default_fragments_on_one_tensor_are_one_with_a_note_and_a_typed_count_is_refused(capsys):
    """`estimate --params` (one tensor unless --tensors says more) was refused over
    --streaming-fragments 2, an option no one typed. The default is cut to the tensors, priced as the
    typed --streaming-fragments 1 prices (the reference), and a note says so; a count typed past the
    tensors is still refused; --tensors 4 prices the default 2."""
    from tests.helpers.cli import one_line_exit_2

    default, said = _priced(PRICED, capsys)
    typed, quiet = _priced([*PRICED, "--streaming-fragments", "1"], capsys)
    assert default.equals(typed)
    note = ("streaming-diloco: 1 fragment, not the default 2: fragments are whole tensors and the model has 1 "
            "tensor (--tensors T gives estimate's model T)")
    assert note in said and "fragment" not in quiet, said
    assert one_line_exit_2([*PRICED, "--streaming-fragments", "2"], capsys).strip() == (
        "error: bad --streaming-fragments 2; accepted: a whole number from 1 to the model's 1 tensor")
    four, said = _priced([*PRICED, "--tensors", "4"], capsys)
    assert "fragment" not in said, said
    h = 4  # the default H: a send every H / P steps
    assert (int(default["local_steps"].iloc[0]), int(four["local_steps"].iloc[0])) == (h // 1, h // 2)


def test_a_bench_of_a_one_tensor_model_trains_as_one_typed_fragment_with_the_note(tmp_path, capsys):
    import json

    import pandas as pd

    from tests.helpers.cli import run_cli

    path = tmp_path / "one.py"
    path.write_text(ONE_TENSOR)
    bench = ["bench", "-w", f"{path}:make", "-s", "streaming-diloco", "-n", "2", "-b", "8", "--steps", "6",
             "--eval-every", "6"]
    runs = {}
    for name, extra in (("default", []), ("typed", ["--streaming-fragments", "1"])):
        code, _, err = run_cli([*bench, *extra, "--out", tmp_path / name], capsys)
        assert code == 0, err
        runs[name] = pd.read_csv(tmp_path / name / "steps.csv")
    assert runs["default"]["loss"].tolist() == runs["typed"]["loss"].tolist()
    notes = json.loads((tmp_path / "default" / "run.json").read_text()).get("notes", [])
    # bench has no --params or --tensors: the note names neither (it named estimate's)
    assert ("streaming-diloco: 1 fragment, not the default 2: fragments are whole tensors and the model has 1 "
            "tensor") in notes, notes
    assert not any("fragment" in n for n in json.loads((tmp_path / "typed" / "run.json").read_text()).get("notes", []))
