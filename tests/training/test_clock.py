"""The step Clock: on a CUDA device it synchronises at every section boundary (queued kernels
are booked to the section that launched them, not to whichever section the host reaches
next); a CPU clock never touches CUDA. Checked by counting synchronisations, not by timing."""

import torch

from lionsim.timing import Clock


def test_a_cuda_clock_synchronises_at_every_section_boundary(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append(str(device)))
    clock = Clock(torch.device("cuda:0"))
    with clock.section("encode"):
        assert calls == ["cuda:0"]  # entering closes whatever ran before
        with clock.section("update"):
            pass
    assert calls == ["cuda:0"] * 4  # in, in, out, out
    assert set(clock.take()) >= {"encode", "update"}


def test_a_cpu_clock_never_synchronises(monkeypatch):
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: (_ for _ in ()).throw(AssertionError))
    for clock in (Clock(), Clock(torch.device("cpu"))):
        with clock.section("encode"):
            pass
        assert "encode" in clock.take()
