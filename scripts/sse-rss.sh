#!/usr/bin/env bash
# RSS per SSE stream of flagsvc alone (issue 11, goal 4): starts BIN (default
# target/release/flagsvc) on 127.0.0.1, warms it with 20 lookups and one short stream, reads
# VmRSS, opens N streams (GET /stream, one connection each, heads read, events drained) from a
# Python asyncio client, reads VmRSS 3 s after the last one opened, closes them and prints
# `(held - before) / N` with the streams gauge before and after. The bench's SSE round measures
# the sidecar the same way (scripts/bench.sh, sse_step).
# Usage: scripts/sse-rss.sh N [BIN]
set -euo pipefail
N=${1:?usage: scripts/sse-rss.sh N [BIN]}
BIN=${2:-$(dirname "$0")/../target/release/flagsvc}
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
(($(ulimit -n) > N + 256)) || { echo "open-file limit $(ulimit -n) too low for $N streams" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'kill "${SVC:-}" 2>/dev/null || true; rm -rf "$TMP"' EXIT
"$BIN" --listen 127.0.0.1:0 --sse-interval 1s >"$TMP/out" 2>/dev/null &
SVC=$!
for _ in $(seq 50); do grep -q 127.0.0.1 "$TMP/out" && break; sleep 0.1; done
ADDR=$(grep -o '127.0.0.1:[0-9]*' "$TMP/out" | head -1)
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$SVC/status"; }
gauge() { curl -s "http://$ADDR/metrics" | awk '/^flagsvc_sse_streams_open / {print $2}'; }
for _ in $(seq 20); do curl -s "http://$ADDR/flags/warm" >/dev/null; done
curl -s -m 1 "http://$ADDR/stream" >/dev/null || true
sleep 0.5
BEFORE=$(rss)
python3 - "${ADDR%:*}" "${ADDR#*:}" "$N" >"$TMP/hold" <<'PY' &
import asyncio, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
conns = []
async def one():
    r, w = await asyncio.open_connection(host, port)
    w.write(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n")
    await w.drain()
    await r.readuntil(b"\r\n\r\n")
    conns.append(w)
    deadline = time.time() + 120
    while time.time() < deadline and await r.read(65536):
        pass
async def main():
    tasks = []
    for i in range(0, n, 200):
        tasks += [asyncio.create_task(one()) for _ in range(min(200, n - i))]
        await asyncio.sleep(0.05)
    t0 = time.time()
    while len(conns) < n and time.time() - t0 < 60:
        await asyncio.sleep(0.2)
    print(len(conns), flush=True)
    await asyncio.sleep(8)
    for w in conns:
        w.close()
    await asyncio.sleep(1)
asyncio.run(main())
PY
HOLD=$!
for _ in $(seq 600); do [[ -s $TMP/hold ]] && break; sleep 0.1; done
sleep 3
HELD=$(rss)
OPEN=$(gauge)
wait "$HOLD"
sleep 1
echo "streams=$N opened=$(cat "$TMP/hold") gauge_held=$OPEN gauge_after_close=$(gauge)" \
    "rss_before_kb=$BEFORE rss_held_kb=$HELD rss_after_close_kb=$(rss)" \
    "bytes_per_stream=$(((HELD - BEFORE) * 1024 / N))"
