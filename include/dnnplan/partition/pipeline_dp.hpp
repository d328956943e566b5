#pragma once
// The exact partitioner for stage-count-dependent stage-cost models (model/concepts.hpp,
// needs_stage_count = true, e.g. the 1F1B model of model/pipeline_1f1b.hpp): over a chain of
// states, it chooses the number of stages S, the stage boundaries and the replicas of each stage
// (sum <= max_devices) that minimise model.pipeline_time_s(slowest stage, S), and reports the
// best plan for every device budget d = 1..max_devices (what a planner that prices devices needs).
//
// Two recurrences, both exact; docs/models/pipeline-1f1b.md#the-partitioner has the proofs.
// - Suffix recurrence, for a remaining_stages_cost_model (model/concepts.hpp: the stage's
//   time depends on its place only through u = stage_count - stage_index, the stages from it to
//   the end): g[u][j][d] = the smallest slowest-stage time of states [j, n) in u stages on at most
//   d devices = min over the first stage [j, e) and its devices r of
//   max(c(j, e, r, u), g[u-1][e][d-r]), with c(., ., r, .) replaced by its running minimum over
//   r' <= r (a stage may leave devices idle). Both terms are monotone in r, so the best r is
//   where they cross, and the crossing only moves right as d grows: one sweep over r serves
//   every d. The answer for S stages on d devices is pipeline_time_s(g[S][0][d], S).
//   Time O(U n^2 D / 6) for n states, D devices, U = min(n, D) stage counts;
//   stage evaluations O(U n^2 D / 6); memory O(U n D).
// - Prefix recurrence, for any other stage_cost_model: for each S, stages are added from the
//   front with their true stage_index, stage_count and devices_before (devices_total is 0: not
//   known until the end). Time O(U^2 n^2 D^2); meant for small inputs and as a cross-check.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>

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

struct pipeline_dp_options {
    std::int32_t max_devices = 1;  ///< D: devices the stages may use in total (>= 1)
    std::int32_t max_stages = 0;   ///< 0: no limit but min(states, D)
    /// Checked before the recurrence runs, against its size: nodes = the table's cells
    /// (memory), evaluations = the most stage_time_s calls it can make. Over either: status
    /// no_plan_found with the limit, nothing computed.
    search_budget budget{};

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        detail::require_at_least(p + "max_devices", max_devices, 1);
        detail::require_at_least(p + "max_stages", max_stages, 0);
        budget.validate(p + "budget");
    }
};

struct pipeline_dp_stage {
    std::size_t first_state = 0;
    std::size_t end_state = 0;  ///< exclusive
    std::int32_t replicas = 1;
    double stage_time_s = 0.0;  ///< the model's stage_time_s in its place in the pipeline
};

struct pipeline_dp_plan {
    double time_s = std::numeric_limits<double>::infinity();  ///< model.pipeline_time_s(slowest, S); +inf while none is found
    double slowest_stage_s = std::numeric_limits<double>::infinity();
    std::int32_t devices = 0;  ///< sum of the stages' replicas
    std::vector<pipeline_dp_stage> stages{};
};

struct pipeline_dp_details {
    /// [d - 1]: the best plan on at most d devices (none: no pipeline fits on d devices).
    std::vector<std::optional<pipeline_dp_plan>> by_devices{};
};

/// plan: the best pipeline on at most max_devices devices; status optimal (objective_value = bound
/// = its time per minibatch: the recurrences are exact) or infeasible; counters.evaluations = the
/// stage times computed.
using pipeline_dp_result = solve_result<pipeline_dp_plan, pipeline_dp_details>;

namespace detail {

struct dp_choice {
    std::int32_t end = -1;       // end state of the stage starting here; -1: none
    std::int32_t used = 0;       // replicas the stage uses
    std::int32_t allotted = 0;   // devices taken from the budget (>= used; the rest idle)
};

/// The suffix recurrence's table: g[u][j][d], the smallest slowest-stage time of states [j, n)
/// in u stages on at most d devices (+inf: none), and the first stage that attains it.
struct dp_suffix_table {
    std::size_t n = 0, cols = 0;  // states; device budgets 0..D
    std::vector<double> g{};
    std::vector<dp_choice> choice{};

    dp_suffix_table(std::size_t states, std::size_t max_stages, std::size_t max_devices)
        : n(states), cols(max_devices + 1), g((max_stages + 1) * (states + 1) * cols, std::numeric_limits<double>::infinity()),
          choice(g.size()) {}
    [[nodiscard]] std::size_t at(std::size_t u, std::size_t j, std::size_t d) const noexcept { return (u * (n + 1) + j) * cols + d; }
};

/// c(j, e, r, u) for r = 1..r_max as its running minimum over r' <= r (`cost[r]`; a stage may
/// leave devices idle) and the r' that attains it (`argmin[r]`).
template <remaining_stages_cost_model Model>
void dp_first_stage_costs(const Model& model, std::size_t j, std::size_t e, std::size_t u, std::size_t r_max,
                          std::vector<double>& cost, std::vector<std::int32_t>& argmin, std::int64_t& evaluations) {
    double best = std::numeric_limits<double>::infinity();
    std::int32_t best_r = 0;
    for (std::size_t r = 1; r <= r_max; ++r) {
        const stage_candidate c{.first_state = j, .end_state = e, .replicas = static_cast<std::int32_t>(r),
                                .stage_index = 0, .stage_count = static_cast<std::int32_t>(u)};
        const double t = model.stage_time_s(c);
        ++evaluations;
        if (t < best) {
            best = t;
            best_r = static_cast<std::int32_t>(r);
        }
        cost[r] = best;
        argmin[r] = best_r;
    }
}

/// g[u][j][d] for every d, improved by the first stage [j, e) (its costs from
/// dp_first_stage_costs) followed by u - 1 stages from e.
inline void dp_merge_first_stage(dp_suffix_table& table, std::size_t u, std::size_t j, std::size_t e, std::size_t max_devices,
                                 const std::vector<double>& cost, const std::vector<std::int32_t>& argmin) {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double>& g = table.g;
    // lo: the smallest r with cost[r] <= g[u-1][e][d-r]. cost falls and the rest's time
    // rises with r, so the optimum is at lo or lo - 1; and lo never decreases as d
    // grows (the rest only gets faster), so one sweep finds it for every d.
    std::size_t lo = 1;
    for (std::size_t d = u; d <= max_devices; ++d) {
        const std::size_t r_hi = d - (u - 1);
        double value = inf;
        std::size_t pick = 0;
        if (u == 1) {
            value = cost[r_hi];
            pick = r_hi;
        } else {
            while (lo <= r_hi && !(cost[lo] <= g[table.at(u - 1, e, d - lo)])) ++lo;
            if (lo <= r_hi) {
                value = g[table.at(u - 1, e, d - lo)];
                pick = lo;
            }
            if (lo > 1 && cost[lo - 1] < value) {
                value = cost[lo - 1];
                pick = lo - 1;
            }
        }
        if (pick == 0 || !(value < g[table.at(u, j, d)])) continue;
        g[table.at(u, j, d)] = value;
        table.choice[table.at(u, j, d)] = {.end = static_cast<std::int32_t>(e), .used = argmin[pick],
                                           .allotted = static_cast<std::int32_t>(pick)};
    }
}

/// The best plan on at most d devices from the filled table: the stage count whose
/// pipeline_time_s is least, then its stages by the choices.
template <remaining_stages_cost_model Model>
void dp_suffix_plan(const Model& model, const dp_suffix_table& table, std::size_t u_max, std::size_t d, pipeline_dp_plan& plan) {
    std::size_t best_u = 0;
    for (std::size_t u = 1; u <= std::min(u_max, d); ++u) {
        const double slowest = table.g[table.at(u, 0, d)];
        if (std::isinf(slowest)) continue;
        const double t = model.pipeline_time_s(slowest, static_cast<std::int32_t>(u));
        if (t < plan.time_s) {
            plan.time_s = t;
            plan.slowest_stage_s = slowest;
            best_u = u;
        }
    }
    if (best_u == 0) return;
    std::size_t j = 0, budget = d;
    for (std::size_t u = best_u; u >= 1; --u) {
        const dp_choice& c = table.choice[table.at(u, j, budget)];
        const stage_candidate stage{.first_state = j, .end_state = static_cast<std::size_t>(c.end), .replicas = c.used,
                                    .stage_index = static_cast<std::int32_t>(best_u - u),
                                    .stage_count = static_cast<std::int32_t>(best_u)};
        plan.stages.push_back({.first_state = j, .end_state = stage.end_state, .replicas = c.used,
                               .stage_time_s = model.stage_time_s(stage)});
        plan.devices += c.used;
        j = stage.end_state;
        budget -= static_cast<std::size_t>(c.allotted);
    }
}

/// The suffix recurrence (the header comment). Fills `plans[d - 1]` for d = 1..D.
template <remaining_stages_cost_model Model>
void pipeline_dp_suffix(const Model& model, std::size_t n, std::int32_t max_devices, std::int32_t max_stages,
                        std::vector<pipeline_dp_plan>& plans, std::int64_t& evaluations) {
    const auto dn = static_cast<std::size_t>(max_devices);
    const auto u_max = static_cast<std::size_t>(max_stages);
    dp_suffix_table table(n, u_max, dn);
    std::vector<double> cost(dn + 1, std::numeric_limits<double>::infinity());  // running minimum over r' <= r of c(j, e, r', u)
    std::vector<std::int32_t> argmin(dn + 1, 0);                                 // the r' that attains it
    for (std::size_t u = 1; u <= u_max; ++u) {
        // The first stage starts at j <= n - u (u stages need u states) and ends at e <= n - u + 1.
        for (std::size_t j = 0; j + u <= n; ++j) {
            const std::size_t e_last = u == 1 ? n : n - u + 1;
            const std::size_t e_first = u == 1 ? n : j + 1;
            for (std::size_t e = e_first; e <= e_last; ++e) {
                const std::size_t r_max = dn - (u - 1);  // the u - 1 later stages need a device each
                dp_first_stage_costs(model, j, e, u, r_max, cost, argmin, evaluations);
                dp_merge_first_stage(table, u, j, e, dn, cost, argmin);
            }
        }
    }
    for (std::size_t d = 1; d <= dn; ++d) dp_suffix_plan(model, table, u_max, d, plans[d - 1]);
}

/// The prefix recurrence for any stage_cost_model (the header comment). Fills `plans`.
template <stage_cost_model Model>
void pipeline_dp_prefix(const Model& model, std::size_t n, std::int32_t max_devices, std::int32_t max_stages,
                        std::vector<pipeline_dp_plan>& plans, std::int64_t& evaluations) {
    const double inf = std::numeric_limits<double>::infinity();
    const auto dn = static_cast<std::size_t>(max_devices);
    const std::size_t cols = dn + 1;
    // f[k][e][d]: the first k stages cover states [0, e) on exactly d devices; the slowest time.
    struct cell {
        double time = std::numeric_limits<double>::infinity();
        std::size_t from = 0;     // first state of stage k - 1
        std::int32_t replicas = 0;
    };
    for (std::size_t s = 1; s <= static_cast<std::size_t>(max_stages); ++s) {
        const auto at = [&](std::size_t k, std::size_t e, std::size_t d) { return (k * (n + 1) + e) * cols + d; };
        std::vector<cell> f((s + 1) * (n + 1) * cols);
        f[at(0, 0, 0)].time = -inf;  // the identity of max
        for (std::size_t k = 1; k <= s; ++k)
            for (std::size_t e = k; e + (s - k) <= n; ++e)
                for (std::size_t j = k - 1; j < e; ++j)
                    for (std::size_t before = k - 1; before + (s - k) < dn; ++before) {
                        const double prior = f[at(k - 1, j, before)].time;
                        if (prior == inf) continue;
                        for (std::size_t r = 1; before + r + (s - k) <= dn; ++r) {
                            const stage_candidate c{.first_state = j, .end_state = e, .replicas = static_cast<std::int32_t>(r),
                                                    .devices_before = static_cast<std::int32_t>(before),
                                                    .stage_index = static_cast<std::int32_t>(k - 1),
                                                    .stage_count = static_cast<std::int32_t>(s)};
                            const double t = std::max(prior, model.stage_time_s(c));
                            ++evaluations;
                            cell& target = f[at(k, e, before + r)];
                            if (t < target.time) target = {.time = t, .from = j, .replicas = static_cast<std::int32_t>(r)};
                        }
                    }
        for (std::size_t used = s; used <= dn; ++used) {
            const double slowest = f[at(s, n, used)].time;
            if (slowest == inf) continue;
            const double t = model.pipeline_time_s(slowest, static_cast<std::int32_t>(s));
            // A plan on `used` devices is a candidate for every budget d >= used.
            for (std::size_t d = used; d <= dn; ++d) {
                pipeline_dp_plan& plan = plans[d - 1];
                if (!(t < plan.time_s)) continue;
                plan = {.time_s = t, .slowest_stage_s = slowest, .devices = static_cast<std::int32_t>(used), .stages = {}};
                std::size_t e = n, budget = used;
                for (std::size_t k = s; k >= 1; --k) {
                    const cell& c = f[at(k, e, budget)];
                    const auto r = static_cast<std::size_t>(c.replicas);
                    const stage_candidate stage{.first_state = c.from, .end_state = e, .replicas = c.replicas,
                                                .devices_before = static_cast<std::int32_t>(budget - r),
                                                .stage_index = static_cast<std::int32_t>(k - 1),
                                                .stage_count = static_cast<std::int32_t>(s)};
                    plan.stages.push_back({.first_state = c.from, .end_state = e, .replicas = c.replicas,
                                           .stage_time_s = model.stage_time_s(stage)});
                    e = c.from;
                    budget -= r;
                }
                std::reverse(plan.stages.begin(), plan.stages.end());
            }
        }
    }
}

/// The size of the recurrence, as doubles (no overflow): the suffix form keeps U (n + 1)
/// (D + 1) cells and makes at most U n^2 D / 2 evaluations; the prefix form keeps (U + 1)
/// (n + 1) (D + 1) per stage count and makes at most U^2 n^2 D^2 / 2.
struct dp_size {
    double cells = 0.0;
    double evaluations = 0.0;
};

template <stage_cost_model Model>
[[nodiscard]] dp_size pipeline_dp_size(std::size_t n, std::int32_t max_stages, std::int32_t max_devices) {
    const double u = max_stages, nd = static_cast<double>(n), d = max_devices;
    const bool suffix = remaining_stages_cost_model<Model>;
    return {.cells = (u + 1.0) * (nd + 1.0) * (d + 1.0),
            .evaluations = suffix ? u * nd * nd * d / 2.0 : u * u * nd * nd * d * d / 2.0};
}

/// Budgets are nested: a larger one keeps the smaller one's plan unless it finds a faster one.
inline void pipeline_dp_nest_budgets(std::vector<pipeline_dp_plan>& plans) {
    for (std::size_t d = 1; d < plans.size(); ++d)
        if (!(plans[d].time_s < plans[d - 1].time_s)) plans[d] = plans[d - 1];
}

// ---- The results: every status, reason and bound pipeline_dp_partition() reports is set here.

/// The recurrence is over the budget: nothing computed.
[[nodiscard]] inline pipeline_dp_result pipeline_dp_over_budget(std::size_t n, const pipeline_dp_options& options,
                                                                const dp_size& size) {
    pipeline_dp_result result;
    result.status = solve_status::no_plan_found;
    const auto over = [](double need, std::int64_t limit) { return limit > 0 && need > static_cast<double>(limit); };
    result.limit = over(size.cells, options.budget.max_nodes) ? search_limit::nodes : search_limit::evaluations;
    result.reason = "the partition of " + std::to_string(n) + " states on " + std::to_string(options.max_devices) +
                    " devices needs up to " + detail::format_number(size.cells) + " cells and " +
                    detail::format_number(size.evaluations) + " stage evaluations, over the budget (" +
                    std::to_string(options.budget.max_nodes) + " nodes, " +
                    std::to_string(options.budget.max_evaluations) + " evaluations)";
    return result;
}

/// The plan on the most devices, if any; else the reason there is none.
inline void pipeline_dp_conclude(pipeline_dp_result& result, std::vector<pipeline_dp_plan>& plans, std::int32_t max_stages,
                                 const pipeline_dp_options& options) {
    if (!std::isfinite(plans.back().time_s)) {
        result.status = solve_status::infeasible;
        result.reason = "no pipeline of at most " + std::to_string(max_stages) + " stages on at most " +
                        std::to_string(options.max_devices) + " devices fits the model's constraints (device memory)";
        return;
    }
    result.status = solve_status::optimal;
    result.objective_value = result.bound = plans.back().time_s;
    result.plan = std::move(plans.back());
}

}  // namespace detail

/// The best pipeline for every device budget (the header comment). Throws invalid_input for bad
/// options or a model with no states; a budget on which no pipeline fits has no by_devices entry,
/// and status is infeasible (with the reason) when no budget has a plan. The planner's entry is
/// solve(pipeline_dp_request, model) in solve/pipeline_plan/solve.hpp.
template <stage_cost_model Model>
[[nodiscard]] pipeline_dp_result pipeline_dp_partition(const Model& model, const pipeline_dp_options& options) {
    options.validate();
    const std::size_t n = model.num_states();
    if (n == 0) throw invalid_input("model.num_states()", "0", "at least one state");
    const auto state_limit = static_cast<std::int32_t>(std::min<std::size_t>(n, static_cast<std::size_t>(options.max_devices)));
    const std::int32_t max_stages = options.max_stages == 0 ? state_limit : std::min(options.max_stages, state_limit);
    const detail::dp_size size = detail::pipeline_dp_size<Model>(n, max_stages, options.max_devices);
    const auto over = [](double need, std::int64_t limit) { return limit > 0 && need > static_cast<double>(limit); };
    if (over(size.cells, options.budget.max_nodes) || over(size.evaluations, options.budget.max_evaluations))
        return detail::pipeline_dp_over_budget(n, options, size);
    pipeline_dp_result result;
    std::vector<pipeline_dp_plan> plans(static_cast<std::size_t>(options.max_devices));
    const auto start = std::chrono::steady_clock::now();
    if constexpr (remaining_stages_cost_model<Model>)
        detail::pipeline_dp_suffix(model, n, options.max_devices, max_stages, plans, result.counters.evaluations);
    else
        detail::pipeline_dp_prefix(model, n, options.max_devices, max_stages, plans, result.counters.evaluations);
    detail::pipeline_dp_nest_budgets(plans);
    result.details.by_devices.reserve(plans.size());
    for (const pipeline_dp_plan& plan : plans)
        result.details.by_devices.push_back(std::isfinite(plan.time_s) ? std::optional<pipeline_dp_plan>(plan) : std::nullopt);
    result.counters.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    detail::pipeline_dp_conclude(result, plans, max_stages, options);
    return result;
}

}  // namespace dnnplan
