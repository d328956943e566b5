#pragma once
// What the elastic advisor is given and what it answers (solve/elastic_advisor/advisor.hpp): the
// configurations of a parameter-server job (PS count, worker count), their measured speeds, the
// job (remaining steps, deadline, prices), the options, the request, and the result (a trial or a
// commitment, every configuration as the advisor sees it). Also the measurement table that stands
// for a cluster in the replay harness (solve/elastic_advisor/replay.hpp), and the arithmetic of
// cost and deadline both share.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/detail/format.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/ps_async_types.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// A PS training cluster: `ps` parameter servers and `workers` workers of the job's one type.
struct ps_configuration {
    std::int32_t ps = 1;
    std::int32_t workers = 1;
    friend auto operator<=>(const ps_configuration&, const ps_configuration&) = default;

    void validate(std::string_view path = "configuration") const {
        const std::string p = detail::field_prefix(path);
        detail::require_at_least(p + "ps", ps, 1);
        detail::require_at_least(p + "workers", workers, 1);
    }
};

/// "(ps 1, workers 4)": how messages and errors name a configuration.
[[nodiscard]] inline std::string to_string(const ps_configuration& c) {
    return "(ps " + std::to_string(c.ps) + ", workers " + std::to_string(c.workers) + ")";
}

/// A measured speed of a configuration.
struct configuration_speed {
    std::int32_t ps = 1;
    std::int32_t workers = 1;
    double steps_per_s = 0.0;
    [[nodiscard]] ps_configuration configuration() const noexcept { return {ps, workers}; }
    friend bool operator==(const configuration_speed&, const configuration_speed&) = default;

    void validate(std::string_view path = "measurement") const {
        configuration().validate(path);
        detail::require_positive(detail::field_prefix(path) + "steps_per_s", steps_per_s);
    }
};

namespace detail::elastic {

/// Every configuration of `list` (named `path[i]`, read through `config`) at most once.
template <class T, class Config>
void require_distinct(const std::vector<T>& list, const std::string& path, Config config) {
    std::map<ps_configuration, std::size_t> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = path + "[" + std::to_string(i) + "]";
        if (const auto [it, fresh] = seen.emplace(config(list[i]), i); !fresh)
            throw invalid_input(at, to_string(config(list[i])),
                                "a configuration listed once (also " + path + "[" + std::to_string(it->second) + "])");
    }
}

/// USD per second of running c at these prices.
[[nodiscard]] inline double usd_per_s(const ps_configuration& c, double worker_usd_per_h, double ps_usd_per_h) noexcept {
    return (c.workers * worker_usd_per_h + c.ps * ps_usd_per_h) / 3600.0;
}

/// A configuration's price per hour, workers x worker_usd_per_h + ps x ps_usd_per_h, is finite:
/// each price may be (1e308 is), and their sum then overflows a double.
inline void require_finite_price(const std::string& path, const ps_configuration& c, double worker_usd_per_h, double ps_usd_per_h) {
    if (std::isfinite(usd_per_s(c, worker_usd_per_h, ps_usd_per_h))) return;  // inf before the division by 3600
    throw invalid_input(path, std::to_string(c.workers) + " workers x " + format_number(worker_usd_per_h) + " + " + std::to_string(c.ps) +
                                  " PS x " + format_number(ps_usd_per_h) + " USD/h",
                        "a configuration whose price per hour is finite (a double)");
}

/// `time_s` is within `deadline_s`, to a relative 1e-12: times and remaining work are differences,
/// and rounding must not turn a tie into a miss. The advisor and the replay harness share it.
[[nodiscard]] inline bool within_deadline(double time_s, double deadline_s) noexcept {
    return time_s <= deadline_s * (1.0 + 1e-12);
}

}  // namespace detail::elastic

/// What the job has left to do and what it may use.
struct elastic_job {
    std::string gpu = "worker";                   ///< the worker type's name (reports only)
    double remaining_steps = 0.0;                 ///< > 0
    /// Time left from now; none: most steps per USD. <= 0: the deadline has passed, which no
    /// configuration can meet (the status is then infeasible, best_effort the fastest).
    std::optional<double> deadline_s{};
    double worker_usd_per_h = 0.0;
    double ps_usd_per_h = 0.0;
    std::vector<ps_configuration> configurations{};  ///< every configuration allowed, each once

    void validate(std::string_view path = "job") const {
        const std::string p = detail::field_prefix(path);
        detail::require_utf8(p + "gpu", gpu);
        detail::require_positive(p + "remaining_steps", remaining_steps);
        if (deadline_s) detail::require_finite(p + "deadline_s", *deadline_s);
        detail::require_positive(p + "worker_usd_per_h", worker_usd_per_h);
        detail::require_non_negative(p + "ps_usd_per_h", ps_usd_per_h);
        if (configurations.empty()) throw invalid_input(p + "configurations", "[]", "at least one configuration");
        for (std::size_t i = 0; i < configurations.size(); ++i) {
            configurations[i].validate(p + "configurations[" + std::to_string(i) + "]");
            detail::elastic::require_finite_price(p + "configurations[" + std::to_string(i) + "]", configurations[i], worker_usd_per_h,
                                                  ps_usd_per_h);
        }
        detail::elastic::require_distinct(configurations, p + "configurations", [](const ps_configuration& c) { return c; });
    }

    /// USD per second of running configuration c.
    [[nodiscard]] double usd_per_s(const ps_configuration& c) const noexcept {
        return detail::elastic::usd_per_s(c, worker_usd_per_h, ps_usd_per_h);
    }
    [[nodiscard]] bool allows(const ps_configuration& c) const {
        return std::find(configurations.begin(), configurations.end(), c) != configurations.end();
    }
    /// Finishing the remaining steps at `steps_per_s` meets the deadline (if any; never one that
    /// has passed).
    [[nodiscard]] bool meets_deadline(double steps_per_s) const noexcept {
        if (!deadline_s) return true;
        return *deadline_s > 0.0 && steps_per_s > 0.0 && detail::elastic::within_deadline(remaining_steps / steps_per_s, *deadline_s);
    }
    /// USD to finish the remaining steps with c at `steps_per_s` (+inf at a speed of 0).
    [[nodiscard]] double cost_usd(const ps_configuration& c, double steps_per_s) const noexcept {
        if (!(steps_per_s > 0.0)) return std::numeric_limits<double>::infinity();
        return remaining_steps / steps_per_s * usd_per_s(c);
    }
};

struct elastic_options {
    double trial_s = 120.0;         ///< how long a trial runs before the next decision (> 0)
    std::int32_t max_trials = 5;    ///< distinct configurations tried, at most, before committing (>= 1)
    double confidence = 0.95;       ///< of the prediction intervals, in (0, 1)
    /// A trial is worth it only if it may cut the cost of finishing by at least this fraction, in [0, 1).
    double min_gain = 0.02;
    /// The run-to-run spread of a measured speed, relative, in [0, 1): no predicted interval is
    /// narrower than the point +- it, bounds from the per-worker rules are loosened by it, and the
    /// default model reads speeds per worker that agree within it as no contention
    /// (solve/elastic_advisor/load_model.hpp).
    double speed_noise = 0.05;
    /// The default model's fitter options (ps_load_contention_model; a model of one's own may
    /// ignore them). Fewer starts than the fitter's default keep a decision under 1 ms
    /// (benchmarks/elastic.cpp).
    ps_async_fit_options fit{.solver = {.max_iterations = 200, .tolerance = 1e-10, .starts = 3, .seed = 1}};

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        detail::require_positive(p + "trial_s", trial_s);
        detail::require_at_least(p + "max_trials", max_trials, 1);
        if (!(confidence > 0.0 && confidence < 1.0))
            throw invalid_input(p + "confidence", detail::format_number(confidence), "a number in (0, 1)");
        if (!(min_gain >= 0.0 && min_gain < 1.0))
            throw invalid_input(p + "min_gain", detail::format_number(min_gain), "a number in [0, 1)");
        if (!(speed_noise >= 0.0 && speed_noise < 1.0))
            throw invalid_input(p + "speed_noise", detail::format_number(speed_noise), "a number in [0, 1)");
        fit.validate(p + "fit");
    }
};

/// The advisor's input: the job, every speed measured so far (a configuration measured more than
/// once counts with its mean), the configuration running now (if any), the options.
struct elastic_request {
    elastic_job job{};
    std::vector<configuration_speed> observations{};
    std::optional<ps_configuration> current{};
    elastic_options options{};

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        job.validate(p + "job");
        for (std::size_t i = 0; i < observations.size(); ++i) {
            const std::string at = p + "observations[" + std::to_string(i) + "]";
            observations[i].validate(at);
            if (!job.allows(observations[i].configuration()))
                throw invalid_input(at, to_string(observations[i].configuration()), "a configuration of job.configurations");
        }
        if (current) {
            current->validate(p + "current");
            if (!job.allows(*current)) throw invalid_input(p + "current", to_string(*current), "a configuration of job.configurations");
        }
        options.validate(p + "options");
    }
};

enum class elastic_action { trial, commit };

template <>
struct enum_text<elastic_action> {
    static constexpr std::array<enum_name<elastic_action>, 2> names{
        {{elastic_action::trial, "trial"}, {elastic_action::commit, "commit"}}};
};

/// What to run next: try a configuration for a trial, or commit to one until the work is done.
struct elastic_plan {
    std::int32_t ps = 1;
    std::int32_t workers = 1;
    elastic_action action = elastic_action::commit;
    std::string why{};
    [[nodiscard]] ps_configuration configuration() const noexcept { return {ps, workers}; }
    friend bool operator==(const elastic_plan&, const elastic_plan&) = default;
};

/// One configuration as the advisor sees it.
struct elastic_candidate {
    std::int32_t ps = 1;
    std::int32_t workers = 1;
    bool tried = false;
    double steps_per_s = 0.0;  ///< measured mean (tried) or the fit's prediction
    double lower = 0.0;        ///< interval of the speed; = steps_per_s when tried
    double upper = 0.0;        ///< +inf when the fit cannot bound it yet
    double time_s = 0.0;       ///< remaining steps / steps_per_s
    double cost_usd = 0.0;     ///< time_s x the configuration's price
    [[nodiscard]] ps_configuration configuration() const noexcept { return {ps, workers}; }
    friend bool operator==(const elastic_candidate&, const elastic_candidate&) = default;
};

struct elastic_details {
    std::vector<elastic_candidate> candidates{};  ///< every configuration of the job, in its order
    std::int32_t trials = 0;                      ///< distinct configurations measured
    bool model_fitted = false;                    ///< false before the first measurement
    /// The default model's fitted parameters (0 and none for a model that has no such parameters):
    double compute_s = 0.0;                       ///< fitted Z (work between exchanges), 0 unfitted
    double ps_bandwidth_bytes_per_s = 0.0;        ///< fitted B_ps per PS (for parameter_bytes S)
    double required_bandwidth_bytes_per_s = 0.0;  ///< fitted B_req
    std::vector<std::string> pinned{};            ///< parameters held by a rule, with the rule
    /// At the reference configuration (the one running, else the decision's): the PS's share of its
    /// capacity in use, X 2 S / (ps B_ps), and whether its capacity is below the workers' demand.
    double ps_utilisation = 0.0;
    bool ps_bottleneck = false;
    friend bool operator==(const elastic_details&, const elastic_details&) = default;
};

/// The advisor's answer (docs/solvers/elastic_advisor.md, "Statuses"):
///  - feasible: a decision, a trial or a commitment (the plan). objective_value = the predicted
///    cost (USD) of finishing with the plan's configuration; figures estimated from the fitted
///    model and the measurements: estimate = that cost's interval from the speed interval
///    (optimistic cost at its upper end, pessimistic at its lower end, +inf when nothing bounds
///    the speed below), samples = the measured configurations the fit rests on. The first trial
///    (nothing measured) has nothing to estimate from: exact figures, objective_value = the
///    trial's own cost (trial_s at its price), details.model_fitted false.
///  - infeasible: no configuration can meet the deadline (even at the upper end of its interval,
///    or the deadline has passed); said at once, without trials. No plan; best_effort commits to
///    the fastest configuration, to finish as early as possible.
///  - no_plan_found: nothing is predicted to meet the deadline, though some configuration may at
///    the upper end of its interval, and no trial is left that could show it; best_effort commits
///    to the fastest.
/// Never a bound (nothing is proven) nor a limit.
using elastic_result = solve_result<elastic_plan, elastic_details>;

/// Measured speeds of one job on one worker type, with the prices (the `--measurements` file): what
/// stands for the cluster in the replay harness.
struct measurement_table {
    std::string gpu{};
    double worker_usd_per_h = 0.0;
    double ps_usd_per_h = 0.0;
    std::vector<configuration_speed> measured{};  ///< each configuration once

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        detail::require_utf8(p + "gpu", gpu);
        detail::require_positive(p + "worker_usd_per_h", worker_usd_per_h);
        detail::require_non_negative(p + "ps_usd_per_h", ps_usd_per_h);
        if (measured.empty()) throw invalid_input(p + "measured", "[]", "at least one measured configuration");
        for (std::size_t i = 0; i < measured.size(); ++i) {
            measured[i].validate(p + "measured[" + std::to_string(i) + "]");
            detail::elastic::require_finite_price(p + "measured[" + std::to_string(i) + "]", measured[i].configuration(), worker_usd_per_h,
                                                  ps_usd_per_h);
        }
        detail::elastic::require_distinct(measured, p + "measured", [](const configuration_speed& m) { return m.configuration(); });
    }

    [[nodiscard]] std::optional<double> speed(const ps_configuration& c) const {
        for (const auto& m : measured)
            if (m.configuration() == c) return m.steps_per_s;
        return std::nullopt;
    }
    [[nodiscard]] std::vector<ps_configuration> configurations() const {
        std::vector<ps_configuration> out;
        for (const auto& m : measured) out.push_back(m.configuration());
        return out;
    }
    [[nodiscard]] double usd_per_s(const ps_configuration& c) const noexcept {
        return detail::elastic::usd_per_s(c, worker_usd_per_h, ps_usd_per_h);
    }
};

}  // namespace dnnplan
