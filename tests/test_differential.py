"""kernelrace against a brute-force oracle on small random kernels (benchmarks/differential.py).

A pinned slice of the campaign: a fixed seed draws kernels, each chunk of them checked in one
dialect in turn, with the oracle's parameter values given (`--scalar`) and left symbolic. Every
race the oracle finds must be reported and every witness must replay in the oracle. A failing
test shrinks the first kernel of each distinct failure and shows it with the oracle's race and
kernelrace's verdict. The kernels of issue 19, and those the campaign found, are checked by
name, and the oracle itself on kernels whose answer is known.
"""

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

# Long: in the slow set, which .ci/run runs after the default run (pyproject.toml's markers).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("differential", ROOT / "benchmarks" / "differential.py")
dt = sys.modules.setdefault("differential", importlib.util.module_from_spec(_spec))
if not hasattr(dt, "run_campaign"):
    _spec.loader.exec_module(dt)

from differential import (ALL, GLOBAL, SHARED, Barrier, Bin, ByConst, Case, Const, FBin, FConst,  # noqa: E402
                          For, If, IntLocal, IntValue, Kernel, LoadLocal, Load, Param, Store, Tid, Var, While)

SEED = 20260519
# In chunks of CHUNK, each chunk checked in one dialect in turn: two chunks per dialect (a kernel
# costs about 0.4 s of CPU). Campaigns of thousands of kernels, any seed: benchmarks/differential.py.
KERNELS = 120
CHUNK = 20
KERNEL_TIMEOUT = 2.0
SHRINK_SECONDS = 20.0
JOBS = 2


@pytest.fixture(scope="module")
def campaign():
    return dt.run_campaign(KERNELS, SEED, dt.DIALECTS, JOBS, KERNEL_TIMEOUT, chunk=CHUNK, rotate=True)


def _failures(campaign, kinds) -> str:
    """The report of the failures of `kinds`, the first kernel of each shrunk; "" if none."""
    if not any(sig[0] in kinds for sig in campaign.signatures()):
        return ""
    shrunk = dt.shrink_all(campaign, JOBS, KERNEL_TIMEOUT, SHRINK_SECONDS, 1, kinds)
    return "\n".join(dt.summary(campaign) + dt.failure_list(campaign, shrunk, kinds))


def test_the_slice_draws_racy_and_clean_kernels(campaign):
    assert campaign.kernels == KERNELS
    for d in dt.DIALECTS:
        checked, racy = campaign.checked[d], campaign.racy[d]
        assert checked // 10 < racy < checked * 9 // 10, dt.summary(campaign)


def test_random_kernels_no_missed_race(campaign):
    report = _failures(campaign, {"missed"})
    assert not report, "kernelrace reports no finding on a buffer the oracle finds racy:\n" + report


def test_random_kernels_witnesses_replay(campaign):
    """Every witness kernelrace vouches for replays in the oracle. One kernelrace itself reports
    as not validated (its own replay failed: a false alarm of the loop model, such as a zero-trip
    path around a loop that always runs) says so in the finding; those are counted by the
    campaign, not failed here."""
    vouched = [sig for sig in campaign.signatures() if sig[0] == "witness" and "not validated" not in str(sig)]
    assert not vouched, "witnesses that do not replay in the oracle:\n" + _failures(campaign, {"witness"})


def test_random_kernels_are_accepted(campaign):
    report = _failures(campaign, {"rejected", "crashed"})
    assert not report, "generated kernels kernelrace rejects or crashes on:\n" + report


# ---------------------------------------------------------------- the kernels of issue 19

A = "a"                     # one global buffer, as in the issue
TX = Tid(0)


def kernel(body, params=(), block=(64, 1, 1)) -> Kernel:
    return Kernel(block, tuple(params), (A,), (), tuple(body))


def rmw(index, op="+", c=1.0):
    """a[index] = a[index] op c"""
    return Store(A, index, FBin(op, Load(A, index), FConst(c)))


ISSUE_CASES = {
    # for (int r = 0; r < 4; ++r) a[r] = (float)threadIdx.x;
    "loop_constant_index": Case(kernel([For("r", Const(0), Const(4), Const(1), (Store(A, Var("r"), IntValue(TX)),))]), ()),
    # a[threadIdx.x * P] = a[threadIdx.x * P] + 1.0f with P = 0
    "product_with_zero_parameter": Case(kernel([rmw(Bin("*", TX, Param("P")))], ["P"]), (("P", 0),)),
    # for (int r = 0; r < 4; ++r) a[r * D + threadIdx.x] = (float)threadIdx.x with D = 1
    "row_times_parameter_plus_thread": Case(kernel(
        [For("r", Const(0), Const(4), Const(1), (Store(A, Bin("+", Bin("*", Var("r"), Param("D")), TX), IntValue(TX)),))],
        ["D"]), (("D", 1),)),
    # for (int j = 0; j < 16; j++) { int i = threadIdx.x + j * step; a[i] = a[i] * 2.0f; } with step = 1
    "parametric_stride_in_loop": Case(kernel(
        [For("j", Const(0), Const(16), Const(1), (IntLocal("i", Bin("+", TX, Bin("*", Var("j"), Param("step")))),
                                                  rmw(Var("i"), "*", 2.0)))], ["step"]), (("step", 1),)),
    # for (int i = threadIdx.x; i < 64; i += step) a[i] = a[i] + 1.0f; with step = 1
    "loop_from_thread_with_parametric_step": Case(kernel(
        [For("i", TX, Const(64), Param("step"), (rmw(Var("i")),))], ["step"]), (("step", 1),)),
    # int i = threadIdx.x; while (i < 64) { a[i] = a[i] * 2.0f; i += 1; }
    "while_counter_from_thread": Case(kernel([While("i", TX, Const(64), Const(1), (rmw(Var("i"), "*", 2.0),))]), ()),
}


# Found by the campaign (seed 1), shrunk and tidied by hand.
FOUND_CASES = {
    # a[0] = t; for (int r = 0; r < 1; ++r) { <barrier> } a[0] = t;  -- a pair of the two stores,
    # which the barrier the loop always runs once keeps apart.
    "barrier_in_a_loop_run_once": Case(kernel([Store(A, Const(0), IntValue(TX)),
                                               For("r", Const(0), Const(1), Const(1), (Barrier(ALL),)),
                                               Store(A, Const(0), IntValue(TX))], block=(2, 1, 1)), ()),
}


@pytest.mark.parametrize("dialect", dt.DIALECTS)
@pytest.mark.parametrize("name", {**ISSUE_CASES, **FOUND_CASES})
def test_issue_kernels(name, dialect, tmp_path):
    case = {**ISSUE_CASES, **FOUND_CASES}[name]
    verdict = dt.oracle(case.kernel, case.params, dialect)
    assert A in verdict.racy, "the oracle must find the issue's race"
    run = dt.check_dialect(case, dialect, verdict, tmp_path, KERNEL_TIMEOUT)
    text = dt.emit(case.kernel, dialect, dt.header(case, dialect, "define")).text
    # A witness kernelrace itself reports as not validated, and a false alarm, are counted (see
    # test_random_kernels_witnesses_replay); anything else fails.
    failures = [f for f in run.failures if f.kind != "false alarm"
                and not (f.kind == "witness" and "not validated" in f.what)]
    assert not failures, "\n".join(f"{f.kind} ({f.mode}): {f.detail}" for f in failures) + "\n" + text


# ---------------------------------------------------------------- the oracle itself

S = "s0"


def exchange(barrier) -> Kernel:
    """s0[t] = t; <barrier>; a[t] = s0[(t + 1) & 63]: neighbours through shared memory."""
    body = [Store(S, ByConst("&", TX, 63), IntValue(TX))] + ([barrier] if barrier else []) \
        + [Store(A, TX, Load(S, ByConst("&", Bin("+", TX, Const(1)), 63)))]
    return Kernel((64, 1, 1), (), (A,), ((S, 64),), tuple(body))


def read_then_owner_writes(spaces) -> Kernel:
    """f = a[0]; <barrier ordering `spaces`>; if (t == 0) a[0] = 2.0f"""
    return Kernel((8, 1, 1), (), (A,), (), (LoadLocal("f", A, Const(0)), Barrier(spaces),
                                           If(dt.Cmp("==", TX, Const(0)), (Store(A, Const(0), FConst(2.0)),), ())))


@pytest.mark.parametrize("dialect", dt.DIALECTS)
def test_oracle_shared_exchange(dialect):
    assert set(dt.oracle(exchange(None), {}, dialect).racy) == {S}
    assert not dt.oracle(exchange(Barrier(frozenset({SHARED}))), {}, dialect).touched


@pytest.mark.parametrize("dialect,spaces,racy", [
    ("cuda", frozenset({SHARED}), False),      # __syncthreads() orders global memory whatever was asked
    ("metal", frozenset({SHARED}), True),      # mem_threadgroup orders threadgroup memory only
    ("metal", frozenset({GLOBAL}), False),
    ("metal", frozenset(), True),              # mem_none
    ("glsl", frozenset({SHARED}), True),       # barrier() alone orders shared memory only
    ("glsl", ALL, False),                      # memoryBarrierBuffer(); barrier();
])
def test_oracle_barrier_scope(dialect, spaces, racy):
    assert (A in dt.oracle(read_then_owner_writes(spaces), {}, dialect).racy) == racy


def test_oracle_same_value_writes_are_benign():
    k = kernel([Store(A, Const(64), FConst(1.0)), Store(A, ByConst("/", TX, 2), IntValue(ByConst("/", TX, 2)))])
    v = dt.oracle(k, {}, "cuda")
    assert not v.racy and set(v.benign) == {A}


def test_oracle_loads_of_an_unwritten_element_are_one_value():
    # Every thread stores what it loaded from a[64], which nobody writes: the same value.
    k = kernel([LoadLocal("f", A, Const(64)), Store(A, Const(0), FBin("+", Load(A, Const(64)), FConst(1.0)))])
    assert not dt.oracle(k, {}, "cuda").racy


def test_oracle_stores_of_a_racy_load_are_read_dependent():
    # for (r = 0; r < 2; r++) { b[0] = a[64]; a[64] = 1.0f; }: every load of a[64] races with
    # another thread's write of it, so whether two threads' b[0] differ depends on which write
    # each load saw: the race is a's, and b's collisions are neither a race nor benign.
    body = (For("r", Const(0), Const(2), Const(1), (Store("b", Const(0), Load(A, Const(64))),
                                                    Store(A, Const(64), FConst(1.0)))),)
    v = dt.oracle(Kernel((64, 1, 1), (), (A, "b"), (), body), {}, "cuda")
    assert A in v.racy and "b" not in v.racy and "b" not in v.benign and "b" in v.read_dependent
    assert len(v.read_dependent_pairs) == 1


def test_oracle_c_arithmetic_and_undefined_kernels():
    assert dt.c_div(7, 2) == 3 and dt.c_div(-7, 2) == -3
    with pytest.raises(dt.IllDefined):      # GLSL's % of a negative value is not C's
        dt.oracle(kernel([Store(A, ByConst("%", Bin("-", TX, Const(3)), 4), FConst(1.0))]), {}, "cuda")
    with pytest.raises(dt.IllDefined):      # a global index below 0
        dt.oracle(kernel([Store(A, Bin("-", TX, Const(3)), FConst(1.0))]), {}, "cuda")
    with pytest.raises(dt.IllDefined):      # a step of 0 never ends
        dt.oracle(kernel([For("r", Const(0), Const(4), Param("P"), (Store(A, TX, FConst(1.0)),))], ["P"]), {"P": 0}, "cuda")


# ---------------------------------------------------------------- witness replay


def neighbour_loop() -> Case:
    """for (r = 0; r < 2; ++r) a[t] = a[t + 1] + 1.0f: a race kernelrace has long found."""
    return Case(kernel([For("r", Const(0), Const(2), Const(1), (Store(A, TX, FBin("+", Load(A, Bin("+", TX, Const(1))),
                                                                                     FConst(1.0))),))],
                       block=(8, 1, 1)), ())


@pytest.mark.parametrize("dialect", dt.DIALECTS)
def test_witnesses_replay_and_a_wrong_one_does_not(dialect, tmp_path):
    case = neighbour_loop()
    em = dt.emit(case.kernel, dialect, dt.header(case, dialect, "define"))
    subject = dt.Subject(em, case.kernel.block, tmp_path)
    findings = [f for f in subject.check({}, dt.analyser_options(KERNEL_TIMEOUT)) if f.rule in dt.RACE_RULES]
    assert findings
    for f in findings:
        assert dt.replay(f, subject, case.kernel, {}, dialect).status == "ok", f.witness
        wrong = SimpleNamespace(**{**f.__dict__, "witness": {**f.witness, "element": 1000}})
        assert dt.replay(wrong, subject, case.kernel, {}, dialect).reason == dt.NOT_PERFORMED
