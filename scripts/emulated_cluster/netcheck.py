# SPDX-License-Identifier: BSD-3-Clause
"""netcheck: raw TCP between two emulated hosts (Python sockets): one-way latency at 8 B and stream bandwidth. The
server and the client are this script's hidden subcommands netcheck-serve and netcheck-client, run inside the hosts.

Each run's server listens on a port the kernel finds free (unless --port names one) and serves only a client that
first sends the run's token: a server left by another run, on another port or the same, never answers this run's
client. Every wait is bounded (--timeout): the server ends by itself when its client does not come, the client
when the server does not answer, and netcheck ends the server whenever the client is done or failed."""

import json
import secrets
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from emulated_cluster.core import Failed, cluster, enter_argv, host, show

SCRIPT = Path(__file__).resolve().parents[1] / "emulated-cluster"
PORT = 0  # the kernel finds a free one, each run its own
TIMEOUT = 30.0  # seconds: the longest any one step may wait (connect, a message, the server for its client)
BLOCK = 1 << 20  # the stream's write size
TOKEN_BYTES = 16


def stream_blocks(args) -> int:
    return max(1, args.stream_bytes // BLOCK)


def netcheck_serve(args):
    """Echoes the 8-byte messages of the client that sent this run's token, then swallows a stream and answers its
    byte count; a connection without the token is closed and the server waits on, until --timeout."""
    token = bytes.fromhex(args.token)
    try:
        server = socket.create_server(("0.0.0.0", args.port))
    except OSError as exc:
        print(f"cannot listen on port {args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"ready {server.getsockname()[1]}", flush=True)
    deadline = time.monotonic() + args.timeout
    while True:
        server.settimeout(max(0.001, deadline - time.monotonic()))
        try:
            conn, _ = server.accept()
        except TimeoutError:
            print(f"no client came within {args.timeout:g} s", file=sys.stderr)
            return 1
        conn.settimeout(args.timeout)
        try:
            if receive(conn, len(token)) == token:
                break
        except OSError:  # another run's client, or none: not this run's
            pass
        conn.close()
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
    """The measurement; any failure one line on stderr (exit 1)."""
    try:
        result = measure(args)
    except OSError as exc:  # unreachable, refused, timed out, reset
        print(f"{args.address} port {args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


def measure(args) -> dict:
    conn = socket.create_connection((args.address, args.port), timeout=args.timeout)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.sendall(bytes.fromhex(args.token))
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
    return {"latency_8B_us": round(latency * 1e6, 2), "stream_GBps": round(received / seconds / 1e9, 3),
            "stream_bytes": received}


def end(server: subprocess.Popen) -> str:
    """Ends the server (it ends by itself once it has answered; else it is stopped) and returns what it said."""
    try:
        _, err = server.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        server.kill()
        _, err = server.communicate()
    return (err or "").strip()


def netcheck(args):
    c = cluster()
    a, b = host(c, args.a), host(c, args.b)
    me = [sys.executable, str(SCRIPT)]
    common = ["--iterations", str(args.iterations), "--stream-bytes", str(args.stream_bytes),
              "--timeout", str(args.timeout), "--token", secrets.token_hex(TOKEN_BYTES)]
    server = subprocess.Popen(enter_argv(b) + me + ["netcheck-serve", "--port", str(args.port), *common],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, client = [], None
    try:
        ready = server.stdout.readline().split()
        if ready[:1] == ["ready"]:
            client = subprocess.run(enter_argv(a) + me + ["netcheck-client", b["address"], "--port", ready[1],
                                                          *common], capture_output=True, text=True)
    finally:
        if client is None or client.returncode != 0:  # nothing more to serve: never left behind
            server.kill()
        server_said = end(server)
    if client is None:
        raise Failed(f"netcheck: the server in {b['name']} did not start: {server_said or 'no word from it'}")
    if client.returncode != 0:
        raise Failed(f"netcheck: {a['name']} got no answer from {b['name']}: "
                     f"{client.stderr.strip() or f'exit {client.returncode}'} (the server there is stopped)")
    result = json.loads(client.stdout)
    show(f"raw TCP (Python sockets) {a['name']} -> {b['name']}: one-way latency at 8 B (median) "
         f"{result['latency_8B_us']} us, "
         f"stream {result['stream_GBps']} GB/s ({result['stream_bytes']} B in 1 MiB writes)")
    show(json.dumps(result))
    return 0
