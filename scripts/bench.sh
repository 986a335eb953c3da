#!/usr/bin/env bash
# Data-plane benchmarks (`make bench`): loadgen against wrk, loadgen's CPU cost, the
# coordinated-omission stall test, sidecar against HAProxy, SSE streams held by the sidecar.
#
# Writes results/bench/<date>.md and results/bench/<date>.json and replaces the "## Benchmarks"
# section of README.md (only that section). See results/bench/README.md for the method.
#
# Every run records who was busy: each server process's CPU share over the run's window (utime +
# stime from /proc/PID/stat, children included, before and after) and the generator's (its
# rusage), and the 1-minute load average before and after. A ratio taken while the server used
# >= 90 % of its core is reported as server-bound, not as a result. oha (a second anchor next to
# wrk) is installed here with `cargo install oha` when it is missing — in the bench only, never
# in CI; if that fails its figures say "not measured".
#
# The machine is small and shared (2 cores, noisy), so every figure is the MEDIAN over interleaved
# rounds (each round runs every contender once, the order alternating between rounds), with the
# servers pinned to one core and the generator to the other (taskset). Everything binds
# 127.0.0.1; every run is bounded in time; nginx and HAProxy run in the foreground from configs
# written to a temp dir and are stopped, like everything else started here, by the exit trap.
#
# Knobs (environment): BENCH_ROUNDS (5), BENCH_RUN_S (5, seconds per throughput/latency run),
# BENCH_CPU_S (10), BENCH_STALL_ROUNDS (3), BENCH_STALL_OPEN_S (20), BENCH_STALL_CLOSED_S (10),
# BENCH_STALL_RPS (2000), BENCH_SSE_STEPS ("1000 5000 9000"), BENCH_CONNECTIONS (64),
# BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1), BENCH_OUT (results/bench),
# BENCH_README (README.md; empty: leave it alone), BENCH_SKIP_INSTALL=1, BENCH_SKIP_BUILD=1,
# BENCH_KEEP_TMP=1 (keep the raw reports and logs), BENCH_OHA (path of an oha binary; default:
# `oha` on PATH, else `cargo install oha` into BENCH_OHA_ROOT, default target/bench-tools),
# BENCH_SKIP_OHA=1.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

ROUNDS=${BENCH_ROUNDS:-5}
RUN_S=${BENCH_RUN_S:-5}
CPU_S=${BENCH_CPU_S:-10}
STALL_ROUNDS=${BENCH_STALL_ROUNDS:-3}
STALL_OPEN_S=${BENCH_STALL_OPEN_S:-20}
STALL_CLOSED_S=${BENCH_STALL_CLOSED_S:-10}
STALL_RPS=${BENCH_STALL_RPS:-2000}
SSE_STEPS=${BENCH_SSE_STEPS:-"1000 5000 9000"}
CONNS=${BENCH_CONNECTIONS:-64}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
OUT_DIR=${BENCH_OUT:-results/bench}
README=${BENCH_README-README.md}
PROXY_LIMIT=32
FIXED_RATES=(5000 20000)
CPU_RPS=20000

# fd 3: the script's own stderr, whatever a trap that fires inside a redirected command inherits.
exec 3>&2
log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&3; }
die() {
    log "ERROR: $*"
    exit 1
}

# ---------------------------------------------------------------------------------------------
# Tools: wrk, nginx, haproxy from Debian packages when missing.
# ---------------------------------------------------------------------------------------------
install_tools() {
    local need=() pkgs=() sudo=()
    command -v wrk >/dev/null || need+=(wrk)
    command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || need+=(nginx)
    command -v haproxy >/dev/null || [[ -x /usr/sbin/haproxy ]] || need+=(haproxy)
    command -v taskset >/dev/null || need+=(taskset)
    command -v python3 >/dev/null || need+=(python3)
    ((${#need[@]} == 0)) && return 0
    [[ ${BENCH_SKIP_INSTALL:-0} == 1 ]] && die "missing ${need[*]} (BENCH_SKIP_INSTALL=1)"
    ((EUID == 0)) || sudo=(sudo)
    log "installing ${need[*]} from Debian packages"
    "${sudo[@]}" apt-get update -qq
    local n
    for n in "${need[@]}"; do
        case $n in
        nginx)
            # nginx-light is the smallest build (static files, return); newer Debian dropped it.
            if apt-cache show nginx-light >/dev/null 2>&1; then pkgs+=(nginx-light); else pkgs+=(nginx); fi
            ;;
        taskset) pkgs+=(util-linux) ;;
        python3) pkgs+=(python3-minimal) ;;
        *) pkgs+=("$n") ;;
        esac
    done
    # Packages must not start system services (nginx on :80): when no policy-rc.d forbids it
    # already, install one that does for the length of the install.
    local policy=/usr/sbin/policy-rc.d added_policy=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
        "${sudo[@]}" chmod 755 "$policy"
        added_policy=1
    fi
    local rc=0
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "${pkgs[@]}" >&2 || rc=$?
    ((added_policy)) && "${sudo[@]}" rm -f "$policy"
    ((rc == 0)) || die "apt-get install ${pkgs[*]} failed"
}

# oha: a second anchor. Installed from crates.io by the bench only (never by CI); optional.
OHA=""
install_oha() {
    [[ ${BENCH_SKIP_OHA:-0} == 1 ]] && return 0
    if [[ -n ${BENCH_OHA:-} ]]; then
        OHA=$BENCH_OHA
    elif command -v oha >/dev/null; then
        OHA=$(command -v oha)
    else
        local root=${BENCH_OHA_ROOT:-$ROOT/target/bench-tools}
        if [[ ! -x $root/bin/oha ]]; then
            log "installing oha (cargo install oha --locked) into $root"
            CARGO_TARGET_DIR=$root/build cargo install oha --locked --root "$root" >&2 ||
                log "warning: cargo install oha failed: oha figures will say 'not measured'"
            rm -rf "$root/build"
        fi
        [[ -x $root/bin/oha ]] && OHA=$root/bin/oha
    fi
    [[ -n $OHA ]] && log "oha: $("$OHA" --version 2>/dev/null | head -1)"
    return 0
}

NGINX=""
HAPROXY=""
find_tools() {
    NGINX=$(command -v nginx || echo /usr/sbin/nginx)
    HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
    [[ -x $NGINX && -x $HAPROXY ]] || die "nginx/haproxy not found"
    command -v wrk >/dev/null || die "wrk not found"
}

# ---------------------------------------------------------------------------------------------
# Processes: everything started is recorded and stopped by the exit trap.
# ---------------------------------------------------------------------------------------------
PIDS=()
TMP=""
stop_pid() {
    local pid=$1 i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 60; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
forget_pid() {
    local keep=() p
    for p in "${PIDS[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
    PIDS=("${keep[@]}")
}
stop_all() {
    local pid
    for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
    PIDS=()
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    exec 2>&3
    stop_all
    # nginx workers die with their master; these catch a master that went astray.
    local f
    [[ -n $TMP ]] && for f in "$TMP"/*.pid; do
        [[ -f $f ]] || continue
        local p
        p=$(cat "$f" 2>/dev/null || true)
        [[ -n $p ]] && kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null || true
    done
    if [[ -n $TMP && -d $TMP ]]; then
        if [[ ${BENCH_KEEP_TMP:-0} == 1 || $rc != 0 ]]; then
            log "raw reports and logs kept in $TMP"
        else
            rm -rf "$TMP"
        fi
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PY() { python3 "$ROOT/scripts/bench_util.py" "$@"; }

# start NAME CMD... : runs CMD on the server core in the background, output to $TMP/NAME.log;
# the pid goes to LAST_PID.
LAST_PID=""
start() {
    local name=$1
    shift
    taskset -c "$SERVER_CPU" "$@" >"$TMP/$name.log" 2>&1 &
    LAST_PID=$!
    PIDS+=("$LAST_PID")
}

# The first "http=ADDR" (and "admin=ADDR") a workload prints once bound.
wait_listening() {
    local name=$1 pid=$2 i
    for ((i = 0; i < 100; i++)); do
        if grep -q 'listening http=' "$TMP/$name.log" 2>/dev/null; then return 0; fi
        kill -0 "$pid" 2>/dev/null || die "$name exited: $(tail -5 "$TMP/$name.log")"
        sleep 0.1
    done
    die "$name did not print its address: $(tail -5 "$TMP/$name.log")"
}
addr_of() { grep -o "$2=[0-9.:]*" "$TMP/$1.log" | head -1 | cut -d= -f2; }

start_flagsvc() { # NAME [extra args]; sets FLAGSVC_ADDR
    local name=$1
    shift
    start "$name" "$BIN/flagsvc" --listen 127.0.0.1:0 --service-time fixed:0ms "$@"
    wait_listening "$name" "$LAST_PID"
    FLAGSVC_ADDR=$(addr_of "$name" http)
}
start_sidecar() { # NAME UPSTREAM_ADDR [extra args]; sets SIDECAR_ADDR SIDECAR_ADMIN SIDECAR_PID
    local name=$1 upstream=$2
    shift 2
    start "$name" env RUST_LOG=warn "$BIN/sidecar" --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 \
        --upstream "http://$upstream" "$@"
    SIDECAR_PID=$LAST_PID
    wait_listening "$name" "$LAST_PID"
    SIDECAR_ADDR=$(addr_of "$name" http)
    SIDECAR_ADMIN=$(addr_of "$name" admin)
}

start_nginx() { # sets NGINX_ADDR
    local port
    port=$(PY freeport)
    mkdir -p "$TMP/nginx"
    cat >"$TMP/nginx/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $TMP/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 10000000;
    keepalive_timeout 75s;
    client_body_temp_path $TMP/nginx/body;
    proxy_temp_path $TMP/nginx/proxy;
    fastcgi_temp_path $TMP/nginx/fastcgi;
    uwsgi_temp_path $TMP/nginx/uwsgi;
    scgi_temp_path $TMP/nginx/scgi;
    server {
        listen 127.0.0.1:$port;
        location / {
            add_header x-pod nginx;
            return 200 "ok\n";
        }
    }
}
EOF
    start nginx "$NGINX" -p "$TMP/nginx" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf"
    NGINX_PID=$LAST_PID
    NGINX_ADDR=127.0.0.1:$port
    PY wait-port "$NGINX_ADDR" 10 || die "nginx did not start: $(tail -5 "$TMP/nginx.log" "$TMP/nginx/error.log")"
}

start_haproxy() { # UPSTREAM_ADDR; sets HAPROXY_ADDR
    local upstream=$1 port
    port=$(PY freeport)
    cat >"$TMP/haproxy.cfg" <<EOF
global
    nbthread 1
    maxconn 4096
    pidfile $TMP/haproxy.pid

defaults
    mode http
    option http-keep-alive
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout queue 5s
    timeout http-keep-alive 75s

frontend fe
    bind 127.0.0.1:$port
    default_backend be

backend be
    http-reuse always
    server flagsvc $upstream maxconn $PROXY_LIMIT
EOF
    "$HAPROXY" -c -q -f "$TMP/haproxy.cfg" >&2 || die "haproxy config invalid"
    start haproxy "$HAPROXY" -db -f "$TMP/haproxy.cfg"
    HAPROXY_PID=$LAST_PID
    HAPROXY_ADDR=127.0.0.1:$port
    PY wait-port "$HAPROXY_ADDR" 10 || die "haproxy did not start: $(tail -5 "$TMP/haproxy.log")"
}

# ---------------------------------------------------------------------------------------------
# Generators, on the client core. CPU time (user, sys, wall) goes to a .time file.
# ---------------------------------------------------------------------------------------------
# The servers of the current section, NAME=PID: each run records their CPU share.
SERVERS=()
# run_gen TIMEFILE LOGFILE CMD...: CMD on the client core, in the background so that a signal to
# this script is handled at once (the exit trap stops it); its CPU time goes to TIMEFILE, the
# servers' CPU ticks and the load average before and after to TIMEFILE's .cpu0 / .cpu1.
run_gen() {
    local tf=$1 lf=$2
    shift 2
    python3 "$ROOT/scripts/bench_util.py" rusage --servers "${SERVERS[*]}" "$tf" -- \
        taskset -c "$CLIENT_CPU" "$@" >"$lf" 2>&1 &
    local pid=$! rc=0
    PIDS+=("$pid")
    wait "$pid" || rc=$?
    forget_pid "$pid"
    return "$rc"
}
# loadgen_run OUT_PREFIX URL RATE SECONDS [extra args]: OUT_PREFIX.json (report), .pct, .time, .log
loadgen_run() {
    local out=$1 url=$2 rate=$3 secs=$4
    shift 4
    mkdir -p "$(dirname "$out")"
    run_gen "$out.time" "$out.log" "$BIN/loadgen" run --url "$url" --rate "$rate" \
        --duration "${secs}s" --connections "$CONNS" --connection-model keep-alive \
        --output text --output-file "$out.json" "$@" || die "loadgen failed ($out): $(tail -5 "$out.log")"
    [[ -s $out.json ]] || die "loadgen wrote no report ($out)"
    "$BIN/examples/report_percentiles" "$out.json" >"$out.pct"
}
# wrk_run OUT_PREFIX URL SECONDS: OUT_PREFIX.wrk, .time
wrk_run() {
    local out=$1 url=$2 secs=$3
    mkdir -p "$(dirname "$out")"
    run_gen "$out.time" "$out.wrk" wrk -t1 -c"$CONNS" -d"${secs}s" --latency "$url" ||
        die "wrk failed ($out): $(tail -5 "$out.wrk")"
}

# oha_run OUT_PREFIX URL SECONDS [extra args]: OUT_PREFIX.oha (oha's JSON), .time
oha_run() {
    local out=$1 url=$2 secs=$3
    shift 3
    mkdir -p "$(dirname "$out")"
    run_gen "$out.time" "$out.oha" "$OHA" -z "${secs}s" -c "$CONNS" --no-tui --output-format json \
        "$@" "$url" || die "oha failed ($out): $(tail -5 "$out.oha")"
}

# Contenders in round R: as given in odd rounds, reversed in even ones.
order() {
    local r=$1
    shift
    if ((r % 2 == 1)); then
        printf '%s\n' "$@"
    else
        printf '%s\n' "$@" | tac
    fi
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# ---------------------------------------------------------------------------------------------
main() {
    local started_s=$SECONDS
    install_tools
    find_tools
    install_oha
    (($(nproc) >= 2)) || log "warning: fewer than 2 cores; server and generator share one"

    # SSE streams need 2 descriptors each in the sidecar.
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    if [[ $(ulimit -n) != unlimited ]] && (($(ulimit -n) > 20000)); then ulimit -n 20000; fi
    log "open-file limit $(ulimit -n)"

    if [[ ${BENCH_SKIP_BUILD:-0} != 1 ]]; then
        # Only the data plane: the bench does not need the harness crates.
        log "building release binaries (loadgen, flagsvc, sidecar)"
        cargo build --release -p loadgen -p flagsvc -p sidecar --bins >&2
        cargo build --release -p loadgen --example stall_server --example report_percentiles >&2
    fi
    BIN=$ROOT/target/release
    for b in loadgen flagsvc sidecar; do [[ -x $BIN/$b ]] || die "missing $BIN/$b"; done
    for b in stall_server report_percentiles; do
        [[ -x $BIN/examples/$b ]] || die "missing $BIN/examples/$b"
    done

    TMP=$(mktemp -d "${TMPDIR:-/tmp}/harness-bench.XXXXXX")
    RAW=$TMP/raw
    mkdir -p "$RAW"
    log "work dir $TMP"
    PY meta --out "$RAW/meta.json" --rounds "$ROUNDS" --run-s "$RUN_S" --cpu-s "$CPU_S" \
        --stall-rounds "$STALL_ROUNDS" --stall-open-s "$STALL_OPEN_S" \
        --stall-closed-s "$STALL_CLOSED_S" --stall-rps "$STALL_RPS" --sse-steps "$SSE_STEPS" \
        --connections "$CONNS" --proxy-limit "$PROXY_LIMIT" --cpu-rps "$CPU_RPS" \
        --fixed-rates "${FIXED_RATES[*]}" --server-cpu "$SERVER_CPU" --client-cpu "$CLIENT_CPU" \
        --nginx "$NGINX" --haproxy "$HAPROXY" --oha "${OHA:-}"

    local r c rate
    # --- 1 and 2: loadgen vs wrk against nginx; loadgen CPU per request at a fixed rate ------
    start_nginx
    SERVERS=("nginx=$NGINX_PID")
    log "nginx at $NGINX_ADDR"
    # Warm-up (not recorded).
    taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d1s "http://$NGINX_ADDR/" >/dev/null 2>&1 || true
    local f1=(wrk loadgen) f2=(loadgen)
    [[ -n $OHA ]] && f1=(wrk oha loadgen) && f2=(loadgen oha)
    for ((r = 1; r <= ROUNDS; r++)); do
        for c in $(order "$r" "${f1[@]}"); do
            log "1/5 max rps vs nginx: round $r/$ROUNDS $c"
            case $c in
            wrk) wrk_run "$RAW/f1/wrk/r$r" "http://$NGINX_ADDR/" "$RUN_S" ;;
            oha) oha_run "$RAW/f1/oha/r$r" "http://$NGINX_ADDR/" "$RUN_S" ;;
            loadgen) loadgen_run "$RAW/f1/loadgen/r$r" "http://$NGINX_ADDR/" max "$RUN_S" ;;
            esac
        done
        for c in $(order "$r" "${f2[@]}"); do
            log "2/5 CPU per request at $CPU_RPS rps: round $r/$ROUNDS $c"
            case $c in
            loadgen) loadgen_run "$RAW/f2/loadgen/r$r" "http://$NGINX_ADDR/" "$CPU_RPS" "$CPU_S" ;;
            oha) oha_run "$RAW/f2/oha/r$r" "http://$NGINX_ADDR/" "$CPU_S" -q "$CPU_RPS" --latency-correction ;;
            esac
        done
    done
    stop_all
    SERVERS=()

    # --- 3: coordinated omission: 1 s stall every 10 s --------------------------------------
    start stall "$BIN/examples/stall_server" 127.0.0.1:0 10s 1s
    SERVERS=("stall=$LAST_PID")
    wait_listening stall "$LAST_PID"
    local stall_addr
    stall_addr=$(addr_of stall http)
    log "stall server at $stall_addr"
    for ((r = 1; r <= STALL_ROUNDS; r++)); do
        for c in $(order "$r" open closed); do
            log "3/5 stall test: round $r/$STALL_ROUNDS $c loop"
            case $c in
            open) loadgen_run "$RAW/f3/open/r$r" "http://$stall_addr/" "$STALL_RPS" "$STALL_OPEN_S" ;;
            closed) loadgen_run "$RAW/f3/closed/r$r" "http://$stall_addr/" max "$STALL_CLOSED_S" ;;
            esac
        done
    done
    stop_all

    # --- 4: sidecar vs HAProxy, 32 in flight, in front of flagsvc -----------------------------
    start_flagsvc flagsvc
    local up=$FLAGSVC_ADDR flagsvc_pid=$LAST_PID
    start_sidecar sidecar "$up" --max-concurrency "$PROXY_LIMIT" --queue-size 4096 --queue-timeout 5s
    start_haproxy "$up"
    SERVERS=("flagsvc=$flagsvc_pid" "sidecar=$SIDECAR_PID" "haproxy=$HAPROXY_PID")
    log "flagsvc $up, sidecar $SIDECAR_ADDR, haproxy $HAPROXY_ADDR"
    declare -A target=(
        [direct]="http://$up/flags/bench"
        [sidecar]="http://$SIDECAR_ADDR/flags/bench"
        [haproxy]="http://$HAPROXY_ADDR/flags/bench"
    )
    for c in direct sidecar haproxy; do # warm-up (not recorded)
        taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d1s "${target[$c]}" >/dev/null 2>&1 || true
    done
    for ((r = 1; r <= ROUNDS; r++)); do
        for c in $(order "$r" sidecar haproxy); do
            log "4/5 max rps through $c: round $r/$ROUNDS"
            loadgen_run "$RAW/f4/max/$c/r$r" "${target[$c]}" max "$RUN_S"
        done
        for rate in "${FIXED_RATES[@]}"; do
            for c in $(order "$r" direct sidecar haproxy); do
                log "4/5 p99 at $rate rps via $c: round $r/$ROUNDS"
                loadgen_run "$RAW/f4/rate$rate/$c/r$r" "${target[$c]}" "$rate" "$RUN_S"
            done
        done
    done
    stop_all
    SERVERS=()

    # --- 5: SSE streams held through the sidecar ------------------------------------------------
    local nofile max_streams n
    nofile=$(ulimit -n)
    [[ $nofile == unlimited ]] && nofile=1000000
    max_streams=$(((nofile - 256) / 2))
    for n in $SSE_STEPS; do
        if ((n > max_streams)); then
            log "5/5 SSE: $n streams need more than the open-file limit $nofile allows; trying $max_streams"
            n=$max_streams
        fi
        sse_step "$n"
    done

    PY report --raw "$RAW" --out-dir "$OUT_DIR" --readme "$README" \
        --elapsed-s $((SECONDS - started_s))
    log "done in $((SECONDS - started_s)) s"
}

# One SSE step: fresh flagsvc and sidecar, RSS before, N streams opened by loadgen, RSS held.
sse_step() {
    local n=$1 out=$RAW/f5/s$1
    mkdir -p "$out"
    log "5/5 SSE: $n streams through the sidecar"
    start_flagsvc "sse-flagsvc-$n" --sse-interval 1s
    local up=$FLAGSVC_ADDR flagsvc_pid=$LAST_PID
    start_sidecar "sse-sidecar-$n" "$up" --max-concurrency $((n + 1000)) --queue-size 0 \
        --queue-timeout 0 --upstream-timeout 30s
    local pid=$SIDECAR_PID
    # Warm the sidecar with ordinary requests so the baseline has its runtime and pools set up.
    taskset -c "$CLIENT_CPU" "$BIN/loadgen" run --url "http://$SIDECAR_ADDR/flags/warm" --rate 500 \
        --duration 1s --connections 8 --output json >/dev/null 2>&1 || true
    sleep 0.5
    local rss_before flagsvc_before
    rss_before=$(rss_kb "$pid")
    flagsvc_before=$(rss_kb "$flagsvc_pid")
    taskset -c "$CLIENT_CPU" "$BIN/loadgen" run --url "http://$SIDECAR_ADDR/flags/x" --rate 0 \
        --duration 60s --sse-streams "$n" --sse-url "http://$SIDECAR_ADDR/stream" \
        --connections 1 --output text --output-file "$out/loadgen.json" >"$out/loadgen.log" 2>&1 &
    local lg=$!
    PIDS+=("$lg")
    local t0=$SECONDS open=0 peak=0
    # Wait until every stream is open (or 20 s), then let it settle and read the RSS.
    while ((SECONDS - t0 < 20)); do
        open=$(PY metric "http://$SIDECAR_ADMIN/metrics" sidecar_streams_open || echo 0)
        ((open > peak)) && peak=$open
        ((open >= n)) && break
        kill -0 "$lg" 2>/dev/null || break
        sleep 0.5
    done
    local open_s=$((SECONDS - t0))
    sleep 3
    open=$(PY metric "http://$SIDECAR_ADMIN/metrics" sidecar_streams_open || echo 0)
    local rss_after flagsvc_after
    rss_after=$(rss_kb "$pid")
    flagsvc_after=$(rss_kb "$flagsvc_pid")
    local fds
    fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
    # End the generator early (SIGTERM: partial report; it closes its streams) and time how long
    # the sidecar takes to release every stream's slot (sidecar_streams_open back to 0, polled
    # every 20 ms for at most 10 s): an upper bound that includes the generator's own shutdown.
    local t_kill release_ms="" left=$open
    t_kill=$(date +%s%N)
    kill -TERM "$lg" 2>/dev/null || true
    for ((i = 0; i < 500; i++)); do
        left=$(PY metric "http://$SIDECAR_ADMIN/metrics" sidecar_streams_open || echo -1)
        if ((left == 0)); then
            release_ms=$((($(date +%s%N) - t_kill) / 1000000))
            break
        fi
        sleep 0.02
    done
    wait "$lg" 2>/dev/null || true
    PY write-json "$out/step.json" streams="$n" open_after_s="$open_s" streams_open="$open" \
        peak_open="$peak" rss_before_kb="$rss_before" rss_after_kb="$rss_after" sidecar_fds="$fds" \
        flagsvc_rss_before_kb="$flagsvc_before" flagsvc_rss_after_kb="$flagsvc_after" \
        release_ms="$release_ms" streams_left="$left"
    stop_all
}

main "$@"
