# SPDX-License-Identifier: BSD-3-Clause
"""CUDA awareness before a run: each engine's doctor asked whether its library moves device memory, and which of
the library's settings that depends on; the answers kept per configuration, engine and GPUs for later sessions."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from . import build_cache, doctor
from .configurations import Configuration

# Changed when what is kept in the doctor's cache changes shape: older entries are then asked again.
_CACHE_FORMAT = 1


def doctor_cache_file(conf: Configuration, topo) -> Path | None:
    """Where the doctor's answers for one library configuration (every field that sets how it runs), its engine (the
    file, by path, size and time: a rebuilt engine is another) and this machine's GPUs are kept, under the build
    cache ($GMB_CACHE/doctor/); None where the engine file cannot be looked at (nothing is kept then)."""
    try:
        engine = Path(conf.engine).resolve()
        st = engine.stat()
    except (OSError, TypeError):
        return None
    key = json.dumps({"format": _CACHE_FORMAT, "library": conf.library.describe(),
                      "engine": [str(engine), st.st_size, st.st_mtime_ns],
                      "gpus": [[g.name, g.uuid, g.pci_bus_id] for g in topo.gpus]}, sort_keys=True, default=str)
    name = re.sub(r"[^A-Za-z0-9.+-]+", "_", conf.library.name)
    return build_cache.cache_dir() / "doctor" / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"


def _kept_answers(path: Path | None) -> tuple[dict, dict] | None:
    """(the doctor's verdict, the settings that matter) as kept at ``path``; None where nothing usable is kept."""
    if path is None:
        return None
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not (isinstance(kept, dict) and isinstance(kept.get("verdict"), dict) and isinstance(kept.get("settings"), dict)
            and isinstance(kept["settings"].get("findings"), list)):
        return None
    return kept["verdict"], kept["settings"]


def _keep_answers(path: Path | None, verdict: dict, settings: dict) -> None:
    """Kept for the next session (replaced whole, never half-written); a doctor that could not run (an error, not a
    verdict: a timeout, a busy machine) is not kept, so that the next session asks again."""
    if path is None or "error" in verdict:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=path.name, suffix=".tmp", delete=False) as f:
            json.dump({"verdict": verdict, "settings": settings}, f)
        os.replace(f.name, path)
    except OSError as exc:  # a cache that cannot be written costs the next session the checks, nothing else
        print(f"gmb: warning: cannot keep the doctor's answers in {path.parent}: {exc}", file=sys.stderr)


def doctor_answers(conf: Configuration, topo, refresh: bool = False) -> tuple[dict, dict, Path | None]:
    """(the engine doctor's verdict, the settings that matter, the cache file they came from: None when asked now)
    for one library configuration: kept from an earlier session for the same configuration, engine and GPUs unless
    ``refresh``."""
    path = doctor_cache_file(conf, topo)
    kept = None if refresh else _kept_answers(path)
    if kept is not None:
        return (*kept, path)
    engine = Path(conf.engine)
    verdict = doctor.engine_doctor(conf.library, engine, timeout=60)
    # before cuda_aware is refined
    settings = doctor.settings_that_matter(conf.library, engine, timeout=60, baseline=verdict)
    _keep_answers(path, verdict, settings)
    return verdict, settings, None


def doctor_configurations(confs: list[Configuration], topo, refresh: bool = False
                          ) -> tuple[list[Configuration], list[dict]]:
    """On a machine with GPUs, each MPI library with a CUDA engine gets its engine's doctor (a 2-rank launch that
    proves CUDA awareness and checks device buffers freed and allocated again), and the doctor again without each
    of the library's settings (or, when it is not aware, with its family's GPU settings): which settings its GPU
    support depends on (settings_that_matter), for the report. A library whose awareness is unknown (no
    declared answer, no ompi_info: e.g. MPICH) is planned as not aware unless this doctor says aware. The answers are
    kept per configuration, engine and GPUs and reused by later sessions (doctor_answers; ``refresh``: asked again).
    Returns the configurations (with the awareness the doctor found) and the settings found."""
    if not topo.gpus:
        return list(confs), []
    found, out = [], []
    for conf in confs:
        out.append(conf)
        lib = conf.library
        if lib.transport != "mpi" or conf.engine is None or not conf.description.cuda:
            continue
        verdict, settings, cached = doctor_answers(conf, topo, refresh)
        if cached:
            print(f"gmb: {lib.name}: the engine doctor's answer and setting checks as an earlier session found them "
                  f"for this configuration, engine and GPUs ({cached}; --refresh asks again)", file=sys.stderr)
        for f in settings["findings"]:
            print(f"gmb: {lib.name}: setting that matters: {f['setting']}: {f['effect']}", file=sys.stderr)
        found.append(settings)
        if lib.cuda_aware is None:
            aware = (verdict.get("gpu_awareness") or {}).get("verdict")
            if aware in ("aware", "not aware"):
                out[-1] = replace(conf, library=replace(lib, cuda_aware=aware == "aware"))
            summary = (verdict.get("gpu_awareness") or {}).get("summary") or verdict.get("error") or ""
            print(f"gmb: {lib.name}: CUDA awareness unknown; the engine's doctor says: {aware or 'no verdict'}"
                  + (f" ({summary})" if summary else "") + ("" if aware in ("aware", "not aware") else
                                                            " (planned as not aware)"), file=sys.stderr)
    return out, found
