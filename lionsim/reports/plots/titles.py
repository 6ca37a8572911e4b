"""What a run's plots say about themselves: the subtitle naming the run's setting, and the
bytes plot's ratios to the baseline."""

from __future__ import annotations

import pandas as pd

from lionsim.reports.columns import workload_text
from lionsim.reports.summary import model_describes_link


def subtitle(steps: pd.DataFrame, meta: dict | None) -> str:
    """What the run is: workload, N, the network (on gloo/nccl the link the collectives were
    measured on), and from run.json the data split and the momentum sync."""
    cfg = (meta or {}).get("config", {})
    network = ", ".join(str(v) for v in dict.fromkeys(steps["network"])) if "network" in steps else "?"
    network = named_network(network, meta, "backend" in steps.columns and (steps["backend"] != "sim").any())
    parts = [", ".join(workload_text(v) for v in dict.fromkeys(steps["workload"])) if "workload" in steps else "?",
             f"{', '.join(str(v) for v in dict.fromkeys(steps['workers']))} workers", network]
    if cfg.get("data_split"):
        parts.append(f"data {cfg['data_split']}")
    if cfg.get("momentum_sync"):
        parts.append(f"momentum sync {cfg['momentum_sync']}")
    if cfg.get("tie", "zero") != "zero":  # a vote's tie rule changes its bytes down: said where not the default
        parts.append(f"tie {cfg['tie']}")
    return " · ".join(parts)


def named_network(network: str, meta: dict | None, measured: bool) -> str:
    """The network as every table, title and plot of a run names it: on the simulator the
    preset; on gloo/nccl the link the collectives were measured on, then the model that priced
    them where one describes it ("loopback, measured (model: 10gbe)"), else the link alone (a
    default --network priced nothing measured: unchecked_model)."""
    if not measured:
        return network
    return measured_link(meta) + ("" if unchecked_model(meta) else f" (model: {network})")


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


def model_left_out(network: str, link: str, backend: str, one_host: bool = True, calibrate: bool = True) -> str:
    """The one line saying why a measurement on a gloo/nccl `backend` over `link` is not compared with
    the model of `network`, the default --network (unchecked_model says why), and how to get a model
    of that link: bench's --calibrate (`calibrate`), or a profile fitted by `lionsim comm --fit`.
    `lionsim comm` and `bench` say it alike."""
    where = "" if one_host else " on the same hosts, under the same launcher"
    calibrated = "pass --calibrate, or " if calibrate else ""
    return (f"model and error left out: --network was not given, and its default ({network}) is not the link "
            f"measured ({link}); to compare with a model of this link, {calibrated}fit one once "
            f"with `lionsim comm --backend {backend} --fit PROFILE.toml`{where} and pass --network PROFILE.toml")


def ratio_text(value: float, base: float) -> str:
    """This run's bytes against the baseline's, in words a reader can check against the bars."""
    if base <= 0 or value <= 0:
        return "" if value > 0 or base <= 0 else "(sends nothing)"
    ratio = value / base
    if abs(ratio - 1) < 5e-3:
        return "(= baseline)"
    return f"({ratio:.3g}x baseline)" if ratio > 1 else f"(1/{1 / ratio:.3g} of baseline)"
