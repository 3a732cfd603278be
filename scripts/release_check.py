#!/usr/bin/env python3
"""What a release must satisfy before anything is uploaded (`make release-check`, and the release workflow).

    release_check.py sources [--tag vX.Y.Z]        one version everywhere, a CHANGELOG entry for it, no placeholder
                                                   repository URLs, no relative links in README.md (the PyPI page),
                                                   the extension's bundled pins within the declared dependencies
    release_check.py artifacts --dist DIR VSIX...  the wheel and sdist of that version (twine check --strict,
                                                   LICENSE, project URLs) and each VSIX's manifests
    release_check.py notes VERSION                 prints that version's CHANGELOG section (the GitHub release's
                                                   notes)

Each check prints what it found wrong, one line each, and exits 1 if anything was.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.9 and 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
CANONICAL_REPOSITORY = "https://github.com/gradguard/gradguard"
RAW_CONTENT = "https://raw.githubusercontent.com/gradguard/gradguard/main/"  # images, as PyPI shows them
# The files users copy URLs from; a placeholder there sends them nowhere.
URL_FILES = ("README.md", "pyproject.toml", "client-vscode/package.json", "client-vscode/README.md",
             "CONTRIBUTING.md", ".pre-commit-hooks.yaml")
PLACEHOLDER_URL = re.compile(r"https?://(?:[\w.-]*\.)?(?:example\.(?:com|org)|github\.com/<[^>]*>)[^\s)\"'`]*"
                             r"|github\.com/(?:OWNER|USER|your-?name)/", re.IGNORECASE)
VERSION_HEADING = re.compile(r"^## \[(?P<version>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?\s*$", re.MULTILINE)
MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)[^)]*\)")
VSIX_NS = {"m": "http://schemas.microsoft.com/developer/vsx-schema/2011"}
VSIX_NAME = re.compile(r"^gradguard-(?P<version>[^-]+)-(?P<target>[a-z0-9]+-[a-z0-9]+)\.vsix$")


def versions(repo: Path) -> dict[str, str | None]:
    """The version each place states (None where it states none)."""
    found: dict[str, str | None] = {}
    found["pyproject.toml"] = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"].get(
        "version")
    init = (repo / "server/gradguard/__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', init, re.MULTILINE)
    found["server/gradguard/__init__.py"] = match.group(1) if match else None
    package = json.loads((repo / "client-vscode/package.json").read_text(encoding="utf-8"))
    found["client-vscode/package.json"] = package.get("version")
    lock = json.loads((repo / "client-vscode/package-lock.json").read_text(encoding="utf-8"))
    found["client-vscode/package-lock.json"] = lock.get("version")
    found["client-vscode/package-lock.json (packages[''])"] = lock.get("packages", {}).get("", {}).get("version")
    found["CHANGELOG.md (top entry)"] = changelog_top_version(repo / "CHANGELOG.md")
    return found


def changelog_entries(path: Path) -> list[tuple[str, str | None, str]]:
    """(version, date, body) of each `## [version] - date` section, in file order."""
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    heads = list(VERSION_HEADING.finditer(text))
    entries = []
    for head, after in zip(heads, heads[1:] + [None]):
        end = after.start() if after else _link_definitions_start(text, head.end())
        entries.append((head["version"], head["date"], text[head.end():end].strip()))
    return entries


def _link_definitions_start(text: str, start: int) -> int:
    links = re.search(r"^\[[^\]]+\]: ", text[start:], re.MULTILINE)
    return start + links.start() if links else len(text)


def changelog_top_version(path: Path) -> str | None:
    released = [version for version, _, _ in changelog_entries(path) if version.lower() != "unreleased"]
    return released[0] if released else None


def changelog_section(path: Path, version: str) -> str | None:
    for entry_version, _, body in changelog_entries(path):
        if entry_version == version:
            return body
    return None


def check_sources(repo: Path, tag: str | None = None) -> list[str]:
    problems = []
    found = versions(repo)
    version = found["pyproject.toml"]
    for place, stated in found.items():
        if stated != version:
            problems.append(f"{place}: version {stated or '(none)'}, pyproject.toml says {version}")
    if version and not re.fullmatch(r"\d+\.\d+\.\d+", version):
        problems.append(f"version {version} is not MAJOR.MINOR.PATCH (the VS Code Marketplace refuses pre-release "
                        "versions; publish those with vsce --pre-release under an odd minor version)")
    package = json.loads((repo / "client-vscode/package.json").read_text(encoding="utf-8"))
    if package.get("enabledApiProposals") or package.get("enableProposedApi"):
        problems.append("client-vscode/package.json: proposed APIs (enabledApiProposals) cannot be published to "
                        "the Marketplace")
    if tag is not None and tag != f"v{version}":
        problems.append(f"tag {tag} does not name version {version} (expected v{version})")
    changelog = repo / "CHANGELOG.md"
    entries = {v: (date, body) for v, date, body in changelog_entries(changelog)}
    if not changelog.is_file():
        problems.append("CHANGELOG.md: missing")
    elif version not in entries:
        problems.append(f"CHANGELOG.md: no `## [{version}] - YYYY-MM-DD` entry")
    else:
        date, body = entries[version]
        if not date:
            problems.append(f"CHANGELOG.md: the {version} entry has no date (`## [{version}] - YYYY-MM-DD`)")
        if not body:
            problems.append(f"CHANGELOG.md: the {version} entry is empty")
        if not re.search(rf"^\[{re.escape(version)}\]: {re.escape(CANONICAL_REPOSITORY)}/", changelog.read_text(
                encoding="utf-8"), re.MULTILINE):
            problems.append(f"CHANGELOG.md: no link definition `[{version}]: {CANONICAL_REPOSITORY}/...`")
    problems += check_repository_urls(repo)
    problems += check_readme_links(repo)
    problems += check_bundle_pins(repo)
    return problems


def check_bundle_pins(repo: Path) -> list[str]:
    """The extension bundles exact pins (client-vscode/bundle/requirements.txt); each of gradguard's own
    dependencies among them (the `lsp` extra's included) must be a version the package declares it supports."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {}
    for spec in project.get("dependencies", []) + project.get("optional-dependencies", {}).get("lsp", []):
        requirement = Requirement(spec)
        declared[canonicalize_name(requirement.name)] = requirement
    problems = []
    pins = repo / "client-vscode/bundle/requirements.txt"
    for line in pins.read_text(encoding="utf-8").splitlines() if pins.is_file() else []:
        spec = line.split("#", 1)[0].split()
        if not spec or "==" not in spec[0]:
            continue
        name, version = spec[0].split("==")
        requirement = declared.get(canonicalize_name(name))
        if requirement is not None and not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"client-vscode/bundle/requirements.txt: {name}=={version} is outside pyproject.toml's "
                            f"{requirement}")
    return problems


def check_readme_links(repo: Path) -> list[str]:
    """README.md is the PyPI page, which has no repository to resolve a relative link or image against."""
    problems = []
    for number, line in enumerate((repo / "README.md").read_text(encoding="utf-8").splitlines(), 1):
        for match in MARKDOWN_LINK.finditer(line):
            if not re.match(r"[a-z][a-z0-9+.-]*:|#", match["target"]):
                base = RAW_CONTENT if match.group(0).startswith("!") else f"{CANONICAL_REPOSITORY}/blob/main/"
                problems.append(f"README.md:{number}: relative link {match['target']} (broken on PyPI; use "
                                f"{base}{match['target']})")
    return problems


def check_repository_urls(repo: Path) -> list[str]:
    problems = []
    project = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    urls = project.get("urls", {})
    if urls.get("Repository") != CANONICAL_REPOSITORY:
        problems.append(f"pyproject.toml: [project.urls] Repository is {urls.get('Repository')!r}, "
                        f"not {CANONICAL_REPOSITORY!r}")
    package = json.loads((repo / "client-vscode/package.json").read_text(encoding="utf-8"))
    repository = package.get("repository", {})
    url = repository.get("url") if isinstance(repository, dict) else repository
    if url not in (CANONICAL_REPOSITORY, CANONICAL_REPOSITORY + ".git"):
        problems.append(f"client-vscode/package.json: repository {url!r}, not {CANONICAL_REPOSITORY}.git")
    if not str(package.get("bugs", {}).get("url", "")).startswith(CANONICAL_REPOSITORY):
        problems.append("client-vscode/package.json: bugs.url is not the canonical repository's issues")
    for name in URL_FILES:
        path = repo / name
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in PLACEHOLDER_URL.finditer(line):
                problems.append(f"{name}:{number}: placeholder URL {match.group(0)}")
    return problems


def check_dist(dist: Path, version: str) -> list[str]:
    wheel = dist / f"gradguard-{version}-py3-none-any.whl"
    sdist = dist / f"gradguard-{version}.tar.gz"
    problems = [f"{path}: missing" for path in (wheel, sdist) if not path.is_file()]
    if problems:
        return problems
    twine = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                           capture_output=True, text=True)
    if twine.returncode != 0:
        problems.append(f"twine check --strict failed:\n{twine.stdout}{twine.stderr}".rstrip())
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata_name = f"gradguard-{version}.dist-info/METADATA"
        metadata = zf.read(metadata_name).decode("utf-8") if metadata_name in names else ""
    if not metadata:
        problems.append(f"{wheel.name}: no {metadata_name}")
    headers = metadata.split("\n\n", 1)[0]
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        problems.append(f"{wheel.name}: no LICENSE")
    if f"Project-URL: Repository, {CANONICAL_REPOSITORY}" not in headers:
        problems.append(f"{wheel.name}: METADATA has no `Project-URL: Repository, {CANONICAL_REPOSITORY}`")
    if "Provides-Extra: lsp" not in headers:
        problems.append(f"{wheel.name}: METADATA provides no `lsp` extra (gradguard server's dependencies)")
    with tarfile.open(sdist) as tf:
        sdist_names = tf.getnames()
    for needed in ("LICENSE", "PKG-INFO", "pyproject.toml"):
        if f"gradguard-{version}/{needed}" not in sdist_names:
            problems.append(f"{sdist.name}: no {needed}")
    return problems


def check_vsix(path: Path, version: str, repo: Path) -> list[str]:
    """The two manifests a gallery reads: extension.vsixmanifest (identity, target, engine, links) and the
    packaged package.json, against the repository's package.json and the file's name."""
    package = json.loads((repo / "client-vscode/package.json").read_text(encoding="utf-8"))
    named = VSIX_NAME.match(path.name)
    if not named:
        return [f"{path.name}: not named gradguard-<version>-<target>.vsix"]
    target = named["target"]
    problems = []
    if named["version"] != version:
        problems.append(f"{path.name}: file name says version {named['version']}, the release is {version}")
    try:
        with zipfile.ZipFile(path) as zf:
            manifest = ET.fromstring(zf.read("extension.vsixmanifest"))
            packed = json.loads(zf.read("extension/package.json"))
            names = set(zf.namelist())
            bundled = json.loads(zf.read("extension/bundled/manifest.json")) \
                if "extension/bundled/manifest.json" in names else None
    except (zipfile.BadZipFile, KeyError, ET.ParseError, ValueError) as exc:
        return [f"{path.name}: unreadable ({exc})"]
    identity = manifest.find("m:Metadata/m:Identity", VSIX_NS)
    properties = {p.get("Id"): p.get("Value") for p in manifest.iterfind("m:Metadata/m:Properties/m:Property", VSIX_NS)}
    expected_identity = {"Id": package["name"], "Version": version, "Publisher": package["publisher"],
                         "TargetPlatform": target}
    for key, expected in expected_identity.items():
        stated = identity.get(key) if identity is not None else None
        if stated != expected:
            problems.append(f"{path.name}: extension.vsixmanifest Identity {key}={stated!r}, expected {expected!r}")
    engine = properties.get("Microsoft.VisualStudio.Code.Engine")
    if engine != package["engines"]["vscode"]:
        problems.append(f"{path.name}: extension.vsixmanifest engine {engine!r}, package.json says "
                        f"{package['engines']['vscode']!r}")
    source = properties.get("Microsoft.VisualStudio.Services.Links.Source") or ""
    if not source.startswith(CANONICAL_REPOSITORY):
        problems.append(f"{path.name}: extension.vsixmanifest source link {source!r}, not {CANONICAL_REPOSITORY}")
    for key in ("name", "publisher", "engines", "repository", "license"):
        if packed.get(key) != package.get(key):
            problems.append(f"{path.name}: extension/package.json {key} {packed.get(key)!r}, "
                            f"client-vscode/package.json says {package.get(key)!r}")
    if packed.get("version") != version:
        problems.append(f"{path.name}: extension/package.json version {packed.get('version')!r}, expected {version!r}")
    for needed in ("extension/dist/extension.js", "extension/dist/THIRD_PARTY_NOTICES.txt", "extension/LICENSE.txt",
                   "extension/readme.md", "extension/bundled/tool/launch.py"):
        if needed not in names:
            problems.append(f"{path.name}: no {needed}")
    if "extension/dist/THIRD_PARTY_NOTICES.txt" in names:
        # The minified bundle keeps no licence comment: the notices must name each package it is built from.
        with zipfile.ZipFile(path) as zf:
            notices = zf.read("extension/dist/THIRD_PARTY_NOTICES.txt").decode("utf-8", "replace")
        for dependency in package.get("dependencies", {}):
            if not re.search(rf"(?m)^{re.escape(dependency)} \S+ \(", notices):
                problems.append(f"{path.name}: extension/dist/THIRD_PARTY_NOTICES.txt has no licence of {dependency}")
    if bundled is None:
        problems.append(f"{path.name}: no bundled server (extension/bundled/manifest.json)")
    else:
        if bundled.get("gradguardVersion") != version:
            problems.append(f"{path.name}: bundled gradguard {bundled.get('gradguardVersion')}, expected {version}")
        if bundled.get("target") != target:
            problems.append(f"{path.name}: bundled server built for {bundled.get('target')}, the VSIX is {target}")
        if f"extension/bundled/{bundled.get('wheel')}" not in names:
            problems.append(f"{path.name}: the bundled wheel {bundled.get('wheel')} is missing")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, default=REPO)
    sub = parser.add_subparsers(dest="command", required=True)
    sources = sub.add_parser("sources")
    sources.add_argument("--tag", help="the git tag being released, e.g. v0.1.0")
    artifacts = sub.add_parser("artifacts")
    artifacts.add_argument("--dist", type=Path, required=True)
    artifacts.add_argument("vsix", type=Path, nargs="*")
    notes = sub.add_parser("notes")
    notes.add_argument("version", help="0.1.0 or v0.1.0")
    args = parser.parse_args(argv)

    if args.command == "notes":
        version = args.version[1:] if args.version.startswith("v") else args.version
        body = changelog_section(args.repo / "CHANGELOG.md", version)
        if not body:
            print(f"CHANGELOG.md: no entry for {version}", file=sys.stderr)
            return 1
        print(body)
        return 0
    version = versions(args.repo)["pyproject.toml"]
    if args.command == "sources":
        problems = check_sources(args.repo, args.tag)
        checked = (f"version {version} in {len(versions(args.repo))} places, CHANGELOG entry, repository URLs, "
                   "README links, bundle pins")
    else:
        if not args.vsix:
            parser.error("artifacts: name the VSIX files to check")
        problems = check_dist(args.dist, version)
        for vsix in args.vsix:
            problems += check_vsix(vsix, version, args.repo)
        checked = f"wheel and sdist of {version} (twine check --strict) and {len(args.vsix)} VSIX manifests"
    for problem in problems:
        print(f"release-check: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"release-check: ok: {checked}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
