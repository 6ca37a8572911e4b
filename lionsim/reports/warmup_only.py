"""Runs that never left their strategy's warm-up (run.json's runs[].warmup_until: a DiLoCo whose
steps end before its first sync, a PowerSGD inside its fp32 warm-up). Such a run trained as
another method, so a report does not rank its time to target as its method's."""

from __future__ import annotations


def warmup_steps(records) -> dict[str, int]:
    """label -> runs[].warmup_until over run.json records (the latest step of any)."""
    out: dict[str, int] = {}
    for record in records:
        for entry in (record.get("runs") or []) if isinstance(record, dict) else []:
            at = entry.get("warmup_until") if isinstance(entry, dict) else None
            if isinstance(at, int) and isinstance(entry.get("run"), str):
                out[entry["run"]] = max(out.get(entry["run"], 0), at)
    return out
