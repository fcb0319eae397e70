# SPDX-License-Identifier: BSD-3-Clause
"""`gmb tune` on a real library: Debian's Open MPI with pml ob1 searched on host memory (its shared-memory BTL's
settings, as its ompi_info lists them). Whatever the machine makes of them, the answer either recommends a setting
its fresh launches confirmed or says that none was confirmed better."""

import json

from realmpi import debian_library, skip_unless_debian

from gmb.cli import main
from gmb.results.tune_answer import SEARCH_VERDICTS


@skip_unless_debian("openmpi")
def test_a_real_search_of_open_mpis_shared_memory_settings(engine_env, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GMB_SOURCE", str(engine_env["source"]))
    monkeypatch.setenv("GMB_CACHE", str(engine_env["cache"]))
    monkeypatch.setenv("GMB_ENABLE_CUDA", engine_env["cuda"])
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    lib = debian_library("openmpi")
    cfg = tmp_path / "libs.toml"
    cfg.write_text(f'[[library]]\nname = "ompi-ob1"\nprefix = "/usr"\nlauncher_path = "{lib.launcher_path}"\n'
                   'launcher_args = ["--mca", "pml", "ob1", "--mca", "btl", "vader,self"]\n')
    rc = main(["tune", "--config", str(cfg), "--no-detect", "--paths", "host", "--budget", "150", "--seed", "3",
               "--results", str(tmp_path / "results"), "--no-report"])
    out = capsys.readouterr().out
    assert rc == 0
    (outdir,) = (tmp_path / "results").iterdir()
    answer = json.loads((outdir / "tune.json").read_text())
    offers = {o["knob"]: o for o in answer["configurations"][0]["offers"]}
    single = offers["OMPI_MCA_btl_vader_single_copy_mechanism"]
    assert single["default"] and single["values"] and single["note"].startswith("listed by ompi_info")
    assert "does not run on" in offers["UCX_RNDV_SCHEME"]["refused"]  # pml ob1
    (race,) = answer["races"]
    assert {a["verdict"] for a in race["arms"][1:]} <= set(SEARCH_VERDICTS)
    assert race["arms"][1:], "the search tried no knob value"
    covered = [size for r in race["recommendation"] for size in (s["bytes"] for s in r["sizes"])]
    assert covered == race["sizes"]
    for r in race["recommendation"]:
        if r["arm"] == "defaults":
            assert "the defaults (no value tried was confirmed better" in out
            continue
        # a recommendation is confirmed on fresh launches: its gain from them, over its span
        assert r["gain"] > 1 and r["span"][0] <= r["low"] <= r["high"] <= r["span"][1]
        assert all(s["arm"][3] >= 2 and s["defaults"][3] >= 2 for s in r["sizes"])
        assert r["command"].startswith("mpiexec.openmpi --mca pml ob1") and r["arm"] in out
