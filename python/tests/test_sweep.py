"""dnnplan.sweep on a two-worker LocalCluster: the same rows as a loop of dnnplan.simulate, in the
grid's order, and the CSV."""

import csv
import json

import pytest

import dnnplan
from conftest import FIXTURES
from dnnplan import sweeps

TRACES = FIXTURES / "spot_availability" / "aws-2023-02-15"


def test_sweep_on_a_local_cluster_equals_a_loop(tmp_path):
    zone = TRACES / "us-east-2b_v100_1.csv"
    prices = json.loads((TRACES / "v100_spot_prices.json").read_text())
    grid = dict(work_h=12, deadlines_h=[14, 18], changeovers_h=[0.1], policies=["default", "uniform_progress"],
                start_ticks=[0, 3000, 6000, 9000, 12000])
    out = tmp_path / "sweep.csv"
    rows = dnnplan.sweep(zone, prices=prices, on_demand_usd_per_h=3.06, workers=2, chunk=2, csv=out, progress=False, **grid)
    expected = []
    for deadline_h in grid["deadlines_h"]:
        for policy in grid["policies"]:
            windows = dnnplan.simulate(zone, prices=prices, on_demand_usd_per_h=3.06, work_h=12, deadline_h=deadline_h,
                                       changeover_h=0.1, start_ticks=grid["start_ticks"], policy=policy)["windows"]
            expected += [dict(deadline_h=deadline_h, changeover_h=0.1, policy=policy, **w) for w in windows]
    assert rows == [{k: e.get(k, {"finished": True, "work_left_h": 0.0}.get(k)) for k in sweeps.COLUMNS} for e in expected]
    assert all(r["finished"] and r["work_left_h"] == 0.0 for r in rows)
    with open(out, newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert len(table) == len(rows) == 20
    assert float(table[0]["cost_usd"]) == pytest.approx(rows[0]["cost_usd"])


def test_bamboo_sweep_equals_the_runs_of_bamboo_simulate(tmp_path):
    from distributed import Client, LocalCluster
    out = tmp_path / "bamboo.csv"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        # the probabilities as a generator: read once, for the checks and the tasks
        rows = dnnplan.bamboo_sweep(["gpt2", "vgg"], (p for p in [0.01, 0.1]), (3, 8), target_steps=2000, chunk=4, client=client,
                                    csv=out, progress=False)
    expected = []
    for workload in ["gpt2", "vgg"]:
        for p in [0.01, 0.1]:
            summary = dnnplan.bamboo_simulate(workload, removal_probability=p, seeds=(3, 8), target_steps=2000)
            expected += [dict(workload=workload, removal_probability=p, reason="", **run) for run in summary["per_seed"]]
    assert rows == expected  # chunks of 4 seeds (3-6, 7-8) give the runs of one range
    assert [r["seed"] for r in rows[:6]] == list(range(3, 9))
    with open(out, newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 24 and list(table[0]) == sweeps.BAMBOO_COLUMNS
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.bamboo_sweep("gpt2", [0.1], (3, 8), target_steps=0, client=object())
    assert caught.value.field == "target_steps"
