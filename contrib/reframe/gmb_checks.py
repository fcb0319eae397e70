# SPDX-License-Identifier: BSD-3-Clause
"""ReFrame checks that run a gmb campaign in a site's partition and report gmb's answers as performance variables.

The job runs `gmb run` once (ReFrame's launcher is replaced by the local one); gmb starts every gmb-bench launch
itself with the partition's launcher (`--launcher srun` under Slurm's srun, mpirun or mpiexec under those), inside
the allocation ReFrame's scheduler made. gmb, not ReFrame, launches the engine because gmb checks every launch for
the MPI library it ran, times it out, retries nothing and keeps every record; the answers come from all launches
of the campaign together (medians over repetitions, % of the measured ceiling).

After the run the job writes `gmb tables --json` (the answers and the tables, format gmb.answers/3) and checks every
record against gmb's record schema (`gmb ingest --validate`). Performance variables, one per figure of the answers:

    <path>/<configuration>/bw               GB/s   bandwidth at the size the answer states (managed memory: us)
    <path>/<configuration>/pct_of_ceiling   %      of the ceiling measured on that path at that size
    <path>/<configuration>/latency          us     one-way latency at 8 B (else the nearest size measured)
    <operation>-<ranks>-<memory>/<configuration>/busbw   GB/s   collective bus bandwidth

<path> is the answer's path with every run of characters other than letters and digits as one '-'
("NVLink pair" -> "nvlink-pair"), <configuration> the library configuration as gmb names it ("openmpi-4.1.4"),
with "+<strategy>" for a gmb strategy. See docs/reframe.md.
"""

import json
import os
import re

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.backends import getlauncher

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = "gmb-results"  # in the stage directory; one campaign per test run, so one results directory in it
ANSWERS = "gmb-answers.json"
# launch statuses that fail the check ("unsupported" does not: the network ceiling with all ranks on one host);
# "skipped": a library's launches left after failures in a row
FAILED_STATUSES = ("failed", "timeout", "bad-input", "validation-failed", "wrong-library", "interrupted", "skipped")
# the partition's launcher (ReFrame's registered name) -> gmb's --launcher; '' keeps each library's own launcher
GMB_LAUNCHERS = {"srun": "srun", "mpirun": "mpirun", "mpiexec": "mpiexec", "local": ""}


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def performance_figures(answers):
    """{variable name: (value, unit)} from the answers of a gmb.answers/3 document; figures without a value (no
    ceiling, no latency measured) are left out."""
    out = {}
    for path in answers["paths"]:
        for f in path["figures"]:
            name = f"{slug(path['path'])}/{f['library']}" + (f"+{f['strategy']}" if f["strategy"] else "")
            out[f"{name}/bw"] = (f["value"], f["unit"])
            if f["pct_of_ceiling"] is not None:
                out[f"{name}/pct_of_ceiling"] = (f["pct_of_ceiling"], "%")
            if f["latency_us"] is not None:
                out[f"{name}/latency"] = (f["latency_us"], "us")
    for coll in answers["collectives"]:
        for f in coll["figures"]:
            out[f"{coll['operation']}-{coll['ranks']}-{slug(coll['memory'])}/{f['library']}/busbw"] = (f["value"],
                                                                                                        f["unit"])
    return out


class GmbCampaign(rfm.RunOnlyRegressionTest):
    """A gmb campaign in the current partition. Set the variables below from the command line (`-S engine=...`)
    or in a subclass; `reference` holds the expected figures per system:partition (names as above)."""

    #: the campaign file (default: a host-memory campaign of seconds per library, next to this file)
    campaign = variable(str, value=os.path.join(HERE, "nightly-host.toml"))
    #: the harness: a `gmb` command (on PATH, from a module or a venv)
    gmb = variable(str, value="gmb")
    #: when set, `pip install`ed into a venv in the stage directory first, and its gmb used (a path to the
    #: repository's python/ directory, a wheel, or "gmb==0.1.0")
    harness_pip = variable(str, value="")
    #: an installed gmb-bench (`cmake --install` or a module): every library uses it and nothing is built; empty: gmb
    #: takes the engines it finds (declared, $GMB_ENGINE, on PATH) and builds the others with CMake
    engine = variable(str, value="")
    #: the engine sources gmb builds from (GMB_SOURCE) when `engine` is empty; empty: the checkout gmb runs from
    engine_source = variable(str, value="")
    #: the MPI libraries measured, as `gmb libs` names them (empty: every one found)
    libraries = variable(typ.List[str], value=[])
    #: gmb's --launcher; empty: from the partition's launcher (GMB_LAUNCHERS)
    launcher = variable(str, value="")
    #: more `gmb run` arguments (`--config site-libraries.toml`, `--repetitions 3`)
    gmb_args = variable(typ.List[str], value=[])

    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    num_tasks = 2  # the campaign's ranks: the allocation gmb's launches run in
    num_tasks_per_node = 2
    time_limit = "20m"
    tags = {"gmb", "benchmark"}
    keep_files = [RESULTS, ANSWERS]  # copied to the output directory: the stage directory goes when the test passes

    @run_after("setup")
    def set_command(self):
        gmb = self.gmb
        if self.harness_pip:
            self.prerun_cmds = ["python3 -m venv gmb-venv", f"gmb-venv/bin/pip install -q {self.harness_pip}"]
            gmb = "./gmb-venv/bin/gmb"
        launcher = self.launcher or self.partition_launcher()
        self.executable = gmb
        self.executable_opts = ["run", self.campaign, "--results", RESULTS, "--no-progress", "--no-report"]
        self.executable_opts += ["--launcher", launcher] if launcher else []
        self.executable_opts += [arg for lib in self.libraries for arg in ("--library", lib)]
        if self.engine:
            self.env_vars["GMB_ENGINE"] = self.engine
            self.executable_opts.append("--no-build")
        if self.engine_source:
            self.env_vars["GMB_SOURCE"] = self.engine_source
        self.executable_opts += self.gmb_args
        self.postrun_cmds = [f"{gmb} tables {RESULTS}/*/ --json > {ANSWERS}",
                             f"{gmb} ingest gmb-validated.sqlite {RESULTS}/*/raw/*.jsonl {RESULTS}/*/engines/*.json "
                             f"--validate"]

    def partition_launcher(self):
        name = self.current_partition.launcher_type.registered_name
        if name not in GMB_LAUNCHERS:
            raise ValueError(f"partition {self.current_partition.fullname}: its launcher {name!r} is not one gmb "
                             f"runs (srun, mpirun, mpiexec): set -S launcher=srun|mpirun|mpiexec")
        return GMB_LAUNCHERS[name]

    @run_before("run")
    def run_gmb_once(self):
        self.job.launcher = getlauncher("local")()

    @sanity_function
    def campaign_finished_and_validated(self):
        """gmb ran every launch without a failure, the records passed the schema, the answers have figures."""
        counts = sn.extractsingle(r"(?m)^gmb: launches: (.*?); results in", self.stderr, 1)
        return sn.all([
            sn.assert_found_s(r"\d+ ok", counts, msg="no launch of the campaign finished"),
            sn.assert_not_found_s("|".join(FAILED_STATUSES), counts,
                                  msg=f"a launch of the campaign did not finish (each reason in {RESULTS}/*/logs)"),
            sn.assert_not_found(r"(?m)^gmb: skipping ", self.stderr,
                                msg="gmb skipped a library (the job's stderr says why: no engine, ...); "
                                    "`-S libraries=` names those to measure"),
            sn.assert_found(r"(?m)^\d+ result records into gmb-validated.sqlite", self.stdout,
                            msg="the records did not pass gmb's record schema (gmb ingest --validate)"),
            sn.assert_true(self.figures(), msg=f"no figure in the answers ({ANSWERS})"),
        ])

    @sn.deferrable
    def figures(self):
        with open(os.path.join(self.stagedir, ANSWERS)) as f:
            return performance_figures(json.load(f)["answers"])

    @run_before("performance")
    def set_performance_variables(self):
        if self.is_dry_run():  # nothing ran: no answers to read
            return
        self.perf_variables = {name: sn.make_performance_function(sn.defer(value), unit)
                               for name, (value, unit) in self.figures().evaluate().items()}


@rfm.simple_test
class gmb_nightly(GmbCampaign):
    """The example: the host-memory campaign. The references are an example (a busy 2-core Debian 12 VM, Open MPI
    4.1.4 and MPICH 4.0.2): (value, lower and upper bound as fractions of it, unit), per system:partition; a site
    sets its own. Every figure has a bound on the side where it goes wrong: bandwidths a lower one (a quarter of the
    reference), times an upper one. On that VM the 8 B latency ranged from 0.2 us to hundreds of us under srun,
    so its bound is 1 ms (2000 x 0.5 us): a latency of milliseconds (ranks taking turns on one core at the
    scheduler's 4 ms tick) fails the check."""

    reference = {
        "example:cpu": {
            "host/openmpi-4.1.4/bw": (2.0, -0.75, None, "GB/s"),
            "host/openmpi-4.1.4/latency": (0.5, None, 1999.0, "us"),
            "allreduce-2-host/openmpi-4.1.4/busbw": (1.5, -0.75, None, "GB/s"),
            "host/mpich-4.0.2/bw": (2.0, -0.75, None, "GB/s"),
            "host/mpich-4.0.2/latency": (0.5, None, 1999.0, "us"),
            "allreduce-2-host/mpich-4.0.2/busbw": (1.5, -0.75, None, "GB/s"),
        },
    }
