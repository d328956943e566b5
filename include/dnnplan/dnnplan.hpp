#pragma once
// Everything of dnnplan but the JSON integration, which is opt-in: include
// <dnnplan/io/json.hpp> for it (the only header that includes nlohmann/json). The graph.txt
// reader (io/pipedream_graph.hpp) needs no third-party header and is included.

#include <dnnplan/version.hpp>

#include <dnnplan/core/affine_time.hpp>
#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>

#include <dnnplan/workload/layer_chain.hpp>
#include <dnnplan/workload/layer_graph.hpp>

#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/convergence.hpp>
#include <dnnplan/model/cost.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>
#include <dnnplan/model/memory.hpp>
#include <dnnplan/model/optimus.hpp>
#include <dnnplan/model/pipeline_1f1b.hpp>
#include <dnnplan/model/pipeline_1f1b_timeline.hpp>
#include <dnnplan/model/ps_load_contention.hpp>
#include <dnnplan/model/sync_data_parallel.hpp>
#include <dnnplan/model/sync_data_parallel_bounds.hpp>

#include <dnnplan/fit/fidelity.hpp>
#include <dnnplan/fit/layer_chain.hpp>
#include <dnnplan/fit/least_squares.hpp>
#include <dnnplan/fit/linear_time.hpp>
#include <dnnplan/fit/nonlinear.hpp>
#include <dnnplan/fit/numeric_kernels.hpp>
#include <dnnplan/fit/optimus.hpp>
#include <dnnplan/fit/ps_async.hpp>
#include <dnnplan/fit/ps_async_types.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/fit/spotdnn_loss.hpp>
#include <dnnplan/fit/sync_data_parallel.hpp>

#include <dnnplan/preemption/bamboo_random.hpp>
#include <dnnplan/preemption/bamboo_run.hpp>
#include <dnnplan/preemption/bamboo_seeds.hpp>
#include <dnnplan/preemption/bamboo_simulator.hpp>
#include <dnnplan/preemption/bamboo_workload.hpp>
#include <dnnplan/preemption/checkpoint_probability.hpp>
#include <dnnplan/preemption/checkpoint_replay.hpp>
#include <dnnplan/preemption/checkpoint_restart.hpp>
#include <dnnplan/preemption/events.hpp>
#include <dnnplan/preemption/hazard.hpp>
#include <dnnplan/preemption/poisson_preemption.hpp>
#include <dnnplan/preemption/process.hpp>
#include <dnnplan/preemption/python_random.hpp>
#include <dnnplan/preemption/sampling.hpp>
#include <dnnplan/preemption/spot_market.hpp>

#include <dnnplan/runtime/adaptive.hpp>
#include <dnnplan/runtime/deadline_problem.hpp>
#include <dnnplan/runtime/history.hpp>
#include <dnnplan/runtime/policies.hpp>
#include <dnnplan/runtime/simulate.hpp>
#include <dnnplan/preemption/trace_replay.hpp>

#include <dnnplan/search/box_sum.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/search/pareto.hpp>

#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/ideal_lattice.hpp>
#include <dnnplan/partition/pipedream.hpp>
#include <dnnplan/partition/pipedream_bounds.hpp>
#include <dnnplan/partition/pipedream_chain.hpp>
#include <dnnplan/partition/pipedream_cost.hpp>
#include <dnnplan/partition/pipedream_lattice_bounds.hpp>
#include <dnnplan/partition/pipedream_lattice_closures.hpp>
#include <dnnplan/partition/pipedream_lattice_cuts.hpp>
#include <dnnplan/partition/pipedream_lattice_knapsack.hpp>
#include <dnnplan/partition/pipedream_lattice_local.hpp>
#include <dnnplan/partition/pipedream_lattice_memory.hpp>
#include <dnnplan/partition/pipedream_lattice_pack.hpp>
#include <dnnplan/partition/pipedream_lattice_points.hpp>
#include <dnnplan/partition/pipedream_lattice_sync.hpp>
#include <dnnplan/partition/pipedream_row.hpp>
#include <dnnplan/partition/pipedream_types.hpp>
#include <dnnplan/partition/pipedream_wide.hpp>
#include <dnnplan/partition/pipeline_dp.hpp>

#include <dnnplan/solve/deadline_policy/observation.hpp>
#include <dnnplan/solve/deadline_policy/optimal.hpp>
#include <dnnplan/solve/deadline_policy/solve.hpp>
#include <dnnplan/solve/elastic_advisor/advisor.hpp>
#include <dnnplan/solve/elastic_advisor/concepts.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_brain.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_brain_inputs.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_brain_utils.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_brain_worker.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_local.hpp>
#include <dnnplan/solve/elastic_advisor/load_model.hpp>
#include <dnnplan/solve/elastic_advisor/policies.hpp>
#include <dnnplan/solve/elastic_advisor/problem.hpp>
#include <dnnplan/solve/elastic_advisor/replay.hpp>
#include <dnnplan/solve/elastic_advisor/runtime_records.hpp>
#include <dnnplan/solve/hybrid_plan/problem.hpp>
#include <dnnplan/solve/hybrid_plan/solve.hpp>
#include <dnnplan/solve/pipeline_plan/solve.hpp>
#include <dnnplan/solve/resilience_plan/checkpoint.hpp>
#include <dnnplan/solve/resilience_plan/problem.hpp>
#include <dnnplan/solve/resilience_plan/solve.hpp>
#include <dnnplan/solve/spot_provision/cluster_space.hpp>
#include <dnnplan/solve/spot_provision/exact.hpp>
#include <dnnplan/solve/spot_provision/exhaustive.hpp>
#include <dnnplan/solve/spot_provision/outcome.hpp>
#include <dnnplan/solve/spot_provision/preemptions.hpp>
#include <dnnplan/solve/spot_provision/problem.hpp>
#include <dnnplan/solve/spot_provision/sliding_window.hpp>
#include <dnnplan/solve/spot_provision/solve.hpp>
#include <dnnplan/solve/vm_recommend/branch_and_bound.hpp>
#include <dnnplan/solve/vm_recommend/exhaustive.hpp>
#include <dnnplan/solve/vm_recommend/offer_space.hpp>
#include <dnnplan/solve/vm_recommend/problem.hpp>
#include <dnnplan/solve/vm_recommend/replica_frontier.hpp>
#include <dnnplan/solve/vm_recommend/request.hpp>
#include <dnnplan/solve/vm_recommend/solve.hpp>

#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/io/pollux_trace.hpp>
#include <dnnplan/io/spot_market_csv.hpp>
