#pragma once
// What one run of Bamboo's simulation is asked (bamboo_options: the workload, the duration or
// target, Bamboo's timings, slowdown and prices) and what it gives (bamboo_run: Bamboo's Result,
// its status, and the series a planner follows). The simulation is preemption/bamboo_simulator.hpp;
// docs/models/bamboo.md, "Options" and "Statuses and outputs".

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/bamboo_workload.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// What a rendezvous does when it forms more pipelines than the step table has rows: stop (what
/// Bamboo's simulator does, with an error that ends its run; here the run's status no_step_time)
/// or use the last row (more pipelines step no faster; an extension, not Bamboo's).
enum class beyond_step_table { stop, use_last_row };

template <>
struct enum_text<beyond_step_table> {
    static constexpr std::array<enum_name<beyond_step_table>, 2> names{{
        {beyond_step_table::stop, "stop"},
        {beyond_step_table::use_last_row, "use_last_row"},
    }};
};

struct bamboo_options {
    bamboo_workload_spec workload = bamboo_workload_preset(bamboo_workload::gpt2);
    /// Events after it are not processed (Bamboo's CLI: 12 h); none: until target_steps.
    std::optional<std::int64_t> duration_ms = 43'200'000;
    /// Stop once this many steps completed (Bamboo's --generate-table: steps_per_run); none: never.
    std::optional<std::int64_t> target_steps{};
    std::int64_t instance_creation_ms = 45'000;       ///< an added instance is ready after it
    std::int64_t global_rendezvous_ms = 30'000;
    double slowdown = 1.5;                            ///< step time factor after a non-fatal loss
    double spot_usd_per_h = 0.91;                     ///< per instance, billed from add to removal
    double on_demand_usd_per_h = 3.06;                ///< per instance of the on-demand baseline
    beyond_step_table beyond_table = beyond_step_table::stop;
    /// Advance runs of steps between two events in closed form (true) or one by one (false: the
    /// reference loop, for tests). The counts are the same; the averages agree to about 1e-12.
    bool closed_form_steps = true;
    /// Fill bamboo_run::progress and bamboo_run::prices (what a planner needs to follow the run).
    bool record_series = false;

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        workload.validate(p + "workload");
        if (!duration_ms && !target_steps)
            throw invalid_input(p + "duration_ms", "none", "a duration or target_steps (else the run never ends)");
        if (duration_ms) detail::require_at_least(p + "duration_ms", *duration_ms, 0);
        if (target_steps) detail::require_at_least(p + "target_steps", *target_steps, 1);
        detail::require_at_least(p + "instance_creation_ms", instance_creation_ms, 0);
        detail::require_at_least(p + "global_rendezvous_ms", global_rendezvous_ms, 0);
        if (!(slowdown >= 1.0) || !std::isfinite(slowdown))
            throw invalid_input(p + "slowdown", detail::format_number(slowdown), "a finite number >= 1");
        detail::require_positive(p + "spot_usd_per_h", spot_usd_per_h);
        detail::require_positive(p + "on_demand_usd_per_h", on_demand_usd_per_h);
    }
};

/// How a simulation ended. completed: it ran to its duration, its target steps or the end of its
/// events; no_step_time: a rendezvous formed more pipelines than the step table has rows (with
/// beyond_step_table::stop); never_trained: no training step completed (fewer than S instances
/// were ever ready together), so there is no throughput to report.
enum class bamboo_status { completed, no_step_time, never_trained };

template <>
struct enum_text<bamboo_status> {
    static constexpr std::array<enum_name<bamboo_status>, 3> names{{
        {bamboo_status::completed, "completed"},
        {bamboo_status::no_step_time, "no_step_time"},
        {bamboo_status::never_trained, "never_trained"},
    }};
};

/// One simulation's figures (Bamboo's Result). The averages are time averages of step
/// functions: instances and USD/h over [0, last step], samples/s and value over [first
/// successful rendezvous, last step]; value is the time average of each step's samples/s over
/// its mean price (not samples_per_s / usd_per_h). Meaningful only when status == completed.
struct bamboo_run {
    bamboo_status status = bamboo_status::completed;
    std::string reason{};
    std::int64_t preemptions = 0;       ///< instances removed (any state)
    std::int64_t fatal_failures = 0;    ///< losses that forced a global restart
    std::int64_t steps = 0;             ///< training steps completed
    double average_instances = 0.0;
    double samples_per_s = 0.0;
    double usd_per_h = 0.0;
    double value = 0.0;                 ///< (samples/s) per (USD/h), time-averaged per step
    double on_demand_samples_per_s = 0.0;
    double on_demand_usd_per_h = 0.0;
    double on_demand_value = 0.0;
    double end_h = 0.0;                 ///< the last step's time
    double run_h = 0.0;                 ///< end_h minus the first successful rendezvous
    std::int64_t last_event_ms = 0;     ///< the time the event loop stopped at
    double preemption_interval_mean_h = 0.0;    ///< between consecutive removals
    double preemption_interval_stdev_h = 0.0;   ///< sample standard deviation (0 under 2 intervals)
    double lifetime_mean_h = 0.0;       ///< removed instances, and live ones up to last_event_ms
    double lifetime_median_h = 0.0;
    double lifetime_stdev_h = 0.0;      ///< sample standard deviation (0 under 2 instances)
    std::int64_t closed_form_steps = 0; ///< steps advanced in closed form (a count of work saved)
    /// With options.record_series: (time_ms, steps completed by then) after every step or run of
    /// steps (linear within a run), and (time_ms, USD/h from then on) at every change of the
    /// cluster's price (the first at 0).
    std::vector<std::pair<std::int64_t, std::int64_t>> progress{};
    std::vector<std::pair<std::int64_t, double>> prices{};
};

}  // namespace dnnplan
