"""Grids of simulations on a Dask cluster (docs/python.md, "Sweeps on Dask").

sweep: runtime-policy simulations, deadlines x changeovers x policies x start ticks on the same
traces. Each task is one (deadline, changeover, policy) and a chunk of start ticks, run by
dnnplan.simulate in a worker (one thread: Dask runs the tasks side by side); the traces go to the
workers once. bamboo_sweep: Bamboo's random mode, workloads x removal probabilities x seeds, each
task one (workload, probability) and a chunk of seeds. The rows come back as one table, in the
grid's order, and optionally as a CSV file.

The cluster: `client` when given; else a scheduler at `address` ("tcp://host:8786", started with
`dask scheduler` and `dask worker tcp://host:8786` on other machines); else a LocalCluster of
`workers` processes with one thread each, closed at the end. Workers import dnnplan, so it must be
importable there (installed, or on PYTHONPATH in their environment).
"""

import csv as _csv
import itertools as _itertools
import json as _json
import os as _os
import sys as _sys

COLUMNS = ["deadline_h", "changeover_h", "policy", "start_tick", "cost_usd", "finish_h", "met", "spot_h",
           "on_demand_h", "changeovers", "region_moves", "finished", "work_left_h"]
# A window's "finished" and "work_left_h" (simulate writes them only when the trace ended before the
# work did): True and 0 otherwise.
_DEFAULTS = {"finished": True, "work_left_h": 0.0}


BAMBOO_COLUMNS = ["workload", "removal_probability", "seed", "status", "reason", "preemptions", "fatal_failures", "steps",
                  "average_instances", "samples_per_s", "usd_per_h", "value", "on_demand_samples_per_s",
                  "on_demand_usd_per_h", "on_demand_value"]


def _run(regions_json, job, policy, start_ticks):
    """One task: simulate on the workers' copy of the traces (their JSON text, spliced into the
    document as it is: the task converts no trace); the rows of its windows."""
    from dnnplan import _dnnplan, _document
    document = _document(regions_json, job, start_ticks, policy, 1)
    out = _json.loads(_dnnplan.deadline_simulate(document))
    rows = []
    for w in out["windows"]:
        row = {"deadline_h": job["deadline_h"], "changeover_h": job["changeover_h"], "policy": out["policy"]}
        row.update({k: w.get(k, _DEFAULTS.get(k)) for k in COLUMNS[3:]})
        rows.append(row)
    return rows


def _chunks(ticks, size):
    for i in range(0, len(ticks), size):
        yield ticks[i:i + size]


def _progress(iterable, total, enabled):
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:  # Debian's python3-tqdm; without it, no bar
        return iterable
    return tqdm(iterable, total=total, unit="task", file=_sys.stderr)


def _client(client, address, workers):
    """(client, close): the caller's client, one to `address`, or a LocalCluster of our own."""
    if client is not None:
        return client, lambda: None
    from distributed import Client, LocalCluster
    if address is not None:
        c = Client(address)
        return c, c.close
    cluster = LocalCluster(n_workers=workers or _os.cpu_count() or 1, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    c = Client(cluster)

    def close():
        c.close()
        cluster.close()
    return c, close


def _gather(c, tasks, progress):
    """Submits tasks ({key: (function, *arguments)}) to client c; {key: result}, with a progress
    bar on stderr (default: when stderr is a terminal)."""
    from distributed import as_completed
    futures = {c.submit(task[0], *task[1:], pure=False): key for key, task in tasks.items()}
    results = {}
    show = _sys.stderr.isatty() if progress is None else progress
    for future in _progress(as_completed(futures), len(futures), show):
        results[futures[future]] = future.result()
    return results


def _table(results, columns, csv):
    """The rows of the results in their keys' order, written to csv when it is a path."""
    rows = [row for key in sorted(results) for row in results[key]]
    if csv is not None:
        with open(csv, "w", newline="", encoding="utf-8") as f:
            writer = _csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
    return rows


def sweep(traces, *, work_h, deadlines_h, changeovers_h, policies, start_ticks, egress_usd=0.0, instances=1,
          spot_usd_per_h=None, on_demand_usd_per_h=None, prices=None, client=None, address=None, workers=None,
          chunk=32, csv=None, progress=None):
    """Every (deadline, changeover, policy) on every start tick of the traces, on a Dask cluster.

    traces, work_h, egress_usd, instances, spot_usd_per_h, on_demand_usd_per_h, prices: as
    dnnplan.simulate; deadlines_h, changeovers_h, policies (e.g. ["default", "uniform_progress",
    "optimal"]) and start_ticks: the grid. chunk: start ticks per task. csv: a path to write the
    table to. progress: a tqdm bar on stderr (default: when stderr is a terminal).
    Returns a list of rows (dicts with COLUMNS' keys) in the grid's order."""
    import dnnplan
    regions_json = dnnplan._regions_json(traces, spot_usd_per_h, on_demand_usd_per_h, prices)
    ticks = list(start_ticks)
    grid = list(_itertools.product(deadlines_h, changeovers_h, policies))
    c, close = _client(client, address, workers)
    try:
        shared = c.scatter(regions_json, broadcast=True)
        tasks = {}
        for g, (deadline_h, changeover_h, policy) in enumerate(grid):
            job = {"work_h": work_h, "deadline_h": deadline_h, "changeover_h": changeover_h, "egress_usd": egress_usd,
                   "instances": instances}
            for k, part in enumerate(_chunks(ticks, max(1, int(chunk)))):
                tasks[(g, k)] = (_run, shared, job, policy, part)
        results = _gather(c, tasks, progress)
    finally:
        close()
    return _table(results, COLUMNS, csv)


def _run_bamboo(workload, removal_probability, first, last, target_steps, duration_h):
    """One task: Bamboo's random mode on seeds first..last; one row per seed."""
    from dnnplan import _dnnplan
    out = _json.loads(_dnnplan.bamboo_seeds(workload, removal_probability, first, last, target_steps, duration_h))
    return [{"workload": workload, "removal_probability": removal_probability, "reason": "", **run} for run in out["per_seed"]]


def bamboo_sweep(workloads, removal_probabilities, seeds, *, target_steps=None, duration_h=None, client=None, address=None,
                 workers=None, chunk=250, csv=None, progress=None):
    """Bamboo's random mode (dnnplan.bamboo_simulate) for every workload and removal probability
    over seeds=(first, last), inclusive, on a Dask cluster: one row per seed (BAMBOO_COLUMNS;
    "reason" empty unless the run gave one), in the grid's order. chunk: seeds per task; the
    cluster, csv and progress as sweep's. The same rows as bamboo_simulate's "per_seed" for each
    setting (a run depends on its seed only)."""
    import dnnplan
    first, last = dnnplan._seed_range(seeds)
    steps = None if target_steps is None else dnnplan._integer("target_steps", target_steps)
    hours = dnnplan._optional_number("duration_h", duration_h)
    names = [workloads] if isinstance(workloads, str) else list(workloads)
    probabilities = [dnnplan._number(f"removal_probabilities[{i}]", p) for i, p in enumerate(removal_probabilities)]
    size = max(1, int(chunk))
    for workload, p in _itertools.product(names, probabilities):
        dnnplan._dnnplan.bamboo_check(str(workload), p, first, last, steps, hours)  # InvalidInput before any task
    c, close = _client(client, address, workers)
    try:
        tasks = {}
        for g, (workload, p) in enumerate(_itertools.product(names, probabilities)):
            for k, a in enumerate(range(first, last + 1, size)):
                tasks[(g, k)] = (_run_bamboo, str(workload), p, a, min(a + size - 1, last), steps, hours)
        results = _gather(c, tasks, progress)
    finally:
        close()
    return _table(results, BAMBOO_COLUMNS, csv)
