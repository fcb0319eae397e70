"""The real engine's description against the contract (gmb.engine/1), and the fake engine's against the real one's,
so that the fake the other tests run on cannot drift from what the engine says."""

from fake_engine import description
from realmpi import debian_library, skip_unless_debian

from gmb import build
from gmb.engine_description import SCHEMA
from gmb.records import STAT_OBJECTS

FAMILIES = {"pt2pt", "multi-pair", "collective", "nbc", "managed", "halo", "peaks", "doctor"}


@skip_unless_debian("openmpi")
def test_real_engine_describes_itself_and_the_fake_says_the_same(real_env):
    lib = debian_library("openmpi")
    engine = build.build(lib, root=real_env["source"], log=print)
    desc = build.describe_engine(engine, env=lib.process_env())  # refuses a description short of the contract
    raw = desc.raw
    assert raw["schema"] == SCHEMA
    for b in raw["benchmarks"]:
        assert b["family"] in FAMILIES, b
        assert set(b["metrics"]) <= set(STAT_OBJECTS), b
        assert b["headline"] is None if not b["metrics"] else b["headline"] in b["metrics"], b
        assert "mpi" in b["transports"] and isinstance(b["operations"], bool), b
    for k in raw["memory_kinds"]:
        assert {"gpu_memory", "gpu_backed", "placeable", "host_accessible", "placement", "base"} <= set(k), k
    for c in raw["collectives"]:
        assert c["mpi_call"].startswith("MPI_") and set(c["nccl"]) == {"call", "reason"}, c
        assert (c["nccl"]["call"] is None) != (c["nccl"]["reason"] is None), c
    if real_env["cuda"] == "OFF":  # the host-only engine, as data/engine/host.json describes one
        assert not desc.cuda and not any(k["available"] for k in raw["memory_kinds"] if k["gpu_backed"])

    def shape(d):
        return {(b["name"], b["family"], b["headline"]) for b in d["benchmarks"]}

    assert shape(description()) == shape(raw)
    assert {k["name"] for k in description()["memory_kinds"]} == {k["name"] for k in raw["memory_kinds"]}
    assert {c["name"] for c in description()["collectives"]} == {c["name"] for c in raw["collectives"]}
