#!/usr/bin/env python3
"""Writes the README that goes into the .vsix (vsce --readme-path): client-vscode/README.md with each local
image inlined as a data: URI.

    packaged_readme.py [--out client-vscode/packaged/README.md]

VS Code shows an extension's README in a webview whose Content-Security-Policy allows only `https:` and `data:`
images, and it does not resolve a relative image against the installed extension: `images/hover.png` stays a
broken image on the Details page of a .vsix install. There is no website to point an https URL at (and vsce
only rewrites relative links to a repository's URL), so the image travels inside the README itself.
"""
import argparse
import base64
import re
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[1]
IMAGE = re.compile(r"(!\[[^\]]*\]\()([^)\s]+)(\))")
TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}


def inline_images(markdown: str, base: Path) -> str:
    def replace(match: re.Match) -> str:
        target = match.group(2)
        if target.startswith(("https:", "data:")):
            return match.group(0)
        path = (base / target).resolve()
        kind = TYPES.get(path.suffix.lower())
        if kind is None:
            raise SystemExit(f"README.md: {target}: VS Code's README view shows only {', '.join(TYPES)} images here")
        if not path.is_file():
            raise SystemExit(f"README.md: image {target} not found ({path})")
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f"{match.group(1)}data:{kind};base64,{data}{match.group(3)}"

    return IMAGE.sub(replace, markdown)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=CLIENT / "packaged" / "README.md")
    args = parser.parse_args()
    text = inline_images((CLIENT / "README.md").read_text(encoding="utf-8"), CLIENT)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
