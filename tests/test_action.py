"""The GitHub Action (action.yml) and the pre-commit hooks (.pre-commit-hooks.yaml), run as their
hosts run them, in a scratch repository outside this one.

The Action's `run:` steps go through `bash --noprofile --norc -eo pipefail`, as the runner runs a
`shell: bash` step, with the runner's variables (GITHUB_ACTION_PATH: a copy of this repository;
GITHUB_OUTPUT) and each step's `env:` with its `${{ }}` expressions evaluated. The install step is
the Action's own, from the local path, with `pip-args: --no-deps --no-build-isolation` (the
dependencies are this environment's, seen from a `--system-site-packages` virtualenv, so nothing is
downloaded). The upload step is GitHub's own action: what it would upload is checked instead (the
SARIF file, valid against the schema, pointing at the scratch repository's files). Each pre-commit
hook's `entry` runs on the files its `files` pattern selects, from the repository root, as
pre-commit passes them.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import venv

import pytest
import yaml

from conftest import FIXTURES, TESTS

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

ROOT = TESTS.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """(environment of a step, the scratch repository): the runner's PATH starts with a fresh
    virtualenv's bin, where the Action's install step puts kernelrace."""
    base = tmp_path_factory.mktemp("action")
    action_path = base / "action"
    shutil.copytree(ROOT, action_path, ignore=shutil.ignore_patterns(
        ".git", "__pycache__", "build", "dist", "*.egg-info", ".pytest_cache", ".kernelrace_cache", ".venv"))
    env_dir = base / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    repo = base / "repo"
    (repo / "kernels").mkdir(parents=True)
    for rel in ("cuda/neighbour_shift.cu", "vulkan/reduce_tree.comp", "wgsl/reduce_tree_fixed.wgsl"):
        shutil.copy(FIXTURES / rel, repo / "kernels" / rel.split("/")[1])
    shutil.copy(TESTS / "builders" / "grid_races.py", repo / "grid_races.py")
    (repo / "kernelrace.toml").write_text('[[lint]]\nbuilder = "grid_races:tiles"\ntargets = ["cuda"]\n'
                                          'params = { overlap = 0 }\n')
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"PATH": f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}", "GITHUB_ACTION_PATH": str(action_path),
            "GITHUB_WORKSPACE": str(repo), "KERNELRACE_NO_CACHE": "1", "CI": "true"}
    return env, repo


def _inputs(given: dict) -> dict:
    out = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(given) - set(out)
    assert not unknown, f"not inputs of the Action: {unknown}"
    return out | given


def _expr(text: str, inputs: dict, outputs: dict) -> str:
    def value(m):
        expr = m.group(1)
        if expr.startswith("inputs."):
            return inputs[expr[len("inputs."):]]
        if expr.startswith("steps.run.outputs."):
            return outputs.get(expr[len("steps.run.outputs."):], "")
        raise AssertionError(f"an expression the test does not evaluate: {expr}")
    return EXPR.sub(value, str(text))


def run_action(runner, tmp_path, **given):
    """Run the Action's steps in order, as the runner would, until one fails. Returns
    (the run step's outputs, [(step name, exit status, stdout, stderr)], what the upload step gets)."""
    env, repo = runner
    inputs = _inputs(given)
    outputs: dict[str, str] = {}
    done, upload = [], None
    for step in ACTION["runs"]["steps"]:
        if "uses" in step:
            assert step["uses"].startswith("github/codeql-action/upload-sarif@")
            upload = {k: _expr(v, inputs, outputs) for k, v in step["with"].items()}
            continue
        assert "${{" not in step["run"], f"{step['name']}: inputs reach a script through env:, not ${{{{ }}}}"
        assert step["shell"] == "bash"
        script = tmp_path / "step.sh"
        script.write_text(step["run"])
        out_file = tmp_path / "github_output"
        out_file.write_text("")
        step_env = env | {k: _expr(v, inputs, outputs) for k, v in step.get("env", {}).items()}
        step_env["GITHUB_OUTPUT"] = str(out_file)
        got = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=repo,
                             env=step_env, capture_output=True, text=True, timeout=600)
        if step.get("id") == "run":
            outputs |= dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
        done.append((step["name"], got.returncode, got.stdout, got.stderr))
        if got.returncode != 0:
            break
    return outputs, done, upload


LOCAL_INSTALL = "--no-deps --no-build-isolation"


def test_check_paths_uploads_sarif_on_the_users_lines_then_fails(runner, tmp_path):
    from test_sarif import validate

    outputs, steps, upload = run_action(runner, tmp_path, paths="kernels", **{"pip-args": LOCAL_INSTALL})
    names = [(name, code) for name, code, _, _ in steps]
    assert names == [("Install kernelrace", 0), ("Run kernelrace", 0), ("Fail on findings", 1)], steps
    assert steps[0][2].strip().endswith("kernelrace 0.1.0")
    assert outputs == {"exit-code": "1"}
    assert "::error title=kernelrace::kernelrace reported findings" in steps[2][2]
    _, repo = runner
    assert upload == {"sarif_file": "kernelrace.sarif", "category": "kernelrace"}
    log = json.loads((repo / upload["sarif_file"]).read_text())
    validate(log)
    places = {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["ruleId"])
              for r in log["runs"][0]["results"]}
    assert ("kernels/neighbour_shift.cu", "read-after-write") in places
    assert ("kernels/reduce_tree.comp", "read-after-write") in places      # the GLSL file, not its disassembly
    assert not any(uri.endswith(".spvasm") for uri, _ in places), places


def test_github_annotations_without_failing(runner, tmp_path):
    outputs, steps, upload = run_action(runner, tmp_path, paths="kernels/neighbour_shift.cu", format="github",
                                        **{"fail-on-findings": "false", "pip-args": LOCAL_INSTALL})
    assert [code for _, code, _, _ in steps] == [0, 0, 0] and outputs == {"exit-code": "1"}
    annotations = steps[1][2].splitlines()
    assert annotations and all(a.startswith("::error file=kernels/neighbour_shift.cu,line=") for a in annotations)


def test_configured_builders_and_a_builder_input(runner, tmp_path):
    outputs, steps, _ = run_action(runner, tmp_path, **{"pip-args": LOCAL_INSTALL})
    assert outputs == {"exit-code": "0"} and [code for _, code, _, _ in steps] == [0, 0, 0], steps
    outputs, steps, _ = run_action(runner, tmp_path, builder="grid_races:tiles", targets="cuda",
                                   args="--param overlap=1 --format concise", **{"pip-args": LOCAL_INSTALL})
    assert outputs == {"exit-code": "1"}, steps


def test_a_builders_alerts_land_on_its_python_lines(runner, tmp_path):
    """The builder's SARIF, as uploaded: each alert on the builder's own line of the racing store
    (TVM's emitted source is a related location, written where the Action emits it)."""
    from test_sarif import validate

    _, repo = runner
    outputs, steps, upload = run_action(runner, tmp_path, builder="grid_races:tiles", targets="cuda,vulkan",
                                        args="--param overlap=1",
                                        **{"pip-args": LOCAL_INSTALL, "fail-on-findings": "false"})
    assert outputs == {"exit-code": "1"}, steps
    log = json.loads((repo / upload["sarif_file"]).read_text())
    validate(log)
    store = next(n for n, line in enumerate((repo / "grid_races.py").read_text().splitlines(), 1)
                 if line.strip().startswith("B[bx * step + tx] ="))
    results = log["runs"][0]["results"]
    assert len(results) == 2
    for r in results:
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"] == {"uri": "grid_races.py", "uriBaseId": "%SRCROOT%"}
        assert loc["region"] == {"startLine": store, "startColumn": 21}
        emitted = next(x for x in r["relatedLocations"] if x["id"] == 2)["physicalLocation"]["artifactLocation"]
        assert emitted["uri"].startswith("kernelrace-emitted/") and (repo / emitted["uri"]).is_file()


def test_bad_input_fails_the_run_step(runner, tmp_path):
    outputs, steps, _ = run_action(runner, tmp_path, paths="kernels/missing.cu", **{"pip-args": LOCAL_INSTALL})
    assert outputs == {"exit-code": "2"} and steps[-1][:2] == ("Run kernelrace", 2)
    assert steps[-1][3].strip() == "kernelrace: error: kernels/missing.cu: no such file"


def _hook(name: str) -> dict:
    (hook,) = [h for h in HOOKS if h["id"] == name]
    assert hook["language"] == "python"     # pre-commit pip-installs this repository for it
    return hook


def test_pre_commit_check_hook_selects_every_dialect_and_runs(runner, tmp_path):
    env, repo = runner
    run_action(runner, tmp_path, paths="kernels", **{"pip-args": LOCAL_INSTALL})    # installs kernelrace
    hook = _hook("kernelrace-check")
    for ext in (".cu", ".cuh", ".metal", ".cl", ".spvasm", ".spv", ".comp", ".glsl", ".wgsl"):
        assert re.search(hook["files"], f"src/k{ext}"), ext
    for other in ("setup.py", "README.md", "k.cu.txt"):
        assert not re.search(hook["files"], other), other
    tracked = ["grid_races.py", "kernelrace.toml", *(f"kernels/{p.name}" for p in (repo / "kernels").iterdir())]
    staged = sorted(p for p in tracked if re.search(hook["files"], p))
    assert staged == ["kernels/neighbour_shift.cu", "kernels/reduce_tree.comp", "kernels/reduce_tree_fixed.wgsl"]
    got = subprocess.run([*hook["entry"].split(), *hook.get("args", []), *staged], cwd=repo, env=env,
                         capture_output=True, text=True, timeout=300)
    assert got.returncode == 1 and "kernels/neighbour_shift.cu:8:23: error[read-after-write]" in got.stdout


def test_pre_commit_builder_hook_lints_the_configuration(runner, tmp_path):
    env, repo = runner
    run_action(runner, tmp_path, paths="kernels", **{"pip-args": LOCAL_INSTALL})
    hook = _hook("kernelrace")
    assert hook["pass_filenames"] is False
    assert re.search(hook["files"], "grid_races.py") and re.search(hook["files"], "kernelrace.toml")
    got = subprocess.run(hook["entry"].split() + hook.get("args", []), cwd=repo, env=env, capture_output=True,
                         text=True, timeout=300)
    assert got.returncode == 0 and "1 kernel(s): 1 clean" in got.stdout, got.stdout + got.stderr
