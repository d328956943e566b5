#pragma once
// Every cluster of the space, evaluated: the oracle the other searches are tested against.
// O(|space| * K) time, one allocation; the budget bounds the count vectors visited (nodes) and
// the clusters evaluated.

#include <dnnplan/core/status.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/solve/spot_provision/cluster_space.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/solve/spot_provision/outcome.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace dnnplan {

/// Statuses: optimal, infeasible, or, when a limit stops it, feasible with the best cluster so far
/// or no_plan_found (no bound is proven, the clusters not visited being unknown).
template <asynchronous_throughput_model Throughput, convergence_model Convergence, linear_cost_model Cost>
[[nodiscard]] search_outcome exhaustive_search(const Throughput& throughput, const Convergence& convergence,
                                               const Cost& cost, const cluster_space& space,
                                               const cluster_goals& goals, const search_budget& budget = {}) {
    search_outcome out;
    cluster_incumbent best(goals);
    budget_guard guard(budget);
    const bool complete = space.for_each_until([&](std::span<const std::int32_t> counts, std::int64_t n) {
        ++out.counters.nodes;  // a count vector of the box visited
        if (n < space.min_workers || n > space.max_workers) return !guard.exhausted(out.counters);
        ++out.counters.evaluations;
        best.offer(counts, predict_cluster(throughput, convergence, cost, counts, goals.target_loss));
        return !guard.exhausted(out.counters);
    });
    const bool has_plan = best.has_plan();
    const double value = best.value();
    best.move_plan_to(out);
    conclude_search(out, {.limit = complete ? search_limit::none : guard.limit(), .unexplored_key_lb = -std::numeric_limits<double>::infinity()},
                    has_plan, value, false, no_cluster_reason(best.rejected_non_finite()), guard.describe(out.counters));
    out.counters.elapsed_s = guard.elapsed_s();
    return out;
}

}  // namespace dnnplan
