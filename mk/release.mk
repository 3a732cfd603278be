# Releases (issue 22). A version tag `vX.Y.Z` runs .github/workflows/release.yml; this is its local rehearsal.
#   make release-check  everything the release does but the upload: one version in every place and a CHANGELOG
#                       entry for it (scripts/release_check.py sources), the sdist and wheel (`make dist`) passing
#                       `twine check --strict`, and every platform VSIX (`make vsix-all`) with manifests that
#                       name that version, the publisher, the repository, the target and the VS Code engine
#                       (scripts/release_check.py artifacts). `make test` is the other half of a release.
RELEASE_TOOLS := $(VENV)/.installed-release

.PHONY: release-check release-sources

# build and twine are release tools only; twine 6.1 is the first to read Metadata-Version 2.4 (setuptools 77+).
$(RELEASE_TOOLS): | $(DEMO_STAMP)
	$(VPY) -m pip install -q 'build>=1.2' 'twine>=6.1'
	touch $@

release-sources: $(RELEASE_TOOLS)
	$(VPY) scripts/release_check.py sources $(if $(RELEASE_TAG),--tag $(RELEASE_TAG))

# Sources first: a version mismatch fails in a second, before five VSIX builds.
release-check: release-sources
	$(MAKE) --no-print-directory dist vsix-all
	$(VPY) scripts/release_check.py artifacts --dist dist $(VSIX_ALL)
