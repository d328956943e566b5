#pragma once
// The resilience planner: for a job and a market of instance offers, each with its own preemption
// process, every strategy on every offer is evaluated and the cheapest expected cost with
// P(finish by the deadline) >= q wins (solve/resilience_plan/problem.hpp has the types):
// - on_demand: the workload's on-demand layout (N instances, its step time) on on-demand
//   instances; no preemption, so the time is exact.
// - checkpoint_restart: the same layout on spot instances, any of the N lost interrupting the job,
//   at the rate N lambda (lambda: the process's preemptions per instance-hour), each restart costing
//   R plus an instance's time to be ready; the interval that maximises P(T <= D), and the exact
//   E[T] and P(T <= D) of the checkpoint planner (solve/resilience_plan/checkpoint.hpp) under
//   Poisson preemptions (for another process, at its mean rate).
// - redundant_computation: P pipelines of S spot instances (P S requested), simulated with
//   Bamboo's rules (preemption/bamboo_simulator.hpp) on `samples` realisations of the process.
// - spot_with_fallback: the same runs, but when the slack left falls to the on-demand time of the
//   remaining work (plus a checkpoint and a restart to hand over), the job moves to on-demand: the
//   deadline is kept by construction whenever on-demand alone keeps it, at the cost the runs give.
// Cost is what the instances are billed while the job holds them: spot per live instance from its
// addition (Bamboo's billing), on-demand per instance-hour. The choice: the cheapest expected cost
// among the configurations with P(T <= D) >= q (feasible); none: no_plan_found with the
// configuration of highest P(T <= D) as best_effort, or infeasible where no configuration can
// meet q (proven). docs/solvers/resilience_plan.md.

#include <dnnplan/core/detail/format.hpp>
#include <dnnplan/preemption/bamboo_simulator.hpp>
#include <dnnplan/preemption/checkpoint_probability.hpp>
#include <dnnplan/preemption/sampling.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/solve/resilience_plan/checkpoint.hpp>
#include <dnnplan/solve/resilience_plan/problem.hpp>

#include <algorithm>
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
    f.target_steps = static_cast<std::int64_t>(std::ceil(job.work_samples / static_cast<double>(job.workload.samples_per_step)));
    f.on_demand_step_h = job.workload.on_demand_step_s / offer.speed / 3600.0;
    f.on_demand_h = static_cast<double>(f.target_steps) * f.on_demand_step_h;
    f.on_demand_instances = job.workload.on_demand_instances;
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

/// A configuration evaluated: its candidate; whether it is proven unable to meet q (its time
/// without preemptions is over the deadline, or its exact P(T <= D) with its error bound is below
/// q); and, when simulated, the 95% interval of its expected cost.
struct evaluated {
    resilience_candidate candidate{};
    bool cannot_meet = false;
    std::optional<figure_estimate> cost_estimate{};
};

/// What the comparison has done, and the budget that stopped it (checked before each
/// configuration: simulated runs, configurations evaluated, time).
class comparison {
public:
    explicit comparison(const search_budget& budget) : budget_(budget) {}

    /// Whether `more_simulations` runs, and one more configuration, fit the budget; when not,
    /// the limit reached is remembered.
    [[nodiscard]] bool within_budget(std::int64_t more_simulations) {
        if (budget_.max_evaluations > 0 && simulations + more_simulations > budget_.max_evaluations) limit = search_limit::samples;
        else if (budget_.max_nodes > 0 && static_cast<std::int64_t>(all.size()) >= budget_.max_nodes) limit = search_limit::nodes;
        else if (budget_.max_time_s > 0.0 && clock.elapsed_s() > budget_.max_time_s) limit = search_limit::time;
        else return true;
        return false;
    }
    /// "the simulation budget (max_evaluations = 100) ran out", for the reason.
    [[nodiscard]] std::string describe_limit() const {
        if (limit == search_limit::samples)
            return "the simulation budget (max_evaluations = " + std::to_string(budget_.max_evaluations) + " simulated runs) ran out";
        return budget_guard::describe_limit(limit, budget_);
    }

    std::vector<evaluated> all{};
    std::int64_t simulations = 0;
    search_limit limit = search_limit::none;
    stopwatch clock{};

private:
    search_budget budget_;
};

/// On-demand: exact, no preemption.
[[nodiscard]] inline evaluated on_demand_candidate(const resilience_job& job, const resilience_offer& offer, const job_figures& f) {
    resilience_candidate c{.strategy = resilience_strategy::on_demand, .offer = offer.name, .instances = f.on_demand_instances};
    const double usd = f.on_demand_h * static_cast<double>(f.on_demand_instances) * offer.on_demand_usd_per_h;
    c.p_meet_deadline = f.on_demand_h <= job.deadline_h ? 1.0 : 0.0;
    c.expected_h = f.on_demand_h;
    c.time_h = {f.on_demand_h, f.on_demand_h};
    c.expected_usd = usd;
    c.usd = {usd, usd};
    c.note = "exact: no preemption";
    const bool cannot_meet = c.p_meet_deadline < job.probability;
    return {.candidate = std::move(c), .cannot_meet = cannot_meet};
}

/// The 2.5% and 97.5% quantiles of T under the checkpoint model, by bisection on P(T <= t)
/// (non-decreasing in t) within the simulated horizon, the window every candidate is judged in;
/// none: beyond it. (E[T] is exact, horizon or not.)
[[nodiscard]] inline estimate_interval checkpoint_time_interval(const checkpoint_restart_model& model, double limit_h) {
    const auto quantile = [&](double level) -> std::optional<double> {
        if (completion_probability(model, limit_h, 1e-4).p < level) return std::nullopt;
        double lo = no_failure_time_h(model), hi = limit_h;
        for (int i = 0; i < 100 && lo < hi && hi - lo > 1e-6 * hi; ++i) {
            const double mid = 0.5 * (lo + hi);
            (completion_probability(model, mid, 1e-4).p < level ? lo : hi) = mid;
        }
        return hi;
    };
    return {quantile(0.025), quantile(0.975)};
}

/// Checkpoint-restart: the on-demand layout on spot, the interval of greatest P(T <= D) of the
/// checkpoint planner under Poisson preemptions at the process's mean rate (exact figures).
[[nodiscard]] inline evaluated checkpoint_candidate(const resilience_job& job, const resilience_offer& offer, const job_figures& f,
                                                    const resilience_options& o, std::int64_t horizon_ms) {
    checkpoint_request cr{.work_h = f.on_demand_h, .checkpoint_h = job.checkpoint_h, .restart_h = job.restart_h,
                          .preemption = poisson_preemption{.rate_per_instance_h = sampling::rate_of(offer.preemption),
                                                           .replacement_delay_ms = sampling::replacement_delay_ms(offer.preemption)},
                          .instances = f.on_demand_instances, .instance_ready_ms = o.instance_ready_ms, .deadline_h = job.deadline_h};
    cr.options.objective = checkpoint_objective::max_deadline_probability;
    cr.options.probability_tolerance = 1e-4;
    const checkpoint_result r = solve(cr);
    evaluated e{.candidate = {.strategy = resilience_strategy::checkpoint_restart, .offer = offer.name,
                              .instances = f.on_demand_instances},
                .cannot_meet = f.on_demand_h + job.checkpoint_h > job.deadline_h};
    resilience_candidate& c = e.candidate;
    if (!r.plan) {
        c.note = r.reason;
        return e;
    }
    const double usd_per_h = static_cast<double>(f.on_demand_instances) * offer.spot_usd_per_h;
    c.checkpoint_interval_h = r.plan->interval_h;
    c.p_meet_deadline = r.plan->p_meet_deadline;
    c.p_error = r.plan->p_error_bound;
    // The model is the process itself only for a Poisson process: only then does its P prove.
    if (std::holds_alternative<poisson_preemption>(offer.preemption))
        e.cannot_meet = e.cannot_meet || c.p_meet_deadline + c.p_error < job.probability;
    // E[T] grows as exp(lambda (tau + delta)): past a double it is "beyond", not +inf.
    if (std::isfinite(r.plan->expected_h) && std::isfinite(r.plan->expected_h * usd_per_h)) {
        c.expected_h = r.plan->expected_h;
        c.expected_usd = r.plan->expected_h * usd_per_h;
    }
    c.time_h = checkpoint_time_interval(cr.model(r.plan->interval_h), static_cast<double>(horizon_ms) / 3.6e6);
    const auto usd_of = [&](const std::optional<double>& h) { return h ? std::optional<double>(*h * usd_per_h) : std::nullopt; };
    c.usd = {usd_of(c.time_h.lower), usd_of(c.time_h.upper)};
    c.note = "exact (Poisson preemptions at " + detail::format_significant(r.details.preemptions_per_h) +
             " per hour for the job's instances), checkpoint every " + detail::format_significant(r.plan->interval_h) + " h";
    return e;
}

/// Bamboo's options for the offer's runs: the workload's step times divided by its speed, up to
/// the horizon or the job's steps.
[[nodiscard]] inline bamboo_options simulation_options(const resilience_job& job, const resilience_offer& offer, const job_figures& f,
                                                       const resilience_options& o, std::int64_t horizon_ms, bool fallback) {
    bamboo_options b;
    b.workload = job.workload;
    for (auto& ms : b.workload.step_ms) ms = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(static_cast<double>(ms) / offer.speed)));
    b.duration_ms = horizon_ms;
    b.target_steps = f.target_steps;
    b.instance_creation_ms = o.instance_ready_ms;
    b.spot_usd_per_h = offer.spot_usd_per_h;
    b.on_demand_usd_per_h = offer.on_demand_usd_per_h;
    b.beyond_table = beyond_step_table::use_last_row;
    b.record_series = fallback;
    return b;
}

/// A simulated candidate's figures from its outcomes, and whether its time without preemptions
/// (at least `min_time_h`) is already over the deadline.
[[nodiscard]] inline evaluated simulated_candidate(resilience_candidate c, std::vector<double> times, std::vector<double> costs,
                                                   const resilience_job& job, double min_time_h) {
    const sample_summary s = sampling::summarise(std::move(times), std::move(costs), job.deadline_h);
    apply(c, s);
    return {.candidate = std::move(c), .cannot_meet = min_time_h > job.deadline_h, .cost_estimate = s.expected_cost_estimate};
}

/// Redundant computation with P pipelines (P S spot instances) on `samples` realisations of the
/// offer's process, and the fallback on the same runs. A run's steps take at least the fastest
/// row of the table; the fallback's, at least the faster of that and on-demand's step.
inline void simulate_pipelines(comparison& cmp, const resilience_request& request, const resilience_offer& offer,
                               const job_figures& f, const bamboo_options& b, std::int32_t pipelines, bool fallback) {
    const resilience_job& job = request.job;
    const resilience_options& o = request.options;
    const std::int32_t capacity = pipelines * job.workload.stages;
    const auto horizon_ms = *b.duration_ms;
    const auto deadline_ms = static_cast<std::int64_t>(std::ceil(job.deadline_h * 3.6e6));
    std::vector<double> rc_times, rc_costs, fb_times, fb_costs;
    for (std::int32_t k = 0; k < o.samples; ++k) {
        const instance_trace events = sampling::realisation(offer.preemption, capacity, horizon_ms, deadline_ms, k, o.samples);
        const bamboo_run run = simulate_bamboo(events, b);
        ++cmp.simulations;
        const bool finished = run.status == bamboo_status::completed && run.steps >= f.target_steps;
        rc_times.push_back(finished ? run.end_h : std::numeric_limits<double>::infinity());
        rc_costs.push_back(finished ? run.usd_per_h * run.end_h : std::numeric_limits<double>::infinity());
        if (fallback) {
            const auto [t, usd] = fallback_outcome(run, job, offer, f);
            fb_times.push_back(t);
            fb_costs.push_back(usd);
        }
    }
    const double fastest_step_h = static_cast<double>(*std::min_element(b.workload.step_ms.begin(), b.workload.step_ms.end())) / 3.6e6;
    const double min_spot_h = static_cast<double>(f.target_steps) * fastest_step_h;
    const std::string how = std::to_string(o.samples) + " simulated runs of Bamboo's rules";
    if (o.redundant_computation) {
        evaluated e = simulated_candidate({.strategy = resilience_strategy::redundant_computation, .offer = offer.name,
                                           .instances = capacity, .pipelines = pipelines},
                                          std::move(rc_times), std::move(rc_costs), job, min_spot_h);
        e.candidate.note = how;
        cmp.all.push_back(std::move(e));
    }
    if (fallback) {
        const double min_h = static_cast<double>(f.target_steps) * std::min(fastest_step_h, f.on_demand_step_h);
        evaluated e = simulated_candidate({.strategy = resilience_strategy::spot_with_fallback, .offer = offer.name,
                                           .instances = capacity, .pipelines = pipelines},
                                          std::move(fb_times), std::move(fb_costs), job, min_h);
        e.candidate.note = how + ", moved to " + std::to_string(f.on_demand_instances) +
                           " on-demand instances when the slack left is the on-demand time";
        cmp.all.push_back(std::move(e));
    }
}

/// Every strategy on one offer, within the budget. On-demand and checkpoint-restart run the
/// on-demand layout (on on-demand and on spot instances), and the fallback moves to it: they need
/// it within the offer's quota; redundant computation needs only its pipelines' instances.
/// Returns false when the budget stopped the comparison before the offer's first configuration.
[[nodiscard]] inline bool evaluate_offer(comparison& cmp, const resilience_request& request, const resilience_offer& offer) {
    const resilience_job& job = request.job;
    const resilience_options& o = request.options;
    const job_figures f = figures_of(job, offer);
    const bool layout_fits = f.on_demand_instances <= offer.max_instances;
    const auto horizon_ms = static_cast<std::int64_t>(std::ceil(job.deadline_h * o.horizon_deadlines * 3.6e6));
    if (!cmp.within_budget(0)) return false;
    if (layout_fits) cmp.all.push_back(on_demand_candidate(job, offer, f));
    const bool fallback = o.spot_with_fallback && layout_fits;
    if (o.checkpoint_restart && layout_fits && std::isfinite(sampling::rate_of(offer.preemption))) {
        if (!cmp.within_budget(0)) return false;
        cmp.all.push_back(checkpoint_candidate(job, offer, f, o, horizon_ms));
    }
    if (!o.redundant_computation && !fallback) return true;
    const bamboo_options b = simulation_options(job, offer, f, o, horizon_ms, fallback);
    const auto rows = static_cast<std::int32_t>(job.workload.step_ms.size());
    for (std::int32_t pipelines = 1; pipelines <= rows; ++pipelines) {
        if (pipelines * job.workload.stages > offer.max_instances) break;
        if (!cmp.within_budget(o.samples)) break;
        simulate_pipelines(cmp, request, offer, f, b, pipelines, fallback);
    }
    return true;
}

/// The order of the choice: meeting q first; then the smaller expected cost (unknown last); then
/// the higher probability. Among those that miss q: the higher probability, then the cost.
[[nodiscard]] inline bool better(const resilience_candidate& a, const resilience_candidate& b) {
    if (a.meets_probability != b.meets_probability) return a.meets_probability;
    const double ca = a.expected_usd.value_or(std::numeric_limits<double>::infinity());
    const double cb = b.expected_usd.value_or(std::numeric_limits<double>::infinity());
    if (a.meets_probability && ca != cb) return ca < cb;
    if (a.p_meet_deadline != b.p_meet_deadline) return a.p_meet_deadline > b.p_meet_deadline;
    return ca < cb;
}

/// Why a strategy's best configuration lost to the plan.
[[nodiscard]] inline std::string lost_note(const resilience_candidate& c, const resilience_candidate& plan, double q) {
    if (!c.meets_probability)
        return "; lost: P(T <= D) = " + detail::format_probability(c.p_meet_deadline) + " < q = " + detail::format_number(q);
    if (!c.expected_usd) return "; lost: some runs end beyond the horizon, expected cost unknown";
    if (*c.expected_usd == *plan.expected_usd)
        return "; lost: the plan's expected cost too (" + detail::format_usd(*c.expected_usd) +
               " USD), a tie broken by the higher P(T <= D), then by the order evaluated";
    return "; lost: expected cost " + detail::format_usd(*c.expected_usd) + " USD > " + detail::format_usd(*plan.expected_usd) + " USD";
}

/// The best configuration of each strategy, in the order of the enum, with why it lost.
[[nodiscard]] inline std::vector<resilience_candidate> strategy_summaries(const std::vector<evaluated>& all,
                                                                         const evaluated* chosen, double q) {
    std::vector<resilience_candidate> out;
    for (const resilience_strategy s : {resilience_strategy::on_demand, resilience_strategy::checkpoint_restart,
                                        resilience_strategy::redundant_computation, resilience_strategy::spot_with_fallback}) {
        const evaluated* best = nullptr;
        for (const auto& e : all)
            if (e.candidate.strategy == s && (!best || better(e.candidate, best->candidate))) best = &e;
        if (!best) continue;
        resilience_candidate summary = best->candidate;
        if (chosen && best != chosen) summary.note += lost_note(summary, chosen->candidate, q);
        out.push_back(std::move(summary));
    }
    return out;
}

/// The plan: its figures (exact for on-demand and checkpoint-restart, else estimated with the
/// expected cost's interval) and the reason that says how they were found.
inline void conclude_with_plan(resilience_result& result, const comparison& cmp, const evaluated& chosen, std::int32_t samples) {
    const resilience_candidate& c = chosen.candidate;
    result.status = solve_status::feasible;
    result.plan = c;
    result.objective_value = c.expected_usd;
    std::string how;
    switch (c.strategy) {
        case resilience_strategy::on_demand: how = "exact: on-demand is not preempted"; break;
        case resilience_strategy::checkpoint_restart:
            how = "exact: P(T <= D) within " + detail::format_significant(c.p_error, 2) + " (a proven bound)";
            break;
        default:
            result.figures = figure_kind::estimated;
            result.estimate = chosen.cost_estimate;
            how = "an estimate: P(T <= D) = " + detail::format_probability(c.p_meet_deadline) + " +- " +
                  detail::format_probability(c.p_error) + " (95%) over " + std::to_string(samples) + " simulated runs";
    }
    result.reason = cmp.limit != search_limit::none
                        ? "the budget ended the comparison (" + cmp.describe_limit() + "): the best of the configurations evaluated; " + how
                        : how;
}

/// No plan: infeasible where every configuration is proven unable to meet q (and the budget
/// stopped nothing), else no_plan_found; best_effort: the configuration of highest P(T <= D).
inline void conclude_without_plan(resilience_result& result, const comparison& cmp, const resilience_request& request) {
    const double q = request.job.probability;
    const evaluated* top = nullptr;
    bool reached = false, proven = cmp.limit == search_limit::none;  // reached: q met, expected cost unknown
    for (const auto& e : cmp.all) {
        if (!top || better(e.candidate, top->candidate)) top = &e;
        reached = reached || (e.candidate.meets_probability && !e.candidate.expected_usd);
        proven = proven && e.cannot_meet;
    }
    if (top) result.best_effort = top->candidate;
    const std::string best = "; the best reaches " + detail::format_probability(result.details.best_probability);
    if (cmp.all.empty() && proven) {
        result.reason = "no configuration fits the offers' quotas (max_instances) with the strategies enabled";
    } else if (proven) {
        result.reason = "no configuration can meet the deadline with probability " + detail::format_number(q) +
                        " (proven: each one's time without preemptions is over the deadline of " +
                        detail::format_number(request.job.deadline_h) + " h, or its exact P(T <= D) is below q)" + best;
    } else if (reached) {
        result.reason = "configurations reach P(T <= D) >= " + detail::format_number(q) +
                        ", but some of their runs end beyond the simulated horizon (horizon_deadlines = " +
                        detail::format_number(request.options.horizon_deadlines) +
                        " deadlines), so their expected cost is unknown: raise options.horizon_deadlines";
    } else {
        result.reason = "no configuration meets the deadline with probability " + detail::format_number(q) + best +
                        ": an estimate, which proves nothing (best_effort is that configuration)";
    }
    result.status = proven ? solve_status::infeasible : solve_status::no_plan_found;
    result.limit = cmp.limit;
    if (cmp.limit != search_limit::none)
        result.reason = "the budget ended the comparison before a plan was found (" + cmp.describe_limit() + "); " + result.reason;
}

}  // namespace detail::resilience

/// Every strategy on every offer; the cheapest expected cost with P(T <= D) >= q. Throws
/// invalid_input for a bad request; every expected outcome is a status (resilience_result).
[[nodiscard]] inline resilience_result solve(const resilience_request& request) {
    namespace dr = detail::resilience;
    request.validate();
    dr::comparison cmp(request.options.budget);
    for (const resilience_offer& offer : request.offers)
        if (!dr::evaluate_offer(cmp, request, offer)) break;

    resilience_result result;
    const double q = request.job.probability;
    for (auto& e : cmp.all) {
        resilience_candidate& c = e.candidate;
        c.meets_probability = c.p_meet_deadline >= q;
        if (c.expected_usd && *c.expected_usd > 0.0) c.samples_per_usd = request.job.work_samples / *c.expected_usd;
        result.details.best_probability = std::max(result.details.best_probability, c.p_meet_deadline);
    }
    const dr::evaluated* chosen = nullptr;
    for (const auto& e : cmp.all)
        if (e.candidate.meets_probability && e.candidate.expected_usd && (!chosen || dr::better(e.candidate, chosen->candidate)))
            chosen = &e;
    result.details.strategies = dr::strategy_summaries(cmp.all, chosen, q);
    result.details.simulations = cmp.simulations;
    result.counters.evaluations = cmp.simulations;
    result.counters.nodes = static_cast<std::int64_t>(cmp.all.size());
    if (chosen) dr::conclude_with_plan(result, cmp, *chosen, request.options.samples);
    else dr::conclude_without_plan(result, cmp, request);
    result.limit = cmp.limit;
    result.counters.elapsed_s = cmp.clock.elapsed_s();
    return result;
}

}  // namespace dnnplan
