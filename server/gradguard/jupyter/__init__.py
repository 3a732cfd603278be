"""gradguard in JupyterLab: the jupyter-lsp spec (entry point `jupyter_lsp_spec_v1`) and its proxy.

JupyterLab attaches one language server per language to a notebook or file, the one ranked highest
(ties go by name). The `gradguard` spec is given a higher priority (share/jupyter/lab/settings/overrides.d/
gradguard.json) and runs `python -m gradguard.jupyter`, which starts gradguard's server together with the
Python server the user had (pylsp, pyright, ... as jupyter-lsp finds or is configured with), so gradguard
is added, not swapped in. `GRADGUARD_JUPYTER_SERVER=<key>` picks that server, `=none` runs gradguard alone.
"""

from __future__ import annotations

import os
from typing import Optional

from ..processes import python_module

KEY = "gradguard"
ENV_SERVER = "GRADGUARD_JUPYTER_SERVER"
SPEC_GROUP = "jupyter_lsp_spec_v1"


def _is_ours(key: str, spec: dict) -> bool:
    return key == KEY or any("gradguard.jupyter" in str(part) for part in spec.get("argv", []))


def _python_specs(manager) -> dict[str, dict]:
    """Python servers jupyter-lsp would offer besides gradguard: autodetected, then the user's config on top."""
    from importlib.metadata import entry_points

    found: dict[str, dict] = {}
    try:
        points = entry_points(group=SPEC_GROUP)
    except TypeError:  # Python 3.9: entry_points() takes no arguments
        points = entry_points().get(SPEC_GROUP, [])
    for point in points:
        if point.name == KEY:
            continue
        try:
            finder = point.load()
            if hasattr(finder, "is_installed") and not finder.is_installed(manager):
                continue
            found.update(finder(manager) or {})
        except Exception:  # another package's broken spec must not cost the user gradguard
            continue
    # what the user configured wins, as in jupyter-lsp (an empty argv switches a server off)
    found.update(getattr(manager, "_language_servers_from_config", None) or {})
    found.update(getattr(manager, "conf_d_language_servers", None) or {})
    return {key: spec for key, spec in found.items()
            if spec.get("argv") and not _is_ours(key, spec)
            and "python" in [language.lower() for language in spec.get("languages", [])]}


def user_python_server(manager, choice: Optional[str] = None) -> Optional[tuple[str, dict]]:
    """The server JupyterLab would have attached without gradguard: the one named by
    GRADGUARD_JUPYTER_SERVER, else the first by name (JupyterLab's order between equal ranks)."""
    choice = os.environ.get(ENV_SERVER, "") if choice is None else choice
    if choice.lower() == "none":
        return None
    specs = _python_specs(manager)
    if choice:
        return (choice, specs[choice]) if choice in specs else None
    return next(((key, specs[key]) for key in sorted(specs)), None)


def spec_v1(manager) -> dict:
    """The `jupyter_lsp_spec_v1` entry point: gradguard's server, fronting the user's Python server."""
    # jupyter-lsp starts the server in the Jupyter root: no `python -m` there (the root would come first on sys.path)
    argv = python_module("gradguard", "server")
    spec = {
        "version": 2,
        "display_name": "gradguard",
        "languages": ["python"],
        "mime_types": ["text/python", "text/x-ipython"],
        "env": {"PYTHONUNBUFFERED": "1"},
        "install": {"pip": "pip install 'gradguard[jupyter]'"},
        # gradguard reads the editor's text; only a server behind it may need the file on disk
        "requires_documents_on_disk": False,
    }
    primary = user_python_server(manager)
    if primary is not None:
        key, theirs = primary
        virtual_dir = getattr(manager, "virtual_documents_dir", None) or ".virtual_documents"
        argv = python_module("gradguard.jupyter", "--virtual-dir", virtual_dir, "--with", key, "--", *theirs["argv"])
        spec["display_name"] = f"gradguard + {theirs.get('display_name', key)}"
        spec["env"] = {**spec["env"], **theirs.get("env", {})}
        spec["requires_documents_on_disk"] = theirs.get("requires_documents_on_disk", True)
        # their settings (language_servers.gradguard.serverSettings in JupyterLab) reach them through the proxy
        for field in ("config_schema", "workspace_configuration"):
            if field in theirs:
                spec[field] = theirs[field]
    spec["argv"] = argv
    return {KEY: spec}


def _server_installed(_manager) -> bool:
    """jupyter-lsp lists gradguard only where `gradguard server` can run (the lsp extra is installed)."""
    from importlib.util import find_spec

    return find_spec("pygls") is not None and find_spec("lsprotocol") is not None


spec_v1.is_installed = _server_installed  # type: ignore[attr-defined]
