# trawl — the commands a person (and CI) runs. See README.md.
CARGO ?= cargo

.PHONY: all deps build demo test pytest python memtest lint fmt bench synthweb clean

all: build

## ISA-L's development files: trawl links the system's libisal for its WARC gzip
## compressor (docs/warc.md). Installed with apt-get (as root, or through sudo) when
## missing; elsewhere it says what to install.
deps:
	@if [ -e /usr/include/isa-l/igzip_lib.h ] || [ -e /usr/include/isa-l.h ] || dpkg -s libisal-dev >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  echo "installing libisal-dev (ISA-L, the WARC gzip compressor trawl links)"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq libisal-dev; \
	else echo "trawl needs ISA-L's development files (libisal-dev, isa-l-devel, isa-l): install them" >&2; exit 1; fi

build: deps
	$(CARGO) build --workspace --release

## Build (release), crawl a small synthetic web on loopback with live progress, judge the
## crawl with synthweb's referee and print a summary (tools/demo.sh; about 2 minutes).
demo: deps
	$(CARGO) build --workspace --release
	$(NO_PROXY_ENV) sh tools/demo.sh

## The whole test suite (the README's test command; .ci/run calls it): the module-graph
## lint's own tests (tools/modgraph/test_check.py, on made-up crates), then cargo's.
## The tests crawl loopback servers; trawl follows the proxy environment variables as
## curl does (docs/network.md), so a machine whose environment names a proxy (for its
## package downloads) would send the tests' crawls to it. The test commands run without
## them; what needs the network (pip, cargo's downloads) ran before, with them.
NO_PROXY_ENV := env -u http_proxy -u https_proxy -u HTTPS_PROXY -u all_proxy -u ALL_PROXY \
  -u no_proxy -u NO_PROXY

test: deps .venv/bin/warcio .venv/bin/maturin
	python3 -m unittest discover -s tools/modgraph -p 'test_*.py'
	WARCIO=$(CURDIR)/.venv/bin/warcio $(NO_PROXY_ENV) $(CARGO) test --workspace --all-features
	$(NO_PROXY_ENV) $(MAKE) pytest PYPROFILE=dev

## Where cargo builds (CARGO_TARGET_DIR, else ./target): the Python tests find synthweb
## there, and maturin builds the wheel there.
TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
## The wheel's cargo profile. `make test` passes `dev`: the engine compiled for
## `cargo test` is reused (only the extension module links), so CI compiles the engine
## once; `make python` alone builds an optimised wheel.
PYPROFILE ?= release
WHEELS = $(TARGET_DIR)/wheels-$(PYPROFILE)

## The Python package (crates/trawl-py, docs/python.md): an abi3 wheel (CPython >= 3.9)
## built with maturin and installed in .venv. It links the system's ISA-L as the binary
## does: a local wheel (tagged linux), not a manylinux one.
python: deps .venv/bin/maturin
	rm -rf $(WHEELS)
	CARGO_TARGET_DIR=$(TARGET_DIR) .venv/bin/maturin build --quiet --profile $(PYPROFILE) \
	  -m crates/trawl-py/Cargo.toml --out $(WHEELS)
	.venv/bin/pip install --quiet --force-reinstall --no-deps $(WHEELS)/trawl-*.whl

## The Python package's tests (crates/trawl-py/tests, pytest) against synthweb on
## loopback, and mypy --strict on docs/python.md's example, after `make python`.
pytest: python
	$(CARGO) build -p synthweb
	SYNTHWEB=$(TARGET_DIR)/debug/synthweb .venv/bin/python -m pytest -q crates/trawl-py/tests

## The frontier memory acceptance run (tests/crawl_memory.rs, ignored in `make test`):
## release trawl + synthweb, `--memory 256M`, tens of millions of queued URLs; peak RSS
## less presence bits must stay under 256 MiB (about 3 minutes, 2.5 GB of disk in /tmp).
memtest: deps
	$(CARGO) build --release -p synthweb -p trawl
	$(NO_PROXY_ENV) $(CARGO) test --release --test crawl_memory -- --ignored --nocapture

## warcio (PyPI) checks every WARC file the tests write; it lives in a local venv.
.venv/bin/warcio:
	python3 -m venv .venv && .venv/bin/pip install --quiet warcio

## maturin builds the Python package; pytest and mypy check it (same venv).
.venv/bin/maturin: .venv/bin/warcio
	.venv/bin/pip install --quiet maturin pytest mypy

## The module graph's rules (tools/modgraph/check.py with tools/modgraph/rules.toml: no
## import cycle among the modules of any level, the crawl core closed, the frontier
## clock-free, no never arrow; a re-export of another top-level module's item outside
## src/lib.rs fails), every path the docs name exists (tools/docpaths/check.py), then
## the format check and clippy with warnings as errors, over every target (benches
## included, so they keep compiling).
lint: deps
	python3 tools/modgraph/check.py
	python3 tools/docpaths/check.py
	python3 tools/grafana/dashboard.py --check
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --all-features -- -D warnings

fmt:
	$(CARGO) fmt --all

## Criterion micro-benchmarks (results under target/criterion; figures go to docs/benchmarks.md).
bench:
	$(CARGO) bench --workspace

## Build the synthetic web server (tools/synthweb).
synthweb:
	$(CARGO) build --release -p synthweb

clean:
	$(CARGO) clean
