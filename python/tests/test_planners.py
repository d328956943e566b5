"""The planners from Python: the same result documents as the command line's --json, typed
errors naming the field, and the GIL released while a planner runs."""

import json
import sys
import threading

import pytest

import dnnplan
from conftest import DATA, FIXTURES, without_times


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_spot_provision_equals_the_command_line(cli):
    for name in ("resnet110.json", "resnet110_loss075.json"):
        problem = load(DATA / name)
        ours = dnnplan.spot_provision(problem)
        assert without_times(ours) == without_times(cli("spot_provision", DATA / name, "--json"))
    assert dnnplan.spot_provision(json.dumps(problem))["status"] == "optimal"  # JSON text is taken too


def test_spot_provision_plans_the_papers_table_v_setting():
    result = dnnplan.spot_provision(load(DATA / "resnet110.json"))
    counts = {c["name"]: c["count"] for c in result["plan"]["counts"] if c["count"]}
    assert result["status"] == "optimal"
    assert counts == {"p2.xlarge": 2, "g3.8xlarge": 4}  # spotDNN's plan for (0.8, 2400 s)


def test_vm_recommend_equals_the_command_line(cli):
    problem = load(DATA / "vm_problem.json")
    assert without_times(dnnplan.vm_recommend(problem)) == without_times(cli("vm_recommend", DATA / "vm_problem.json", "--json"))
    frontier = dnnplan.vm_recommend(problem, pareto=True)
    assert without_times(frontier) == without_times(cli("vm_recommend", DATA / "vm_problem.json", "--json", "--pareto"))
    assert len(frontier["details"]["frontier"]) > 1


def test_resilience_plan_equals_the_command_line_with_a_trace_file(cli):
    problem = load(DATA / "resilience_gpt2_p3.json")  # its offer reads p3-trace.csv beside it
    ours = dnnplan.resilience_plan(problem, base_dir=DATA)
    assert without_times(ours) == without_times(cli("resilience_plan", "plan", DATA / "resilience_gpt2_p3.json", "--json"))
    assert ours["plan"]["strategy"] == "redundant_computation"
    assert "trace_csv" in json.dumps(problem)  # the caller's document is left as it was


def test_invalid_input_is_a_value_error_naming_the_field():
    problem = load(DATA / "resnet110.json")
    problem["catalog"]["instances"][0]["quota"] = 2.5
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.spot_provision(problem)
    assert isinstance(caught.value, ValueError)
    assert caught.value.field == "catalog.instances[0].quota"
    assert caught.value.value == "2.5"
    assert "integer" in caught.value.expected


def test_malformed_text_is_a_parse_error():
    with pytest.raises(dnnplan.ParseError) as caught:
        dnnplan.spot_provision('{"catalog":')
    assert isinstance(caught.value, ValueError)
    assert caught.value.where.startswith("byte")


def test_the_gil_is_released_while_a_planner_runs():
    # A Python thread counts while the main thread's planner runs (the C++ call alone: the bundled
    # resilience problem, about 0.3 s, its trace resolved beforehand). With a switch interval of
    # 1 us the two threads trade the GIL at once whenever both run Python, so with the GIL held
    # through the call the counter would get only the few increments of the switches around it;
    # released, it counts freely (about a million on the project machine).
    problem = load(DATA / "resilience_gpt2_p3.json")
    dnnplan._resolve_trace_files(problem, DATA)
    text = json.dumps(problem)
    counted, running, done = [0], threading.Event(), threading.Event()

    def count():
        running.set()
        while not done.is_set():
            counted[0] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        counter = threading.Thread(target=count)
        counter.start()
        running.wait()
        before = counted[0]
        dnnplan._dnnplan.resilience_plan(text)
        during = counted[0] - before
        done.set()
        counter.join()
    finally:
        sys.setswitchinterval(interval)
    assert during > 200000  # held through the call: about 30,000 (the switches around it), measured


def test_pipeline_plan_equals_the_command_line(cli):
    graph = FIXTURES / "pipedream" / "vgg16.txt"
    ours = dnnplan.pipeline_plan(graph, [4], straight_pipeline=True)
    assert without_times(ours) == without_times(cli("pipeline_plan", "--pipedream-graph", graph, "-n", 4, "--straight-pipeline", "--json"))
    two_levels = dnnplan.pipeline_plan(graph.read_text(), [4, 2], bandwidths_bytes_per_s=[1e9, 2.5e8])
    assert without_times(two_levels) == without_times(
        cli("pipeline_plan", "--pipedream-graph", graph, "-n", 4, 2, "-b", 1e9, 2.5e8, "--json"))
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.pipeline_plan(graph, [0])
    assert caught.value.field.startswith("machines")
    wide = dnnplan.pipeline_plan(graph, [4], straight_pipeline=True, max_states=0)
    assert without_times(wide) == without_times(
        cli("pipeline_plan", "--pipedream-graph", graph, "-n", 4, "--straight-pipeline", "--max-states", 0, "--json"))
    assert not wide["details"]["states_enumerated"] and ours["details"]["states_enumerated"]
    assert wide["details"]["num_states"] == ours["details"]["num_states"]  # counted, not enumerated
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.pipeline_plan(graph, [4], max_states=100001)
    assert caught.value.field.endswith("max_states")


def test_hybrid_plan_equals_the_command_line(cli):
    graph, catalog = DATA / "vgg16.txt", DATA / "containers.json"
    ours = dnnplan.hybrid_plan(graph, load(catalog), max_workers=8, batch_sizes=[128, 256], objective="samples-per-usd")
    theirs = cli("hybrid_plan", graph, "--containers", catalog, "--max-workers", 8, "--batch-sizes", "128,256",
                 "--objective", "samples-per-usd", "--json")
    assert without_times(ours) == without_times(theirs)
    assert ours["hybrid"]["plan"]["samples_per_usd"] >= ours["data_parallel"]["plan"]["samples_per_usd"]


def test_bamboo_simulate_equals_the_command_line(cli):
    ours = dnnplan.bamboo_simulate("gpt2", removal_probability=0.05, seeds=(1, 3), target_steps=5000)
    assert ours == cli("resilience_plan", "simulate", "--removal-probability", 0.05, "--seeds", "1-3", "--workload", "gpt2",
                       "--target-steps", 5000, "--json")
    assert [r["seed"] for r in ours["per_seed"]] == [1, 2, 3]
    trace = DATA / "p3-trace.csv"
    on_trace = dnnplan.bamboo_simulate("bert", trace=trace, duration_h=2)
    assert on_trace == cli("resilience_plan", "simulate", "--trace", trace, "--workload", "bert", "--duration-h", 2, "--json")
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.bamboo_simulate("gpt3", removal_probability=0.05, seeds=(1, 3))
    assert caught.value.field == "workload"
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.bamboo_simulate("gpt2", removal_probability=1.5, seeds=(1, 3))
    assert caught.value.field == "removal_probability"
    with pytest.raises(dnnplan.InvalidInput) as caught:
        dnnplan.bamboo_simulate("gpt2", removal_probability=0.5, seeds=(3, 1))
    assert caught.value.field == "seeds[1]"


def test_checkpoint_restart_equals_the_command_line(cli):
    ours = dnnplan.checkpoint_restart(work_h=10, interval_h=1, checkpoint_h=0.05, restart_h=0.1, preemptions_per_h=0.2, deadline_h=14)
    assert ours == cli("resilience_plan", "checkpoint", "--work-h", 10, "--interval-h", 1, "--checkpoint-h", 0.05, "--restart-h", 0.1,
                       "--preemptions-per-h", 0.2, "--deadline-h", 14, "--json")
    assert ours["segments"] == 10 and 0.0 < ours["p_meet_deadline"] < 1.0
    with pytest.raises(dnnplan.InvalidInput) as caught:  # the caller's name, not the library's member
        dnnplan.checkpoint_restart(work_h=10, interval_h=1, checkpoint_h=0.05, restart_h=0.1, preemptions_per_h=-1, deadline_h=14)
    assert caught.value.field == "preemptions_per_h"
