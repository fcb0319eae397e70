# SPDX-License-Identifier: BSD-3-Clause
"""`gmb tune`'s answer in the libraries' own form (tune/native): Open MPI's coll/tuned rules file read as Open MPI
4.1 reads it, MPICH's selection tree, UCX's and NCCL's configuration files, the versions refused, what a file cannot
hold left out and why, nothing overwritten; the algorithm knobs offered only where the library lists them; and
`gmb tune --verify` on a run of tune-native.toml (the fake engine reads no library file: the gain does not hold)."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from gmb.machine import knobs
from gmb.tune import native
from gmb.tune.native import mpich, openmpi, ucx
from gmb.tune.native.confirmed import confirmed
from gmb.tune.native.manifest import MANIFEST, read_loads
from gmb.errors import UsageError

K, M = 1024, 1 << 20
SIZES = (8, K, 64 * K, M, 16 * M)


def _race(configuration: str, operation: str, ranks: int, recommendations: list[dict], path=None) -> dict:
    """A race of a tune.json: its identity (ranks, host memory), sizes and recommendation ranges."""
    return {"configuration": configuration, "path": path or f"collective {operation}", "operation": operation,
            "sizes": list(SIZES), "higher_is_better": True, "unit": "GB/s", "metric": "busbw",
            "identity": {"point": {"ranks": ranks, "memory": json.dumps({"others": "host", "root": "host"})},
                         "settings": {}},
            "recommendation": [{"low": 8, "high": 8, "arm": "defaults", "settings": {}, "sizes": []},
                               *recommendations]}


def _rec(arm: str, low: int, high: int, gain=1.2, worse=()) -> dict:
    settings = dict(part.split("=", 1) for part in arm.split(","))
    return {"low": low, "high": high, "arm": arm, "settings": settings, "gain": gain, "gain_low": gain - 0.1,
            "gain_high": gain + 0.1, "worse_sizes": list(worse), "sizes": [{"bytes": low}]}


def _numbers_read_as_open_mpi_does(text: str) -> list[int]:
    """The numbers of a rules file as Open MPI 4.1's reader takes them (coll_base_util.c: fscanf %li, a token that is
    not one skipped, '#' to the end of its line)."""
    return [int(tok) for line in text.splitlines() for tok in line.split("#")[0].split()]


def test_the_rules_file_is_read_as_open_mpi_reads_it():
    dyn = "OMPI_MCA_coll_tuned_use_dynamic_rules=1,"
    answer = {"races": [
        _race("ompi", "allreduce", 4, [_rec(dyn + "OMPI_MCA_coll_tuned_allreduce_algorithm=ring", K, 64 * K),
                                       _rec(dyn + "OMPI_MCA_coll_tuned_allreduce_algorithm=rabenseifner", M, 16 * M)]),
        _race("ompi", "bcast", 4, [_rec(dyn + "OMPI_MCA_coll_tuned_bcast_algorithm=6", 8, 8)])]}
    numbers = openmpi.parse_numbers("mca:coll:tuned:param:coll_tuned_allreduce_algorithm:enumerator:value:4:ring\n"
                                    "mca:coll:tuned:param:coll_tuned_allreduce_algorithm:enumerator:value:6:"
                                    "rabenseifner\n")
    body, kept, left_out = openmpi.rules_file(confirmed(answer), numbers)
    assert left_out == [] and len(kept) == 3
    assert _numbers_read_as_open_mpi_does(body) == [
        2,  # collectives
        2, 3,  # allreduce: 3 communicator sizes
        0, 1, 0, 0, 0, 0,  # below 4 ranks: Open MPI's choice
        4, 5, 0, 0, 0, 0, K, 4, 0, 0, 64 * K + 1, 0, 0, 0, M, 6, 0, 0, 16 * M + 1, 0, 0, 0,
        5, 1, 0, 0, 0, 0,  # above 4 ranks: Open MPI's choice
        7, 3, 0, 1, 0, 0, 0, 0, 4, 3, 0, 0, 0, 0, 8, 6, 0, 0, 9, 0, 0, 0, 5, 1, 0, 0, 0, 0]
    assert f"\n1024 4 0 0  # {dyn}OMPI_MCA_coll_tuned_allreduce_algorithm=ring: +20.0 % [+10.0, +30.0] over 1K - " \
           "64K\n65537 0 0 0  # Open MPI's own choice\n" in body
    # an algorithm this ompi_info does not enumerate is left out, and why said
    _, kept, left_out = openmpi.rules_file(confirmed({"races": [answer["races"][0]]}), {})
    assert kept == [] and "ompi_info lists no ring for allreduce" in left_out[0]


def test_versions_whose_format_gmb_does_not_know_are_refused():
    assert openmpi.unsupported("4.1.4") is None and openmpi.unsupported("5.0.7") is None
    assert "Open MPI 6.0.0: gmb writes the coll/tuned rules file of Open MPI 4.1 and 5.0 only" in \
        openmpi.unsupported("6.0.0")
    assert openmpi.unsupported("4.10.1") and openmpi.unsupported("3.1.6")
    assert mpich.unsupported("4.0.2") is None and "MPICH 4.1.2" in mpich.unsupported("4.1.2")
    assert ucx.unsupported("1.13.1") is None and ucx.unsupported("1.19.0") is None
    assert "UCX 1.12.1" in ucx.unsupported("1.12.1") and "version unknown" in ucx.unsupported("")


# a library's own tree, as MPICH's generic JSON has it (cut short)
ALLTOALL_INTRA = {"avg_msg_size<=256": {"algorithm=MPIR_Alltoall_intra_brucks": {}},
                  "avg_msg_size=any": {"algorithm=MPIR_Alltoall_intra_scattered": {}}}
GENERIC = {"collective=alltoall": {"comm_type=intra": ALLTOALL_INTRA,
                                   "comm_type=inter": {"algorithm=MPIR_Alltoall_inter_pairwise_exchange": {}}},
           "collective=bcast": {"comm_type=intra": {"algorithm=MPIR_Bcast_intra_binomial": {}}}}


def test_the_mpich_selection_puts_the_confirmed_ranges_first_and_leaves_the_rest_to_the_library():
    answer = {"races": [_race("mpich", "alltoall", 4, [_rec("MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=pairwise", K, 64 * K)]),
                        _race("mpich", "bcast", 4, [_rec("MPIR_CVAR_BCAST_INTRA_ALGORITHM=scatter_ring_allgather,"
                                                         "MPIR_CVAR_BCAST_POSIX_INTRA_ALGORITHM=mpir", M, 16 * M)])]}
    leaves = {"algorithm=MPIR_Alltoall_intra_pairwise", "algorithm=MPIR_Bcast_intra_scatter_ring_allgather"}
    tree, kept, left_out = mpich.selection(confirmed(answer), GENERIC, leaves)
    assert left_out == [] and len(kept) == 2
    library = GENERIC["collective=alltoall"]["comm_type=intra"]
    intra = tree["collective=alltoall"]["comm_type=intra"]
    assert list(intra) == ["comm_size<=3", "comm_size<=4", "comm_size=any"]
    assert intra["comm_size<=3"] == library and intra["comm_size=any"] == library
    # alltoall's size is its total (MPICH's total_msg_size): the library's tree below and above the range
    assert intra["comm_size<=4"] == {"total_msg_size<1024": library,
                                     "total_msg_size<=65536": {"algorithm=MPIR_Alltoall_intra_pairwise": {}},
                                     "total_msg_size=any": library}
    assert tree["collective=alltoall"]["comm_type=inter"] == GENERIC["collective=alltoall"]["comm_type=inter"]
    assert "avg_msg_size<1048576" in tree["collective=bcast"]["comm_type=intra"]["comm_size<=4"]
    assert mpich.companions(kept) == {"MPIR_CVAR_BCAST_POSIX_INTRA_ALGORITHM": "mpir"}
    # the file: a C comment header (json-c reads it), never a length of whole pages (MPICH maps it as a C string)
    text = mpich.selection_text(["machine: m", "*/ closes nothing"], tree)
    assert text.startswith("/*\n * machine: m\n * * / closes nothing\n */\n{") and len(text.encode()) % 4096
    assert json.loads(text[text.index("*/\n") + 3:]) == tree
    # rank counts next to each other: each its own rules, the library's tree between and after
    two = {"races": [_race("mpich", "alltoall", n, [_rec("MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=pairwise", K, K)])
                     for n in (2, 3)]}
    tree, _, _ = mpich.selection(confirmed(two), GENERIC, leaves)
    assert list(tree["collective=alltoall"]["comm_type=intra"]) == ["comm_size<=1", "comm_size<=2", "comm_size<=3",
                                                                   "comm_size=any"]
    # a leaf the library does not name would stop it (an assertion): left out, and why said
    _, kept, left_out = mpich.selection(confirmed(answer), GENERIC, set())
    assert kept == [] and "is not a leaf this library names" in left_out[0]


def test_mpich_lists_its_algorithms_in_its_own_description():
    line = ("\tMPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=0\tSCOPE_ALL_EQ\tVariable to select allreduce algorithmauto - "
            "Internal algorithm selection (can be overridden with MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE)nb   "
            "                    - Force nonblocking algorithmsmp                      - Force smp algorithm"
            "recursive_doubling       - Force recursive doubling algorithmreduce_scatter_allgather - Force reduce "
            "scatter allgather algorithm")
    assert knobs.mpich_algorithms(line) == {"auto", "nb", "smp", "recursive_doubling", "reduce_scatter_allgather"}
    defaults, choices = knobs.parse_mpivars(line + "\n\tMPIR_CVAR_OTHER=4\tSCOPE\n")
    assert defaults == {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "0", "MPIR_CVAR_OTHER": "4"}
    assert set(choices) == {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"}
    assert knobs.mpich_algorithms("a variable with no list") == set()


def test_the_algorithm_knobs_are_offered_on_their_own_collectives_path_only():
    from gmb.campaign.spec import Block
    from gmb.tune.catalogue import path_offers
    from gmb.tune.paths import TunePath
    by_name = {k.name: k for k in knobs.OPEN_MPI_KNOBS}
    bcast = by_name["OMPI_MCA_coll_tuned_bcast_algorithm"]
    assert bcast.operations == ("bcast",) and bcast.setting("binomial") == {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_bcast_algorithm": "binomial"}
    offers = [knobs.Offer(k, "ignore", k.values) for k in knobs.OPEN_MPI_KNOBS] + \
        [knobs.Offer(knobs.Knob("UCX_X", ("1",), knobs.PATHS, "user", "x"), None, ("1",))]

    def names(op: str, only: bool) -> set[str]:
        path = TunePath(f"collective {op}", "collective", Block(["coll"], operations=[op]), algorithms_only=only)
        return {o.knob.name for o in path_offers(offers, path)}

    assert names("allreduce", False) == {"OMPI_MCA_coll_tuned_allreduce_algorithm", "UCX_X"}
    assert names("bcast", True) == {"OMPI_MCA_coll_tuned_bcast_algorithm"}
    mpir = {k.name: k for k in knobs.MPICH_KNOBS}
    assert mpir["MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"].together == (
        ("MPIR_CVAR_ALLREDUCE_POSIX_INTRA_ALGORITHM", "mpir"),)
    assert mpir["MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM"].together == ()


# ----------------------------------------------------------------------------------- write_native, as a search calls it
def _conf(tmp_path: Path, name: str, family: str, version: str, transport="mpi"):
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "ucx_info").write_text("#!/bin/sh\necho '# Version 1.13.1'\n")
    (bindir / "ucx_info").chmod(0o755)
    lib = SimpleNamespace(family=family, version=version, transport=transport, launcher_path=str(bindir / "mpirun"),
                          process_env=lambda: {"PATH": str(bindir)})
    return SimpleNamespace(name=name, library=lib)


def _store(host="node7"):
    row = {"library": "x", "json": json.dumps({"ranks": [{"rank": 0, "host": host, "mpi_library": None}]})}
    return SimpleNamespace(contexts=lambda: [{**row, "library": lib} for lib in ("ompi", "plain", "nccl", "old")])


def test_each_confirmed_setting_goes_to_the_file_of_its_layer_and_what_none_can_hold_is_said(tmp_path):
    from gmb.campaign.spec import Block
    answer = {"races": [
        _race("ompi", "host", 2, [_rec("OMPI_MCA_btl_vader_eager_limit=65536", K, M)], path="host"),
        _race("ompi", "allreduce", 4, [_rec("OMPI_MCA_coll_tuned_use_dynamic_rules=1,"
                                            "OMPI_MCA_coll_tuned_allreduce_algorithm=ring", K, M)]),
        _race("plain", "host", 2, [_rec("UCX_RNDV_THRESH=8192", K, M), _rec("UCX_TLS=sm", 8, 8, worse=[M])],
              path="host"),
        _race("nccl", "allreduce", 2, [_rec("NCCL_PROTO=LL", 8, K)]),
        _race("old", "allreduce", 4, [_rec("OMPI_MCA_coll_tuned_allreduce_algorithm=ring", K, M)])]}
    confs = {"ompi": _conf(tmp_path, "ompi", "openmpi", "4.1.4"), "plain": _conf(tmp_path, "plain", "intelmpi", "1"),
             "nccl": _conf(tmp_path, "nccl", "openmpi", "4.1.4", transport="nccl"),
             "old": _conf(tmp_path, "old", "openmpi", "3.1.6")}
    (tmp_path / "bin" / "ompi_info").write_text(
        "#!/bin/sh\necho 'mca:coll:tuned:param:coll_tuned_allreduce_algorithm:enumerator:value:4:ring'\n"
        "echo 'mca:mca:base:param:mca_base_param_files:value:/home/.openmpi/mca-params.conf,/etc/x.conf'\n")
    (tmp_path / "bin" / "ompi_info").chmod(0o755)
    races = [SimpleNamespace(block=Block(["coll"], operations=["allreduce"], options={"precision": 0.05}))] * 5
    out = tmp_path / "tune"
    out.mkdir()
    lines, errors = native.write_native(out, answer, races, confs, _store())
    assert errors == []
    rules = (out / "ompi-coll-tuned-rules.txt").read_text()
    assert rules.startswith("# Open MPI coll/tuned dynamic rules, written by gmb tune\n# machine: node7; library: "
                            "openmpi 4.1.4 (ompi)\n")
    assert "allreduce on 4 ranks, host memory, " in rules and "+20.0 % [+10.0, +30.0] over 1K - 1M" in rules
    params = (out / "ompi-mca-params.conf").read_text()
    assert "\nbtl_vader_eager_limit = 65536\n" in params and "coll_tuned" not in params
    assert (out / "plain-ucx" / "ucx.conf").read_text().endswith("\nUCX_RNDV_THRESH=8192\n")
    assert (out / "nccl-nccl.conf").read_text().endswith("\nNCCL_PROTO=LL\n")
    text = "\n".join(lines)
    assert f"ompi: Open MPI coll/tuned rules (1 confirmed): {out / 'ompi-coll-tuned-rules.txt'}; load: " \
           f"OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_dynamic_rules_filename=" in text
    assert f"OMPI_MCA_mca_base_param_files={out / 'ompi-mca-params.conf'},/home/.openmpi/mca-params.conf,/etc/x.conf" \
        in text
    assert f"UCX_CONFIG_DIR={out / 'plain-ucx'}" in text and f"NCCL_CONF_FILE={out / 'nccl-nccl.conf'}" in text
    assert "plain, host: UCX_TLS=sm: not written: proven worse at 1 size(s) of host: a file applies it at every " \
           "size" in text
    assert "old, collective allreduce: OMPI_MCA_coll_tuned_allreduce_algorithm=ring: not written: Open MPI 3.1.6: " \
           "gmb writes the coll/tuned rules file of Open MPI 4.1 and 5.0 only" in text
    assert "gmb tune --verify" in text
    loads = read_loads(out)
    assert loads[(1, K)] == loads[(0, K)] and set(loads[(1, K)]) == {
        "OMPI_MCA_coll_tuned_use_dynamic_rules", "OMPI_MCA_coll_tuned_dynamic_rules_filename",
        "OMPI_MCA_mca_base_param_files"}
    assert (2, 8) not in loads and (4, K) not in loads
    from gmb.campaign.spec import load_campaign
    campaign = load_campaign(out / "tune-native.toml")
    # each race carried: its defaults, its settings as the export line sets them, the files loaded instead
    assert [b.settings for b in campaign.blocks[:2]] == [
        [{}, {"OMPI_MCA_btl_vader_eager_limit": "65536"}, loads[(0, K)]],
        [{}, {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_allreduce_algorithm": "ring"},
         loads[(1, K)]]]
    # nothing already written is overwritten
    lines, errors = native.write_native(out, answer, races, confs, _store())
    assert errors and all("exists; not overwriting" in e for e in errors)
    assert (out / "ompi-coll-tuned-rules.txt").read_text() == rules


def test_a_damaged_manifest_is_refused(tmp_path):
    (tmp_path / MANIFEST).write_text('{"configurations": [{"load": {"1X": "y"}, "covers": []}]}')
    with pytest.raises(UsageError, match="native.json: not as gmb tune writes it"):
        read_loads(tmp_path)
    (tmp_path / MANIFEST).write_text("[]")
    with pytest.raises(UsageError, match="native.json"):
        read_loads(tmp_path)
    assert read_loads(tmp_path / "nowhere") is None


def test_verify_measures_the_files_loaded_and_says_the_gain_did_not_hold_where_nothing_reads_them(tmp_path,
                                                                                                   monkeypatch,
                                                                                                   capsys):
    """A search on the fake engine recommends a UCX knob; its ucx.conf is written, and a run of tune-native.toml
    measures the knob set in the environment and the file loaded through UCX_CONFIG_DIR, interleaved. The fake engine
    reads the environment only, never UCX's file: --verify says the gain holds with the setting and not with the file
    (exit 1), as it would for a library that ignored the file."""
    import test_tune
    from gmb.cli import main
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[1] / "src"))
    monkeypatch.setenv("GMB_NODE_LOCK_DIR", str(tmp_path / "node"))
    from gmb.machine import topology
    monkeypatch.setattr(topology, "discover", lambda: topology.Topology(gpus=[], links={}, numa_nodes={0: "0-1"}))
    cfg = test_tune._config(tmp_path, test_tune.PLAIN.replace('"fast", "slow", "same", "bad", "crash"', '"fast"'))
    (tmp_path / "bin" / "ucx_info").write_text("#!/bin/sh\necho '# Version 1.13.1'\n")
    (tmp_path / "bin" / "ucx_info").chmod(0o755)
    got = test_tune._tune(tmp_path, cfg, paths=("host",), budget=300)
    out = capsys.readouterr().out
    conf_dir = got["dir"] / "plain-ucx"
    assert (conf_dir / "ucx.conf").read_text().endswith("\nUCX_FAKE_KNOB=fast\n")
    assert f"plain: UCX configuration (1 confirmed): {conf_dir / 'ucx.conf'}; load: UCX_CONFIG_DIR={conf_dir}" in out
    assert main(["run", "--config", str(got["dir"] / "tune-libraries.toml"), "--no-detect",
                 str(got["dir"] / "tune-native.toml"), "--results", str(tmp_path / "check"), "--no-progress",
                 "--no-report"]) == 0
    capsys.readouterr()
    assert main(["tune", "--verify", str(got["dir"]), str(next((tmp_path / "check").iterdir()))]) == 1
    verified = capsys.readouterr().out
    line, files = verified.split("== the libraries' own files loaded (native.json)")
    assert "UCX_FAKE_KNOB=fast" in line and "the gain holds" in line and "does NOT" not in line
    assert f"UCX_CONFIG_DIR={conf_dir}" in files and "the gain does NOT hold" in files.split("==")[0]
