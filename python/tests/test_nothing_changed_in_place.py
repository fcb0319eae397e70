# SPDX-License-Identifier: BSD-3-Clause
"""A library, a campaign and its blocks are never changed once built: each step that completes or adjusts one (the
command line's repetitions, timeout, seed, name and node count) makes a new one."""

import copy
import dataclasses

import pytest
from fake_engine import describe

from gmb.campaign.spec import Block, Campaign
from gmb.machine.mpilibs import MpiLibrary
from gmb.machine.topology import Topology
from gmb.options import SessionOptions
from gmb.run import setup


def test_a_library_cannot_be_changed_in_place():
    lib = MpiLibrary("ompi", "openmpi", "5.0.7", "/opt/ompi", "/opt/ompi/bin/mpirun", "mpirun")
    with pytest.raises(dataclasses.FrozenInstanceError):
        lib.name = "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(lib, "isolate_from", ["/elsewhere"])
    assert dataclasses.replace(lib, name="other").name == "other" and lib.name == "ompi"


def test_the_session_campaign_is_a_new_one_and_the_loaded_one_stays_as_it_was():
    loaded = Campaign("file", [Block(["latency"]), Block(["coll"], ranks=[2])], repetitions=3, timeout_s=600)
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.repetitions = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.blocks[0].ranks = [4]
    as_loaded = copy.deepcopy(loaded)
    opts = SessionOptions(campaign="c.toml", repetitions=1, timeout=30, seed=7, name="session", nodes=(2,),
                          ranks_per_node=4)
    c = setup.campaign(opts, [], {"ompi": describe()}, Topology(), loaded, host_count=2)
    assert (c.repetitions, c.timeout_s, c.seed, c.name) == (1, 30, 7, "session")
    assert [b.ranks for b in c.blocks] == [[2], [8]]  # point to point keeps its two ranks, a collective spans nodes
    assert loaded == as_loaded and loaded.seed is None and loaded.blocks[1].ranks == [2]
    # without a seed asked or written, the session draws one; the loaded campaign still has none
    assert setup.campaign(SessionOptions(), [], {"ompi": describe()}, Topology(), loaded, None).seed is not None
    assert loaded.seed is None
