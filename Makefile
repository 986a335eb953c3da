# harness — common entry points. `make help` lists them.
#   make scenario-topology-skew [VARIANT=incident|fixed] [TARGET=local]
#   make scenario-rollout-502 / make scenario-autoscaler  (same variables)
#   make test    (format, lints, every test)
#   make bench   (data-plane benchmarks; writes results/bench/)

CARGO   ?= cargo
TARGET  ?= local
VARIANT ?= incident
SEED    ?= 1
OUT     ?=
RUN_ARGS = --target $(TARGET) --variant $(VARIANT) --seed $(SEED) $(if $(OUT),--out $(OUT),)
HARNESS  = ./target/release/harness

.PHONY: help build test lint fmt bench clean scenario-% scenario-autoscaler

help:
	@sed -n '2,6p' Makefile

build:
	$(CARGO) build --release --workspace --bins

## Short names for the shipped scenarios.
scenario-autoscaler: scenario-autoscaler-blind-spot

## scenario-NAME runs scenarios/NAME.yaml on $(TARGET) with $(VARIANT); exit code is the verdict.
scenario-%: build
	$(HARNESS) run scenarios/$*.yaml $(RUN_ARGS)

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## The scenario tests run the workload binaries, so they are built first.
test: lint
	$(CARGO) build --workspace --bins
	$(CARGO) test --workspace

fmt:
	$(CARGO) fmt --all

bench:
	bash scripts/bench.sh

clean:
	$(CARGO) clean
	find results -mindepth 1 -maxdepth 1 ! -name README.md ! -name bench -exec rm -rf {} +
