#pragma once
// The runtime deadline policy's entries: simulate a policy on windows of a market's traces, compare
// every policy against the hindsight optimum on the same windows, and decide one tick for a
// scheduler that calls it as the job runs (docs/solvers/deadline_policy.md).

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/runtime/adaptive.hpp>
#include <dnnplan/solve/deadline_policy/observation.hpp>
#include <dnnplan/solve/deadline_policy/optimal.hpp>
#include <dnnplan/runtime/policies.hpp>
#include <dnnplan/runtime/deadline_problem.hpp>
#include <dnnplan/runtime/simulate.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace dnnplan {

/// Jobs started at each of `start_ticks` of the market's traces, run by one policy.
struct deadline_simulation {
    deadline_market market{};
    deadline_job job{};
    std::vector<std::size_t> start_ticks{};
    deadline_policy_kind policy = deadline_policy_kind::standard;
    adaptive_deadline_options options{};  ///< the default policy's
    /// Windows compared at once (threads the library starts only when asked: 1, none).
    std::int32_t threads = 1;

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        market.validate(p + "market");
        job.validate(p + "job");
        options.validate(p + "options");
        detail::require_at_least(p + "threads", threads, 1);
        if (start_ticks.empty()) throw invalid_input(p + "start_ticks", "[]", "at least one start tick");
        for (std::size_t k = 0; k < start_ticks.size(); ++k)
            (void)window_ticks(market, job, start_ticks[k], p + "start_ticks[" + std::to_string(k) + "]");
    }
};

namespace detail::deadline {

/// One window under `kind`; the optimum's when it exists, else on-demand's (the fastest: it cannot
/// meet the deadline either).
[[nodiscard]] inline deadline_outcome run_window(const deadline_market& m, const deadline_job& job, std::size_t start,
                                                 deadline_policy_kind kind, const adaptive_deadline_options& options) {
    switch (kind) {
        case deadline_policy_kind::standard: {
            adaptive_deadline_policy policy(options);
            return simulate_window(m, job, start, policy);
        }
        case deadline_policy_kind::greedy: {
            greedy_policy policy;
            return simulate_window(m, job, start, policy);
        }
        case deadline_policy_kind::uniform_progress: {
            uniform_progress_policy policy;
            return simulate_window(m, job, start, policy);
        }
        case deadline_policy_kind::optimal: {
            hindsight_dp dp(m, job, start);
            if (auto best = dp.solve()) return best->outcome;
            break;
        }
        case deadline_policy_kind::on_demand: break;
    }
    on_demand_policy policy;
    return simulate_window(m, job, start, policy);
}

}  // namespace detail::deadline

/// Every window of `request` under its policy, in the order of its start ticks. Throws
/// invalid_input for bad input.
[[nodiscard]] inline std::vector<deadline_outcome> simulate(const deadline_simulation& request) {
    request.validate();
    std::vector<deadline_outcome> out;
    out.reserve(request.start_ticks.size());
    for (const std::size_t s : request.start_ticks)
        out.push_back(detail::deadline::run_window(request.market, request.job, s, request.policy, request.options));
    return out;
}

/// What one policy did over the windows of a comparison.
struct deadline_policy_summary {
    deadline_policy_kind policy = deadline_policy_kind::standard;
    double mean_cost_usd = 0.0;
    double mean_ratio = 0.0;  ///< cost / the optimum's, over the windows the optimum can meet
    double p90_ratio = 0.0;
    std::int64_t missed = 0;  ///< deadlines missed (where on-demand from the start meets them)
    double mean_spot_h = 0.0;
    std::vector<double> ratios{};  ///< per window with an optimum, in the order of the start ticks
};

struct deadline_comparison {
    std::vector<deadline_policy_summary> policies{};  ///< default, on_demand, greedy, uniform_progress, optimal
    std::int64_t windows = 0;
    std::int64_t infeasible_windows = 0;  ///< not even on-demand from the start meets the deadline: left out
};

/// The policies compare() reports, in its order.
inline constexpr std::array<deadline_policy_kind, 5> compared_policies{
    deadline_policy_kind::standard, deadline_policy_kind::on_demand, deadline_policy_kind::greedy,
    deadline_policy_kind::uniform_progress, deadline_policy_kind::optimal};

namespace detail::deadline {

/// Every policy on window w (the optimum's first: the others' ratios are to it).
inline void compare_window(const deadline_simulation& r, std::size_t w, std::vector<std::array<deadline_outcome, 5>>& out,
                           std::vector<char>& feasible) {
    const std::size_t s = r.start_ticks[w];
    hindsight_dp dp(r.market, r.job, s);
    const std::optional<deadline_optimum> best = dp.solve();
    feasible[w] = best.has_value();
    for (std::size_t k = 0; k < compared_policies.size(); ++k)
        out[w][k] = compared_policies[k] == deadline_policy_kind::optimal && best ? best->outcome
                                                                               : run_window(r.market, r.job, s, compared_policies[k], r.options);
}

/// The summary of policy k over the windows the optimum can meet.
[[nodiscard]] inline deadline_policy_summary summarise_policy(std::size_t k, const std::vector<std::array<deadline_outcome, 5>>& runs,
                                                              const std::vector<char>& feasible) {
    deadline_policy_summary out{.policy = compared_policies[k]};
    double cost = 0.0, spot_h = 0.0;
    for (std::size_t w = 0; w < runs.size(); ++w) {
        if (!feasible[w]) continue;
        const deadline_outcome& o = runs[w][k];
        cost += o.cost_usd;
        spot_h += o.spot_s / 3600.0;
        out.missed += o.met ? 0 : 1;
        out.ratios.push_back(o.cost_usd / runs[w][compared_policies.size() - 1].cost_usd);
    }
    if (out.ratios.empty()) return out;
    const auto n = static_cast<double>(out.ratios.size());
    out.mean_cost_usd = cost / n;
    out.mean_spot_h = spot_h / n;
    double sum = 0.0;
    for (const double x : out.ratios) sum += x;
    out.mean_ratio = sum / n;
    std::vector<double> sorted = out.ratios;
    std::sort(sorted.begin(), sorted.end());
    out.p90_ratio = sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(std::ceil(0.9 * n)) - 1)];  // nearest rank
    return out;
}

}  // namespace detail::deadline

/// Every policy on every window of `request` (its policy field is not read), against the
/// hindsight optimum of each window: per policy the mean cost, cost / optimum (mean and 90th
/// percentile, nearest rank), the deadlines missed and the mean spot hours, over the windows where
/// on-demand from the start meets the deadline (the others are counted, and left out). With
/// request.threads > 1 the windows are shared among that many threads; the figures are the same.
/// progress(done, windows), when given, is called on this thread after each window it compares,
/// with the windows done on every thread, and once more at the end with every window done.
[[nodiscard]] inline deadline_comparison compare(const deadline_simulation& request, const std::function<void(std::int64_t, std::int64_t)>& progress) {
    request.validate();
    const std::size_t n = request.start_ticks.size();
    std::vector<std::array<deadline_outcome, 5>> runs(n);
    std::vector<char> feasible(n, 0);
    const std::size_t threads = std::min(static_cast<std::size_t>(request.threads), n);
    std::atomic<std::int64_t> done{0};
    const auto work = [&](std::size_t first) {
        for (std::size_t w = first; w < n; w += threads) {
            detail::deadline::compare_window(request, w, runs, feasible);
            const std::int64_t d = ++done;
            if (first == 0 && progress && d < static_cast<std::int64_t>(n)) progress(d, static_cast<std::int64_t>(n));
        }
    };
    std::exception_ptr failure;
    std::mutex failure_lock;
    {
        // jthreads: joined on every way out of this block, an exception of work(0) or of a
        // thread's start included (std::thread would terminate the program).
        std::vector<std::jthread> pool;
        for (std::size_t t = 1; t < threads; ++t)
            pool.emplace_back([&, t] {
                try {
                    work(t);
                } catch (...) {
                    const std::lock_guard lock(failure_lock);
                    failure = std::current_exception();
                }
            });
        work(0);
    }
    if (failure) std::rethrow_exception(failure);
    if (progress) progress(static_cast<std::int64_t>(n), static_cast<std::int64_t>(n));
    deadline_comparison out{.windows = static_cast<std::int64_t>(n)};
    for (const char f : feasible) out.infeasible_windows += f ? 0 : 1;
    for (std::size_t k = 0; k < compared_policies.size(); ++k) out.policies.push_back(detail::deadline::summarise_policy(k, runs, feasible));
    return out;
}

/// The same, without progress reports.
[[nodiscard]] inline deadline_comparison compare(const deadline_simulation& request) { return compare(request, {}); }

// ---- one decision, for a scheduler --------------------------------------------------------------

/// What a decision implies beyond the action: when and at what cost the job would finish were it to
/// run on-demand from now on (the safety net's way out, the most the rest can take).
struct deadline_decision_details {
    double on_demand_finish_s = 0.0;  ///< from the job's start
    double on_demand_cost_usd = 0.0;  ///< the rest on-demand in the checkpoint's region (no egress)
    friend bool operator==(const deadline_decision_details&, const deadline_decision_details&) = default;
};

/// status feasible: the decision (plan), objective_value the USD this tick bills (with the egress
/// of a move); infeasible: not even on-demand from now meets the deadline, no plan, and best_effort
/// the fastest way on (on-demand in the checkpoint's region). Figures exact.
using deadline_result = solve_result<deadline_decision, deadline_decision_details>;

namespace detail::deadline {

/// The observed state after the tick model's step 3, as the simulator hands it to a policy: a spot
/// run whose region has no spot at the last observed tick is preempted (now waiting).
[[nodiscard]] inline deadline_state after_preemption(const deadline_observation& o) {
    deadline_state s = o.state;
    if (s.mode == deadline_action::spot && o.market.regions[static_cast<std::size_t>(s.region)].available.back() < o.job.instances)
        s.mode = deadline_action::wait;
    return s;
}

/// The decision of a fresh policy of `kind` at the observation's tick (its history rebuilt from
/// every observed tick).
[[nodiscard]] inline deadline_decision decide_with(deadline_policy_kind kind, const deadline_view& v) {
    switch (kind) {
        case deadline_policy_kind::greedy: return greedy_policy{}.decide(v);
        case deadline_policy_kind::uniform_progress: return uniform_progress_policy{}.decide(v);
        case deadline_policy_kind::on_demand: return on_demand_policy{}.decide(v);
        default: return adaptive_deadline_policy{}.decide(v);
    }
}

}  // namespace detail::deadline

/// One decision at the last observed tick (the tick model's step 4). A spot run the last tick no
/// longer carries is preempted first (step 3), so the state may be given before or after that
/// check. Throws invalid_input for a bad observation.
[[nodiscard]] inline deadline_result solve(const deadline_observation& observation) {
    observation.validate();
    const stopwatch clock;
    const deadline_market& m = observation.market;
    const deadline_job& job = observation.job;
    const deadline_state s = detail::deadline::after_preemption(observation);
    const deadline_view view(m, job, observation.start_tick, observation.tick(), s);
    deadline_result out;
    const std::int32_t home = s.region >= 0 ? s.region : 0;
    // Ticks to finish with `pending` changeover left (steps 1 and 2: done at <= 1e-3 s of work).
    const auto finish_with = [&](double pending) {
        return view.elapsed_s() + std::max(std::ceil((s.work_left_s + pending - deadline_work_tolerance_s) / m.gap_s()), 0.0) * m.gap_s();
    };
    const double on_demand_finish = finish_with(s.mode == deadline_action::on_demand ? s.changeover_left_s : job.changeover_s);
    out.details = {.on_demand_finish_s = on_demand_finish,
                   .on_demand_cost_usd = (on_demand_finish - view.elapsed_s()) / 3600.0 * job.instances *
                                         view.on_demand_usd_per_h(static_cast<std::size_t>(home))};
    // Infeasible only when even the best case misses: the current run (spot or on-demand) going on
    // to the end, or from waiting a run started now.
    const double best_finish = finish_with(s.mode == deadline_action::wait ? job.changeover_s : s.changeover_left_s);
    if (best_finish > job.deadline_s && s.work_left_s > deadline_work_tolerance_s) {
        out.status = solve_status::infeasible;
        out.best_effort = deadline_decision{s.mode == deadline_action::spot ? deadline_action::spot : deadline_action::on_demand, home,
                                            "the fastest way on: the current run, or on-demand"};
        out.reason = "even the fastest way on finishes at " + detail::format_number(best_finish) + " s, after the deadline of " +
                     detail::format_number(job.deadline_s) + " s";
    } else {
        const deadline_decision d = detail::deadline::decide_with(observation.policy, view);
        detail::deadline::check_decision(d, view);
        deadline_state after = s;
        deadline_outcome billed;
        detail::deadline::start_if_new(after, d, job, billed);
        detail::deadline::bill(after, m, job, view.now(), billed);
        out.status = solve_status::feasible;
        out.plan = d;
        out.objective_value = billed.cost_usd;
        out.reason = std::string(d.why);
    }
    out.counters.evaluations = 1;
    out.counters.elapsed_s = clock.elapsed_s();
    return out;
}

}  // namespace dnnplan
