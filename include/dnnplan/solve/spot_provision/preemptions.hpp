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
// in all. The cheapest plan met with P >= q is the answer (status feasible with estimated figures:
// the search over D' is a heuristic and the probabilities are estimates); none: no_plan_found, with
// the plan of highest probability as best_effort. With on_demand_fallback the planned deadlines are
// scanned instead (fallback_scan_ratio). docs/solvers/spot_provision.md, "Preemptions".
//
// With on_demand_fallback the runs follow the runtime deadline policy's safety net (runtime/
// policies.hpp): on spot while the planned mix, requested on-demand now and ready after the
// ready time, would still finish the iterations left by the deadline; at the last such moment
// (f(x) = x + ready + (I - done(x)) / r_od reaching D, r_od the planned mix's speed) the spot
// instances are released and the mix runs on-demand. Releasing them then is conservative: they
// could train on until the on-demand ones are ready.

#include <dnnplan/core/detail/format.hpp>
#include <dnnplan/preemption/sampling.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/solve/spot_provision/solve.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace dnnplan {

struct spot_preemption_options {
    /// A preemption process per catalog instance type, by name; a type without one is never preempted.
    std::map<std::string, preemption_process_variant, std::less<>> per_type{};
    double probability = 0.9;            ///< q in (0, 1]
    std::int32_t samples = 200;          ///< realisations (seeds 1..samples; a trace: start times over it)
    std::int64_t instance_ready_ms = 0;  ///< an added worker trains after it (it is billed from its addition)
    std::int32_t max_tightenings = 12;   ///< planner runs after the first
    /// Run on spot and move the whole mix to on-demand at the last moment the on-demand mix still
    /// meets the deadline (the runtime deadline policy's safety net): a plan then meets the
    /// deadline in every run where its mix, on-demand and ready from the start, does.
    bool on_demand_fallback = false;

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

/// The simulated figures of the plan (without one, of best_effort).
struct spot_resilience_details {
    double p_meet_deadline = 0.0;          ///< P(T <= deadline) under the processes
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

/// A change of one type's instances: (time, type, billed +-1, working +-1).
using mix_change = std::tuple<std::int64_t, std::size_t, int, int>;

/// The changes of a mix's billed and working instances over realisation k of the processes (an
/// added instance works once ready_ms have passed), in time order.
[[nodiscard]] inline std::vector<mix_change> mix_changes(const std::vector<std::int32_t>& counts,
                                                         const std::vector<const preemption_process_variant*>& processes,
                                                         std::int64_t horizon_ms, std::int64_t deadline_ms, std::int64_t ready_ms,
                                                         std::int32_t k, std::int32_t samples) {
    std::vector<mix_change> changes;
    for (std::size_t j = 0; j < counts.size(); ++j) {
        if (counts[j] == 0) continue;
        instance_trace events;
        if (processes[j]) {
            events = sampling::realisation(*processes[j], counts[j], horizon_ms, deadline_ms, k, samples);
        } else {
            for (std::int32_t i = 0; i < counts[j]; ++i) {
                std::string node = "w";  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "w" + string
                node += std::to_string(i);
                events.events.push_back({0, instance_event_kind::add, std::move(node)});
            }
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
                    changes.erase(std::find(changes.begin(), changes.end(), mix_change{at + ready_ms, j, 0, 1}));
                }
            }
        }
    }
    std::sort(changes.begin(), changes.end());
    return changes;
}

/// The on-demand fallback (spot_preemption_options::on_demand_fallback): the whole planned mix
/// on-demand, ready ready_s after it is requested.
struct on_demand_fallback_terms {
    double iterations_per_s = 0.0;  ///< the planned mix's, none lost (eq. (2) of spotDNN)
    double usd_per_h = 0.0;         ///< the mix's on-demand price
    double deadline_s = 0.0;
    double ready_s = 0.0;
};

/// The last moment from now_s at which the on-demand mix still meets the deadline while spot runs
/// at `rate` (done iterations done): f(x) = x + ready + (I - done(x)) / r_od reaches D, f rising
/// at 1 - rate / r_od. A microsecond before it, so that rounding cannot carry the finish past the
/// deadline; now_s when even that is past; +inf when f does not rise (spot as fast as on-demand).
[[nodiscard]] inline double fallback_time_s(const on_demand_fallback_terms& f, double now_s, double done, double rate, double iterations) {
    const double slack_s = (f.deadline_s - 1e-6) - (now_s + f.ready_s + (iterations - done) / f.iterations_per_s);
    if (slack_s <= 0.0) return now_s;
    if (!(rate < f.iterations_per_s)) return std::numeric_limits<double>::infinity();
    return now_s + slack_s / (1.0 - rate / f.iterations_per_s);
}

/// One realisation of a mix: the live workers' iterations accumulated over time until
/// `iterations`; with a fallback, the spot instances are released at fallback_time_s and the
/// on-demand mix finishes the work once ready (the header comment).
template <asynchronous_throughput_model Throughput>
[[nodiscard]] outcome simulate_mix(const Throughput& throughput, const std::vector<std::int32_t>& counts,
                                   const std::vector<double>& usd_per_h, double fixed_usd_per_h,
                                   const std::vector<const preemption_process_variant*>& processes, double iterations,
                                   std::int64_t horizon_ms, std::int64_t deadline_ms, std::int64_t ready_ms, std::int32_t k,
                                   std::int32_t samples, const std::optional<on_demand_fallback_terms>& fallback = std::nullopt) {
    const std::vector<mix_change> changes = mix_changes(counts, processes, horizon_ms, deadline_ms, ready_ms, k, samples);
    std::vector<std::int32_t> billed(counts.size(), 0), working(counts.size(), 0);
    double done = 0.0, usd = 0.0, now_s = 0.0;
    const auto advance = [&](double until_s) -> std::optional<outcome> {  // the outcome, when the work ends before until_s
        const double rate = asp_aggregate(throughput, std::span<const std::int32_t>(working)).iterations_per_s;
        double price = fixed_usd_per_h;
        for (std::size_t j = 0; j < counts.size(); ++j) price += static_cast<double>(billed[j]) * usd_per_h[j];
        const double switch_s = fallback ? fallback_time_s(*fallback, now_s, done, rate, iterations) : std::numeric_limits<double>::infinity();
        const double stop_s = std::min(until_s, switch_s);
        if (rate > 0.0 && std::isfinite(rate) && done + rate * (stop_s - now_s) >= iterations) {
            const double end_s = now_s + (iterations - done) / rate;
            return outcome{end_s, usd + price * (end_s - now_s) / 3600.0};
        }
        if (std::isfinite(stop_s)) {
            done += rate > 0.0 && std::isfinite(rate) ? rate * (stop_s - now_s) : 0.0;
            usd += price * (stop_s - now_s) / 3600.0;
        }
        if (fallback && std::isfinite(switch_s) && switch_s <= until_s) {  // on-demand from switch_s: ready after ready_s, then the work left
            const double end_s = switch_s + fallback->ready_s + (iterations - done) / fallback->iterations_per_s;
            return outcome{end_s, usd + fallback->usd_per_h * (end_s - switch_s) / 3600.0};
        }
        now_s = until_s;
        return std::nullopt;
    };
    const auto within_horizon = [&](const outcome& o) {  // beyond it: T = cost = +inf
        return o.time_s <= static_cast<double>(horizon_ms) / 1000.0
                   ? o
                   : outcome{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    };
    for (const auto& [t, j, db, dw] : changes) {
        if (const double t_s = static_cast<double>(t) / 1000.0; t_s > now_s)
            if (const auto end = advance(t_s)) return within_horizon(*end);
        billed[j] += db;
        working[j] += dw;
    }
    const auto end = advance(std::numeric_limits<double>::infinity());
    return end ? within_horizon(*end) : outcome{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
}

/// The processes and prices of the planner's types (its type j is catalog type setup.catalog_index[j]).
struct mix_market {
    std::vector<const preemption_process_variant*> processes{};  ///< none: never preempted
    std::vector<double> usd_per_h{};
    std::vector<double> on_demand_usd_per_h{};  ///< the fallback's prices
    double fixed_usd_per_h = 0.0;
};

[[nodiscard]] inline mix_market market_of(const spotdnn_setup& setup, const spot_resilience_request& request) {
    mix_market m;
    const auto& catalog = request.spot.problem.catalog;
    for (const std::size_t i : setup.catalog_index) {
        const auto it = request.preemption.per_type.find(catalog.instances[i].name);
        m.processes.push_back(it == request.preemption.per_type.end() ? nullptr : &it->second);
        m.usd_per_h.push_back(setup.provisioner.cost.type_usd_per_h(m.processes.size() - 1));
        m.on_demand_usd_per_h.push_back(catalog.instances[i].on_demand_usd_per_h);
    }
    m.fixed_usd_per_h = setup.provisioner.cost.fixed_usd_per_h();
    return m;
}

/// A plan simulated on the realisations: its figures, its sorted times, and the 95% interval of
/// its expected cost.
struct simulated_plan {
    spot_resilience_details details{};
    std::vector<double> sorted_times{};
    std::optional<figure_estimate> cost_estimate{};
};

[[nodiscard]] inline simulated_plan simulate_plan(const spotdnn_setup& setup, const mix_market& market, const spot_plan& plan,
                                           const spot_resilience_request& request, double planned_deadline_s) {
    const spot_preemption_options& pre = request.preemption;
    const double deadline_s = request.spot.problem.goals.deadline_s;
    const auto deadline_ms = static_cast<std::int64_t>(std::ceil(deadline_s * 1000.0));
    const std::int64_t horizon_ms = 3 * deadline_ms;
    std::vector<std::int32_t> counts;
    for (const std::size_t i : setup.catalog_index) counts.push_back(plan.counts[i].count);
    std::optional<on_demand_fallback_terms> fallback;
    if (pre.on_demand_fallback) {
        fallback.emplace(on_demand_fallback_terms{
            .iterations_per_s = asp_aggregate(setup.provisioner.throughput, std::span<const std::int32_t>(counts)).iterations_per_s,
            .usd_per_h = market.fixed_usd_per_h,
            .deadline_s = deadline_s,
            .ready_s = static_cast<double>(pre.instance_ready_ms) / 1000.0});
        for (std::size_t j = 0; j < counts.size(); ++j) fallback->usd_per_h += static_cast<double>(counts[j]) * market.on_demand_usd_per_h[j];
    }
    std::vector<double> times, costs;
    for (std::int32_t k = 0; k < pre.samples; ++k) {
        const auto o = simulate_mix(setup.provisioner.throughput, counts, market.usd_per_h, market.fixed_usd_per_h, market.processes,
                                    plan.prediction.normalized_iterations, horizon_ms, deadline_ms, pre.instance_ready_ms, k,
                                    pre.samples, fallback);
        times.push_back(o.time_s);
        costs.push_back(o.cost_usd);
    }
    const sample_summary s = sampling::summarise(times, costs, deadline_s);
    std::sort(times.begin(), times.end());
    return {.details = {.p_meet_deadline = s.p_meet_deadline,
                        .p_error = s.p_error,
                        .expected_training_time_s = s.expected_time,
                        .training_time_s = s.time,
                        .expected_cost_usd = s.expected_cost,
                        .cost_usd = s.cost,
                        .planned_deadline_s = planned_deadline_s},
            .sorted_times = std::move(times),
            .cost_estimate = s.expected_cost_estimate};
}

/// The planned deadlines tried: while no plan meets q, D' shrinks by the ratio of the goal to the
/// simulated q-quantile; once one does, D' is bisected between the largest deadline that missed
/// and the smallest that met (the planner's cost falls as its deadline grows).
class deadline_search {
public:
    explicit deadline_search(double goal_s) : goal_s_(goal_s) {}

    /// The next D' after trying `tried` (its simulated times sorted); none: stop.
    [[nodiscard]] std::optional<double> next(double tried, bool met, const std::vector<double>& sorted_times, double q) {
        if (met) {
            met_at_ = tried;
            any_met_ = true;
        } else {
            missed_at_ = tried;
            any_missed_ = true;
        }
        if (any_met_) {
            if (!any_missed_ || met_at_ >= missed_at_ || missed_at_ - met_at_ <= 1e-3 * goal_s_) return std::nullopt;
            return 0.5 * (met_at_ + missed_at_);
        }
        const std::optional<double> t_q = sampling::quantile(sorted_times, q);  // none: beyond the horizon
        return tried * (t_q ? std::min(0.95, goal_s_ / *t_q) : 0.5);
    }

private:
    double goal_s_;
    double met_at_ = 0.0, missed_at_ = 0.0;  // the last (smallest) planned deadline that met q, the last (largest) that missed
    bool any_met_ = false, any_missed_ = false;
};

/// With the on-demand fallback a plan's probability does not guide the search (every mix that
/// meets the deadline without losses meets it in every run) and its expected cost need not fall
/// as its planned deadline grows (a tight plan moves to on-demand often): the planned deadlines
/// are scanned from the goal's down by this ratio, and the cheapest plan in expectation wins.
/// 2.5% steps: the default 12 runs after the first reach 0.74 D, past the planned deadlines of the
/// cheapest plans found on the bundled problems (0.95 D and 0.93 D), and a step is about what a
/// replacement's ready time and a lost worker cost a tight plan there.
inline constexpr double fallback_scan_ratio = 0.975;

/// The result from the best plan that met q, else the plan of highest probability as best_effort.
inline void conclude(spot_resilience_result& result, std::optional<std::pair<spot_plan, simulated_plan>> best,
                     std::optional<std::pair<spot_plan, simulated_plan>> likeliest, const spot_preemption_options& pre,
                     const std::string& last_reason) {
    if (best) {
        const spot_resilience_details& d = best->second.details;
        result.status = solve_status::feasible;
        result.figures = figure_kind::estimated;
        result.estimate = best->second.cost_estimate;
        result.objective_value = d.expected_cost_usd;
        result.reason = "P(T <= deadline) = " + detail::format_probability(d.p_meet_deadline) + " (+-" +
                        detail::format_probability(d.p_error) + ", " + std::to_string(pre.samples) +
                        " simulated runs) with the plan for a deadline of " + detail::format_number(d.planned_deadline_s) + " s";
        result.plan = std::move(best->first);
        result.details = std::move(best->second.details);
        return;
    }
    result.status = solve_status::no_plan_found;
    const double reached = likeliest ? likeliest->second.details.p_meet_deadline : 0.0;
    result.reason = "no plan found reaches P(T <= deadline) = " + detail::format_number(pre.probability) + "; the best reached " +
                    detail::format_probability(reached) + (likeliest ? " (best_effort; an estimate, which proves nothing)" : "") +
                    (last_reason.empty() ? "" : "; " + last_reason);
    if (likeliest) {
        result.best_effort = std::move(likeliest->first);
        result.details = std::move(likeliest->second.details);
    }
}

}  // namespace detail::spot_resilience

/// The cheapest mix found whose P(T <= deadline) >= q under the per-type preemption processes
/// (see the header comment). Throws invalid_input for a bad request; every expected outcome is a
/// status.
[[nodiscard]] inline spot_resilience_result solve(const spot_resilience_request& request) {
    namespace ds = detail::spot_resilience;
    const stopwatch clock;
    request.validate();
    const spotdnn_setup setup = make_spotdnn_setup(request.spot);
    const ds::mix_market market = ds::market_of(setup, request);
    const spot_preemption_options& pre = request.preemption;
    ds::deadline_search deadlines(request.spot.problem.goals.deadline_s);
    spot_resilience_result result;
    spot_request planned = request.spot;
    std::optional<std::pair<spot_plan, ds::simulated_plan>> best, likeliest;
    double best_probability = 0.0;
    std::int32_t runs = 0;
    std::string last_reason;
    for (std::int32_t round = 0; round <= pre.max_tightenings; ++round) {
        const spot_result r = solve(planned);
        ++runs;
        result.counters.nodes += r.counters.nodes;
        result.counters.evaluations += r.counters.evaluations;
        if (result.limit == search_limit::none) result.limit = r.limit;  // a planner run its budget cut short
        if (!r.plan) {
            last_reason = r.reason;
            break;
        }
        ds::simulated_plan sim = ds::simulate_plan(setup, market, *r.plan, request, planned.problem.goals.deadline_s);
        const spot_resilience_details& d = sim.details;
        const bool met = d.p_meet_deadline >= pre.probability;
        best_probability = std::max(best_probability, d.p_meet_deadline);
        const auto next = pre.on_demand_fallback ? std::optional<double>(planned.problem.goals.deadline_s * ds::fallback_scan_ratio)
                                                 : deadlines.next(planned.problem.goals.deadline_s, met, sim.sorted_times, pre.probability);
        if (met && d.expected_cost_usd && (!best || *d.expected_cost_usd < *best->second.details.expected_cost_usd))
            best.emplace(*r.plan, std::move(sim));
        else if (!likeliest || d.p_meet_deadline > likeliest->second.details.p_meet_deadline)
            likeliest.emplace(*r.plan, std::move(sim));
        if (!next) break;
        planned.problem.goals.deadline_s = *next;
    }
    ds::conclude(result, std::move(best), std::move(likeliest), pre, last_reason);
    result.details.planner_runs = runs;
    result.details.best_probability = best_probability;
    result.counters.elapsed_s = clock.elapsed_s();
    return result;
}

}  // namespace dnnplan
