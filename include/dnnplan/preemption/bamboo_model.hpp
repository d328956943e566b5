#pragma once
// The inputs and outputs of Bamboo's simulation of pipeline training with redundant computation
// on preemptible instances (Thorpe et al., "Bamboo: Making Preemptible Instances Resilient for
// Affordable Training of Large DNNs", NSDI 2023; simulator uclasystem/bamboo,
// project_pactum/simulation/simulator.py): a model's step-time table and constants (the six
// models of the final simulator), the simulation's options, and one run's figures. The
// simulation itself is preemption/bamboo_simulator.hpp; docs/models/bamboo.md.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// The models of Bamboo's final simulator.
enum class bamboo_model { gpt2, bert, resnet, gnmt, vgg, alexnet };

template <>
struct enum_text<bamboo_model> {
    static constexpr std::array<enum_name<bamboo_model>, 6> names{{
        {bamboo_model::gpt2, "gpt2"},
        {bamboo_model::bert, "bert"},
        {bamboo_model::resnet, "resnet"},
        {bamboo_model::gnmt, "gnmt"},
        {bamboo_model::vgg, "vgg"},
        {bamboo_model::alexnet, "alexnet"},
    }};
};

/// A model as Bamboo's simulator sees it: S stages per pipeline, a measured step time for P
/// pipelines (P = 1, 2, ...), the samples of one step, the local rendezvous time, and the
/// on-demand baseline it is compared with (instances x step time).
struct bamboo_model_spec {
    std::string name{};
    std::int32_t samples_per_step = 0;
    std::int32_t stages = 0;                          ///< S: one instance per stage
    std::int64_t local_rendezvous_ms = 0;
    std::vector<std::int64_t> step_ms{};              ///< [P - 1]: the step time with P pipelines
    std::int32_t on_demand_instances = 0;
    double on_demand_step_s = 0.0;
    std::int32_t random_capacity = 0;                 ///< Bamboo's desired capacity in random mode

    void validate(std::string_view path = "model") const {
        const std::string p = detail::field_prefix(path);
        if (name.empty()) throw invalid_input(p + "name", "\"\"", "a non-empty name");
        detail::require_at_least(p + "samples_per_step", samples_per_step, 1);
        detail::require_at_least(p + "stages", stages, 1);
        detail::require_at_least(p + "local_rendezvous_ms", local_rendezvous_ms, 0);
        if (step_ms.empty()) throw invalid_input(p + "step_ms", "[]", "a step time for P = 1 at least");
        for (std::size_t i = 0; i < step_ms.size(); ++i)
            detail::require_at_least([&] { return p + "step_ms[" + std::to_string(i) + "]"; }, step_ms[i], 1);
        detail::require_at_least(p + "on_demand_instances", on_demand_instances, 1);
        detail::require_positive(p + "on_demand_step_s", on_demand_step_s);
        detail::require_at_least(p + "random_capacity", random_capacity, 0);
    }
};

/// The constants of Bamboo's final simulator for `m` (simulator.py: its model blocks and the
/// <model>_simulate_step_delta tables; docs/models/bamboo.md lists them).
[[nodiscard]] inline bamboo_model_spec bamboo_model_preset(bamboo_model m) {
    switch (m) {
        case bamboo_model::gpt2: return {"gpt2", 32, 12, 20'000, {1200, 1085, 1046, 1008}, 32, 3.37, 48};
        case bamboo_model::bert: return {"bert", 264, 12, 20'000, {4310, 2390, 1805, 1450}, 20, 2.51, 48};
        case bamboo_model::resnet: return {"resnet", 384, 8, 10'000, {6100, 3200, 2400, 1600}, 20, 1.3, 32};
        case bamboo_model::gnmt: return {"gnmt", 288, 6, 10'000, {3100, 1660, 1185, 950}, 16, 0.9, 24};
        case bamboo_model::vgg: return {"vgg", 384, 6, 5'000, {9300, 4900, 3440, 2750}, 16, 2.2, 24};
        case bamboo_model::alexnet: return {"alexnet", 384, 6, 5'000, {6180, 3100, 2000, 1550}, 16, 1.6, 24};
    }
    throw invalid_input("model", "unknown", enum_expected<bamboo_model>());
}

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
    bamboo_model_spec model = bamboo_model_preset(bamboo_model::gpt2);
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
        model.validate(p + "model");
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
