#!/usr/bin/env python3
"""What `mcpeye proxy` adds to a small call over stdio: latency (p50, p99) and the proxy's CPU per
call, for the same stdio server called directly, through `mcpeye proxy --bare` (the same relay,
nothing looked at: the cost of the hop) and through `mcpeye proxy` (intent stripped, the call
recorded, the event log written and the events POSTed to a loopback ingest). The three run side
by side in one process tree, in alternating blocks, so that the machine's load falls on all alike.

    cargo build --release -p mcpeye-cli
    scripts/proxy_bench.py [--calls N] [--block N] [--mcpeye target/release/mcpeye] [--against OTHER]

The server is tests/interop/raw_echo_server.py (Python's standard library): its own time is in
every row, and the differences between rows are the proxy's. CPU is the proxy process's time on
a CPU over the measured calls, all its threads (the relay's, the flusher's and its sender's):
the sum of /proc/<pid>/task/*/schedstat (nanoseconds, read before and after each block), and as a
check the process's user + system time of /proc/<pid>/stat (10 ms ticks, dead threads included).
"""

import argparse
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(REPO, "tests", "interop", "raw_echo_server.py")
TICKS = os.sysconf("SC_CLK_TCK")


class Ingest(http.server.BaseHTTPRequestHandler):
    """A loopback ingest that accepts every payload."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def cpu_seconds(pid: int) -> float:
    """User + system time of the process (all its threads, the dead ones too), in ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def run_ns(pid: int) -> dict:
    """Each live thread's time on a CPU so far (ns), by thread id."""
    times = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                times[tid] = int(f.read().split()[0])
        except OSError:
            pass  # the thread ended meanwhile
    return times


class Peer:
    def __init__(self, name: str, argv: list[str], env: dict):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=0)
        self.out = self.proc.stdout
        self.latencies: list[int] = []
        self.cpu = 0.0
        self.cpu_ns = 0
        self.block_ns: list[float] = []  # CPU per call of each measured block
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "proxy-bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.request("tools/list", {})
        self.request("tools/list", {"cursor": "page-2"})

    def send(self, message: dict):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            answer = json.loads(self.out.readline())
            if answer.get("id") == self.next_id and "method" not in answer:
                return answer

    def block(self, calls: int, measure: bool):
        params = {"name": "echo", "arguments": {"text": "hello", "mcpeyeIntent": "the user measures the proxy"}}
        cpu_before, ns_before = cpu_seconds(self.proc.pid), run_ns(self.proc.pid)
        for _ in range(calls):
            start = time.perf_counter_ns()
            self.request("tools/call", params)
            if measure:
                self.latencies.append(time.perf_counter_ns() - start)
        if measure:
            self.cpu += cpu_seconds(self.proc.pid) - cpu_before
            ns_after = run_ns(self.proc.pid)
            # A thread born during the block counts from 0; one that died in it is missed (the
            # ticks of /proc/<pid>/stat include it).
            ns = sum(t - ns_before.get(tid, 0) for tid, t in ns_after.items())
            self.cpu_ns += ns
            self.block_ns.append(ns / calls)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def percentile(values: list[int], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] / 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000, help="measured calls per row")
    parser.add_argument("--block", type=int, default=1000, help="calls per block, rows alternating")
    parser.add_argument("--mcpeye", default=os.path.join(REPO, "target", "release", "mcpeye"))
    parser.add_argument("--against", metavar="MCPEYE", help="another build's `mcpeye proxy` as a fourth row")
    args = parser.parse_args()

    ingest = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ingest)
    threading.Thread(target=ingest.serve_forever, daemon=True).start()
    logs = tempfile.mkdtemp(prefix="proxy-bench-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPEYE_")}
    env.update({"MCPEYE_PROJECT_ID": "proxy-bench", "MCPEYE_INGEST_URL": f"http://127.0.0.1:{ingest.server_port}"})
    server = [sys.executable, SERVER]
    peers = [
        Peer("direct", server, env),
        Peer("mcpeye proxy --bare", [args.mcpeye, "proxy", "--bare", "--no-event-log", "--", *server], env),
        Peer("mcpeye proxy", [args.mcpeye, "proxy", "--event-log", logs, "--", *server], env),
    ]
    if args.against:
        argv = [args.against, "proxy", "--event-log", tempfile.mkdtemp(prefix="proxy-bench-"), "--", *server]
        peers.append(Peer(f"mcpeye proxy ({args.against})", argv, env))
    for peer in peers:
        peer.block(args.block, measure=False)  # warm-up
    for _ in range(max(1, args.calls // args.block)):
        for peer in peers:
            peer.block(args.block, measure=True)
    for peer in peers:
        peer.close()

    direct = percentile(peers[0].latencies, 50), percentile(peers[0].latencies, 99)
    bare = percentile(peers[1].latencies, 50), percentile(peers[1].latencies, 99)
    print(f"{len(peers[0].latencies)} calls per row, blocks of {args.block}, {os.cpu_count()} cores, "
          f"load {' '.join(open('/proc/loadavg').read().split()[:3])}")
    print("| path | p50 µs | p99 µs | added p50 µs | added p99 µs | proxy CPU µs/call | "
          "block median (quartiles) | (ticks) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for i, peer in enumerate(peers):
        p50, p99 = percentile(peer.latencies, 50), percentile(peer.latencies, 99)
        n = len(peer.latencies)
        q = [x / 1000 for x in statistics.quantiles(peer.block_ns, n=4)] if len(peer.block_ns) > 1 else [0, 0, 0]
        cpu = (" | | " if i == 0 else f"{peer.cpu_ns / n / 1000:.1f} | {q[1]:.1f} ({q[0]:.1f}–{q[2]:.1f}) | "
               f"{peer.cpu / n * 1e6:.1f}")
        added = "" if i == 0 else f"{p50 - direct[0]:.1f} | {p99 - direct[1]:.1f}"
        print(f"| {peer.name} | {p50:.1f} | {p99:.1f} | {added or ' | '} | {cpu} |")
    n = len(peers[2].latencies)
    blocks = max(1, args.calls // args.block)
    share = (percentile(peers[2].latencies, 50) - bare[0])
    medians = [statistics.median(p.block_ns) / 1000 for p in peers[1:3]]
    print(f"analytics' own share at p50 (proxy - bare): {share:.1f} µs; "
          f"CPU: {(peers[2].cpu_ns - peers[1].cpu_ns) / n / 1000:.1f} µs/call, "
          f"{medians[1] - medians[0]:.1f} between the block medians "
          f"(ticks: {(peers[2].cpu - peers[1].cpu) / n * 1e6:.1f}, each row within ±{blocks / TICKS / n * 1e6:.1f})")
    print(f"mean of the proxy row: {statistics.mean(peers[2].latencies) / 1000:.1f} µs")


if __name__ == "__main__":
    main()
