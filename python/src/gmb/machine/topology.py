# SPDX-License-Identifier: BSD-3-Clause
"""What the machine looks like: GPUs and their link matrix, NUMA nodes, and the path classes present.

GPU discovery: NVML through nvidia-ml-py when importable, else ``nvidia-smi topo -m`` parsed, else no GPU.
Path classes (what an MPI result is classified by): same-gpu, nvlink, pcie, host-device, host,
cross-socket, inter-node.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Gpu:
    index: int
    name: str
    uuid: str = ""
    pci_bus_id: str = ""
    numa_node: int | None = None


@dataclass
class Topology:
    gpus: list[Gpu] = field(default_factory=list)
    links: dict[tuple[int, int], str] = field(default_factory=dict)  # (i, j) -> "NV18" / "PIX" / "SYS" ...
    numa_nodes: dict[int, str] = field(default_factory=dict)  # node -> cpulist
    source: str = "none"
    notes: list[str] = field(default_factory=list)

    def link_class(self, i: int, j: int) -> str:
        if i == j:
            return "same-gpu"
        link = self.links.get((i, j), "")
        return "nvlink" if link.startswith("NV") else "pcie"

    def gpu_pairs_by_class(self) -> dict[str, tuple[int, int]]:
        """One representative GPU pair per link class (first found)."""
        out: dict[str, tuple[int, int]] = {}
        for i in range(len(self.gpus)):
            for j in range(i + 1, len(self.gpus)):
                out.setdefault(self.link_class(i, j), (i, j))
        return out

    def path_classes(self, hosts: int = 1) -> list[str]:
        classes = ["host"]
        if len(self.numa_nodes) > 1:
            classes.append("cross-socket")
        if self.gpus:
            classes += ["host-device", "same-gpu"]
            classes += sorted(self.gpu_pairs_by_class())
        if hosts > 1:
            classes.append("inter-node")
        return classes

    def summary(self) -> str:
        g = ", ".join(f"{x.index}:{x.name}" for x in self.gpus) or "no GPU"
        links = " ".join(f"{i}-{j}:{v}" for (i, j), v in sorted(self.links.items()) if i < j)
        return f"GPUs [{g}] links [{links or '-'}] NUMA nodes {len(self.numa_nodes)} (source {self.source})"


def from_json(text: str) -> Topology:
    """A topology written as `gmb doctor --json` prints it (its "topology" object, or the whole report):
    {"gpus": [{"index": 0, "name": "H200"}, ...], "links": {"0-1": "NV18", ...}, "numa_nodes": {"0": "0-63"}}.
    Used to plan for another machine (``gmb plan --topology FILE``). ValueError saying what is accepted for anything
    else."""
    data = json.loads(text)
    data = data.get("topology", data) if isinstance(data, dict) else data
    try:
        if not isinstance(data, dict) or not all(isinstance(data.get(k, {}), dict) for k in ("links", "numa_nodes")):
            raise TypeError
        gpus = [Gpu(int(g["index"]), str(g.get("name", "GPU")), str(g.get("uuid", "")), str(g.get("pci_bus_id", "")),
                    g.get("numa_node")) for g in data.get("gpus", [])]
        links = {}
        for key, v in data.get("links", {}).items():
            i, _, j = key.partition("-")
            links[(int(i), int(j))] = str(v)
            links.setdefault((int(j), int(i)), str(v))
        numa = {int(k): str(v) for k, v in data.get("numa_nodes", {"0": ""}).items()}
    except (TypeError, KeyError, ValueError, AttributeError):
        raise ValueError("expected a JSON object with 'gpus' (a list of {\"index\": N, \"name\": ...}), 'links' "
                         "({\"0-1\": \"NV18\", ...}) and 'numa_nodes' ({\"0\": \"0-63\"}), as `gmb doctor --json` "
                         "prints its topology") from None
    return Topology(gpus=gpus, links=links, numa_nodes=numa, source="file")


def numa_nodes(root: str = "/sys/devices/system/node") -> dict[int, str]:
    out = {}
    for d in sorted(Path(root).glob("node[0-9]*")):
        try:
            out[int(d.name[4:])] = (d / "cpulist").read_text().strip()
        except (OSError, ValueError):
            continue
    return out


def parse_nvidia_smi_topo(text: str) -> tuple[int, dict[tuple[int, int], str], dict[int, int | None]]:
    """Parse ``nvidia-smi topo -m``: returns (gpu count, link matrix, gpu -> NUMA affinity)."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    header = None
    for ln in lines:
        if re.match(r"^\s+GPU0\b", ln) or re.match(r"^\s*GPU0\s", ln) and "GPU1" in ln:
            header = ln.split()
            break
    if header is None:
        return 0, {}, {}
    gpu_cols = [h for h in header if re.fullmatch(r"GPU\d+", h)]
    numa_col = header.index("NUMA") if "NUMA" in header else None  # "NUMA Affinity" splits in two words
    links, numa = {}, {}
    for ln in lines:
        parts = ln.split()
        if not parts or not re.fullmatch(r"GPU\d+", parts[0]):
            continue
        i = int(parts[0][3:])
        cells = parts[1:1 + len(gpu_cols)]
        for col, cell in zip(gpu_cols, cells):
            j = int(col[3:])
            links[(i, j)] = "X" if i == j else cell
        if numa_col is not None:
            # columns after the GPU ones: [NIC...] CPU Affinity, NUMA Affinity, GPU NUMA ID
            rest = parts[1 + len(gpu_cols):]
            nums = [x for x in rest if re.fullmatch(r"\d+|N/A", x)]
            numa[i] = int(nums[0]) if nums and nums[0].isdigit() else None
    return len(gpu_cols), links, numa


def discover() -> Topology:
    topo = Topology(numa_nodes=numa_nodes())
    try:
        import pynvml  # nvidia-ml-py

        pynvml.nvmlInit()
        n = pynvml.nvmlDeviceGetCount()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(n)]
        for i, h in enumerate(handles):
            name = pynvml.nvmlDeviceGetName(h)
            topo.gpus.append(Gpu(i, name.decode() if isinstance(name, bytes) else name,
                                 _s(pynvml.nvmlDeviceGetUUID(h)), _s(pynvml.nvmlDeviceGetPciInfo(h).busId)))
        active = [_active_nvlinks(pynvml, h) for h in handles]
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                nv = 0
                for link in active[i]:
                    try:
                        remote = _s(pynvml.nvmlDeviceGetNvLinkRemotePciInfo(handles[i], link).busId)
                        if remote.lower() == topo.gpus[j].pci_bus_id.lower():
                            nv += 1
                    except pynvml.NVMLError:
                        break
                if not nv and active[i] and _nvlink_p2p(pynvml, handles[i], handles[j]):
                    # Through NVSwitch: links end at the switch, not the peer, and every one reaches every GPU.
                    nv = len(active[i])
                topo.links[(i, j)] = f"NV{nv}" if nv else "PCIe"
        topo.source = "nvml"
        pynvml.nvmlShutdown()
        return topo
    except ImportError:
        nvml_not_used = "pynvml not installed (pip install nvidia-ml-py)"
    except Exception as exc:  # NVMLError (no driver)
        nvml_not_used = f"NVML not usable: {exc}"
    smi = shutil.which("nvidia-smi")
    topo.notes.append(nvml_not_used + ("" if smi else "; no nvidia-smi either: no GPU seen"))
    if smi:
        try:
            out = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=30).stdout
            names = subprocess.run(["nvidia-smi", "--query-gpu=index,name,uuid,pci.bus_id", "--format=csv,noheader"],
                                   capture_output=True, text=True, timeout=30).stdout
            n, links, numa = parse_nvidia_smi_topo(out)
            for ln in names.splitlines():
                f = [x.strip() for x in ln.split(",")]
                if len(f) >= 4 and f[0].isdigit():
                    topo.gpus.append(Gpu(int(f[0]), f[1], f[2], f[3], numa.get(int(f[0]))))
            topo.links = links
            topo.source = "nvidia-smi"
        except (OSError, subprocess.TimeoutExpired) as exc:
            topo.notes.append(f"nvidia-smi failed: {exc}")
    return topo


def _active_nvlinks(pynvml, handle) -> list[int]:
    """The NVLinks of a GPU that are up (the first link NVML does not know ends the list)."""
    up = []
    for link in range(18):
        try:
            if pynvml.nvmlDeviceGetNvLinkState(handle, link):
                up.append(link)
        except pynvml.NVMLError:
            break
    return up


def _nvlink_p2p(pynvml, a, b) -> bool:
    """Whether the driver reports NVLink peer access from a to b (true through an NVSwitch too)."""
    try:
        return pynvml.nvmlDeviceGetP2PStatus(a, b, pynvml.NVML_P2P_CAPS_INDEX_NVLINK) == pynvml.NVML_P2P_STATUS_OK
    except pynvml.NVMLError:
        return False


def _s(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


# Whether CUDA programs can run here, asked the way they ask it: load the driver's libcuda.so.1 and call cuInit(0).
# libcuda.so.1 comes with the NVIDIA driver, not with the CUDA toolkit (nvcc alone compiles code that cannot run;
# the toolkit's stubs/libcuda.so is not libcuda.so.1). Weaker tests were passed over: /proc/driver/nvidia shows a
# host's kernel module in a container that lacks the user-space driver, nvidia-smi may be missing where the driver
# works (or present where it fails), NVML is another library. cuInit runs in a child process: it starts driver
# threads in whoever calls it, and a driver in a bad state can hang (the child is given a time limit).
_CUINIT = r"""
import ctypes, sys
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as exc:
    print(exc)  # "libcuda.so.1: cannot open shared object file: ..."
    sys.exit(3)
rc = cuda.cuInit(0)
name = ctypes.c_char_p()
if rc and cuda.cuGetErrorName(rc, ctypes.byref(name)) == 0 and name.value:
    print(f"cuInit failed: {name.value.decode()} ({rc})")
sys.exit(0 if rc == 0 else 4)
"""


@functools.lru_cache(maxsize=1)
def nvidia_driver() -> tuple[bool, str]:
    """(usable, why not): whether an NVIDIA driver that can run CUDA programs (and a GPU) is present. Asked once per
    process."""
    try:
        p = subprocess.run([sys.executable, "-c", _CUINIT], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return False, "cuInit did not answer within 30 s"
    except OSError as exc:
        return False, f"cannot ask: {exc}"
    return p.returncode == 0, (p.stdout.strip().splitlines() or [f"exit {p.returncode}"])[-1]


def cuda_compiler() -> str | None:
    """A CUDA compiler CMake may find (where the engine build's AUTO would enable CUDA), or None. Errs towards
    finding one: $CUDACXX, nvcc on PATH, $CUDA_PATH/bin, /usr/local/cuda/bin."""
    for c in (os.environ.get("CUDACXX"), shutil.which("nvcc"),
              os.path.join(os.environ["CUDA_PATH"], "bin", "nvcc") if os.environ.get("CUDA_PATH") else None,
              "/usr/local/cuda/bin/nvcc"):
        if c and os.access(c, os.X_OK):
            return c
    return None


_said_no_driver = False


def engine_cuda(asked: str | None, cmake_args=(), quiet: bool = False) -> str | None:
    """The CUDA setting engine builds are given (build.build's ``cuda``). Asked (``--cuda``, or ``--cmake-arg
    -DGMB_ENABLE_CUDA=...`` which CMake takes last): as asked. $GMB_ENABLE_CUDA set: None (build.build reads and
    checks it). Nothing asked: None (CMake's AUTO; any cached engine will do) where no CUDA compiler is found; "AUTO"
    where an NVIDIA driver can run CUDA programs (a cached engine built with CUDA OFF, e.g. from a login node sharing
    the cache, is rebuilt: build_cache.needs_build takes one built ON or AUTO); a CUDA
    compiler but no usable driver: "OFF", said once (unless ``quiet``), since a CUDA engine takes minutes longer to
    build and can run no device benchmark here. "OFF" is what the build stamp records, so the cache never takes an
    engine built with CUDA for one without: one cached with CUDA on this machine before is rebuilt once without it.
    ``--cuda ON`` (or AUTO) builds it anyway."""
    global _said_no_driver
    if asked is not None or "GMB_ENABLE_CUDA" in os.environ or \
            any(str(a).startswith("-DGMB_ENABLE_CUDA") for a in cmake_args or ()) or cuda_compiler() is None:
        return asked
    usable, why = nvidia_driver()
    if usable:  # AUTO builds with CUDA here; a cached engine built without it (OFF, e.g. on a login node) is not taken
        return "AUTO"
    if not quiet and not _said_no_driver:
        _said_no_driver = True
        print(f"gmb: no NVIDIA driver ({why}): engines built without CUDA; --cuda ON to build it anyway",
              file=sys.stderr)
    return "OFF"
