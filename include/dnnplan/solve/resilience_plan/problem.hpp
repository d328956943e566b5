#pragma once
// The resilience planner's request and result (solve/resilience_plan/solve.hpp): a job (a pipeline
// workload, its work, a deadline and the probability of meeting it) and a market (instance offers with
// spot and on-demand prices and a preemption process each); the answer is the cheapest expected
// cost among on-demand, spot with checkpoint-restart, spot with Bamboo's redundant computation
// and spot with an on-demand fallback (the runtime deadline policy) whose probability of meeting
// the deadline is at least q.
// docs/solvers/resilience_plan.md.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/bamboo_workload.hpp>
#include <dnnplan/preemption/sampling.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace dnnplan {

enum class resilience_strategy {
    on_demand,              ///< P pipelines of S instances (the spot strategies' layout) on on-demand instances: no preemption
    checkpoint_restart,     ///< the workload's on-demand layout on spot instances, checkpointing at the best interval
    redundant_computation,  ///< Bamboo: P pipelines of S spot instances with redundant computation
    spot_with_fallback,     ///< the runtime deadline policy on P pipelines of S instances: spot, waiting or on-demand, tick by tick
};

template <>
struct enum_text<resilience_strategy> {
    static constexpr std::array<enum_name<resilience_strategy>, 4> names{{
        {resilience_strategy::on_demand, "on_demand"},
        {resilience_strategy::checkpoint_restart, "checkpoint_restart"},
        {resilience_strategy::redundant_computation, "redundant_computation"},
        {resilience_strategy::spot_with_fallback, "spot_with_fallback"},
    }};
};

/// One instance type of the market.
struct resilience_offer {
    std::string name{};
    double spot_usd_per_h = 0.0;
    double on_demand_usd_per_h = 0.0;
    /// Step times are the workload's divided by it (1: the instance its table was measured on).
    double speed = 1.0;
    std::int32_t max_instances = 64;  ///< the quota
    preemption_process_variant preemption = poisson_preemption{};

    void validate(std::string_view path) const {
        const std::string p = detail::field_prefix(path);
        if (name.empty()) throw invalid_input(p + "name", "\"\"", "a non-empty name");
        detail::require_positive(p + "spot_usd_per_h", spot_usd_per_h);
        detail::require_positive(p + "on_demand_usd_per_h", on_demand_usd_per_h);
        detail::require_positive(p + "speed", speed);
        detail::require_at_least(p + "max_instances", max_instances, 1);
        detail::sampling::validate(preemption, p + "preemption");
    }
};

/// The job: a pipeline workload in Bamboo's terms (stages, step time by pipelines, samples per
/// step, and an on-demand layout: Bamboo's baseline, which checkpoint-restart runs; on-demand and
/// the fallback run the pipeline layouts), the samples to train, the deadline and the
/// probability of meeting it, and the checkpoint-restart costs.
struct resilience_job {
    bamboo_workload_spec workload = bamboo_workload_preset(bamboo_workload::gpt2);
    double work_samples = 0.0;
    double deadline_h = 0.0;
    double probability = 0.9;   ///< q in (0, 1]
    double checkpoint_h = 0.0;  ///< delta: writing one checkpoint (also part of the fallback's changeover)
    double restart_h = 0.0;     ///< R: restarting from a checkpoint once the instances are back (also part of it)

    void validate(std::string_view path = "job") const {
        const std::string p = detail::field_prefix(path);
        workload.validate(p + "workload");
        detail::require_positive(p + "work_samples", work_samples);
        detail::require_positive(p + "deadline_h", deadline_h);
        if (!(probability > 0.0 && probability <= 1.0))
            throw invalid_input(p + "probability", detail::format_number(probability), "a probability in (0, 1]");
        detail::require_positive(p + "checkpoint_h", checkpoint_h);
        detail::require_non_negative(p + "restart_h", restart_h);
    }
};

struct resilience_options {
    /// Realisations of each spot configuration's preemptions: seeds 1..samples, or for a trace
    /// that many start times spread over it. The estimates' error shrinks as 1 / sqrt(samples).
    std::int32_t samples = 200;
    /// The simulated horizon, as a multiple of the deadline: a run not finished by then counts as
    /// finishing later than every finished one (the time and cost intervals say "beyond").
    double horizon_deadlines = 3.0;
    std::int64_t instance_ready_ms = 45'000;  ///< an added instance is ready after it (Bamboo's 45 s)
    /// The fallback's tick (the deadline policy's gap g, s): the policy sees the live instances and
    /// decides every tick; every tick it runs is billed in full. 60 s: shorter than a changeover
    /// (delta + R + instance_ready_ms) and about a lost instance's replacement, so that short
    /// outages are seen; a 6 h deadline is 360 ticks.
    double fallback_tick_s = 60.0;
    /// The spot strategies evaluated (on-demand is always: it is the reference).
    bool checkpoint_restart = true, redundant_computation = true, spot_with_fallback = true;
    /// max_evaluations: simulated runs at most (limit samples); max_nodes: configurations
    /// evaluated (limit nodes); max_time_s (limit time); 0: no limit. Checked before each
    /// configuration: once one is reached, the rest are not evaluated.
    search_budget budget{.max_nodes = 0, .max_evaluations = 100'000, .max_time_s = 0.0};

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        detail::require_at_least(p + "samples", samples, 1);
        if (!(horizon_deadlines >= 1.0) || !std::isfinite(horizon_deadlines))
            throw invalid_input(p + "horizon_deadlines", detail::format_number(horizon_deadlines), "a finite number >= 1");
        detail::require_at_least(p + "instance_ready_ms", instance_ready_ms, 0);
        if (!(fallback_tick_s >= 1.0) || !std::isfinite(fallback_tick_s))
            throw invalid_input(p + "fallback_tick_s", detail::format_number(fallback_tick_s), "a finite number of seconds >= 1");
        budget.validate(p + "budget");
    }
};

struct resilience_request {
    resilience_job job{};
    std::vector<resilience_offer> offers{};
    resilience_options options{};

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        job.validate(p + "job");
        if (offers.empty()) throw invalid_input(p + "offers", "[]", "at least one instance offer");
        for (std::size_t i = 0; i < offers.size(); ++i) offers[i].validate(p + "offers[" + std::to_string(i) + "]");
        options.validate(p + "options");
    }
};

/// One configuration and what it is expected to do.
struct resilience_candidate {
    resilience_strategy strategy = resilience_strategy::on_demand;
    std::string offer{};
    std::int32_t instances = 0;                 ///< requested: P S, or N for checkpoint-restart
    std::int32_t pipelines = 0;                 ///< P; 0 for checkpoint-restart
    std::optional<double> checkpoint_interval_h{};  ///< checkpoint-restart
    double p_meet_deadline = 0.0;               ///< P(T <= D)
    double p_error = 0.0;                       ///< its 95% half width (simulated) or error bound (exact)
    std::optional<double> expected_h{};         ///< E[T]; none: some runs end beyond the horizon
    estimate_interval time_h{};                 ///< 95% interval of T (2.5% and 97.5% quantiles)
    std::optional<double> expected_usd{};       ///< E[cost]
    estimate_interval usd{};
    std::optional<double> samples_per_usd{};    ///< work / E[cost]: the value
    bool meets_probability = false;             ///< p_meet_deadline >= q
    std::string note{};                         ///< how it was evaluated; for a loser, why it lost
    friend bool operator==(const resilience_candidate&, const resilience_candidate&) = default;
};

struct resilience_details {
    /// The best configuration of each strategy (by expected cost among those meeting q, else by
    /// probability), with why it lost when it did.
    std::vector<resilience_candidate> strategies{};
    double best_probability = 0.0;  ///< the highest P(T <= D) of any configuration
    std::int64_t simulations = 0;
    friend bool operator==(const resilience_details&, const resilience_details&) = default;
};

/// feasible: the cheapest expected cost with P(T <= D) >= q among the configurations evaluated
/// (objective_value = its expected cost; bound none: nothing is proven the best); its figures are
/// exact (on-demand; checkpoint-restart's analytic model) or estimated (estimate: the 95% interval
/// of the expected cost over the simulated runs). no_plan_found: no configuration reaches q (an
/// estimate short of q proves nothing; best_effort: the configuration of highest P(T <= D)).
/// infeasible: proven that none can (each one's time without preemptions is over the deadline, or
/// its exact P(T <= D) is below q). limit: the budget that ended the comparison, if one did.
using resilience_result = solve_result<resilience_candidate, resilience_details>;

}  // namespace dnnplan
