#pragma once
// Every cluster of the space, evaluated: the oracle the other searches are tested against.
// O(|space| * K) time, one allocation.

#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/search/cluster_space.hpp>
#include <dnnplan/search/outcome.hpp>

#include <span>

namespace dnnplan {

template <asynchronous_throughput_model Throughput, convergence_model Convergence, linear_cost_model Cost>
[[nodiscard]] search_outcome exhaustive_search(const Throughput& throughput, const Convergence& convergence,
                                               const Cost& cost, const cluster_space& space,
                                               const cluster_goals& goals) {
    search_outcome out;
    incumbent best(goals);
    space.for_each([&](std::span<const std::int32_t> counts, std::int64_t) {
        ++out.counters.clusters_evaluated;
        best.offer(counts, predict_cluster(throughput, convergence, cost, counts, goals.target_loss));
    });
    out.lower_bound = best.value();
    best.move_plan_to(out);
    if (out.prediction) {
        out.status = solve_status::optimal;
    } else {
        out.status = solve_status::infeasible;
        out.reason = "no cluster in the search space meets the goals";
    }
    return out;
}

}  // namespace dnnplan
