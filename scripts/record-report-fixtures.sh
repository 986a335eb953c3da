#!/usr/bin/env bash
# Records the run data the report tests render (harness/cli/tests/report_render.rs): for each
# shipped scenario, its incident and fixed variants (rollout-502's readiness-gate too; for
# zone-latency, no-routing and topology-auto) are run
# for real on the local target and their summary.json and timeline.jsonl are kept under
# harness/cli/tests/fixtures/runs/.
#
#   scripts/record-report-fixtures.sh            # uses target/debug/harness (cargo build first)
#   HARNESS=target/release/harness scripts/record-report-fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/.."

HARNESS=${HARNESS:-target/debug/harness}
OUT=harness/cli/tests/fixtures/runs
if [ ! -x "$HARNESS" ]; then
    echo "error: $HARNESS is not built; run \`cargo build --workspace --bins\` first" >&2
    exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for run in topology-skew:incident topology-skew:fixed \
           rollout-502:incident rollout-502:fixed rollout-502:readiness-gate \
           autoscaler-blind-spot:incident autoscaler-blind-spot:fixed \
           ingress-hot-podding:incident ingress-hot-podding:fixed \
           zone-latency:no-routing zone-latency:topology-auto; do
    scenario=${run%%:*}
    variant=${run##*:}
    dir="$work/$scenario-$variant"
    echo "== $scenario ($variant)"
    # Exit 1 is a failed expectation: the incident variants are meant to fail.
    code=0
    "$HARNESS" run "scenarios/$scenario.yaml" --variant "$variant" --seed 7 --out "$dir" \
        >"$work/$scenario-$variant.log" 2>&1 || code=$?
    if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then
        echo "error: $scenario $variant exited $code; see its log:" >&2
        cat "$work/$scenario-$variant.log" >&2
        exit 3
    fi
    mkdir -p "$OUT/$scenario-$variant"
    cp "$dir/summary.json" "$dir/timeline.jsonl" "$OUT/$scenario-$variant/"
done
echo "recorded into $OUT"
