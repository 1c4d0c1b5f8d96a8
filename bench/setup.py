"""Set-up cost of every mechanism and of the advisor, for k = 2 ... 256 options.

    python -m bench.setup [--ks 2,16,64,128,256] [--timeout S] [--reports N] [--repeat R]

For each mechanism at the advisor's default parameters (CMS and HCMS in the survey setting,
512 hash functions and m = 128; dBitFlip for every d from 1 to k, the slowest d shown) and each k:
``make_mechanism`` (set-up), ``client_spec()``, ``estimate(tally)``, ``covariance(f, n)`` at evenly
spread answers, and ``consistent_estimate(tally, "auto")``, in that order, on a tally of N
randomized reports (ε = 1). Then ``ldp.advisor.recommend(k, epsilon, 1000)``: cold (every cache
cleared), warm (the same call again), warm at another n, and the slowest cold call over an ε
grid from 0.01 to 10.

Every case runs in its own process, timed from inside it, and a case that takes too long is cut
off at ``--timeout`` seconds (shown as "> S s"; the remaining steps of that case are then not
measured, "–"). Each time is the best of R runs, each one cold: the package's caches are cleared
and the mechanism is built anew before every run (the machine is shared, and single runs catch
other processes' bursts); "warm" repeats a call whose result is cached.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from typing import Any

import numpy as np

MECHANISMS: list[tuple[str, str, dict[str, Any]]] = [
    ("k-RR", "krr", {}),
    ("subset selection", "subset", {}),
    ("OUE", "oue", {}),
    ("SUE", "sue", {}),
    ("OLH", "olh", {}),
    ("Hadamard response", "hadamard", {}),
    ("CMS 512 × 128", "cms", {"hash_count": 512, "width": 128}),
    ("HCMS 512 × 128", "hcms", {"hash_count": 512, "width": 128}),
    ("dBitFlip, d = 1 … k (slowest d)", "dbitflip", {}),
]
STEPS = ["setup", "client_spec", "estimate", "covariance", "auto"]
ADVISOR_STEPS = ["cold", "warm", "warm_other_n", "cold_worst_epsilon"]
EPSILONS = [0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0]


def clear_caches() -> None:
    """Empty every functools cache in the ldp package (the advisor's and any it relies on)."""
    for name, module in list(sys.modules.items()):
        if name == "ldp" or name.startswith("ldp."):
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def emit(step: str, seconds: float) -> None:
    print(json.dumps([step, seconds]), flush=True)


def timed(step: str, work: Any) -> Any:
    start = time.perf_counter()
    result = work()
    emit(step, time.perf_counter() - start)
    return result


def time_steps(name: str, k: int, params: dict[str, Any], values: np.ndarray, repeat: int) -> dict[str, float]:
    """The steps of STEPS for one mechanism setting, in order: the best of ``repeat`` cold runs each.

    Every run clears the package's caches and builds a new mechanism, so that each one pays for
    everything the first call in a fresh process pays for.
    """
    from ldp import make_mechanism

    best = dict.fromkeys(STEPS, float("inf"))
    for _ in range(repeat):
        clear_caches()
        times: dict[str, float] = {}
        start = time.perf_counter()
        mechanism = make_mechanism(name, k=k, epsilon=1.0, **params)
        times["setup"] = time.perf_counter() - start
        start = time.perf_counter()
        mechanism.client_spec()
        times["client_spec"] = time.perf_counter() - start
        tally = mechanism.tally(mechanism.randomize(values, rng=1))
        start = time.perf_counter()
        mechanism.estimate(tally)
        times["estimate"] = time.perf_counter() - start
        start = time.perf_counter()
        mechanism.covariance(np.full(k, 1.0 / k), values.size)
        times["covariance"] = time.perf_counter() - start
        start = time.perf_counter()
        mechanism.consistent_estimate(tally, "auto")
        times["auto"] = time.perf_counter() - start
        best = {step: min(best[step], times[step]) for step in STEPS}
    return best


def run_mechanism(name: str, k: int, reports: int, repeat: int) -> None:
    """One case: the steps of STEPS for one mechanism and k (dBitFlip: the slowest d per step)."""
    values = np.random.default_rng(0).integers(0, k, size=reports)
    if name != "dbitflip":
        for step, seconds in time_steps(name, k, MECHANISMS_BY_NAME[name], values, repeat).items():
            emit(step, seconds)
        return
    # Repetitions outermost, so that a burst of load on the shared machine cannot spoil all R runs of
    # one d (the slowest d of 256 would then show the burst, not the code).
    best = {d: dict.fromkeys(STEPS, float("inf")) for d in range(1, k + 1)}
    for rep in range(repeat):
        for d in range(1, k + 1):
            times = time_steps(name, k, {"d": d}, values, 1)
            best[d] = {step: min(best[d][step], times[step]) for step in STEPS}
            if rep == 0:  # the slowest d so far, so that a run cut off in its first pass still says something
                for step in STEPS:
                    emit(step, max(best[e][step] for e in range(1, d + 1)))
                emit("d_done", d)
        for step in STEPS:
            emit(step, max(best[d][step] for d in best))
        emit("passes_done", rep + 1)


def best_time(work: Any, repeat: int, cold: bool) -> float:
    best = float("inf")
    for _ in range(repeat):
        if cold:
            clear_caches()
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def run_advisor(k: int, repeat: int) -> None:
    from ldp import advisor

    emit("cold", best_time(lambda: advisor.recommend(k, 1.0, 1000), repeat, cold=True))
    emit("warm", best_time(lambda: advisor.recommend(k, 1.0, 1000), repeat, cold=False))
    emit("warm_other_n", best_time(lambda: advisor.recommend(k, 1.0, 2000), repeat, cold=False))
    worst = max(best_time(lambda e=e: advisor.recommend(k, e, 1000), repeat, cold=True) for e in EPSILONS)
    emit("cold_worst_epsilon", worst)


MECHANISMS_BY_NAME = {name: params for _, name, params in MECHANISMS}


def measure(args: list[str], timeout: float) -> dict[str, float | str]:
    """Run one case in a child process; its step times, and "> timeout" for the step cut off."""
    command = [sys.executable, "-m", "bench.setup", "--case", *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)
        output, cut = done.stdout, False
    except subprocess.TimeoutExpired as error:
        raw = error.stdout or b""
        output, cut = (raw.decode() if isinstance(raw, bytes) else raw), True
    results: dict[str, float | str] = {}
    for line in output.splitlines():
        step, seconds = json.loads(line)
        results[step] = seconds
    done, passes = results.pop("d_done", None), results.pop("passes_done", None)
    if cut and passes:  # every d measured, in fewer runs than asked
        results["note"] = f"(> {timeout:g} s: best of {passes:g} runs)"
    elif cut and done:  # every step measured for d <= done
        results["note"] = f"(> {timeout:g} s: stopped after d = {done:g})"
    elif cut:
        results["cut"] = f"> {timeout:g} s"
    return results


def show(results: dict[str, float | str], steps: list[str]) -> list[str]:
    cells, cut_shown = [], False
    for step in steps:
        value = results.get(step)
        if isinstance(value, float):
            cells.append(f"{value * 1000:.3g}" if value < 10 else f"{value:,.1f} s")
        elif "cut" in results and not cut_shown:
            cells.append(str(results["cut"]))
            cut_shown = True
        else:
            cells.append("–")
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ks", default="2,16,64,128,256")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--reports", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.case:
        if args.case[0] == "advisor":
            run_advisor(int(args.case[1]), args.repeat)
        else:
            run_mechanism(args.case[0], int(args.case[1]), args.reports, args.repeat)
        return

    ks = [int(k) for k in args.ks.split(",")]
    machine = platform.processor() or platform.machine()
    print(
        f"epsilon = 1, {args.reports:,} reports, best of {args.repeat} cold runs, timeout {args.timeout:g} s per case; "
        f"{machine}, numpy {np.__version__}"
    )
    print()
    print("Mechanisms, ms (s where marked):")
    print()
    print("| mechanism | k | set-up | client_spec | estimate | covariance | consistent auto |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, name, _ in MECHANISMS:
        for k in ks:
            case = [name, str(k), "--reports", str(args.reports), "--repeat", str(args.repeat)]
            results = measure(case, args.timeout)
            note = f" {results['note']}" if "note" in results else ""
            print(f"| {label}{note} | {k} | " + " | ".join(show(results, STEPS)) + " |", flush=True)
    print()
    print("Advisor, recommend(k, epsilon, n), ms (s where marked):")
    print()
    print("| k | cold | warm | warm, other n | cold, slowest ε of 0.01 … 10 |")
    print("|---:|---:|---:|---:|---:|")
    for k in ks:
        results = measure(["advisor", str(k), "--repeat", str(args.repeat)], args.timeout)
        print(f"| {k} | " + " | ".join(show(results, ADVISOR_STEPS)) + " |", flush=True)


if __name__ == "__main__":
    main()
