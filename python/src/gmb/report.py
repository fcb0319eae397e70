"""One self-contained HTML report: machine and libraries, tables, figures embedded as base64 PNG."""

from __future__ import annotations

import base64
import html
import json
import re
from datetime import datetime, timezone
from pathlib import Path

from . import __version__, identity, locks
from .outputs import write_new
from .store import Store
from .tables import Table, all_tables

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left}
th{background:#f0f0f0} td.num{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;border:1px solid #eee} .note{color:#555;font-size:13px}
figure{margin:1.5em 0} code{background:#f6f6f6;padding:1px 3px}
.warn{color:#a00;background:#fff3f3;padding:4px 8px;border-left:3px solid #a00}
"""


def _esc(v) -> str:
    return html.escape("" if v is None else str(v))


def table_html(t: Table, table_id: str = "") -> str:
    out = [f'<h3>{_esc(t.title)}</h3>']
    if t.note:
        out.append(f'<p class="note">{_esc(t.note)}</p>')
    if not t.rows:
        out.append('<p class="note">(no rows)</p>')
        return "\n".join(out)
    out.append(f'<table id="{_esc(table_id)}"><thead><tr>' + "".join(f"<th>{_esc(c)}</th>" for c in t.columns)
               + "</tr></thead><tbody>")
    for r in t.rows:
        cells = "".join(f'<td class="num">{_esc(v)}</td>' if isinstance(v, (int, float)) else f"<td>{_esc(v)}</td>"
                        for v in r)
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _machine_section(store: Store) -> str:
    ctxs = [json.loads(c["json"]) for c in store.contexts()]
    hosts, gpus, cuda, tools = set(), {}, set(), set()
    for c in ctxs:
        for r in c.get("ranks", []):
            hosts.add(r.get("host"))
            g = r.get("gpu")
            if g:
                gpus[(r.get("host"), g.get("uuid"))] = f"{r.get('host')} GPU {g.get('index')}: {g.get('name')} " \
                                                      f"({g.get('pci_bus_id')})"
        if c.get("cuda"):
            cu = c["cuda"]
            cuda.add(f"runtime {cu.get('runtime_version')}, driver {cu.get('driver_version')}")
        t = c.get("tool", {})
        tools.add(f"{t.get('name')} {t.get('version')} ({t.get('git_revision')}), "
                  f"CUDA build: {t.get('build', {}).get('cuda')}")
    items = [f"<li>Hosts: {_esc(', '.join(sorted(h for h in hosts if h)) or 'unknown')}</li>",
             f"<li>GPUs: {_esc('; '.join(sorted(gpus.values())) or 'none recorded')}</li>",
             f"<li>CUDA: {_esc('; '.join(sorted(cuda)) or 'not used')}</li>",
             f"<li>Engine: {_esc('; '.join(sorted(tools)))}</li>"]
    topo = store.meta("topology")
    if topo:
        items.append(f"<li>Topology at run time: <code>{_esc(topo)}</code></li>")
    return "<h2>Machine</h2><ul>" + "".join(items) + "</ul>"


# variables every launcher sets for its own wiring: not settings anybody chose, left out of the report's table
# (they stay in the records)
_LAUNCHER_NOISE = re.compile(r"^(PMIX_|PMI_|SLURM_|HYDRA_|OMPI_COMM_WORLD_|OMPI_MCA_(orte|ess|pmix|initial_wdir|shmem|"
                             r"mpi_oversubscribe)|OMPI_(ARGV|COMMAND|APP_CTX|NUM_APP|UNIVERSE|FIRST_RANKS|FILE_LOCATION)|"
                             r"MPIR_CVAR_CH3_INTERFACE_HOSTNAME$)")


def _libraries_section(store: Store) -> str:
    rows = store.rows("SELECT library, library_version, gpu_awareness, COUNT(*) AS launches, MIN(json) AS j "
                      "FROM contexts GROUP BY library, library_version, gpu_awareness ORDER BY library")
    t = Table("MPI libraries", ["library", "version string", "library object loaded", "GPU awareness (engine verdict)",
                                "records", "environment (recorded)"],
              [[r["library"], (r["library_version"] or "").strip().splitlines()[0] if r["library_version"] else "",
                ", ".join(sorted(identity.loaded_objects(json.loads(r["j"])))) or "not recorded",
                r["gpu_awareness"], r["launches"],
                " ".join(f"{k}={v}" for k, v in sorted(json.loads(r["j"]).get("environment", {}).items())
                         if not _LAUNCHER_NOISE.match(k))]
               for r in rows])
    wrong = store.rows("SELECT library, COUNT(*) AS n, MIN(reason) AS reason FROM launches WHERE status = ? "
                       "GROUP BY library ORDER BY library", (identity.WRONG_LIBRARY,))
    warning = "".join(f"<p class='warn'><b>{_esc(r['library'])}: {r['n']} launch(es) ran another MPI library</b>; "
                      f"their figures are not in this report: {_esc(r['reason'])}</p>" for r in wrong)
    others = json.loads(store.meta("concurrent_campaigns") or "[]")
    warning += "".join(f"<p class='warn'><b>Another campaign ran on this node at the same time</b> "
                       f"({_esc(locks.describe_campaign(o))}): both shared its GPUs and cores, so figures of this "
                       f"campaign may be lower than the machine gives</p>" for o in others)
    launch_argv = store.rows("SELECT library, MIN(argv) AS argv FROM launches GROUP BY library")
    extra = ""
    if launch_argv:
        extra = "<p class='note'>Example launch per library:</p><ul>" + "".join(
            f"<li>{_esc(r['library'])}: <code>{_esc(' '.join(json.loads(r['argv'] or '[]')))}</code></li>"
            for r in launch_argv) + "</ul>"
    return "<h2>Libraries</h2>" + warning + table_html(t, "libraries") + extra


def settings_table(store: Store) -> Table | None:
    """Per library, the settings its GPU support depends on, as `gmb run` found them on this machine (the engine's
    doctor without each of the library's settings, or with its family's GPU settings when it was not aware:
    doctor.settings_that_matter). None when none was checked (no GPU, or no engine with CUDA)."""
    found = json.loads(store.meta("settings_that_matter") or "[]")
    if not found:
        return None
    rows = []
    for s in found:
        for f in s["findings"]:
            rows.append([s["library"], f["setting"], f["effect"], s["as_configured"]])
        if not s["findings"]:
            tried = ", ".join(s["tried"]) or "no setting of its own to try"
            rows.append([s["library"], "none found", f"no change to the doctor's answer ({tried})", s["as_configured"]])
    return Table("Settings that matter", ["library", "setting", "effect", "the doctor as configured"], rows,
                 "Found by running the engine's doctor (GPU awareness proof, then device buffers freed and allocated "
                 "again) without each of a library's settings, or, for a library that is not aware as configured, "
                 "with each GPU setting of its family.")


def build_html(store: Store, title: str = "gmb report") -> str:
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{_esc(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{_esc(title)}</h1>",
             f"<p class='note'>Generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by gmb "
             f"{__version__}. Campaign: {_esc(store.meta('campaign', 'n/a'))}.</p>",
             _machine_section(store), _libraries_section(store)]
    settings = settings_table(store)
    if settings:
        parts.append(table_html(settings, "settings"))
    parts.append("<h2>Tables</h2>")
    for i, t in enumerate(all_tables(store)):
        parts.append(table_html(t, f"table-{i}"))
    parts.append("<h2>Figures</h2>")
    missing = []
    try:
        from . import plots as plots_mod
    except ImportError as exc:  # matplotlib absent (e.g. an offline machine): tables only, and say so
        parts.append(f"<p class='note'>Figures left out: {_esc(exc)} (pip install matplotlib).</p></body></html>")
        return "\n".join(parts)
    for fid, ftitle, png in plots_mod.render_all(store):
        if png is None:
            missing.append(ftitle)
            continue
        b64 = base64.b64encode(png).decode()
        parts.append(f"<figure id='fig-{fid}'><img alt='{_esc(ftitle)}' src='data:image/png;base64,{b64}'>"
                     f"<figcaption>{_esc(ftitle)}</figcaption></figure>")
    if missing:
        parts.append(f"<p class='note'>Figures without data in this result set: {_esc(', '.join(missing))}.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(store: Store, out: str | Path, title: str = "gmb report") -> Path:
    out = Path(out)
    content = build_html(store, title)
    return write_new(out, content)  # complete or absent, never overwriting
