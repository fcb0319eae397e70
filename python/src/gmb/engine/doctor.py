# SPDX-License-Identifier: BSD-3-Clause
"""`gmb doctor`: what the machine has, what each MPI library can do, what is missing and how to fix it; the engine's
doctor (CUDA awareness proved by a 2-rank launch) and the settings its answer depends on. Asked before a run, with
the answers kept: awareness.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from . import build as build_mod
from ..machine import identity
from ..machine import launchers
from ..machine import mpilibs
from ..machine import topology
from .description import DescriptionError, EngineDescription
from .configurations import Configuration


def diagnose(confs: list[Configuration], topo: topology.Topology, run_engine_doctor: bool = True,
             check_settings: bool | None = None) -> dict:
    """What the machine (``topo``) has and each library configuration can do, with the engine it would use
    (configurations.configurations for a diagnosis: nothing built). With the engine's doctor, and GPUs present (or
    ``check_settings``), also the settings each library's GPU support depends on (settings_that_matter)."""
    report = {"topology": {"source": topo.source, "gpus": [g.__dict__ for g in topo.gpus],
                           "links": {f"{i}-{j}": v for (i, j), v in topo.links.items()},
                           "numa_nodes": topo.numa_nodes, "path_classes": topo.path_classes(),
                           "notes": topo.notes},
              "libraries": [], "missing": []}
    if not confs:
        report["missing"].append("No MPI library found. Install one (apt-get install openmpi-bin libopenmpi-dev, "
                                 "or mpich libmpich-dev), or `pip install mpich` into this venv, or declare one "
                                 "in ~/.config/gmb/libraries.toml.")
    for conf in confs:
        lib = conf.library
        entry = lib.describe()
        entry["cuda_aware_static"] = lib.cuda_aware  # a declared answer, else ompi_info's (configurations)
        if lib.cxx is None:
            report["missing"].append(f"{lib.name}: no mpicxx next to {lib.launcher_path}: install the development "
                                     f"package (libopenmpi-dev / libmpich-dev) to build the engine.")
        mixed = identity.launcher_and_wrapper(lib, lib.process_env()) if lib.transport == "mpi" else None
        entry["launcher_and_wrapper"] = mixed or "same installation"
        if mixed:
            report["missing"].append(f"{lib.name}: launcher and compiler wrapper belong to different installations "
                                     f"({mixed}): its engine would be built for one MPI and launched by another; "
                                     f"declare the library with launcher_path and cc of one installation.")
        choice = conf.chosen
        engine = choice.path if choice.path is not None and choice.path.exists() else None
        entry["engine"] = str(engine) if engine else None
        entry["engine_found"] = choice.why if engine else None
        if engine:
            entry["engine_loads"] = engine_loads(lib, engine, conf.description)
            if entry["engine_loads"].get("mismatch"):
                report["missing"].append(f"{lib.name}: its engine does not run this library: "
                                         f"{entry['engine_loads']['mismatch']}; its launches will fail as "
                                         f"{identity.WRONG_LIBRARY} (rebuild it: gmb build --force --library {lib.name}).")
        if not engine:
            report["missing"].append(f"{choice.error}" if choice.error and str(choice.error).startswith(lib.name)
                                     else f"{lib.name}: no engine ({choice.error or 'not built'}): run "
                                          f"`gmb build --library {lib.name}`.")
        elif run_engine_doctor and lib.transport == "mpi":  # an NCCL library's engine is its via library's
            entry["engine_doctor"] = engine_doctor(lib, engine)
            if check_settings or (check_settings is None and topo.gpus):
                entry["settings_that_matter"] = settings_that_matter(lib, engine, baseline=entry["engine_doctor"])
            if doctor_verdict(entry["engine_doctor"]) == "not aware" and entry["engine_doctor"].get("crashed"):
                report["missing"].append(f"{lib.name}: not aware: {entry['engine_doctor']['gpu_awareness']['summary']}"
                                         f"; device buffers will only be measured with staged strategies unless "
                                         f"its settings change (e.g. UCX_MEMTYPE_CACHE=n for pml ucx).")
        if topo.gpus and lib.cuda_aware is False and lib.transport == "mpi":
            report["missing"].append(f"{lib.name}: not CUDA-aware ({mpilibs.not_cuda_aware_because(lib)}); device "
                                     f"buffers will only be measured with staged strategies.")
        report["libraries"].append(entry)
    if not topo.gpus:
        report["missing"].append("No GPU visible: only host-memory benchmarks can run. On a GPU machine install "
                                 "the NVIDIA driver (nvidia-smi) and optionally `pip install nvidia-ml-py`.")
    if shutil.which("cmake") is None:
        report["missing"].append("cmake not found: install cmake (apt-get install cmake) to build engines.")
    return report


def engine_loads(lib: mpilibs.MpiLibrary, engine: Path, description: EngineDescription | None = None) -> dict:
    """What the engine loads in the library's environment (its ``description``, else ``gmb-bench list --format
    json``, no launcher): {"library_version", "loaded", "linked", "mismatch"} or {"error"}."""
    try:
        mpi = (description or build_mod.describe_engine(engine, env=lib.process_env())).mpi
    except (build_mod.BuildError, DescriptionError) as exc:
        return {"error": str(exc)}
    if not isinstance(mpi, dict):
        return {"error": "the engine does not say (built before gmb-bench named its MPI library: rebuild it)"}
    obj = mpi.get("library_object") or {}
    return {"library_version": identity.first_line(mpi.get("library_version", "")),
            "loaded": obj.get("loaded_realpath") or obj.get("loaded") or f"unknown ({obj.get('lookup_error', '')})",
            "linked": obj.get("linked_realpath") or obj.get("linked") or "unknown",
            "mismatch": identity.check_engine(lib, mpi)}


def engine_doctor(lib: mpilibs.MpiLibrary, engine: Path, timeout: float = 120, awareness_only: bool = False) -> dict:
    """Run `gmb-bench doctor` under the library's launcher with 2 ranks; returns its records or the error:
    {"exit", "gpu_awareness": {verdict, summary}, "fresh_buffers": {status, detail} (when the engine got that far),
    "results", and "crashed"/"signal" for a launch a signal ended}. A launch that a signal ended (the launcher's exit
    128+N, or -N: e.g. 139 when pml ucx with UCX defaults crashes on device memory) is a verdict, not a failure of
    gmb doctor: "not aware", the awareness proof crashed (signal N), with the first line of the engine's FATAL
    message when there is one; unless the crash came in the doctor's fresh-buffer check, after the proof: then the
    verdict stands and the fresh-buffer check is what crashed. ``awareness_only``: the proof alone (an engine that
    lists --awareness-only for its doctor)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "doctor.jsonl"
        launcher = launchers.get(lib.launcher)
        spec = launchers.LaunchSpec(ranks=2, program=[str(engine), "doctor", "--out", str(out),
                                                      *(["--awareness-only"] if awareness_only else [])])
        try:
            p = subprocess.run(launcher.argv(lib, spec), env=launcher.environment(lib, spec), capture_output=True,
                               text=True, errors="replace", timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"error": str(exc)}
        recs = []
        if out.exists():
            for ln in out.read_text(errors="replace").splitlines():
                try:
                    rec = json.loads(ln)
                except ValueError:
                    continue  # a line cut short by the crash
                if isinstance(rec, dict):
                    recs.append(rec)
        ctx = next((r for r in recs if r.get("type") == "context"), {})
        results = [r for r in recs if r.get("type") == "result"]
        verdict = (ctx.get("mpi") or {}).get("gpu_awareness")
        signal = _signal_of(p.returncode, p.stdout or "")
        if signal is not None:
            fatal = _fatal_line((p.stderr or "") + "\n" + (p.stdout or ""))
            if verdict and "fresh-buffer check" in fatal:
                return {"exit": p.returncode, "crashed": True, "signal": signal, "gpu_awareness": verdict,
                        "fresh_buffers": {"status": "crashed", "detail": f"signal {signal}: {fatal}"},
                        "results": results}
            summary = f"the awareness proof crashed (signal {signal})" + (f": {fatal}" if fatal else "")
            return {"exit": p.returncode, "crashed": True, "signal": signal,
                    "gpu_awareness": {"verdict": "not aware", "summary": summary}, "results": results}
        if not recs:
            return {"error": f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}"}
        out = {"exit": p.returncode, "gpu_awareness": verdict, "results": results}
        fresh = next((r.get("metrics", {}).get("fresh_buffers") for r in results
                      if isinstance(r.get("metrics", {}).get("fresh_buffers"), dict)), None)
        if fresh:
            out["fresh_buffers"] = fresh
        tools = next((r["metrics"]["network_tools"] for r in results
                      if isinstance(r.get("metrics", {}).get("network_tools"), dict)), None)
        if tools:
            out["network_tools"] = tools
        return out


def doctor_verdict(ed: dict) -> str:
    """One word for an engine doctor's answer: aware, not aware, unknown, or error."""
    aw = ed.get("gpu_awareness")
    return aw.get("verdict", "unknown") if isinstance(aw, dict) else "error"


def doctor_answer(ed: dict) -> str:
    """The doctor's answer in a sentence: the verdict and why (a crash by its signal alone: the full message is in
    the doctor's own report), then the fresh-buffer check when it did not pass."""
    aw = ed.get("gpu_awareness")
    if not isinstance(aw, dict):
        return f"doctor failed: {ed.get('error', 'no answer')}"
    fresh = ed.get("fresh_buffers") or {}
    if ed.get("crashed") and fresh.get("status") != "crashed":
        text = f"{aw.get('verdict', 'unknown')} (the awareness proof crashed: signal {ed.get('signal')})"
    else:
        text = aw.get("verdict", "unknown") + (f" ({aw['summary']})" if aw.get("summary") else "")
    if fresh.get("status") in ("failed", "crashed"):
        text += f"; device buffers freed and allocated again: {fresh['status']} ({fresh.get('detail', '')})"
    return text


def _fresh(ed: dict) -> str:
    return (ed.get("fresh_buffers") or {}).get("status", "not run")


def _settings(lib: mpilibs.MpiLibrary) -> list[tuple[str, dict]]:
    """The library's own settings, one by one, each with the library's fields without it: every variable of its
    environment, and every `--mca NAME VALUE` / `-x NAME=VALUE` of its launcher arguments."""
    out = []
    for name, value in lib.env.items():
        out.append((f"{name}={value}", {"env": {k: v for k, v in lib.env.items() if k != name}}))
    args = lib.launcher_args
    k = 0
    while k < len(args):
        if args[k] in launchers.MCA_FLAGS and k + 2 < len(args):
            out.append((f"{args[k]} {args[k + 1]} {args[k + 2]}", {"launcher_args": args[:k] + args[k + 3:]}))
            k += 3
        elif args[k] == "-x" and k + 1 < len(args):
            out.append((f"-x {args[k + 1]}", {"launcher_args": args[:k] + args[k + 2:]}))
            k += 2
        else:
            k += 1
    return out


def _remedies(lib: mpilibs.MpiLibrary) -> list[tuple[str, dict]]:
    """Settings that make GPU memory work for the library's family (the environment of its family's built-in GPU
    profiles, mpilibs.PROFILES) that the library does not set, one at a time: what to try when its doctor says not
    aware."""
    out = []
    for profile in _family_profiles(lib):
        for name, value in profile["env"].items():
            if name not in lib.env and not any(setting == f"{name}={value}" for setting, _ in out):
                out.append((f"{name}={value}", {"env": {**lib.env, name: value}}))
    return out


def _family_profiles(lib: mpilibs.MpiLibrary) -> list[dict]:
    return [profile for profile in mpilibs.PROFILES.values() if profile["family"] == lib.family]


def _remedies_together(lib: mpilibs.MpiLibrary) -> list[tuple[str, dict]]:
    """Each GPU profile of the library's family with all the settings the library lacks at once, tried when no
    setting alone made it work (e.g. an MPICH built with CUDA where the site turned its GPU support off: it needs
    that back on and UCX's memory-type cache off)."""
    out = []
    for profile in _family_profiles(lib):
        missing = {name: value for name, value in profile["env"].items() if name not in lib.env}
        together = " ".join(f"{name}={value}" for name, value in missing.items())
        if len(missing) > 1 and not any(setting == together for setting, _ in out):
            out.append((together, {"env": {**lib.env, **missing}}))
    return out


def settings_that_matter(lib: mpilibs.MpiLibrary, engine: Path, timeout: float = 60, baseline: dict | None = None
                         ) -> dict:
    """Which of the library's settings its GPU support depends on, found by running the engine's doctor without
    each one (and, when the library is not aware as configured, with each setting its family's GPU profiles use):
    {"library", "as_configured": what the doctor says, "findings": [{"setting", "as_configured", "changed",
    "effect"}], "tried": [settings]}. A finding is a setting whose removal (or addition) changes the verdict or
    the fresh-buffer check; "effect" says how, for a person choosing settings."""
    base = baseline or engine_doctor(lib, engine, timeout)
    out = {"library": lib.name, "as_configured": doctor_answer(base), "findings": [], "tried": []}
    aware = doctor_verdict(base) == "aware"
    # Remedies are tried for a "not aware" answer (not for a doctor that could not run at all), and not for a
    # library built without CUDA support (its static answer): no setting would change that.
    remedies = doctor_verdict(base) == "not aware" and lib.cuda_aware is not False

    def candidates():
        yield from _settings(lib) if aware else _remedies(lib) if remedies else []
        if remedies and not out["findings"]:  # no setting alone made it work
            yield from _remedies_together(lib)

    for setting, fields in candidates():
        out["tried"].append(("without " if aware else "with ") + setting)
        ed = engine_doctor(replace(lib, **fields), engine, timeout)
        if doctor_verdict(ed) != doctor_verdict(base):
            kind = "needed" if aware else "remedy"
            effect = (f"needed: without it the doctor says {doctor_answer(ed)}" if aware
                      else f"makes it work: with it the doctor says {doctor_answer(ed)}")
        elif aware and _fresh(ed) != _fresh(base):
            kind = "reallocation"
            effect = (f"decides whether device buffers freed and allocated again move correctly: without it the check "
                      f"{_fresh(ed)}, with it {_fresh(base)}")
        else:
            continue
        out["findings"].append({"setting": setting, "as_configured": doctor_answer(base), "changed": doctor_answer(ed),
                                "effect": effect, "kind": kind})
    return out


# MPICH's Hydra exits with a killed rank's raw wait status (11 for SIGSEGV) and says so on its standard output
_HYDRA_SIGNAL = re.compile(r"TERMINATED WITH THE EXIT STRING: .*\(signal (\d+)\)")


def _signal_of(returncode: int, stdout: str = "") -> int | None:
    """The signal that ended a launch: -N from subprocess, 128+N from a launcher or shell (mpirun: 139 = SIGSEGV),
    or N with Hydra's "(signal N)" on the launcher's standard output."""
    if returncode < 0:
        return -returncode
    if 128 < returncode < 128 + 65:
        return returncode - 128
    m = _HYDRA_SIGNAL.search(stdout)
    if returncode and m and int(m.group(1)) == returncode:
        return returncode
    return None


def _fatal_line(text: str) -> str:
    for ln in text.splitlines():
        if "FATAL" in ln:
            return ln.strip()[:300]
    return ""


def format_text(rep: dict) -> str:
    t = rep["topology"]
    lines = ["== GPUs and links (source: %s)" % t["source"]]
    if t["gpus"]:
        for g in t["gpus"]:
            lines.append(f"  GPU{g['index']}: {g['name']} {g['pci_bus_id']}")
        n = len(t["gpus"])
        lines.append("        " + " ".join(f"GPU{j:<3}" for j in range(n)))
        for i in range(n):
            lines.append(f"  GPU{i:<3} " + " ".join(f"{t['links'].get(f'{i}-{j}', 'X'):<6}" for j in range(n)))
    else:
        lines.append("  no GPU")
    for note in t["notes"]:
        lines.append(f"  note: {note}")
    lines.append("== NUMA")
    for node, cpus in sorted(t["numa_nodes"].items()):
        lines.append(f"  node{node}: cpus {cpus}")
    lines.append("  path classes present: " + ", ".join(t["path_classes"]))
    lines.append("== MPI libraries")
    for lib in rep["libraries"]:
        proof = ("the engine doctor below proves it" if lib.get("engine_doctor")
                 else "the engine doctor proves it: gmb doctor without --no-engine")
        aware = {True: "CUDA-aware (static)", False: "not CUDA-aware", None: f"CUDA awareness not declared ({proof})"}[
            lib["cuda_aware_static"]] if lib.get("transport", "mpi") == "mpi" else f"NCCL transport via {lib['via']}"
        lines.append(f"  {lib['name']:<22} {lib['family']} {lib['version']} prefix {lib['prefix']} "
                     f"launcher {lib['launcher']} ({lib['launcher_path']}) [{lib['source']}] {aware}")
        if lib.get("library_dirs"):
            lines.append(f"      library directories: {' '.join(lib['library_dirs'])}")
        if lib.get("isolate_from"):
            lines.append(f"      kept out of its PATH / LD_LIBRARY_PATH: {' '.join(lib['isolate_from'])}")
        if lib.get("launcher_and_wrapper", "same installation") != "same installation":
            lines.append(f"      MIXED INSTALLATIONS: {lib['launcher_and_wrapper']}")
        loads = lib.get("engine_loads")
        if loads:
            if loads.get("error"):
                lines.append(f"      engine loads: unknown ({loads['error']})")
            else:
                lines.append(f"      engine loads: {loads['loaded']} ({loads['library_version']})"
                             + (f"  WRONG LIBRARY: {loads['mismatch']}" if loads.get("mismatch") else ""))
        if lib.get("engine_doctor"):
            ed = lib["engine_doctor"]
            aw = ed.get("gpu_awareness")
            if isinstance(aw, dict) and aw.get("verdict"):
                text = aw["verdict"] + (f": {aw['summary']}" if aw.get("summary") else "")
            else:
                text = aw or ed.get("error")
            lines.append(f"      engine doctor: {text}")
            fresh = ed.get("fresh_buffers")
            if fresh:
                lines.append(f"      device buffers freed and allocated again: {fresh.get('status')} "
                             f"({fresh.get('detail', '')})")
            for host, tools in (ed.get("network_tools") or {}).items():
                lines.append(f"      network ceiling tools on {host}: " + "; ".join(tools))
        settings = lib.get("settings_that_matter")
        if settings:
            for f in settings["findings"]:
                lines.append(f"      setting that matters: {f['setting']}: {f['effect']}")
            if not settings["findings"]:
                lines.append("      settings that matter: none of " + (", ".join(settings["tried"]) or "(no setting to try)")
                             + " changed the doctor's answer")
    lines.append("== Missing / to fix")
    lines += [f"  - {m}" for m in rep["missing"]] or ["  nothing"]
    return "\n".join(lines)
