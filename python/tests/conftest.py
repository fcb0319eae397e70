# SPDX-License-Identifier: BSD-3-Clause
import json
import sys
from pathlib import Path

import pytest
import synth

from gmb.engine.description import EngineDescription
from gmb.machine.identity import library_label
from gmb.report import checkreport
from gmb.results.engine_facts import engine_file, read_engine_file
from gmb.results.store import Store

HERE = Path(__file__).parent
DATA = HERE / "data"
HOST_ENGINE = DATA / "engine" / "host.json"  # the description of a host-only engine of this tree


def write_engine_file(directory: Path, library: str, description: Path = HOST_ENGINE):
    """directory/engines/<library>.json, as gmb run keeps it beside its records."""
    (directory / "engines").mkdir(exist_ok=True)
    data = engine_file(library, EngineDescription(json.loads(description.read_text())))
    (directory / "engines" / f"{library}.json").write_text(json.dumps(data))


def described(s: Store, description: Path = HOST_ENGINE) -> Store:
    """Every library of the store described by one engine description (gmb run stores each library's engine's)."""
    raw = EngineDescription(json.loads(description.read_text())).raw
    for library in s.libraries():
        s.record_engine(library, raw)
    return s


def ingest_directory(s: Store, directory: Path):
    """Every record file of a directory and its engines/*.json, as open_results reads a directory."""
    for f in sorted(directory.glob("*.jsonl")):
        s.ingest(f)
    for f in sorted(directory.glob("engines/*.json")):
        s.ingest_engine_file(f)


def make_results(tmp: Path, library_version: str, scale: float = 1.0, cuda: bool = True, name: str = "run") -> Path:
    """A directory of JSONL files as one library's launches would leave them (3 repetitions)."""
    d = tmp / name
    d.mkdir()
    sizes = synth.pow2_sizes(1, 4 << 20)
    for rep in range(3):
        rid = f"{name}-lat-{rep}"
        recs = [synth.context(rid, "latency", library_version, cuda=cuda)]
        recs += synth.pt2pt_results(rid, "latency", sizes, "host", "host", "host", scale=scale, seed=rep)
        if cuda:
            recs += synth.pt2pt_results(rid, "latency", sizes, "device", "device", "nvlink", scale=scale, seed=rep)
        synth.write_jsonl(d / f"lat-r{rep}.jsonl", recs)
        for bench in ("bw", "bibw"):
            rid = f"{name}-{bench}-{rep}"
            recs = [synth.context(rid, bench, library_version, cuda=cuda)]
            recs += synth.pt2pt_results(rid, bench, sizes, "host", "host", "host", scale=scale, seed=rep)
            if cuda:
                recs += synth.pt2pt_results(rid, bench, sizes, "device", "device", "nvlink", scale=scale, seed=rep)
                recs += synth.pt2pt_results(rid, bench, sizes, "pinned", "device", "host-device", scale=scale,
                                            seed=rep)
            synth.write_jsonl(d / f"{bench}-r{rep}.jsonl", recs)
    rid = f"{name}-peaks"
    synth.write_jsonl(d / "peaks.jsonl", [synth.context(rid, "peaks", library_version, cuda=cuda),
                                          *synth.peaks_results(rid, cuda=cuda)])
    rid = f"{name}-coll"
    synth.write_jsonl(d / "coll.jsonl", [synth.context(rid, "coll", library_version, world_size=4, cuda=cuda),
                                         *synth.coll_results(rid, ["allreduce", "bcast"], sizes[2:], 4, scale),
                                         *synth.coll_results(rid, ["allreduce"], [1 << 20], 2, scale)])
    rid = f"{name}-nbc"
    synth.write_jsonl(d / "nbc.jsonl", [synth.context(rid, "nbc", library_version, cuda=cuda),
                                        *synth.nbc_results(rid, "iallreduce", sizes[2:]),
                                        synth.unsupported(rid, "bw", "library is not CUDA-aware")])
    write_engine_file(d, library_label(synth.context(rid, "nbc", library_version, cuda=cuda)))
    return d


@pytest.fixture
def ompi_dir(tmp_path):
    return make_results(tmp_path, "Open MPI v5.0.7", 1.0, name="ompi")


@pytest.fixture
def mpich_dir(tmp_path):
    return make_results(tmp_path, "MPICH Version: 4.0.2", 1.3, name="mpich")


@pytest.fixture
def store(ompi_dir, mpich_dir):
    s = Store(":memory:")
    for d in (ompi_dir, mpich_dir):
        ingest_directory(s, d)
    return s


@pytest.fixture
def gpu_store():
    """The real records of the H200 machines (h200-x2, h200-ob1, h200-ucx), labelled by their contexts: Open MPI
    4.1.6 and 5.0.7, NCCL, with their recorded environments (NVIDIA_REQUIRE_CUDA among them)."""
    s = Store(":memory:")
    for d in ("h200-x2", "h200-ob1", "h200-ucx"):
        ingest_directory(s, DATA / d)
    return s


def check_report_in_chromium(html: str, tmp_path: Path) -> None:
    """A report's HTML opened in headless Chromium passes gmb's report check; skipped without Chromium."""
    if checkreport.find_browser() is None:
        pytest.skip("no Chromium for the report check")
    report = tmp_path / "report.html"
    report.write_text(html)
    res = checkreport.check(report)
    assert res["ok"], res["problems"]


def quick_campaign_store(directory: Path) -> Store:
    """A store as `gmb run --quick` left it, from a recorded campaign (python/tests/data/h100-quick: each launch's
    record file, and campaign.json with the launches (their repetition and the host's load where recorded), the
    skipped points and the run's meta, e.g. the settings that matter): records ingested under their launch's library
    configuration."""
    recorded = json.loads((directory / "campaign.json").read_text())
    s = Store(":memory:")
    for key, value in recorded["meta"].items():
        s.set_meta(key, value)
    for x in recorded["launches"]:
        launch = {"repetition": 1, **{k: v for k, v in x.items() if k != "raw_file"}}  # one repetition before it was kept
        s.record_launch(**launch)
        s.ingest(directory / Path(x["raw_file"]).name, library=x["library"], repetition=launch["repetition"],
                 launch_id=x["launch_id"])
    for sk in recorded["skipped"]:
        s.record_skip(sk["campaign"], sk["library"], sk["what"], sk["reason"])
    # the campaign's configurations ran engines of one tree: one description stands for each
    _, description = read_engine_file(sorted(directory.glob("engines/*.json"))[0])
    for library in s.libraries():
        s.record_engine(library, description.raw)
    return s


@pytest.fixture
def gpu_quick_store():
    """The quick campaign of a GPU node (1 x H100; lab Open MPI 5.0.7 pml ob1 and ucx, system Open MPI 4.1.6
    pml ob1 and ucx), recorded."""
    return quick_campaign_store(DATA / "h100-quick")


@pytest.fixture
def gpu_quick_mpi4_store():
    """The same quick campaign with its one-sided and partitioned blocks (1 x H100, 2026-11-25), recorded."""
    return quick_campaign_store(DATA / "h100-quick-mpi4")


@pytest.fixture
def gpu_quick_mpich_store():
    """The quick campaign with a CUDA-aware MPICH beside Open MPI (1 x H100, 2026-11-25), recorded."""
    return quick_campaign_store(DATA / "h100-quick-mpich")


@pytest.fixture
def gpu_x2_quick_mpich_store():
    """The same libraries and NCCL on two GPUs joined by NVLink (2 x H200, 2026-11-25), recorded."""
    return quick_campaign_store(DATA / "h200-x2-quick-mpich")


@pytest.fixture
def host_store(tmp_path):
    """A host-only result set (engine without CUDA, no GPU), as a CPU machine leaves it."""
    s = Store(":memory:")
    ingest_directory(s, make_results(tmp_path, "MPICH Version: 4.0.2", cuda=False, name="cpu"))
    return s


def write_fake_launcher(bindir: Path) -> Path:
    """bindir/mpirun: the fake launcher (fake_mpirun.py) as an executable."""
    bindir.mkdir(parents=True, exist_ok=True)
    launcher = bindir / "mpirun"
    launcher.write_text(f"#!{sys.executable}\n" + (HERE / "fake_mpirun.py").read_text())
    launcher.chmod(0o755)
    return launcher


def write_fake_engine(path: Path, env: str = "") -> Path:
    """An executable gmb-bench at ``path`` running the fake engine (fake_engine.py), with ``env`` ("NAME=value ...")
    set for it. The fake launcher looks for fake_engine.py in argv, hence a shim and not a copy."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{env + ' ' if env else ''}exec {sys.executable} {HERE / 'fake_engine.py'} \"$@\"\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def fake_setup(tmp_path, monkeypatch):
    """A libraries config with two fake 'libraries' (fake launcher + fake engine), isolated cache/config."""
    bindir = tmp_path / "bin"
    launcher = write_fake_launcher(bindir)
    cfg = tmp_path / "libs.toml"
    cfg.write_text(f"""
[[library]]
name = "fakempi-a"
family = "openmpi"
version = "9.9.0"
launcher = "mpirun"
launcher_path = "{launcher}"
engine = "{bindir / 'gmb-bench-a'}"

[[library]]
name = "fakempi-b"
family = "mpich"
version = "1.0"
launcher = "mpiexec"
launcher_path = "{launcher}"
engine = "{bindir / 'gmb-bench-b'}"
env = {{ FAKE_SCALE = "1.4", FAKE_LIBRARY_VERSION = "MPICH Version: 1.0" }}
""")
    for suffix in ("a", "b"):
        write_fake_engine(bindir / f"gmb-bench-{suffix}")
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[1] / "src"))
    return {"config": cfg, "tmp": tmp_path, "bindir": bindir}


@pytest.fixture(scope="session")
def engine_env(tmp_path_factory):
    """(sources copy, engine cache) for tests that build real engines; see realmpi.py."""
    import os

    from realmpi import copy_sources

    kept = os.environ.get("GMB_TEST_CACHE")
    cache = Path(kept) if kept else tmp_path_factory.mktemp("engine-cache")
    # with a kept cache the sources copy is kept too (same path: CMake builds incrementally)
    src = copy_sources(cache / "engine-src" if kept else tmp_path_factory.mktemp("engine-src"),
                       Path(os.environ["GMB_TEST_SOURCE"]) if os.environ.get("GMB_TEST_SOURCE") else None)
    return {"source": src, "cache": cache, "cuda": os.environ.get("GMB_TEST_CUDA", "OFF")}


@pytest.fixture
def real_env(engine_env, monkeypatch):
    """Point gmb at the session's source copy and engine cache."""
    monkeypatch.setenv("GMB_SOURCE", str(engine_env["source"]))
    monkeypatch.setenv("GMB_CACHE", str(engine_env["cache"]))
    monkeypatch.setenv("GMB_ENABLE_CUDA", engine_env["cuda"])
    return engine_env
