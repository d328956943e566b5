#pragma once
// PipeDream-compatible pipeline partitioning: the dynamic program of PipeDream's optimizer
// (Narayanan et al., SOSP 2019; optimizer_graph_hierarchical.py), reproduced as the reference
// note describes it (sections 3-5), over the states of partition/antichain.hpp. This is the
// plain O(S^2 M^2) recurrence: the compatibility mode and the oracle for faster solvers.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/layer_graph.hpp>
#include <dnnplan/detail/validate.hpp>
#include <dnnplan/partition/antichain.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace dnnplan {

/// PipeDream's optimizer flags (reference note, section 5), with its defaults.
struct pipedream_options {
    std::vector<std::int32_t> machines{};           ///< -n m1 m2 ...: machines per level (level 1 first)
    std::vector<double> bandwidths_bytes_per_s{};   ///< -b B1 B2 ...; empty: 1e9 for every level
    std::optional<double> activation_compression_ratio{};  ///< absent: activation transfer ignored
    bool straight_pipeline = false;                 ///< no replication
    bool use_memory_constraint = false;
    double memory_bytes = 16e9;                     ///< -s
    bool use_fewer_machines = false;

    void validate() const {
        if (machines.empty()) throw invalid_input("machines", "[]", "at least one level (-n)");
        for (std::size_t l = 0; l < machines.size(); ++l)
            detail::require_at_least("machines[" + std::to_string(l) + "]", machines[l], 1);
        if (!bandwidths_bytes_per_s.empty() && bandwidths_bytes_per_s.size() != machines.size())
            throw invalid_input("bandwidths_bytes_per_s", std::to_string(bandwidths_bytes_per_s.size()) + " values",
                                "one bandwidth per level (" + std::to_string(machines.size()) + ")");
        for (std::size_t l = 0; l < bandwidths_bytes_per_s.size(); ++l)
            detail::require_positive("bandwidths_bytes_per_s[" + std::to_string(l) + "]", bandwidths_bytes_per_s[l]);
        if (activation_compression_ratio)
            detail::require_positive("activation_compression_ratio", *activation_compression_ratio);
        detail::require_positive("memory_bytes", memory_bytes);
    }
};

/// A stage of the final level: states [first_state, end_state) on `replicas` machines.
struct pipedream_stage {
    std::size_t first_state = 0;
    std::size_t end_state = 0;      ///< exclusive
    std::int32_t replicas = 1;
    double compute_s = 0.0;         ///< the stage's compute time on one machine (PipeDream's printout)
    std::vector<std::size_t> layers{};  ///< layer indices of the stage
};

struct pipedream_result {
    double time_per_minibatch_s = 0.0;  ///< A[0][S-1][M-1] of the final level (+inf: no partition)
    std::size_t num_states = 0;
    std::vector<pipedream_stage> stages{};  ///< empty when no partition exists
};

namespace detail {

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

}  // namespace detail

/// PipeDream's partitioning of `graph`: states from build_antichain_states, then its dynamic
/// program level by level (-n m1 m2 ... with -b B1 B2 ...), each level's A[i][j][m-1] becoming
/// the next level's compute times. Throws invalid_input for bad options.
[[nodiscard]] inline pipedream_result pipedream_partition(const layer_graph& graph, const pipedream_options& options) {
    options.validate();
    const antichain_states built = build_antichain_states(graph);
    const auto& states = built.states;
    const std::size_t s_count = states.size();
    const double inf = std::numeric_limits<double>::infinity();

    // Range figures of states i..j (row i of PipeDream's (S + 1) x S matrices): row 0 is the
    // prefix up to state j, row i >= 1 state j minus state i - 1, "None" (+inf) for j < i.
    // Activations and parameters always come from the prefixes; compute does at the first level
    // and is the previous level's answer A[i][j][M-1] after it (stored only then).
    const std::size_t rows = s_count + 1;
    const auto prefix_range = [&](double antichain_state::*field, std::size_t i, std::size_t j) {
        if (i == 0) return states[j].*field;
        if (j + 1 < i) return inf;
        return states[j].*field - states[i - 1].*field;
    };
    const auto act = [&](std::size_t i, std::size_t j) { return prefix_range(&antichain_state::activation_bytes, i, j); };
    const auto par = [&](std::size_t i, std::size_t j) { return prefix_range(&antichain_state::parameter_bytes, i, j); };
    std::vector<double> previous_level;  // (S + 1) x S, from the second level on
    const auto compute = [&](std::size_t i, std::size_t j) {
        if (j + 1 <= i) return inf;  // j < i: no states
        return previous_level.empty() ? prefix_range(&antichain_state::compute_s, i, j) : previous_level[i * s_count + j];
    };
    // Predecessor sets as membership rows, for the "k in P(i - 1)" test of the non-final levels.
    std::vector<std::vector<bool>> is_pred;
    if (options.machines.size() > 1) {
        is_pred.assign(s_count, std::vector<bool>(s_count, false));
        for (std::size_t j = 0; j < s_count; ++j)
            for (const std::size_t k : states[j].predecessors) is_pred[j][k] = true;
    }

    const std::size_t levels = options.machines.size();
    std::vector<detail::pipedream_level> as;
    double within = 1.0;  // machines per machine at the level below (G)
    for (std::size_t level = 0; level < levels; ++level) {
        const std::int32_t machines = options.machines[level];
        const auto m_count = static_cast<std::size_t>(machines);
        const double bw = options.bandwidths_bytes_per_s.empty() ? 1e9 : options.bandwidths_bytes_per_s[level];
        const bool final_level = level + 1 == levels;
        const double total = static_cast<double>(machines);
        // The final level reads only row i = 0; the others every row.
        const std::size_t max_i = final_level ? 1 : rows;
        detail::pipedream_level a(s_count, machines);
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
                    cell.time = std::isinf(c) ? inf : (c + sync) / (md + 1.0);
                    cell.split_state = -1;
                    cell.replicas = static_cast<std::int32_t>(m + 1);
                }
            }
        for (std::size_t i = 0; i < max_i; ++i)
            for (std::size_t m = 1; m < m_count; ++m)
                for (std::size_t j = i + 1; j < s_count; ++j) {
                    detail::pipedream_cell best = a.at(i, j, m);
                    if (options.use_fewer_machines && m > 0 && a.at(i, j, m - 1).time < best.time) best = a.at(i, j, m - 1);
                    for (const std::size_t k : states[j].predecessors) {
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
                            const detail::pipedream_cell& left = a.at(i, k, m - mp);
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

    pipedream_result result;
    result.num_states = s_count;
    const std::size_t m_last = static_cast<std::size_t>(options.machines.back()) - 1;
    const detail::pipedream_level& final_a = as.back();
    result.time_per_minibatch_s = final_a.at(0, s_count - 1, m_last).time;
    if (std::isinf(result.time_per_minibatch_s)) return result;
    // Stages, last first, following the splits (PipeDream's analyze_partitioning).
    std::size_t end = s_count, j = s_count - 1, m = m_last;
    while (true) {
        const detail::pipedream_cell& cell = final_a.at(0, j, m);
        const std::size_t first = cell.split_state < 0 ? 0 : static_cast<std::size_t>(cell.split_state) + 1;
        pipedream_stage stage{.first_state = first, .end_state = end, .replicas = cell.replicas};
        stage.compute_s = states[end - 1].compute_s - (first > 0 ? states[first - 1].compute_s : 0.0);
        std::vector<bool> before(graph.size(), false);
        if (first > 0)
            for (const std::size_t l : states[first - 1].layers) before[l] = true;
        for (const std::size_t l : states[end - 1].layers)
            if (!before[l]) stage.layers.push_back(l);
        result.stages.push_back(std::move(stage));
        if (cell.split_state < 0) break;
        end = first;
        j = static_cast<std::size_t>(cell.split_state);
        m = static_cast<std::size_t>(cell.split_machines);
    }
    std::reverse(result.stages.begin(), result.stages.end());
    return result;
}

}  // namespace dnnplan
