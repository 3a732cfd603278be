"""Client settings (section `gradguard`) and their resolution per workspace folder.

Settings come from `initializationOptions.settings` (one dict, or a list of dicts
each with a `workspace` folder URI as VS Code sends them) and from
`workspace/didChangeConfiguration`. They override `[tool.gradguard]`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote

SEVERITIES = ("error", "warning", "information", "hint")
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class Settings:
    enable: bool = True
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    severity: dict[str, str] = field(default_factory=dict)  # code or code prefix -> severity name
    language: str = "auto"  # auto | en | zh
    debounce_ms: int = 50  # a newer edit cancels the running analysis, so a short wait costs little
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    docs_url: str | None = None  # e.g. "https://example.org/rules/{code}" -> codeDescription.href
    jedi_enable: bool = True
    jedi_warmup: tuple[str, ...] = ("torch",)  # modules jedi infers once in the background
    jedi_timeout_ms: int = 250
    lint_run: str = "onType"  # onType | onSave (gradguard.lint.run): onSave analyses on open and save only

    def updated(self, raw: dict[str, Any] | None) -> "Settings":
        """These settings with the keys present in `raw` (camelCase, as clients send them) applied.

        A value of the wrong type or out of range keeps the current value: a typo in settings.json must
        never fail `initialize`, blank a folder or stop re-analysis.
        """
        if not isinstance(raw, dict):
            return self
        changes: dict[str, Any] = {}
        if isinstance(raw.get("enable"), bool):
            changes["enable"] = raw["enable"]
        for key in ("select", "ignore"):
            if key in raw:
                value = raw[key]
                if value is None:
                    changes[key] = None
                elif (codes := _strings(value)) is not None:
                    changes[key] = codes
        if isinstance(raw.get("severity"), dict):
            changes["severity"] = {
                k: v.lower() for k, v in raw["severity"].items()
                if isinstance(k, str) and isinstance(v, str) and v.lower() in SEVERITIES
            }
        if raw.get("language") in ("auto", "en", "zh"):
            changes["language"] = raw["language"]
        if (ms := _number(raw.get("debounceMs"), 0, 60_000)) is not None:
            changes["debounce_ms"] = int(ms)
        if (size := _number(raw.get("maxFileBytes"), 1, 1 << 40)) is not None:
            changes["max_file_bytes"] = int(size)
        if "docsUrl" in raw and (raw["docsUrl"] is None or isinstance(raw["docsUrl"], str)):
            changes["docs_url"] = raw["docsUrl"] or None
        lint = raw.get("lint")  # gradguard.lint.run
        if isinstance(lint, dict) and lint.get("run") in ("onType", "onSave"):
            changes["lint_run"] = lint["run"]
        if raw.get("workspaceTrusted") is False:
            # Restricted Mode: jedi may start the workspace's Python to inspect its environment; stay static.
            changes["jedi_enable"] = False
        jedi = raw.get("jedi")
        if isinstance(jedi, dict) and raw.get("workspaceTrusted") is not False:
            if isinstance(jedi.get("enable"), bool):
                changes["jedi_enable"] = jedi["enable"]
            if isinstance(jedi.get("warmup"), list) and (modules := _strings(jedi["warmup"])) is not None:
                changes["jedi_warmup"] = modules
            if (ms := _number(jedi.get("timeoutMs"), 0, 60_000)) is not None:
                changes["jedi_timeout_ms"] = int(ms)
        return replace(self, **changes)

    def severity_for(self, code: str) -> str | None:
        """The user's severity for `code`: an exact code wins, then the longest prefix ("GG4")."""
        best = None
        for key, value in self.severity.items():
            if code.startswith(key) and (best is None or len(key) > len(best[0])):
                best = (key, value)
        return best[1] if best else None

    def config_overrides(self) -> dict[str, Any]:
        overrides: dict[str, Any] = {}
        if self.select is not None:
            overrides["select"] = list(self.select)
        if self.ignore is not None:
            overrides["ignore"] = list(self.ignore)
        return overrides


def _strings(value: Any) -> tuple[str, ...] | None:
    """A list of strings (or one string) as a tuple; None for anything else."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _number(value: Any, low: float, high: float) -> float | None:
    """A finite number within [low, high] (not a bool); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not (low <= value <= high):  # also False for NaN
        return None
    return value


class SettingsStore:
    """Global settings plus per-folder settings (multi-root workspaces)."""

    def __init__(self) -> None:
        self.global_settings = Settings()
        self._raw_global: dict[str, Any] = {}
        self._raw_folders: dict[str, dict[str, Any]] = {}  # unquote(folder URI), no trailing slash -> raw

    def load(self, raw: Any) -> None:
        """Take settings in any of the shapes clients send: a dict, a {"gradguard": dict}, or a
        list of per-folder dicts with a "workspace" key."""
        if isinstance(raw, dict) and isinstance(raw.get("gradguard"), (dict, list)):
            raw = raw["gradguard"]
        if isinstance(raw, list):
            for entry in raw:
                if isinstance(entry, dict):
                    folder = entry.get("workspace") or entry.get("scopeUri")
                    if isinstance(folder, str) and folder:
                        self._raw_folders[unquote(str(folder)).rstrip("/")] = entry
                    else:
                        self._raw_global.update(entry)
        elif isinstance(raw, dict):
            self._raw_global.update(raw)
        self.global_settings = Settings().updated(self._raw_global)

    def set_folder(self, folder_uri: str, raw: dict[str, Any]) -> None:
        self._raw_folders[unquote(folder_uri).rstrip("/")] = raw

    def for_uri(self, uri: str) -> Settings:
        """Settings for a document key (its URI unquoted, as documents.doc_key() makes it)."""
        best = None
        for folder in self._raw_folders:
            if uri == folder or uri.startswith(folder + "/"):
                if best is None or len(folder) > len(best):
                    best = folder
        if best is None:
            return self.global_settings
        return self.global_settings.updated(self._raw_folders[best])
