#!/usr/bin/env bash
# make e2e-kind: the shipped scenarios the kind target can run, on a real kind cluster.
# Needs Docker, kind >= v0.33.0 and internet (the node images and the pinned third-party
# releases are pulled). Builds the images, then for each scenario creates its cluster
# harness-<scenario> from `harness kind-config`, runs that scenario's e2e_kind test against it
# (HARNESS_E2E_KIND=1) and deletes it (KEEP_CLUSTER=1 keeps the clusters):
# - topology-skew (incident 1, fixed 0);
# - rollout-502 (incident 1, fixed 0, distroless 1, slow-registration 1, readiness-gate 0);
# - ingress-hot-podding at --time-scale 1 with the real haproxy-ingress v0.16 controller
#   (v0-16-roundrobin-ip 1, v0-16-roundrobin-random 0, v0-16 0, v0-16-default completes with its
#   verdict printed: HAProxy 2.8's random(2) is unverified; incident and
#   fixed, v0.6 and v0.7, refused with exit 2), whose image is pulled by its pinned digest;
# - autoscaler-blind-spot (incident 1, fixed 0), which installs prometheus-operator and KEDA from
#   their pinned releases.
# The last two need the pins recorded in harness/kind/third-party.yaml (`harness pins lock`:
# the releases' sha256, the image's digest); without them this script stops with exit 2 and
# says so. E2E_LOCK_PINS=1 records missing pins first, for this run only (trust on first use:
# what was downloaded now is what gets checked), and writes the change to
# results/e2e-kind/third-party.lock.diff for review; commit it to pin those hashes for
# everyone. The GitHub workflow sets it and keeps the diff with its results.
set -euo pipefail
cd "$(dirname "$0")/.."

unlocked() {
    grep -Eq '^[[:space:]]*(sha256|digest):[[:space:]]*null' harness/kind/third-party.yaml
}

for tool in docker kind; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "e2e-kind: $tool is not installed (kind: https://kind.sigs.k8s.io/docs/user/quick-start/#installation; Docker Engine 20.10+)" >&2
        exit 3
    fi
done

if [ -n "${E2E_LOCK_PINS:-}" ] && unlocked; then
    echo "e2e-kind: E2E_LOCK_PINS=1: recording the missing pins for this run (trust on first use)" >&2
    cargo run -q -p harness -- pins lock
    mkdir -p results/e2e-kind
    git diff -- harness/kind/third-party.yaml | tee results/e2e-kind/third-party.lock.diff >&2
fi
# After any lock: the pin table is built into the binary.
cargo build --workspace --bins
cargo run -q -p harness -- images
host_cpus="${HARNESS_E2E_HOST_CPUS:-$(docker info --format '{{.NCPU}}')}"
export HARNESS_E2E_HOST_CPUS="$host_cpus"
config="$(mktemp -t harness-kind-XXXXXX.yaml)"
cluster=""

cleanup() {
    rm -f "$config"
    if [ -z "${KEEP_CLUSTER:-}" ] && [ -n "$cluster" ]; then
        kind delete cluster --name "$cluster" || true
    fi
}
trap cleanup EXIT

# run_on_kind SCENARIO TEST: the scenario's cluster, its test, the cluster deleted.
run_on_kind() {
    cluster="harness-$1"
    if ! kind get clusters 2>/dev/null | grep -qx "$cluster"; then
        cargo run -q -p harness -- kind-config "scenarios/$1.yaml" --host-cpus "$host_cpus" --output "$config"
        kind create cluster --config "$config" --wait 5m
    fi
    HARNESS_E2E_KIND=1 cargo test -p harness --test e2e_kind "$2" -- --nocapture --exact
    if [ -z "${KEEP_CLUSTER:-}" ]; then
        kind delete cluster --name "$cluster" || true
    fi
    cluster=""
}

run_on_kind topology-skew topology_skew_on_kind
run_on_kind rollout-502 rollout_502_on_kind

if unlocked; then
    echo "e2e-kind: ingress-hot-podding and autoscaler-blind-spot not run: harness/kind/third-party.yaml has pins without a sha256 or digest; record them with 'cargo run -p harness -- pins lock' (needs internet), review the diff, commit, and run again (or E2E_LOCK_PINS=1 for this run only)" >&2
    exit 2
fi
run_on_kind ingress-hot-podding ingress_hot_podding_on_kind
run_on_kind autoscaler-blind-spot autoscaler_blind_spot_on_kind
