"""A grid of runtime-policy simulations on a Dask cluster (docs/python.md, "Sweeps on Dask").

The grid is deadlines x changeovers x policies x start ticks on the same traces. Each task is one
(deadline, changeover, policy) and a chunk of start ticks, run by dnnplan.simulate in a worker
(one thread: Dask runs the tasks side by side); the traces go to the workers once. The rows come
back as one table, in the grid's order, and optionally as a CSV file.

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
    from distributed import as_completed
    regions_json = dnnplan._regions_json(traces, spot_usd_per_h, on_demand_usd_per_h, prices)
    ticks = list(start_ticks)
    grid = list(_itertools.product(deadlines_h, changeovers_h, policies))
    c, close = _client(client, address, workers)
    try:
        shared = c.scatter(regions_json, broadcast=True)
        futures = {}
        for g, (deadline_h, changeover_h, policy) in enumerate(grid):
            job = {"work_h": work_h, "deadline_h": deadline_h, "changeover_h": changeover_h, "egress_usd": egress_usd,
                   "instances": instances}
            for k, part in enumerate(_chunks(ticks, max(1, int(chunk)))):
                futures[c.submit(_run, shared, job, policy, part, pure=False)] = (g, k)
        results = {}
        show = _sys.stderr.isatty() if progress is None else progress
        for future in _progress(as_completed(futures), len(futures), show):
            results[futures[future]] = future.result()
    finally:
        close()
    rows = [row for key in sorted(results) for row in results[key]]
    if csv is not None:
        with open(csv, "w", newline="", encoding="utf-8") as f:
            writer = _csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    return rows
