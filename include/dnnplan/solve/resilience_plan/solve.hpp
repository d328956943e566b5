#pragma once
// The resilience planner: for a job and a market of instance offers, each with its own preemption
// process, every strategy on every offer is evaluated and the cheapest expected cost with
// P(finish by the deadline) >= q wins (solve/resilience_plan/problem.hpp has the types):
// - on_demand: each pipeline layout the spot strategies run (P pipelines of S instances at the
//   table's step time for P) on on-demand instances; no preemption, so the time is exact.
// - checkpoint_restart: the workload's on-demand layout (N instances at its step time) on spot
//   instances, any of the N lost interrupting the job, at the rate N lambda (lambda: the
//   process's preemptions per instance-hour), each restart costing
//   R plus an instance's time to be ready; the interval that maximises P(T <= D), and the exact
//   E[T] and P(T <= D) of the checkpoint planner (solve/resilience_plan/checkpoint.hpp) under
//   Poisson preemptions (for another process, at its mean rate).
// - redundant_computation: P pipelines of S spot instances (P S requested), simulated with
//   Bamboo's rules (preemption/bamboo_simulator.hpp) on `samples` realisations of the process.
// - spot_with_fallback: the runtime deadline policy (runtime/adaptive.hpp) on each
//   pipeline layout, tick by tick on each realisation of the process (spot when all P S instances
//   are live, else it waits or runs the same layout on on-demand), with a warm-up of one deadline
//   of the realisation before the job to learn from; its safety net keeps every deadline that
//   on-demand from the start keeps.
// Cost is what the instances are billed while the job holds them: spot per live instance from its
// addition (Bamboo's billing), on-demand per instance-hour; the fallback's, every tick it runs for
// its P S instances (the tick model's billing). The choice: the cheapest expected cost
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
#include <dnnplan/runtime/adaptive.hpp>
#include <dnnplan/runtime/deadline_problem.hpp>
#include <dnnplan/runtime/simulate.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
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

/// The job on an offer: its steps, and the workload's on-demand layout (checkpoint-restart's).
struct job_figures {
    std::int64_t target_steps = 0;
    double on_demand_step_h = 0.0;   // one step of the workload's on-demand layout on this offer
    double on_demand_h = 0.0;        // the whole job on that layout
    std::int32_t on_demand_instances = 0;
};

/// A pipeline layout: P pipelines of S instances at the table's step time for P on the offer
/// (Bamboo's options' row, divided by the speed and rounded to the ms). Redundant computation runs
/// it on spot; on-demand and the fallback run the same instances at the same step time.
struct pipeline_layout {
    std::int32_t pipelines = 0;
    std::int32_t instances = 0;
    double step_s = 0.0;
};

[[nodiscard]] inline pipeline_layout layout_of(const bamboo_options& b, std::int32_t pipelines) {
    return {.pipelines = pipelines, .instances = pipelines * b.workload.stages,
            .step_s = static_cast<double>(b.workload.step_ms[static_cast<std::size_t>(pipelines - 1)]) / 1000.0};
}

[[nodiscard]] inline job_figures figures_of(const resilience_job& job, const resilience_offer& offer) {
    job_figures f;
    f.target_steps = static_cast<std::int64_t>(std::ceil(job.work_samples / static_cast<double>(job.workload.samples_per_step)));
    f.on_demand_step_h = job.workload.on_demand_step_s / offer.speed / 3600.0;
    f.on_demand_h = static_cast<double>(f.target_steps) * f.on_demand_step_h;
    f.on_demand_instances = job.workload.on_demand_instances;
    return f;
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

    /// One simulated run more, told to the caller's progress callback, if any.
    void simulated() {
        ++simulations;
        if (progress) progress(simulations, planned);
    }

    std::vector<evaluated> all{};
    std::int64_t simulations = 0;
    std::int64_t planned = 0;  ///< the runs the comparison would simulate without a budget
    std::function<void(std::int64_t, std::int64_t)> progress{};
    search_limit limit = search_limit::none;
    stopwatch clock{};

private:
    search_budget budget_;
};

/// On-demand: a pipeline layout on on-demand instances; exact, no preemption.
[[nodiscard]] inline evaluated on_demand_candidate(const resilience_job& job, const resilience_offer& offer, const job_figures& f,
                                                   const pipeline_layout& l) {
    resilience_candidate c{.strategy = resilience_strategy::on_demand, .offer = offer.name, .instances = l.instances,
                           .pipelines = l.pipelines};
    const double h = static_cast<double>(f.target_steps) * l.step_s / 3600.0;
    const double usd = h * static_cast<double>(l.instances) * offer.on_demand_usd_per_h;
    c.p_meet_deadline = h <= job.deadline_h ? 1.0 : 0.0;
    c.expected_h = h;
    c.time_h = {h, h};
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

/// Checkpoint-restart: the workload's on-demand layout on spot, the interval of greatest P(T <= D) of the
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
                                                       const resilience_options& o, std::int64_t horizon_ms) {
    bamboo_options b;
    b.workload = job.workload;
    for (auto& ms : b.workload.step_ms) ms = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(static_cast<double>(ms) / offer.speed)));
    b.duration_ms = horizon_ms;
    b.target_steps = f.target_steps;
    b.instance_creation_ms = o.instance_ready_ms;
    b.spot_usd_per_h = offer.spot_usd_per_h;
    b.on_demand_usd_per_h = offer.on_demand_usd_per_h;
    b.beyond_table = beyond_step_table::use_last_row;
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

/// Realisation k of the offer's process for the fallback: its events from the start of a warm-up
/// before the job, and the job's start among them (ms).
struct warmed_realisation {
    instance_trace events{};
    std::int64_t start_ms = 0;
};

/// The process over the warm-up and the horizon after it, the job starting after the warm-up
/// (seed k + 1, as sampling::realisation); for a trace, the start times of sampling::realisation
/// (offset_k = span k / (samples - 1), span = max(0, end - D)) with what of the trace precedes
/// each, up to the warm-up (the first start has none), so that the jobs start where redundant
/// computation's runs do.
[[nodiscard]] inline warmed_realisation fallback_realisation(const preemption_process_variant& model, std::int32_t capacity,
                                                             std::int64_t horizon_ms, std::int64_t deadline_ms, std::int64_t warmup_ms,
                                                             std::int32_t k, std::int32_t samples) {
    if (const auto* trace = std::get_if<trace_replay>(&model)) {
        const std::int64_t span = std::max<std::int64_t>(0, trace->end_ms() - deadline_ms);
        const std::int64_t offset = samples > 1 ? span * k / (samples - 1) : 0;
        const std::int64_t from = std::max<std::int64_t>(0, offset - warmup_ms);
        const trace_replay window(sampling::trace_window(trace->trace(), from));
        return {window.events(capacity, offset - from + horizon_ms, 0), offset - from};
    }
    const auto seed = static_cast<std::uint64_t>(k) + 1;
    return {std::visit([&](const auto& p) { return p.events(capacity, warmup_ms + horizon_ms, seed); }, model), warmup_ms};
}

/// The fallback on one pipeline layout: the deadline policy's tick job (work: the job's steps at
/// the layout's step time; deadline D; changeover: a checkpoint, a restart and an instance's
/// readiness, delta + R + r, paid by every run it starts; a gang of the layout's P S instances)
/// and a one-region market at the offer's prices whose availability each realisation refills.
class fallback_runner {
public:
    fallback_runner(const resilience_request& request, const resilience_offer& offer, const job_figures& f, const pipeline_layout& l,
                    std::int64_t horizon_ms)
        : horizon_ms_(horizon_ms), gap_ms_(request.options.fallback_tick_s * 1000.0), spot_usd_per_h_(offer.spot_usd_per_h) {
        const resilience_job& job = request.job;
        job_ = {.work_s = static_cast<double>(f.target_steps) * l.step_s,
                .deadline_s = job.deadline_h * 3600.0,
                .changeover_s = (job.checkpoint_h + job.restart_h) * 3600.0 + static_cast<double>(request.options.instance_ready_ms) / 1000.0,
                .instances = l.instances};
        market_.regions.push_back({.name = offer.name, .gap_s = request.options.fallback_tick_s,
                                   .on_demand_usd_per_h = offer.on_demand_usd_per_h});
    }

    [[nodiscard]] const deadline_job& job() const noexcept { return job_; }

    /// (T h, cost USD) of the default policy's run on `r`, both +inf when it ends unfinished.
    [[nodiscard]] std::pair<double, double> outcome(const warmed_realisation& r) {
        const std::size_t start = live_counts(r);
        adaptive_deadline_policy policy;
        const deadline_outcome out = simulate_window(market_, job_, start, policy);
        if (!out.finished) return {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
        return {out.finish_s / 3600.0, out.cost_usd};
    }

private:
    /// The live instances at each tick: tick j at start - (s - j) g, s the whole ticks of warm-up
    /// before the start (returned: the start tick), up to the first tick at or past the horizon
    /// after the start. The count of tick j > 0 is the fewest live over (t_{j-1}, t_j]: an
    /// instance lost and replaced between two ticks interrupted the gang (the tick model's
    /// preemption at tick j), which the count at the instant would hide.
    std::size_t live_counts(const warmed_realisation& r) {
        spot_market_trace& t = market_.regions.front();
        const auto history = static_cast<std::size_t>(std::floor(static_cast<double>(r.start_ms) / gap_ms_));
        const auto after = static_cast<std::size_t>(std::ceil(static_cast<double>(horizon_ms_) / gap_ms_));
        t.available.assign(history + after + 1, 0);
        t.spot_usd_per_h.assign(t.available.size(), spot_usd_per_h_);
        std::size_t e = 0;
        std::int32_t live = 0;
        const auto& events = r.events.events;
        for (std::size_t j = 0; j < t.available.size(); ++j) {
            const double at_ms = static_cast<double>(r.start_ms) - (static_cast<double>(history) - static_cast<double>(j)) * gap_ms_;
            std::int32_t least = live;
            for (; e < events.size() && static_cast<double>(events[e].time_ms) <= at_ms; ++e) {
                live += events[e].kind == instance_event_kind::add ? 1 : -1;
                least = std::min(least, live);
            }
            t.available[j] = j == 0 ? live : least;
        }
        return history;
    }

    deadline_job job_{};
    deadline_market market_{};
    std::int64_t horizon_ms_;
    double gap_ms_;
    double spot_usd_per_h_;
};

/// Redundant computation on a pipeline layout (P S spot instances) on `samples` realisations of
/// the offer's process, and the fallback on the same layout on realisations of the same process:
/// for a trace the same start times, with the trace before them as the policy's history; for a
/// stochastic process the same seeds, run for a warm-up first, so the fallback's window is a later
/// stretch of the seed's events, not the same events. A tick is available when no instance was
/// lost since the tick before; like every policy of the tick model (Can't Be Late's), the fallback
/// is credited the work of the tick in which a loss happened, up to one tick per preemption more
/// than continuous time would give. A Bamboo run's steps take at least the fastest row of the
/// table; the fallback's run, at least its work and one changeover.
inline void simulate_pipelines(comparison& cmp, const resilience_request& request, const resilience_offer& offer,
                               const job_figures& f, const bamboo_options& b, const pipeline_layout& l) {
    const resilience_job& job = request.job;
    const resilience_options& o = request.options;
    const auto horizon_ms = *b.duration_ms;
    const auto deadline_ms = static_cast<std::int64_t>(std::ceil(job.deadline_h * 3.6e6));
    std::optional<fallback_runner> fallback;
    if (o.spot_with_fallback) fallback.emplace(request, offer, f, l, horizon_ms);
    std::vector<double> rc_times, rc_costs, fb_times, fb_costs;
    for (std::int32_t k = 0; k < o.samples; ++k) {
        if (o.redundant_computation) {
            const instance_trace events = sampling::realisation(offer.preemption, l.instances, horizon_ms, deadline_ms, k, o.samples);
            const bamboo_run run = simulate_bamboo(events, b);
            cmp.simulated();
            const bool finished = run.status == bamboo_status::completed && run.steps >= f.target_steps;
            rc_times.push_back(finished ? run.end_h : std::numeric_limits<double>::infinity());
            rc_costs.push_back(finished ? run.usd_per_h * run.end_h : std::numeric_limits<double>::infinity());
        }
        if (fallback) {
            // The warm-up: one deadline of the process before the job (docs: "Spot with an on-demand fallback").
            const auto [t, usd] =
                fallback->outcome(fallback_realisation(offer.preemption, l.instances, horizon_ms, deadline_ms, deadline_ms, k, o.samples));
            cmp.simulated();
            fb_times.push_back(t);
            fb_costs.push_back(usd);
        }
    }
    const std::string runs = std::to_string(o.samples) + " simulated runs of ";
    if (o.redundant_computation) {
        const double fastest_step_h = static_cast<double>(*std::min_element(b.workload.step_ms.begin(), b.workload.step_ms.end())) / 3.6e6;
        evaluated e = simulated_candidate({.strategy = resilience_strategy::redundant_computation, .offer = offer.name,
                                           .instances = l.instances, .pipelines = l.pipelines},
                                          std::move(rc_times), std::move(rc_costs), job, static_cast<double>(f.target_steps) * fastest_step_h);
        e.candidate.note = runs + "Bamboo's rules";
        cmp.all.push_back(std::move(e));
    }
    if (fallback) {
        const deadline_job& tick = fallback->job();
        evaluated e = simulated_candidate({.strategy = resilience_strategy::spot_with_fallback, .offer = offer.name,
                                           .instances = l.instances, .pipelines = l.pipelines},
                                          std::move(fb_times), std::move(fb_costs), job, (tick.work_s + tick.changeover_s) / 3600.0);
        e.candidate.note = runs + "the default deadline policy on " + detail::format_significant(o.fallback_tick_s) +
                           " s ticks: spot while all " + std::to_string(l.instances) +
                           " instances are live, else waiting or the same layout on on-demand";
        cmp.all.push_back(std::move(e));
    }
}

/// The pipeline counts P = 1, 2, ... an offer's quota holds (P S <= max_instances, P up to the
/// table's rows).
[[nodiscard]] inline std::int32_t pipeline_counts(const resilience_job& job, const resilience_offer& offer) {
    std::int32_t n = 0;
    while (n < static_cast<std::int32_t>(job.workload.step_ms.size()) && (n + 1) * job.workload.stages <= offer.max_instances) ++n;
    return n;
}

/// The runs the comparison simulates when no budget stops it: per offer and pipeline layout,
/// `samples` for redundant computation and as many for the fallback.
[[nodiscard]] inline std::int64_t planned_simulations(const resilience_request& request) {
    const resilience_options& o = request.options;
    const std::int64_t per_layout = std::int64_t{o.samples} * ((o.redundant_computation ? 1 : 0) + (o.spot_with_fallback ? 1 : 0));
    std::int64_t total = 0;
    for (const resilience_offer& offer : request.offers) total += per_layout * pipeline_counts(request.job, offer);
    return total;
}

/// Every strategy on one offer, within the budget: on-demand on each pipeline layout the quota
/// holds (P S <= max_instances, P up to the table's rows), checkpoint-restart on the workload's
/// on-demand layout when the quota holds it, then redundant computation and the fallback on each
/// layout. Returns false when the budget stopped the comparison before the offer's first
/// configuration, or before one of its exact candidates.
[[nodiscard]] inline bool evaluate_offer(comparison& cmp, const resilience_request& request, const resilience_offer& offer) {
    const resilience_job& job = request.job;
    const resilience_options& o = request.options;
    const job_figures f = figures_of(job, offer);
    const auto horizon_ms = static_cast<std::int64_t>(std::ceil(job.deadline_h * o.horizon_deadlines * 3.6e6));
    const bamboo_options b = simulation_options(job, offer, f, o, horizon_ms);
    if (!cmp.within_budget(0)) return false;
    std::vector<pipeline_layout> layouts;
    for (std::int32_t pipelines = 1; pipelines <= pipeline_counts(job, offer); ++pipelines) layouts.push_back(layout_of(b, pipelines));
    for (const pipeline_layout& l : layouts) {
        if (!cmp.within_budget(0)) return false;
        cmp.all.push_back(on_demand_candidate(job, offer, f, l));
    }
    if (o.checkpoint_restart && f.on_demand_instances <= offer.max_instances && std::isfinite(sampling::rate_of(offer.preemption))) {
        if (!cmp.within_budget(0)) return false;
        cmp.all.push_back(checkpoint_candidate(job, offer, f, o, horizon_ms));
    }
    const std::int64_t runs = std::int64_t{o.samples} * ((o.redundant_computation ? 1 : 0) + (o.spot_with_fallback ? 1 : 0));
    if (runs == 0) return true;
    for (const pipeline_layout& l : layouts) {
        if (!cmp.within_budget(runs)) break;
        simulate_pipelines(cmp, request, offer, f, b, l);
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
/// progress(done, planned), when given, is called on this thread after each simulated run, with
/// the runs planned when no budget stops the comparison (for a caller's progress bar).
[[nodiscard]] inline resilience_result solve(const resilience_request& request, std::function<void(std::int64_t, std::int64_t)> progress) {
    namespace dr = detail::resilience;
    request.validate();
    dr::comparison cmp(request.options.budget);
    cmp.planned = dr::planned_simulations(request);
    cmp.progress = std::move(progress);
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

/// The same, without progress reports.
[[nodiscard]] inline resilience_result solve(const resilience_request& request) { return solve(request, {}); }

}  // namespace dnnplan
