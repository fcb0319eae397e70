# SPDX-License-Identifier: BSD-3-Clause
"""What the native files rest on: the confirmed recommendations of a search's answer (tune.json), one per race and
size range, each with its settings, the collective and rank count it was measured at, its sizes and the confirmed
gain with its interval; and the header every file opens with (the machine, the library, the sizes, the ranks)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...report.cells import size_label
from ..races import DEFAULTS


@dataclass(frozen=True)
class Confirmed:
    """One recommendation (a size range of one race) the search's fresh launches confirmed."""
    race: int  # its race's index in the answer
    configuration: str
    path: str
    operation: str | None  # the collective measured (None: point to point)
    ranks: int | None
    memory: str | None
    arm: str
    settings: dict[str, str]
    low: int  # the range's first and last size (bytes as the records count them)
    high: int
    sizes: tuple[int, ...]  # every size the race measured
    gain: float
    gain_low: float | None
    gain_high: float | None
    worse: tuple[int, ...]  # sizes where the value is proven worse

    @property
    def key(self) -> dict:
        """How the manifest names it: its race, arm and range."""
        return {"race": self.race, "configuration": self.configuration, "path": self.path, "arm": self.arm,
                "low": self.low, "high": self.high}

    def gain_text(self) -> str:
        interval = "" if self.gain_low is None else \
            f" [{100 * (self.gain_low - 1):+.1f}, {100 * (self.gain_high - 1):+.1f}]"
        span = size_label(self.low) + ("" if self.low == self.high else f" - {size_label(self.high)}")
        return f"{100 * (self.gain - 1):+.1f} %{interval} over {span}"

    def measured_at(self) -> str:
        """Where it was measured: "allreduce on 4 ranks, host memory"."""
        what = self.operation or self.path
        ranks = f" on {self.ranks} ranks" if self.ranks else ""
        return what + ranks + (f", {self.memory} memory" if self.memory else "")


def confirmed(answer: dict) -> list[Confirmed]:
    """Every confirmed recommendation of the answer, in its races' order."""
    out = []
    for index, race in enumerate(answer["races"]):
        point = (race.get("identity") or {}).get("point") or {}
        for r in race["recommendation"]:
            if r["arm"] == DEFAULTS:
                continue
            out.append(Confirmed(index, race["configuration"], race["path"], race.get("operation"),
                                 point.get("ranks"), _memory(point.get("memory")), r["arm"], dict(r["settings"]),
                                 r["low"], r["high"], tuple(race["sizes"]), r["gain"], r.get("gain_low"),
                                 r.get("gain_high"), tuple(r.get("worse_sizes") or ())))
    return out


def _memory(memory: str | None) -> str | None:
    """A record's memory (canonical JSON of each side's kind) as a person says it: "host" where every side is."""
    try:
        sides = json.loads(memory) if memory else {}
    except ValueError:
        return None
    kinds = {str(v) for v in sides.values()} if isinstance(sides, dict) else set()
    return kinds.pop() if len(kinds) == 1 else ", ".join(f"{k} {v}" for k, v in sorted(sides.items())) or None


def header(machine: str, library: str, what: str, lines: list[str]) -> list[str]:
    """The header a native file opens with (its comment marks left to the file): what wrote it, for which machine and
    library, and per line what it rests on (``lines``)."""
    return [f"{what}, written by gmb tune", f"machine: {machine}; library: {library}",
            "only settings the search's fresh launches confirmed better (the gain over the library's defaults, its",
            "interval corrected for every value x size the search tried):", *(f"  {line}" for line in lines)]


def commented(lines: list[str], mark: str = "#") -> list[str]:
    return [f"{mark} {line}" for line in lines]


def name_value_text(settings: dict[str, tuple[str, list[Confirmed]]], head: list[str]) -> str:
    """A file of ``NAME=VALUE`` lines (UCX's ucx.conf, NCCL's nccl.conf) after ``head``, each setting after a comment
    naming the confirmed gains it rests on."""
    lines = list(head)
    for name, (value, rests_on) in sorted(settings.items()):
        lines.append(f"# {'; '.join(f'{c.path} {c.gain_text()}' for c in rests_on)}")
        lines.append(f"{name}={value}")
    return "\n".join(lines) + "\n"
