# SPDX-License-Identifier: BSD-3-Clause
"""The harness without a checkout: an installed engine ($GMB_ENGINE, a gmb-bench on PATH) used for the library it
was built for and refused, with the reason, for another; no engine and no sources: the three ways named; the record
schema read from the package's data; validation asked for without jsonschema: an error, never a skip."""

import json
import os
import re
import sqlite3
import sys
import tomllib
from pathlib import Path

import pytest
import synth

import gmb
from gmb.engine import engines
from gmb.machine import identity
from gmb.results import records
from gmb.cli import main
from gmb.machine.mpilibs import MpiLibrary
from conftest import write_fake_engine, write_fake_launcher

HERE = Path(__file__).parent
PYTHON = HERE.parent

CAMPAIGN = """
[campaign]
name = "installed"
repetitions = 1
timeout_s = 20
[[run]]
benchmarks = ["latency"]
memory = ["host:host"]
sizes = "8"
options = { iters = 10 }
"""


def run_gmb(*args):
    return main([str(a) for a in args])


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Two declared libraries without an engine (fakempi-a: Open MPI 9.9.0 under ompi/, fakempi-b: MPICH 1.0 under
    mpich/), the fake engine installed as engine/gmb-bench (not on PATH yet) built against fakempi-a's libmpi, no
    engine sources (GMB_SOURCE points nowhere), and an empty working directory."""
    launcher = write_fake_launcher(tmp_path / "bin")
    for prefix, so in (("ompi", "libmpi.so.40"), ("mpich", "libmpich.so.12")):
        (tmp_path / prefix / "lib").mkdir(parents=True)
        (tmp_path / prefix / "lib" / so).write_text("")
    cfg = tmp_path / "libs.toml"
    cfg.write_text(f"""
[[library]]
name = "fakempi-a"
family = "openmpi"
version = "9.9.0"
prefix = "{tmp_path / 'ompi'}"
launcher = "mpirun"
launcher_path = "{launcher}"

[[library]]
name = "fakempi-b"
family = "mpich"
version = "1.0"
prefix = "{tmp_path / 'mpich'}"
launcher = "mpiexec"
launcher_path = "{launcher}"
""")
    engine = write_fake_engine(tmp_path / "engine" / "gmb-bench")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("FAKE_MPI_LIBRARY", str(tmp_path / "ompi" / "lib" / "libmpi.so.40"))
    monkeypatch.setenv("GMB_SOURCE", str(tmp_path / "nowhere"))
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYTHONPATH", str(PYTHON / "src"))
    monkeypatch.delenv("GMB_ENGINE", raising=False)
    monkeypatch.delenv("GMB_SCHEMA", raising=False)
    campaign = tmp_path / "c.toml"
    campaign.write_text(CAMPAIGN)
    return {"tmp": tmp_path, "config": cfg, "engine": engine, "campaign": campaign}


def _on_path(monkeypatch, directory: Path):
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")


def _results(tmp: Path) -> tuple[Path, sqlite3.Connection]:
    (outdir,) = list((tmp / "res").iterdir())
    return outdir, sqlite3.connect(outdir / "store.sqlite")


def test_campaign_runs_on_an_engine_on_path(installed, monkeypatch, capsys):
    _on_path(monkeypatch, installed["engine"].parent)
    rc = run_gmb("run", installed["campaign"], "--config", installed["config"], "--no-detect", "--library",
                 "fakempi-a", "--results", installed["tmp"] / "res", "--no-report")
    err = capsys.readouterr().err
    assert rc == 0, err
    assert f"fakempi-a: engine {installed['engine']} (found on PATH, installed, built against" in err
    outdir, db = _results(installed["tmp"])
    plan = json.loads((outdir / "plan.json").read_text())
    assert plan["engines"] == {"fakempi-a": str(installed["engine"].resolve())}
    assert {r[0] for r in db.execute("SELECT status FROM launches")} == {"ok"}
    assert db.execute("SELECT COUNT(*) FROM results WHERE library='fakempi-a' AND benchmark='latency'").fetchone()[0]
    assert not list((installed["tmp"] / "cache").glob("engines/*"))  # nothing built


def test_no_build_uses_gmb_engine(installed, monkeypatch, capsys):
    monkeypatch.setenv("GMB_ENGINE", str(installed["engine"]))
    assert run_gmb("plan", installed["campaign"], "--config", installed["config"], "--no-detect", "--library",
                   "fakempi-a") == 0
    out = capsys.readouterr()
    assert "latency" in out.out and f"fakempi-a: engine {installed['engine']} (GMB_ENGINE, installed" in out.err
    rc = run_gmb("run", installed["campaign"], "--config", installed["config"], "--no-detect", "--library",
                 "fakempi-a", "--results", installed["tmp"] / "res", "--no-report", "--no-build")
    assert rc == 0, capsys.readouterr().err
    _, db = _results(installed["tmp"])
    assert {r[0] for r in db.execute("SELECT status FROM launches")} == {"ok"}


def test_engine_of_another_library_is_refused(installed, monkeypatch, capsys):
    """The engine is built against fakempi-a's libmpi and says Open MPI 9.9.0: fakempi-b (MPICH 1.0) does not get
    it; the reason is said, and without sources fakempi-b has no engine (the three ways named)."""
    _on_path(monkeypatch, installed["engine"].parent)
    assert run_gmb("build", "--config", installed["config"], "--no-detect") == 1
    err = capsys.readouterr().err
    assert f"fakempi-a: engine {installed['engine']} (found on PATH" in err
    refusal = re.search(r"fakempi-b: no engine: none declared, no installed gmb-bench built for it \(passed over: "
                        r"(.*)\), and GMB_SOURCE=", err).group(1)
    assert refusal.startswith(f"{installed['engine']} (on PATH): not built for this library: ")
    assert f"built against {installed['tmp'] / 'ompi' / 'lib' / 'libmpi.so.40'}, not MPICH 1.0" in refusal
    assert all(w in err for w in ("set GMB_ENGINE", "on PATH", "set GMB_SOURCE"))
    assert "not using" not in err  # said once, in the error

    rc = run_gmb("run", installed["campaign"], "--config", installed["config"], "--no-detect", "--results",
                 installed["tmp"] / "res", "--no-report")
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "gmb: skipping fakempi-b: all: fakempi-b: no engine" in err
    _, db = _results(installed["tmp"])
    assert {r[0] for r in db.execute("SELECT DISTINCT library FROM launches")} == {"fakempi-a"}


def test_the_first_installed_engine_built_for_the_library_is_taken(installed, monkeypatch, capsys):
    """GMB_ENGINE comes before PATH, but one built for another library is passed over (the reason said) for the
    next: here one on PATH that says it is fakempi-b's (another version string, its library object)."""
    mpich = write_fake_engine(installed["tmp"] / "mpich-engine" / "gmb-bench",
                              env=f"FAKE_LIBRARY_VERSION='MPICH Version: 1.0' "
                                  f"FAKE_MPI_LIBRARY={installed['tmp'] / 'mpich' / 'lib' / 'libmpich.so.12'}")
    monkeypatch.setenv("GMB_ENGINE", str(installed["engine"]))
    _on_path(monkeypatch, mpich.parent)
    from gmb.machine import libraries

    libs = libraries.all_libraries(str(installed["config"]), detect_libs=False)
    chosen = engines.choose(libs, do_build=False)
    assert (chosen["fakempi-a"].how, chosen["fakempi-a"].path) == ("GMB_ENGINE", installed["engine"])
    assert (chosen["fakempi-b"].how, chosen["fakempi-b"].path) == ("PATH", mpich)
    (refused,) = chosen["fakempi-b"].refused
    assert refused.startswith(f"GMB_ENGINE={installed['engine']}: not built for this library")
    assert chosen["fakempi-a"].refused == []  # taken before the PATH one was looked at


def test_no_engine_and_no_sources(installed, monkeypatch, capsys):
    assert run_gmb("build", "--config", installed["config"], "--no-detect", "--library", "fakempi-a") == 1
    err = capsys.readouterr().err
    assert f"GMB_SOURCE={installed['tmp'] / 'nowhere'} holds no engine sources" in err
    for way in ("set GMB_ENGINE to a gmb-bench built against openmpi 9.9.0", "put such a gmb-bench on PATH",
                "set GMB_SOURCE to the engine sources"):
        assert way in err
    monkeypatch.delenv("GMB_SOURCE")
    monkeypatch.setattr(gmb.engine.sources, "repo_root", lambda: None)  # an installed harness: no checkout around it
    assert run_gmb("build", "--config", installed["config"], "--no-detect", "--library", "fakempi-a") == 1
    assert "this gmb does not run from a checkout and GMB_SOURCE is not set" in capsys.readouterr().err
    monkeypatch.setenv("GMB_ENGINE", str(installed["tmp"] / "gone" / "gmb-bench"))
    assert run_gmb("build", "--config", installed["config"], "--no-detect", "--library", "fakempi-a") == 1
    assert f"passed over: GMB_ENGINE={installed['tmp'] / 'gone' / 'gmb-bench'}: no such file" in capsys.readouterr().err


def test_an_engine_that_cannot_say_what_it_was_built_against_is_not_taken(installed, monkeypatch, capsys):
    monkeypatch.delenv("FAKE_MPI_LIBRARY")  # an engine too old to name its library object
    monkeypatch.setenv("GMB_ENGINE", str(installed["engine"]))
    assert run_gmb("build", "--config", installed["config"], "--no-detect", "--library", "fakempi-a") == 1
    assert "does not say which MPI library it was built against" in capsys.readouterr().err


def test_installed_engine_mismatch():
    lib = MpiLibrary(name="ompi", family="openmpi", version="4.1.4", prefix="/opt/ompi", launcher_path="/x/mpirun",
                     library_dirs=["/opt/ompi/lib"])
    own = {"library_version": "Open MPI v4.1.4, package: Open MPI", "library_object": {
        "loaded": "/opt/ompi/lib/libmpi.so.40", "loaded_realpath": "/opt/ompi/lib/libmpi.so.40.30.4",
        "linked": "/opt/ompi/lib/libmpi.so", "linked_realpath": "/opt/ompi/lib/libmpi.so.40.30.4"}}
    assert identity.installed_engine_mismatch(lib, own) is None
    other = json.loads(json.dumps(own).replace("/opt/ompi/", "/opt/other/"))
    assert "built against /opt/other/lib/libmpi.so.40.30.4, not Open MPI 4.1.4 from /opt/ompi" in \
        identity.installed_engine_mismatch(lib, other)
    newer = {**own, "library_version": "Open MPI v5.0.7"}  # same directory, another version says so
    assert "does not say 4.1.4" in identity.installed_engine_mismatch(lib, newer)
    assert "does not say which MPI library" in identity.installed_engine_mismatch(lib, {"library_version": "x"})
    assert "does not say which MPI library" in identity.installed_engine_mismatch(lib, None)


# ------------------------------------------------------------------------------------------------ the schema
def test_schema_is_package_data(tmp_path, monkeypatch):
    """No checkout around (another working directory, no GMB_SCHEMA): the schema comes from the package."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GMB_SCHEMA", raising=False)
    path = records.schema_path()
    assert path == Path(gmb.__file__).resolve().parent / "schema" / "record.v1.json" and path.is_file()
    assert records.load_schema()["$id"] == gmb.SCHEMA_ID
    ctx = synth.context("r", "latency", "Open MPI v5.0.7", cuda=False)
    assert not list(records.validator().iter_errors(ctx))
    # the package declares it as data (a wheel ships it)
    project = tomllib.loads((PYTHON / "pyproject.toml").read_text())
    assert "schema/*.json" in project["tool"]["setuptools"]["package-data"]["gmb"]


def test_package_schemas_are_the_repository_schemas():
    """schema/*.json at the top of the repository is the contract's source; the package ships identical copies (a
    harness installed without the checkout needs them): copy them again when this fails."""
    source = PYTHON.parent / "schema"
    shipped = Path(gmb.__file__).resolve().parent / "schema"
    names = sorted(p.name for p in source.glob("*.json"))
    assert names == ["engine.v1.json", "record.v1.json"]
    assert sorted(p.name for p in shipped.glob("*.json")) == names
    for name in names:
        assert (shipped / name).read_bytes() == (source / name).read_bytes(), \
            f"python/src/gmb/schema/{name} differs from schema/{name}: cp schema/{name} python/src/gmb/schema/"


def test_gmb_schema_overrides(tmp_path, monkeypatch):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"type": "object", "required": ["nothing-has-this"]}))
    monkeypatch.setenv("GMB_SCHEMA", str(other))
    assert records.schema_path() == other
    assert list(records.validator().iter_errors({"schema": gmb.SCHEMA_ID}))
    monkeypatch.setenv("GMB_SCHEMA", str(tmp_path / "gone.json"))
    with pytest.raises(records.RecordError, match="GMB_SCHEMA=.*gone.json: no such file"):
        records.load_schema()


def test_validate_without_jsonschema_is_an_error(tmp_path, monkeypatch, capsys):
    f = tmp_path / "r.jsonl"
    synth.write_jsonl(f, [synth.context("r", "latency", "Open MPI v5.0.7", cuda=False),
                          *synth.pt2pt_results("r", "latency", [8], "host", "host", "host")])
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # import jsonschema raises ImportError
    db = tmp_path / "s.sqlite"
    assert run_gmb("ingest", db, f, "--validate") == 2
    err = capsys.readouterr().err
    assert "gmb ingest: error: validating records needs the jsonschema package, which is not installed" in err
    assert "pip install 'jsonschema>=4'" in err
    assert not db.exists()  # nothing stored
    assert run_gmb("ingest", db, f) == 0  # not asked for: not needed


def test_every_third_party_import_is_declared():
    """What the harness imports outside the standard library is a dependency (or, for pynvml, the gpu extra)."""
    project = tomllib.loads((PYTHON / "pyproject.toml").read_text())["project"]
    declared = {re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower() for d in project["dependencies"]}
    extras = {re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower()
              for ds in project["optional-dependencies"].values() for d in ds}
    distribution = {"pynvml": "nvidia-ml-py"}
    imported = set()
    for src in (PYTHON / "src" / "gmb").rglob("*.py"):
        imported |= set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", src.read_text(), re.M))
    third_party = {m for m in imported if m not in sys.stdlib_module_names and m not in ("gmb", "__future__")}
    assert third_party == {"matplotlib", "numpy", "jsonschema", "pynvml"}
    for module in third_party:
        name = distribution.get(module, module)
        assert name in (extras if module == "pynvml" else declared), module
    floors = dict(re.match(r"([A-Za-z0-9_.-]+)>=(\S+)", d).groups() for d in project["dependencies"])
    assert floors == {"matplotlib": "3.8.4", "numpy": "1.24", "jsonschema": "4"}
