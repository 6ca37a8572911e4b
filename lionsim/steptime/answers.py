"""What a step's pricing asks of a transport for one payload spec, asked before anything runs.

Booking a step (bench, sweep: after its run has trained) and pricing one (estimate) ask the
transport for the spec's collectives (`plan`), its bits (`bits_per_param`), its packing bytes
(`wire_bytes`, where the compute is modelled) and its note (`footnote`). Each is a pure function
of the spec and the worker count, so a bench asks them at plan time for every spec its runs send
(lionsim.config.sends) and estimate as it prices: an answer a plug-in gets wrong (None, one number
for two, a raise) is one line naming the plug-in, the spec and what is accepted, not a traceback
after the training it would have priced."""

from __future__ import annotations

import math
import numbers
import sys
import traceback
from typing import Callable

from lionsim.errors import LionsimError, a_type
from lionsim.network.calls import CollectiveCall
from lionsim.steptime.undeclared import origin, payload_words, priced_transport
from lionsim.steptime.wire_passes import transport_bytes
from lionsim.transports import PayloadSpec
from lionsim.transports.base import Transport, TransportBytes, bits_on, footnote_on, plan_on

PLAN = "a list of lionsim.network.CollectiveCall ([] where it sends nothing)"
BITS = "(up, down): two finite numbers of bits per parameter, at least 0"
NOTE = 'a str ("" where the figures need no note)'


def check_answers(transport: Transport, spec: PayloadSpec, workers: int, workers_per_node: int = 1,
                  wire: bool = False, note: bool = False) -> None:
    """Ask `transport` what pricing `spec` on `workers` workers (nodes of `workers_per_node`) asks
    it: its plan and bits, its wire_bytes where `wire` (modelled compute), its footnote where `note`
    (the run's steady spec, which bench's footer reads); one LionsimError line for a wrong answer.
    A lone worker sends nothing and is asked nothing."""
    if workers < 2:
        return

    def asked(method: str, call: Callable[[], object], accepted: str, good: Callable[[object], bool]) -> None:
        try:
            answer = call()
        except LionsimError:
            raise
        except Exception as e:  # noqa: BLE001 -- a plug-in's own code: one line, with its line
            if not origin(priced_transport(transport.name)):
                raise  # lionsim's own: a bug, with its traceback
            raise LionsimError(_line(transport, method, f"raised {type(e).__name__}: {e}{_where(e, transport)}",
                                     spec, workers, accepted)) from None
        if not good(answer):
            raise LionsimError(_line(transport, method, f"returned {_shown(answer)}", spec, workers, accepted))

    asked("plan", lambda: plan_on(transport, spec, workers, workers_per_node), PLAN,
          lambda calls: isinstance(calls, list) and all(isinstance(c, CollectiveCall) for c in calls))
    asked("bits_per_param", lambda: bits_on(transport, spec, workers, workers_per_node), BITS, _two_bits)
    if note:
        asked("footnote", lambda: footnote_on(transport, spec, workers, workers_per_node), NOTE,
              lambda text: isinstance(text, str))
    if wire:  # None: transport_bytes' own line (lionsim.steptime.undeclared.wire_none)
        asked("wire_bytes", lambda: transport_bytes(transport.name, spec, workers, workers_per_node),
              "TransportBytes(pack, unpack, aggregate)", lambda found: isinstance(found, TransportBytes))


def _two_bits(bits: object) -> bool:
    return (isinstance(bits, (tuple, list)) and len(bits) == 2
            and all(isinstance(b, numbers.Real) and not isinstance(b, bool) and math.isfinite(b) and b >= 0
                    for b in bits))


def _shown(answer: object) -> str:
    """A wrong answer as the line shows it: itself where it is short and plain, else its type."""
    text = repr(answer)
    plain = isinstance(answer, (type(None), numbers.Number, str, tuple, list))
    return text if plain and len(text) <= 60 else a_type(answer)


def _line(transport: Transport, method: str, what: str, spec: PayloadSpec, workers: int, accepted: str) -> str:
    cls = priced_transport(transport.name)
    return (f"{origin(cls)}transport {transport.name!r}: its {method} {what} for {payload_words(spec)} on "
            f"{workers} workers, which this run sends; accepted: {accepted}")


def _where(e: BaseException, transport: Transport) -> str:
    """" (line N)" of the plug-in file that raised `e`, "" where no frame is its."""
    cls = priced_transport(transport.name)
    file = getattr(sys.modules.get(cls.__module__), "__file__", None)
    lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if file and f.filename == file]
    return f" (line {lines[-1]})" if lines else ""
