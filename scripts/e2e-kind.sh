#!/usr/bin/env bash
# make e2e-kind: the shipped scenarios the kind target can run, on a real kind cluster.
# Needs Docker, kind >= v0.33.0 and internet (the node image is pulled). Builds the images,
# creates the clusters harness-topology-skew and harness-rollout-502 from `harness kind-config`,
# runs the e2e_kind test against them (HARNESS_E2E_KIND=1): topology-skew's variants and
# rollout-502's (incident 1, fixed 0, distroless 1, slow-registration 1, readiness-gate 0), and
# deletes the clusters (KEEP_CLUSTER=1 keeps them).
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
scenarios=(topology-skew rollout-502)

cleanup() {
    rm -f "$config"
    if [ -z "${KEEP_CLUSTER:-}" ]; then
        for scenario in "${scenarios[@]}"; do
            kind delete cluster --name "harness-$scenario" || true
        done
    fi
}
trap cleanup EXIT
for scenario in "${scenarios[@]}"; do
    cluster="harness-$scenario"
    if ! kind get clusters 2>/dev/null | grep -qx "$cluster"; then
        cargo run -q -p harness -- kind-config "scenarios/$scenario.yaml" --host-cpus "$host_cpus" --output "$config"
        kind create cluster --config "$config" --wait 5m
    fi
done
HARNESS_E2E_KIND=1 cargo test -p harness --test e2e_kind -- --nocapture
