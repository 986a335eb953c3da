#!/usr/bin/env bash
# make e2e-kind: the shipped scenarios the kind target can run, on a real kind cluster.
# Needs Docker, kind >= v0.33.0 and internet (the node images and the pinned third-party
# releases are pulled). Builds the harness and the images, then for each scenario creates its
# cluster harness-<scenario> from `harness kind-config`, runs every variant on it with
# `harness run --target kind --cluster harness-<scenario>` and deletes it (KEEP_CLUSTER=1 keeps
# the clusters). Each scenario and each variant runs whatever happened before it: a failed
# pin lock, cluster or variant is a row of the table at the end, never the end of the script.
#
# Expected exit codes (0 passed, 1 an expectation failed, 2 refused, `any` = 0 or 1):
# - topology-skew: incident 1, fixed 0;
# - rollout-502: incident 1, fixed 0, distroless 1, slow-registration 1, readiness-gate 0;
# - zone-latency: no-routing 1, topology-auto 0, prefer-same-zone 0 (tc netem in the nodes: the
#   Docker host's kernel needs sch_prio and sch_netem);
# - ingress-hot-podding at --time-scale 1 with the real haproxy-ingress v0.16 controller:
#   v0-16-roundrobin-ip 1, v0-16-roundrobin-random 0, v0-16 0, v0-16-default any (HAProxy
#   2.8's random(2) is unverified: the verdict is printed), incident and fixed 2 (v0.6 and v0.7
#   cannot run on current Kubernetes);
# - autoscaler-blind-spot: incident 1, fixed 0 (installs prometheus-operator and KEDA from their
#   pinned releases).
# The last two need the pins recorded in harness/kind/third-party.yaml (`harness pins lock`:
# the releases' sha256, the image's digest); without them their rows say so. E2E_LOCK_PINS=1
# records missing pins first, for this run only (trust on first use: what was downloaded now is
# what gets checked), and writes the change to results/e2e-kind/third-party.lock.diff for
# review; commit it to pin those hashes for everyone. The GitHub workflow sets it and keeps the
# diff with its results.
#
# The table (scenario, variant, expected, got, why) is printed and written to
# results/e2e-kind/summary.md; the exit code is 1 when any row differs from what was expected,
# 0 otherwise. The signatures behind each verdict (which pods starved, where the 502s went) are
# asserted by `HARNESS_E2E_KIND=1 cargo test -p harness --test e2e_kind` against the same
# clusters (KEEP_CLUSTER=1 first).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3

results="${E2E_RESULTS:-results/e2e-kind}"
mkdir -p "$results"
rows=()      # "scenario|variant|expected|got|why"
failed=0

row() {
    rows+=("$1|$2|$3|$4|$5")
    local ok=1
    case "$3" in
        any) [ "$4" = 0 ] || [ "$4" = 1 ] || ok=0 ;;
        *) [ "$3" = "$4" ] || ok=0 ;;
    esac
    [ "$ok" = 1 ] || failed=1
}

print_table() {
    {
        echo "| scenario | variant | expected | got | why |"
        echo "|---|---|---|---|---|"
        for r in "${rows[@]}"; do
            IFS='|' read -r s v e g w <<<"$r"
            echo "| $s | $v | $e | $g | $w |"
        done
    } | tee "$results/summary.md"
}

for tool in docker kind; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "e2e-kind: $tool is not installed (kind: https://kind.sigs.k8s.io/docs/user/quick-start/#installation; Docker Engine 20.10+)" >&2
        exit 3
    fi
done

unlocked() {
    grep -Eq '^[[:space:]]*(sha256|digest):[[:space:]]*null' harness/kind/third-party.yaml
}

pins_note=""
if [ -n "${E2E_LOCK_PINS:-}" ] && unlocked; then
    echo "e2e-kind: E2E_LOCK_PINS=1: recording the missing pins for this run (trust on first use)" >&2
    if [ -n "${E2E_HARNESS:-}" ]; then lock=("$E2E_HARNESS" pins lock); else lock=(cargo run -q -p harness -- pins lock); fi
    if ! "${lock[@]}"; then
        pins_note="harness pins lock failed (see the log); pins still missing"
    fi
    git diff -- harness/kind/third-party.yaml | tee "$results/third-party.lock.diff" >&2
fi
# After any lock: the pin table is built into the binary. E2E_HARNESS names a harness binary
# to use instead, with its images built already (the script's own test uses a scripted one).
harness="${E2E_HARNESS:-./target/debug/harness}"
if [ -z "${E2E_HARNESS:-}" ] && { ! cargo build --workspace --bins || ! cargo run -q -p harness -- images; }; then
    echo "e2e-kind: building the harness or its images failed; nothing was run" >&2
    exit 3
fi
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

# why DIR LOG: the first sentence of the run's explanation, else the last line it printed.
why() {
    local text=""
    if [ -f "$1/summary.json" ]; then
        text="$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print((s.get("explanation") or ["verdict " + s.get("verdict", "?")])[0])' "$1/summary.json" 2>/dev/null)"
    fi
    [ -n "$text" ] || text="$(tail -n 1 "$2" 2>/dev/null)"
    printf '%s' "${text//|//}" | cut -c1-160
}

# run_scenario SCENARIO "EXTRA FLAGS" VARIANT=EXPECTED...: the scenario's cluster, each variant
# on it, the cluster deleted.
run_scenario() {
    local scenario="$1" extra="$2"
    shift 2
    cluster="harness-$scenario"
    if ! kind get clusters 2>/dev/null | grep -qx "$cluster"; then
        if ! "$harness" kind-config "scenarios/$scenario.yaml" --host-cpus "$host_cpus" --output "$config" \
            || ! kind create cluster --config "$config" --wait 5m; then
            for pair in "$@"; do
                row "$scenario" "${pair%%=*}" "${pair#*=}" "-" "the cluster $cluster could not be created (see the log)"
            done
            kind delete cluster --name "$cluster" >/dev/null 2>&1 || true
            cluster=""
            return
        fi
    fi
    for pair in "$@"; do
        local variant="${pair%%=*}" expected="${pair#*=}"
        local out="$results/$scenario/$variant" log="$results/$scenario/$variant.log"
        mkdir -p "$results/$scenario"
        # shellcheck disable=SC2086 # $extra holds separate flags
        "$harness" run "scenarios/$scenario.yaml" --target kind --cluster "$cluster" \
            --variant "$variant" --seed 7 --host-cpus "$host_cpus" $extra \
            --out "$out" --replace --progress plain >"$log" 2>&1
        local got=$?
        row "$scenario" "$variant" "$expected" "$got" "$(why "$out" "$log")"
    done
    if [ -z "${KEEP_CLUSTER:-}" ]; then
        kind delete cluster --name "$cluster" || true
    fi
    cluster=""
}

run_scenario topology-skew "" incident=1 fixed=0
run_scenario rollout-502 "" incident=1 fixed=0 distroless=1 slow-registration=1 readiness-gate=0
run_scenario zone-latency "" no-routing=1 topology-auto=0 prefer-same-zone=0

ingress_variants=(v0-16-roundrobin-ip=1 v0-16-roundrobin-random=0 v0-16=0 v0-16-default=any incident=2 fixed=2)
autoscaler_variants=(incident=1 fixed=0)
if unlocked; then
    reason="${pins_note:-harness/kind/third-party.yaml has pins without a sha256 or digest: run 'cargo run -p harness -- pins lock' (needs internet), review, commit (or E2E_LOCK_PINS=1 for this run only)}"
    for pair in "${ingress_variants[@]}"; do
        row ingress-hot-podding "${pair%%=*}" "${pair#*=}" "not run" "$reason"
    done
    for pair in "${autoscaler_variants[@]}"; do
        row autoscaler-blind-spot "${pair%%=*}" "${pair#*=}" "not run" "$reason"
    done
else
    run_scenario ingress-hot-podding "--time-scale 1" "${ingress_variants[@]}"
    run_scenario autoscaler-blind-spot "" "${autoscaler_variants[@]}"
fi

echo
print_table
if [ "$failed" != 0 ]; then
    echo "e2e-kind: some runs differ from what was expected (table above, logs in $results/)" >&2
    exit 1
fi
echo "e2e-kind: every run as expected"
