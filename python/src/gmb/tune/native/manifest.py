# SPDX-License-Identifier: BSD-3-Clause
"""native.json: what `gmb tune` wrote in the libraries' own form, per configuration: each file (what it is, its path,
the settings that load it through the library's own mechanism), the settings that load them all, the recommendations
they carry (race, arm, size range) and what was left out; and tune-native.toml, the campaign that measures each race
carried with the files loaded beside its defaults and its settings set one by one. `gmb tune --verify` reads it back (read_loads)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from ...campaign.spec import Campaign
from ...errors import UsageError
from ...machine.knobs import ENV_NAME
from ...outputs import write_new
from ..paths import ROUND_PRECISION, round_options
from ..confirmation import CONFIRM_LAUNCHES

MANIFEST = "native.json"
CAMPAIGN = "tune-native.toml"


def write_manifest(outdir: Path, written: list, races: list) -> None:
    """native.json of ``written`` (native.Written, one per configuration) and, where any file was written,
    tune-native.toml: each race they carry at the finest precision, its defaults, its recommended settings as the
    export line sets them and the files loaded instead, interleaved (the files against the line, in the same
    conditions), as many launches as the search confirmed with."""
    manifest = {"configurations": [{"configuration": w.configuration, "files": w.files, "load": w.load,
                                    "covers": [c.key for c in w.covers], "left_out": w.left_out}
                                   for w in written]}
    write_new(outdir / MANIFEST, json.dumps(manifest, indent=1))
    blocks = []
    for w in written:
        for index in sorted({c.race for c in w.covers}) if w.files else ():
            carried = [c.settings for c in w.covers if c.race == index]
            sets = [{}, *(s for k, s in enumerate(carried) if s not in carried[:k]), w.load]
            blocks.append(replace(round_options(races[index].block, len(ROUND_PRECISION) - 1), settings=sets))
    if blocks:
        write_new(outdir / CAMPAIGN, Campaign("tune-native", blocks, repetitions=CONFIRM_LAUNCHES,
                                              order="random").to_toml())


def read_loads(search_dir: Path) -> dict[tuple[int, int], dict[str, str]] | None:
    """(race index, range's first size) -> the settings that load the files carrying that recommendation; None where
    the search wrote no native.json. UsageError, naming the file and what is wrong, for one that is not as written."""
    path = search_dir / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text())
        loads = {}
        for conf in manifest["configurations"]:
            load = conf["load"]
            if not isinstance(load, dict) or not all(ENV_NAME.fullmatch(k) and isinstance(v, str)
                                                     for k, v in load.items()):
                raise ValueError("a configuration's load is not environment variables and their values")
            for cover in conf["covers"]:
                loads[(int(cover["race"]), int(cover["low"]))] = load
        return loads
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not as gmb tune writes it ({exc}); search again to verify its files") from None
