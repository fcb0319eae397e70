# SPDX-License-Identifier: BSD-3-Clause
"""A stand-in for mpirun/mpiexec: drops launcher options, runs the program once (rank 0 only). With a hostfile, the
ranks per node it is given (mpirun --map-by ppr:R:node, mpiexec -ppn R) say on how many hosts the ranks ran: the
fake engine is told (FAKE_HOSTS) unless it already is."""

import os
import sys

args = sys.argv[1:]
i = 0
while i < len(args) and "gmb-bench" not in os.path.basename(args[i]):
    i += 1
if i == len(args):
    print("fake_mpirun: no program", file=sys.stderr)
    sys.exit(2)
launcher = dict(zip(args[:i], args[1:i + 1]))
ranks = int(launcher.get("-np") or launcher.get("-n") or 1)
per_node = launcher.get("-ppn") or (launcher.get("--map-by") or "").removeprefix("ppr:").removesuffix(":node")
if args[i + 1:i + 2] in (["coll"], ["nbc"]):
    os.environ.setdefault("FAKE_WORLD_SIZE", str(ranks))
if ("--hostfile" in launcher or "-f" in launcher) and per_node.isdigit():
    os.environ.setdefault("FAKE_HOSTS", str(-(-ranks // int(per_node))))
with open(os.environ.get("FAKE_MPIRUN_LOG", os.devnull), "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\n")
os.execv(args[i], args[i:])
