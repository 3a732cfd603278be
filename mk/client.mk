# The VS Code extension (client-vscode/) and the real-client end-to-end tests (tests/e2e/).
#   make vsix   builds client-vscode/gradguard-<version>.vsix (part of `make demo`)
#   make e2e    installs what the tests need (Debian packages, code-server, playwright-core) and runs
#               the Neovim and the code-server + Chromium tests (part of `make test`)
# Everything is installed idempotently; code-server is cached outside the repo in $(E2E_CACHE).

CLIENT_DIR      := client-vscode
CLIENT_VERSION  := $(shell sed -n 's/^  "version": "\(.*\)",$$/\1/p' $(CLIENT_DIR)/package.json)
VSIX            := $(CLIENT_DIR)/gradguard-$(CLIENT_VERSION).vsix
CLIENT_SOURCES  := $(wildcard $(CLIENT_DIR)/src/*.ts) $(addprefix $(CLIENT_DIR)/,package.json tsconfig.json esbuild.mjs .vscodeignore README.md LICENSE)
CLIENT_NPM      := $(CLIENT_DIR)/node_modules/.installed

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

.PHONY: vsix e2e e2e-deps e2e-apt e2e-readme-shot

$(CLIENT_NPM): $(CLIENT_DIR)/package-lock.json
	cd $(CLIENT_DIR) && npm ci --no-audit --no-fund
	touch $@

$(VSIX): $(CLIENT_NPM) $(CLIENT_SOURCES)
	cd $(CLIENT_DIR) && npx vsce package --no-dependencies --out gradguard-$(CLIENT_VERSION).vsix

vsix: $(VSIX)

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

e2e: setup $(VSIX) e2e-deps
	tests/e2e/run.sh $(VPY) $(CODE_SERVER) $(abspath $(VSIX))

# Refreshes the README's screenshot from the last e2e run.
e2e-readme-shot:
	mkdir -p docs/img && cp tests/e2e/artifacts/hover.png docs/img/hover.png
