"""What a run's tables, titles and plots call its network and link, and why a measured run's comm
is not compared with the model: plain words from run.json, without matplotlib (lionsim comm and
the tables read them without loading the plots)."""

from __future__ import annotations

from pathlib import Path

from lionsim.option_paths import is_profile_file


def model_describes_link(meta: dict | None) -> bool:
    """Whether a run's comm_model_s prices the link it ran on: --network given (run.json's
    network_given), or a calibration fitted on the run's own group. False for a measured run
    left at the default --network (1gbe), whose error would compare two unrelated links."""
    meta = meta or {}
    return meta.get("network_given", True) is not False or bool(meta.get("config", {}).get("calibrate"))


def named_network(network: str, meta: dict | None, measured: bool) -> str:
    """The network as every table, title and plot of a run names it: on the simulator the
    preset; on gloo/nccl the link the collectives were measured on, then the model that priced
    them where one describes it ("loopback, measured (model: 10gbe)"), else the link alone (a
    default --network priced nothing measured: unchecked_model)."""
    if not measured:
        return network
    if one_rank(meta):  # its collectives crossed no process boundary: comm was priced, not measured
        return f"{network} (1 {_backend(meta)} rank: comm modelled)"
    return measured_link(meta) + ("" if unchecked_model(meta) else f" (model: {network})")


def one_rank(meta: dict | None) -> bool:
    """Whether a gloo/nccl run ran as one rank (run.json's config): it holds every worker, so no
    collective was measured and comm is modelled as on the simulator (training.record's note)."""
    meta = meta or {}
    config = meta.get("config") or {}
    # --ranks left out is recorded as such (a replay picks its default again): the ranks that ran say
    ranks = config.get("ranks") or (meta.get("hosts") or {}).get("ranks")
    return config.get("backend", "sim") != "sim" and ranks == 1


def _backend(meta: dict | None) -> str:
    return str(((meta or {}).get("config") or {}).get("backend", "gloo"))


def compute_measured(meta: dict | None) -> bool:
    """Whether a simulator run timed its compute on this machine (--compute measured, run.json's
    config): its clock is then part measured (compute, codec, update), part modelled (the network)."""
    config = (meta or {}).get("config", {})
    return config.get("backend", "sim") == "sim" and config.get("compute") == "measured"


def measured_link(meta: dict | None) -> str:
    """The link a gloo/nccl run's collectives crossed, from run.json: a named link or interface
    where recorded, else "loopback" when every rank ran on this host (lionsim started them, or
    the launcher's LOCAL_WORLD_SIZE was its WORLD_SIZE)."""
    return f"{link_name(meta)}, measured"


def measured_on(meta: dict | None) -> str | None:
    """The link a gloo/nccl run's collectives were measured on (link_name), as a step table's caption
    names it; None for a run on the simulator or of one rank, where nothing was measured on a link."""
    real = ((meta or {}).get("config") or {}).get("backend", "sim") != "sim"
    return link_name(meta) if real and not one_rank(meta) else None


def link_name(meta: dict | None) -> str:
    """The link a gloo/nccl run's collectives crossed (measured_link without ", measured")."""
    meta = meta or {}
    link = meta.get("link")
    if isinstance(link, dict) and link.get("name"):
        return str(link["name"])
    if isinstance(link, str) and link:
        return link
    return "between hosts" if meta.get("ranks_on_one_host") is False else "loopback"


def unchecked_model(meta: dict | None, calibrate: bool = True) -> str | None:
    """Why a measured run's comm is not compared with the network model (one line, saying how to
    get a model that is comparable), or None where it is. --network left at its default
    (run.json's network_given false) prices a preset (1gbe) that is no link the collectives
    crossed: on loopback its error read +100-400%, a figure about nothing. lionsim does not guess
    the link instead (the loopback preset is an unfitted guess, and nccl's ranks on one host
    cross NVLink or PCIe): it leaves the model out unless a calibration priced it. `calibrate`: whether
    the command offers --calibrate (bench does; comm, which fits profiles, does not)."""
    if model_describes_link(meta):
        return None
    meta = meta or {}
    config = meta.get("config", {})
    network = (meta.get("network") or {}).get("name") or config.get("network", "?")
    return model_left_out(network, link_name(meta), config.get("backend", "gloo"), meta.get("ranks_on_one_host", True),
                          calibrate)


def model_left_out(network: str, link: str, backend: str, one_host: bool = True, calibrate: bool = True,
                   fitting: str | None = None) -> str:
    """The one line saying why a measurement on a gloo/nccl `backend` over `link` is not compared with
    the model of `network`, the default --network (unchecked_model says why), and how to get a model
    of that link: bench's --calibrate (`calibrate`), or a profile fitted by `lionsim comm --fit`.
    `fitting`: the profile `lionsim comm --fit` is writing now, which is that model: the line says
    to pass it, not to run the fit the user is running. `lionsim comm` and `bench` say it alike."""
    left = f"model and error left out: --network was not given, and its default ({network}) is not the link measured ({link})"
    if fitting is not None:
        return f"{left}; to compare with a model of this link, pass --network {fitting} (the profile this fit writes)"
    where = "" if one_host else " on the same hosts, under the same launcher"
    calibrated = "pass --calibrate, or " if calibrate else ""
    return (f"{left}; to compare with a model of this link, {calibrated}fit one once "
            f"with `lionsim comm --backend {backend} --fit PROFILE.toml`{where} and pass --network PROFILE.toml")


def profile_text(network: str, resolved: dict | None) -> str:
    """A --network as a report's configuration names it: a preset by its name; a profile file by its
    name, its path as recorded and its inter link (`my25g (/home/me/my25g.toml: inter 12 us, 3.12
    GB/s)`), so the report read alone says what the file held; `resolved`: the record's `network`
    (run.json's, estimate.json's: the profile's own form, lionsim.network.link.Network.to_dict)."""
    if not is_profile_file(network):
        return network
    resolved = resolved if isinstance(resolved, dict) else {}
    inter = resolved.get("inter") if isinstance(resolved.get("inter"), dict) else {}
    alpha, rate = inter.get("alpha_us"), inter.get("bandwidth_GBps")
    link = (f": inter {alpha:g} us, {rate:.3g} GB/s" if isinstance(alpha, (int, float))
            and isinstance(rate, (int, float)) else "")
    return f"{resolved.get('name') or Path(network).stem} ({network}{link})"
