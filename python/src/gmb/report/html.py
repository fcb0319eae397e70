# SPDX-License-Identifier: BSD-3-Clause
"""One self-contained HTML report: machine and libraries, tables, figures embedded as base64 PNG."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from ..machine import families, identity
from ..machine.load import describe_campaign
from ..outputs import write_new
from ..results.model import Results
from ..results.stored_rows import Context
from .analysis import Analysis, answers_and_tables
from .cells import Table
from .overview import CSS as OVERVIEW_CSS
from .render_html import Markup, answers_html, escape, figure_html, shown, table_html
from .settings import answers_html as tune_answers_html, settings_section, tune_answer

_CSS = """
body{font-family:system-ui,sans-serif;margin:1em 2em;max-width:1600px;color:#222}
h1{margin:.2em 0} h1+p.note{margin:.2em 0}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left}
th{background:#f0f0f0} td.num{text-align:right;font-variant-numeric:tabular-nums}
img{width:100%;border:1px solid #eee} .note{color:#555;font-size:13px}
table.answers td:nth-child(1){width:14em} table.answers td:nth-child(2){width:34%}
table.answers td:nth-child(5){font-size:12px;color:#444} table.answers td:nth-child(3){white-space:nowrap}
figure{margin:1.5em 0} code{background:#f6f6f6;padding:1px 3px}
.warn{color:#a00;background:#fff3f3;padding:4px 8px;border-left:3px solid #a00}
td.why{color:#777;font-style:italic} summary{cursor:pointer;color:#555}
td code{display:inline-block;margin:1px 0}
code.ready{user-select:all;white-space:pre-wrap;overflow-wrap:anywhere}
""" + OVERVIEW_CSS


def _cuda_text(cuda: dict) -> str:
    """A context's CUDA object in words; the engine writes "no driver" when the runtime finds no CUDA driver."""
    driver = cuda.get("driver_version")
    driver = "no CUDA driver" if driver in (None, "", "no driver") else f"driver {driver}"
    text = f"runtime {shown(cuda.get('runtime_version'))}, {driver}"
    return f"{text} ({cuda['error']})" if cuda.get("error") else text


def _machine_section(results: Results) -> str:
    ctxs = [c.record for c in results.contexts]
    hosts, gpus, cuda, tools = set(), {}, set(), set()
    for c in ctxs:
        for r in c.get("ranks", []):
            hosts.add(r.get("host"))
            g = r.get("gpu")
            if g:
                gpus[(r.get("host"), g.get("uuid"))] = f"{shown(r.get('host'))} GPU {shown(g.get('index'))}: " \
                                                      f"{shown(g.get('name'))} ({shown(g.get('pci_bus_id'))})"
        cuda.add(_cuda_text(c["cuda"]) if c.get("cuda") else "none (engine built without CUDA)")
        t = c.get("tool") or {}
        tools.add(f"{shown(t.get('name'))} {shown(t.get('version'))} (revision {shown(t.get('git_revision'))}), "
                  f"CUDA build: {shown((t.get('build') or {}).get('cuda'))}")
    items = [f"<li>Hosts: {escape(', '.join(sorted(h for h in hosts if h)) or 'not recorded')}</li>",
             f"<li>GPUs: {escape('; '.join(sorted(gpus.values())) or 'none recorded')}</li>",
             f"<li>CUDA: {escape('; '.join(sorted(cuda)) or 'not recorded')}</li>",
             f"<li>Engine: {escape('; '.join(sorted(tools)) or 'not recorded')}</li>"]
    topo = results.meta.get("topology")
    if topo:
        items.append(f"<li>Topology at run time: <code>{escape(topo)}</code></li>")
    return "<h2>Machine</h2>" + _oversubscription_warning(results.contexts) + "<ul>" + "".join(items) + "</ul>"


def cpu_list(binding) -> set[int] | None:
    """The CPUs of an affinity list as the engine records a rank's cpu_binding ("0-3,8"), None when it is not one
    ("unknown": the engine could not read it)."""
    cpus = set()
    for part in str(binding or "").split(","):
        lo, _, hi = part.strip().partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            return None
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus or None


def oversubscribed(context: dict) -> list[tuple[str, int, int]]:
    """(host, ranks, CPUs) for each host of a run where more ranks ran than they had CPUs. The records carry no core
    count of the host, but each rank's CPU affinity list (cpu_binding): the union of the lists of a host's ranks is
    the set of CPUs they could run on, so more ranks than CPUs in that union means that ranks shared a CPU. An
    unbound rank's list is every CPU it may use on its host, so unbound runs are caught when they have more ranks
    than the host has CPUs; a host with a rank whose list is unknown is not judged."""
    by_host: dict[str, list] = {}
    for r in context.get("ranks") or []:
        by_host.setdefault(r.get("host") or "not recorded", []).append(cpu_list(r.get("cpu_binding")))
    out = []
    for host, lists in sorted(by_host.items()):
        if all(lists):
            cpus = set().union(*lists)
            if len(lists) > len(cpus):
                out.append((host, len(lists), len(cpus)))
    return out


def _oversubscription_warning(contexts: list[Context]) -> str:
    """A warning naming the runs whose ranks oversubscribed a host's CPUs, or nothing."""
    runs: dict[tuple, int] = {}
    for c in contexts:
        for host, ranks, cpus in oversubscribed(c.record):
            key = (c.library, c.record.get("benchmark") or "not recorded", host, ranks, cpus)
            runs[key] = runs.get(key, 0) + 1
    if not runs:
        return ""
    items = "".join(f"<li>{escape(lib)} {escape(bench)} on {escape(host)}: {ranks} ranks on {cpus} CPU(s), {n} run(s)</li>"
                    for (lib, bench, host, ranks, cpus), n in sorted(runs.items()))
    return ("<div class='warn'><b>Ranks oversubscribed the CPUs</b> (more ranks on a host than CPUs in their affinity "
            "lists together): ranks sharing a CPU wait for each other, so these runs' figures may be worse than the "
            f"machine gives.<ul>{items}</ul></div>")


# variables every launcher sets for its own wiring: not settings anybody chose, left out of the report's table
# (they stay in the records). Open MPI 5's mpirun (PRRTE) also sets OMPI_WORLD_*, OMPI_TOOL_NAME, OMPI_VERSION,
# OMPI_LIBDIR_LOC, OMPI_MCA_PREFIXES, OMPI_MCA_num_procs and OMPI_MCA_cpu_type in every process.
_LAUNCHER_NOISE = re.compile(r"^(PMIX_|PMI_|SLURM_|HYDRA_|OMPI_COMM_WORLD_|OMPI_MCA_(orte|ess|pmix|initial_wdir|shmem|"
                             r"mpi_oversubscribe|num_procs$|cpu_type$|PREFIXES$)|OMPI_(ARGV|COMMAND|APP_CTX|NUM_APP|"
                             r"UNIVERSE|FIRST_RANKS|FILE_LOCATION|WORLD_|TOOL_NAME$|VERSION$|LIBDIR_LOC$)|"
                             r"MPIR_CVAR_CH3_INTERFACE_HOSTNAME$)")

# Prefixes of the variables that change how MPI, UCX, NCCL, CUDA (or gmb) behave: the libraries table shows these and
# folds every other recorded variable (paths, container labels such as NVIDIA_REQUIRE_CUDA) away
BEHAVIOUR_PREFIXES = families.behaviour_prefixes()
# named like settings, but labels of NVIDIA's container images: their values change nothing, so they are folded too
_IMAGE_LABELS = ("CUDA_VERSION", "NCCL_VERSION")


def _behaviour_setting(name: str) -> bool:
    return name.startswith(BEHAVIOUR_PREFIXES) and name not in _IMAGE_LABELS


def environment_cell(environment: dict) -> Markup:
    """A context's environment for the libraries table: the variables that change MPI/UCX/NCCL/CUDA behaviour, the
    others behind a fold; launcher wiring left out."""
    env = sorted((k, v) for k, v in (environment or {}).items() if not _LAUNCHER_NOISE.match(k))
    if not env:
        return Markup("none recorded")
    shown_vars = [f"<code>{escape(k)}={escape(v)}</code>" for k, v in env if _behaviour_setting(k)]
    others = [f"<code>{escape(k)}={escape(v)}</code>" for k, v in env if not _behaviour_setting(k)]
    cell = "<br>".join(shown_vars) or "no MPI, UCX, NCCL or CUDA setting"
    if others:
        cell += (f"<details><summary>{len(others)} other variable{'s' if len(others) > 1 else ''}</summary>"
                 + "<br>".join(others) + "</details>")
    return Markup(cell)


def _libraries_section(results: Results) -> str:
    # per library, version and verdict: the launches and the context that sorts first as JSON (any one would do;
    # this one stays the same from one report to the next)
    groups: dict[tuple, list[str]] = {}
    for c in results.contexts:
        groups.setdefault((c.library, c.library_version or "", c.gpu_awareness or ""), []).append(json.dumps(c.record))
    rows = [{"library": lib, "library_version": version, "gpu_awareness": verdict, "launches": len(texts),
             "j": min(texts)} for (lib, version, verdict), texts in sorted(groups.items())]
    t = Table("MPI libraries", ["library", "version string", "library object loaded", "GPU awareness (engine verdict)",
                                "launches (context records)", "environment (recorded, of one launch)"],
              [[r["library"], (r["library_version"] or "").strip().splitlines()[0] if r["library_version"]
                else "not recorded",
                ", ".join(sorted(identity.loaded_objects(json.loads(r["j"])))) or "not recorded",
                r["gpu_awareness"] or "not recorded", r["launches"],
                environment_cell(json.loads(r["j"]).get("environment"))]
               for r in rows],
              "Environment: the variables that change how MPI, UCX, NCCL and CUDA behave (names starting with "
              f"{', '.join(BEHAVIOUR_PREFIXES)}); the others are folded, the launchers' own wiring left out.")
    wrong: dict[str, list[str]] = {}
    for x in results.launches:
        if x.status == identity.WRONG_LIBRARY:
            wrong.setdefault(x.library, []).append(x.reason)
    warning = "".join(f"<p class='warn'><b>{escape(lib)}: {len(reasons)} launch(es) ran another MPI library</b>; "
                      f"their figures are not in this report: {escape(min((r for r in reasons if r is not None), default=None))}</p>"
                      for lib, reasons in sorted(wrong.items()))
    warning += "".join(f"<p class='warn'><b>Rows of the store left out</b>: {escape(note)}</p>"
                       for note in results.left_out)
    others = json.loads(results.meta.get("concurrent_campaigns") or "[]")
    warning += "".join(f"<p class='warn'><b>Another campaign ran on this node at the same time</b> "
                       f"({escape(describe_campaign(o))}): both shared its GPUs and cores, so figures of this "
                       f"campaign may be lower than the machine gives</p>" for o in others)
    launch_argv: dict[str, list[str]] = {}
    for x in results.launches:
        if x.argv is not None:
            launch_argv.setdefault(x.library, []).append(json.dumps(x.argv))
    extra = ""
    if launch_argv:
        extra = "<p class='note'>Example launch per library:</p><ul>" + "".join(
            # each argument unbroken: a browser may break a line after a hyphen ("-" "-out")
            f"<li>{escape(lib)}: <code>{' '.join(_unbroken(a) for a in json.loads(min(argvs)))}</code></li>"
            for lib, argvs in sorted(launch_argv.items())) + "</ul>"
    return "<h2>Libraries</h2>" + warning + table_html(t, "libraries") + extra


def _unbroken(text: str) -> str:
    return f"<span style='white-space:nowrap'>{escape(text)}</span>"


def settings_table(results: Results) -> Table | None:
    """Per library, the settings its GPU support depends on, as `gmb run` found them on this machine (the engine's
    doctor without each of the library's settings, or with its family's GPU settings when it was not aware:
    doctor.settings_that_matter). None when none was checked (no GPU, or no engine with CUDA)."""
    found = json.loads(results.meta.get("settings_that_matter") or "[]")
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


def _left_out(what: str, exc: ImportError) -> str:
    return f"<p class='note'>{what} left out: {escape(exc)} (pip install matplotlib).</p>"


def _figures_section(results: Results) -> str:
    parts = ["<h2>Figures</h2>"]
    try:
        from . import plots as plots_mod
    except ImportError as exc:  # matplotlib absent (e.g. an offline machine): tables only, and say so
        return parts[0] + _left_out("Figures", exc)
    missing = []
    for fid, ftitle, png in plots_mod.render_all(results):
        if png is None:
            missing.append(plots_mod.figure_name(ftitle))
            continue
        parts.append(figure_html(fid, ftitle, png))
    if missing:
        parts.append(f"<p class='note'>Figures without data in this result set: {escape(', '.join(missing))}.</p>")
    return "\n".join(parts)


def _settings_section(answer: dict) -> str:
    """The Settings section of what `gmb tune` answered, with its figure."""
    try:
        from .settings_figure import gain_figure
    except ImportError as exc:  # matplotlib absent: the tables only, and say so
        return settings_section(answer, _left_out("Figure", exc))
    png = gain_figure(answer)
    caption = "Each knob value against the defaults where it changes the figure most, per configuration and path"
    figure = (figure_html("tune-gains", caption, png) if png
              else "<p class='note'>No figure: no knob value was measured.</p>")
    return settings_section(answer, figure)


def build_html(results: Results, title: str = "gmb report", analysis: Analysis | None = None) -> str:
    """The report of a store's results model (Results.load): a list of sections (each an HTML string) between the
    page's head and its end. ``analysis``: its answers_and_tables, where the caller has them already."""
    searched = tune_answer(results)  # a search's records: its answer first, no answers drawn from its cut values
    found, tables = analysis or answers_and_tables(results)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{escape(title)}</h1>",
             f"<p class='note'>Generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by gmb "
             f"{__version__}. Campaign: {escape(results.meta.get('campaign', 'not recorded'))}.</p>",
             tune_answers_html(searched) if searched else answers_html(found), _machine_section(results),
             _libraries_section(results)]
    settings = settings_table(results)
    if settings:
        parts.append(table_html(settings, "settings"))
    if searched:
        parts.append(_settings_section(searched))
    parts.append("<h2>Tables</h2>")
    parts += [table_html(t, f"table-{i}") for i, t in enumerate(tables)]
    parts.append(_figures_section(results))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(results: Results, out: str | Path, title: str = "gmb report",
                 analysis: Analysis | None = None) -> Path:
    out = Path(out)
    content = build_html(results, title, analysis)
    return write_new(out, content)  # complete or absent, never overwriting
