"""Total CPU per call of the Python SDK 0.1.5 with flushing, like benches/cpu.rs: process CPU
time (all threads: the calling one and the SDK's flush thread) divided by the calls, with every
event delivered to the loopback receiver (a separate process), next to the same calls of the
bare handler.

    python bench_cpu.py [--n 8000] [--paced 5000] [--rate 10000] [--rounds 3]

The wrapped handler is called back to back (and paced at --rate calls/s, sleeping between
calls), then the buffer is flushed until empty: the CPU until then is counted. SDK defaults
(flush_at=20, flush_interval_s=5.0). Reported: median over the rounds of the added CPU per call
(process_time of the wrapped run minus that of the bare run), its range, and the rate achieved
when paced (Python cannot keep up with a high rate: its calls then run back to back).

--n stays below the SDK's buffer cap (10 000 events): back to back, its calls outrun its flush
thread, and past the cap it drops the oldest events, which this bench refuses (every event must
be delivered).
"""
import argparse, asyncio, json, statistics, time
import mcpeye
from common import ARGS, INTENT, RESULT, start_receiver


async def bare(arguments):
    return RESULT


async def calls(fn, args, n, gap):
    start = time.perf_counter()
    for i in range(n):
        if gap:
            due = start + i * gap
            now = time.perf_counter()
            if due > now:
                time.sleep(due - now)
        await fn(args)
    return n / (time.perf_counter() - start)


def measure(fn, args, n, gap, buf=None):
    c0 = time.process_time()
    rate = asyncio.run(calls(fn, args, n, gap))
    if buf is not None:
        while True:
            buf.flush()
            with buf._lock:
                if not buf._events:
                    break
    return (time.process_time() - c0) / n * 1e9, rate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=8_000)
    ap.add_argument("--paced", type=int, default=5_000)
    ap.add_argument("--rate", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    args = dict(ARGS, mcpeyeIntent=INTENT)
    proc, url = start_receiver()
    out = {"n_calls": a.n, "n_paced": a.paced, "rate_per_s": a.rate, "rounds": a.rounds}
    try:
        errors, shipped = [], [0]
        w = mcpeye.wrap_tool(bare, project_id="bench-cpu", tool_name="search_invoices", ingest_url=url,
                             on_error=errors.append)
        buf = w._mcpeye_buffer
        log_accepted = buf._log_accepted

        def count(resp, n):
            shipped[0] += n
            log_accepted(resp, n)

        buf._log_accepted = count
        asyncio.run(calls(w, args, 2000, None))  # warm-up: the httpx client and its connection
        buf.flush()
        for mode, n, gap in (("back_to_back", a.n, None), ("paced", a.paced, 1.0 / a.rate)):
            added, rates = [], []
            for _ in range(a.rounds):
                bare_ns, _ = measure(bare, args, n, gap)
                before = shipped[0]
                wrapped_ns, rate = measure(w, args, n, gap, buf)
                assert shipped[0] - before == n, "not every event was delivered: %r" % errors[-1:]
                added.append(wrapped_ns - bare_ns)
                rates.append(rate)
            out[mode] = {"added_cpu_ns": round(statistics.median(added)), "added_cpu_min_ns": round(min(added)),
                         "added_cpu_max_ns": round(max(added)), "achieved_rate_per_s": round(statistics.median(rates))}
        buf.close()
        out["errors"] = [repr(e) for e in errors]
    finally:
        proc.terminate()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
