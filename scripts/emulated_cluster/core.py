# SPDX-License-Identifier: BSD-3-Clause
"""The emulated cluster's state and how to enter a host: shared by the command (scripts/emulated-cluster), its
Slurm and its netcheck."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

# absolute: the agent shim written there is handed to launchers that look it up again from another directory
STATE = Path(os.environ.get("GMB_EMULATED_CLUSTER_DIR", "/run/gmb-emulated-cluster")).absolute()
HOSTS_JSON = STATE / "hosts.json"
NAMESPACES = ("net", "uts", "mnt")
# Each host's own scratch directory (a tmpfs of its mount namespace), as a node-local disk: programs that key a
# directory of the shared /tmp by job or rank but not by host (Slurm's PMIx plugin) collide there. The directory on
# the machine is only the mount point, shared by every cluster's hosts; it is never removed: removing it detaches
# the tmpfs mounted on it in every host's mount namespace, other clusters' too.
HOST_LOCAL = Path("/run/gmb-emulated-host")


class Refused(Exception):
    """The cluster cannot be made or used here; the message says why (exit status 2)."""


class Failed(Exception):
    """What was asked of a running cluster failed; the message says what (exit status 1)."""


class Damaged(Refused):
    """The cluster's record (hosts.json) cannot be read; `stop` cleans up from what it finds instead."""


def say(message: str):
    if sys.stderr is not None:  # closed (2>&-): nothing to say it on
        print(f"emulated-cluster: {message}", file=sys.stderr)


def show(line: str = ""):
    """A line on stdout; once its reader has left (`status | head -1`), the rest is dropped quietly."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (AttributeError, ValueError):  # stdout closed (>&-)
        pass


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(argv, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise Refused(f"{shlex.join(argv)} failed ({p.returncode}): {(p.stderr or p.stdout).strip()}")
    return p


def missing_requirements(euid: int, tools=("unshare", "nsenter", "ip", "tc")) -> list[str]:
    """What this machine lacks to run the cluster (empty: nothing)."""
    missing = [] if euid == 0 else ["root (namespaces, veth pairs and the bridge need it)"]
    return missing + [f"{t} (util-linux / iproute2)" for t in tools if shutil.which(t) is None]


def require(tools=("unshare", "nsenter", "ip", "tc")):
    missing = missing_requirements(os.geteuid(), tools)
    if missing:
        raise Refused("missing: " + "; ".join(missing))


# --- state ------------------------------------------------------------------------------------------------

def load() -> dict | None:
    """The cluster recorded in the state directory, None when none is; Damaged when its record cannot be read."""
    try:
        c = json.loads(HOSTS_JSON.read_text())
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise Damaged(f"{HOSTS_JSON} cannot be read ({exc}): `stop` removes what it finds of the cluster") from None
    if not isinstance(c, dict) or not isinstance(c.get("hosts"), list) or not all(
            isinstance(h, dict) and all(isinstance(h.get(k), str) for k in ("name", "address", "veth", *NAMESPACES))
            for h in c["hosts"]) or not isinstance(c.get("bridge"), str):
        raise Damaged(f"{HOSTS_JSON} is not a cluster's record (hosts with their names, addresses, veths and "
                      "namespace files; a bridge): `stop` removes what it finds of the cluster")
    return c


def save(c: dict):
    """hosts.json, replaced whole (never a half-written record)."""
    part = HOSTS_JSON.with_name(HOSTS_JSON.name + ".part")
    part.write_text(json.dumps(c, indent=1) + "\n")
    os.replace(part, HOSTS_JSON)


def cluster() -> dict:
    c = load()
    if c is None:
        raise Refused(f"no emulated cluster runs ({HOSTS_JSON} is absent): start one with `start --hosts N`")
    return c


def host(c: dict, name: str) -> dict:
    for h in c["hosts"]:
        if name in (h["name"], h["address"]):
            return h
    raise Refused(f"no emulated host {name!r}; hosts: {', '.join(h['name'] for h in c['hosts'])}")


def is_mounted(path: Path) -> bool:
    """A namespace file is kept alive by a bind mount on it."""
    target = str(path)
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == target for line in f)


def namespace_files(h: dict) -> dict:
    return {kind: Path(h[kind]) for kind in NAMESPACES}


def alive(c: dict) -> bool:
    return all(is_mounted(p) for h in c["hosts"] for p in namespace_files(h).values())


def namespace_mounts() -> list[tuple[Path, str]]:
    """(mount point, kind) of every namespace file bound in this mount namespace: the hosts of every cluster started
    from here (kind "net", "uts", "mnt")."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            fstype = fields[fields.index("-") + 1]
            if fstype == "nsfs":
                found.append((Path(fields[4]), fields[3].partition(":")[0]))
    return found


def other_clusters() -> list[str]:
    """The other emulated clusters that run here, as "PREFIX (state STATE_DIR)": the state directories holding
    hosts' namespace files, this one's left out."""
    out = []
    for state in dict.fromkeys(path.parent for path, _ in namespace_mounts() if path.parent != STATE):
        try:
            prefix = json.loads((state / "hosts.json").read_text())["prefix"]
        except (OSError, ValueError, KeyError, TypeError):
            prefix = "prefix unknown: its hosts.json cannot be read"
        out.append(f"{prefix} (state {state})")
    return out


# --- entering a host --------------------------------------------------------------------------------------

def enter_argv(h: dict, cwd: str | None = None) -> list[str]:
    """argv prefix that runs a command in every namespace of host h. The namespace files are bind mounts in the
    mount namespace that started the cluster, invisible from inside an emulated host (a mount namespace is a copy
    made before them): from there (an agent called by a launcher inside a host), go through that one first."""
    files = namespace_files(h)
    hop = [] if all(is_mounted(p) for p in files.values()) else ["nsenter", f"--mount={starting_namespace()}", "--"]
    wd = [f"--wd={cwd}"] if cwd else []
    return hop + ["nsenter", f"--net={files['net']}", f"--uts={files['uts']}", f"--mount={files['mnt']}", *wd, "--"]


def starting_namespace() -> str:
    """/proc/PID/ns/mnt of the process that holds the mount namespace in which the cluster was started."""
    held = json.loads((STATE / "holder.json").read_text())
    path = f"/proc/{held['pid']}/ns/mnt"
    try:
        if os.stat(path).st_ino == held["mnt"]:
            return path
    except OSError:
        pass
    raise Refused(f"the process holding the cluster's first mount namespace (pid {held['pid']}) is gone: "
                  "stop and start the cluster again")


def hold_starting_namespace():
    """A sleeping process that keeps the starting mount namespace reachable by path from inside the hosts."""
    holder = subprocess.Popen(["sleep", "infinity"], start_new_session=True, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    held = {"pid": holder.pid, "mnt": os.stat("/proc/self/ns/mnt").st_ino}
    (STATE / "holder.json").write_text(json.dumps(held) + "\n")


def host_environment(c: dict, h: dict | None = None) -> dict:
    """The environment of what runs in a host: this one, the cluster's Slurm configuration, the host's own
    (its GPUs: start --gpus-per-host)."""
    env = dict(os.environ)
    env.update((h or {}).get("env") or {})
    if (STATE / "slurm" / "slurm.conf").exists():
        env["SLURM_CONF"] = str(STATE / "slurm" / "slurm.conf")
    return env


def run_in(c: dict, name: str, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(enter_argv(host(c, name), os.getcwd()) + argv, env=host_environment(c, host(c, name)),
                          **kwargs)

