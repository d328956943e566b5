#pragma once
// Bounds on the time per minibatch of PipeDream's partitions, where pipedream_partition()
// (partition/pipedream.hpp) starts and caps its searches below growing upper bounds. Each search
// is exact below its bound, whatever the bound: these only decide how much work is done.

#include <dnnplan/model/concepts.hpp>
#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/pipedream_chain.hpp>
#include <dnnplan/partition/pipedream_cost.hpp>
#include <dnnplan/partition/pipedream_row.hpp>
#include <dnnplan/workload/layer_graph.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace dnnplan::detail {

// A lower bound on the slowest stage of any partition on `max_replicas` or fewer replicas per
// stage: the stage holding layer l takes at least what l alone would take on its best replica
// count, since PipeDream's stage time (C + 4 (r - 1) W / (B r)) / r (reference note, section 3)
// rises with the stage's compute C and parameters W (transfers and memory only add to it). As a
// function of r it is (C + a) / r - a / r^2 with a = 4 W / B, which rises up to r = 2a / (C + a)
// <= 2 and falls after, so its least value on [1, R] is at r = 1 or r = R. Only a starting point
// for the bounded search (each search is exact below its bound, whatever the bound).
[[nodiscard]] inline double pipedream_layer_lower_bound(const layer_graph& graph, const antichain_states& built,
                                                        double bandwidth_bytes_per_s, std::int32_t max_replicas) {
    const auto rd = static_cast<double>(max_replicas);
    double bound = 0.0;
    std::size_t next_removed = 0;
    for (std::size_t i = 0; i < graph.size(); ++i) {
        if (next_removed < built.removed_layers.size() && built.removed_layers[next_removed] == i) {
            ++next_removed;
            continue;
        }
        const layer& l = graph.at(i);
        const double c = l.forward_s + l.backward_s;
        const double a = 4.0 * l.parameter_bytes / bandwidth_bytes_per_s;
        bound = std::max(bound, std::min(c, (c + a) / rd - a / (rd * rd)));
    }
    return bound;
}

// One path of the state DAG, first state first: from the last state, each time to its last
// predecessor in the topological order, which is a direct one.
[[nodiscard]] inline std::vector<std::size_t> pipedream_last_predecessor_path(const antichain_states& built) {
    std::vector<std::size_t> path = {built.states.size() - 1};
    while (const auto k = built.predecessor_sets.last(path.back())) path.push_back(*k);
    std::reverse(path.begin(), path.end());
    return path;
}

// With transfers the chain solver's partition (which ignores them) may cut where the
// activations are large; cutting only at states whose transfer is at most a quantile of
// those along the path (any subsequence of a path is a path) gives more partitions to time.
// The limits on the transfer at a cut: none (+inf), then the quartiles when there are transfers.
[[nodiscard]] inline std::vector<double> pipedream_cut_transfer_limits(const std::vector<std::size_t>& path,
                                                                       const pipedream_stage_cost& cost) {
    std::vector<double> limits = {std::numeric_limits<double>::infinity()};
    if (!cost.level().activation_compression_ratio) return limits;
    std::vector<double> transfers;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) transfers.push_back(cost.output_transfer_s(path[i]));
    std::sort(transfers.begin(), transfers.end());
    for (const std::size_t q : {std::size_t{1}, std::size_t{2}, std::size_t{3}})
        limits.push_back(transfers[std::min(transfers.size() - 1, transfers.size() * q / 4)]);
    return limits;
}

// The time of a real partition, an upper bound on the optimum for the bounded search: the
// partitions along one path of the state DAG (pipedream_last_predecessor_path) are those of a
// chain, which the chain solver answers quickly for PipeDream's compute and synchronisation
// terms; its partition is then timed with the full stage cost (transfers and memory included).
// Infinity when there is none (one state, one machine, a straight pipeline, or the memory check
// fails).
[[nodiscard]] inline double pipedream_path_upper_bound(const antichain_states& built, const pipedream_stage_cost& cost,
                                                       std::int32_t machines, bool straight, bool fewer,
                                                       pipedream_counters& work) {
    const double inf = std::numeric_limits<double>::infinity();
    if (straight || machines < 2 || built.states.size() < 2 || built.chain) return inf;
    const std::vector<std::size_t> path = pipedream_last_predecessor_path(built);
    if (path.size() < 2) return inf;
    double best = inf;
    std::vector<std::size_t> kept;
    std::vector<double> compute, parameter;
    for (const double limit : pipedream_cut_transfer_limits(path, cost)) {
        kept.clear();
        compute.clear();
        parameter.clear();
        for (std::size_t i = 0; i < path.size(); ++i)
            if (i + 1 == path.size() || cost.output_transfer_s(path[i]) <= limit) {
                kept.push_back(path[i]);
                compute.push_back(built.states[path[i]].compute_s);
                parameter.push_back(built.states[path[i]].parameter_bytes);
            }
        if (kept.size() < 2) continue;
        const auto time_of = [&](const std::vector<chain_stage>& stages) {
            double slowest = 0.0;
            std::int32_t before = 0;
            for (const chain_stage& st : stages) {
                const stage_candidate c{.first_state = st.first_state == 0 ? 0 : kept[st.first_state - 1] + 1,
                                        .end_state = kept[st.end_state - 1] + 1, .replicas = st.replicas,
                                        .devices_before = before, .devices_total = machines};
                slowest = std::max(slowest, cost.stage_time_s(c));
                before += st.replicas;
            }
            return slowest;
        };
        pipedream_chain_solver solver(compute, parameter, cost.level().bandwidth_bytes_per_s, machines, fewer);
        best = std::min(best, time_of(solver.solve(time_of, 0.02, work.threshold_decisions)));
    }
    return best;
}

}  // namespace dnnplan::detail
