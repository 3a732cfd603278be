# The VS Code extension (client-vscode/) and the real-client end-to-end tests (tests/e2e/).
#   make vsix       builds client-vscode/gradguard-<version>-<host target>.vsix, the platform-specific VSIX for this
#                   machine, carrying the server and its Python dependencies (part of `make demo`, what `make e2e`
#                   installs; `make vsix-host` is the same)
#   make vsix-all   one per VSIX_TARGETS (what a release publishes; part of `make release-check`)
#   make e2e        installs what the tests need (Debian packages, code-server, playwright-core) and runs
#                   the bundle smoke test, Neovim, and the code-server + Chromium tests (part of `make test`)
# Everything is installed idempotently; code-server is cached outside the repo in $(E2E_CACHE), the wheels
# the bundles are made of in $(BUNDLE_CACHE).

CLIENT_DIR      := client-vscode
CLIENT_VERSION  := $(shell sed -n 's/^  "version": "\(.*\)",$$/\1/p' $(CLIENT_DIR)/package.json)
CLIENT_SOURCES  := $(wildcard $(CLIENT_DIR)/src/*.ts) $(addprefix $(CLIENT_DIR)/,package.json tsconfig.json esbuild.mjs .vscodeignore README.md LICENSE images/icon.png scripts/packaged_readme.py)
CLIENT_NPM      := $(CLIENT_DIR)/node_modules/.installed

# VS Code targets whose libcst wheels PyPI has for every CPython of client-vscode/bundle/pythons.txt
# (libcst 1.9.0 has no macOS x86_64 or Windows arm64 wheels).
VSIX_TARGETS    ?= linux-x64 linux-arm64 alpine-x64 darwin-arm64 win32-x64
HOST_TARGET     := $(if $(filter aarch64 arm64,$(shell uname -m)),linux-arm64,linux-x64)
vsix_file        = $(CLIENT_DIR)/gradguard-$(CLIENT_VERSION)-$(1).vsix
VSIX_HOST       := $(call vsix_file,$(HOST_TARGET))
VSIX_ALL        := $(foreach t,$(VSIX_TARGETS),$(call vsix_file,$(t)))
BUNDLE_CACHE    ?= $(HOME)/.cache/gradguard-bundle
BUNDLE_INPUTS   := $(shell find server/gradguard -type f -not -path '*/__pycache__/*' -not -name '*.pyc') pyproject.toml \
                   $(wildcard $(CLIENT_DIR)/bundle/*) $(CLIENT_DIR)/python/launch.py $(CLIENT_DIR)/scripts/bundle_server.py
# The README with its screenshot inlined (VS Code's README view shows only https: and data: images, and a .vsix
# installed from a file has no repository to resolve relative ones against). vsce's secret scan stays on: it
# reads the 2,600 files of each target (about 27 s of CPU per VSIX here, 4 s without), and a key that slipped
# into the bundle would otherwise ship to every user.
VSCE_FLAGS      := --no-dependencies --no-rewrite-relative-links \
                   --readme-path packaged/README.md --allow-package-env-file

# code-server 4.100.3 (VS Code 1.100.3) is the last release that runs on Node 20.
CODE_SERVER_VERSION := 4.100.3
E2E_CACHE       ?= $(HOME)/.cache/gradguard-e2e
CODE_SERVER_DIR := $(E2E_CACHE)/code-server-$(CODE_SERVER_VERSION)
CODE_SERVER     := $(CODE_SERVER_DIR)/node_modules/.bin/code-server
CODE_SERVER_OK  := $(CODE_SERVER_DIR)/.installed-$(CODE_SERVER_VERSION)
E2E_NPM         := tests/e2e/node_modules/.installed
E2E_APT         := chromium neovim libkrb5-dev pkg-config ripgrep
SUDO            := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

DEMO_TARGETS += vsix
TEST_TARGETS += e2e

.PHONY: vsix vsix-host vsix-all e2e e2e-deps e2e-apt e2e-readme-shot

$(CLIENT_NPM): $(CLIENT_DIR)/package-lock.json
	cd $(CLIENT_DIR) && npm ci --no-audit --no-fund
	touch $@

# Type-checked once for all targets (vsce's prepublish only runs esbuild).
$(CLIENT_DIR)/.typechecked: $(CLIENT_NPM) $(CLIENT_SOURCES)
	cd $(CLIENT_DIR) && npx tsc --noEmit
	touch $@

# The targets share client-vscode/bundled/, so one is assembled and packaged at a time (flock, for make -j).
$(CLIENT_DIR)/gradguard-$(CLIENT_VERSION)-%.vsix: $(CLIENT_DIR)/.typechecked $(BUNDLE_INPUTS) docs/img/hover.png | $(DEMO_STAMP)
	@flock $(CLIENT_DIR)/.bundle.lock sh -ec '\
	  $(VPY) $(CLIENT_DIR)/scripts/packaged_readme.py; \
	  $(VPY) $(CLIENT_DIR)/scripts/bundle_server.py --target $* --cache $(BUNDLE_CACHE); \
	  cd $(CLIENT_DIR); \
	  npx vsce package --target $* $(VSCE_FLAGS) --out gradguard-$(CLIENT_VERSION)-$*.vsix > .vsce-$*.log 2>&1 \
	    || { cat .vsce-$*.log; exit 1; }; \
	  grep DONE .vsce-$*.log; rm -f .vsce-$*.log'

vsix: $(VSIX_HOST)

vsix-host: $(VSIX_HOST)

vsix-all: $(VSIX_ALL)

# Debian packages: the browser, the second client, and what the code-server build needs
# (kerberos headers; Debian's ripgrep instead of @vscode/ripgrep's GitHub download).
e2e-apt:
	@dpkg -s $(E2E_APT) >/dev/null 2>&1 || { \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $(E2E_APT); }

$(CODE_SERVER_OK): | e2e-apt
	CS_VERSION=$(CODE_SERVER_VERSION) tests/e2e/install-code-server.sh $(CODE_SERVER_DIR)

$(E2E_NPM): tests/e2e/package-lock.json
	cd tests/e2e && npm ci --no-audit --no-fund
	touch $@

e2e-deps: e2e-apt $(CODE_SERVER_OK) $(E2E_NPM)

e2e: setup $(VSIX_HOST) e2e-deps
	tests/e2e/run.sh $(VPY) $(CODE_SERVER) $(abspath $(VSIX_HOST))

# Refreshes the README's screenshot from the last e2e run.
e2e-readme-shot:
	mkdir -p docs/img && cp tests/e2e/artifacts/hover.png docs/img/hover.png
