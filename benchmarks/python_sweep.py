"""The Dask sweeps against one process on the same grid (docs/performance.md, "Sweeps on Dask").

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/python_sweep.py [--grid deadline|bamboo] [--workers 2] [--repetitions 3]

--grid deadline (the default): us-east-1f of the shared traces (tests/fixtures/spot_availability), C = 48 h,
R in {52, 60, 70} h, d in {0.1, 0.2} h, the default policy, Uniform Progress and the hindsight
optimum, 27 start ticks (0 to 18,200 every 700): 486 windows. The baseline is a loop of
dnnplan.simulate in this process (one thread); the sweep runs the same grid on a LocalCluster of
--workers processes (started before the clock, as a user's cluster would be). Prints each
repetition's time, the medians and the ratio, and checks that both give the same rows.
--grid bamboo: Bamboo's table, GPT-2 and BERT at removal probabilities 0.01, 0.05, 0.1 and 0.25
over seeds 1-10,000 (80,000 runs); the baseline a loop of dnnplan.bamboo_simulate per setting,
the sweep dnnplan.bamboo_sweep in chunks of 1,250 seeds (64 tasks).
"""

import argparse
import json
import pathlib
import statistics
import time

import dnnplan
from dnnplan import sweeps

ROOT = pathlib.Path(__file__).resolve().parents[1]
TRACES = ROOT / "tests" / "fixtures" / "spot_availability" / "aws-2023-02-15"
GRID = dict(work_h=48, deadlines_h=[52, 60, 70], changeovers_h=[0.1, 0.2], policies=["default", "uniform_progress", "optimal"],
            start_ticks=list(range(0, 18701, 700)))


def loop(zone, prices):
    rows = []
    for deadline_h in GRID["deadlines_h"]:
        for changeover_h in GRID["changeovers_h"]:
            for policy in GRID["policies"]:
                out = dnnplan.simulate(zone, prices=prices, on_demand_usd_per_h=3.06, work_h=GRID["work_h"], deadline_h=deadline_h,
                                       changeover_h=changeover_h, start_ticks=GRID["start_ticks"], policy=policy)
                rows += [dict(deadline_h=deadline_h, changeover_h=changeover_h, policy=out["policy"],
                              **{k: w.get(k, sweeps._DEFAULTS.get(k)) for k in sweeps.COLUMNS[3:]}) for w in out["windows"]]
    return rows


BAMBOO = dict(workloads=["gpt2", "bert"], removal_probabilities=[0.01, 0.05, 0.1, 0.25], seeds=(1, 10000))


def bamboo_loop():
    rows = []
    for workload in BAMBOO["workloads"]:
        for p in BAMBOO["removal_probabilities"]:
            out = dnnplan.bamboo_simulate(workload, removal_probability=p, seeds=BAMBOO["seeds"])
            rows += [dict(workload=workload, removal_probability=p, reason="", **run) for run in out["per_seed"]]
    return rows


def grids(zone, prices):
    """(what, the loop, the sweep on a client) of each grid."""
    return {
        "deadline": (lambda: f"{len(GRID['start_ticks']) * 18} windows", lambda: loop(zone, prices),
                     lambda client: dnnplan.sweep(zone, prices=prices, on_demand_usd_per_h=3.06, client=client, chunk=9,
                                                  progress=False, **GRID)),
        "bamboo": (lambda: "80,000 Bamboo runs", bamboo_loop,
                   lambda client: dnnplan.bamboo_sweep(client=client, chunk=1250, progress=False, **BAMBOO)),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--grid", choices=["deadline", "bamboo"], default="deadline")
    args = parser.parse_args()
    from distributed import Client, LocalCluster
    zone = dnnplan.read_trace(TRACES / "us-east-1f_v100_1.csv")
    prices = json.loads((TRACES / "v100_spot_prices.json").read_text())
    what, run_loop, run_sweep = grids(zone, prices)[args.grid]
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        one, dask = [], []
        for _ in range(args.repetitions):
            start = time.perf_counter()
            expected = run_loop()
            one.append(time.perf_counter() - start)
            start = time.perf_counter()
            rows = run_sweep(client)
            dask.append(time.perf_counter() - start)
            assert rows == expected, "the sweep's rows differ from the loop's"
    print(f"grid: {what()}; one process: {', '.join(f'{t:.2f}' for t in one)} s; "
          f"Dask, {args.workers} workers: {', '.join(f'{t:.2f}' for t in dask)} s")
    print(f"medians: one process {statistics.median(one):.2f} s, Dask {statistics.median(dask):.2f} s, "
          f"ratio {statistics.median(one) / statistics.median(dask):.2f}x")


if __name__ == "__main__":
    main()
