"""dnnplan from Python: the planners of the command line, on the same JSON documents as dicts.

Each function takes the problem document a command-line planner reads (a dict, or its JSON text)
and returns the result document it prints with --json (a dict):

    spot_provision(problem)               == spot_provision PROBLEM --json
    vm_recommend(problem, pareto=False)    == vm_recommend PROBLEM --json [--pareto]
    resilience_plan(problem, base_dir=...) == resilience_plan plan PROBLEM --json
    bamboo_simulate(workload, ...)        == resilience_plan simulate ... --json
    checkpoint_restart(work_h=..., ...)   == resilience_plan checkpoint ... --json
    pipeline_plan(graph, machines, ...)   == pipeline_plan --pipedream-graph FILE -n M ... --json
    hybrid_plan(profile, catalog, ...)    == hybrid_plan PROFILE --containers FILE ... --json
    fit_model(command, model, data, ...)  == fit_model COMMAND --model MODEL ... --json
    elastic_advisor("replay", ...)        == elastic_advisor replay ... --json
    elastic_advisor("advise", records, ...) == elastic_advisor advise ... (one plan per record)
    simulate(traces, ...)                 == deadline_policy simulate ... --json
    compare(traces, ...)                  == deadline_policy compare ... --json
    decide(state)                         == deadline_policy decide STATE.json

Availability traces are files (read_trace) or dicts whose "available" is a numpy array or a list.
Invalid input raises InvalidInput (a ValueError with .field, the field's path), malformed text
ParseError (a ValueError with .where). The planners release the GIL while they run. sweep()
runs a grid of deadline-policy simulations on a Dask cluster, bamboo_sweep one of Bamboo's
seeds x removal probabilities (dnnplan.sweeps). docs/python.md.
"""

import json as _json
import os as _os

import numpy as _np

from . import _dnnplan
from ._dnnplan import Error, InvalidInput, ParseError, __version__

__all__ = [
    "Error", "InvalidInput", "ParseError", "__version__",
    "spot_provision", "vm_recommend", "resilience_plan", "pipeline_plan", "hybrid_plan", "fit_model", "elastic_advisor",
    "bamboo_simulate", "checkpoint_restart", "read_trace", "simulate", "compare", "decide", "sweep", "bamboo_sweep",
]


def _text(document):
    """A document as JSON text: a dict (or list) is dumped, a str is taken as JSON text already."""
    if isinstance(document, str):
        return document
    return _json.dumps(document, default=_to_json_default)


def _to_json_default(value):
    if isinstance(value, _np.ndarray):
        return value.tolist()
    if isinstance(value, _np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def spot_provision(problem):
    """The cheapest spot cluster that trains to the target loss by the deadline (spotDNN).

    problem: the problem document (docs/problem-format.md); returns the result document."""
    return _json.loads(_dnnplan.spot_provision(_text(problem)))


def vm_recommend(problem, pareto=False):
    """The best VM mix for a synchronous job (Srifty); with pareto=True also the exact
    cost/time frontier. Returns the result document."""
    return _json.loads(_dnnplan.vm_recommend(_text(problem), bool(pareto)))


def _resolve_trace_files(problem, base_dir):
    """Replaces every offer's {"trace_csv": FILE} by the trace it names, read relative to base_dir,
    as the command line does relative to the problem file's folder."""
    for i, offer in enumerate(problem.get("offers", []) if isinstance(problem, dict) else []):
        preemption = offer.get("preemption") if isinstance(offer, dict) else None
        if not isinstance(preemption, dict) or "trace_csv" not in preemption:
            continue
        field = f"offers[{i}].preemption.trace_csv"
        if len(preemption) != 1 or not isinstance(preemption["trace_csv"], str):
            raise _invalid(field, _json.dumps(preemption), '{"trace_csv": FILE} alone')
        path = _os.path.join(base_dir or _os.getcwd(), preemption["trace_csv"])
        with open(path, encoding="utf-8") as f:
            events = _json.loads(_dnnplan.instance_trace_events(f.read()))
        offer["preemption"] = {"trace": {"events": events}}


def resilience_plan(problem, base_dir=None):
    """On-demand, checkpoint-restart, Bamboo's redundant computation or an on-demand fallback
    (Bamboo's setting). An offer's {"trace_csv": FILE} is read relative to base_dir (default:
    the working directory). Returns the result document."""
    if isinstance(problem, str):
        try:
            problem = _json.loads(problem)
        except _json.JSONDecodeError as e:
            error = ParseError(f"parse error at byte {e.pos}: {e.msg}")
            error.where = f"byte {e.pos}"
            raise error from None
    problem = _json.loads(_json.dumps(problem))  # a copy: the traces are resolved in place
    _resolve_trace_files(problem, base_dir)
    return _json.loads(_dnnplan.resilience_plan(_text(problem)))


def bamboo_simulate(workload, *, trace=None, removal_probability=None, seeds=None, target_steps=None, duration_h=None):
    """Bamboo's simulation of redundant computation, == `resilience_plan simulate ... --json`:
    on a trace (Bamboo's CSV: a path or its text; returns the run's figures), or in Bamboo's
    random mode at removal_probability over seeds=(first, last), inclusive (returns the means
    with 95% intervals and every seed's run). workload: gpt2, bert, resnet, gnmt, vgg or alexnet;
    Bamboo's defaults (12 h) unless target_steps or duration_h say otherwise."""
    steps = None if target_steps is None else _integer("target_steps", target_steps)
    hours = _optional_number("duration_h", duration_h)
    if trace is not None:
        if removal_probability is not None or seeds is not None:
            raise _invalid("trace", trace, "a trace alone, without removal_probability or seeds")
        return _json.loads(_dnnplan.bamboo_trace(_file_or_text(trace), str(workload), steps, hours))
    for field, value in (("removal_probability", removal_probability), ("seeds", seeds)):
        if value is None:
            raise _invalid(field, value, "a value (or a trace): removal_probability and seeds=(first, last) go together")
    first, last = _seed_range(seeds)
    return _json.loads(_dnnplan.bamboo_seeds(str(workload), _number("removal_probability", removal_probability), first, last,
                                             steps, hours))


def checkpoint_restart(*, work_h, interval_h, checkpoint_h, restart_h, preemptions_per_h, deadline_h):
    """Checkpoint-restart at one interval under Poisson preemptions, == `resilience_plan
    checkpoint --work-h W --interval-h TAU --checkpoint-h DELTA --restart-h R --preemptions-per-h
    LAMBDA --deadline-h D --json`: E[T], P(T <= D) with its error bound, the segments, and Young's
    and Daly's intervals."""
    return _json.loads(_dnnplan.checkpoint_restart(_number("work_h", work_h), _number("interval_h", interval_h),
                                                   _number("checkpoint_h", checkpoint_h), _number("restart_h", restart_h),
                                                   _number("preemptions_per_h", preemptions_per_h),
                                                   _number("deadline_h", deadline_h)))


def _seed_range(seeds):
    """(first, last) of seeds=(first, last), both integers >= 0."""
    try:
        first, last = seeds
    except (TypeError, ValueError):
        raise _invalid("seeds", seeds, "(first, last)") from None
    return _integer("seeds[0]", first, least=0), _integer("seeds[1]", last, least=0)


def _file_or_text(value):
    """A path (a PathLike, or a one-line str naming a file) read as text; any other str as it is."""
    if isinstance(value, _os.PathLike) or (isinstance(value, str) and "\n" not in value and _os.path.isfile(value)):
        with open(value, encoding="utf-8") as f:
            return f.read()
    return value


def pipeline_plan(graph, machines, bandwidths_bytes_per_s=None, activation_compression_ratio=None, straight_pipeline=False,
                  use_memory_constraint=False, memory_bytes=16e9, use_fewer_machines=False, max_states=None):
    """PipeDream's partitioning problem (its optimizer's flags and defaults): graph is a
    PipeDream profile (graph.txt: a path or its text), machines the -n list (machines per level),
    bandwidths_bytes_per_s the -b list (default 1e9 for every level); max_states (default 20,000,
    at most 100,000) the antichain states over which a graph takes the wide path (the command
    line's --max-states). Returns the result document."""
    options = {"machines": [machines] if isinstance(machines, int) else list(machines),
               "straight_pipeline": straight_pipeline, "use_memory_constraint": use_memory_constraint,
               "memory_bytes": memory_bytes, "use_fewer_machines": use_fewer_machines}
    if max_states is not None:
        options["max_states"] = max_states
    if bandwidths_bytes_per_s is not None:
        options["bandwidths_bytes_per_s"] = list(bandwidths_bytes_per_s)
    if activation_compression_ratio is not None:
        options["activation_compression_ratio"] = activation_compression_ratio
    return _json.loads(_dnnplan.pipeline_plan(_file_or_text(graph), _json.dumps(options, default=_to_json_default)))


_OBJECTIVES = {"samples-per-s": "max_throughput", "samples-per-usd": "max_samples_per_usd", "usd-per-h": "min_cost"}


def hybrid_plan(profile, catalog, profile_batch=128, max_workers=16, batch_sizes=(128, 256, 512), objective="samples-per-s",
                budget_usd_per_h=None, target_samples_per_s=None):
    """Hybrid data and pipeline parallelism on serverless containers (Hydrozoa), with the command
    line's defaults: profile is a PipeDream profile (a path or its text) measured at
    profile_batch, catalog the container catalog (a dict, its JSON text or a path), objective
    "samples-per-s", "samples-per-usd" or "usd-per-h" (which needs target_samples_per_s).
    Returns {"hybrid": result, "data_parallel": result} (the same with one stage)."""
    if objective not in _OBJECTIVES:
        raise _invalid("objective", objective, "one of " + ", ".join(_OBJECTIVES))
    options = {"objective": _OBJECTIVES[objective]}
    if budget_usd_per_h is not None:
        options["budget_usd_per_h"] = budget_usd_per_h
    if target_samples_per_s is not None:
        options["target_samples_per_s"] = target_samples_per_s
    catalog_text = _file_or_text(catalog) if isinstance(catalog, (str, _os.PathLike)) else _json.dumps(catalog)
    for field, value in (("max_workers", max_workers), *((f"batch_sizes[{i}]", b) for i, b in enumerate(batch_sizes))):
        _integer(field, value)
    return _json.loads(_dnnplan.hybrid_plan(_file_or_text(profile), float(profile_batch), catalog_text, int(max_workers),
                                            [int(b) for b in batch_sizes], _json.dumps(options, default=_to_json_default)))


def _invalid(field, value, expected):
    """InvalidInput as the library raises it: .value the value as text (str), as C++ gives it."""
    error = InvalidInput(f"invalid input: {field} = {value}: expected {expected}")
    error.field, error.value, error.expected = field, str(value), expected
    return error


def _integer(field, value, least=None):
    """value as an int (a numpy integer too; not a bool or a float), at least `least` when given."""
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise _invalid(field, value, "an integer" if least is None else f"an integer >= {least}")
    if least is not None and value < least:
        raise _invalid(field, value, f"an integer >= {least}")
    return int(value)


def _number(field, value):
    """value as a float (an int or a numpy number too; not a bool or a string)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, _np.integer, _np.floating)):
        raise _invalid(field, value, "a number")
    return float(value)


def _optional_number(field, value):
    return None if value is None else _number(field, value)


def _json_or_file(value):
    """A dict (or list) dumped, a path read, any other str taken as JSON text."""
    if isinstance(value, (dict, list)):
        return _json.dumps(value, default=_to_json_default)
    return _file_or_text(value)


# fit_model's options by model and command, as the command line accepts them.
_FIT_OPTIONS = {
    ("sync-data-parallel", "fit"): {"gpus_per_node", "variant"},
    ("sync-data-parallel", "predict"): {"gpus_per_node", "variant", "confidence", "params"},
    ("sync-data-parallel", "fidelity"): {"gpus_per_node", "variant", "train_fraction", "seed"},
    ("ps-async", "fit"): {"contention"},
    ("ps-async", "predict"): {"confidence", "params"},
    ("ps-async", "fidelity"): {"contention"},
}


def fit_model(command, model, data, params=None, *, gpus_per_node=None, variant=None, confidence=None, train_fraction=None,
              seed=None, contention=None):
    """Fits a performance model, predicts with it, or measures a fit's fidelity on held-out rows:
    `fit_model COMMAND --model MODEL ... --json` (docs/fit.md). command: "fit", "predict" or
    "fidelity"; model: "sync-data-parallel" (data: Pollux placements CSV, a path or its text) or
    "ps-async" (data: a clusters document, a dict, its JSON text or a path). params (predict):
    the document fit returned (a dict, its JSON text or a path). The options are the command
    line's, with its defaults when None (gpus_per_node 9, variant "auto", confidence 0.95,
    train_fraction 0.3, seed 1, contention "load"); one that does not apply to the command
    raises InvalidInput, as the command line refuses it."""
    given = {k: v for k, v in dict(gpus_per_node=gpus_per_node, variant=variant, confidence=confidence,
                                   train_fraction=train_fraction, seed=seed, contention=contention, params=params).items()
             if v is not None}
    allowed = _FIT_OPTIONS.get((model, command))
    if allowed is None:
        if command not in ("fit", "predict", "fidelity"):
            raise _invalid("command", command, "fit, predict or fidelity")
        raise _invalid("model", model, "sync-data-parallel or ps-async")
    for option in given:
        if option not in allowed:
            raise _invalid(option, given[option], f"nothing: it does not apply to {command} --model {model}")
    if command == "predict" and params is None:
        raise _invalid("params", None, "the fit's document (predict needs it)")
    data_text = _json_or_file(data) if model == "ps-async" else _file_or_text(data)
    params_text = "" if params is None else _json_or_file(params)
    result = _dnnplan.fit_model(command, model, data_text, params_text, _integer("gpus_per_node", given.get("gpus_per_node", 9)),
                                None if variant is None else str(variant), _number("confidence", given.get("confidence", 0.95)),
                                _number("train_fraction", given.get("train_fraction", 0.3)),
                                _integer("seed", given.get("seed", 1), least=0), str(given.get("contention", "load")))
    return _json.loads(result)


def elastic_advisor(command, records=None, *, work_steps, measurements=None, deadline_s=None, trial_s=120.0, policy="model",
                    max_ps=None, max_workers=None, worker_usd_per_h=None, ps_usd_per_h=None):
    """The elastic advisor of a parameter-server job (docs/solvers/elastic_advisor.md).
    "replay": the policy replayed on a measurement table (measurements: a dict, its JSON text or
    a path, e.g. examples/data/elastic_icac19_v100.json), == `elastic_advisor replay --json`.
    "advise": records, the runtime records (dicts or JSON texts, oldest first), each followed by
    the plan the policy gives after it, == `elastic_advisor advise` (needs max_ps, max_workers,
    worker_usd_per_h and ps_usd_per_h); returns the list of plans, one per record."""
    if command == "replay":
        if measurements is None:
            raise _invalid("measurements", None, "a measurement table (a dict, its JSON text or a path)")
        for option, value in (("records", records), ("max_ps", max_ps), ("max_workers", max_workers),
                              ("worker_usd_per_h", worker_usd_per_h), ("ps_usd_per_h", ps_usd_per_h)):
            if value is not None:
                raise _invalid(option, value, "nothing: it does not apply to replay")
        return _json.loads(_dnnplan.elastic_replay(_json_or_file(measurements), _number("work_steps", work_steps),
                                                   _optional_number("deadline_s", deadline_s), _number("trial_s", trial_s), str(policy)))
    if command != "advise":
        raise _invalid("command", command, "replay or advise")
    if measurements is not None:
        raise _invalid("measurements", measurements, "nothing: it does not apply to advise")
    for option, value in (("max_ps", max_ps), ("max_workers", max_workers), ("worker_usd_per_h", worker_usd_per_h),
                          ("ps_usd_per_h", ps_usd_per_h)):
        if value is None:
            raise _invalid(option, None, "a value (advise needs it)")
    texts = [r if isinstance(r, str) else _json.dumps(r, default=_to_json_default) for r in (records or [])]
    plans = _dnnplan.elastic_advise(texts, _number("work_steps", work_steps), _optional_number("deadline_s", deadline_s),
                                    _integer("max_ps", max_ps), _integer("max_workers", max_workers),
                                    _number("worker_usd_per_h", worker_usd_per_h), _number("ps_usd_per_h", ps_usd_per_h),
                                    _number("trial_s", trial_s), str(policy))
    return [_json.loads(p) for p in plans]


def read_trace(path, polarity="available", name=None):
    """An availability trace file as a region dict: Can't Be Late's JSON (*.json) or SkyNomad's
    CSV (any other name). polarity: "available" (counts of available instances) or "preempted"
    (1 = unavailable; SkyNomad's converted files). The dict has "name", "gap_s", "available"
    (a numpy int32 array), "spot_usd_per_h" (a float array, empty when the file has none) and
    "on_demand_usd_per_h" (None when the file has none); a CSV's also "median_gap_s",
    "min_gap_s" and "max_gap_s"."""
    name = name or _os.path.splitext(_os.path.basename(path))[0]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if str(path).endswith(".json"):
        region = _json.loads(_dnnplan.read_trace_json(text, name, polarity))
    else:
        region_text, median, least, largest = _dnnplan.read_trace_csv(text, name, polarity)
        region = _json.loads(region_text)
        region.update(median_gap_s=median, min_gap_s=least, max_gap_s=largest)
    region["available"] = _np.asarray(region["available"], dtype=_np.int32)
    region["spot_usd_per_h"] = _np.asarray(region["spot_usd_per_h"], dtype=float)
    return region


def _region(trace, spot_usd_per_h, on_demand_usd_per_h, prices):
    """One region of the simulation document from a path or a dict, with the command line's price
    rules: --spot-usd-per-h and --on-demand-usd-per-h override the trace's, --prices gives a
    trace its spot prices by name."""
    region = read_trace(trace) if isinstance(trace, (str, _os.PathLike)) else dict(trace)
    # Values pass through as they are (no rounding): the C++ reader rejects a non-integer count,
    # naming regions[i].available[k], as the command line's readers do.
    out = {"name": str(region.get("name", "region")), "gap_s": region["gap_s"],
           "available": _np.asarray(region["available"]).tolist()}
    spot = region.get("spot_usd_per_h")
    if prices is not None and out["name"] in prices:
        spot = prices[out["name"]]
    if spot_usd_per_h is not None:
        spot = [float(spot_usd_per_h)] * len(out["available"])
    if spot is not None and len(spot) > 0:
        out["spot_usd_per_h"] = _np.asarray(spot).tolist()
    on_demand = region.get("on_demand_usd_per_h") if on_demand_usd_per_h is None else on_demand_usd_per_h
    if on_demand is not None:
        out["on_demand_usd_per_h"] = on_demand
    return out


def _document(regions_json, job, start_ticks, policy, threads):
    """The simulate/compare document (io/deadline_policy_json.hpp) around the regions' JSON text,
    spliced in as it is (a sweep's task sends the same traces many times). job: work_h,
    deadline_h, changeover_h, instances, egress_usd."""
    head = {"job": {"work_s": job["work_h"] * 3600.0, "deadline_s": job["deadline_h"] * 3600.0,
                    "changeover_s": job["changeover_h"] * 3600.0, "instances": job["instances"], "egress_usd": job["egress_usd"]},
            "start_ticks": list(start_ticks), "threads": threads}
    if policy is not None:
        head["policy"] = policy.replace("-", "_")
    return _json.dumps(head, default=_to_json_default)[:-1] + ', "regions": ' + regions_json + "}"


def _regions_json(traces, spot_usd_per_h, on_demand_usd_per_h, prices):
    if isinstance(traces, (str, _os.PathLike, dict)):
        traces = [traces]
    return _json.dumps([_region(t, spot_usd_per_h, on_demand_usd_per_h, prices) for t in traces], default=_to_json_default)


def _simulation(traces, work_h, deadline_h, changeover_h, start_ticks, policy, egress_usd, instances,
                spot_usd_per_h, on_demand_usd_per_h, prices, threads):
    job = {"work_h": work_h, "deadline_h": deadline_h, "changeover_h": changeover_h, "instances": instances,
           "egress_usd": egress_usd}
    return _document(_regions_json(traces, spot_usd_per_h, on_demand_usd_per_h, prices), job, start_ticks, policy, threads)


def simulate(traces, *, work_h, deadline_h, changeover_h, start_ticks, policy="default", egress_usd=0.0, instances=1,
             spot_usd_per_h=None, on_demand_usd_per_h=None, prices=None, threads=1):
    """One policy on windows of availability traces (one per region, on one clock): the tick
    model of docs/solvers/deadline_policy.md. traces: a path, a region dict (read_trace's, or
    {"name", "gap_s", "available": array, "spot_usd_per_h"?: array, "on_demand_usd_per_h"?}) or a
    list of them; prices: {"<region name>": [USD/h per tick]} (the --prices side file).
    Returns {"policy", "windows": [{"start_tick", "cost_usd", "finish_h", "met", ...}]}."""
    document = _simulation(traces, work_h, deadline_h, changeover_h, start_ticks, policy, egress_usd, instances,
                           spot_usd_per_h, on_demand_usd_per_h, prices, threads)
    return _json.loads(_dnnplan.deadline_simulate(document))


def compare(traces, *, work_h, deadline_h, changeover_h, start_ticks, egress_usd=0.0, instances=1,
            spot_usd_per_h=None, on_demand_usd_per_h=None, prices=None, threads=1):
    """Every policy and the hindsight optimum on the same windows (simulate's inputs, no policy).
    Returns {"policies": [...], "windows", "infeasible_windows"}."""
    document = _simulation(traces, work_h, deadline_h, changeover_h, start_ticks, None, egress_usd, instances,
                           spot_usd_per_h, on_demand_usd_per_h, prices, threads)
    return _json.loads(_dnnplan.deadline_compare(document))


def decide(state):
    """One decision of the runtime policy for a scheduler (the decide document of
    docs/solvers/deadline_policy.md). Returns {"status", "action", "region", "reason"}."""
    return _json.loads(_dnnplan.deadline_decide(_text(state)))


def sweep(*args, **kwargs):
    """A grid of simulations on a Dask cluster: dnnplan.sweeps.sweep (imports Dask only here)."""
    from .sweeps import sweep as _sweep
    return _sweep(*args, **kwargs)


def bamboo_sweep(*args, **kwargs):
    """Bamboo's random mode over workloads x removal probabilities x seeds on a Dask cluster:
    dnnplan.sweeps.bamboo_sweep (imports Dask only here)."""
    from .sweeps import bamboo_sweep as _bamboo_sweep
    return _bamboo_sweep(*args, **kwargs)
