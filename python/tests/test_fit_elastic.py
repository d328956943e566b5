"""dnnplan.fit_model and dnnplan.elastic_advisor against the command-line programs' output."""

import json

import pytest

import dnnplan
from conftest import DATA, FIXTURES

POLLUX = FIXTURES / "pollux"
TRANSIENT = FIXTURES / "transient"
ADVISE = dict(work_steps=64000, deadline_s=2000, max_ps=2, max_workers=8, worker_usd_per_h=0.861, ps_usd_per_h=0.1429)
RECORDS = [{"time_s": 0, "global_step": 0, "speed": 26.96, "ps": 1, "workers": 2},
           {"time_s": 120, "global_step": 3235, "speed": 38.94, "ps": 1, "workers": 4}]


def test_sync_fit_predict_and_fidelity_equal_the_command_line(cli, tmp_path):
    train, test = POLLUX / "cifar10-train.csv", POLLUX / "cifar10-test.csv"
    fit = dnnplan.fit_model("fit", "sync-data-parallel", train)
    assert fit == cli("fit_model", "fit", "--model", "sync-data-parallel", "--pollux-placements", train, "--json")
    params = tmp_path / "params.json"
    params.write_text(json.dumps(fit))
    predicted = dnnplan.fit_model("predict", "sync-data-parallel", test.read_text(), fit, confidence=0.9)
    assert predicted == cli("fit_model", "predict", "--model", "sync-data-parallel", "--params", params,
                            "--pollux-placements", test, "--confidence", 0.9, "--json")
    fidelity = dnnplan.fit_model("fidelity", "sync-data-parallel", train, train_fraction=0.5, seed=3, variant="auto")
    assert fidelity == cli("fit_model", "fidelity", "--model", "sync-data-parallel", "--pollux-placements", train,
                           "--train-fraction", 0.5, "--seed", 3, "--json")


def test_ps_async_fit_predict_and_fidelity_equal_the_command_line(cli, tmp_path):
    homogeneous, mixed = TRANSIENT / "homogeneous.json", TRANSIENT / "mixed.json"
    fit = dnnplan.fit_model("fit", "ps-async", json.loads(homogeneous.read_text()), contention="spotdnn")
    assert fit == cli("fit_model", "fit", "--model", "ps-async", "--clusters", homogeneous, "--contention", "spotdnn", "--json")
    params = tmp_path / "params.json"
    params.write_text(json.dumps(fit))
    predicted = dnnplan.fit_model("predict", "ps-async", mixed, params)
    assert predicted == cli("fit_model", "predict", "--model", "ps-async", "--params", params, "--clusters", mixed, "--json")
    assert len(predicted["predictions"]) == 3
    # spotdnn: leave-one-out refits 39 times (1 s; the default load contention takes 14 s here)
    fidelity = dnnplan.fit_model("fidelity", "ps-async", homogeneous, contention="spotdnn")
    assert fidelity == cli("fit_model", "fidelity", "--model", "ps-async", "--clusters", homogeneous, "--contention", "spotdnn", "--json")


def test_fit_model_refuses_what_the_command_line_refuses():
    train = POLLUX / "cifar10-train.csv"
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.fit_model("fit", "sync-data-parallel", train, contention="load")  # a ps-async option
    assert caught.value.field == "contention"
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.fit_model("fit", "sync-data-parallel", train, variant="quadratic")
    assert caught.value.field == "variant"
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.fit_model("fidelity", "sync-data-parallel", train, train_fraction=1.0)
    assert caught.value.field == "train_fraction" and caught.value.value == "1"
    fit = dnnplan.fit_model("fit", "sync-data-parallel", train, variant="pollux")
    with pytest.raises(dnnplan.InvalidInput) as caught:  # predict takes the form from the params
        dnnplan.fit_model("predict", "sync-data-parallel", train, fit, variant="node-term")
    assert caught.value.field == "variant" and "pollux" in caught.value.expected
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.fit_model("predict", "sync-data-parallel", train)
    assert caught.value.field == "params"
    with pytest.raises(dnnplan.InvalidInput) as caught:  # checked in Python, before the C++ types
        dnnplan.fit_model("fidelity", "sync-data-parallel", train, seed=-1)
    assert caught.value.field == "seed" and caught.value.value == "-1"
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.fit_model("predict", "sync-data-parallel", train, fit, confidence="high")
    assert caught.value.field == "confidence" and caught.value.value == "high"
    with pytest.raises(dnnplan.ParseError) as caught:
        dnnplan.fit_model("fit", "sync-data-parallel", (POLLUX / "truncated.csv").read_text())
    assert caught.value.where.startswith("line")


def test_elastic_replay_equals_the_command_line(cli):
    table = DATA / "elastic_icac19_v100.json"
    ours = dnnplan.elastic_advisor("replay", measurements=table, work_steps=64000, deadline_s=2000)
    assert ours == cli("elastic_advisor", "replay", "--measurements", table, "--work-steps", 64000, "--deadline-s", 2000, "--json")
    dlrover = dnnplan.elastic_advisor("replay", measurements=json.loads(table.read_text()), work_steps=64000, policy="dlrover")
    assert dlrover == cli("elastic_advisor", "replay", "--measurements", table, "--work-steps", 64000, "--policy", "dlrover", "--json")


def test_elastic_advise_gives_the_command_line_plan_after_each_record():
    plans = dnnplan.elastic_advisor("advise", RECORDS, **ADVISE)
    assert len(plans) == 2
    assert plans[1]["ps"] == 2 and plans[1]["ps_bottleneck"]  # as examples/elastic_advisor_cli_test.cmake checks
    node = {"cpu_used": 4, "cpu_requested": 8, "memory_used_mb": 2000, "memory_requested_mb": 8192}
    record = {"time_s": 0, "global_step": 0, "speed": 10, "ps": 1, "workers": 2,
              "nodes": [dict(node, type="ps", id=0, cpu_used=2, memory_requested_mb=4096), dict(node, type="worker", id=0),
                        dict(node, type="worker", id=1)]}
    (plan,) = dnnplan.elastic_advisor("advise", [json.dumps(record)], policy="dlrover", **ADVISE)
    assert plan["groups"]["worker"]["count"] == 7  # DLRover: 2 x 0.9 / 0.25 = 7.2 -> 7
    with pytest.raises(dnnplan.InvalidInput) as caught:  # DLRover's rules read the nodes
        dnnplan.elastic_advisor("advise", RECORDS[:1], policy="dlrover", **ADVISE)
    assert caught.value.field == "records[0].nodes"
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.elastic_advisor("advise", [dict(RECORDS[0], speed=-1)], **ADVISE)
    assert caught.value.field == "records[0].speed"
    with pytest.raises(dnnplan.ParseError) as caught:
        dnnplan.elastic_advisor("advise", ['{"time_s": '], **ADVISE)
    assert caught.value.where.startswith("records[0] byte")


def test_elastic_advise_equals_the_command_line_lines(tmp_path):
    import os
    import subprocess
    folder = os.environ.get("DNNPLAN_EXAMPLES_DIR")
    if not folder:
        pytest.skip("the command-line programs are not built (DNNPLAN_EXAMPLES_DIR is empty)")
    flags = [str(x) for k, v in ADVISE.items() for x in ("--" + k.replace("_", "-"), v)]
    out = subprocess.run([os.path.join(folder, "elastic_advisor"), "advise", *flags], input="\n".join(map(json.dumps, RECORDS)),
                         check=True, capture_output=True, text=True).stdout
    assert dnnplan.elastic_advisor("advise", RECORDS, **ADVISE) == [json.loads(line) for line in out.splitlines()]
