# harness — common entry points. `make help` lists them.
#   make scenario-topology-skew [VARIANT=incident|fixed] [TARGET=local]
#   make scenario-rollout-502 / make scenario-autoscaler / make scenario-ingress-hot-podding
#   make scenario-zone-latency [VARIANT=no-routing|topology-auto|prefer-same-zone]
#   make test    (format, lints, every test)
#   make bench   (data-plane benchmarks; writes results/bench/)
#   make images  (one Docker image per workload for the kind target; needs a Docker engine)
#   make e2e-kind  (the kind target on a real kind cluster: needs Docker, kind and internet)
#   make fuzz    (each fuzz target ~1 min: FUZZ_SECONDS=N for longer; results/fuzz/)
#   make overload  (the sidecar at 10x overload; results/overload/)
#   make report-screenshot  (renders the recorded reports in headless Chromium; refreshes docs/)
#   make soak    (SOAK_CASES random scenarios, default 200; writes results/soak/<date>-seed<seed>.md)

CARGO   ?= cargo
TARGET  ?= local
VARIANT ?= incident
SEED    ?= 1
OUT     ?=
RUN_ARGS = --target $(TARGET) --variant $(VARIANT) --seed $(SEED) $(if $(OUT),--out $(OUT),)
HARNESS  = ./target/release/harness

.PHONY: help build test lint fmt bench clean images e2e-kind fuzz overload scenario-% scenario-autoscaler report-screenshot soak

help:
	@sed -n '2,13p' Makefile

build:
	$(CARGO) build --release --workspace --bins

## Short names for the shipped scenarios.
scenario-autoscaler: scenario-autoscaler-blind-spot
## zone-latency's failing configuration is its `no-routing` variant (it has no `incident`).
scenario-zone-latency: VARIANT = no-routing

## scenario-NAME runs scenarios/NAME.yaml on $(TARGET) with $(VARIANT); exit code is the verdict.
scenario-%: build
	$(HARNESS) run scenarios/$*.yaml $(RUN_ARGS)

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## The scenario tests run the workload binaries, so they are built first. Where a Docker engine
## answers, the images are built (visibly, once) before the tests, and the workload-container
## test must run (HARNESS_REQUIRE_DOCKER); elsewhere it skips and says so.
test: lint
	$(CARGO) build --workspace --bins
	@if docker version >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory images && HARNESS_REQUIRE_DOCKER=1 $(CARGO) test --workspace --no-fail-fast; \
	else \
	  echo "make test: no Docker engine answers: the workload-container test will skip"; \
	  $(CARGO) test --workspace --no-fail-fast; \
	fi

## One image per workload: FROM scratch + the statically linked binary, tagged by its SHA-256
## (docs/kind-target.md#images). Writes target/harness-images.json.
images:
	$(CARGO) run -q -p harness -- images

## The shipped scenarios the kind target can run, on a real kind cluster it creates and deletes
## (docs/kind-target.md#a-run-on-kind). Not part of `make test`: no cluster can be created on the
## build machines.
e2e-kind:
	bash scripts/e2e-kind.sh

fmt:
	$(CARGO) fmt --all

## Renders every recorded run's report in headless Chromium (the report_render test), keeps the
## rendered directories with a screenshot each in results/report-render/, and copies the
## topology-skew incident's into docs/ for the README.
report-screenshot:
	rm -rf results/report-render
	HARNESS_REPORT_SCREENSHOTS=$(CURDIR)/results/report-render HARNESS_SCREENSHOT_HEIGHT=2400 \
		$(CARGO) test -p harness --test report_render
	cp results/report-render/topology-skew-incident/report.png docs/report-topology-skew.png

bench:
	bash scripts/bench.sh

## Coverage-guided fuzzing (cargo-fuzz, installed when missing): every target for FUZZ_SECONDS
## (default 60) from its seeds; the outcome goes to results/fuzz/<date>.md (docs/fuzzing.md).
fuzz:
	bash scripts/fuzz.sh

## The sidecar under 10x overload for 60 s, then with the unbounded queue of the incident;
## figures in results/overload/<date>.md. Loads the machine for about two minutes.
overload:
	bash scripts/overload.sh

clean:
	$(CARGO) clean
	find results -mindepth 1 -maxdepth 1 ! -name README.md ! -name bench ! -name soak -exec rm -rf {} +

## Random valid scenarios on the local target (harness/cli/tests/random_scenarios.rs): each must
## exit 0 or 1, pass its self-audit and agree with `harness plan`; failures are shrunk and
## written with the report (results/soak/<date>-seed<seed>.md, <date>-seed<seed>.failures/). SOAK_SEED repeats a soak.
SOAK_CASES ?= 200
SOAK_SEED  ?= $(shell date +%Y%m%d)
soak:
	$(CARGO) build --workspace --bins
	HARNESS_SOAK_CASES=$(SOAK_CASES) HARNESS_SOAK_SEED=$(SOAK_SEED) \
		HARNESS_SOAK_REPORT=$(CURDIR)/results/soak/$(shell date +%Y-%m-%d)-seed$(SOAK_SEED).md \
		$(CARGO) test -p harness --test random_scenarios -- --nocapture random_scenarios_run_clean
