"""The GitHub Actions workflows (.github/workflows/), read as GitHub reads them (YAML) since they cannot run here:
a tag is all a release takes, nothing is uploaded unless the build checks and the tests passed, each channel gets
its credential and no job holds more permission than it uses."""
from __future__ import annotations

import json
import re
from pathlib import Path

import copy
import functools
import importlib.resources

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"


def load(name: str) -> dict:
    workflow = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    # YAML 1.1 (PyYAML) reads the key `on` as True; GitHub reads it as "on".
    workflow["on"] = workflow.pop(True, workflow.get("on"))
    return workflow


def runs(job: dict) -> str:
    return "\n".join(step["run"] for step in job["steps"] if "run" in step)


def uses(job: dict) -> list[str]:
    return [step["uses"] for step in job["steps"] if "uses" in step]


def needs(job: dict) -> set[str]:
    value = job.get("needs", [])
    return {value} if isinstance(value, str) else set(value)


def ancestors(jobs: dict, name: str) -> set[str]:
    seen: set[str] = set()
    todo = list(needs(jobs[name]))
    while todo:
        parent = todo.pop()
        if parent not in seen:
            seen.add(parent)
            todo += needs(jobs[parent])
    return seen


@pytest.fixture(scope="module")
def release() -> dict:
    return load("release.yml")


def test_a_version_tag_is_the_only_trigger(release):
    assert release["on"] == {"push": {"tags": ["v*"]}}


def test_the_job_graph_builds_and_tests_before_anything_is_published(release):
    jobs = release["jobs"]
    assert set(jobs) == {"build", "test", "pypi", "marketplace", "open-vsx", "github-release"}
    for name, job in jobs.items():
        assert needs(job) <= set(jobs), name
        assert name not in ancestors(jobs, name), f"{name} needs itself"
    for publisher in ("pypi", "marketplace", "open-vsx"):
        assert needs(jobs[publisher]) == {"build", "test"}
    assert needs(jobs["github-release"]) == {"pypi", "marketplace", "open-vsx"}
    assert ancestors(jobs, "github-release") == {"build", "test", "pypi", "marketplace", "open-vsx"}


def test_the_build_job_runs_release_check_against_the_tag_and_the_test_job_runs_make_test(release):
    build, test = release["jobs"]["build"], release["jobs"]["test"]
    assert 'make release-check RELEASE_TAG="$GITHUB_REF_NAME"' in runs(build)
    assert 'python scripts/release_check.py notes "$GITHUB_REF_NAME" > release-notes.md' in runs(build)
    assert runs(test) == ".ci/torch\n.ci/run"
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_every_downloaded_artifact_is_uploaded_by_the_build(release):
    jobs = release["jobs"]
    uploaded = {step["with"]["name"] for step in jobs["build"]["steps"]
                if step.get("uses", "").startswith("actions/upload-artifact@")}
    assert uploaded == {"python-dist", "vsix", "release-notes"}
    for name, job in jobs.items():
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/download-artifact@") and "name" in step.get("with", {}):
                assert step["with"]["name"] in uploaded, name


def test_pypi_uses_trusted_publishing_and_no_token(release):
    pypi = release["jobs"]["pypi"]
    assert pypi["permissions"] == {"id-token": "write"}
    assert pypi["environment"]["name"] == "pypi"
    [publish] = [step for step in pypi["steps"] if step.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert not {"password", "user"} & set(publish.get("with", {}))
    assert "secrets." not in json.dumps(pypi)


def test_each_extension_gallery_gets_its_own_secret_and_every_platform_vsix(release):
    marketplace, open_vsx = release["jobs"]["marketplace"], release["jobs"]["open-vsx"]
    [vsce] = [step for step in marketplace["steps"] if "vsce publish" in step.get("run", "")]
    assert vsce["env"] == {"VSCE_PAT": "${{ secrets.VSCE_PAT }}"}
    assert vsce["run"] == "client-vscode/node_modules/.bin/vsce publish --skip-duplicate --packagePath vsix/*.vsix"
    [ovsx] = [step for step in open_vsx["steps"] if "ovsx publish" in step.get("run", "")]
    assert ovsx["env"] == {"OVSX_PAT": "${{ secrets.OVSX_PAT }}"}
    assert '.github/ovsx/node_modules/.bin/ovsx publish --skip-duplicate --packagePath "$vsix"' in ovsx["run"]
    assert "for vsix in vsix/*.vsix" in ovsx["run"]


@pytest.mark.parametrize("job_name, folder, tool", [("marketplace", "client-vscode", "@vscode/vsce"),
                                                    ("open-vsx", ".github/ovsx", "ovsx")])
def test_publishers_run_tools_installed_from_a_lockfile_before_any_token_is_there(release, job_name, folder, tool):
    # `npx --yes tool@version` resolved the tool's own dependencies afresh, with the token in the environment.
    job = release["jobs"][job_name]
    assert "npx" not in json.dumps(job) and "npm install" not in json.dumps(job)
    steps = [step.get("run", "") for step in job["steps"]]
    install = steps.index(f"npm ci --prefix {folder} --ignore-scripts --no-audit --no-fund")
    publish = next(i for i, run in enumerate(steps) if f"{folder}/node_modules/.bin/" in run)
    assert install < publish
    assert [i for i, step in enumerate(job["steps"]) if "env" in step] == [publish]
    lock = json.loads((REPO / folder / "package-lock.json").read_text())
    assert lock["lockfileVersion"] == 3 and lock["packages"][f"node_modules/{tool}"]["integrity"].startswith("sha512-")
    pinned = json.loads((REPO / folder / "package.json").read_text())["devDependencies"][tool]
    assert lock["packages"][f"node_modules/{tool}"]["version"] == pinned  # an exact version, as the lock has it


def test_the_github_release_carries_the_changelog_notes_and_every_artifact(release):
    job = release["jobs"]["github-release"]
    assert job["permissions"] == {"contents": "write"}
    command = runs(job)
    assert command.startswith('gh release create "$GITHUB_REF_NAME"')
    assert "--notes-file artifacts/release-notes/release-notes.md" in command
    assert "artifacts/python-dist/* artifacts/vsix/*" in command


def test_only_the_jobs_that_need_it_hold_more_than_read_access(release):
    assert release["permissions"] == {"contents": "read"}
    elevated = {name for name, job in release["jobs"].items() if "permissions" in job}
    assert elevated == {"pypi", "github-release"}


@pytest.mark.parametrize("name", ["release.yml", "ci.yml"])
def test_every_action_is_pinned_to_a_commit_with_its_release_named(name):
    # A tag or a branch (`release/v1` held the PyPI publish step) can be moved to other code; a commit cannot.
    for job_name, job in load(name)["jobs"].items():
        for action in uses(job):
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), (job_name, action)
    lines = [line.strip() for line in (WORKFLOWS / name).read_text().splitlines() if "uses:" in line]
    assert lines and all(re.fullmatch(r"- uses: \S+@[0-9a-f]{40} # v\d+\.\d+\.\d+", line) for line in lines), lines


def test_ci_runs_the_suite_on_pushes_and_pull_requests():
    ci = load("ci.yml")
    assert ci["on"] == {"push": {"branches": ["main"]}, "pull_request": None}
    assert runs(ci["jobs"]["test"]) == ".ci/torch\n.ci/run"
    assert runs(ci["jobs"]["release-sources"]) == ("python -m pip install packaging\n"
                                                   "python scripts/release_check.py sources")


@pytest.mark.parametrize("name", ["release.yml", "ci.yml"])
def test_no_pip_call_sees_two_indexes(name):
    # An extra index beside PyPI lets either serve any name (the higher version wins). The tests' CPU torch comes
    # from PyTorch's index alone, without its dependencies (.ci/torch); `make setup` then uses PyPI alone.
    text = (WORKFLOWS / name).read_text()
    assert "INDEX_URL" not in text and "index-url" not in text
    torch = (REPO / ".ci" / "torch").read_text()
    [install] = [line for line in torch.splitlines() if "pip install" in line and not line.startswith("#")]
    assert install.endswith("pip install --no-deps --index-url https://download.pytorch.org/whl/cpu 'torch==2.13.0+cpu'")
    assert "extra-index" not in torch


@functools.lru_cache(maxsize=1)
def workflow_validator():
    # SchemaStore's schema for workflow files, as check-jsonschema vendors it (no download).
    schema_file = importlib.resources.files("check_jsonschema") / "builtin_schemas/vendor/github-workflows.json"
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def workflow_schema_errors(workflow: dict) -> list[str]:
    return sorted(error.json_path for error in workflow_validator().iter_errors(workflow))


@pytest.mark.parametrize("name", ["release.yml", "ci.yml"])
def test_the_workflows_are_valid_github_workflows(name):
    assert workflow_schema_errors(load(name)) == []


def test_the_schema_catches_what_github_would_refuse(release):
    # The check above can fail: a misspelt permission value and a job without runs-on are refused.
    broken = copy.deepcopy(release)
    broken["jobs"]["pypi"]["permissions"] = {"id-token": "writ"}
    del broken["jobs"]["build"]["runs-on"]
    assert workflow_schema_errors(broken) == ["$.jobs.build", "$.jobs.pypi"]
