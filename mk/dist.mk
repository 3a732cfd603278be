# Packaging (issue 12).
#   make dist   builds dist/gradguard-<version>-py3-none-any.whl and dist/gradguard-<version>.tar.gz (both carry
#               the MIT LICENSE) and checks that they do; users install either with `pip install <file>`.
DIST_VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' pyproject.toml)
DIST_WHEEL   := dist/gradguard-$(DIST_VERSION)-py3-none-any.whl
DIST_SDIST   := dist/gradguard-$(DIST_VERSION).tar.gz

.PHONY: dist

dist: demo-setup
	$(VPY) -m pip install -q build
	rm -f $(DIST_WHEEL) $(DIST_SDIST)
	$(VPY) -m build --outdir dist .
	$(VPY) -c "import sys, tarfile, zipfile; \
w = zipfile.ZipFile('$(DIST_WHEEL)').namelist(); s = tarfile.open('$(DIST_SDIST)').getnames(); \
ok = any(n.endswith('.dist-info/licenses/LICENSE') for n in w) and 'gradguard-$(DIST_VERSION)/LICENSE' in s; \
print('LICENSE in wheel and sdist' if ok else 'LICENSE missing', file=sys.stderr); sys.exit(0 if ok else 1)"
	@ls -l $(DIST_WHEEL) $(DIST_SDIST)
