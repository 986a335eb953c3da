#!/usr/bin/env python3
"""Helpers for scripts/bench.sh (standard library only).

Subcommands:
  freeport                      print a free TCP port on 127.0.0.1
  wait-port HOST:PORT SECONDS   wait until a TCP connect succeeds (exit 1 on timeout)
  metric URL NAME               print the value of an unlabelled Prometheus sample
  write-json FILE k=v ...       write a flat JSON object (numbers where they parse)
  rusage [--servers "NAME=PID ..."] FILE -- CMD ...
                                run CMD, write its "user sys wall" seconds to FILE and the
                                servers' CPU ticks and load average before/after to FILE.cpu0/1
  snapshot FILE NAME=PID ...    CPU ticks of each process (and its children) and the load average
  meta --out FILE ...           machine, tools and settings of this run
  report --raw DIR --out-dir DIR --readme FILE
                                medians over the rounds -> <date>.json, <date>.md, README section
  render --json FILE [--readme FILE]
                                re-render <date>.md and the README section from a saved <date>.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

SECTION = "## Benchmarks"


# ------------------------------------------------------------------------------------------------
# small commands
# ------------------------------------------------------------------------------------------------
def cmd_freeport(_args) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
    return 0


def cmd_wait_port(args) -> int:
    host, port = args.addr.rsplit(":", 1)
    deadline = time.monotonic() + float(args.seconds)
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, int(port)), timeout=0.5):
                return 0
        except OSError:
            time.sleep(0.1)
    return 1


def cmd_metric(args) -> int:
    with urllib.request.urlopen(args.url, timeout=2) as resp:
        text = resp.read().decode("utf-8", "replace")
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) >= 2 and parts[0] == args.name:
            value = float(parts[1])
            print(int(value) if value.is_integer() else value)
            return 0
    print(f"metric {args.name} not found at {args.url}", file=sys.stderr)
    return 1


def cmd_rusage(args) -> int:
    """Runs CMD (inheriting stdio) and writes its CPU time "user sys wall" in seconds to FILE.

    SIGTERM/SIGINT are passed on to CMD; if it is still running 4 s later it gets SIGKILL.
    """
    import signal

    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    servers = args.servers.split()
    # The servers' CPU and the load over exactly the generator's window: FILE's .cpu0 / .cpu1.
    before = _snapshot(servers)
    start = time.monotonic()
    child = subprocess.Popen(cmd)
    state = {"deadline": None}

    def forward(signum, _frame):
        try:
            child.send_signal(signum)
        except OSError:
            pass
        state["deadline"] = time.monotonic() + 4

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while True:
        try:
            pid, status, ru = os.wait4(child.pid, os.WNOHANG if state["deadline"] else 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return 1
        if pid:
            break
        if state["deadline"] and time.monotonic() > state["deadline"]:
            child.kill()
            state["deadline"] = None
        time.sleep(0.05)
    wall = time.monotonic() - start
    after = _snapshot(servers)
    stem = Path(args.file).with_suffix("")
    stem.with_suffix(".cpu0").write_text(json.dumps(before) + "\n")
    stem.with_suffix(".cpu1").write_text(json.dumps(after) + "\n")
    Path(args.file).write_text(f"{ru.ru_utime:.3f} {ru.ru_stime:.3f} {wall:.3f}\n")
    return os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8


def _ticks(pid: int) -> int:
    """utime + stime of PID and, recursively, its children (nginx's worker, for example)."""
    total = 0
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        total += int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5)
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += _ticks(int(child))
    except (OSError, ValueError):
        pass
    return total


def _snapshot(pairs) -> dict:
    """{t, loadavg, clk_tck, ticks: {name: utime+stime}} for NAME=PID pairs."""
    ticks = {}
    for pair in pairs:
        name, _, pid = pair.partition("=")
        if pid.isdigit():
            ticks[name] = ticks.get(name, 0) + _ticks(int(pid))
    return {
        "t": time.monotonic(),
        "loadavg": os.getloadavg(),
        "clk_tck": os.sysconf("SC_CLK_TCK"),
        "ticks": ticks,
    }


def cmd_snapshot(args) -> int:
    Path(args.file).write_text(json.dumps(_snapshot(args.pairs)) + "\n")
    return 0


def _number(v: str):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def cmd_write_json(args) -> int:
    obj = {}
    for kv in args.pairs:
        k, _, v = kv.partition("=")
        obj[k] = _number(v)
    Path(args.file).write_text(json.dumps(obj, indent=2) + "\n")
    return 0


def _run(cmd: list[str]) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return (p.stdout + p.stderr).strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"unavailable ({e})"


def _version(cmd: list[str], pattern: str) -> str:
    out = _run(cmd)
    m = re.search(pattern, out)
    return m.group(0) if m else (out.splitlines() or ["unknown"])[0]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total_mib() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def cmd_meta(args) -> int:
    root = Path(__file__).resolve().parent.parent
    commit = _run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"])
    dirty = _run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"])
    now = dt.datetime.now(dt.timezone.utc)
    meta = {
        "started_at": now.isoformat(timespec="seconds"),
        "date": now.strftime("%Y-%m-%d"),
        "machine": {
            "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "cpus_online": os.cpu_count(),
            "model_name": _cpu_model(),
            "kernel": platform.release(),
            "mem_total_mib": _mem_total_mib(),
            "loadavg_at_start": os.getloadavg(),
        },
        "git": {"commit": commit, "dirty": bool(dirty)},
        "tools": {
            "wrk": _version(["wrk", "-v"], r"wrk \S+"),
            "nginx": _version([args.nginx, "-v"], r"nginx/\S+"),
            "haproxy": _version([args.haproxy, "-v"], r"HAProxy version \S+"),
            "oha": _version([args.oha, "--version"], r"oha \S+") if args.oha else "oha not installed",
        },
        "settings": {
            "rounds": args.rounds,
            "run_s": args.run_s,
            "cpu_s": args.cpu_s,
            "cpu_rps": args.cpu_rps,
            "stall_rounds": args.stall_rounds,
            "stall_open_s": args.stall_open_s,
            "stall_closed_s": args.stall_closed_s,
            "stall_rps": args.stall_rps,
            "stall": "1 s every 10 s",
            "sse_steps": [int(x) for x in args.sse_steps.split()],
            "connections": args.connections,
            "proxy_limit": args.proxy_limit,
            "fixed_rates": [int(x) for x in args.fixed_rates.split()],
            "server_cpu": args.server_cpu,
            "client_cpu": args.client_cpu,
        },
    }
    Path(args.out).write_text(json.dumps(meta, indent=2) + "\n")
    return 0


# ------------------------------------------------------------------------------------------------
# parsing raw results
# ------------------------------------------------------------------------------------------------
def _rounds(d: Path, suffix: str) -> list[Path]:
    files = [p for p in d.glob(f"r*{suffix}") if re.fullmatch(r"r\d+", p.name[: -len(suffix)])]
    return sorted(files, key=lambda p: int(p.name[1 : -len(suffix)]))


def _shares(prefix: Path) -> dict:
    """Each server's CPU share (1.0 = one core busy) over the run's window, and the machine's
    load average before and after it, from the .cpu0/.cpu1 snapshots around the generator."""
    try:
        a = json.loads(prefix.with_suffix(".cpu0").read_text())
        b = json.loads(prefix.with_suffix(".cpu1").read_text())
    except (OSError, ValueError):
        return {}
    dt_s = b["t"] - a["t"]
    if dt_s <= 0:
        return {}
    share = {
        name: (b["ticks"].get(name, 0) - a["ticks"][name]) / a["clk_tck"] / dt_s for name in a["ticks"]
    }
    return {"server_cpu": share, "load_before": a["loadavg"][0], "load_after": b["loadavg"][0]}


def _time(prefix: Path) -> dict:
    out = _shares(prefix)
    try:
        user, sys_, real = (float(x) for x in prefix.with_suffix(".time").read_text().split()[-3:])
        out.update({"cpu_user_s": user, "cpu_sys_s": sys_, "wall_s": real})
        if real > 0:
            out["gen_cpu"] = (user + sys_) / real
    except (OSError, ValueError):
        pass
    return out


def _loadgen(prefix: Path) -> dict:
    rep = json.loads(prefix.with_suffix(".json").read_text())
    responses = {k: int(v) for k, v in rep.get("responses", {}).items()}
    errors = {k: int(v) for k, v in rep.get("transport_errors", {}).items() if v}
    ok = sum(v for k, v in responses.items() if k.startswith("2"))
    dur = rep.get("duration_s") or 0
    row = {
        "attempted": rep.get("attempted"),
        "ok": ok,
        "non_2xx": {k: v for k, v in responses.items() if not k.startswith("2")},
        "transport_errors": errors,
        "dropped": rep.get("dropped"),
        "duration_s": dur,
        "achieved_rps": rep.get("achieved_rps"),
        "ok_rps": ok / dur if dur else None,
        "send_delay_ms_p99": (rep.get("send_delay_ms") or {}).get("p99"),
    }
    pct_file = prefix.with_suffix(".pct")
    if pct_file.exists():
        pct = json.loads(pct_file.read_text().splitlines()[0])
        row["latency_ms"] = {k: pct.get(k) for k in ("p50", "p90", "p95", "p99", "p999", "max")}
    else:
        row["latency_ms"] = {k: rep["latency_ms"].get(k) for k in ("p50", "p90", "p99", "p999", "max")}
    row.update(_time(prefix))
    if "cpu_user_s" in row and rep.get("attempted"):
        row["cpu_us_per_request"] = (row["cpu_user_s"] + row["cpu_sys_s"]) * 1e6 / rep["attempted"]
    if rep.get("sse"):
        row["sse"] = {k: rep["sse"].get(k) for k in ("streams", "streams_opened", "streams_failed", "events", "failures")}
    return row


def _wrk(prefix: Path) -> dict:
    text = prefix.with_suffix(".wrk").read_text()
    row: dict = {}
    m = re.search(r"Requests/sec:\s*([\d.]+)", text)
    row["rps"] = float(m.group(1)) if m else None
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+)", text)
    if m:
        row["requests"] = int(m.group(1))
    m = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", text)
    row["non_2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors:(.*)", text)
    row["socket_errors"] = m.group(1).strip() if m else ""
    m = re.search(r"^\s+99%\s+([\d.]+)(\w+)", text, re.M)
    if m:
        scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}.get(m.group(2), 1.0)
        row["p99_ms"] = float(m.group(1)) * scale
    row.update(_time(prefix))
    if "cpu_user_s" in row and row.get("requests"):
        row["cpu_us_per_request"] = (row["cpu_user_s"] + row["cpu_sys_s"]) * 1e6 / row["requests"]
    return row


def _oha(prefix: Path) -> dict:
    """oha's --output-format json: summary.requestsPerSec, statusCodeDistribution,
    errorDistribution, latencyPercentiles (seconds)."""
    rep = json.loads(prefix.with_suffix(".oha").read_text())
    summary = rep.get("summary") or {}
    codes = {str(k): int(v) for k, v in (rep.get("statusCodeDistribution") or {}).items()}
    errs = {k: int(v) for k, v in (rep.get("errorDistribution") or {}).items()}
    # Requests still in flight when -z ran out: attempted, but not failures.
    cut = sum(v for k, v in errs.items() if "aborted due to deadline" in k)
    errors = sum(errs.values()) - cut
    responses = sum(codes.values())
    wall = summary.get("total")
    row: dict = {
        "responses": responses,
        "requests": responses + errors + cut,
        "errors": errors,
        "non_2xx": sum(v for k, v in codes.items() if not k.startswith("2")),
        "rps": responses / wall if wall else summary.get("requestsPerSec"),
    }
    p99 = (rep.get("latencyPercentiles") or {}).get("p99")
    row["p99_ms"] = p99 * 1000 if isinstance(p99, (int, float)) else None
    row.update(_time(prefix))
    if "cpu_user_s" in row and row["requests"]:
        row["cpu_us_per_request"] = (row["cpu_user_s"] + row["cpu_sys_s"]) * 1e6 / row["requests"]
    return row


def _collect(d: Path, kind: str) -> list[dict]:
    if not d.is_dir():
        return []
    suffix = {"wrk": ".wrk", "oha": ".oha"}.get(kind, ".json")
    parse = {"wrk": _wrk, "oha": _oha}.get(kind, _loadgen)
    out = []
    for p in _rounds(d, suffix):
        prefix = p.with_suffix("")
        row = parse(prefix)
        row["round"] = int(prefix.name[1:])
        out.append(row)
    return out


def _get(row: dict, path: str):
    cur = row
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def med(rows: list[dict], path: str):
    vals = [v for v in (_get(r, path) for r in rows) if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def spread(rows: list[dict], path: str):
    vals = [v for v in (_get(r, path) for r in rows) if isinstance(v, (int, float))]
    return (min(vals), max(vals)) if vals else None


def _div(a, b):
    return a / b if a is not None and b else None


# A run whose server used this much of its core measured the server, not the generator.
SERVER_BOUND = 0.9


def _bound(fig: dict, server: str, contenders) -> dict | None:
    """The contender whose runs had the server at >= SERVER_BOUND of a core (median), if any."""
    for c in contenders:
        share = fig.get(f"{c}_server_cpu_median")
        if share is not None and share >= SERVER_BOUND:
            return {"contender": c, "server": server, "cpu": share}
    return None


def _all_rows(runs: dict):
    for v in runs.values():
        if isinstance(v, list):
            yield from (r for r in v if isinstance(r, dict))
        elif isinstance(v, dict):
            for rows in v.values():
                if isinstance(rows, list):
                    yield from (r for r in rows if isinstance(r, dict))


def analyse(raw: Path) -> dict:
    meta = json.loads((raw / "meta.json").read_text())
    res: dict = {"schema": "harness-bench/v1", **meta}
    runs: dict = {}
    fig: dict = {}

    # 1: loadgen vs wrk (and oha), max rps against nginx
    wrk = _collect(raw / "f1/wrk", "wrk")
    oha = _collect(raw / "f1/oha", "oha")
    lg = _collect(raw / "f1/loadgen", "loadgen")
    runs["f1_wrk"], runs["f1_oha"], runs["f1_loadgen"] = wrk, oha, lg
    by_round = {r["round"]: r for r in wrk}
    per_round = [
        l["achieved_rps"] / by_round[l["round"]]["rps"]
        for l in lg
        if l["round"] in by_round and by_round[l["round"]].get("rps")
    ]
    f1 = {
        "wrk_rps_median": med(wrk, "rps"),
        "oha_rps_median": med(oha, "rps"),
        "loadgen_rps_median": med(lg, "achieved_rps"),
        "ratio": _div(med(lg, "achieved_rps"), med(wrk, "rps")),
        "ratio_vs_oha": _div(med(lg, "achieved_rps"), med(oha, "rps")),
        "ratio_per_round": [round(x, 3) for x in per_round],
        "wrk_cpu_us_per_request_median": med(wrk, "cpu_us_per_request"),
        "oha_cpu_us_per_request_median": med(oha, "cpu_us_per_request"),
        "loadgen_cpu_us_per_request_median": med(lg, "cpu_us_per_request"),
        "loadgen_p99_ms_median": med(lg, "latency_ms.p99"),
        "wrk_p99_ms_median": med(wrk, "p99_ms"),
        "errors": sum(len(r["transport_errors"]) + len(r["non_2xx"]) for r in lg)
        + sum(r["non_2xx"] for r in wrk)
        + sum(r["errors"] + r["non_2xx"] for r in oha),
    }
    for name, rows in (("wrk", wrk), ("oha", oha), ("loadgen", lg)):
        f1[f"{name}_server_cpu_median"] = med(rows, "server_cpu.nginx")
        f1[f"{name}_gen_cpu_median"] = med(rows, "gen_cpu")
    f1["server_bound"] = _bound(f1, "nginx", ("wrk", "loadgen"))
    f1["server_bound_vs_oha"] = _bound(f1, "nginx", ("oha", "loadgen"))
    fig["1_loadgen_vs_wrk"] = f1

    # 2: loadgen CPU per request at a fixed rate (and oha's, --latency-correction)
    cpu = _collect(raw / "f2/loadgen", "loadgen")
    cpu_oha = _collect(raw / "f2/oha", "oha")
    runs["f2_loadgen"], runs["f2_oha"] = cpu, cpu_oha
    fig["2_loadgen_cpu"] = {
        "rps": meta["settings"]["cpu_rps"],
        "achieved_rps_median": med(cpu, "achieved_rps"),
        "cpu_us_per_request_median": med(cpu, "cpu_us_per_request"),
        "cpu_us_per_request_range": spread(cpu, "cpu_us_per_request"),
        "cpu_cores_median": med(cpu, "gen_cpu"),
        "p99_ms_median": med(cpu, "latency_ms.p99"),
        "server_cpu_median": med(cpu, "server_cpu.nginx"),
        "oha_rps_median": med(cpu_oha, "rps"),
        "oha_cpu_us_per_request_median": med(cpu_oha, "cpu_us_per_request"),
        "oha_cpu_us_per_request_range": spread(cpu_oha, "cpu_us_per_request"),
        "oha_server_cpu_median": med(cpu_oha, "server_cpu.nginx"),
        "ratio_vs_oha": _div(med(cpu, "cpu_us_per_request"), med(cpu_oha, "cpu_us_per_request")),
    }
    # 3: coordinated omission
    op = _collect(raw / "f3/open", "loadgen")
    cl = _collect(raw / "f3/closed", "loadgen")
    runs["f3_open"], runs["f3_closed"] = op, cl
    fig["3_stall"] = {
        "open_rps": meta["settings"]["stall_rps"],
        "open_p50_ms": med(op, "latency_ms.p50"),
        "open_p95_ms": med(op, "latency_ms.p95"),
        "open_p99_ms": med(op, "latency_ms.p99"),
        "open_max_ms": med(op, "latency_ms.max"),
        "open_dropped": sum(r.get("dropped") or 0 for r in op),
        "closed_rps_median": med(cl, "achieved_rps"),
        "closed_p95_ms": med(cl, "latency_ms.p95"),
        "closed_p99_ms": med(cl, "latency_ms.p99"),
        "closed_max_ms": med(cl, "latency_ms.max"),
        "expected_open_p95_ms": 500.0,
        "expected_open_p99_ms": 900.0,
    }

    # 4: sidecar vs HAProxy
    mx = {c: _collect(raw / f"f4/max/{c}", "loadgen") for c in ("sidecar", "haproxy")}
    runs["f4_max"] = mx
    f4: dict = {
        "sidecar_rps_median": med(mx["sidecar"], "ok_rps"),
        "haproxy_rps_median": med(mx["haproxy"], "ok_rps"),
        "ratio": _div(med(mx["sidecar"], "ok_rps"), med(mx["haproxy"], "ok_rps")),
        "sidecar_p99_ms_at_max": med(mx["sidecar"], "latency_ms.p99"),
        "haproxy_p99_ms_at_max": med(mx["haproxy"], "latency_ms.p99"),
        "non_2xx_or_errors_at_max": {
            c: sum(sum(r["non_2xx"].values()) + sum(r["transport_errors"].values()) for r in rows)
            for c, rows in mx.items()
        },
        "rates": {},
    }
    for c, rows in mx.items():
        f4[f"{c}_proxy_cpu_median"] = med(rows, f"server_cpu.{c}")
        f4[f"{c}_flagsvc_cpu_median"] = med(rows, "server_cpu.flagsvc")
        f4[f"{c}_gen_cpu_median"] = med(rows, "gen_cpu")
    for rate in meta["settings"]["fixed_rates"]:
        rr = {c: _collect(raw / f"f4/rate{rate}/{c}", "loadgen") for c in ("direct", "sidecar", "haproxy")}
        runs[f"f4_rate{rate}"] = rr
        d = med(rr["direct"], "latency_ms.p99")
        entry = {"direct_p99_ms": d}
        for c in ("sidecar", "haproxy"):
            p = med(rr[c], "latency_ms.p99")
            entry[f"{c}_p99_ms"] = p
            entry[f"{c}_added_p99_ms"] = p - d if p is not None and d is not None else None
            entry[f"{c}_achieved_rps"] = med(rr[c], "achieved_rps")
            entry[f"{c}_p50_ms"] = med(rr[c], "latency_ms.p50")
            entry[f"{c}_bad"] = sum(
                sum(r["non_2xx"].values()) + sum(r["transport_errors"].values()) + (r.get("dropped") or 0)
                for r in rr[c]
            )
        entry["direct_p50_ms"] = med(rr["direct"], "latency_ms.p50")
        entry["direct_achieved_rps"] = med(rr["direct"], "achieved_rps")
        f4["rates"][str(rate)] = entry
    fig["4_sidecar_vs_haproxy"] = f4

    # 5: SSE streams through the sidecar
    steps = []
    for d in sorted((raw / "f5").glob("s*"), key=lambda p: int(p.name[1:]) if p.name[1:].isdigit() else 0):
        sf = d / "step.json"
        if not sf.exists():
            continue
        step = json.loads(sf.read_text())
        lgf = d / "loadgen.json"
        if lgf.exists():
            rep = json.loads(lgf.read_text())
            step["loadgen_sse"] = {k: (rep.get("sse") or {}).get(k) for k in ("streams_opened", "streams_failed", "events", "failures")}
        held = step.get("streams_open") or 0
        delta = (step.get("rss_after_kb") or 0) - (step.get("rss_before_kb") or 0)
        step["kib_per_stream"] = delta / held if held else None
        # flagsvc holds the same streams (the sidecar's upstream side of each one).
        fdelta = (step.get("flagsvc_rss_after_kb") or 0) - (step.get("flagsvc_rss_before_kb") or 0)
        step["flagsvc_kib_per_stream"] = fdelta / held if held and step.get("flagsvc_rss_after_kb") else None
        if step.get("release_ms") == "":
            step["release_ms"] = None
        steps.append(step)
    runs["f5_steps"] = steps
    full = [s for s in steps if s.get("streams_open", 0) >= s.get("streams", 1)]
    best = max(full, key=lambda s: s["streams"]) if full else (max(steps, key=lambda s: s.get("streams_open", 0)) if steps else None)
    fig["5_sse"] = {
        "max_streams_held": max((s.get("streams_open", 0) for s in steps), default=None),
        "largest_full_step": best["streams"] if best and best in full else None,
        "kib_per_stream": best["kib_per_stream"] if best else None,
        "rss_before_kb": best["rss_before_kb"] if best else None,
        "rss_after_kb": best["rss_after_kb"] if best else None,
        "flagsvc_kib_per_stream": best.get("flagsvc_kib_per_stream") if best else None,
        "release_ms": best.get("release_ms") if best else None,
        "steps": [
            {k: s.get(k) for k in ("streams", "streams_open", "open_after_s", "rss_before_kb", "rss_after_kb", "kib_per_stream", "sidecar_fds",
                                   "flagsvc_rss_before_kb", "flagsvc_rss_after_kb", "flagsvc_kib_per_stream", "release_ms", "streams_left")}
            for s in steps
        ],
    }

    loads = [v for r in _all_rows(runs) for v in (r.get("load_before"), r.get("load_after")) if v is not None]
    res["machine"]["loadavg_during_runs"] = [min(loads), max(loads)] if loads else None

    res["figures"] = fig
    res["runs"] = runs
    return res


# ------------------------------------------------------------------------------------------------
# rendering
# ------------------------------------------------------------------------------------------------
def f(v, nd=2, unit=""):
    if v is None:
        return "n/a"
    if isinstance(v, float) and abs(v) >= 1000:
        s = f"{v:,.0f}"
    elif isinstance(v, int):
        s = f"{v:,}"
    else:
        s = f"{v:.{nd}f}"
    return s + unit


def kilo(v):
    return "n/a" if v is None else f"{v / 1000:.1f}k"


def signed(v, nd=2, unit=" ms"):
    return "n/a" if v is None else f"{v:+.{nd}f}{unit}"


def figures_table(res: dict) -> str:
    fig = res["figures"]
    s = res["settings"]
    f1, f2, f3, f4, f5 = (fig[k] for k in ("1_loadgen_vs_wrk", "2_loadgen_cpu", "3_stall", "4_sidecar_vs_haproxy", "5_sse"))
    def pct(v):
        return "n/a" if v is None else f"{v * 100:.0f} %"

    def cpu(prefix, name):
        return f"{name} run: nginx {pct(f1.get(prefix + '_server_cpu_median'))}, {name} {pct(f1.get(prefix + '_gen_cpu_median'))}"

    loads = res["machine"].get("loadavg_during_runs")
    busy = loads is not None and loads[1] >= res["machine"]["nproc"]

    def ratio_cell(ratio, bound):
        if bound:
            return f"server-bound (nginx {pct(bound['cpu'])} in the {bound['contender']} runs): no ratio"
        if ratio is not None and busy:
            # Other work competed for both cores: neither side had its core to itself.
            return f"{f(ratio, 2)} (machine busy: load up to {loads[1]:.1f} on {res['machine']['nproc']} cores)"
        return f(ratio, 2)

    rows = [
        (
            "1. loadgen max rps ÷ wrk max rps (nginx, static 3 B, keep-alive, "
            f"{s['connections']} connections)",
            ratio_cell(f1["ratio"], f1.get("server_bound")),
            f"loadgen {kilo(f1['loadgen_rps_median'])} rps, wrk {kilo(f1['wrk_rps_median'])} rps; CPU share "
            f"(median): {cpu('wrk', 'wrk')}; {cpu('loadgen', 'loadgen')}",
        ),
        (
            "1. loadgen max rps ÷ oha max rps (same nginx, same connections)",
            ratio_cell(f1.get("ratio_vs_oha"), f1.get("server_bound_vs_oha"))
            if f1.get("oha_rps_median")
            else "not measured (oha not installed)",
            f"oha {kilo(f1.get('oha_rps_median'))} rps; {cpu('oha', 'oha')}",
        ),
        (
            f"2. loadgen CPU per request at {kilo(s['cpu_rps'])} rps (user+sys)",
            f(f2["cpu_us_per_request_median"], 1, " µs"),
            f"{f(f2['cpu_cores_median'], 2)} cores busy; nginx {pct(f2.get('server_cpu_median'))}; at max rate: loadgen "
            f"{f(f1['loadgen_cpu_us_per_request_median'], 1, ' µs')}, wrk "
            f"{f(f1['wrk_cpu_us_per_request_median'], 1, ' µs')}, oha "
            f"{f(f1.get('oha_cpu_us_per_request_median'), 1, ' µs')}",
        ),
        (
            f"2. loadgen CPU per request ÷ oha's at {kilo(s['cpu_rps'])} rps (oha `--latency-correction`)",
            ratio_cell(f2.get("ratio_vs_oha"), None)
            if f2.get("oha_cpu_us_per_request_median")
            else "not measured (oha not installed)",
            f"oha {f(f2.get('oha_cpu_us_per_request_median'), 1, ' µs')} per request at "
            f"{kilo(f2.get('oha_rps_median'))} rps; nginx {pct(f2.get('oha_server_cpu_median'))}",
        ),
        (
            f"3. stall test (1 s stall every 10 s), open loop {kilo(s['stall_rps'])} rps: p95 / p99",
            f"{f(f3['open_p95_ms'], 0)} / {f(f3['open_p99_ms'], 0)} ms",
            f"expected ≈ 500 / 900 ms; closed loop (`--rate max`) p99 "
            f"{f(f3['closed_p99_ms'], 2)} ms (p95 {f(f3['closed_p95_ms'], 2)} ms)",
        ),
        (
            f"4. sidecar rps ÷ HAProxy rps ({s['proxy_limit']} in flight, flagsvc upstream)",
            f(f4["ratio"], 2),
            f"sidecar {kilo(f4['sidecar_rps_median'])} rps, HAProxy {kilo(f4['haproxy_rps_median'])} rps; CPU "
            f"share (proxy / flagsvc / loadgen): sidecar runs {pct(f4.get('sidecar_proxy_cpu_median'))} / "
            f"{pct(f4.get('sidecar_flagsvc_cpu_median'))} / {pct(f4.get('sidecar_gen_cpu_median'))}, HAProxy runs "
            f"{pct(f4.get('haproxy_proxy_cpu_median'))} / {pct(f4.get('haproxy_flagsvc_cpu_median'))} / "
            f"{pct(f4.get('haproxy_gen_cpu_median'))}",
        ),
    ]
    for rate, e in f4["rates"].items():
        rows.append(
            (
                f"4. p99 added over direct at {kilo(int(rate))} rps: sidecar / HAProxy",
                f"{signed(e['sidecar_added_p99_ms'])} / {signed(e['haproxy_added_p99_ms'])}",
                f"p99 direct {f(e['direct_p99_ms'], 2)} ms, sidecar {f(e['sidecar_p99_ms'], 2)} ms, "
                f"HAProxy {f(e['haproxy_p99_ms'], 2)} ms"
                + (
                    f"; dropped or failed over all rounds: sidecar {e['sidecar_bad']}, HAProxy {e['haproxy_bad']}"
                    if e.get("sidecar_bad") or e.get("haproxy_bad")
                    else ""
                ),
            )
        )
    rows.append(
        (
            "5. SSE streams held through the sidecar; memory per stream (VmRSS): sidecar, flagsvc; slots released after the client left",
            f"{f(f5['max_streams_held'])}; {f(f5['kib_per_stream'], 1, ' KiB')}, {f(f5.get('flagsvc_kib_per_stream'), 1, ' KiB')}; "
            f"{f(f5.get('release_ms'), 0, ' ms')}",
            f"tried {', '.join(str(x['streams']) for x in f5['steps'])}; RSS "
            f"{f((f5['rss_before_kb'] or 0) / 1024, 1)} → {f((f5['rss_after_kb'] or 0) / 1024, 1)} MiB"
            + (f" at {f(f5['largest_full_step'])} streams" if f5.get("largest_full_step") else ""),
        )
    )
    out = ["| figure | result (median) | details |", "| --- | --- | --- |"]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(out)


def machine_line(res: dict) -> str:
    m = res["machine"]
    load = f"load average (1 min) {m['loadavg_at_start'][0]:.2f} at the start"
    if m.get("loadavg_at_end"):
        load += f", {m['loadavg_at_end'][0]:.2f} at the end"
    if m.get("loadavg_during_runs"):
        lo, hi = m["loadavg_during_runs"]
        load += f", {lo:.2f}–{hi:.2f} before/after each run"
    return f"{m['nproc']} cores ({m['model_name']}), {f(m.get('mem_total_mib'))} MiB, Linux {m['kernel']}, {load}"


def render_md(res: dict) -> str:
    s = res["settings"]
    fig = res["figures"]
    runs = res["runs"]
    L = []
    L.append(f"# Data-plane benchmarks — {res['date']}")
    L.append("")
    L.append(
        f"`make bench` (scripts/bench.sh), started {res['started_at']}, took {res.get('elapsed_s', '?')} s, "
        f"commit {res['git']['commit']}{' (dirty work tree)' if res['git']['dirty'] else ''}."
    )
    L.append("")
    L.append(f"**Machine:** {machine_line(res)}. A small machine (the load averages above and in each run "
             "say what else ran), so expect ±15% noise: every figure is the median over "
             "interleaved rounds.")
    L.append("")
    L.append(
        f"**Tools:** {res['tools']['wrk']}; {res['tools'].get('oha', 'oha not installed')}; "
        f"{res['tools']['nginx']}; {res['tools']['haproxy']}."
    )
    L.append("")
    L.append(
        f"**Method:** {s['rounds']} rounds (stall test: {s['stall_rounds']}), each running every contender "
        "once, order reversed every other round; servers (nginx, flagsvc, sidecar, HAProxy, stall server) "
        f"pinned to core {s['server_cpu']}, the generator (loadgen or wrk) to core {s['client_cpu']}; "
        f"127.0.0.1 only; {s['connections']} keep-alive connections; {s['run_s']} s per throughput/latency "
        f"run, {s['cpu_s']} s per CPU run. wrk runs with one thread (one core). CPU time is the "
        "generator's user+sys from its rusage. Latencies are loadgen's coordinated-omission-correct "
        "ones (from the intended send time), recomputed from the full histogram for p95."
    )
    L.append("")
    L.append("## Figures")
    L.append("")
    L.append(figures_table(res))
    L.append("")

    def lat_table(rows, title):
        L.append(f"**{title}**")
        L.append("")
        L.append("| round | achieved rps | ok rps | p50 ms | p95 ms | p99 ms | p99.9 ms | max ms | dropped | non-2xx / errors | CPU µs/req |")
        L.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            lat = r.get("latency_ms") or {}
            bad = sum(r["non_2xx"].values()) + sum(r["transport_errors"].values())
            L.append(
                f"| {r['round']} | {f(r['achieved_rps'], 0)} | {f(r['ok_rps'], 0)} | {f(lat.get('p50'), 3)} | "
                f"{f(lat.get('p95'), 3)} | {f(lat.get('p99'), 3)} | {f(lat.get('p999'), 3)} | "
                f"{f(lat.get('max'), 3)} | {r.get('dropped')} | {bad} | {f(r.get('cpu_us_per_request'), 1)} |"
            )
        L.append("")

    L.append("## Runs")
    L.append("")
    L.append("### 1. loadgen vs wrk and oha, max rps against nginx")
    L.append("")
    L.append(
        "CPU: share of one core over the run's window (nginx from /proc/PID/stat of its master and "
        "worker, the generator from its rusage); load: 1-minute load average before → after the run. "
        f"A ratio from runs with nginx at ≥ {SERVER_BOUND * 100:.0f} % is reported as server-bound."
    )
    L.append("")
    L.append("| round | generator | rps | p99 ms | CPU µs/req | nginx CPU | generator CPU | load |")
    L.append("| --- | --- | --- | --- | --- | --- | --- | --- |")

    def share(r, key=None):
        v = (r.get("server_cpu") or {}).get("nginx") if key is None else r.get(key)
        return "n/a" if v is None else f"{v * 100:.0f} %"

    def load(r):
        a, b = r.get("load_before"), r.get("load_after")
        return "n/a" if a is None else f"{a:.2f} → {b:.2f}"

    all_f1 = [("wrk", r, r.get("rps"), r.get("p99_ms")) for r in runs["f1_wrk"]]
    all_f1 += [("oha", r, r.get("rps"), r.get("p99_ms")) for r in runs.get("f1_oha", [])]
    all_f1 += [("loadgen", r, r["achieved_rps"], r["latency_ms"].get("p99")) for r in runs["f1_loadgen"]]
    for name, r, rps, p99 in sorted(all_f1, key=lambda x: x[1]["round"]):
        L.append(
            f"| {r['round']} | {name} | {f(rps, 0)} | {f(p99, 3)} | {f(r.get('cpu_us_per_request'), 1)} | "
            f"{share(r)} | {share(r, 'gen_cpu')} | {load(r)} |"
        )
    L.append("")
    L.append("(wrk's p99 is closed-loop, from the send time; loadgen's `--rate max` p99 likewise.)")
    L.append("")
    L.append(f"### 2. loadgen at {s['cpu_rps']} rps (CPU)")
    L.append("")
    lat_table(runs["f2_loadgen"], "loadgen → nginx, open loop")
    if runs.get("f2_oha"):
        L.append("**oha → nginx, `-q` open loop with `--latency-correction`**")
        L.append("")
        L.append("| round | rps | p99 ms | CPU µs/req | nginx CPU | oha CPU | load |")
        L.append("| --- | --- | --- | --- | --- | --- | --- |")
        for r in runs["f2_oha"]:
            L.append(
                f"| {r['round']} | {f(r.get('rps'), 0)} | {f(r.get('p99_ms'), 3)} | {f(r.get('cpu_us_per_request'), 1)} | "
                f"{share(r)} | {share(r, 'gen_cpu')} | {load(r)} |"
            )
        L.append("")
    L.append("### 3. Stall test")
    L.append("")
    L.append(
        "The stall server (workloads/loadgen/examples/stall_server.rs) holds every response during the "
        "last second of every 10 s. 10% of the time is stalled, so a coordinated-omission-correct "
        "open-loop generator sees latencies spread evenly over 0–1 s for ~10% of the requests: "
        "p95 ≈ 500 ms, p99 ≈ 900 ms. A closed loop sends nothing while its connections wait, so the "
        "stall hides in a handful of samples."
    )
    L.append("")
    lat_table(runs["f3_open"], f"open loop, {s['stall_rps']} rps for {s['stall_open_s']} s")
    lat_table(runs["f3_closed"], f"closed loop (`--rate max`) for {s['stall_closed_s']} s")
    L.append(f"### 4. sidecar vs HAProxy ({s['proxy_limit']} in flight) in front of flagsvc (fixed:0ms)")
    L.append("")
    L.append(
        f"sidecar `--max-concurrency {s['proxy_limit']} --queue-size 4096 --queue-timeout 5s`; HAProxy "
        f"`server ... maxconn {s['proxy_limit']}`, `timeout queue 5s`, `http-reuse always`, one thread. "
        "Both, and flagsvc, on the server core. ok rps counts 2xx responses only."
    )
    L.append("")
    for c, rows in runs["f4_max"].items():
        lat_table(rows, f"{c}, `--rate max`")
    for rate in s["fixed_rates"]:
        for c, rows in runs[f"f4_rate{rate}"].items():
            lat_table(rows, f"{c} at {rate} rps")
    L.append("### 5. SSE streams through the sidecar")
    L.append("")
    L.append(
        "Per step: a fresh flagsvc (`--sse-interval 1s`) and sidecar (`--max-concurrency streams+1000`); "
        "the sidecar warmed with 1 s of ordinary requests; VmRSS read before, then after loadgen "
        "(`--rate 0 --sse-streams N`) has opened the streams (sidecar_streams_open) and 3 s more."
    )
    L.append("")
    L.append(
        "flagsvc's VmRSS is read at the same moments (it holds the upstream side of every stream). "
        "After the reading loadgen gets SIGTERM and closes its streams; \"released\" is the time until "
        "sidecar_streams_open is 0 (polled every 20 ms), an upper bound that includes loadgen's own shutdown."
    )
    L.append("")
    L.append("| streams asked | held (sidecar gauge) | loadgen opened / failed | seconds to open | sidecar fds | VmRSS before KiB | VmRSS after KiB | KiB per stream | flagsvc KiB per stream | released (ms) |")
    L.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for st in runs["f5_steps"]:
        lsse = st.get("loadgen_sse") or {}
        L.append(
            f"| {st.get('streams')} | {st.get('streams_open')} | {lsse.get('streams_opened')} / {lsse.get('streams_failed')} | "
            f"{st.get('open_after_s')} | {st.get('sidecar_fds')} | {st.get('rss_before_kb')} | {st.get('rss_after_kb')} | "
            f"{f(st.get('kib_per_stream'), 2)} | {f(st.get('flagsvc_kib_per_stream'), 2)} | {f(st.get('release_ms'), 0)} |"
        )
    L.append("")
    L.append(f"Raw per-run numbers: [{res['date']}.json]({res['date']}.json).")
    L.append("")
    return "\n".join(L)


def readme_section(res: dict, out_dir_rel: str) -> str:
    s = res["settings"]
    return "\n".join(
        [
            SECTION,
            "",
            f"`make bench` (scripts/bench.sh) — latest run **{res['date']}** on {machine_line(res)}; "
            f"the load averages say what else ran; each figure is the median of {s['rounds']} interleaved rounds "
            f"(stall test: {s['stall_rounds']}), servers pinned to core {s['server_cpu']} and the "
            f"generator to core {s['client_cpu']}, all on loopback. Details and every run: "
            f"[{out_dir_rel}/{res['date']}.md]({out_dir_rel}/{res['date']}.md).",
            "",
            figures_table(res),
            "",
        ]
    )


def replace_section(text: str, section: str) -> str:
    lines = text.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if l.rstrip() == SECTION), None)
    block = section if section.endswith("\n") else section + "\n"
    if start is None:
        if not text:
            return block
        return text + ("\n" if text.endswith("\n") else "\n\n") + block
    end = len(lines)
    for i in range(start + 1, len(lines)):
        if re.match(r"#{1,2} ", lines[i]):
            end = i
            break
    tail = "".join(lines[end:])
    return "".join(lines[:start]) + block + ("\n" + tail if tail else "")


def cmd_report(args) -> int:
    raw = Path(args.raw)
    res = analyse(raw)
    res["elapsed_s"] = args.elapsed_s
    res["machine"]["loadavg_at_end"] = os.getloadavg()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{res['date']}.json").write_text(json.dumps(res, indent=2) + "\n")
    return _publish(res, out, args.readme)


def cmd_render(args) -> int:
    """Re-renders <date>.md (and the README section) from a saved <date>.json."""
    path = Path(args.json)
    res = json.loads(path.read_text())
    return _publish(res, path.parent, args.readme)


def _publish(res: dict, out: Path, readme_path: str) -> int:
    (out / f"{res['date']}.md").write_text(render_md(res))
    print(figures_table(res))
    if readme_path:
        readme = Path(readme_path)
        root = readme.resolve().parent
        try:
            rel = os.path.relpath(out.resolve(), root)
        except ValueError:
            rel = str(out)
        # Read, replace only our section, write back at once: someone else edits the rest.
        text = readme.read_text() if readme.exists() else ""
        new = replace_section(text, readme_section(res, rel))
        tmp = readme.with_name(readme.name + ".bench-tmp")
        tmp.write_text(new)
        os.replace(tmp, readme)
        print(f"updated {readme} ({SECTION})", file=sys.stderr)
    print(f"wrote {out / (res['date'] + '.md')} and .json", file=sys.stderr)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("freeport").set_defaults(fn=cmd_freeport)
    p = sub.add_parser("wait-port")
    p.add_argument("addr")
    p.add_argument("seconds")
    p.set_defaults(fn=cmd_wait_port)
    p = sub.add_parser("metric")
    p.add_argument("url")
    p.add_argument("name")
    p.set_defaults(fn=cmd_metric)
    p = sub.add_parser("rusage")
    p.add_argument("--servers", default="", help="NAME=PID ... whose CPU share to record")
    p.add_argument("file")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    p.set_defaults(fn=cmd_rusage)
    p = sub.add_parser("snapshot")
    p.add_argument("file")
    p.add_argument("pairs", nargs="*")
    p.set_defaults(fn=cmd_snapshot)
    p = sub.add_parser("write-json")
    p.add_argument("file")
    p.add_argument("pairs", nargs="*")
    p.set_defaults(fn=cmd_write_json)
    p = sub.add_parser("meta")
    p.add_argument("--out", required=True)
    for name in ("rounds", "run-s", "cpu-s", "stall-rounds", "stall-open-s", "stall-closed-s", "stall-rps",
                 "connections", "proxy-limit", "cpu-rps", "server-cpu", "client-cpu"):
        p.add_argument(f"--{name}", type=int, required=True)
    p.add_argument("--sse-steps", required=True)
    p.add_argument("--fixed-rates", required=True)
    p.add_argument("--nginx", default="nginx")
    p.add_argument("--haproxy", default="haproxy")
    p.add_argument("--oha", default="")
    p.set_defaults(fn=cmd_meta)
    p = sub.add_parser("report")
    p.add_argument("--raw", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--readme", default="")
    p.add_argument("--elapsed-s", type=int, default=None)
    p.set_defaults(fn=cmd_report)
    p = sub.add_parser("render")
    p.add_argument("--json", required=True)
    p.add_argument("--readme", default="")
    p.set_defaults(fn=cmd_render)
    args = ap.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
