#!/usr/bin/env python3
"""Assembles client-vscode/bundled/ for one VS Code target: the gradguard server and every Python dependency.

    bundle_server.py --target linux-x64 [--out client-vscode/bundled] [--cache DIR]

Result (what the .vsix carries under bundled/):
    libs/               gradguard (from server/) + the pinned dependencies of bundle/requirements.txt, one copy
                        for all CPythons of bundle/pythons.txt; libcst's compiled module once per CPython
                        (native.cpython-3XY-*.so / native.cp3XY-*.pyd side by side: each Python loads its own)
    tool/launch.py      the launcher the extension runs (client-vscode/python/launch.py)
    wheels/gradguard-<version>-py3-none-any.whl
                        the same gradguard as a wheel, for "install into the environment" (pip fetches its
                        dependencies from PyPI)
    manifest.json       versions, target, supported Pythons, sha256 of every wheel used

Wheels come from PyPI through `pip download --only-binary :all:` (cached in --cache); nothing is compiled.
"""
from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

CLIENT = Path(__file__).resolve().parents[1]
REPO = CLIENT.parent
SERVER_PACKAGE = REPO / "server" / "gradguard"

# VS Code target -> the wheel platform tag pip downloads for it.
PLATFORMS = {
    "linux-x64": "manylinux_2_28_x86_64",
    "linux-arm64": "manylinux_2_28_aarch64",
    "alpine-x64": "musllinux_1_2_x86_64",
    "darwin-arm64": "macosx_11_0_arm64",
    "win32-x64": "win_amd64",
}
NATIVE = re.compile(r"\.(so|pyd|dylib)$")


HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


def read_requirements() -> tuple[list[tuple[str, tuple[str, ...]]], list[tuple[str, tuple[str, ...]]]]:
    """(pure, native) pins of bundle/requirements.txt, each with the sha256 of every wheel it may be."""
    pure, native = [], []
    text = (CLIENT / "bundle" / "requirements.txt").read_text(encoding="utf-8")
    for line in text.replace("\\\n", " ").splitlines():  # a backslash continues the line, as pip reads it
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        spec, *flags = line.split()
        if "==" not in spec:
            raise SystemExit(f"bundle/requirements.txt: pin an exact version: {spec}")
        hashes = tuple(h for flag in flags for h in HASH.findall(flag))
        if not hashes:
            raise SystemExit(f"bundle/requirements.txt: {spec} has no --hash=sha256:...; every wheel is checked")
        (native if "native" in flags else pure).append((spec, hashes))
    return pure, native


def read_pythons() -> list[str]:
    return [v.strip() for v in (CLIENT / "bundle" / "pythons.txt").read_text().split() if v.strip()]


def download(pins: list[tuple[str, tuple[str, ...]]], dest: Path, python: str | None = None,
             platform: str | None = None, oldest: str = "3.9") -> list[Path]:
    """`pip download --require-hashes` of exact pins (wheels only, no dependency resolution: the pins are the
    whole list), each wheel one of its pin's sha256. A cached wheel counts only with such a hash too.
    Pure wheels are asked for as the `oldest` Python would (pip refuses a pin whose Requires-Python excludes it)."""
    dest.mkdir(parents=True, exist_ok=True)
    wanted = []
    for spec, hashes in pins:
        name, version = spec.split("==")
        stem = re.sub(r"[-_.]+", "_", name).lower()
        found = [w for w in dest.glob("*.whl") if _is_wanted(w, stem, version, python, platform)]
        for wheel in found:
            if sha256(wheel) not in hashes:  # a cache that was written to: fetch the wheel again
                wheel.unlink()
        found = [w for w in found if w.exists()]
        if found:
            wanted.append(found[0])
            continue
        pinned = dest / f".{stem}-{version}.requirements.txt"
        pinned.write_text(spec + "".join(f" --hash=sha256:{h}" for h in hashes) + "\n", encoding="utf-8")
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
               "--require-hashes", "--only-binary", ":all:", "-d", str(dest), "-r", str(pinned)]
        if python:
            cmd += ["--python-version", python, "--implementation", "cp", "--abi", "cp" + python.replace(".", ""),
                    "--platform", platform]
        else:  # pure Python only: some packages (tomli) also publish mypyc builds for the build machine's Python
            cmd += ["--python-version", oldest, "--implementation", "py", "--abi", "none", "--platform", "any"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        pinned.unlink()
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout}{done.stderr}")
        found = [w for w in dest.glob("*.whl") if _is_wanted(w, stem, version, python, platform)]
        if not found:
            raise SystemExit(f"pip downloaded no wheel for {spec} ({python} {platform})")
        wanted.append(found[0])
    return wanted


def _is_wanted(wheel: Path, stem: str, version: str, python: str | None, platform: str | None) -> bool:
    name, wheel_version = wheel.name.split("-")[:2]
    if re.sub(r"[-_.]+", "_", name).lower() != stem or wheel_version != version:
        return False
    return wheel.name.endswith("-none-any.whl") if python is None else _wheel_matches(wheel, python, platform)


def _wheel_matches(wheel: Path, python: str, platform: str) -> bool:
    tag = "cp" + python.replace(".", "")
    parts = wheel.name[:-4].split("-")
    arch = platform.split("_", 3)[-1] if platform.startswith(("manylinux", "musllinux", "macosx")) else platform
    return parts[-3] == tag and arch in parts[-1] and platform.split("_")[0] in parts[-1]


def requires_python(wheel: Path) -> str:
    """The Requires-Python field of a wheel's METADATA ("" when it has none)."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        for line in zf.read(name).decode("utf-8", "replace").splitlines():
            if not line.strip():
                break  # the headers end at the first blank line
            if line.lower().startswith("requires-python:"):
                return line.split(":", 1)[1].strip()
    return ""


def check_pythons(wheel: Path, pythons: list[str]) -> None:
    """Every bundled wheel must declare support for every CPython the bundle claims (bundle/pythons.txt)."""
    from pip._vendor.packaging.specifiers import SpecifierSet  # pip runs the downloads, so it is here

    spec = requires_python(wheel)
    excluded = [p for p in pythons if spec and not SpecifierSet(spec).contains(p + ".0")]
    if excluded:
        raise SystemExit(f"{wheel.name} requires Python {spec}: not {', '.join(excluded)} (bundle/pythons.txt);"
                         " pin a version that supports every listed Python")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def extract(wheel: Path, dest: Path, only=None) -> list[str]:
    """Unpacks a wheel's purelib/platlib root into dest (all our wheels keep their packages at the root)."""
    names = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            name = info.filename
            if name.endswith("/") or name.split("/")[0].endswith(".data"):
                continue  # none of the bundled wheels installs scripts or headers
            if (only is not None and not only(name)) or _pruned(name):
                continue
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
            names.append(name)
    return names


# Not unpacked: what the server never imports (the dependencies' tests, bytecode), and jedi 0.20's copy of
# typeshed's third-party stubs (`stubs/`, 4,300 files, 25 MB: requests, six, ...), so hover types for those
# packages come from their own sources. The standard library's stubs stay. jedi 0.19's older, smaller
# `third_party/` (650 files, 4 MB) stays: jedi 0.19 fails on every inference when that folder is missing.
PRUNED = re.compile(r"(^|/)(__pycache__/|tests/)|\.py[co]$|^jedi/third_party/typeshed/stubs/")


def _pruned(name: str) -> bool:
    return bool(PRUNED.search(name)) and not name.startswith("gradguard/")


def build_gradguard_wheel(dest: Path) -> tuple[Path, str]:
    """A py3-none-any wheel of server/gradguard, built by hand (no setuptools run in the tree)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    version = project["version"]
    init = (SERVER_PACKAGE / "__init__.py").read_text(encoding="utf-8")
    if f'__version__ = "{version}"' not in init:
        raise SystemExit(f"server/gradguard/__init__.py's __version__ differs from pyproject's {version}")
    dist_info = f"gradguard-{version}.dist-info"
    files: list[tuple[str, bytes]] = []
    for path in sorted(SERVER_PACKAGE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith((".pyc", ".pyo")):
            files.append(("gradguard/" + path.relative_to(SERVER_PACKAGE).as_posix(), path.read_bytes()))
    metadata = [f"Metadata-Version: 2.1", f"Name: gradguard", f"Version: {version}",
                f"Summary: {project.get('description', '')}", f"Requires-Python: {project.get('requires-python', '')}",
                f"License-Expression: {project.get('license', '')}"]
    # This wheel is the bundled server, installed into an environment by the extension's "install" command:
    # the `lsp` extra (pygls, jedi) is required here, so that environment's `gradguard server` runs.
    requires = project.get("dependencies", []) + project.get("optional-dependencies", {}).get("lsp", [])
    metadata += [f"Requires-Dist: {dep}" for dep in requires]
    files.append((f"{dist_info}/METADATA", ("\n".join(metadata) + "\n").encode()))
    files.append((f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: gradguard bundle_server.py\n"
                                         b"Root-Is-Purelib: true\nTag: py3-none-any\n"))
    scripts = project.get("scripts", {})
    if scripts:
        entry = "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())
        files.append((f"{dist_info}/entry_points.txt", entry.encode()))
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        writer.writerow([name, f"sha256={digest}", len(data)])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    files.append((f"{dist_info}/RECORD", record.getvalue().encode()))
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / f"gradguard-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return wheel, version


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", required=True, choices=sorted(PLATFORMS))
    parser.add_argument("--out", type=Path, default=CLIENT / "bundled")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "gradguard-bundle")
    args = parser.parse_args()

    extension_version = json.loads((CLIENT / "package.json").read_text(encoding="utf-8"))["version"]
    pure, native = read_requirements()
    pythons = read_pythons()
    platform = PLATFORMS[args.target]

    out: Path = args.out
    shutil.rmtree(out, ignore_errors=True)
    libs = out / "libs"
    libs.mkdir(parents=True)
    used: dict[str, str] = {}

    gg_wheel, version = build_gradguard_wheel(out / "wheels")
    if version != extension_version:
        raise SystemExit(f"pyproject.toml says gradguard {version}, client-vscode/package.json {extension_version}:"
                         " the bundled server and the extension must have one version")
    extract(gg_wheel, libs)
    for wheel in download(pure, args.cache / "pure", oldest=min(pythons, key=lambda v: tuple(map(int, v.split("."))))):
        if not wheel.name.endswith("-none-any.whl"):
            raise SystemExit(f"{wheel.name} is not a pure-Python wheel; mark it `native` in bundle/requirements.txt")
        check_pythons(wheel, pythons)
        extract(wheel, libs)
        used[wheel.name] = sha256(wheel)

    for spec in native:
        reference: dict[str, bytes] = {}
        for i, python in enumerate(pythons):
            (wheel,) = download([spec], args.cache / args.target, python, platform)
            used[wheel.name] = sha256(wheel)
            with zipfile.ZipFile(wheel) as zf:
                pure_part = {n: zf.read(n) for n in zf.namelist()
                             if not NATIVE.search(n) and ".dist-info/" not in n and not n.endswith("/")}
            if i == 0:
                reference = pure_part
                extract(wheel, libs)
            else:
                # Only the compiled module differs between CPythons; check that before sharing the rest.
                differing = sorted(n for n in set(reference) | set(pure_part) if reference.get(n) != pure_part.get(n))
                if differing:
                    raise SystemExit(f"{wheel.name}: Python files differ from the {pythons[0]} wheel: {differing[:5]}")
                extract(wheel, libs, only=lambda n: bool(NATIVE.search(n)))

    tool = out / "tool"
    tool.mkdir()
    shutil.copyfile(CLIENT / "python" / "launch.py", tool / "launch.py")
    (out / "manifest.json").write_text(json.dumps({
        "gradguardVersion": version,
        "target": args.target,
        "platform": platform,
        "pythons": pythons,
        "wheel": f"wheels/{gg_wheel.name}",
        "wheels": dict(sorted(used.items())),
    }, indent=2) + "\n", encoding="utf-8")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"bundled gradguard {version} for {args.target} (CPython {', '.join(pythons)}): {size / 1e6:.1f} MB in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
