#pragma once
// Brute force over every PipeDream partition of a small state DAG: every chain of states
// k_1 < ... < k_t = S - 1 with k_i a predecessor of k_(i+1) (the first stage is states
// 0..k_1), every replica count per stage, and, with use_fewer_machines, every number of idle
// machines placed after any stage that ends after state 0 (PipeDream's A[j][m] <- A[j][m-1] for
// j >= 1: an idle machine counts as "before" every later stage in the memory check). Each stage
// is priced by a stage-cost model (PipeDream's, pipedream_stage_cost, or any other) in that
// place; the answer is the least slowest stage.

#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/partition/pipedream.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

namespace dnnplan_test {

/// The least slowest stage over every PipeDream partition of `built` on `total` machines, each
/// stage priced by `cost` (any stage_cost_model over these states, in PipeDream's places:
/// devices_total = total, no stage count); +inf when every partition has a stage of +inf.
template <dnnplan::stage_cost_model Model>
[[nodiscard]] double pipedream_brute_force(const dnnplan::antichain_states& built, const Model& cost, std::int32_t total,
                                           bool straight, bool fewer) {
    const std::size_t s = built.states.size();
    const std::int32_t max_reps = straight ? 1 : total;
    const auto is_pred = [&](std::size_t k, std::size_t j) { return dnnplan::state_precedes(built, k, j); };
    double best = std::numeric_limits<double>::infinity();
    // extend(first, used, idle_left, slowest): stages so far end at state first - 1 and use
    // `used` machines (idle ones included); idle_left idle machines still to place.
    std::function<void(std::size_t, std::int32_t, std::int32_t, double)> extend =
        [&](std::size_t first, std::int32_t used, std::int32_t idle_left, double slowest) {
            for (std::size_t end = first + 1; end <= s; ++end) {
                if (first > 0 && !is_pred(first - 1, end - 1)) continue;
                for (std::int32_t r = 1; r <= max_reps && used + r + idle_left <= total; ++r) {
                    const dnnplan::stage_candidate c{.first_state = first, .end_state = end, .replicas = r,
                                                     .devices_before = used, .devices_total = total};
                    const double t = std::max(slowest, static_cast<double>(cost.stage_time_s(c)));
                    if (std::isinf(t)) continue;
                    const std::int32_t through = used + r;
                    if (end == s) {
                        // Idle machines may also come after the last stage (when it ends after state 0).
                        if (through + idle_left == total && (idle_left == 0 || end >= 2)) best = std::min(best, t);
                        continue;
                    }
                    extend(end, through, idle_left, t);
                    // Place every idle machine right after this stage (it ends at state end - 1 >= 1).
                    if (idle_left > 0 && end >= 2) extend(end, through + idle_left, 0, t);
                }
            }
        };
    const std::int32_t max_idle = fewer && s > 1 ? total - 1 : 0;
    for (std::int32_t idle = 0; idle <= max_idle; ++idle) extend(0, 0, idle, 0.0);
    return best;
}

/// The same with PipeDream's stage cost of one level of `options` (pipedream_stage_cost).
[[nodiscard]] inline double pipedream_brute_force(const dnnplan::antichain_states& built,
                                                  const dnnplan::pipedream_options& options) {
    const dnnplan::pipedream_stage_cost cost(
        built, {.bandwidth_bytes_per_s = options.bandwidths_bytes_per_s.empty() ? 1e9 : options.bandwidths_bytes_per_s[0],
                .activation_compression_ratio = options.activation_compression_ratio,
                .memory_bytes = options.use_memory_constraint ? std::optional<double>(options.memory_bytes) : std::nullopt});
    return pipedream_brute_force(built, cost, options.machines.at(0), options.straight_pipeline, options.use_fewer_machines);
}

}  // namespace dnnplan_test
