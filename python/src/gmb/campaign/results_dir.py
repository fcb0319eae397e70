# SPDX-License-Identifier: BSD-3-Clause
"""The results directory: checked and made new, never reused; the plan written into it (``plan.json`` and the
campaign as TOML, with a copy of the campaign file) and read back, checked, for a resume."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..machine.mpilibs import MpiLibrary
from ..outputs import OutputError, os_cause, write_new
from .plan import Launch, safe_name
from .spec import Campaign, CampaignError

_STAMP = "%Y%m%dT%H%M%SZ"
SQLITE_PATH_MAX = 512  # the longest path SQLite's unix file layer opens (MAX_PATHNAME), its journal's included


def results_dir_problem(base: str | Path, name: str, launch_ids: list[str]) -> str | None:
    """Why the results directory of ``name`` under ``base`` could not hold its files, or None: a path longer than
    the OS opens (PATH_MAX) or SQLite does (its store's journal), a name longer than the file system's NAME_MAX;
    checked before anything is made. The longest files: the store's journal, and a launch's record file or log set
    aside on a resume."""
    outdir = Path(os.path.abspath(base)) / f"{safe_name(name)}-{datetime.now(timezone.utc).strftime(_STAMP)}-99"
    existing = next(p for p in (outdir, *outdir.parents) if os.path.isdir(p))  # never raises: a name too long
    path_max, name_max = os.pathconf(existing, "PC_PATH_MAX"), os.pathconf(existing, "PC_NAME_MAX")
    longest = max((f"raw/{x}.jsonl.interrupted-99" for x in launch_ids), key=len, default="raw/x.jsonl")
    journal = outdir / "store.sqlite-journal"
    for part in (*outdir.relative_to(existing).parts, *Path(longest).parts):
        if len(os.fsencode(part)) > name_max:
            return f"a name in it would be {len(os.fsencode(part))} bytes ({part[:40]}...), and this file system " \
                   f"takes at most {name_max} (NAME_MAX)"
    if len(os.fsencode(outdir / longest)) >= path_max:
        return f"its files would have paths of {len(os.fsencode(outdir / longest))} bytes, and the OS opens at " \
               f"most {path_max - 1} (PATH_MAX)"
    if len(str(journal)) > SQLITE_PATH_MAX:
        return f"its store's journal would be {journal.name} at a path of {len(str(journal))} characters, and " \
               f"SQLite opens at most {SQLITE_PATH_MAX}"
    return None


def new_results_dir(base: str | Path, name: str) -> Path:
    """results/<campaign>-<UTC time>/, never reusing an existing directory."""
    base = Path(base)
    stamp = datetime.now(timezone.utc).strftime(_STAMP)
    d = base / f"{safe_name(name)}-{stamp}"
    n = 2
    try:
        base.mkdir(parents=True, exist_ok=True)
        while True:
            try:
                d.mkdir()
                return d
            except FileExistsError:
                d = base / f"{safe_name(name)}-{stamp}-{n}"
                n += 1
    except OSError as exc:
        raise OutputError(f"cannot create the results directory {d}: {os_cause(exc)}; nothing was run (--results "
                          f"names a directory to write into)") from None


def write_plan(outdir: Path, c: Campaign, launches: list[Launch], skipped, libs: list[MpiLibrary],
               engines: dict[str, str], resume_options: list[str] = ()):
    """plan.json (strict JSON: no NaN or Infinity) and the campaign as TOML. ``resume_options``: the command-line
    options a resume needs (session.resume_options), said to a resume that does not find the libraries."""
    data = {"campaign": c.name, "created_utc": datetime.now(timezone.utc).isoformat(), "seed": c.seed,
            "stop_library_after": c.stop_library_after, "bundle": c.bundle,
            "launches": [asdict(x) for x in launches], "skipped": skipped,
            "libraries": [lib.describe() for lib in libs], "engines": engines,
            "resume_options": list(resume_options)}
    write_new(outdir / "plan.json", json.dumps(data, indent=1, allow_nan=False))
    write_new(outdir / "campaign.toml", c.to_toml())


@dataclass(frozen=True)
class SavedPlan:
    """plan.json read back: what a resume runs from. ``libraries``: each library as the run described it
    (MpiLibrary.describe: found again by name, or made from this); ``engines``: library name -> engine path;
    ``resume_options``: the command-line options the run was given that a resume needs."""
    campaign: str
    launches: list[Launch]
    libraries: list[dict]
    engines: dict[str, str]
    resume_options: list[str]
    stop_library_after: int
    bundle: bool
    seed: int | None


def read_plan(outdir: Path) -> SavedPlan:
    """plan.json of a results directory, checked: a damaged one is a CampaignError naming what is wrong."""
    p = Path(outdir) / "plan.json"
    if not p.is_file():
        raise CampaignError(f"{outdir}: not a campaign results directory (no plan.json)")
    try:
        data = json.loads(p.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise CampaignError(f"{p}: damaged, not valid JSON ({exc}); cannot resume") from None
    if not isinstance(data, dict):
        raise CampaignError(f"{p}: damaged, expected a JSON object; cannot resume")
    problems = []
    if not isinstance(data.get("campaign"), str):
        problems.append("'campaign' must be a string")
    if not isinstance(data.get("engines"), dict) or not all(isinstance(v, str) for v in data["engines"].values()):
        problems.append("'engines' must be an object of engine paths")
    if not isinstance(data.get("libraries"), list) or not all(isinstance(d, dict) and isinstance(d.get("name"), str)
                                                              for d in data["libraries"]):
        problems.append("'libraries' must be a list of objects with a name")
    resume_options = data.get("resume_options")
    if not isinstance(resume_options, list) or not all(isinstance(o, str) for o in resume_options):
        problems.append("'resume_options' must be a list of strings")
    stop = data.get("stop_library_after")
    if not isinstance(stop, int) or isinstance(stop, bool) or stop < 0:
        problems.append("'stop_library_after' must be an integer >= 0")
    if not isinstance(data.get("bundle", False), bool):
        problems.append("'bundle' must be true or false")
    seed = data.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        problems.append("'seed' must be an integer or null")
    launches = data.get("launches")
    fields = set(Launch.__dataclass_fields__)
    optional = {"isolate"}  # keys a plan written before they existed lacks (their defaults hold)
    if not isinstance(launches, list):
        problems.append("'launches' must be a list")
    else:
        for i, d in enumerate(launches):
            if not isinstance(d, dict) or not fields - optional <= set(d) <= fields:
                problems.append(f"launch #{i + 1} must be an object with the keys {', '.join(sorted(fields))}")
                break
            if not (isinstance(d["launch_id"], str) and isinstance(d["library"], str) and
                    isinstance(d["engine_args"], list) and isinstance(d["env"], dict) and
                    isinstance(d["ranks"], int) and isinstance(d["timeout_s"], (int, float))):
                problems.append(f"launch #{i + 1} ({d.get('launch_id')!r}) has values of the wrong type")
                break
            if not 0 < d["timeout_s"] < math.inf:
                problems.append(f"launch #{i + 1} ({d['launch_id']!r}): timeout_s must be a finite number of "
                                f"seconds > 0 (got {d['timeout_s']!r})")
                break
    if problems:
        raise CampaignError(f"{p}: damaged ({'; '.join(problems)}); cannot resume")
    return SavedPlan(campaign=data["campaign"], launches=[Launch(**d) for d in launches], libraries=data["libraries"],
                     engines=data["engines"], resume_options=resume_options, stop_library_after=stop,
                     bundle=data.get("bundle", False), seed=seed)


def copy_campaign_file(src: Path, outdir: Path):
    write_new(outdir / f"source-{src.name}", src.read_bytes())
