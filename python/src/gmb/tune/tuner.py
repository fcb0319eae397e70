# SPDX-License-Identifier: BSD-3-Clause
"""The launches of a `gmb tune` search: rounds of launches of (race, arm) run into one results directory within the
deadline, each knob value proven correct by the engine's doctor before it is measured, the launches of one set of
settings sharing an engine launch (run/bundles.py), a failed launch judged (its setting, or the disk), and each arm's
figures read back from the store with its confirmation. What each round launches: search.py."""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from .confirmation import confirm_arm
from .paths import ROUND_PRECISION, round_options
from .races import DEFAULTS, Arm, ArmFigure, Race, judge_failures
from .verify import record_identity
from ..campaign.plan import plan
from ..campaign.spec import Campaign
from ..engine import configurations as confs_mod
from ..engine.doctor import doctor_answer, doctor_verdict, engine_doctor
from ..options import TuneOptions
from ..outputs import OutputError, os_cause
from ..results.model import Results
from ..results.points import combine
from ..results.store_file import StoreError
from ..run.bundles import bundles, run_bundles

FIRST_LAUNCH_GUESS_S = 5.0  # a launch's wall time until one has been measured
LAUNCH_TIMEOUT_S = 180.0


class Tuner:
    """Runs the races' launches into one results directory, within the deadline."""

    def __init__(self, outdir: Path, st, lock, confs, opts: TuneOptions, hosts: int, deadline: float):
        self.outdir, self.st, self.lock, self.opts, self.hosts = outdir, st, lock, opts, hosts
        self.confs = {c.name: c for c in confs_mod.runnable(confs)}
        self.deadline = deadline
        self.owner: dict[str, tuple[Race, Arm]] = {}  # launch id -> its race and arm
        self.confirming: set[str] = set()  # the launch ids of confirmation launches (no part in any selection)
        self.round_seconds = 0.0  # spent in rounds
        self.launched = 0
        self.rounds = 0  # rounds run
        self.doctor: dict[tuple[str, str], str | None] = {}  # (configuration, settings) -> why broken (None: fine)
        self.doctor_defaults: dict[str, dict] = {}  # configuration -> its doctor's answer with the defaults
        self.rng = random.Random(opts.seed)
        self.cut_short = False
        self.running: list[str] = []  # the launches of the engine launch running (still set where running it failed)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def current(self) -> str | None:
        """The first launch of the engine launch running, the one a failure is said of."""
        return self.running[0] if self.running else None

    def launch_estimate(self) -> float:
        """Seconds a launch (a block of a bundle) takes, the doctor's proofs and the bookkeeping between launches
        included."""
        return self.round_seconds / self.launched if self.launched else FIRST_LAUNCH_GUESS_S

    def prove(self, race: Race, arm: Arm) -> bool:
        """The engine's doctor with the arm's settings answers as with the defaults: its validated exchange proves
        the library CUDA-aware (or not) alike, and nothing crashes or fails to start. NCCL's knobs are proven by the
        validated measurement itself (the doctor's exchange is MPI's). False (the arm broken, why said)
        otherwise."""
        conf = self.confs[race.configuration]
        if not arm.settings or conf.library.transport == "nccl":
            return True
        key = (conf.name, json.dumps(arm.settings, sort_keys=True))
        if key not in self.doctor:
            self.doctor[key] = self._doctor_differs(conf, arm.settings)
        if self.doctor[key]:
            arm.state, arm.why = "broken", self.doctor[key]
            return False
        return True

    def _doctor_differs(self, conf, settings: dict[str, str]) -> str | None:
        """Why the doctor's answer with ``settings`` is not its answer with the defaults (None: it is)."""
        quick = "--awareness-only" in (conf.description.accepted_options("doctor") or {})
        if conf.name not in self.doctor_defaults:
            self.doctor_defaults[conf.name] = engine_doctor(conf.library, Path(conf.engine), 60, quick)
        base = self.doctor_defaults[conf.name]
        lib = replace(conf.library, env={**conf.library.env, **settings})
        said = engine_doctor(lib, Path(conf.engine), 60, quick)
        if (doctor_verdict(said), said.get("crashed", False)) == (doctor_verdict(base), base.get("crashed", False)):
            return None
        return f"the engine's doctor says {doctor_answer(said)} (with the defaults: {doctor_answer(base)})"

    def run_round(self, round_number: int, work: list[tuple[Race, Arm]], confirming: bool = False) -> None:
        """One launch of each (race, arm), in random order, each arm proven correct first; stops at the deadline.
        ``confirming``: the launches confirm selected values (at the finest precision), and no selection uses them."""
        self.rounds += 1
        started, before = time.monotonic(), len(self.owner)
        try:
            self._run_round(round_number, work, confirming)
        finally:
            self.round_seconds += time.monotonic() - started
            self.launched += len(self.owner) - before

    def _run_round(self, round_number: int, work: list[tuple[Race, Arm]], confirming: bool) -> None:
        work = [(race, arm) for race, arm in work if arm.state == "broken" or self.prove(race, arm)]
        work = [(race, arm) for race, arm in work if arm.state != "broken"]
        precision = len(ROUND_PRECISION) - 1 if confirming else round_number
        blocks = [replace(round_options(race.block, precision), env={**race.block.env, **arm.settings})
                  for race, arm in work]
        campaign = Campaign(f"tune-round{round_number + 1}", blocks, repetitions=1, order="random",
                            seed=self.rng.randrange(1 << 30), timeout_s=LAUNCH_TIMEOUT_S)
        libs = [c.library for c in self.confs.values()]
        launches, skipped = plan(campaign, libs, {n: c.description for n, c in self.confs.items()},
                                 hosts=self.hosts)
        for lib, what, why in skipped:  # a plan refusal breaks the arm of its block (e.g. an outranked setting)
            if what.startswith("block "):
                race, arm = work[int(what.split()[1]) - 1]
                arm.state, arm.why = "broken", why
        owners = {}
        for x in launches:
            race, arm = work[int(x.launch_id.split(".")[0][1:]) - 1]
            if arm.state != "broken":
                x = replace(x, launch_id=f"t{round_number + 1}.{x.launch_id}")
                owners[x.launch_id] = (x, race, arm)
        # one engine launch measures every path of one set of settings: the launches of a configuration whose
        # settings are the same share it (run/bundles.py), each still a launch of its race and arm
        nodes = self.hosts if self.opts.nodes else None
        for bundle in bundles([x for x, _, _ in owners.values()], self.rng.randrange(1 << 30), nodes, None,
                              prefix=f"t{round_number + 1}.u"):
            fit = max(0, int(self.left() // self.launch_estimate()))
            if fit < len(bundle.launches):
                self.cut_short = True
            blocks = bundle.launches[:fit]
            if not blocks:
                return
            for x in blocks:
                self.owner[x.launch_id] = owners[x.launch_id][1:]
                if confirming:
                    self.confirming.add(x.launch_id)
            self.running = [x.launch_id for x in blocks]
            run_bundles(self.outdir, blocks, self.confs, self.st, "tune", seed=None, hostfile=self.opts.hostfile,
                        progress=False, nodes=nodes, stop_library_after=0, lock=self.lock, named=bundle.bundle_id)
            for x in blocks:
                self._judge_launch(x.launch_id, *owners[x.launch_id][1:])
            self.running = []
            if self.cut_short:
                return

    def _judge_launch(self, launch_id: str, race: Race, arm: Arm) -> None:
        """A launch that did not end ok (or unsupported): a note on its race (the defaults) or its arm failed."""
        (row,) = self.st.rows("SELECT status, reason FROM launches WHERE launch_id = ?", (launch_id,))
        if row["status"] not in ("ok", "unsupported"):
            self.check_writable(launch_id)
            said = f"{row['status']}: {row['reason'] or 'no reason given'}"
            if arm.key == DEFAULTS:
                race.note = f"a launch with the defaults {said}"
            else:  # broken, or no verdict where the defaults fail as well (races.judge_failures)
                arm.state, arm.why = "failed", f"its launch {said}"

    def check_writable(self, launch_id: str) -> None:
        """After a failed launch: its record and log directories still take a byte. OutputError naming the directory
        and the launch otherwise: a disk fault fails the search, it is no verdict on the launch's settings."""
        for d in (self.outdir / "raw", self.outdir / "logs"):
            try:
                with tempfile.TemporaryFile(dir=d) as probe:
                    probe.write(b"\0")
                    probe.flush()
                    os.fsync(probe.fileno())
            except OSError as exc:
                raise OutputError(f"{d}: cannot be written ({os_cause(exc)}): launch {launch_id} failed for it, "
                                  "not for its settings") from None

    def end_running_launch(self, why: str) -> str:
        """The launch the search was running when it failed, no longer "running" in the store: "failed", with
        ``why``. Returns what could not be done ("" when done, or when no launch was running)."""
        try:
            for launch_id in self.running:
                for row in self.st.rows("SELECT * FROM launches WHERE launch_id = ? AND status = 'running'",
                                        (launch_id,)):
                    self.st.record_launch(**{**row, "status": "failed", "reason": why})
        except (OutputError, StoreError, OSError) as exc:
            return f"the store still says launch {launch_id} runs: {exc}"
        return ""

    def update_figures(self, races: list[Race]) -> None:
        """Each arm's figure per size from its launches so far, and from its confirmation launches alone with its
        confirmation; an arm with a failed result (wrong data) is broken."""
        results = Results.load(self.st)
        by_arm: dict[int, list] = {}
        fresh: dict[int, list] = {}
        for r in results.results:
            owner = self.owner.get(r.launch_id or "")
            if owner is None:
                continue
            race, arm = owner
            if r.status == "failed" and arm.state != "broken":
                arm.state, arm.why = "broken", f"{r.bytes} B: {r.reason or 'failed'}"
            if r.status == "ok":
                by_arm.setdefault(id(arm), []).append(r)
                if r.launch_id in self.confirming:
                    fresh.setdefault(id(arm), []).append(r)
                if arm.key == DEFAULTS and race.identity is None:
                    race.identity = {"point": record_identity(r, race.metric), "settings": r.config.settings}
        for race in races:
            for arm in race.arms:
                points = combine(by_arm.get(id(arm), []), metric=race.metric)
                arm.figures = {p.bytes: ArmFigure(p.median, p.low, p.high, p.reps, tuple(p.values), p.noise)
                               for p in points}
                points = combine(fresh.get(id(arm), []), metric=race.metric)
                arm.fresh_figures = {p.bytes: ArmFigure(p.median, p.low, p.high, p.reps, tuple(p.values), p.noise)
                                     for p in points}
                arm.fresh = {p.bytes: {x.launch_id: x.median for x in p.launches} for p in points}
            for arm in race.arms[1:]:
                if arm.fresh:
                    confirm_arm(race, arm)
            judge_failures(race)
