# SPDX-License-Identifier: BSD-3-Clause
"""The real engine's description against the contract (gmb.engine/1), and the fake engine's against the real one's,
so that what the fake the other tests run on says stays true of the engine."""

import json
from pathlib import Path

import jsonschema
from fake_engine import description
from realmpi import debian_library, skip_unless_debian

from gmb.engine import build
from gmb.engine.description import SCHEMA
from gmb.results.result_facts import STAT_OBJECTS

FAMILIES = {"pt2pt", "multi-pair", "rma", "partitioned", "collective", "nbc", "managed", "halo", "peaks", "doctor"}


@skip_unless_debian("openmpi")
def test_real_engine_describes_itself_and_the_fake_says_the_same(real_env):
    lib = debian_library("openmpi")
    engine = build.build(lib, root=real_env["source"], log=print)
    desc = build.describe_engine(engine, env=lib.process_env())  # refuses a description short of the contract
    raw = desc.raw
    assert raw["schema"] == SCHEMA
    schema = json.loads((Path(__file__).resolve().parents[2] / "schema" / "engine.v1.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(raw)
    for b in raw["benchmarks"]:
        assert b["family"] in FAMILIES, b
        assert set(b["metrics"]) <= set(STAT_OBJECTS), b
        assert b["headline"] is None if not b["metrics"] else b["headline"] in b["metrics"], b
        assert "mpi" in b["transports"] and isinstance(b["operations"], bool), b
        assert isinstance(b["adaptive"], bool), b
        assert all(o["names"] and o["value"] in ("required", "optional", "none") for o in b["options"]), b
    for k in raw["memory_kinds"]:
        assert {"gpu_memory", "gpu_backed", "placeable", "host_accessible", "placement", "base"} <= set(k), k
    for c in raw["collectives"]:
        assert c["mpi_call"].startswith("MPI_") and set(c["nccl"]) == {"call", "reason"}, c
        assert (c["nccl"]["call"] is None) != (c["nccl"]["reason"] is None), c
    if real_env["cuda"] == "OFF":  # the host-only engine, as data/engine/host.json describes one
        assert not desc.cuda and not any(k["available"] for k in raw["memory_kinds"] if k["gpu_backed"])

    # What the fake says must be true of the real engine; the fake may say less (a benchmark added to the engine
    # needs no edit of the fake, and the tests that run on the fake do not see it).
    real = {b["name"]: b for b in raw["benchmarks"]}
    for b in description()["benchmarks"]:
        assert b["name"] in real, f"the fake describes {b['name']!r}, which the engine does not list"
        facts = ("family", "headline", "metrics", "operations", "adaptive", "directions", "overlap", "omb")
        assert {k: b[k] for k in facts} == {k: real[b["name"]][k] for k in facts}, b["name"]
        # a campaign's options are checked by these (an option the engine gained since need not be in the fake)
        assert [o for o in b["options"] if o not in real[b["name"]]["options"]] == [], b["name"]
    assert [o for o in description()["options"] if o not in raw["options"]] == []
    kinds = {k["name"]: k for k in raw["memory_kinds"]}
    properties = ("gpu_memory", "gpu_backed", "placeable", "host_accessible", "page_locked", "pageable", "placement",
                  "base")
    for k in description()["memory_kinds"]:
        assert {p: k.get(p) for p in properties} == {p: kinds[k["name"]].get(p) for p in properties}, k["name"]
    collectives = {c["name"]: c for c in raw["collectives"]}
    for c in description()["collectives"]:
        assert {x: c[x] for x in ("mpi_call", "nonblocking_call", "rooted", "reduction", "nccl")} == \
            {x: collectives[c["name"]][x] for x in ("mpi_call", "nonblocking_call", "rooted", "reduction", "nccl")}, \
            c["name"]
    # the facts the harness plans and reads by, as the engine states them
    for key in ("run_defaults", "strategies", "ceilings", "environment_prefixes"):
        assert description()[key] == raw[key], key
