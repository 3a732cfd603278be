"""`make fixcheck` (tests/real_world/fixcheck.py) on a few corpus bugs, so it cannot rot: gradguard's fix is applied
to a temp copy, run beside the hand fix under the same seeds, and judged by the values backward() saw."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "real_world"))
import fixcheck  # noqa: E402
import verify  # noqa: E402

SCRIPT = Path(__file__).parent / "real_world" / "fixcheck.py"


def trace(values, grads, calls=None, trained=()):
    return fixcheck.Trace("p.py", backward_values=[[[], [v]] for v in values],
                          backward_calls=len(values) if calls is None else calls,
                          first_grads=[[list(s), list(g)] for s, g in grads], trained=list(trained))


def test_same_values_and_gradients_train_the_same():
    ours = trace([0.5, 0.25], [((2,), [1.0, 2.0]), ((1,), [3.0])])
    ref = trace([0.5 + 1e-6, 0.25], [((1,), [3.0]), ((2,), [1.0, 2.00001])])
    assert fixcheck.compare(ours, ref) is None


def test_a_later_value_off_by_more_than_rtol_does_not():
    ours, ref = trace([0.5, 0.2503], [((1,), [3.0])]), trace([0.5, 0.25], [((1,), [3.0])])
    assert fixcheck.compare(ours, ref) == "backward #2 on a different value (0.2503 vs hand fix 0.25)"
    assert fixcheck.compare(ours, ref, "first-backward") is None


def test_fewer_leaves_after_the_first_backward_only_under_a_detach_promise():
    ours = trace([0.5], [((2,), [1.0, 2.0])])
    ref = trace([0.5], [((2,), [1.0, 2.0]), ((3,), [0.0, 0.0, 0.0])])
    assert fixcheck.compare(ours, ref) == "1 leaves got a gradient in the first backward, hand fix 2"
    assert fixcheck.compare(ours, ref, "detach") is None
    assert fixcheck.compare(ref, ours, "detach") == "2 leaves got a gradient in the first backward, hand fix 1"


def test_a_different_number_of_backward_calls_fails_every_promise_but_runs():
    ours, ref = trace([0.5], [], trained=["(2,):float32"]), trace([0.5, 0.1], [], trained=["(2,):float32"])
    for promise in ("same", "detach", "retain", "first-backward"):
        assert fixcheck.compare(ours, ref, promise) == "backward() called 1 times, hand fix 2"
    assert fixcheck.compare(ours, ref, "runs") is None
    assert fixcheck.compare(trace([0.5], []), ref, "runs") == "lost gradients ['(2,):float32']"


def test_a_retained_graph_may_fill_more_leaves_than_the_hand_fix():
    ours = trace([0.5, 0.4], [((2,), [1.0, 2.0]), ((3,), [0.5, 0.5, 0.5])])
    ref = trace([0.5, 0.4], [((2,), [1.0, 2.0])])
    assert fixcheck.compare(ours, ref, "retain") is None
    assert fixcheck.compare(ref, ours, "retain") == ("the hand fix's gradients after the first backward are not "
                                                     "all among the fix's")
    assert fixcheck.compare(trace([0.5, 0.41], [((2,), [1.0, 2.0])]), ref, "retain").startswith("backward #2")


def test_manifest_promises_are_well_formed():
    assert fixcheck.manifest_problems(verify.load_manifests()) == []
    bad = [{"manifest": "x.toml", "id": "a", "fix_promise": "close enough"},
           {"manifest": "x.toml", "id": "b", "fix_promise": "runs"},
           {"manifest": "x.toml", "id": "c", "fix_differs": "because"}]
    assert len(fixcheck.manifest_problems(bad)) == 4


def test_a_hanging_program_is_cut_off(tmp_path):
    hang = tmp_path / "hang.py"
    hang.write_text("import torch\nwhile True:\n    try:\n        pass\n    except BaseException:\n        pass\n")
    ok = tmp_path / "ok.py"
    ok.write_text("import torch\nw = torch.ones(2, requires_grad=True)\n(w * 3).sum().backward()\n")
    traces = fixcheck.run_traced([hang, ok], timeout=2, jobs=2)
    assert traces[str(hang)].error_type == "Timeout"
    t = traces[str(ok)]
    assert t.clean and t.backward_values == [[[], [6.0]]] and t.first_grads == [[[2], [3.0, 3.0]]]


def test_fixcheck_on_two_gan_bugs_and_a_carried_state():
    ids = "sbb_gh_srgan_74_01,sbb_so_whosebug_5232549_01,cs_gh_morvan_57_01"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--id", ids, "--json"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["rows"] == {"GG401": {"detected": 2, "fix": 2, "clean": 2, "trains": 2},
                           "GG402": {"detected": 1, "fix": 1, "clean": 1, "trains": 1}}
    assert res["summary_line"] == ("fixcheck: 3 detected | fix offered 3 (100%) | runs clean 3 (100%) | trains the "
                                   "same 3 (100%)")


def test_a_fix_that_keeps_the_program_as_written_is_compared_with_the_bug_program_up_to_its_crash():
    original = trace([0.5], [])  # the bug program raised in its first backward()
    ours = trace([0.5, 0.3], [((2,), [1.0, 2.0])], trained=["(2,):float32"])
    ref = trace([0.7, 0.2], [((2,), [9.0, 9.0])], trained=["(2,):float32"])  # the hand fix reordered the forward
    assert fixcheck.compare(ours, ref, "as-written", original) is None
    assert fixcheck.compare(trace([0.6, 0.3], [], trained=["(2,):float32"]), ref, "as-written", original) == (
        "backward #1 on a different value than the program as written (0.6 vs 0.5)")
    assert fixcheck.compare(trace([0.5], []), ref, "as-written", original) == "lost gradients ['(2,):float32']"
    assert fixcheck.compare(ours, ref, "as-written", trace([], [])) == (
        "the bug program called no backward() to compare with")


def test_fixcheck_fixes_and_runs_whole_projects():
    """Two multi-file projects: each is copied whole, fixed where the finding is, run from its entry script beside
    its hand-fixed copy, and trains the same (the Transformer-XL memory carried into the next segment, the WGAN-GP
    penalty reused by every critic step)."""
    ids = "cs_proj_txlmems_01,bt_proj_wgangp_01"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--id", ids, "--json"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["rows"] == {"GG402": {"detected": 1, "fix": 1, "clean": 1, "trains": 1},
                           "GG404": {"detected": 1, "fix": 1, "clean": 1, "trains": 1}}
    assert [(p["id"], p["form"]) for p in res["programs"]] == [("cs_proj_txlmems_01", "project"),
                                                               ("bt_proj_wgangp_01", "project")]
