#pragma once
// spotDNN's planner with preemptions (solve/spot_provision/solve.hpp's models): a preemption process
// per instance type and a time for a replacement to be ready; the answer is the cheapest mix the
// planner finds whose probability of reaching the target loss by the deadline is at least q.
//
// Asynchronous training does not stop when a worker is lost: the cluster trains on with the
// workers it has (spotDNN, eq. (2) over the live ones) while the lost one is replaced. So a mix's
// training time under preemptions is the time its live workers take to make the iterations the
// planned mix needs (eq. (3) at the planned mix: the loss model's iterations), and its cost is
// what the live instances are billed (eq. (11) per instance, from its addition to its removal).
// Both are simulated on `samples` realisations of the processes (seeded).
//
// The search: the exact planner for a deadline D' (first D), then the simulation of its plan; while
// P(T <= D) < q, D' shrinks by D / T_q (T_q: the simulated q-quantile of T) and the planner runs
// again; once a plan meets q, D' is bisected between the largest deadline that missed and the
// smallest that met, for a cheaper plan that still meets q; max_tightenings runs after the first
// in all. The cheapest plan met with P >= q is the answer (status feasible: the search over D' is
// a heuristic and the probabilities are estimates); none: infeasible, with the best probability
// reached. docs/solvers/spot_provision.md, "Preemptions".

#include <dnnplan/preemption/sampling.hpp>
#include <dnnplan/solve/spot_provision/solve.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace dnnplan {

struct spot_preemption_options {
    /// A preemption process per catalog instance type, by name; a type without one is never preempted.
    std::map<std::string, preemption_model, std::less<>> per_type{};
    double probability = 0.9;            ///< q in (0, 1]
    std::int32_t samples = 200;          ///< realisations (seeds 1..samples; a trace: start times over it)
    std::int64_t instance_ready_ms = 0;  ///< an added worker trains after it (it is billed from its addition)
    std::int32_t max_tightenings = 12;   ///< planner runs after the first

    void validate(std::string_view path = "preemption") const {
        const std::string p = detail::field_prefix(path);
        if (!(probability > 0.0 && probability <= 1.0))
            throw invalid_input(p + "probability", detail::format_number(probability), "a probability in (0, 1]");
        detail::require_at_least(p + "samples", samples, 1);
        detail::require_at_least(p + "instance_ready_ms", instance_ready_ms, 0);
        detail::require_at_least(p + "max_tightenings", max_tightenings, 0);
        for (const auto& [name, model] : per_type) detail::sampling::validate(model, p + "per_type." + name);
    }
};

struct spot_resilience_request {
    spot_request spot{};
    spot_preemption_options preemption{};

    void validate(std::string_view path = "") const {
        spot.validate(path);
        preemption.validate(detail::field_prefix(path) + "preemption");
        for (const auto& [name, model] : preemption.per_type) {
            const auto& types = spot.problem.catalog.instances;
            if (std::none_of(types.begin(), types.end(), [&](const instance_type& t) { return t.name == name; }))
                throw invalid_input(detail::field_prefix(path) + "preemption.per_type." + name, name, "an instance type of the catalog");
        }
    }
};

struct spot_resilience_details {
    double p_meet_deadline = 0.0;          ///< of the plan: P(T <= deadline) under the processes
    double p_error = 0.0;                  ///< its 95% half width
    std::optional<double> expected_training_time_s{};  ///< none: some runs do not finish within 3 deadlines
    estimate_interval training_time_s{};   ///< 95% interval
    std::optional<double> expected_cost_usd{};
    estimate_interval cost_usd{};
    double planned_deadline_s = 0.0;       ///< the deadline the plan was planned for (<= the goal's)
    std::int32_t planner_runs = 0;
    double best_probability = 0.0;         ///< the highest P of any plan simulated
    friend bool operator==(const spot_resilience_details&, const spot_resilience_details&) = default;
};

using spot_resilience_result = solve_result<spot_plan, spot_resilience_details>;

namespace detail::spot_resilience {

struct outcome {
    double time_s = 0.0;  // +inf: not done within the horizon
    double cost_usd = 0.0;
};

/// One realisation of a mix: the live workers' iterations accumulated over time until `iterations`.
template <asynchronous_throughput_model Throughput>
[[nodiscard]] outcome simulate_mix(const Throughput& throughput, const std::vector<std::int32_t>& counts,
                                   const std::vector<double>& usd_per_h, double fixed_usd_per_h,
                                   const std::vector<const preemption_model*>& processes, double iterations,
                                   std::int64_t horizon_ms, std::int64_t deadline_ms, std::int64_t ready_ms, std::int32_t k,
                                   std::int32_t samples) {
    // Changes: (time, type, billed +-1, working +-1).
    std::vector<std::tuple<std::int64_t, std::size_t, int, int>> changes;
    for (std::size_t j = 0; j < counts.size(); ++j) {
        if (counts[j] == 0) continue;
        instance_trace events;
        if (processes[j]) {
            events = sampling::realisation(*processes[j], counts[j], horizon_ms, deadline_ms, k, samples);
        } else {
            for (std::int32_t i = 0; i < counts[j]; ++i) events.events.push_back({0, instance_event_kind::add, "w" + std::to_string(i)});
        }
        std::map<std::string, std::int64_t, std::less<>> added;
        for (const instance_event& e : events.events) {
            if (e.kind == instance_event_kind::add) {
                added[e.node] = e.time_ms;
                changes.emplace_back(e.time_ms, j, 1, 0);
                changes.emplace_back(e.time_ms + ready_ms, j, 0, 1);
            } else {
                const std::int64_t at = added.at(e.node);
                added.erase(e.node);
                changes.emplace_back(e.time_ms, j, -1, 0);
                if (at + ready_ms <= e.time_ms) {
                    changes.emplace_back(e.time_ms, j, 0, -1);
                } else {  // lost before it was ready: it never worked. One "ready" change goes,
                          // not every identical one: its twins added at the same time still work.
                    const auto ready = std::find(changes.begin(), changes.end(),
                                                 std::tuple<std::int64_t, std::size_t, int, int>{at + ready_ms, j, 0, 1});
                    changes.erase(ready);
                }
            }
        }
    }
    std::sort(changes.begin(), changes.end());
    std::vector<std::int32_t> billed(counts.size(), 0), working(counts.size(), 0);
    double done = 0.0, usd = 0.0;
    std::int64_t now = 0;
    const auto advance = [&](double until_s) -> std::optional<double> {  // the time the work completes, if before until_s
        const double rate = asp_aggregate(throughput, std::span<const std::int32_t>(working)).iterations_per_s;
        double price = fixed_usd_per_h;
        for (std::size_t j = 0; j < counts.size(); ++j) price += static_cast<double>(billed[j]) * usd_per_h[j];
        const double from_s = static_cast<double>(now) / 1000.0;
        if (rate > 0.0 && std::isfinite(rate) && done + rate * (until_s - from_s) >= iterations) {
            const double end_s = from_s + (iterations - done) / rate;
            usd += price * (end_s - from_s) / 3600.0;
            return end_s;
        }
        if (std::isfinite(until_s)) {
            done += rate > 0.0 && std::isfinite(rate) ? rate * (until_s - from_s) : 0.0;
            usd += price * (until_s - from_s) / 3600.0;
        }
        return std::nullopt;
    };
    for (const auto& [t, j, db, dw] : changes) {
        if (t > now) {
            if (const auto end = advance(static_cast<double>(t) / 1000.0)) return {*end, usd};
            now = t;
        }
        billed[j] += db;
        working[j] += dw;
    }
    const auto end = advance(std::numeric_limits<double>::infinity());
    if (end && *end <= static_cast<double>(horizon_ms) / 1000.0) return {*end, usd};
    return {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
}

}  // namespace detail::spot_resilience

/// The cheapest mix found whose P(T <= deadline) >= q under the per-type preemption processes
/// (see the header comment). Throws invalid_input for a bad request; every expected outcome is a
/// status.
[[nodiscard]] inline spot_resilience_result solve(const spot_resilience_request& request) {
    namespace ds = detail::spot_resilience;
    const auto start = std::chrono::steady_clock::now();
    request.validate();
    const spotdnn_setup setup = make_spotdnn_setup(request.spot);
    const auto& catalog = request.spot.problem.catalog;
    const spot_preemption_options& pre = request.preemption;
    const double deadline_s = request.spot.problem.goals.deadline_s;
    const auto deadline_ms = static_cast<std::int64_t>(std::ceil(deadline_s * 1000.0));
    const std::int64_t horizon_ms = 3 * deadline_ms;
    std::vector<const preemption_model*> processes;
    std::vector<double> usd_per_h;
    for (const std::size_t i : setup.catalog_index) {
        const auto it = pre.per_type.find(catalog.instances[i].name);
        processes.push_back(it == pre.per_type.end() ? nullptr : &it->second);
        usd_per_h.push_back(setup.provisioner.cost.type_usd_per_h(processes.size() - 1));
    }
    const double fixed = setup.provisioner.cost.fixed_usd_per_h();

    spot_resilience_result result;
    spot_request planned = request.spot;
    std::optional<std::pair<spot_plan, spot_resilience_details>> best;
    double best_probability = 0.0;
    std::int32_t runs = 0;
    std::string last_reason;
    std::optional<double> met_at, missed_at;  // the smallest planned deadline that met q, the largest that missed
    for (std::int32_t round = 0; round <= pre.max_tightenings; ++round) {
        const spot_result r = solve(planned);
        ++runs;
        result.counters.nodes += r.counters.nodes;
        result.counters.evaluations += r.counters.evaluations;
        if (!r.plan) {
            last_reason = r.reason;
            break;
        }
        std::vector<std::int32_t> counts;
        for (const std::size_t i : setup.catalog_index) counts.push_back(r.plan->counts[i].count);
        std::vector<double> times, costs;
        for (std::int32_t k = 0; k < pre.samples; ++k) {
            const auto o = ds::simulate_mix(setup.provisioner.throughput, counts, usd_per_h, fixed, processes,
                                            r.plan->prediction.normalized_iterations, horizon_ms, deadline_ms,
                                            pre.instance_ready_ms, k, pre.samples);
            times.push_back(o.time_s);
            costs.push_back(o.cost_usd);
        }
        const sample_summary summary = detail::sampling::summarise(times, costs, deadline_s);
        spot_resilience_details d{.p_meet_deadline = summary.p_meet_deadline,
                                  .p_error = summary.p_error,
                                  .expected_training_time_s = summary.expected_time,
                                  .training_time_s = summary.time,
                                  .expected_cost_usd = summary.expected_cost,
                                  .cost_usd = summary.cost,
                                  .planned_deadline_s = planned.problem.goals.deadline_s};
        best_probability = std::max(best_probability, d.p_meet_deadline);
        if (d.p_meet_deadline >= pre.probability && d.expected_cost_usd &&
            (!best || *d.expected_cost_usd < *best->second.expected_cost_usd))
            best.emplace(*r.plan, d);
        const double tried = planned.problem.goals.deadline_s;
        if (d.p_meet_deadline >= pre.probability) {
            met_at = tried;
        } else {
            missed_at = tried;
        }
        if (met_at) {
            // A plan meets q: look between the largest deadline that missed and the smallest that
            // met for a cheaper one (bisection; the planner's cost falls as its deadline grows).
            if (!missed_at || *met_at >= *missed_at || *missed_at - *met_at <= 1e-3 * deadline_s) break;
            planned.problem.goals.deadline_s = 0.5 * (*met_at + *missed_at);
        } else {
            // Shrink the planned deadline by the ratio of the goal to the simulated q-quantile.
            std::sort(times.begin(), times.end());
            const std::optional<double> t_q = detail::sampling::quantile(times, pre.probability);  // none: beyond the horizon
            const double factor = t_q ? std::min(0.95, deadline_s / *t_q) : 0.5;
            planned.problem.goals.deadline_s *= factor;
        }
    }
    result.counters.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (best) {
        result.status = solve_status::feasible;
        result.plan = best->first;
        result.details = best->second;
        result.objective_value = best->second.expected_cost_usd;
        result.reason = "P(T <= deadline) = " + detail::sampling::format_probability(best->second.p_meet_deadline) +
                        " (+-" + detail::sampling::format_probability(best->second.p_error) + ", " +
                        std::to_string(pre.samples) + " simulated runs) with the plan for a deadline of " +
                        detail::format_number(best->second.planned_deadline_s) + " s";
    } else {
        result.status = solve_status::infeasible;
        result.reason = "no plan found reaches P(T <= deadline) = " + detail::format_number(pre.probability) +
                        "; the best reached " + detail::sampling::format_probability(best_probability) +
                        (last_reason.empty() ? "" : "; " + last_reason);
    }
    result.details.planner_runs = runs;
    result.details.best_probability = best_probability;
    return result;
}

}  // namespace dnnplan
