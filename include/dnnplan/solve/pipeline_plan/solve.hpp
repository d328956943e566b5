#pragma once
// The pipeline-partitioning planners, in the one solver shape:
//
//   solve(pipedream_request)                    PipeDream's optimizer (its states, its stage cost, every
//                                               level), exact and fast (partition/pipedream.hpp);
//   solve(pipedream_request, states)            the same on states built once (many runs of one graph);
//   solve(pipedream_request, states, model)     PipeDream's recurrence over the states for a
//                                               stage_cost_model of the host's own (one level);
//   solve(pipeline_dp_request, model)           the exact stages x boundaries x replicas partition of
//                                               a chain for every device budget (partition/pipeline_dp.hpp).
// docs/solvers/pipeline_plan.md.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/workload/layer_graph.hpp>
#include <dnnplan/partition/pipedream.hpp>
#include <dnnplan/partition/pipeline_dp.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// PipeDream's optimizer run: the profiled graph and its flags.
struct pipedream_request {
    layer_graph graph{};
    pipedream_options options{};

    /// The graph is validated when it is built (layer_graph's constructor); the options here.
    void validate(std::string_view path = "") const { options.validate(detail::field_prefix(path) + "options"); }
};

/// The 1F1B partitioner run over a stage-cost model: the device budget and the stage cap.
struct pipeline_dp_request {
    pipeline_dp_options options{};

    void validate(std::string_view path = "") const { options.validate(detail::field_prefix(path) + "options"); }
};

namespace detail {

/// PipeDream's recurrence (its optimizer's compute_partitioning, one level) over antichain states
/// for any stage_cost_model: A[j][m], the best slowest stage of states [0, j] on m + 1 machines,
///   A[j][m] = min( stage(0, j + 1; m + 1 replicas, 0 before),
///                  A[j][m - 1] (use_fewer_machines, j >= 1 as PipeDream),
///                  min over k in P(j), 0 <= r - 1 < m of max(A[k][m - r], stage(k + 1, j + 1; r replicas, m - r + 1 before)) ),
/// stage(first, end; r, before) = model.stage_time_s({first, end, r, before, M}); a straight
/// pipeline has r = 1 only. Exact when model.pipeline_time_s does not depend on the stage count
/// (PipeDream's own cost: the time is the slowest stage); use the pipeline DP for a model whose
/// time does. O(S |P| M^2) stage evaluations, O(S M) memory.
template <stage_cost_model Model>
[[nodiscard]] pipedream_result pipedream_recurrence(const layer_graph& graph, const antichain_states& built,
                                                    const Model& model, std::int32_t machines, bool straight, bool fewer) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t s_count = built.states.size();
    const auto m_count = static_cast<std::size_t>(machines);
    struct cell {
        double time = std::numeric_limits<double>::infinity();
        std::int64_t split = -1;   // k; -1: one stage
        std::int32_t left = 0;     // machines index m - r of the left part
        std::int32_t replicas = 0;
    };
    std::vector<cell> a(s_count * m_count);
    const auto at = [&](std::size_t j, std::size_t m) -> cell& { return a[j * m_count + m]; };
    pipedream_result result;
    const auto start = std::chrono::steady_clock::now();
    const auto stage_time = [&](std::size_t first, std::size_t end, std::int32_t r, std::int32_t before) {
        ++result.counters.evaluations;
        return static_cast<double>(model.stage_time_s({.first_state = first, .end_state = end, .replicas = r,
                                                        .devices_before = before, .devices_total = machines}));
    };
    for (std::size_t j = 0; j < s_count; ++j)
        for (std::size_t m = 0; m < m_count; ++m) {
            cell best;
            if (!straight || m == 0) {
                const auto r = static_cast<std::int32_t>(m + 1);
                best = {.time = stage_time(0, j + 1, r, 0), .split = -1, .left = 0, .replicas = r};
            }
            // PipeDream leaves machines idle only from state 1 on (its loop over j starts at i + 1).
            if (fewer && j > 0 && m > 0 && at(j, m - 1).time < best.time) best = at(j, m - 1);
            for_each_state_predecessor(built, j, [&](std::size_t k) {
                const std::size_t r_max = straight ? std::min<std::size_t>(1, m) : m;
                for (std::size_t r = 1; r <= r_max; ++r) {
                    const cell& left = at(k, m - r);
                    if (!(left.time < best.time)) continue;
                    const double t = std::max(left.time, stage_time(k + 1, j + 1, static_cast<std::int32_t>(r),
                                                                    static_cast<std::int32_t>(m - r + 1)));
                    if (t < best.time)
                        best = {.time = t, .split = static_cast<std::int64_t>(k), .left = static_cast<std::int32_t>(m - r),
                                .replicas = static_cast<std::int32_t>(r)};
                }
            });
            at(j, m) = best;
        }
    std::optional<pipedream_plan> plan;
    if (s_count > 0 && at(s_count - 1, m_count - 1).time < inf) {
        plan.emplace();
        std::size_t end = s_count, j = s_count - 1, m = m_count - 1;
        while (true) {
            const cell& c = at(j, m);
            const std::size_t first = c.split < 0 ? 0 : static_cast<std::size_t>(c.split) + 1;
            plan->stages.push_back(describe_stage(graph, built, first, end, c.replicas));
            if (c.split < 0) break;
            end = first;
            j = static_cast<std::size_t>(c.split);
            m = static_cast<std::size_t>(c.left);
        }
        std::reverse(plan->stages.begin(), plan->stages.end());
        plan->time_per_minibatch_s = model.pipeline_time_s(at(s_count - 1, m_count - 1).time,
                                                           static_cast<std::int32_t>(plan->stages.size()));
    }
    const std::int64_t evaluations = result.counters.evaluations;
    result = pipedream_finish(std::move(plan), s_count, {});
    result.counters.evaluations = evaluations;
    if (result.status == solve_status::infeasible) result.reason = "no partition: every stage assignment costs +inf in the model";
    result.counters.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace detail

/// PipeDream's optimizer on prebuilt states (build_antichain_states(request.graph)), so that one
/// graph can be partitioned for many machine counts and flags without rebuilding its states.
/// Throws invalid_input for bad options or empty states; no partition is status infeasible.
[[nodiscard]] inline pipedream_result solve(const pipedream_request& request, const antichain_states& states) {
    request.validate();
    const auto start = std::chrono::steady_clock::now();
    pipedream_counters work;
    pipedream_result result = pipedream_partition(request.graph, states, request.options, &work);
    result.counters.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

/// PipeDream's optimizer: its states of the graph (at most options.max_states of them), then
/// solve(request, states); a graph with more takes the wide path (pipedream_partition), and so does
/// one level of a single-source graph whose recurrence a budget stopped, within what is left of it
/// (detail::pipedream_after_budget).
[[nodiscard]] inline pipedream_result solve(const pipedream_request& request) {
    request.validate();
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed_s = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    std::optional<antichain_states> states = try_build_antichain_states(request.graph, request.options.max_states);
    pipedream_result result = states ? solve(request, *states) : detail::pipedream_partition_beyond_states(request.graph, request.options);
    if (states) result = detail::pipedream_after_budget(request.graph, request.options, std::move(result), elapsed_s());
    result.counters.elapsed_s = elapsed_s();
    return result;
}

/// PipeDream's recurrence with a stage-cost model of the host's own, built over `states` (its
/// num_states() must be theirs): one level (request.options.machines has one entry), the flags
/// straight_pipeline and use_fewer_machines apply; memory and bandwidth are the model's business.
template <stage_cost_model Model>
[[nodiscard]] pipedream_result solve(const pipedream_request& request, const antichain_states& states, const Model& model) {
    request.validate();
    if (request.options.machines.size() != 1)
        throw invalid_input("options.machines", std::to_string(request.options.machines.size()) + " levels",
                            "one level with a stage-cost model of your own (the hierarchy is PipeDream's cost)");
    if (static_cast<std::size_t>(model.num_states()) != states.states.size())
        throw invalid_input("model.num_states()", std::to_string(static_cast<std::size_t>(model.num_states())),
                            "the number of states (" + std::to_string(states.states.size()) + ")");
    if (states.states.empty()) throw invalid_input("states", "[]", "at least one state (build_antichain_states)");
    return detail::pipedream_recurrence(request.graph, states, model, request.options.machines.front(),
                                        request.options.straight_pipeline, request.options.use_fewer_machines);
}

/// The exact 1F1B partition for every device budget with the host's (or the published)
/// stage-cost model.
template <stage_cost_model Model>
[[nodiscard]] pipeline_dp_result solve(const pipeline_dp_request& request, const Model& model) {
    request.validate();
    return pipeline_dp_partition(model, request.options);
}

}  // namespace dnnplan
