"""scripts/release_check.py: what `make release-check` and the release workflow refuse before an upload.

The source checks run on a copy of the repository's own version-bearing files with one thing broken at a time;
the VSIX checks on a package laid out as `vsce package --target` writes it. (The wheel and sdist checks need
twine and a build: `make release-check` runs them.)"""
from __future__ import annotations

import importlib.util
import json
import shutil
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("release_check", REPO / "scripts" / "release_check.py")
release_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release_check)

COPIED = ("pyproject.toml", "server/gradguard/__init__.py", "client-vscode/package.json",
          "client-vscode/package-lock.json", "CHANGELOG.md", "README.md", "client-vscode/README.md",
          "CONTRIBUTING.md", ".pre-commit-hooks.yaml", "client-vscode/bundle/requirements.txt")
VERSION = release_check.versions(REPO)["pyproject.toml"]


@pytest.fixture
def tree(tmp_path) -> Path:
    for name in COPIED:
        if (REPO / name).is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def run(capsys, *argv: str) -> tuple[int, list[str], str]:
    status = release_check.main(list(argv))
    out, err = capsys.readouterr()
    return status, err.splitlines(), out


def test_the_repository_itself_is_ready_to_release(capsys):
    status, problems, out = run(capsys, "--repo", str(REPO), "sources")
    assert (status, problems) == (0, [])
    assert out == (f"release-check: ok: version {VERSION} in 6 places, CHANGELOG entry, repository URLs, "
                   "README links, bundle pins\n")


def test_one_place_with_another_version_is_named(tree, capsys):
    edit(tree / "client-vscode/package.json", f'"version": "{VERSION}"', '"version": "9.9.9"')
    status, problems, _ = run(capsys, "--repo", str(tree), "sources")
    assert status == 1
    assert problems == [f"release-check: client-vscode/package.json: version 9.9.9, pyproject.toml says {VERSION}"]


def test_a_stale_dunder_version_and_lockfile_are_named(tree, capsys):
    edit(tree / "server/gradguard/__init__.py", f'__version__ = "{VERSION}"', '__version__ = "0.0.1"')
    edit(tree / "client-vscode/package-lock.json", f'"version": "{VERSION}"', '"version": "0.0.1"')
    status, problems, _ = run(capsys, "--repo", str(tree), "sources")
    assert status == 1
    assert problems == [
        f"release-check: server/gradguard/__init__.py: version 0.0.1, pyproject.toml says {VERSION}",
        f"release-check: client-vscode/package-lock.json: version 0.0.1, pyproject.toml says {VERSION}",
    ]


def test_a_version_without_a_changelog_entry_fails(tree, capsys):
    # The version was bumped (everywhere) but nobody wrote its CHANGELOG section.
    for name in ("pyproject.toml", "client-vscode/package.json"):
        edit(tree / name, f'"{VERSION}"', '"0.2.0"')
    edit(tree / "server/gradguard/__init__.py", f'"{VERSION}"', '"0.2.0"')
    lock = tree / "client-vscode/package-lock.json"
    lock.write_text(lock.read_text().replace(f'"version": "{VERSION}"', '"version": "0.2.0"', 2))
    status, problems, _ = run(capsys, "--repo", str(tree), "sources")
    assert status == 1
    assert problems == [
        f"release-check: CHANGELOG.md (top entry): version {VERSION}, pyproject.toml says 0.2.0",
        "release-check: CHANGELOG.md: no `## [0.2.0] - YYYY-MM-DD` entry",
    ]


def test_an_undated_or_empty_changelog_entry_fails(tree, capsys):
    changelog = tree / "CHANGELOG.md"
    text = changelog.read_text()
    head = next(line for line in text.splitlines() if line.startswith(f"## [{VERSION}]"))
    body_end = text.index(f"[Unreleased]: ")
    changelog.write_text(text[:text.index(head)] + f"## [{VERSION}]\n\n" + text[body_end:])
    status, problems, _ = run(capsys, "--repo", str(tree), "sources")
    assert status == 1
    assert problems == [
        f"release-check: CHANGELOG.md: the {VERSION} entry has no date (`## [{VERSION}] - YYYY-MM-DD`)",
        f"release-check: CHANGELOG.md: the {VERSION} entry is empty",
    ]


def test_a_missing_changelog_fails(tree, capsys):
    (tree / "CHANGELOG.md").unlink()
    status, problems, _ = run(capsys, "--repo", str(tree), "sources")
    assert status == 1
    assert problems == [
        f"release-check: CHANGELOG.md (top entry): version (none), pyproject.toml says {VERSION}",
        "release-check: CHANGELOG.md: missing",
    ]


def test_a_pre_release_version_or_a_proposed_api_cannot_reach_the_marketplace(tree, capsys):
    for name in ("pyproject.toml", "client-vscode/package.json", "server/gradguard/__init__.py",
                 "client-vscode/package-lock.json", "client-vscode/package-lock.json", "CHANGELOG.md"):
        edit(tree / name, VERSION, "0.2.0-rc.1")
    edit(tree / "CHANGELOG.md", f"[{VERSION}]: ", "[0.2.0-rc.1]: ")
    edit(tree / "client-vscode/package.json", '"main":', '"enabledApiProposals": ["chatParticipantAdditions"],\n  "main":')
    status, problems, _ = run(capsys, "--repo", str(tree), "sources")
    assert status == 1
    assert problems == [
        "release-check: version 0.2.0-rc.1 is not MAJOR.MINOR.PATCH (the VS Code Marketplace refuses pre-release "
        "versions; publish those with vsce --pre-release under an odd minor version)",
        "release-check: client-vscode/package.json: proposed APIs (enabledApiProposals) cannot be published to "
        "the Marketplace",
    ]


def test_the_tag_must_name_the_version(tree, capsys):
    status, problems, _ = run(capsys, "--repo", str(tree), "sources", "--tag", "v0.1.99")
    assert status == 1
    assert problems == [f"release-check: tag v0.1.99 does not name version {VERSION} (expected v{VERSION})"]
    assert run(capsys, "--repo", str(tree), "sources", "--tag", f"v{VERSION}")[0] == 0


def test_placeholder_repository_urls_are_refused(tree, capsys):
    readme = tree / "README.md"
    readme.write_text(readme.read_text() + "\n```yaml\n  - repo: https://github.com/<owner>/gradguard\n```\n")
    line = len(readme.read_text().splitlines()) - 1
    edit(tree / "client-vscode/package.json", '"url": "https://github.com/gradguard/gradguard.git"',
         '"url": "https://example.com/gradguard.git"')
    status, problems, _ = run(capsys, "--repo", str(tree), "sources")
    assert status == 1
    assert problems == [
        "release-check: client-vscode/package.json: repository 'https://example.com/gradguard.git', "
        "not https://github.com/gradguard/gradguard.git",
        f"release-check: README.md:{line}: placeholder URL https://github.com/<owner>/gradguard",
        "release-check: client-vscode/package.json:11: placeholder URL https://example.com/gradguard.git",
    ]


def test_relative_links_in_the_readme_are_refused(tree, capsys):
    # README.md is also the PyPI page: there a relative link or image has nothing to resolve against.
    readme = tree / "README.md"
    readme.write_text(readme.read_text() + "\nSee [DESIGN.md](DESIGN.md), [the top](#gradguard) and "
                      "![hover](docs/img/hover.png \"hover\").\n")
    line = len(readme.read_text().splitlines())
    status, problems, _ = run(capsys, "--repo", str(tree), "sources")
    assert status == 1
    assert problems == [
        f"release-check: README.md:{line}: relative link DESIGN.md (broken on PyPI; use "
        "https://github.com/gradguard/gradguard/blob/main/DESIGN.md)",
        f"release-check: README.md:{line}: relative link docs/img/hover.png (broken on PyPI; use "
        "https://raw.githubusercontent.com/gradguard/gradguard/main/docs/img/hover.png)",
    ]


def test_a_bundled_pin_outside_the_declared_dependencies_is_refused(tree, capsys):
    # pyproject starts to need a newer pygls than the one the extension bundles.
    edit(tree / "pyproject.toml", '"pygls>=2.0,<3"', '"pygls>=2.2,<3"')
    pinned = next(line.split()[0] for line in (tree / "client-vscode/bundle/requirements.txt").read_text().splitlines()
                  if line.startswith("pygls=="))
    status, problems, _ = run(capsys, "--repo", str(tree), "sources")
    assert status == 1
    assert problems == [f"release-check: client-vscode/bundle/requirements.txt: {pinned} is outside pyproject.toml's "
                        "pygls<3,>=2.2"]


def test_notes_are_the_changelog_section_of_the_tag(tree, capsys):
    changelog = tree / "CHANGELOG.md"
    changelog.write_text(
        "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2027-01-05\n\n### Fixed\n- `make demo` builds one VSIX.\n\n"
        "## [0.1.0] - 2026-12-03\n\n### Added\n- The checker.\n\n"
        "[Unreleased]: https://github.com/gradguard/gradguard/compare/v0.2.0...HEAD\n"
        "[0.2.0]: https://github.com/gradguard/gradguard/compare/v0.1.0...v0.2.0\n")
    assert run(capsys, "--repo", str(tree), "notes", "v0.2.0") == (0, [], "### Fixed\n- `make demo` builds one VSIX.\n")
    assert run(capsys, "--repo", str(tree), "notes", "0.1.0") == (0, [], "### Added\n- The checker.\n")
    assert run(capsys, "--repo", str(tree), "notes", "v0.3.0") == (1, ["CHANGELOG.md: no entry for 0.3.0"], "")


# A VSIX as `vsce package --target` lays it out (the manifest text is vsce 3.9's template, trimmed).
# What esbuild.mjs writes: a head, then "name version (licence)" and the licence text per bundled package.
NOTICES = "gradguard for VS Code bundles ...\n\n" + "\n".join(
    f"{name} {version} (MIT)\n\nMIT License\n" for name, version in
    json.loads((REPO / "client-vscode/package.json").read_text())["dependencies"].items())


def make_vsix(path: Path, *, version: str = VERSION, target: str = "linux-x64", publisher: str | None = None,
              engine: str | None = None, bundled_target: str | None = None, notices: str | None = NOTICES) -> Path:
    package = json.loads((REPO / "client-vscode/package.json").read_text())
    publisher = publisher or package["publisher"]
    engine = engine or package["engines"]["vscode"]
    manifest = f"""<?xml version="1.0" encoding="utf-8"?>
<PackageManifest Version="2.0.0" xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011" xmlns:d="http://schemas.microsoft.com/developer/vsx-schema-design/2011">
  <Metadata>
    <Identity Language="en-US" Id="{package['name']}" Version="{version}" Publisher="{publisher}" TargetPlatform="{target}"/>
    <DisplayName>{package['displayName']}</DisplayName>
    <Properties>
      <Property Id="Microsoft.VisualStudio.Code.Engine" Value="{engine}" />
      <Property Id="Microsoft.VisualStudio.Services.Links.Source" Value="https://github.com/gradguard/gradguard.git" />
    </Properties>
  </Metadata>
</PackageManifest>"""
    packed = {**package, "version": version, "publisher": publisher, "engines": {"vscode": engine}}
    bundled = {"gradguardVersion": version, "target": bundled_target or target,
               "wheel": f"wheels/gradguard-{version}-py3-none-any.whl"}
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("extension.vsixmanifest", manifest)
        zf.writestr("extension/package.json", json.dumps(packed))
        zf.writestr("extension/bundled/manifest.json", json.dumps(bundled))
        for name in ("extension/dist/extension.js", "extension/LICENSE.txt", "extension/readme.md",
                     "extension/bundled/tool/launch.py", f"extension/bundled/{bundled['wheel']}"):
            zf.writestr(name, "")
        if notices is not None:
            zf.writestr("extension/dist/THIRD_PARTY_NOTICES.txt", notices)
    return path


def test_a_vsix_without_the_notices_of_its_bundled_packages_is_refused(tmp_path):
    vsix = make_vsix(tmp_path / f"gradguard-{VERSION}-linux-x64.vsix", notices=None)
    assert release_check.check_vsix(vsix, VERSION, REPO) == [f"{vsix.name}: no extension/dist/THIRD_PARTY_NOTICES.txt"]
    partial = NOTICES.replace("vscode-languageclient", "vscode-languageclient-fork")
    vsix = make_vsix(tmp_path / f"gradguard-{VERSION}-linux-x64.vsix", notices=partial)
    assert release_check.check_vsix(vsix, VERSION, REPO) == [
        f"{vsix.name}: extension/dist/THIRD_PARTY_NOTICES.txt has no licence of vscode-languageclient"]


def test_a_vsix_as_vsce_packages_it_passes(tmp_path):
    vsix = make_vsix(tmp_path / f"gradguard-{VERSION}-darwin-arm64.vsix", target="darwin-arm64")
    assert release_check.check_vsix(vsix, VERSION, REPO) == []


def test_a_vsix_with_the_wrong_target_publisher_and_engine_is_refused(tmp_path):
    vsix = make_vsix(tmp_path / f"gradguard-{VERSION}-win32-x64.vsix", target="linux-x64",
                     publisher="unpublished", engine="^1.80.0", bundled_target="linux-x64")
    name = vsix.name
    assert release_check.check_vsix(vsix, VERSION, REPO) == [
        f"{name}: extension.vsixmanifest Identity Publisher='unpublished', expected 'gradguard-authors'",
        f"{name}: extension.vsixmanifest Identity TargetPlatform='linux-x64', expected 'win32-x64'",
        f"{name}: extension.vsixmanifest engine '^1.80.0', package.json says '^1.100.0'",
        f"{name}: extension/package.json publisher 'unpublished', client-vscode/package.json says 'gradguard-authors'",
        f"{name}: extension/package.json engines {{'vscode': '^1.80.0'}}, "
        "client-vscode/package.json says {'vscode': '^1.100.0'}",
        f"{name}: bundled server built for linux-x64, the VSIX is win32-x64",
    ]


def test_a_vsix_of_an_older_build_is_refused(tmp_path):
    vsix = make_vsix(tmp_path / "gradguard-0.0.9-linux-x64.vsix", version="0.0.9")
    assert release_check.check_vsix(vsix, VERSION, REPO) == [
        f"gradguard-0.0.9-linux-x64.vsix: file name says version 0.0.9, the release is {VERSION}",
        f"gradguard-0.0.9-linux-x64.vsix: extension.vsixmanifest Identity Version='0.0.9', expected '{VERSION}'",
        f"gradguard-0.0.9-linux-x64.vsix: extension/package.json version '0.0.9', expected '{VERSION}'",
        f"gradguard-0.0.9-linux-x64.vsix: bundled gradguard 0.0.9, expected {VERSION}",
    ]
