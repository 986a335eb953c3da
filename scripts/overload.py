#!/usr/bin/env python3
"""Overload run of the sidecar (scripts/overload.sh builds the binaries and calls this).

Two phases, each against a fresh sidecar in front of an independent upstream started here:

  bounded    10x the sidecar's capacity for 60 s with a bounded admission queue. Every second:
             the sidecar's RSS (/proc/PID/status VmRSS), a scrape of /metrics and a /readyz on
             the admin port (each must answer within 1 s). The upstream counts requests in
             flight itself, so the limit is checked where it matters, not by the sidecar's
             own gauge.
  unbounded  the incident's setting (no queue bound, no queue timeout), overloaded until the
             queue holds thousands of requests: RSS against queue depth, and the growth per
             queued request as the least-squares slope of RSS over depth.

Every loop is bounded in count and time; every process started here is stopped at the end.
Traffic is on 127.0.0.1 only. Writes the figures as Markdown to the path given with --out.
"""

import argparse
import asyncio
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request


class Upstream:
    """HTTP/1.1 keep-alive server: answers every request after `delay` s with a small body,
    counting requests in flight (current and highest) and requests served."""

    def __init__(self, delay):
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0
        self.served = 0
        self.server = None

    async def start(self):
        self.server = await asyncio.start_server(self.connection, "127.0.0.1", 0, backlog=4096)
        return self.server.sockets[0].getsockname()[1]

    async def connection(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if length:
                    await reader.readexactly(length)
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    await asyncio.sleep(self.delay)
                finally:
                    self.in_flight -= 1
                self.served += 1
                body = b"ok\n"
                writer.write(
                    b"HTTP/1.1 200 OK\r\nx-pod: upstream\r\ncontent-length: %d\r\n\r\n%s"
                    % (len(body), body)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError,
                asyncio.CancelledError):
            pass
        finally:
            writer.close()


def start_listening(cmd, env=None):
    """Starts `cmd`, reads its `listening key=addr ...` line, returns (process, {key: port})."""
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True
    )
    line = proc.stdout.readline()
    if not line.startswith("listening "):
        proc.kill()
        raise SystemExit(f"{cmd[0]} printed {line!r}, not its listening line")
    ports = {k: int(v.rsplit(":", 1)[1]) for k, v in (f.split("=", 1) for f in line.split()[1:])}
    return proc, ports


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def timed_get(url, limit=1.0):
    """(status or None, seconds) of one GET, at most `limit` s."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=limit) as r:
            body = r.read().decode()
            return r.status, time.monotonic() - started, body
    except urllib.error.HTTPError as e:
        return e.code, time.monotonic() - started, ""
    except Exception:
        return None, time.monotonic() - started, ""


def metric(text, name):
    m = re.search(r"^" + re.escape(name) + r" ([0-9.e+-]+)$", text, re.M)
    return float(m.group(1)) if m else None


def start_sidecar(bins, upstream_port, max_concurrency, queue_size, queue_timeout):
    cmd = [
        os.path.join(bins, "sidecar"),
        "--listen", "127.0.0.1:0",
        "--admin-listen", "127.0.0.1:0",
        "--upstream", f"http://127.0.0.1:{upstream_port}",
        "--max-concurrency", str(max_concurrency),
        "--queue-size", str(queue_size),
        "--queue-timeout", queue_timeout,
        "--upstream-timeout", "0",
    ]
    env = dict(os.environ, RUST_LOG="error", POD_NAME="overload", NODE_NAME="n", ZONE="z")
    return start_listening(cmd, env)


def start_loadgen(bins, port, rate, duration, extra):
    cmd = [
        os.path.join(bins, "loadgen"), "run",
        "--url", f"http://127.0.0.1:{port}/flags/overload",
        "--rate", str(rate), "--duration", f"{duration}s",
        "--output", "json",
    ] + extra
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def stop(proc, grace=10):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


async def sample_loop(sidecar, admin_port, upstream, seconds, stop_early=None):
    """Samples once a second for `seconds` s (or until `stop_early()`)."""
    rows = []
    loop = asyncio.get_running_loop()
    for second in range(seconds):
        tick = time.monotonic()
        rss = rss_kib(sidecar.pid)
        m_status, m_took, text = await loop.run_in_executor(
            None, timed_get, f"http://127.0.0.1:{admin_port}/metrics")
        r_status, r_took, _ = await loop.run_in_executor(
            None, timed_get, f"http://127.0.0.1:{admin_port}/readyz")
        rows.append({
            "t": second,
            "rss_kib": rss,
            "metrics_status": m_status,
            "metrics_s": m_took,
            "readyz_status": r_status,
            "readyz_s": r_took,
            "in_flight": metric(text, "sidecar_in_flight"),
            "queue_depth": metric(text, "sidecar_queue_depth"),
            "received": metric(text, "sidecar_received_total"),
            "upstream_in_flight": upstream.in_flight,
            "upstream_max": upstream.max_in_flight,
        })
        if stop_early and stop_early(rows[-1]):
            break
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
    return rows


async def bounded(args, out):
    upstream = Upstream(args.service_ms / 1000)
    port = await upstream.start()
    capacity = args.max_concurrency / (args.service_ms / 1000)
    rate = int(capacity * 10)
    sidecar, ports = start_sidecar(args.bins, port, args.max_concurrency, args.queue_size, "500ms")
    gen = start_loadgen(args.bins, ports["http"], rate, args.seconds,
                        ["--connections", "256", "--timeout", "5s"])
    try:
        rows = await sample_loop(sidecar, ports["admin"], upstream, args.seconds + 2)
        report, _ = await asyncio.get_running_loop().run_in_executor(None, gen.communicate, None, 60)
    finally:
        stop(gen)
    _, _, text = timed_get(f"http://127.0.0.1:{ports['admin']}/metrics")
    stop(sidecar)
    upstream.server.close()
    report = json.loads(report) if report else {}
    rss = [r["rss_kib"] for r in rows if r["rss_kib"]]
    warm = rss[5:] or rss
    answered = [r for r in rows if r["metrics_status"] == 200 and r["readyz_status"] in (200, 503)]
    rejected = {k: metric(text, f'sidecar_rejected_total{{reason="{k}"}}')
                for k in ("queue_full", "queue_timeout")}
    figures = {
        "capacity_rps": capacity,
        "offered_rps": rate,
        "seconds": args.seconds,
        "rss_mib_min": min(warm) / 1024,
        "rss_mib_max": max(rss) / 1024,
        "rss_mib_first": rss[0] / 1024,
        "rss_mib_last": rss[-1] / 1024,
        "upstream_max_in_flight": upstream.max_in_flight,
        "limit": args.max_concurrency,
        "samples": len(rows),
        "samples_answered": len(answered),
        "metrics_max_s": max(r["metrics_s"] for r in rows),
        "readyz_max_s": max(r["readyz_s"] for r in rows),
        "readyz_503": sum(1 for r in rows if r["readyz_status"] == 503),
        "max_queue_depth": max((r["queue_depth"] or 0) for r in rows),
        "received": metric(text, "sidecar_received_total"),
        "admitted": metric(text, "sidecar_admitted_total"),
        "rejected": rejected,
        "upstream_served": upstream.served,
        "loadgen_attempted": report.get("attempted"),
        "loadgen_responses": report.get("responses"),
        "loadgen_transport_errors": report.get("transport_errors"),
        "loadgen_dropped": report.get("dropped"),
    }
    out["bounded"] = {"figures": figures, "rows": rows}
    return figures


async def unbounded(args, out):
    upstream = Upstream(args.service_ms / 1000)
    port = await upstream.start()
    capacity = args.max_concurrency / (args.service_ms / 1000)
    rate = int(capacity * 5)
    sidecar, ports = start_sidecar(args.bins, port, args.max_concurrency, 0, "0")
    # One connection per request, never timing out before the phase ends: every request that
    # cannot get a slot waits in the sidecar's queue, as in the incident.
    gen = start_loadgen(args.bins, ports["http"], rate, args.unbounded_seconds, [
        "--connection-model", "per-request", "--connections", str(args.max_queued),
        "--max-in-flight", str(args.max_queued), "--timeout", "600s"])
    try:
        baseline = rss_kib(sidecar.pid)
        rows = await sample_loop(
            sidecar, ports["admin"], upstream, args.unbounded_seconds,
            stop_early=lambda r: (r["queue_depth"] or 0) >= args.max_queued * 0.9)
    finally:
        stop(gen, grace=1)
        stop(sidecar, grace=1)
        upstream.server.close()
    points = [(r["queue_depth"], r["rss_kib"] * 1024) for r in rows
              if r["queue_depth"] is not None and r["rss_kib"]]
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    slope = sum((p[0] - mx) * (p[1] - my) for p in points) / sxx if sxx else float("nan")
    figures = {
        "capacity_rps": capacity,
        "offered_rps": rate,
        "seconds": len(rows),
        "baseline_rss_mib": baseline / 1024,
        "final_queue_depth": points[-1][0],
        "final_rss_mib": points[-1][1] / 2**20,
        "bytes_per_queued_request": slope,
        "upstream_max_in_flight": upstream.max_in_flight,
        "metrics_max_s": max(r["metrics_s"] for r in rows),
    }
    out["unbounded"] = {"figures": figures, "rows": rows}
    return figures


def counts(d):
    """`{"200": 3, "503": 0}` as `200: 3, 503: 0` (zeros left out; `none` when nothing)."""
    items = [f"{k}: {v}" for k, v in sorted((d or {}).items()) if v]
    return ", ".join(items) or "none"


def markdown(b, u, args):
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rej = b["rejected"]
    lines = [
        f"# Sidecar overload run, {date}",
        "",
        "`scripts/overload.sh` (helper `scripts/overload.py`), debug builds of `sidecar` and `loadgen`,",
        f"{os.cpu_count()} CPUs shared with other work. Upstream: a separate Python server that answers",
        f"every request after {args.service_ms} ms and counts its own requests in flight. Sidecar",
        f"`--max-concurrency {args.max_concurrency}`: capacity {b['capacity_rps']:.0f} requests/s.",
        "",
        f"## Bounded queue: 10x overload for {b['seconds']} s",
        "",
        f"`--queue-size {args.queue_size} --queue-timeout 500ms`, loadgen open loop at "
        f"{b['offered_rps']} requests/s, 256 keep-alive connections, 5 s timeout.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| sidecar RSS, after the first 5 s (min – max) | {b['rss_mib_min']:.1f} – {b['rss_mib_max']:.1f} MiB (first sample {b['rss_mib_first']:.1f}, last {b['rss_mib_last']:.1f}) |",
        f"| most requests in flight at the upstream (its own count) | {b['upstream_max_in_flight']} (limit {b['limit']}) |",
        f"| once-a-second samples where /metrics answered 200 and /readyz answered | {b['samples_answered']} of {b['samples']} |",
        f"| slowest /metrics, slowest /readyz | {b['metrics_max_s']*1000:.0f} ms, {b['readyz_max_s']*1000:.0f} ms |",
        f"| highest queue depth sampled | {b['max_queue_depth']:.0f} (bound {args.queue_size}) |",
        f"| sidecar: received = admitted + rejected | {b['received']:.0f} = {b['admitted']:.0f} + {rej['queue_full']:.0f} queue_full + {rej['queue_timeout']:.0f} queue_timeout |",
        f"| upstream served | {b['upstream_served']} |",
        f"| loadgen: attempted; responses by status; transport errors; dropped | {b['loadgen_attempted']}; {counts(b['loadgen_responses'])}; {counts(b['loadgen_transport_errors'])}; {b['loadgen_dropped']} |",
        "",
        "## Unbounded queue (the incident's setting)",
        "",
        f"`--queue-size 0 --queue-timeout 0`, loadgen at {u['offered_rps']} requests/s, one connection per",
        "request and a 600 s timeout, so every request the limit holds back waits in the queue.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| seconds of load | {u['seconds']} |",
        f"| RSS before the load | {u['baseline_rss_mib']:.1f} MiB |",
        f"| queue depth at the end | {u['final_queue_depth']:.0f} requests |",
        f"| RSS at the end | {u['final_rss_mib']:.1f} MiB |",
        f"| growth per queued request (least-squares slope of RSS over depth) | {u['bytes_per_queued_request']/1024:.1f} KiB |",
        f"| most requests in flight at the upstream | {u['upstream_max_in_flight']} |",
        f"| slowest /metrics while the queue grew | {u['metrics_max_s']*1000:.0f} ms |",
        "",
        "The per-second samples of both phases are in the JSON file next to this one.",
    ]
    return "\n".join(lines) + "\n"


async def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bins", required=True, help="directory holding sidecar and loadgen")
    p.add_argument("--out", required=True, help="Markdown file to write (JSON goes beside it)")
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--unbounded-seconds", type=int, default=40)
    p.add_argument("--max-concurrency", type=int, default=8)
    p.add_argument("--service-ms", type=int, default=100)
    p.add_argument("--queue-size", type=int, default=32)
    p.add_argument("--max-queued", type=int, default=6000)
    args = p.parse_args()
    out = {}
    b = await bounded(args, out)
    u = await unbounded(args, out)
    text = markdown(b, u, args)
    with open(args.out, "w") as f:
        f.write(text)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(out, f, indent=1)
    sys.stdout.write(text)
    ok = (b["rss_mib_max"] < 64 and b["upstream_max_in_flight"] <= args.max_concurrency
          and b["samples_answered"] == b["samples"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
