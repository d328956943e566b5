#pragma once
// Sampling a preemption process, and what the samples estimate: the processes a planner's request
// holds (preemption_process_variant), their realisations for simulations, and the figures of a
// set of simulated outcomes with their intervals. Shared by the planners that sample preemptions
// (solve/resilience_plan/solve.hpp, solve/resilience_plan/checkpoint.hpp,
// solve/spot_provision/preemptions.hpp).

#include <dnnplan/core/status.hpp>
#include <dnnplan/preemption/bamboo_random.hpp>
#include <dnnplan/preemption/events.hpp>
#include <dnnplan/preemption/poisson_preemption.hpp>
#include <dnnplan/preemption/process.hpp>
#include <dnnplan/preemption/trace_replay.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace dnnplan {

/// How an offer's spot instances are preempted: a Poisson rate with a replacement delay
/// (exponential lifetimes, e.g. a hazard fitted to lifetimes), a recorded trace, Bamboo's random
/// mode (preemption/poisson_preemption.hpp, preemption/trace_replay.hpp, preemption/bamboo_random.hpp), or a process of the caller's (any
/// type that satisfies preemption_process, wrapped in any_preemption_process).
using preemption_process_variant = std::variant<poisson_preemption, trace_replay, bamboo_random_process, any_preemption_process>;

/// A two-sided interval; an end that is none lies beyond the simulated horizon (only a lower
/// bound on it is known: the horizon).
struct estimate_interval {
    std::optional<double> lower{};
    std::optional<double> upper{};
    friend bool operator==(const estimate_interval&, const estimate_interval&) = default;
};

/// What simulated outcomes estimate (sampling.hpp summarise).
struct sample_summary {
    double p_meet_deadline = 0.0;  ///< the fraction done by the deadline
    double p_error = 0.0;          ///< its 95% half width (normal approximation, at least Wilson's at 0 or 1)
    std::optional<double> expected_time{}, expected_cost{};  ///< none: some outcomes beyond the horizon
    /// The 95% intervals of the two means, mean +- 1.96 s / sqrt(n) (s: the sample standard
    /// deviation; normal approximation), with n = the outcomes; none where the mean is none.
    std::optional<figure_estimate> expected_time_estimate{}, expected_cost_estimate{};
    estimate_interval time{}, cost{};  ///< the 2.5% and 97.5% quantiles of the outcomes
};

namespace detail::sampling {

/// The checks of the alternatives that have them (a Poisson process's rate and delay, Bamboo's
/// random mode's options), named under `path`; a trace was checked when it was built, and a
/// process of the caller's own checks itself.
inline void validate(const preemption_process_variant& model, const std::string& path) {
    if (const auto* poisson = std::get_if<poisson_preemption>(&model)) poisson->validate(path);
    if (const auto* random = std::get_if<bamboo_random_process>(&model)) random->options.validate(path);
}

/// The trace from `offset_ms` on, the instances live then added at 0 (in the order they were
/// added): one start time of a recorded trace.
[[nodiscard]] inline instance_trace trace_window(const instance_trace& trace, std::int64_t offset_ms) {
    std::vector<const instance_event*> live;
    std::size_t k = 0;
    for (; k < trace.events.size() && trace.events[k].time_ms <= offset_ms; ++k) {
        const instance_event& e = trace.events[k];
        if (e.kind == instance_event_kind::add) live.push_back(&e);
        else std::erase_if(live, [&](const instance_event* x) { return x->node == e.node; });
    }
    instance_trace out;
    for (const instance_event* e : live) out.events.push_back({0, instance_event_kind::add, e->node});
    for (; k < trace.events.size(); ++k) {
        instance_event e = trace.events[k];
        e.time_ms -= offset_ms;
        out.events.push_back(std::move(e));
    }
    return out;
}

/// Realisation k of `samples` of an offer's preemptions for a pool of `capacity` instances.
[[nodiscard]] inline instance_trace realisation(const preemption_process_variant& model, std::int32_t capacity, std::int64_t horizon_ms,
                                                std::int64_t deadline_ms, std::int32_t k, std::int32_t samples) {
    if (const auto* trace = std::get_if<trace_replay>(&model)) {
        // Start times spread evenly over the part of the trace that leaves a deadline after it (all
        // at 0 when the trace is shorter). After the trace's end a window has no more events: the
        // instances then live stay (an optimistic tail, beyond the deadline when the trace covers it).
        const std::int64_t span = std::max<std::int64_t>(0, trace->end_ms() - deadline_ms);
        const std::int64_t offset = samples > 1 ? span * k / (samples - 1) : 0;
        const trace_replay window(trace_window(trace->trace(), offset));
        return window.events(capacity, horizon_ms, 0);
    }
    return std::visit([&](const auto& p) { return p.events(capacity, horizon_ms, static_cast<std::uint64_t>(k) + 1); }, model);
}

[[nodiscard]] inline double rate_of(const preemption_process_variant& model) {
    return std::visit([](const auto& p) { return static_cast<double>(p.preemptions_per_instance_h()); }, model);
}

[[nodiscard]] inline std::int64_t replacement_delay_ms(const preemption_process_variant& model) {
    if (const auto* poisson = std::get_if<poisson_preemption>(&model)) return poisson->replacement_delay_ms;
    return 0;
}

/// The q-quantile of sorted values with +inf for "beyond the horizon" (none then).
[[nodiscard]] inline std::optional<double> quantile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return std::nullopt;
    const auto at = static_cast<std::size_t>(std::min(std::floor(q * static_cast<double>(sorted.size())),
                                                      static_cast<double>(sorted.size() - 1)));
    return std::isfinite(sorted[at]) ? std::optional<double>(sorted[at]) : std::nullopt;
}

/// The 95% interval of the mean of `values` (all finite, at least one): mean +- 1.96 s / sqrt(n),
/// s the sample standard deviation (0 for one value), by the central limit theorem.
[[nodiscard]] inline figure_estimate mean_estimate(const std::vector<double>& values, double mean) {
    const auto n = static_cast<double>(values.size());
    double squares = 0.0;
    for (const double v : values) squares += (v - mean) * (v - mean);
    const double half = values.size() > 1 ? 1.96 * std::sqrt(squares / (n - 1.0) / n) : 0.0;
    return {.lower = mean - half, .upper = mean + half, .confidence_prob = 0.95,
            .samples = static_cast<std::int64_t>(values.size())};
}

/// The fraction of `times` at most `deadline` and its 95% half width: the normal approximation's,
/// at least that of one run in n (Wilson's score interval when every run or none meets it).
[[nodiscard]] inline std::pair<double, double> fraction_met(const std::vector<double>& times, double deadline) {
    const auto n = static_cast<double>(times.size());
    double met = 0.0;
    for (const double t : times)
        if (t <= deadline) met += 1.0;
    const double p = met / n;
    return {p, std::max(1.96 * std::sqrt(p * (1.0 - p) / n), 1.96 * 1.96 / (n + 1.96 * 1.96))};
}

/// Figures of simulated outcomes (times and costs, +inf: beyond the horizon): the fraction done
/// by `deadline` with its 95% half width, the means with their 95% intervals, and the 2.5% and
/// 97.5% quantiles.
[[nodiscard]] inline sample_summary summarise(std::vector<double> times, std::vector<double> costs, double deadline) {
    sample_summary c;
    const auto n = static_cast<double>(times.size());
    std::tie(c.p_meet_deadline, c.p_error) = fraction_met(times, deadline);
    double time_sum = 0.0, cost_sum = 0.0;
    bool all_finite = true;
    for (std::size_t i = 0; i < times.size(); ++i) {
        all_finite = all_finite && std::isfinite(times[i]) && std::isfinite(costs[i]);
        time_sum += times[i];
        cost_sum += costs[i];
    }
    if (all_finite) {
        c.expected_time = time_sum / n;
        c.expected_cost = cost_sum / n;
        c.expected_time_estimate = mean_estimate(times, *c.expected_time);
        c.expected_cost_estimate = mean_estimate(costs, *c.expected_cost);
    }
    std::sort(times.begin(), times.end());
    std::sort(costs.begin(), costs.end());
    c.time = {quantile(times, 0.025), quantile(times, 0.975)};
    c.cost = {quantile(costs, 0.025), quantile(costs, 0.975)};
    return c;
}

}  // namespace detail::sampling

}  // namespace dnnplan
