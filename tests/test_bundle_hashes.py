"""The wheels the VS Code extension bundles are checked against their sha256 (issue 33, item 11).

client-vscode/scripts/bundle_server.py fetched the pinned wheels with `pip download` and trusted any file of the
right name in its cache (~/.cache/gradguard-bundle): a changed index or cache changed what every VSIX ships.
Every pin now carries the sha256 of each wheel it may be (libcst: one per CPython and platform of the five
targets), pip downloads with --require-hashes, and a cached wheel counts only with one of those hashes.
"""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "client-vscode" / "scripts" / "bundle_server.py"


@pytest.fixture(scope="module")
def bundle_server():
    spec = importlib.util.spec_from_file_location("bundle_server", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_pin_names_the_hashes_of_its_wheels(bundle_server):
    pure, native = bundle_server.read_requirements()
    assert [spec for spec, _ in pure] == ["pygls==2.1.1", "lsprotocol==2025.0.0", "attrs==26.1.0", "cattrs==25.3.0",
                                          "typing_extensions==4.16.0", "jedi==0.19.2", "parso==0.8.7", "tomli==2.5.0",
                                          "exceptiongroup==1.3.2"]
    assert all(len(hashes) == 1 for _, hashes in pure)
    [(libcst, hashes)] = native
    pythons = bundle_server.read_pythons()
    assert libcst == "libcst==1.9.0" and len(set(hashes)) == len(pythons) * len(bundle_server.PLATFORMS) == 25


def test_a_pin_without_a_hash_is_refused(bundle_server, tmp_path, monkeypatch):
    client = tmp_path / "client-vscode"
    (client / "bundle").mkdir(parents=True)
    (client / "bundle" / "requirements.txt").write_text("pygls==2.1.1\n")
    monkeypatch.setattr(bundle_server, "CLIENT", client)
    with pytest.raises(SystemExit, match=r"pygls==2.1.1 has no --hash=sha256:...; every wheel is checked"):
        bundle_server.read_requirements()


def test_a_cached_wheel_that_is_not_the_pinned_one_is_not_used(bundle_server, tmp_path):
    # A wheel of the right name whose bytes are not the pinned ones (a poisoned cache, another index's build):
    # dropped, and pip, asked for the pinned hash only, refuses what the index serves under that name.
    cache = tmp_path / "pure"
    cache.mkdir()
    impostor = cache / "parso-0.8.7-py2.py3-none-any.whl"
    impostor.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    with pytest.raises(SystemExit, match="DO NOT MATCH THE HASHES"):
        bundle_server.download([("parso==0.8.7", ("0" * 64,))], cache)
    assert not impostor.exists()


def test_the_pinned_wheel_is_taken_from_the_cache_when_its_hash_matches(bundle_server, tmp_path):
    pure, _ = bundle_server.read_requirements()
    [(spec, hashes)] = [pin for pin in pure if pin[0] == "parso==0.8.7"]
    cache = tmp_path / "pure"
    [wheel] = bundle_server.download([(spec, hashes)], cache)  # fetched with --require-hashes
    assert bundle_server.sha256(wheel) == hashes[0]
    moved = shutil.copy(wheel, tmp_path / "kept.whl")
    [again] = bundle_server.download([(spec, hashes)], cache)  # from the cache, checked, not fetched
    assert again == wheel and Path(moved).read_bytes() == again.read_bytes()
