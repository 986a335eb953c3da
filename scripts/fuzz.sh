#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_SECONDS (default 60) each and writes the outcome to
# results/fuzz/<date>.md. The corpus of each target starts from its seeds: the scenarios
# (scenarios/*.yaml, scenarios/testdata/*.yaml) for `scenario`; the hints fixtures
# (harness/cli/tests/fixtures/hints/*.yaml) for `hints_objects`; fuzz/seeds/<target>/ for the
# loadgen schedule and report. It is kept between runs in fuzz/corpus/ (ignored by git).
# Needs cargo-fuzz (installed when missing) and a toolchain that takes -Z flags: the nightly
# toolchain when rustup has one, else the stable one with RUSTC_BOOTSTRAP=1.
# Exit 1 when a target found a crash or a hang (its input is in fuzz/artifacts/<target>/).
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-"scenario hints_objects loadgen_schedule loadgen_report"}
JOBS=${CARGO_BUILD_JOBS:-1}
export CARGO_BUILD_JOBS=$JOBS

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked
fi
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  FUZZ=(cargo +nightly fuzz)
  toolchain="nightly ($(rustc +nightly --version))"
else
  export RUSTC_BOOTSTRAP=1
  FUZZ=(cargo fuzz)
  toolchain="stable with RUSTC_BOOTSTRAP=1 ($(rustc --version))"
fi

seed() {
  local target=$1 dir=fuzz/corpus/$1
  mkdir -p "$dir"
  case $target in
    scenario) find scenarios scenarios/testdata -maxdepth 1 -type f -name '*.yaml' \
                 -exec cp {} "$dir"/ \; ;;
    hints_objects) find harness/cli/tests/fixtures/hints -maxdepth 1 -type f -name '*.yaml' \
                 -exec cp {} "$dir"/ \; ;;
    *) find fuzz/seeds/"$target" -maxdepth 1 -type f -exec cp {} "$dir"/ \; ;;
  esac
}

date=$(date -u +%Y-%m-%d)
out=results/fuzz/$date.md
mkdir -p results/fuzz
logs_tmp=$(mktemp -d)
status=0
rows=()
for target in $TARGETS; do
  seed "$target"
  log=$logs_tmp/$target.log
  echo "fuzz: $target for ${SECONDS_EACH}s" >&2
  set +e
  (cd fuzz && "${FUZZ[@]}" run "$target" "corpus/$target" -- \
      -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1) >"$log" 2>&1
  code=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
  found=$(find "fuzz/artifacts/$target" -type f 2>/dev/null | wc -l)
  if [ "$code" -ne 0 ] || [ "$found" -ne 0 ]; then
    status=1
    verdict="FOUND: exit $code, $found artifact(s) in fuzz/artifacts/$target/"
    tail -40 "$log" >&2
  else
    verdict="0 crashes, 0 hangs"
  fi
  rows+=("| \`$target\` | ${SECONDS_EACH} s | $execs | $cov | $corpus | $verdict |")
done

{
  echo "# Fuzzing run, $date"
  echo
  echo "\`make fuzz\` (scripts/fuzz.sh): each target for ${SECONDS_EACH} s, libFuzzer via cargo-fuzz,"
  echo "toolchain $toolchain, $(nproc) CPU(s), -timeout=10 s per input (a slower one counts as a hang)."
  echo
  echo "| target | time | executions | coverage (edges) | corpus files | outcome |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} >"$out"
echo "fuzz: outcome written to $out" >&2
cat "$out"
exit $status
