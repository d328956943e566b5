#pragma once
// The elastic advisor's two extension points (docs/architecture.md, "Extending"), with the types
// they speak:
//  - elastic_throughput_model: the throughput model the advisor fits to the measured speeds and
//    predicts the others with (solve(request, model), solve/elastic_advisor/advisor.hpp). The
//    default is the load-contention PS model, ps_load_contention_model
//    (solve/elastic_advisor/load_model.hpp).
//  - elastic_policy: what the replay harness runs (replay(table, options, policy),
//    solve/elastic_advisor/replay.hpp): model_policy and dlrover_policy
//    (solve/elastic_advisor/policies.hpp).

#include <dnnplan/fit/quality.hpp>
#include <dnnplan/solve/elastic_advisor/problem.hpp>

#include <concepts>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dnnplan {

// ---- the throughput model ------------------------------------------------------------------------

/// The mean measured speed (steps/s, > 0) of every configuration measured so far: what a model is
/// fitted to (records of one configuration are not independent measurements: their mean is one).
using measured_speeds = std::map<ps_configuration, double>;

/// The PS's load at a configuration running at a speed, as a fitted model sees it (the advisor's
/// PS-bottleneck rule: with a bottleneck at the running configuration, a PS more is tried first).
struct ps_load_state {
    double utilisation = 0.0;  ///< the share of the PS's capacity in use (>= 0; 0 for a model without a PS term)
    bool bottleneck = false;   ///< the PS's capacity is below what the workers alone would ask of it
    friend bool operator==(const ps_load_state&, const ps_load_state&) = default;
};

/// A throughput model fitted to one job's measured speeds:
///  - `fit.predict(c, confidence)` -> `interval` (fit/quality.hpp): c's speed in steps/s, with a
///    `confidence` prediction interval of a new measurement, 0 <= lower <= value <= upper (lower 0:
///    nothing bounds it below; upper +inf: nothing above). Asked only for configurations not measured.
///  - `fit.ps_load_at(c, steps_per_s)` -> `ps_load_state`.
/// Requirement beyond the syntax, what the advisor's bounds rest on (a model that breaks it gets
/// intervals cut to bounds that do not hold): the speeds the model describes obey the rules of the
/// load model (model/ps_load_contention.hpp, tests/model/ps_load_contention.cpp): a worker or a PS
/// more never lowers the cluster's speed; a worker more never raises a worker's rate X / n; a
/// worker's rate never falls when workers are added with at least as many PS per worker.
template <class Fit>
concept fitted_elastic_throughput = requires(const Fit& fit, const ps_configuration& c, double steps_per_s, double confidence) {
    { fit.predict(c, confidence) } -> std::convertible_to<interval>;
    { fit.ps_load_at(c, steps_per_s) } -> std::convertible_to<ps_load_state>;
};

/// What the advisor fits: `model.fit(measured, options)` -> a `fitted_elastic_throughput`, for one
/// or more measured configurations (`options`: the request's; the default model reads `fit` and
/// `speed_noise`). Deterministic: the same speeds give the same fit.
template <class Model>
concept elastic_throughput_model = requires(const Model& model, const measured_speeds& measured, const elastic_options& options) {
    { model.fit(measured, options) } -> fitted_elastic_throughput;
};

/// The fitted parameters of the load-contention PS model, as elastic_details reports them.
struct ps_fit_parameters {
    double compute_s = 0.0;                       ///< Z, the work between two exchanges
    double ps_bandwidth_bytes_per_s = 0.0;        ///< B_ps, per PS
    double required_bandwidth_bytes_per_s = 0.0;  ///< B_req
    std::vector<std::string> pinned{};            ///< parameters held by a rule: "name: rule"
};

/// Optional: a fit that reports those parameters (`fit.parameters()`); without it the details
/// leave them at 0.
template <class Fit>
concept ps_parameter_fit = fitted_elastic_throughput<Fit> && requires(const Fit& fit) {
    { fit.parameters() } -> std::convertible_to<ps_fit_parameters>;
};

// ---- the replay policy ---------------------------------------------------------------------------

/// What a run has shown the policy: a configuration's speed and its PS CPU use (the harness's
/// proxy, solve/elastic_advisor/replay.hpp).
struct replay_observation {
    configuration_speed measured{};
    double ps_cpu_utilisation = 0.0;
};

/// What a policy sees at a decision.
struct policy_view {
    const measurement_table* table = nullptr;          ///< prices and the configurations (speeds are not for policies)
    std::vector<ps_configuration> configurations{};    ///< the space
    std::vector<replay_observation> observations{};    ///< one per period run so far, in order
    std::optional<ps_configuration> current{};
    double elapsed_s = 0.0;
    double done_steps = 0.0;
    double remaining_steps = 0.0;
    std::optional<double> deadline_left_s{};           ///< may be <= 0 once the deadline has passed
    double trial_s = 0.0;
};

/// A policy's decision: the configuration to run next, for a trial or until the work is done.
struct policy_decision {
    ps_configuration configuration{};
    bool final = false;  ///< run it until the work is done
    std::string why{};
};

/// A replay policy: called with the view at every decision (it may keep state between calls),
/// it names a configuration of view.configurations.
template <class P>
concept elastic_policy = requires(P& p, const policy_view& v) {
    { p(v) } -> std::convertible_to<policy_decision>;
};

}  // namespace dnnplan
