# SPDX-License-Identifier: BSD-3-Clause
"""The Settings section's figure: each knob value `gmb tune` tried as a horizontal bar, its change against the
defaults in % where it differs most from them (better or worse), grouped by configuration and path and coloured by
verdict (better green, worse red, no difference and cut early grey, broken hatched)."""

from __future__ import annotations

from matplotlib.patches import Patch

from .cells import size_label
from .drawing import png, plt
from .settings import BASELINE, arm_label, change, gain_text, race_label

_BETTER, _WORSE, _OTHER = "#2e8b57", "#c0392b", "#a0a0a0"
_BROKEN = "broken"
_ROW_INCHES = 0.24


def _colour(verdict: str) -> str:
    return {"better": _BETTER, "mixed": _BETTER, "worse": _WORSE}.get(verdict, _OTHER)


def _groups(answer: dict) -> list[tuple[str, list[dict]]]:
    """(configuration and path, the knob values tried there) for each race that tried any."""
    out = []
    for race in answer["races"]:
        arms = [a for a in race["arms"] if a["verdict"] != BASELINE]
        if arms:
            out.append((race_label(race), arms))
    return out


def gain_figure(answer: dict) -> bytes | None:
    """The figure as PNG bytes, None when no knob value was measured."""
    groups = _groups(answer)
    if not any(change(a)[1] is not None for _, arms in groups for a in arms):
        return None
    labels, headers = [], []
    rows = sum(1 + len(arms) for _, arms in groups)
    fig, ax = plt.subplots(figsize=(11, 0.9 + _ROW_INCHES * rows))
    y = rows
    for title, arms in groups:
        y -= 1
        headers.append(len(labels))
        labels.append((y, title))
        for a in arms:
            y -= 1
            ratio, at = change(a)
            measured = at is not None
            gain = 100 * (ratio - 1) if measured else 0.0
            broken = a["verdict"] == _BROKEN
            if broken:  # its row hatched across the axes: a broken value has no gain to draw
                ax.axhspan(y - 0.35, y + 0.35, facecolor="none", edgecolor=_WORSE, hatch="///", linewidth=0)
            else:
                ax.barh(y, gain, height=0.7, color=_colour(a["verdict"]))
            note = _BROKEN if broken else f"{gain_text(ratio)} at {size_label(at)}" \
                if measured else "not measured"
            ax.annotate(note, (gain, y), xytext=(3 if gain >= 0 else -3, 0), textcoords="offset points",
                        ha="left" if gain >= 0 else "right", va="center", fontsize=7,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5} if broken else None)
            labels.append((y, arm_label(a)))
    ax.set_yticks([p for p, _ in labels], [text for _, text in labels], fontsize=7)
    for i in headers:
        ax.get_yticklabels()[i].set_fontweight("bold")
    ax.set_ylim(-0.7, rows - 0.3)
    lo, hi = ax.get_xlim()
    pad = 0.3 * (hi - lo)  # room for the notes at the bars' ends
    ax.set_xlim(lo - pad if lo < 0 else lo, hi + pad)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_xlabel("change against the defaults (%), at the size where it is largest (better or worse)")
    ax.set_title("gmb tune: each knob value against the defaults, per configuration and path")
    ax.legend(handles=[Patch(color=_BETTER, label="better"), Patch(color=_WORSE, label="worse"),
                       Patch(color=_OTHER, label="no difference / cut early"),
                       Patch(facecolor="none", edgecolor=_WORSE, hatch="///", label="broken")],
              fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return png(fig)
