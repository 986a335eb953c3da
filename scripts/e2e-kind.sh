#!/usr/bin/env bash
# make e2e-kind: the shipped scenarios the kind target can run, on a real kind cluster.
# Needs Docker, kind >= v0.33.0 and internet (the node image is pulled). Builds the images,
# creates the cluster harness-topology-skew from `harness kind-config`, runs the e2e_kind test
# against it (HARNESS_E2E_KIND=1), deletes it, then does the same for autoscaler-blind-spot on
# harness-autoscaler-blind-spot (KEEP_CLUSTER=1 keeps the clusters).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in docker kind; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "e2e-kind: $tool is not installed (kind: https://kind.sigs.k8s.io/docs/user/quick-start/#installation; Docker Engine 20.10+)" >&2
        exit 3
    fi
done

cargo build --workspace --bins
cargo run -q -p harness -- images
host_cpus="${HARNESS_E2E_HOST_CPUS:-$(docker info --format '{{.NCPU}}')}"
export HARNESS_E2E_HOST_CPUS="$host_cpus"
config="$(mktemp -t harness-kind-XXXXXX.yaml)"
cargo run -q -p harness -- kind-config scenarios/topology-skew.yaml --host-cpus "$host_cpus" --output "$config"

cluster=harness-topology-skew
cleanup() {
    rm -f "$config"
    if [ -z "${KEEP_CLUSTER:-}" ]; then
        kind delete cluster --name "$cluster" || true
    fi
}
trap cleanup EXIT
if ! kind get clusters 2>/dev/null | grep -qx "$cluster"; then
    kind create cluster --config "$config" --wait 5m
fi
HARNESS_E2E_KIND=1 cargo test -p harness --test e2e_kind topology_skew_on_kind -- --nocapture
if [ -z "${KEEP_CLUSTER:-}" ]; then
    kind delete cluster --name "$cluster" || true
fi

# autoscaler-blind-spot: its own cluster (the HPA controller's flags are in its kind config);
# the run installs prometheus-operator and KEDA from their pinned releases, which needs their
# sha256 recorded in harness/kind/third-party.yaml (`harness pins lock`; the run refuses with
# exit 2 and says so otherwise).
if grep -Eq '^[[:space:]]*sha256:[[:space:]]*null' harness/kind/third-party.yaml; then
    echo "e2e-kind: autoscaler-blind-spot not run: harness/kind/third-party.yaml has pins without a sha256; record them with 'cargo run -p harness -- pins lock' (needs internet), review the diff, commit, and run again" >&2
    exit 2
fi
cluster=harness-autoscaler-blind-spot
cargo run -q -p harness -- kind-config scenarios/autoscaler-blind-spot.yaml --host-cpus "$host_cpus" --output "$config"
if ! kind get clusters 2>/dev/null | grep -qx "$cluster"; then
    kind create cluster --config "$config" --wait 5m
fi
HARNESS_E2E_KIND=1 cargo test -p harness --test e2e_kind autoscaler_blind_spot_on_kind -- --nocapture
