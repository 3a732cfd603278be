# JupyterLab: gradguard[jupyter] (jupyterlab, jupyterlab-lsp, jupyter-lsp) and python-lsp-server, the user's
# own server that the e2e test keeps running behind gradguard.
#   make jupyter-setup  installs them into the venv (a prerequisite of `make e2e`, which runs jupyterlab_e2e.js)
#   make jupyter-e2e    runs only the JupyterLab end-to-end test
# An editable install skips the wheel's data files, so the priority override that `pip install gradguard[jupyter]`
# puts in share/jupyter/lab/settings/overrides.d/ is copied there by hand.
JUPYTER_STAMP    := $(VENV)/.installed-jupyter
JUPYTER_OVERRIDE := server/gradguard/jupyter/lab-overrides/gradguard.json

.PHONY: jupyter-setup jupyter-e2e

$(JUPYTER_STAMP): $(STAMP) pyproject.toml $(JUPYTER_OVERRIDE)
	$(VPY) -m pip install -q -e '.[jupyter]' python-lsp-server
	mkdir -p $(VENV)/share/jupyter/lab/settings/overrides.d
	cp $(JUPYTER_OVERRIDE) $(VENV)/share/jupyter/lab/settings/overrides.d/gradguard.json
	touch $@

jupyter-setup: $(JUPYTER_STAMP)

e2e: jupyter-setup

jupyter-e2e: jupyter-setup e2e-deps
	PYTHON=$(VPY) WORK=tests/e2e/artifacts/jupyterlab-work SHOTS=tests/e2e/artifacts timeout 300 node tests/e2e/jupyterlab_e2e.js
	ALONE=1 PYTHON=$(VPY) WORK=tests/e2e/artifacts/jupyterlab-alone-work SHOTS=tests/e2e/artifacts/jupyterlab-alone \
	  timeout 300 node tests/e2e/jupyterlab_e2e.js
