"""Runs gradguard for the VS Code extension (shipped as bundled/tool/launch.py in the .vsix).

    python [-P] launch.py [--environment] <gradguard arguments>   e.g. `launch.py server`
    python [-P] launch.py --probe                                 one JSON line about this interpreter

Without --environment it runs the gradguard bundled next to this file (bundled/libs, put first on
sys.path, so the bundled pygls/libcst win over whatever the environment holds); with --environment it
runs the environment's own gradguard. Either way the user's packages stay importable, so jedi resolves
the project's imports in the user's interpreter.

Started as a script, Python puts this file's folder first on sys.path, never the working directory, so
a `gradguard/` package in an untrusted workspace is not imported even on Python 3.9 and 3.10 (which lack -P).
That entry is dropped too, so nothing here shadows a user module.
"""
import json
import os
import runpy
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
BUNDLED = os.path.dirname(HERE)
LIBS = os.path.join(BUNDLED, "libs")


def _manifest():
    try:
        with open(os.path.join(BUNDLED, "manifest.json"), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _supported(manifest):
    return "%d.%d" % sys.version_info[:2] in manifest.get("pythons", [])


def _probe(manifest):
    """What the extension needs to choose a launch: versions, and the environment's gradguard (metadata only,
    nothing of it is imported)."""
    import importlib.util

    env_version = None
    if importlib.util.find_spec("gradguard") is not None:
        try:
            from importlib.metadata import version

            env_version = version("gradguard")
        except Exception:
            env_version = "?"
    # A CLI-only install (no `gradguard[lsp]`) cannot run `gradguard server`: it counts as none.
    without_server = None
    if env_version and any(importlib.util.find_spec(name) is None for name in ("pygls", "lsprotocol", "jedi")):
        without_server, env_version = env_version, None
    print(json.dumps({
        "python": "%d.%d.%d" % sys.version_info[:3],
        "implementation": sys.implementation.name,
        "executable": sys.executable,
        "bundledSupported": sys.implementation.name == "cpython" and _supported(manifest),
        "bundledVersion": manifest.get("gradguardVersion"),
        "environmentVersion": env_version,
        "environmentWithoutServer": without_server,
    }))
    return 0


def main(argv):
    if sys.path and os.path.realpath(sys.path[0] or ".") == HERE:
        del sys.path[0]
    manifest = _manifest()
    if argv[:1] == ["--probe"]:
        return _probe(manifest)
    if argv[:1] == ["--environment"]:
        argv = argv[1:]
    else:
        if sys.implementation.name != "cpython" or not _supported(manifest):
            sys.stderr.write(
                "gradguard: the bundled server runs on CPython %s; this is %s %d.%d (%s)\n"
                % (", ".join(manifest.get("pythons", [])), sys.implementation.name, sys.version_info[0],
                   sys.version_info[1], sys.executable))
            return 3
        sys.path.insert(0, LIBS)
    sys.argv = ["gradguard"] + list(argv)
    runpy.run_module("gradguard", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
