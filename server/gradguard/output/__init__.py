"""One module per output format (as ruff's message/{text,json,sarif,github}.rs)."""
from .common import DOCS_URL, artifact_uri
from .github import format_github
from .json import finding_json, format_json, parse_note_json
from .sarif import format_sarif
from .text import format_statistics, format_text, summary_lines

__all__ = ["DOCS_URL", "artifact_uri", "finding_json", "format_github", "format_json", "format_sarif",
           "format_statistics", "format_text", "parse_note_json", "summary_lines"]
