# SPDX-License-Identifier: BSD-3-Clause
"""An application's question without an MPI library: rank profiles merged (path classes, the receiver's memory),
a profile priced from a store the fake engine measured (`gmb run --for-profile`, `gmb predict`), `gmb app`'s
interleaved runs and its verdicts, and bad input: a program that is no MPI program, a profile of other hosts, a
store without the figures needed, a figure the output lacks."""

import json
import re
import sys
from pathlib import Path

import pytest
from conftest import write_fake_engine

from gmb.app import predict
from gmb.campaign.for_profile import campaign_for
from gmb.app.profiling import merge, with_profiler
from gmb.results.profile import RANK_SCHEMA, SCHEMA
from gmb.cli import main
from gmb.machine import topology
from gmb.machine.topology import Gpu, Topology


def _rank(rank, host, rows, devices=None, world=2, hosts=None):
    return {"schema": RANK_SCHEMA, "rank": rank, "world_size": world, "host": host, "pid": 1,
            "mpi_library": "Open MPI v9.9.0", "wall_s": 2.0, "profiler_overhead_s": 0.001, "cuda_loaded": bool(devices),
            "devices": devices or {}, "hosts": hosts or [host] * world, "rows": rows}


def _row(call, peer=-1, memory="host", device=-1, size=1024, count=10, comm_size=0, comm_hosts=0, call_s=0.01):
    b = max(size, 1).bit_length() - 1 if size else -1
    return {"call": call, "peer": peer, "comm_size": comm_size, "comm_hosts": comm_hosts, "memory": memory,
            "device": device, "bin": b, "count": count, "bytes": size * count, "min_bytes": size, "max_bytes": size,
            "call_s": call_s, "wait_s": 0.0, "waited": 0}


def test_merged_rows_get_the_path_their_messages_took(tmp_path):
    """Same GPU, two GPUs over NVLink, host <-> device, host memory, and between hosts; the receiver's memory is
    read from its receive rows."""
    gpu = {"0": {"pci_bus_id": "0000:19:00.0"}}
    other = {"1": {"pci_bus_id": "0000:3B:00.0"}}
    ranks = [
        _rank(0, "a", [_row("MPI_Send", 1, "device", 0), _row("MPI_Send", 2, "device", 0),
                       _row("MPI_Isend", 1, "host", size=64), _row("MPI_Send", 3, "host", size=8)],
              gpu, world=4, hosts=["a", "a", "a", "b"]),
        _rank(1, "a", [_row("MPI_Recv", 0, "device", 1), _row("MPI_Irecv", 0, "pinned", size=64)], other, world=4,
              hosts=["a", "a", "a", "b"]),
        _rank(2, "a", [_row("MPI_Recv", 0, "device", 0)], gpu, world=4, hosts=["a", "a", "a", "b"]),
    ]
    d = tmp_path / "ranks"
    d.mkdir()
    for r in ranks:
        (d / f"rank-{r['rank']}.json").write_text(json.dumps(r))
    topo = Topology(gpus=[Gpu(0, "H200", pci_bus_id="00000000:19:00.0"), Gpu(1, "H200", pci_bus_id="00000000:3B:00.0")],
                    links={(0, 1): "NV18", (1, 0): "NV18"})
    merged = merge(d, topo)
    assert merged["schema"] == SCHEMA and merged["ranks"] == 4 and merged["missing_ranks"] == [3]
    sends = {(r["call"], r["peer"]): (r["path"], r["peer_memory"]) for r in merged["rows"] if r["rank"] == 0}
    assert sends[("MPI_Send", 1)] == ("nvlink", "device")
    assert sends[("MPI_Send", 2)] == ("same-gpu", "device")
    assert sends[("MPI_Isend", 1)] == ("host", "pinned")  # the receiver's memory, from its Irecv row
    assert sends[("MPI_Send", 3)] == (None, "host")  # rank 3 wrote no profile: its path is not known


def test_a_launcher_gets_the_profiler_as_its_own_arguments(tmp_path):
    prof = tmp_path / "libgmb-profile.so"
    cmd, env = with_profiler(["mpirun", "-np", "2", "./app"], {"LD_PRELOAD": "/x.so"}, prof, tmp_path / "r")
    assert cmd[:5] == ["mpirun", "-x", f"LD_PRELOAD={prof} /x.so", "-x", f"GMB_PROFILE_DIR={tmp_path / 'r'}"]
    assert env == {"LD_PRELOAD": "/x.so"}  # the launcher itself runs without it
    cmd, env = with_profiler(["./app"], {}, prof, tmp_path / "r")
    assert cmd == ["./app"] and env["LD_PRELOAD"] == str(prof)


def test_curves_interpolate_and_say_where_they_extrapolate():
    t = predict.Curve([(8, 1.0, 0.9, 1.1), (1024, 4.0, 3.6, 4.4)])
    assert t.per_call_us(8)[3] == "measured"
    mid = t.per_call_us(64)  # log-log between 8 and 1024 B
    assert mid[3] == "interpolated" and mid[0] == pytest.approx(2 ** (2 * 3 / 7), rel=1e-6)
    assert t.per_call_us(2)[:3] == (1.0, 0.9, 1.1) and t.per_call_us(2)[3].startswith("below")
    above = t.per_call_us(4096)
    assert above[0] == pytest.approx(16.0) and above[3].startswith("above")
    bw = predict.Curve.of_bandwidth([(1 << 20, 10.0, 9.0, 11.0)])  # GB/s: 1 MiB at 10 GB/s = 104.9 us
    us, lo, hi, _ = bw.per_call_us(1 << 20)
    assert us == pytest.approx((1 << 20) / 1e4) and lo < us < hi


def _profile(tmp_path: Path, host="node0", rows=None) -> Path:
    rows = rows or [_row("MPI_Send", 1, size=4096, count=100), _row("MPI_Isend", 1, size=32768, count=50),
                    _row("MPI_Allreduce", size=64, count=200, comm_size=2, comm_hosts=1),
                    _row("MPI_Barrier", size=0, count=3, comm_size=2, comm_hosts=1), _row("MPI_Recv", 0)]
    d = tmp_path / "ranks"
    d.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        (d / f"rank-{rank}.json").write_text(json.dumps(_rank(rank, host, [dict(r, peer=1 - rank if r["peer"] >= 0
                                                                                else -1) for r in rows])))
    merged = merge(d, Topology())
    merged.update(command=["mpirun", "app"], exit_status=0, wall_s=3.0, library="x", library_description={})
    (tmp_path / "profile.json").write_text(json.dumps(merged))
    return tmp_path


def test_a_profile_priced_from_the_campaign_it_asked_for(fake_setup, capsys, monkeypatch):
    monkeypatch.setattr(topology, "discover", lambda: Topology())
    prof = _profile(fake_setup["tmp"] / "prof")
    results = fake_setup["tmp"] / "results"
    assert main(["run", "--config", str(fake_setup["config"]), "--no-detect", "--for-profile", str(prof),
                 "--repetitions", "3", "--results", str(results), "--no-progress", "--no-report"]) == 0
    (store,) = results.iterdir()
    # latency and bw in one block; the allreduce; the barrier
    assert (store / "campaign.toml").read_text().count("[[run]]") == 3
    capsys.readouterr()
    assert main(["predict", str(prof), str(store)]) == 0
    out = capsys.readouterr().out
    # both configurations priced; the one the fake engine makes slower (FAKE_SCALE 1.4) second
    assert out.index("fakempi-a") < out.index("fakempi-b") and " 1 fakempi-a: " in out and " 2 fakempi-b: " in out
    dominant = [line for line in out.splitlines() if "most of it:" in line]
    assert len(dominant) == 2 and all("MPI_Allreduce host [64 B, 128 B)" in d and "MPI_Send host [4K, 8K)" in d
                                      and "MPI_Isend host [32K, 64K)" in d for d in dominant)
    assert "predicted fastest: fakempi-a" in out
    assert "calls gmb measures no figure for" not in out  # the barriers priced at coll barrier
    assert main(["predict", "--json", str(prof), str(store)]) == 0
    preds = json.loads(capsys.readouterr().out)
    assert [p["configuration"] for p in preds] == ["fakempi-a", "fakempi-b"]
    assert all(p["complete"] and p["low_s"] <= p["predicted_s"] <= p["high_s"] for p in preds)


def test_predict_refuses_what_it_cannot_price(fake_setup, capsys, monkeypatch):
    monkeypatch.setattr(topology, "discover", lambda: Topology())
    results = fake_setup["tmp"] / "results"
    prof = _profile(fake_setup["tmp"] / "prof")
    assert main(["run", "--config", str(fake_setup["config"]), "--no-detect", "--for-profile", str(prof),
                 "--repetitions", "2", "--results", str(results), "--no-progress", "--no-report"]) == 0
    (store,) = results.iterdir()
    capsys.readouterr()
    # a profile of other hosts
    elsewhere = _profile(fake_setup["tmp"] / "elsewhere", host="faraway")
    assert main(["predict", str(elsewhere), str(store)]) == 2
    assert "another machine's" in capsys.readouterr().err
    # a profile whose calls the store has no figure for (device memory over NVLink)
    gpu = _profile(fake_setup["tmp"] / "gpu", rows=[_row("MPI_Send", 1, "device", 0)])
    assert main(["predict", str(gpu), str(store)]) == 2
    err = capsys.readouterr().err
    assert "has none of the figures this profile needs (latency, device:device memory" in err
    assert "gmb run --for-profile" in err
    # not a profile, no store
    (fake_setup["tmp"] / "junk.json").write_text("{}")
    assert main(["predict", str(fake_setup["tmp"] / "junk.json"), str(store)]) == 2
    assert "not a gmb profile" in capsys.readouterr().err
    assert main(["predict", str(prof), str(fake_setup["tmp"] / "nowhere")]) == 2
    assert "no store there" in capsys.readouterr().err


def _app_config(tmp_path: Path) -> Path:
    """Two configurations of a fake library whose launcher runs the program once; the program prints a figure
    scaled by its configuration's APP_SCALE, and fails where APP_FAIL is set."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    launcher = bindir / "mpirun"
    launcher.write_text(f"#!{sys.executable}\nimport os, sys\nargs = sys.argv[1:]\n"
                        "while not (os.path.isfile(args[0]) and os.access(args[0], os.X_OK)): args = args[1:]\n"
                        "os.execv(args[0], args)\n")
    launcher.chmod(0o755)
    app = bindir / "app"
    app.write_text(f"#!{sys.executable}\nimport os, random, sys\n"
                   "if os.environ.get('APP_FAIL'): sys.exit(3)\n"
                   "if os.environ.get('APP_HANG'): import time; time.sleep(600)\n"
                   "print('Loop time of', float(os.environ['APP_SCALE']) * random.uniform(0.98, 1.02), 'on 2 procs')\n")
    app.chmod(0o755)
    write_fake_engine(bindir / "gmb-bench")
    (bindir / "libgmb-profile.so").write_text("")
    cfg = tmp_path / "libs.toml"
    body = ""
    for name, scale, fail in (("fast", 1.0, ""), ("slow", 2.0, ""), ("broken", 1.0, "1")):
        body += (f'[[library]]\nname = "{name}"\nfamily = "openmpi"\nversion = "9.9.0"\nlauncher = "mpirun"\n'
                 f'launcher_path = "{launcher}"\nengine = "{bindir / "gmb-bench"}"\n'
                 f'env = {{ APP_SCALE = "{scale}", APP_FAIL = "{fail}" }}\n\n')
    cfg.write_text(body)
    return cfg


def test_app_runs_each_configuration_interleaved_and_proves_only_what_its_runs_show(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    cfg = _app_config(tmp_path)
    app = tmp_path / "bin" / "app"
    argv = ["app", "--config", str(cfg), "--no-detect", "--np", "2", "--launches", "4", "--no-profile",
            "--figure", r"Loop time of ([0-9.]+)", "--results", str(tmp_path / "results"), "--", str(app)]
    assert main(argv) == 1  # the broken configuration's runs failed
    out = capsys.readouterr()
    (outdir,) = (tmp_path / "results").iterdir()
    runs = [json.loads(line) for line in (outdir / "launches.jsonl").read_text().splitlines()]
    assert len(runs) == 12 and {r["round"] for r in runs} == {1, 2, 3, 4}
    orders = [[r["configuration"] for r in runs if r["round"] == k] for k in (1, 2, 3, 4)]
    assert all(sorted(o) == ["broken", "fast", "slow"] for o in orders) and len({tuple(o) for o in orders}) > 1
    assert all(r["figure"] is None and "exit status 3" in r["reason"] for r in runs if r["configuration"] == "broken")
    summary = json.loads((outdir / "app.json").read_text())
    assert summary["ranking"] == ["fast", "slow"]
    (pair,) = summary["pairs"]
    assert pair["ahead"] == "fast" and pair["ratio"] == pytest.approx(2.0, rel=0.05) and pair["proven"]
    assert re.search(r"fast ahead of slow: [0-9.]+x \[[0-9.]+, [0-9.]+\], proven", out.out)
    assert "4 launch(es) failed" in out.out
    html = (outdir / "report.html").read_text()
    assert "<h2>Your application</h2>" in html and "fast ahead of slow" in html
    # the figure missing from the output: each run failed with the reason, nothing proven
    assert main([*argv[:argv.index("--figure") + 1], "Wall time ([0-9.]+)", *argv[argv.index("--figure") + 2:]]) == 1
    newest = max((tmp_path / "results").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    assert newest != outdir and json.loads((newest / "app.json").read_text())["pairs"] == []
    assert "not found in its output" in (newest / "launches.jsonl").read_text()


def test_bad_application_input_says_what_is_wrong_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    cfg = _app_config(tmp_path)
    results = tmp_path / "results"
    common = ["--config", str(cfg), "--no-detect", "--library", "fast", "--results", str(results)]
    # a program that is no MPI program: it runs, and no rank writes a profile
    assert main(["profile", *common, "--", "/bin/true"]) == 2
    assert "no rank wrote a profile" in capsys.readouterr().err
    assert not results.exists() or not any(results.iterdir())
    assert main(["profile", *common, "--", "/no/such/program"]) == 2
    assert "no such program" in capsys.readouterr().err
    assert main(["profile", *common]) == 2
    assert "no application to profile" in capsys.readouterr().err
    # gmb app starts the program with each configuration's launcher: a launcher given is refused
    assert main(["app", *common, "--np", "2", "--", "mpirun", "-np", "2", "app"]) == 2
    assert "give the program, not a launcher" in capsys.readouterr().err
    assert main(["app", *common, "--np", "2", "--figure", "no group", "--", "app"]) == 2
    assert "needs a group around the number" in capsys.readouterr().err
    # an engine built before the profiler: rebuild it
    (tmp_path / "bin" / "libgmb-profile.so").unlink()
    assert main(["profile", *common, "--", "/bin/true"]) == 2
    assert "has no profiler beside it" in capsys.readouterr().err


def test_the_campaign_for_a_profile_measures_each_figure_up_to_its_largest_message(tmp_path):
    prof = json.loads((_profile(tmp_path) / "profile.json").read_text())
    c = campaign_for(prof)
    blocks = {tuple(b.benchmarks): b for b in c.blocks}
    assert blocks[("latency", "bw")].sizes == "1:32768" and blocks[("latency", "bw")].path == "host"
    colls = {tuple(b.operations): b for b in c.blocks if b.benchmarks == ["coll"]}
    assert set(colls) == {("allreduce",), ("barrier",)}
    coll = colls[("allreduce",)]
    assert coll.ranks == [2] and coll.sizes == "4:64" and colls[("barrier",)].ranks == [2]
    assert c.bundle and c.repetitions == 5


def test_a_program_linked_with_another_mpi_library_is_refused_before_it_runs(tmp_path, capsys, monkeypatch):
    from gmb.app import profiling

    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    cfg = _app_config(tmp_path)
    app = tmp_path / "bin" / "elf-app"
    app.write_bytes(b"\x7fELF" + b"\0" * 60)
    app.chmod(0o755)
    monkeypatch.setattr(profiling, "_linked_mpi", lambda path: {"libmpich.so.12": "/usr/lib/libmpich.so.12"}
                        if path.name == "elf-app" else {"libmpi.so.40": "/usr/lib/libmpi.so.40"})
    results = tmp_path / "results"
    assert main(["profile", "--config", str(cfg), "--no-detect", "--library", "fast", "--results", str(results), "--",
                 str(tmp_path / "bin" / "mpirun"), "-np", "2", str(app)]) == 2
    err = capsys.readouterr().err
    assert "links libmpich.so.12, the profiler of fast libmpi.so.40" in err
    assert not results.exists() or not any(results.iterdir())
    # gmb app refuses before any run
    assert main(["app", "--config", str(cfg), "--no-detect", "--np", "2", "--results", str(results), "--no-profile",
                 "--", str(app)]) == 2
    assert "links libmpich.so.12" in capsys.readouterr().err
    assert not results.exists() or not any(results.iterdir())
    # --for-profile makes the campaign itself
    prof = _profile(tmp_path / "prof")
    assert main(["plan", "--config", str(cfg), "--no-detect", "--for-profile", str(prof), "--quick"]) == 2
    assert "--for-profile makes the campaign" in capsys.readouterr().err


def test_a_run_past_its_timeout_is_stopped_and_the_others_go_on(tmp_path, capsys, monkeypatch):
    # the limit applies to every run: long enough for the others' two Python start-ups on a busy machine
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    cfg = _app_config(tmp_path)
    cfg.write_text(cfg.read_text().replace('APP_FAIL = "1"', 'APP_FAIL = "", APP_HANG = "1"'))
    app = tmp_path / "bin" / "app"
    hosts = tmp_path / "hosts"
    hosts.write_text("h1 slots=2\nh2 slots=2\n")
    assert main(["app", "--config", str(cfg), "--no-detect", "--np", "2", "--launches", "1", "--no-profile",
                 "--timeout", "20", "--hostfile", str(hosts), "--ranks-per-node", "1", "--results",
                 str(tmp_path / "results"), "--", str(app)]) == 1
    (outdir,) = (tmp_path / "results").iterdir()
    runs = {r["configuration"]: r for r in map(json.loads, (outdir / "launches.jsonl").read_text().splitlines())}
    assert runs["broken"]["exit_status"] == 124 and "stopped after 20 s" in runs["broken"]["reason"]
    assert runs["fast"]["figure"] > 0 and runs["slow"]["figure"] > 0  # the wall time, without --figure
    # one rank on each host, as asked
    assert f"--hostfile {hosts} --map-by ppr:1:node" in (Path(runs["fast"]["directory"]) / "command.txt").read_text()


def test_where_a_prediction_missed_is_said_from_the_runs_own_profiles():
    from gmb.app.report import missed

    parts = {"priced sends": 0.9, "receives and waits": 0.05, "priced collectives": 0.05, "calls not priced": 0.0}
    assert "account for it" in missed(1.5, 1.0, parts)
    assert "98 %" not in missed(10.0, 1.0, parts) and "90 % of it in priced sends" in missed(10.0, 1.0, parts)
    assert "overlap" in missed(0.1, 1.0, parts)
    # the runs placed otherwise than the profiled one: said before anything else
    said = missed(0.1, 30.0, parts, {"host"}, {"inter-node"})
    assert "took host, the profile's inter-node" in said and "--ranks-per-node" in said
    assert missed(None, 1.0, parts) == "" and missed(1.0, None, parts) == ""


def test_a_run_monitor_counts_ranks_started_in_sessions_of_their_own_as_the_runs(tmp_path):
    """MPICH's Hydra starts the ranks under proxies of their own sessions: a process whose environment names the
    run's profile directory is the run's, not other work beside it."""
    from gmb.app.profiling import RunMonitor
    from gmb.machine.load import LaunchCpus

    proc = tmp_path / "proc"
    for pid, environ in ((101, b"GMB_PROFILE_DIR=/r/ranks\0PATH=/bin\0"), (202, b"PATH=/bin\0")):
        task = proc / str(pid) / "task" / str(pid)
        task.mkdir(parents=True)
        # state R in session 77 (not the launcher's), last on CPU 0 (the 37th field after the command's name)
        (task / "stat").write_text(f"{pid} (rank) R 1 {pid} 77 " + "0 " * 32 + "0 0 0\n")
        (proc / str(pid) / "environ").write_bytes(environ)
        (proc / str(pid) / "cmdline").write_bytes(b"rank\0")
    monitor = RunMonitor(Path("/r/ranks"), LaunchCpus(frozenset({0, 1}), 2, "test"), proc)
    monitor.session = 55  # the launcher's
    assert monitor.running_others() == 1  # 202 only
