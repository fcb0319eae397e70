# SPDX-License-Identifier: BSD-3-Clause
"""GPU links from NVML, with a stand-in pynvml: direct NVLinks name the peer, NVSwitch links do not."""
import sys
import types

from gmb.machine import topology


def fake_pynvml(remote_of, p2p_ok: bool, links: int = 18):
    """remote_of(gpu, link) -> the PCI bus id at the other end of that link."""
    m = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    m.NVMLError = NVMLError
    m.NVML_P2P_CAPS_INDEX_NVLINK = 2
    m.NVML_P2P_STATUS_OK = 0
    bus = [f"00000000:00:0{6 + i}.0" for i in range(4)]
    m.nvmlInit = m.nvmlShutdown = lambda: None
    m.nvmlDeviceGetCount = lambda: 4
    m.nvmlDeviceGetHandleByIndex = lambda i: i
    m.nvmlDeviceGetName = lambda h: "NVIDIA H200"
    m.nvmlDeviceGetUUID = lambda h: f"GPU-{h}"
    m.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=bus[h])

    def state(h, link):
        if link >= links:
            raise NVMLError("no such link")
        return 1

    m.nvmlDeviceGetNvLinkState = state
    m.nvmlDeviceGetNvLinkRemotePciInfo = lambda h, link: types.SimpleNamespace(busId=remote_of(h, link, bus))
    m.nvmlDeviceGetP2PStatus = lambda a, b, cap: 0 if p2p_ok else 1
    return m


def test_nvswitch_links_are_nvlink_between_every_pair(monkeypatch):
    # Every link ends at an NVSwitch (its own PCI id), as on 4 x H200 NV18 machines.
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(lambda h, link, bus: "00000000:ff:00.0", p2p_ok=True))
    topo = topology.discover()
    assert topo.source == "nvml"
    assert all(topo.links[(i, j)] == "NV18" for i in range(4) for j in range(4) if i != j)
    assert topo.link_class(0, 3) == "nvlink"


def test_direct_links_count_per_peer_and_no_p2p_is_pcie(monkeypatch):
    # GPU pairs (0,1) and (2,3) joined by 4 direct links each; no NVLink peer access between the pairs.
    def remote(h, link, bus):
        return bus[h ^ 1] if link < 4 else "00000000:ff:00.0"

    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(remote, p2p_ok=False, links=6))
    topo = topology.discover()
    assert topo.links[(0, 1)] == "NV4"
    assert topo.links[(0, 2)] == "PCIe"
    assert topo.link_class(0, 2) == "pcie"
