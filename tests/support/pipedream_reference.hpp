#pragma once
// The plain O(S^2 M^2) transcription of PipeDream's optimizer recurrence (reference note on
// PipeDream, sections 3-5; optimizer_graph_hierarchical.py's compute_partitioning), kept in the
// tests as the oracle of the library's faster pipedream_partition(): the loops are PipeDream's
// loops, in PipeDream's order, with no pruning.

#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/pipedream.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace dnnplan_test {

using namespace dnnplan;

namespace reference_detail {

struct pipedream_cell {
    double time = std::numeric_limits<double>::infinity();  // +inf: PipeDream's None
    std::int64_t split_state = -1;                           // k; -1: none
    std::int32_t split_machines = 0;                         // m - m' (0-based) of the left part
    std::int32_t replicas = 0;
};

// One level of the recurrence. c(i, j) etc. are (S + 1) x S range figures; a[i][j][m] out.
class pipedream_level {
public:
    pipedream_level(std::size_t s, std::int32_t machines) : s_(s), m_(static_cast<std::size_t>(machines)) {}
    [[nodiscard]] pipedream_cell& at(std::size_t i, std::size_t j, std::size_t m) { return cells_[(i * s_ + j) * m_ + m]; }
    [[nodiscard]] const pipedream_cell& at(std::size_t i, std::size_t j, std::size_t m) const {
        return cells_[(i * s_ + j) * m_ + m];
    }
    void allocate(std::size_t rows) { cells_.assign(rows * s_ * m_, pipedream_cell{}); }

private:
    std::size_t s_, m_;
    std::vector<pipedream_cell> cells_;
};

}  // namespace reference_detail

/// The time per minibatch of a PipeDream result, +inf without a partition (status infeasible),
/// so that results compare as PipeDream's numbers and None do.
[[nodiscard]] inline double time_or_inf(const dnnplan::pipedream_result& r) {
    return r.plan ? r.plan->time_per_minibatch_s : std::numeric_limits<double>::infinity();
}

/// PipeDream's partitioning of `graph`: states from build_antichain_states, then its dynamic
/// program level by level (-n m1 m2 ... with -b B1 B2 ...), each level's A[i][j][m-1] becoming
/// the next level's compute times. Throws invalid_input for bad options.
[[nodiscard]] inline dnnplan::pipedream_result pipedream_partition_reference(const dnnplan::layer_graph& graph, const dnnplan::pipedream_options& options) {
    options.validate();
    const antichain_states built = build_antichain_states(graph);
    const auto& states = built.states;
    std::vector<std::vector<std::size_t>> preds(states.size());  // P(j), listed (a chain lists none)
    for (std::size_t j = 0; j < states.size(); ++j)
        for_each_state_predecessor(built, j, [&](std::size_t k) { preds[j].push_back(k); });
    const std::size_t s_count = states.size();
    const double infinity = std::numeric_limits<double>::infinity();

    // Range figures of states i..j (row i of PipeDream's (S + 1) x S matrices): row 0 is the
    // prefix up to state j, row i >= 1 state j minus state i - 1, "None" (+inf) for j < i.
    // Activations and parameters always come from the prefixes; compute does at the first level
    // and is the previous level's answer A[i][j][M-1] after it (stored only then).
    const std::size_t rows = s_count + 1;
    const auto prefix_range = [&](double antichain_state::*field, std::size_t i, std::size_t j) {
        if (i == 0) return states[j].*field;
        if (j + 1 < i) return infinity;
        return states[j].*field - states[i - 1].*field;
    };
    const auto act = [&](std::size_t i, std::size_t j) { return prefix_range(&antichain_state::activation_bytes, i, j); };
    const auto par = [&](std::size_t i, std::size_t j) { return prefix_range(&antichain_state::parameter_bytes, i, j); };
    std::vector<double> previous_level;  // (S + 1) x S, from the second level on
    const auto compute = [&](std::size_t i, std::size_t j) {
        if (j + 1 <= i) return infinity;  // j < i: no states
        return previous_level.empty() ? prefix_range(&antichain_state::compute_s, i, j) : previous_level[i * s_count + j];
    };
    // Predecessor sets as membership rows, for the "k in P(i - 1)" test of the non-final levels.
    std::vector<std::vector<bool>> is_pred;
    if (options.machines.size() > 1) {
        is_pred.assign(s_count, std::vector<bool>(s_count, false));
        for (std::size_t j = 0; j < s_count; ++j)
            for (const std::size_t k : preds[j]) is_pred[j][k] = true;
    }

    const std::size_t levels = options.machines.size();
    std::vector<reference_detail::pipedream_level> as;
    double within = 1.0;  // machines per machine at the level below (G)
    for (std::size_t level = 0; level < levels; ++level) {
        const std::int32_t machines = options.machines[level];
        const auto m_count = static_cast<std::size_t>(machines);
        const double bw = options.bandwidths_bytes_per_s.empty() ? 1e9 : options.bandwidths_bytes_per_s[level];
        const bool final_level = level + 1 == levels;
        const double total = static_cast<double>(machines);
        // The final level reads only row i = 0; the others every row.
        const std::size_t max_i = final_level ? 1 : rows;
        reference_detail::pipedream_level a(s_count, machines);
        a.allocate(max_i);
        // Initialisation: states i..j as one stage replicated on m + 1 machines.
        for (std::size_t i = 0; i < max_i; ++i)
            for (std::size_t j = i; j < s_count; ++j) {
                const double c = compute(i, j);
                const std::size_t max_m = options.straight_pipeline ? 1 : m_count;
                for (std::size_t m = 0; m < max_m; ++m) {
                    const double md = static_cast<double>(m);
                    const double stashed = std::ceil((total - (md + 1.0)) / (md + 1.0)) * (act(i, j) + par(i, j));
                    if (options.use_memory_constraint && stashed > options.memory_bytes) continue;
                    const double sync = (4.0 * md * par(i, j)) / (bw * (md + 1.0)) / within;
                    auto& cell = a.at(i, j, m);
                    cell.time = std::isinf(c) ? infinity : (c + sync) / (md + 1.0);
                    cell.split_state = -1;
                    cell.replicas = static_cast<std::int32_t>(m + 1);
                }
            }
        for (std::size_t i = 0; i < max_i; ++i)
            for (std::size_t m = 1; m < m_count; ++m)
                for (std::size_t j = i + 1; j < s_count; ++j) {
                    reference_detail::pipedream_cell best = a.at(i, j, m);
                    if (options.use_fewer_machines && m > 0 && a.at(i, j, m - 1).time < best.time) best = a.at(i, j, m - 1);
                    for (const std::size_t k : preds[j]) {
                        if (i > 0 && is_pred[i - 1][k]) continue;
                        const std::size_t max_mp = options.straight_pipeline ? 2 : m + 1;
                        for (std::size_t mp = 1; mp < max_mp; ++mp) {
                            const double mpd = static_cast<double>(mp);
                            double last = compute(k + 1, j);
                            if (std::isinf(last)) continue;
                            const double last_par = par(k + 1, j);
                            const double stashed = (act(k + 1, j) + last_par) *
                                                   std::ceil((total - (static_cast<double>(m) + 1.0)) / mpd);
                            if (options.use_memory_constraint && stashed > options.memory_bytes) continue;
                            last = (last + (4.0 * (mpd - 1.0) * last_par) / (bw * mpd)) / mpd;
                            const reference_detail::pipedream_cell& left = a.at(i, k, m - mp);
                            if (std::isinf(left.time)) continue;
                            double t = std::max(left.time, last);
                            if (options.activation_compression_ratio) {
                                const double r = *options.activation_compression_ratio;
                                t = std::max(t, (2.0 * states[k].output_activation_bytes) / (bw * mpd) / r);
                                if (j + 1 < s_count)
                                    t = std::max(t, (2.0 * states[j].output_activation_bytes) / (bw * mpd) / r);
                            }
                            if (best.time > t) {
                                best.time = t;
                                best.split_state = static_cast<std::int64_t>(k);
                                best.split_machines = static_cast<std::int32_t>(m - mp);
                                best.replicas = static_cast<std::int32_t>(mp);
                            }
                        }
                    }
                    a.at(i, j, m) = best;
                }
        if (!final_level) {
            std::vector<double> next(rows * s_count);
            for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t j = 0; j < s_count; ++j) next[i * s_count + j] = a.at(i, j, m_count - 1).time;
            previous_level = std::move(next);
        }
        as.push_back(std::move(a));
        within = static_cast<double>(machines);
    }

    // The result in the planners' shape: optimal with the plan (objective_value = bound = its
    // time), or infeasible without one (PipeDream's None).
    pipedream_result result;
    result.details.num_states = s_count;
    const std::size_t m_last = static_cast<std::size_t>(options.machines.back()) - 1;
    const reference_detail::pipedream_level& final_a = as.back();
    const double time = final_a.at(0, s_count - 1, m_last).time;
    if (std::isinf(time)) {
        result.status = solve_status::infeasible;
        result.reason = "no partition (PipeDream's None)";
        return result;
    }
    pipedream_plan plan;
    plan.time_per_minibatch_s = time;
    // Stages, last first, following the splits (PipeDream's analyze_partitioning).
    std::size_t end = s_count, j = s_count - 1, m = m_last;
    while (true) {
        const reference_detail::pipedream_cell& cell = final_a.at(0, j, m);
        const std::size_t first = cell.split_state < 0 ? 0 : static_cast<std::size_t>(cell.split_state) + 1;
        plan.stages.push_back(dnnplan::detail::describe_stage(graph, built, first, end, cell.replicas));
        if (cell.split_state < 0) break;
        end = first;
        j = static_cast<std::size_t>(cell.split_state);
        m = static_cast<std::size_t>(cell.split_machines);
    }
    std::reverse(plan.stages.begin(), plan.stages.end());
    result.status = solve_status::optimal;
    result.objective_value = result.bound = time;
    result.plan = std::move(plan);
    return result;
}

}  // namespace dnnplan_test
