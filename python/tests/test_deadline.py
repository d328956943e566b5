"""The runtime deadline policy from Python: traces from files or numpy arrays, simulate, compare
and decide equal to the command line's output."""

import json

import numpy as np
import pytest

import dnnplan
from conftest import FIXTURES

TRACES = FIXTURES / "spot_availability" / "aws-2023-02-15"
ZONE = TRACES / "us-west-2a_v100_1.csv"
PRICES = TRACES / "v100_spot_prices.json"
JOB = dict(work_h=48, deadline_h=60, changeover_h=0.2)


def test_read_trace_gives_numpy_arrays():
    region = dnnplan.read_trace(ZONE, polarity="available")
    assert region["name"] == "us-west-2a_v100_1"
    assert region["gap_s"] == 195
    assert region["available"].dtype == np.int32
    assert region["available"].size > 20000
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.read_trace(ZONE, polarity="sideways")
    assert caught.value.field == "polarity"


def test_simulate_equals_the_command_line(cli):
    prices = json.loads(PRICES.read_text())
    ours = dnnplan.simulate(ZONE, prices=prices, on_demand_usd_per_h=3.06, start_ticks=[0, 5000], policy="uniform-progress", **JOB)
    theirs = cli("deadline_policy", "simulate", "--trace", ZONE, "--prices", PRICES, "--on-demand-usd-per-h", 3.06, "--work-h", 48,
                 "--deadline-h", 60, "--changeover-h", 0.2, "--start-ticks", "0,5000", "--policy", "uniform-progress", "--json")
    assert ours == theirs
    assert ours["windows"][0]["cost_usd"] == pytest.approx(69.9465, abs=1e-6)  # the worked figure


def test_simulate_takes_numpy_availability():
    # Spot every other hour on a 600 s clock, constant prices: the same as the list form.
    available = np.tile(np.array([1] * 6 + [0] * 6, dtype=np.int32), 40)
    region = {"name": "toy", "gap_s": 600, "available": available}
    out = dnnplan.simulate(region, work_h=4, deadline_h=12, changeover_h=0.1, start_ticks=[24, 30], spot_usd_per_h=1.0,
                           on_demand_usd_per_h=3.0)
    again = dnnplan.simulate(dict(region, available=available.tolist()), work_h=4, deadline_h=12, changeover_h=0.1,
                             start_ticks=[24, 30], spot_usd_per_h=1.0, on_demand_usd_per_h=3.0)
    assert out == again
    assert [w["met"] for w in out["windows"]] == [True, True]
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.simulate(region, work_h=4, deadline_h=12, changeover_h=0.1, start_ticks=[24], on_demand_usd_per_h=3.0)
    assert caught.value.field.startswith("regions[0]")  # no spot price


def test_compare_equals_the_command_line(cli):
    prices = json.loads(PRICES.read_text())
    ours = dnnplan.compare(ZONE, prices=prices, on_demand_usd_per_h=3.06, start_ticks=[0, 5000], **JOB)
    theirs = cli("deadline_policy", "compare", "--trace", ZONE, "--prices", PRICES, "--on-demand-usd-per-h", 3.06, "--work-h", 48,
                 "--deadline-h", 60, "--changeover-h", 0.2, "--start-ticks", "0,5000", "--json")
    assert ours == theirs
    optimal = [p for p in ours["policies"] if p["policy"] == "optimal"][0]
    assert optimal["mean_ratio"] == 1.0


def test_decide_equals_the_command_line(cli, tmp_path):
    state = {"job": {"work_s": 36000, "deadline_s": 72000, "changeover_s": 600},
             "regions": [{"name": "r0", "gap_s": 600, "available": [1, 1, 0, 0, 1, 1, 1, 0, 1, 1], "spot_usd_per_h": [1.0] * 10,
                          "on_demand_usd_per_h": 3.0}],
             "elapsed_s": 3000, "work_done_s": 1200, "state": {"mode": "spot", "region": 0}}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    ours = dnnplan.decide(state)
    assert ours == cli("deadline_policy", "decide", path)
    assert ours["status"] == "feasible" and ours["region"] == "r0"


def test_values_are_not_rounded():
    # A fractional count or start tick is the caller's error, named as the command line names it.
    region = {"name": "toy", "gap_s": 600, "available": [1, 0.5, 1] * 40, "spot_usd_per_h": [1.0] * 120}
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.simulate(region, work_h=1, deadline_h=4, changeover_h=0.1, start_ticks=[0], on_demand_usd_per_h=3.0)
    assert caught.value.field == "regions[0].available[1]"
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.simulate(dict(region, available=[1] * 120), work_h=1, deadline_h=4, changeover_h=0.1, start_ticks=[2.5],
                         on_demand_usd_per_h=3.0)
    assert caught.value.field == "start_ticks[0]"
