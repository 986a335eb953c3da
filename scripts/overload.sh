#!/usr/bin/env bash
# The sidecar under 10x overload (bounded queue, 60 s) and with the incident's unbounded queue:
# builds the sidecar and loadgen (debug, CARGO_BUILD_JOBS=1 unless set) and runs
# scripts/overload.py, which writes results/overload/<date>.md and .json. It loads the machine
# for about two minutes. Extra arguments go to overload.py (e.g. --seconds 30).
# Exit 1 when a bound did not hold (RSS >= 64 MiB, the limit exceeded at the upstream, or a
# /metrics or /readyz sample unanswered).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
cargo build -q -p sidecar -p loadgen --bins
mkdir -p results/overload
python3 scripts/overload.py --bins target/debug \
  --out "results/overload/$(date -u +%Y-%m-%d).md" "$@"
