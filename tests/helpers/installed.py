"""A stand-in for an installed distribution: a `NAME.dist-info` folder whose entry_points.txt
announces entry points, which importlib.metadata finds once its folder is on sys.path
(monkeypatch.syspath_prepend), as it finds a pip-installed package's."""

from __future__ import annotations

from pathlib import Path


def fake_distribution(where: Path, group: str, entries: dict[str, str]) -> None:
    """Announce `entries` (entry point name -> `module` or `module:object`) under `group` from `where`."""
    dist = where / "fake_lionsim_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-lionsim-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()))
