# SPDX-License-Identifier: BSD-3-Clause
"""netcheck: raw TCP between two emulated hosts (Python sockets): one-way latency at 8 B and stream bandwidth. The
server and the client are this script's hidden subcommands netcheck-serve and netcheck-client, run inside the hosts."""

import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from emulated_cluster.core import Refused, cluster, enter_argv, host

SCRIPT = Path(__file__).resolve().parents[1] / "emulated-cluster"
PORT = 7799
BLOCK = 1 << 20  # the stream's write size


def stream_blocks(args) -> int:
    return max(1, args.stream_bytes // BLOCK)


def netcheck_serve(args):
    """Echoes 8-byte messages, then swallows a stream and answers its byte count."""
    server = socket.create_server(("0.0.0.0", args.port), reuse_port=True)
    print("ready", flush=True)
    conn, _ = server.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for _ in range(args.iterations):
        conn.sendall(receive(conn, 8))
    total = 0
    while chunk := conn.recv(1 << 20):
        total += len(chunk)
        if total >= stream_blocks(args) * BLOCK:
            break
    conn.sendall(total.to_bytes(8, "little"))
    return 0


def receive(conn, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("peer closed")
        data += chunk
    return data


def netcheck_client(args):
    conn = socket.create_connection((args.address, args.port), timeout=60)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    message = b"x" * 8
    round_trips = []
    for _ in range(args.iterations):
        t0 = time.perf_counter()
        conn.sendall(message), receive(conn, 8)
        round_trips.append(time.perf_counter() - t0)
    latency = statistics.median(round_trips) / 2  # the median, as gmb-bench reports: robust to a busy machine
    block = b"y" * BLOCK
    t0 = time.perf_counter()
    for _ in range(stream_blocks(args)):
        conn.sendall(block)
    received = int.from_bytes(receive(conn, 8), "little")
    seconds = time.perf_counter() - t0
    print(json.dumps({"latency_8B_us": round(latency * 1e6, 2),
                      "stream_GBps": round(received / seconds / 1e9, 3), "stream_bytes": received}))
    return 0


def netcheck(args):
    c = cluster()
    a, b = host(c, args.a), host(c, args.b)
    me = [sys.executable, str(SCRIPT)]
    common = ["--iterations", str(args.iterations), "--stream-bytes", str(args.stream_bytes)]
    server = subprocess.Popen(enter_argv(b) + me + ["netcheck-serve", *common], stdout=subprocess.PIPE, text=True)
    try:
        if server.stdout.readline().strip() != "ready":
            raise Refused(f"netcheck: the server in {b['name']} did not start")
        p = subprocess.run(enter_argv(a) + me + ["netcheck-client", b["address"], *common],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise Refused(f"netcheck: the client in {a['name']} failed: {p.stderr.strip()}")
        result = json.loads(p.stdout)
    finally:
        server.wait(timeout=60)
    print(f"raw TCP (Python sockets) {a['name']} -> {b['name']}: one-way latency at 8 B (median) "
          f"{result['latency_8B_us']} us, "
          f"stream {result['stream_GBps']} GB/s ({result['stream_bytes']} B in 1 MiB writes)")
    print(json.dumps(result))
    return 0

