#pragma once
// The resilience planner: for a job and a market of instance offers, each with its own preemption
// process, every strategy on every offer is evaluated and the cheapest expected cost with
// P(finish by the deadline) >= q wins (solve/resilience_plan/problem.hpp has the types):
// - on_demand: the model's on-demand layout (N instances, its step time) on on-demand instances;
//   no preemption, so the time is exact.
// - checkpoint_restart: the same layout on spot instances, any of the N lost interrupting the job,
//   at the rate N lambda (lambda: the process's preemptions per instance-hour), each restart costing
//   R plus an instance's time to be ready; the interval that maximises P(T <= D), and the exact
//   E[T] and P(T <= D) of preemption/checkpoint_restart.hpp (Poisson preemptions: for a trace or
//   Bamboo's random mode, at the process's mean rate).
// - redundant_computation: P pipelines of S spot instances (P S requested), simulated with
//   Bamboo's rules (preemption/bamboo_simulator.hpp) on `samples` realisations of the process.
// - spot_with_fallback: the same runs, but when the slack left falls to the on-demand time of the
//   remaining work (plus a checkpoint and a restart to hand over), the job moves to on-demand: the
//   deadline is kept by construction whenever on-demand alone keeps it, at the cost the runs give.
// Cost is what the instances are billed while the job holds them: spot per live instance from its
// addition (Bamboo's billing), on-demand per instance-hour. docs/solvers/resilience_plan.md.

#include <dnnplan/preemption/checkpoint_restart.hpp>
#include <dnnplan/solve/resilience_plan/problem.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dnnplan {

namespace detail::resilience {

/// A candidate's figures from simulated outcomes (hours, USD).
inline void apply(resilience_candidate& c, const sample_summary& s) {
    c.p_meet_deadline = s.p_meet_deadline;
    c.p_error = s.p_error;
    c.expected_h = s.expected_time;
    c.expected_usd = s.expected_cost;
    c.time_h = s.time;
    c.usd = s.cost;
}

/// `x` to `digits` significant digits, for the notes (the figures themselves keep every digit).
[[nodiscard]] inline std::string rounded(double x, int digits = 4) {
    if (x == 0.0 || !std::isfinite(x)) return detail::format_number(x);
    const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::abs(x)))));
    return detail::format_number(std::round(x * scale) / scale);
}

/// USD to the cent, for the notes.
[[nodiscard]] inline std::string cents(double usd) { return detail::format_number(std::round(usd * 100.0) / 100.0); }

/// The spot cost of a run up to `until_ms` (its price series integrated).
[[nodiscard]] inline double spot_cost_until(const bamboo_run& run, std::int64_t until_ms) {
    double usd = 0.0;
    for (std::size_t i = 0; i < run.prices.size(); ++i) {
        const std::int64_t from = run.prices[i].first;
        const std::int64_t to = i + 1 < run.prices.size() ? std::min(run.prices[i + 1].first, until_ms) : until_ms;
        if (to > from) usd += run.prices[i].second * static_cast<double>(to - from) / 3.6e6;
    }
    return usd;
}

struct job_figures {
    std::int64_t target_steps = 0;
    double on_demand_step_h = 0.0;   // one step of the on-demand layout on this offer
    double on_demand_h = 0.0;        // the whole job on on-demand
    std::int32_t on_demand_instances = 0;
};

[[nodiscard]] inline job_figures figures_of(const resilience_job& job, const resilience_offer& offer) {
    job_figures f;
    f.target_steps = static_cast<std::int64_t>(std::ceil(job.work_samples / static_cast<double>(job.model.samples_per_step)));
    f.on_demand_step_h = job.model.on_demand_step_s / offer.speed / 3600.0;
    f.on_demand_h = static_cast<double>(f.target_steps) * f.on_demand_step_h;
    f.on_demand_instances = job.model.on_demand_instances;
    return f;
}

/// The fallback's outcome of one spot run: (T, cost). The run moves to on-demand when the slack
/// left, D - t, falls to what on-demand needs for the rest, handover + remaining steps x its step
/// time; only once the slack has been above that (so that the move keeps the deadline): a job that
/// on-demand could not finish in time from where it stands stays on spot. Progress is known step
/// by step: the run records a point after every step and after every run of steps advanced in
/// closed form, whose steps are evenly spaced from the point before it (bamboo_run::progress), so
/// a run of n steps is expanded into its n step times.
[[nodiscard]] inline std::pair<double, double> fallback_outcome(const bamboo_run& run, const resilience_job& job,
                                                                const resilience_offer& offer, const job_figures& f) {
    const double handover_h = job.checkpoint_h + job.restart_h;
    const double od_usd_per_h = static_cast<double>(f.on_demand_instances) * offer.on_demand_usd_per_h;
    std::int64_t done = 0;
    double from_h = 0.0;
    bool armed = false;
    const auto need_h = [&] { return handover_h + static_cast<double>(f.target_steps - done) * f.on_demand_step_h; };
    const auto moved = [&](double at_h) {
        return std::pair{at_h + need_h(), spot_cost_until(run, static_cast<std::int64_t>(std::ceil(at_h * 3.6e6))) + need_h() * od_usd_per_h};
    };
    // On [from_h, to_h) with `done` steps: the slack falls from D - from_h; the move is at D - need.
    const auto crossing = [&](double to_h) -> std::optional<double> {
        const double at_h = job.deadline_h - need_h();
        if (job.deadline_h - from_h > need_h()) armed = true;
        if (armed && at_h < to_h) return std::max(at_h, from_h);
        return std::nullopt;
    };
    std::int64_t previous_ms = 0, previous_steps = 0;
    for (const auto& [t_ms, steps] : run.progress) {
        const std::int64_t n = steps - previous_steps;  // >= 1; evenly spaced when > 1
        for (std::int64_t j = 1; j <= n; ++j) {
            const std::int64_t step_ms = j == n ? t_ms : previous_ms + (t_ms - previous_ms) / n * j;
            const double t_h = static_cast<double>(step_ms) / 3.6e6;
            if (const auto at = crossing(t_h)) return moved(*at);
            done = previous_steps + j;
            from_h = t_h;
            if (done >= f.target_steps) return {t_h, spot_cost_until(run, step_ms)};
        }
        previous_ms = t_ms;
        previous_steps = steps;
    }
    // No more progress in the run (it ended at its horizon): the move when the slack runs out.
    if (const auto at = crossing(std::numeric_limits<double>::infinity())) return moved(*at);
    return {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
}

}  // namespace detail::resilience

/// Every strategy on every offer; the cheapest expected cost with P(T <= D) >= q. Throws
/// invalid_input for a bad request; every expected outcome is a status (resilience_result).
[[nodiscard]] inline resilience_result solve(const resilience_request& request) {
    namespace dr = detail::resilience;
    namespace dsm = detail::sampling;
    const auto start = std::chrono::steady_clock::now();
    request.validate();
    const resilience_job& job = request.job;
    const resilience_options& o = request.options;
    resilience_result result;
    std::vector<resilience_candidate> all;
    std::int64_t simulations = 0;
    bool out_of_budget = false;
    const auto horizon_ms = static_cast<std::int64_t>(std::ceil(job.deadline_h * o.horizon_deadlines * 3.6e6));
    const auto deadline_ms = static_cast<std::int64_t>(std::ceil(job.deadline_h * 3.6e6));

    // The budget: simulations (max_evaluations), configurations evaluated (max_nodes) and time
    // (max_time_s), each checked before the next configuration; 0: no limit.
    const auto budget_left = [&](std::int64_t more_simulations) {
        const search_budget& b = o.budget;
        if (b.max_evaluations > 0 && simulations + more_simulations > b.max_evaluations) return false;
        if (b.max_nodes > 0 && static_cast<std::int64_t>(all.size()) >= b.max_nodes) return false;
        if (b.max_time_s > 0.0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > b.max_time_s)
            return false;
        return true;
    };

    for (const resilience_offer& offer : request.offers) {
        const dr::job_figures f = dr::figures_of(job, offer);
        // On-demand and checkpoint-restart run the on-demand layout (on on-demand and on spot
        // instances), and the fallback moves to it: they need it within the offer's quota.
        // Redundant computation needs only its pipelines' instances.
        const bool layout_fits = f.on_demand_instances <= offer.max_instances;
        if (!budget_left(0)) {
            out_of_budget = true;
            break;
        }
        // ---- on-demand ----
        if (layout_fits) {
            resilience_candidate c{.strategy = resilience_strategy::on_demand, .offer = offer.name,
                                   .instances = f.on_demand_instances};
            const double usd = f.on_demand_h * static_cast<double>(f.on_demand_instances) * offer.on_demand_usd_per_h;
            c.p_meet_deadline = f.on_demand_h <= job.deadline_h ? 1.0 : 0.0;
            c.expected_h = f.on_demand_h;
            c.time_h = {f.on_demand_h, f.on_demand_h};
            c.expected_usd = usd;
            c.usd = {usd, usd};
            c.note = "exact: no preemption";
            all.push_back(std::move(c));
        }
        const bool fallback = o.spot_with_fallback && layout_fits;
        const double lambda = dsm::rate_of(offer.preemption);
        // ---- checkpoint-restart ----
        if (o.checkpoint_restart && layout_fits && std::isfinite(lambda)) {
            if (!budget_left(0)) {
                out_of_budget = true;
                break;
            }
            checkpoint_request cr{.work_h = f.on_demand_h, .checkpoint_h = job.checkpoint_h,
                                  .restart_h = job.restart_h + static_cast<double>(dsm::replacement_delay_ms(offer.preemption) +
                                                                                   o.instance_ready_ms) / 3.6e6,
                                  .preemptions_per_h = lambda * static_cast<double>(f.on_demand_instances),
                                  .deadline_h = job.deadline_h};
            cr.options.objective = checkpoint_objective::max_deadline_probability;
            cr.options.probability_tolerance = 1e-4;
            const checkpoint_result r = solve(cr);
            resilience_candidate c{.strategy = resilience_strategy::checkpoint_restart, .offer = offer.name,
                                   .instances = f.on_demand_instances};
            if (r.plan) {
                const double usd_per_h = static_cast<double>(f.on_demand_instances) * offer.spot_usd_per_h;
                c.checkpoint_interval_h = r.plan->interval_h;
                c.p_meet_deadline = r.plan->p_meet_deadline;
                c.p_error = r.plan->p_error_bound;
                // E[T] grows as exp(lambda (tau + delta)): past a double it is "beyond", not +inf.
                if (std::isfinite(r.plan->expected_h) && std::isfinite(r.plan->expected_h * usd_per_h)) {
                    c.expected_h = r.plan->expected_h;
                    c.expected_usd = r.plan->expected_h * usd_per_h;
                }
                // The 2.5% and 97.5% quantiles of T, by bisection on P(T <= t) (non-decreasing in t)
                // within the simulated horizon, the window every candidate is judged in; none:
                // beyond it. (E[T] above is exact, horizon or not.)
                const auto model = cr.model(r.plan->interval_h);
                const double limit_h = static_cast<double>(horizon_ms) / 3.6e6;
                const auto quantile = [&](double level) -> std::optional<double> {
                    if (completion_probability(model, limit_h, 1e-4).p < level) return std::nullopt;
                    double lo = no_failure_time_h(model), hi = limit_h;
                    for (int i = 0; i < 100 && lo < hi && hi - lo > 1e-6 * hi; ++i) {
                        const double mid = 0.5 * (lo + hi);
                        (completion_probability(model, mid, 1e-4).p < level ? lo : hi) = mid;
                    }
                    return hi;
                };
                const auto lower = quantile(0.025), upper = quantile(0.975);
                const auto usd_of = [&](const std::optional<double>& h) {
                    return h ? std::optional<double>(*h * usd_per_h) : std::nullopt;
                };
                c.time_h = {lower, upper};
                c.usd = {usd_of(lower), usd_of(upper)};
                c.note = "exact (Poisson preemptions at " + dr::rounded(cr.preemptions_per_h) +
                         " per hour for the job's instances), checkpoint every " + dr::rounded(r.plan->interval_h) + " h";
            } else {
                c.note = r.reason;
            }
            all.push_back(std::move(c));
        }
        // ---- redundant computation, and the fallback on its runs ----
        if (!o.redundant_computation && !fallback) continue;
        bamboo_options b;
        b.model = job.model;
        for (auto& ms : b.model.step_ms) ms = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(static_cast<double>(ms) / offer.speed)));
        b.duration_ms = horizon_ms;
        b.target_steps = f.target_steps;
        b.instance_creation_ms = o.instance_ready_ms;
        b.spot_usd_per_h = offer.spot_usd_per_h;
        b.on_demand_usd_per_h = offer.on_demand_usd_per_h;
        b.beyond_table = beyond_step_table::use_last_row;
        b.record_series = fallback;
        const auto rows = static_cast<std::int32_t>(job.model.step_ms.size());
        for (std::int32_t pipelines = 1; pipelines <= rows; ++pipelines) {
            const std::int32_t capacity = pipelines * job.model.stages;
            if (capacity > offer.max_instances) break;
            if (!budget_left(o.samples)) {
                out_of_budget = true;
                break;
            }
            std::vector<double> rc_times, rc_costs, fb_times, fb_costs;
            for (std::int32_t k = 0; k < o.samples; ++k) {
                const instance_trace events = dsm::realisation(offer.preemption, capacity, horizon_ms, deadline_ms, k, o.samples);
                const bamboo_run run = simulate_bamboo(events, b);
                ++simulations;
                const bool finished = run.status == bamboo_status::completed && run.steps >= f.target_steps;
                rc_times.push_back(finished ? run.end_h : std::numeric_limits<double>::infinity());
                rc_costs.push_back(finished ? run.usd_per_h * run.end_h : std::numeric_limits<double>::infinity());
                if (fallback) {
                    const auto [t, usd] = dr::fallback_outcome(run, job, offer, f);
                    fb_times.push_back(t);
                    fb_costs.push_back(usd);
                }
            }
            const std::string how = std::to_string(o.samples) + " simulated runs of Bamboo's rules";
            if (o.redundant_computation) {
                resilience_candidate c{.strategy = resilience_strategy::redundant_computation, .offer = offer.name,
                                       .instances = capacity, .pipelines = pipelines};
                dr::apply(c, dsm::summarise(rc_times, rc_costs, job.deadline_h));
                c.note = how;
                all.push_back(std::move(c));
            }
            if (fallback) {
                resilience_candidate c{.strategy = resilience_strategy::spot_with_fallback, .offer = offer.name,
                                       .instances = capacity, .pipelines = pipelines};
                dr::apply(c, dsm::summarise(fb_times, fb_costs, job.deadline_h));
                c.note = how + ", moved to " + std::to_string(f.on_demand_instances) +
                         " on-demand instances when the slack left is the on-demand time";
                all.push_back(std::move(c));
            }
        }
    }

    // ---- the choice ----
    const double q = job.probability;
    for (auto& c : all) {
        c.meets_probability = c.p_meet_deadline >= q;
        if (c.expected_usd && *c.expected_usd > 0.0) c.samples_per_usd = job.work_samples / *c.expected_usd;
        result.details.best_probability = std::max(result.details.best_probability, c.p_meet_deadline);
    }
    const auto better = [](const resilience_candidate& a, const resilience_candidate& b) {
        // Meeting q first; then the smaller expected cost (unknown last); then the higher probability.
        if (a.meets_probability != b.meets_probability) return a.meets_probability;
        const double ca = a.expected_usd.value_or(std::numeric_limits<double>::infinity());
        const double cb = b.expected_usd.value_or(std::numeric_limits<double>::infinity());
        if (a.meets_probability && ca != cb) return ca < cb;
        if (a.p_meet_deadline != b.p_meet_deadline) return a.p_meet_deadline > b.p_meet_deadline;
        return ca < cb;
    };
    const resilience_candidate* chosen = nullptr;
    for (const auto& c : all)
        if (c.meets_probability && c.expected_usd && (!chosen || better(c, *chosen))) chosen = &c;
    for (const resilience_strategy s : {resilience_strategy::on_demand, resilience_strategy::checkpoint_restart,
                                        resilience_strategy::redundant_computation, resilience_strategy::spot_with_fallback}) {
        const resilience_candidate* best = nullptr;
        for (const auto& c : all)
            if (c.strategy == s && (!best || better(c, *best))) best = &c;
        if (!best) continue;
        resilience_candidate summary = *best;
        if (chosen && best != chosen) {
            if (!summary.meets_probability)
                summary.note += "; lost: P(T <= D) = " + dsm::format_probability(summary.p_meet_deadline) + " < q = " +
                                detail::format_number(q);
            else if (!summary.expected_usd)
                summary.note += "; lost: some runs end beyond the horizon, expected cost unknown";
            else if (*summary.expected_usd == *chosen->expected_usd)
                summary.note += "; lost: the plan's expected cost too (" + dr::cents(*summary.expected_usd) +
                                " USD), a tie broken by the higher P(T <= D), then by the order evaluated";
            else
                summary.note += "; lost: expected cost " + dr::cents(*summary.expected_usd) + " USD > " +
                                dr::cents(*chosen->expected_usd) + " USD";
        }
        result.details.strategies.push_back(std::move(summary));
    }
    result.details.simulations = simulations;
    result.counters.evaluations = simulations;
    result.counters.nodes = static_cast<std::int64_t>(all.size());
    result.counters.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (chosen) {
        result.status = out_of_budget ? solve_status::budget_exhausted : solve_status::feasible;
        result.plan = *chosen;
        result.objective_value = chosen->expected_usd;
        std::string how;
        switch (chosen->strategy) {
            case resilience_strategy::on_demand: how = "exact: on-demand is not preempted"; break;
            case resilience_strategy::checkpoint_restart:
                how = "exact: P(T <= D) within " + dr::rounded(chosen->p_error, 2) + " (a proven bound)";
                break;
            default:
                how = "an estimate: P(T <= D) = " + dsm::format_probability(chosen->p_meet_deadline) + " +- " +
                      dsm::format_probability(chosen->p_error) + " (95%) over " + std::to_string(o.samples) + " simulated runs";
        }
        result.reason = out_of_budget ? "the budget ended the comparison: the best of the configurations evaluated; " + how : how;
    } else {
        result.status = out_of_budget ? solve_status::budget_exhausted : solve_status::infeasible;
        bool reached = false;  // some configuration reaches q, but its expected cost is unknown
        for (const auto& c : all) reached = reached || (c.meets_probability && !c.expected_usd);
        result.reason = reached ? "configurations reach P(T <= D) >= " + detail::format_number(q) +
                                      ", but some of their runs end beyond the simulated horizon (horizon_deadlines = " +
                                      detail::format_number(o.horizon_deadlines) +
                                      " deadlines), so their expected cost is unknown: raise options.horizon_deadlines"
                                : "no configuration meets the deadline with probability " + detail::format_number(q) +
                                      "; the best reaches " + dsm::format_probability(result.details.best_probability);
        if (out_of_budget) result.reason = "the budget ended the comparison before a plan was found; " + result.reason;
    }
    return result;
}

}  // namespace dnnplan
