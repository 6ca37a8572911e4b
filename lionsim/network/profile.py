"""`--network PRESET|FILE`: presets by name, or a TOML/JSON profile file (SPEC "Network profile files").

    name = "mycluster"          # optional; the file's stem if absent
    workers_per_node = 8        # optional; 1 (flat) if absent
    oversubscription = 2.0      # optional; divides the inter-node bandwidth (>= 1)
    ps_servers = 2              # optional; parameter servers for ps_push / ps_pull
    [inter]                     # required: the link between nodes, per node
    alpha_us = 25.0             # per-message latency, microseconds (>= 0)
    bandwidth_GBps = 1.17       # achieved bandwidth per direction, 1e9 bytes/s (1e-6 to 1e6)
    efficiency = 1.0            # optional multiplier on bandwidth, in (0, 1]
    reduce_GBps = 10.0          # optional: 1e9 bytes combined per second in reductions (gamma = 1/it;
                                # 1e-6 to 1e6, as bandwidth_GBps: lionsim.ranges.BANDWIDTH_GBPS);
                                # NCCL's model has none: lionsim.estimate.library_checks
    [intra]                     # the link inside a node, per worker: optional in a flat profile,
                                # required when workers_per_node > 1 (no default: NVLink, PCIe
                                # and a shared NIC differ 10-100x; an error names the fix)
    alpha_us = 1.0
    bandwidth_GBps = 360.0
    hardware = "nvlink"         # optional: nvlink or pcie (NCCL's hop latencies and NCCL 2.4's
                                # two-node tree); absent: NVLink from 100 GB/s up (link.NVLINK_GBPS)
    traits = "gloo"             # optional: the collective library's traits, a built-in name or a
                                # [traits] table (lionsim.network.traits_file); absent: the run's
                                # (NCCL on a GPU device: estimate, bench --compute GPU, comm on GPU
                                # nodes, lionsim.estimate.gpu_library; else ideal)
    fabric = "efa"              # optional: the transport NCCL runs over across nodes (ib, efa,
                                # sockets, tuning: lionsim.network.fabrics); absent: sockets when
                                # inter.alpha_us >= 10, else ib
    device = "a100-40gb"        # optional: the GPU every worker is, a lionsim device (`lionsim
                                # devices`) or a device file (a path from the profile's folder):
                                # estimate's --device when none is given (bench's --compute does
                                # not follow it); absent: h100
    nvls = "hopper"             # optional: the GPUs' NVLink SHARP generation (hopper, blackwell:
                                # NVSwitch gen3 on), where NCCL runs NVLS / NVLS Tree
                                # (lionsim.network.nccl); absent: none. Needs workers_per_node >= 2
                                # and an NVLink [intra] link
    [nccl]                      # optional: NCCL's socket-transport settings, which set the sockets
    min_nchannels = 4           # fabric's per-node rate (lionsim.network.sockets): NCCL_MIN_NCHANNELS
                                # (1-64), refused on any other fabric; absent: 2 channels a NIC
    version = "2.4.7"           # the NCCL version (2.4.0 on: lionsim.network.ncclversion); absent:
                                # today's, whose two-node tree rule holds on any intra link and
                                # which has NVLS (2.17.1 on) and NVLS Tree (2.18.1 on)
    bounce_GBps = 8.6           # what one node moves through host memory on the efa-host fabric
                                # (refused on any other); absent: the fabric's fitted cap
    [measured]                  # optional: where a fitted profile was measured (a record)

The links are the wire; [traits] is what the library (gloo, NCCL) adds on top of it: a per-call
floor, each op's duplex share, reduction rates per dtype, a host cap, small calls' slow mode.
`lionsim comm --backend gloo|nccl --fit` measures both and writes them.

JSON files hold the same object. Every problem (unknown or missing key, wrong type,
NaN, a number out of its range) is a LionsimError naming the key and the file, a range in the
words every command uses: "'inter.alpha_us' = -5 is out of range; accepted: a finite number at
least 0" (lionsim.network.keys).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from lionsim.errors import LionsimError
from lionsim.network.keys import integer, no_unknown, number, ranged, string
from lionsim.network.link import COUNT, HARDWARE, Link, Network, check_hardware
from lionsim.network.presets import NETWORKS
from lionsim.network.sockets import GENERIC, SocketSettings, settings_from_table
from lionsim.network.traits import IDEAL
from lionsim.network.traits_file import measured_record, traits_from_value
from lionsim.ranges import BANDWIDTH_GBPS
from lionsim.registry import closest, did_you_mean
from lionsim.text_formats import read_parsed

_LINK_KEYS = {"alpha_us": True, "bandwidth_GBps": True, "efficiency": False, "reduce_GBps": False, "hardware": False}
"""Link keys -> required?"""
_TOP_KEYS = ("name", "description", "workers_per_node", "oversubscription", "ps_servers", "inter", "intra",
             "traits", "fabric", "nvls", "device", "nccl", "measured")


def canonical_network(spec: str | os.PathLike[str]) -> str:
    """A preset name in its listed spelling (`10GbE` -> `10gbe`); anything else (a profile file
    path, or an unknown name, which load_network rejects) as given."""
    text = os.fspath(spec)
    return NETWORKS.canonical(text) if text in NETWORKS else text


def nearby_profile(text: str) -> str:
    """"; did you mean 'DIR/NAME.toml'?" where `text` looks like a path (a suffix or a slash) and a
    profile file (.toml, .json) beside it has a close name (registry.closest): a typo
    of an existing file (`mycluster.tom`); "" otherwise. Only a profile is offered (_is_profile):
    the --config file that named a missing one lies beside it with as close a name."""
    path = Path(text)
    if not (path.suffix or "/" in text or os.sep in text):
        return ""
    try:
        names = [p.name for p in path.parent.iterdir() if p.suffix.lower() in (".toml", ".json") and p.is_file()]
    except OSError:  # no such folder, or not readable: nothing to suggest
        return ""
    close = [n for n in names if closest(path.name, [n]) is not None]  # read only the files a suggestion could name
    name = closest(path.name, [n for n in close if _is_profile(path.parent / n)])
    if name is None:
        return ""
    return f"; did you mean {name if path.parent == Path('.') else str(path.parent / name)!r}?"


def gpu_nodes_hint(text: str) -> str:
    """"; did you mean --network 25gbe --gpus-per-node 8?" for a name written as the GPU-node presets
    are (`h100x8-25gbe`) whose link is a flat preset: estimate and comm put the GPUs in the nodes
    (a profile with workers_per_node does it for bench); "" otherwise."""
    import re

    found = re.fullmatch(r"[a-z0-9]+x(\d+)-(.+)", text.strip().lower())
    if not found or found.group(2) not in NETWORKS or int(found.group(1)) < 2:
        return ""
    return (f"; did you mean --network {NETWORKS.canonical(found.group(2))} --gpus-per-node {int(found.group(1))} "
            "(estimate, comm; for bench a profile with workers_per_node: docs/backends.md)?")


def _is_profile(path: Path) -> bool:
    """Whether `path` reads as a profile: a table with the [inter] link every profile needs (a
    --config file, a run.json or any other TOML or JSON has none)."""
    try:
        return "inter" in _read(path)
    except LionsimError:
        return False


def load_network(spec: str | os.PathLike[str]) -> Network:
    """A preset by name, or a `.toml` / `.json` profile file."""
    text = os.fspath(spec)
    if text in NETWORKS:
        return NETWORKS.get(text)
    accepted = f"a preset ({', '.join(NETWORKS.names())}) or an existing .toml/.json profile file"
    if Path(text).is_dir():
        raise LionsimError(f"network {text!r} is a directory, not a profile file; accepted: {accepted}")
    suffix = Path(text).suffix.lower()
    if suffix not in (".toml", ".json"):
        hint = nearby_profile(text) or gpu_nodes_hint(text) or did_you_mean(text, NETWORKS.names())
        raise LionsimError(f"unknown network {text!r}; choose a preset ({', '.join(NETWORKS.names())}) "
                           f"or a .toml/.json profile file{hint}")
    path = Path(text)
    if not path.is_file():
        raise LionsimError(f"network profile not found: {path}; accepted: {accepted}{nearby_profile(text)}")
    try:
        return network_from_dict(_read(path), source=str(path), default_name=path.stem)
    except LionsimError as e:  # "FILE: unknown key 'workers'; ..." -> the option's one line, naming --network
        text = str(e)
        if not text.startswith(f"{path}: "):
            raise
        raise LionsimError(f"bad --network {text}") from None


PROFILE_FILE = ("a TOML or JSON table with at least [inter] alpha_us and bandwidth_GBps (docs/backends.md, "
                "Network profile files)")
"""What a profile file holds, in the refusal of one that does not parse or holds nothing."""


def _read(path: Path) -> dict[str, Any]:
    """The profile's table; one line, `FILE: why; accepted: ...`, where the file does not parse
    (lionsim.text_formats: its reason in plain words) or holds no keys at all."""
    data = read_parsed(path, "toml" if path.suffix.lower() == ".toml" else "json", "network profile", PROFILE_FILE)
    if not isinstance(data, dict):
        raise LionsimError(f"{path}: a network profile must be a table/object at the top level")
    if not data:  # valid (empty) TOML: "missing key 'inter'" would not say the file holds nothing
        raise LionsimError(f"{path}: it is empty (no keys); accepted: {PROFILE_FILE}")
    return data


def network_from_dict(data: dict[str, Any], *, source: str, default_name: str) -> Network:
    """Validate a profile's data (from a file, or `Network.to_dict()`) and build the Network."""
    if "collectives" in data:  # the per-collective size regimes of earlier releases: the traits replace them
        raise LionsimError(f"{source}: [collectives.*] size regimes are no longer read (a profile now holds links "
                           "plus [traits]); refit it: lionsim comm --backend gloo --fit PROFILE.toml")
    no_unknown(data, _TOP_KEYS, "", source)
    if "inter" not in data:
        raise LionsimError(f"{source}: missing key 'inter' (the [inter] link table)")
    inter = _link(data["inter"], "inter", source)
    intra = _link(data["intra"], "intra", source) if "intra" in data else None
    workers_per_node = integer(data, "workers_per_node", source, COUNT, default=1)
    if workers_per_node > 1 and intra is None:  # no default: NVLink, PCIe and a shared NIC differ 10-100x
        raise LionsimError(
            f"{source}: workers_per_node = {workers_per_node} needs an [intra] link table (alpha_us, bandwidth_GBps: "
            "the link between workers of one node); [intra] is optional only in a flat profile (workers_per_node = "
            "1). For NVLink copy a preset's: `lionsim networks` (nvlink4: 1 us, 380 GB/s)")
    name = string(data, "name", source, default=default_name)
    fabric = _fabric(data, source)
    sockets = settings_from_table(data["nccl"], source) if "nccl" in data else GENERIC
    _settings_act(sockets, fabric, inter, source)
    try:
        return Network(
            name=name,
            inter=inter,
            intra=intra,
            workers_per_node=workers_per_node,
            oversubscription=number(data, "oversubscription", source, low=1.0, default=1.0,
                                    why="it divides the inter-node bandwidth"),
            ps_servers=integer(data, "ps_servers", source, COUNT, default=1),
            description=string(data, "description", source, default=f"profile {source}"),
            traits=traits_from_value(data["traits"], source=source, default_name=name) if "traits" in data else IDEAL,
            fabric=fabric,
            nvls=string(data, "nvls", source, default="") if "nvls" in data else "",
            device=_device(data, source),
            sockets=sockets,
            measured=measured_record(data["measured"], source) if "measured" in data else {},
            library_named="traits" in data,
        )
    except LionsimError as e:  # a cross-field rule of Network: add the file
        text = str(e)
        raise LionsimError(text if text.startswith(f"{source}:") else f"{source}: {text}") from None


def _settings_act(sockets: SocketSettings, fabric: str, inter: Link, source: str) -> None:
    """Refuse an [nccl] key where it cannot act: nccl.min_nchannels only on a per-channel fabric
    (sockets), nccl.bounce_GBps only on one that bounces through host memory (efa-host); on the
    others NCCL's rate is the fitted one whatever they say. The traits are not checked: a gloo or
    ideal profile may be run with --traits nccl."""
    from lionsim.network.fabrics import FABRICS, infer_fabric

    name = fabric or infer_fabric(inter.alpha_s)
    how = "stated" if fabric else "inferred from the inter link's alpha below 10 us"
    for key, acts, what in (("min_nchannels", lambda f: f.channel_GBps is not None,
                             "NCCL's socket transport, priced per channel"),
                            ("bounce_GBps", lambda f: f.through_host, "EFA without GPUDirect RDMA: every byte "
                             "crosses host memory")):
        if getattr(sockets, key) is None or acts(FABRICS.get(name)):
            continue
        where = [f for f in FABRICS.names() if acts(FABRICS.get(f))]
        raise LionsimError(f"{source}: nccl.{key} acts only on the {', '.join(where)} fabric ({what}), not on this "
                           f"network's fabric {name!r} ({how}); accepted here: nccl.version, or fabric = "
                           f"\"{where[0]}\"")


def _device(data: dict[str, Any], source: str) -> str:
    """The profile's `device`, lower case, "" when absent. Its name is checked against lionsim's
    devices where it is read (lionsim.estimate.plain.chosen_device): the device presets sit above
    the network package (lionsim.compute imports its links), so a network cannot look them up."""
    if "device" not in data:
        return ""
    text = string(data, "device", source, default="").strip()
    if not text.lower().endswith(".toml"):
        return text.lower()
    path = Path(text).expanduser()  # a device file (lionsim.compute.device_file), beside the profile
    return str((path if path.is_absolute() else Path(source).parent / path).resolve())


def _fabric(data: dict[str, Any], source: str) -> str:
    """The profile's `fabric` (fabrics.py), "" when absent (inferred from the inter link's alpha)."""
    from lionsim.network.fabrics import FABRICS

    if "fabric" not in data:
        return ""
    name = string(data, "fabric", source, default="")
    if name not in FABRICS:
        raise LionsimError(f"{source}: unknown fabric {name!r}; accepted: {', '.join(FABRICS.names())}"
                           f"{did_you_mean(name, FABRICS.names())}")
    return FABRICS.canonical(name)


def _link(table: Any, where: str, source: str) -> Link:
    if not isinstance(table, dict):
        raise LionsimError(f"{source}: '{where}' must be a table of {', '.join(_LINK_KEYS)}")
    no_unknown(table, tuple(_LINK_KEYS), f"{where}.", source)
    for key, required in _LINK_KEYS.items():
        if required and key not in table:
            raise LionsimError(f"{source}: missing key '{where}.{key}'")
    reduce = table.get("reduce_GBps")
    return Link.from_units(
        alpha_us=number(table, "alpha_us", source, low=0.0, prefix=where),
        bandwidth_GBps=ranged(table, "bandwidth_GBps", source, BANDWIDTH_GBPS, prefix=where),
        efficiency=number(table, "efficiency", source, low=0.0, open_low=True, high=1.0, prefix=where, default=1.0,
                          why="a multiplier on bandwidth_GBps"),
        reduce_GBps=None if reduce is None else ranged(table, "reduce_GBps", source, BANDWIDTH_GBPS, prefix=where),
        hardware=_hardware(table, where, source),
    )


def _hardware(table: dict[str, Any], where: str, source: str) -> str:
    """[intra]'s `hardware` (link.check_hardware), refused on [inter]: NCCL prices the inter link by
    fabric."""
    if "hardware" not in table:
        return ""
    if where != "intra":
        raise LionsimError(f"{source}: '{where}.hardware' is not accepted; an [intra] link may state it "
                           f"({', '.join(HARDWARE)}); across nodes say `fabric`")
    value = table["hardware"]
    try:
        check_hardware(value)
    except LionsimError as e:
        raise LionsimError(f"{source}: {where}.{e}") from None
    return value


def network_for(spec: str | os.PathLike[str], *, traits: str | None = None, backend: str = "sim",
                library: str | None = None, loaded: Network | None = None) -> Network:
    """The network a run is priced on: the preset or profile, run by the built-in `traits` when
    named (--traits), else by the profile's own [traits], else by the backend's (gloo's measured
    traits on gloo, nccl's on nccl). On sim a preset keeps the library it names (presets.py) and
    a profile without [traits] takes `library`: what the modelled device runs ("nccl" for a GPU:
    estimate, bench --compute with a device preset, comm on GPU nodes), else the ideal library.
    A profile whose traits were measured on another backend than a real run's is refused: its
    floors and duplex belong to that library. `loaded`: load_network(spec) where the caller holds
    it already (the profile parsed once)."""
    from lionsim.network.libraries import TRAITS, backend_traits

    net = load_network(spec) if loaded is None else loaded
    if traits is not None:
        return net.with_traits(TRAITS.get(traits))
    if backend != "sim" and any(net.traits is t for _, t in TRAITS.items()):
        return net.with_traits(backend_traits(backend))  # a preset's built-in library gives way to the run's
    if backend != "sim" and net.traits.backend not in ("any", backend):
        raise LionsimError(f"network {net.name!r} carries traits measured on {net.traits.backend}, but this run uses "
                           f"{backend}: fit a profile on {backend} (lionsim comm --backend {backend} --fit FILE) "
                           f"or pass --traits {backend}")
    if net.traits.ideal and net.traits.backend == "any":
        if backend != "sim":
            return net.with_traits(backend_traits(backend))
        if library is not None and not net.library_named and os.fspath(spec) not in NETWORKS:
            return net.with_traits(TRAITS.get(library))  # a profile naming none (a preset names its own)
    if backend == "sim" and net.traits.slow.shared_cores:  # a host's wait for a core: no simulated worker shares one
        from lionsim.network.traits import SlowMode

        return net.with_traits(dataclasses.replace(net.traits, slow=SlowMode()))
    return net


def host_slow_line(spec: str | os.PathLike[str], backend: str) -> str:
    """The line where network_for left a profile's slow mode out: it was fitted while ranks shared a
    host's cores (traits.SlowMode.shared_cores), and a simulated worker has a host of its own; ""
    elsewhere (a preset, a real run, a profile without one)."""
    from lionsim.numbers import binary_bytes_text

    if backend != "sim" or os.fspath(spec) in NETWORKS:
        return ""
    try:
        slow = load_network(spec).traits.slow
    except LionsimError:
        return ""
    if not slow.shared_cores:
        return ""
    return (f"{Path(spec).name}'s slow mode ({slow.probability:.0%} of calls up to {binary_bytes_text(slow.max_bytes)} "
            f"were {slow.extra_s * 1e3:.3g} ms slower) was fitted while ranks shared a host's cores: a wait for a core, "
            "not the link's, left out where each worker has a host of its own (a gloo run on that host pays it)")


def library_chosen(network: Network, traits: str | None) -> bool:
    """Whether the user chose the library `network` (network_for's) runs: --traits `traits`, or its
    profile file's `traits` key (dc-pair.toml's "ideal": the papers' no-latency pricing; read where
    the file was parsed, Network.library_named), rather than a preset's own or, for a profile
    without one, the backend's or the device's (network_for)."""
    return traits is not None or network.library_named
