#pragma once
// Fits the Pollux step-time model (model/sync_data_parallel.hpp) to measured steps, as Pollux
// does (Qiao et al., OSDI 2021; petuum/adaptdl, adaptdl/adaptdl/goodput.py, fit_perf_params and
// _obj_fn): log-space step-time error plus the regularisers 1e-3 (gamma - 1)^2 and
// 1e-2 ((beta_n / alpha_n)^2 + (beta_r / alpha_r)^2), bounds [1e-8, inf) and gamma in [1, 10],
// start alpha = 0.1, beta = 0.01, gamma = 1.001, and Pollux's pinning of the parameters the
// data cannot identify. See docs/models/sync-data-parallel.md.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/least_squares.hpp>
#include <dnnplan/fit/nonlinear.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/model/sync_data_parallel.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// The parameter names, in the order of the parameter vector of the fit.
inline constexpr std::array<std::string_view, 7> pollux_param_names{"alpha_c_s", "beta_c_s",  "alpha_n_s", "beta_n_s",
                                                                    "alpha_r_s", "beta_r_s", "gamma"};

[[nodiscard]] inline Eigen::VectorXd to_vector(const pollux_params& p) {
    Eigen::VectorXd x(7);
    x << p.alpha_c_s, p.beta_c_s, p.alpha_n_s, p.beta_n_s, p.alpha_r_s, p.beta_r_s, p.gamma;
    return x;
}

[[nodiscard]] inline pollux_params pollux_params_from(const Eigen::VectorXd& x) noexcept {
    return {.alpha_c_s = x(0), .beta_c_s = x(1), .alpha_n_s = x(2), .beta_n_s = x(3),
            .alpha_r_s = x(4), .beta_r_s = x(5), .gamma = x(6)};
}

/// Which form of the synchronous model is fitted (docs/models/sync-data-parallel.md). Each adds
/// parameters after Pollux's seven, in this order: delta_n_s (node term), batch_exponent.
enum class sync_variant {
    pollux,                ///< Pollux's seven parameters (the paper's form; the fit's default under 25 samples)
    node_term,             ///< + delta_n_s: T_sync = alpha_n + beta_n (K - 2) + delta_n (K / N - 1) for N > 1
    batch_power,           ///< + batch_exponent: T_grad = alpha_c + beta_c m^p
    node_term_batch_power  ///< both
};

inline constexpr std::array<sync_variant, 4> all_sync_variants{sync_variant::pollux, sync_variant::node_term,
                                                              sync_variant::batch_power,
                                                              sync_variant::node_term_batch_power};

template <>
struct enum_text<sync_variant> {
    static constexpr std::array<enum_name<sync_variant>, 4> names{{
        {sync_variant::pollux, "pollux"},
        {sync_variant::node_term, "node-term"},
        {sync_variant::batch_power, "batch-power"},
        {sync_variant::node_term_batch_power, "node-term+batch-power"},
    }};
};

[[nodiscard]] constexpr bool has_node_term(sync_variant v) noexcept {
    return v == sync_variant::node_term || v == sync_variant::node_term_batch_power;
}
[[nodiscard]] constexpr bool has_batch_power(sync_variant v) noexcept {
    return v == sync_variant::batch_power || v == sync_variant::node_term_batch_power;
}

/// Parameters of a variant: 7, 8 or 9.
[[nodiscard]] constexpr Eigen::Index sync_param_count(sync_variant v) noexcept {
    return 7 + (has_node_term(v) ? 1 : 0) + (has_batch_power(v) ? 1 : 0);
}

/// The parameter names of a variant, in the order of its parameter vector.
[[nodiscard]] inline std::vector<std::string_view> sync_param_names(sync_variant v) {
    std::vector<std::string_view> names(pollux_param_names.begin(), pollux_param_names.end());
    if (has_node_term(v)) names.emplace_back("delta_n_s");
    if (has_batch_power(v)) names.emplace_back("batch_exponent");
    return names;
}

/// The parameter vector of a variant (Pollux's seven, then its extra parameters).
[[nodiscard]] inline Eigen::VectorXd to_vector(const pollux_params& p, sync_variant v) {
    Eigen::VectorXd x(sync_param_count(v));
    x.head(7) = to_vector(p);
    Eigen::Index j = 7;
    if (has_node_term(v)) x(j++) = p.delta_n_s;
    if (has_batch_power(v)) x(j++) = p.batch_exponent;
    return x;
}

/// The inverse of to_vector(p, v); parameters the variant lacks keep Pollux's values (0 and 1).
[[nodiscard]] inline pollux_params pollux_params_from(const Eigen::VectorXd& x, sync_variant v) noexcept {
    pollux_params p = pollux_params_from(x);
    Eigen::Index j = 7;
    if (has_node_term(v)) p.delta_n_s = x(j++);
    if (has_batch_power(v)) p.batch_exponent = x(j++);
    return p;
}

/// The bounds of a variant's parameters: [1e-8, inf), gamma [1, 10], batch_exponent [0.25, 4].
[[nodiscard]] inline parameter_bounds sync_param_bounds(sync_variant v) {
    const Eigen::Index count = sync_param_count(v);
    parameter_bounds b{Eigen::VectorXd::Constant(count, 1e-8),
                       Eigen::VectorXd::Constant(count, std::numeric_limits<double>::infinity())};
    b.lower(6) = 1.0;
    b.upper(6) = 10.0;
    if (has_batch_power(v)) {
        b.lower(count - 1) = 0.25;
        b.upper(count - 1) = 4.0;
    }
    return b;
}

struct sync_fit_options {
    /// The solver. Pollux runs one L-BFGS-B from its start; here start 0 is Pollux's start and
    /// the others are seeded draws from the bounds (levenberg_marquardt_options::starts).
    levenberg_marquardt_options solver{.max_iterations = 500, .tolerance = 1e-12, .starts = 4, .seed = 0};
    /// Re-weighting rounds that make the least-squares objective stationary where Pollux's
    /// RMSE + regularisers is (see fit_sync_data_parallel). >= 1.
    std::int32_t reweighting_rounds = 3;
    double gamma_weight = 1e-3;        ///< Pollux's 1e-3 (gamma - 1)^2
    double retrogression_weight = 1e-2;  ///< Pollux's 1e-2 ((beta_n/alpha_n)^2 + (beta_r/alpha_r)^2)
    /// The model form. None (the default): chosen among the four by 5-fold cross-validation on the
    /// samples themselves (select_sync_variant; training data only), when there are at least
    /// auto_variant_min_samples of them, Pollux's form otherwise. docs/fidelity.md has the figures
    /// that made this the default. node_term also regularises delta_n / alpha_n with
    /// retrogression_weight, batch_power (p - 1)^2 with exponent_weight (like gamma's).
    std::optional<sync_variant> variant{};
    /// The fewest samples for which the default chooses the form by cross-validation (5 folds of at
    /// least 5 samples each).
    static constexpr std::size_t auto_variant_min_samples = 25;
    double exponent_weight = 1e-3;

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        solver.validate(p + "solver");
        detail::require_at_least(p + "reweighting_rounds", reweighting_rounds, 1);
        detail::require_non_negative(p + "gamma_weight", gamma_weight);
        detail::require_non_negative(p + "retrogression_weight", retrogression_weight);
        detail::require_non_negative(p + "exponent_weight", exponent_weight);
    }
};

/// A fitted synchronous model and what its prediction intervals need. Covariance, residual
/// variance and degrees of freedom are those of log step time (the fit's residual space).
struct sync_fit_result {
    pollux_params params{};
    sync_variant variant = sync_variant::pollux;
    std::vector<std::string> pinned{};  ///< names (sync_param_names(variant)) held by a pinning rule
    fit_quality quality{};              ///< of step time (seconds) on the training samples
    /// sync_param_count(variant) squared (7 x 7 for Pollux), parameter order of sync_param_names.
    Eigen::MatrixXd covariance = Eigen::MatrixXd::Zero(7, 7);
    double residual_variance = 0.0;     ///< s^2 of log step time
    std::int64_t degrees_of_freedom = 0;
    fit_status status = fit_status::converged;
    std::int32_t iterations = 0;

    [[nodiscard]] bool is_pinned(std::string_view name) const noexcept {
        return std::find(pinned.begin(), pinned.end(), name) != pinned.end();
    }

    /// The bounds of the fit (sync_param_bounds(variant)), pinned parameters held at their value.
    [[nodiscard]] parameter_bounds bounds() const {
        parameter_bounds b = sync_param_bounds(variant);
        const Eigen::VectorXd x = to_vector(params, variant);
        const auto names = sync_param_names(variant);
        for (Eigen::Index j = 0; j < x.size(); ++j)
            if (is_pinned(names[static_cast<std::size_t>(j)])) b.lower(j) = b.upper(j) = x(j);
        return b;
    }

    void validate(std::string_view path = "fit") const {
        const std::string p = detail::field_prefix(path);
        params.validate(p + "params");
        // A variant without a parameter keeps Pollux's value of it: nothing silently ignored.
        if (!has_node_term(variant) && params.delta_n_s != 0.0)
            throw invalid_input(p + "params.delta_n_s", detail::format_number(params.delta_n_s),
                                "0 for the variant without the node term");
        if (!has_batch_power(variant) && params.batch_exponent != 1.0)
            throw invalid_input(p + "params.batch_exponent", detail::format_number(params.batch_exponent),
                                "1 for the variant without the batch power");
        const auto names = sync_param_names(variant);
        for (std::size_t i = 0; i < pinned.size(); ++i)
            if (std::find(names.begin(), names.end(), pinned[i]) == names.end()) {
                std::string expected = "one of";
                for (std::size_t j = 0; j < names.size(); ++j) {
                    expected += j == 0 ? " " : ", ";
                    expected += names[j];
                }
                throw invalid_input(p + "pinned[" + std::to_string(i) + "]", '"' + pinned[i] + '"', expected);
            }
        detail::validate_fit_statistics(path, covariance, sync_param_count(variant), residual_variance, degrees_of_freedom,
                                        quality);
    }
};

namespace detail::sync_fit {

/// Pollux's pinning rules (goodput.py fit_perf_params), in its order. `compute_s` is the
/// compute part of each sample (step - sync when the sample says, else the step).
struct pinning {
    std::array<bool, 9> pinned{};  ///< Pollux's seven, then delta_n_s, batch_exponent
    std::array<double, 9> value{};
};

[[nodiscard]] inline pinning pin(std::span<const sync_step_sample> samples) {
    constexpr double floor = 1e-8;
    pinning out;
    std::set<double> batches;
    bool multi_node = false, single_node_multi_replica = false, above_two = false;
    std::set<double> multi_node_density;  // K / N of the multi-node samples
    double compute_sum = 0.0;
    for (const auto& s : samples) {
        batches.insert(s.shape.local_batch);
        multi_node = multi_node || s.shape.nodes > 1;
        single_node_multi_replica = single_node_multi_replica || (s.shape.nodes == 1 && s.shape.replicas > 1);
        above_two = above_two || s.shape.replicas > 2;
        if (s.shape.nodes > 1)
            multi_node_density.insert(static_cast<double>(s.shape.replicas) / static_cast<double>(s.shape.nodes));
        compute_sum += s.sync_time_s ? std::max(s.step_time_s - *s.sync_time_s, 0.0) : s.step_time_s;
    }
    const auto hold = [&](std::size_t j, double v) {
        out.pinned[j] = true;
        out.value[j] = v;
    };
    // "Fix alpha_c if only observed a single local batch size": alpha_c = mean compute time / 2,
    // beta_c stays free and takes the rest.
    if (batches.size() == 1) hold(0, std::max(compute_sum / static_cast<double>(samples.size()) / 2.0, floor));
    // "Fix alpha_n and beta_n if no multi-node observations" (at the lower bound).
    if (!multi_node) {
        hold(2, floor);
        hold(3, floor);
    }
    // "Fix alpha_r and beta_r if no single-node/multi-replica observations."
    if (!single_node_multi_replica) {
        hold(4, floor);
        hold(5, floor);
    }
    // "Fix beta_n and beta_r if no replicas > 2."
    if (!above_two) {
        hold(3, floor);
        hold(5, floor);
    }
    // The variants' own rules: the node term needs multi-node samples at two or more replicas per
    // node K / N (with one value it is a constant alpha_n absorbs); a power law with an offset
    // needs three distinct local batches (two give a line through any p).
    if (multi_node_density.size() < 2) hold(7, floor);
    if (batches.size() < 3) hold(8, 1.0);
    return out;
}

/// The start and bounds of a variant's parameter vector, pinned parameters held at their value by
/// equal bounds, with the names of the pinned and of the free ones.
struct start_point {
    Eigen::VectorXd initial;
    parameter_bounds bounds;
    std::vector<std::string> pinned;
    std::string free_names;  ///< ", "-separated
    std::size_t free_count = 0;
};

[[nodiscard]] inline start_point pinned_start(const pinning& pins, sync_variant variant) {
    const Eigen::Index count = sync_param_count(variant);
    const auto names = sync_param_names(variant);
    start_point out;
    out.initial = Eigen::VectorXd(count);
    out.initial.head(7) << 0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001;  // goodput.py: [1e-1, 1e-2] * 3 + [1 + 1e-3]
    // The variants' extra parameters start at Pollux's form: delta_n = 1e-2 (like beta), p = 1.
    std::vector<std::size_t> rule;  // index into pins for each parameter of the vector
    for (std::size_t j = 0; j < 7; ++j) rule.push_back(j);
    if (has_node_term(variant)) {
        out.initial(static_cast<Eigen::Index>(rule.size())) = 0.01;
        rule.push_back(7);
    }
    if (has_batch_power(variant)) {
        out.initial(static_cast<Eigen::Index>(rule.size())) = 1.0;
        rule.push_back(8);
    }
    out.bounds = sync_param_bounds(variant);
    for (std::size_t j = 0; j < names.size(); ++j) {
        const auto at = static_cast<Eigen::Index>(j);
        if (pins.pinned[rule[j]]) {
            out.initial(at) = out.bounds.lower(at) = out.bounds.upper(at) = pins.value[rule[j]];
            out.pinned.emplace_back(names[j]);
        } else {
            if (!out.free_names.empty()) out.free_names += ", ";
            out.free_names += names[j];
        }
    }
    out.free_count = names.size() - out.pinned.size();
    return out;
}

/// The least-squares form of Pollux's objective (see fit_sync_form): the weighted log step-time
/// errors, then reg1, reg2 and one regulariser per extra parameter of the variant.
struct regularised_residuals {
    std::span<const sync_step_sample> samples;
    Eigen::VectorXd log_observed;
    sync_variant variant = sync_variant::pollux;
    double reg_gamma = 0.0;
    double reg_retro = 0.0;
    double reg_exponent = 0.0;

    regularised_residuals(std::span<const sync_step_sample> s, const sync_fit_options& options, sync_variant v)
        : samples(s), log_observed(static_cast<Eigen::Index>(s.size())), variant(v),
          reg_gamma(std::sqrt(2.0 * options.gamma_weight)), reg_retro(std::sqrt(2.0 * options.retrogression_weight)),
          reg_exponent(std::sqrt(2.0 * options.exponent_weight)) {
        for (Eigen::Index i = 0; i < log_observed.size(); ++i)
            log_observed(i) = std::log(samples[static_cast<std::size_t>(i)].step_time_s);
    }

    [[nodiscard]] Eigen::Index data_count() const noexcept { return log_observed.size(); }
    /// n data residuals, the 3 of Pollux's regularisers, one per extra parameter.
    [[nodiscard]] Eigen::Index count() const noexcept { return data_count() + 3 + (sync_param_count(variant) - 7); }

    void evaluate(const Eigen::VectorXd& x, double weight, Eigen::VectorXd& out) const {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const Eigen::Index n = data_count();
        const pollux_params p = pollux_params_from(x, variant);
        for (Eigen::Index i = 0; i < n; ++i) {
            const double t = pollux_step_time_s(p, samples[static_cast<std::size_t>(i)].shape);
            out(i) = t > 0.0 && std::isfinite(t) ? weight * (std::log(t) - log_observed(i)) : nan;
        }
        out(n) = reg_gamma * (p.gamma - 1.0);
        out(n + 1) = reg_retro * p.beta_n_s / p.alpha_n_s;
        out(n + 2) = reg_retro * p.beta_r_s / p.alpha_r_s;
        Eigen::Index r = n + 3;
        if (has_node_term(variant)) out(r++) = reg_retro * p.delta_n_s / p.alpha_n_s;
        if (has_batch_power(variant)) out(r++) = reg_exponent * (p.batch_exponent - 1.0);
    }
};

/// The last round's fit and the data weight w it used.
struct reweighted_fit {
    nonlinear_fit fit;
    double weight = 1.0;
};

/// `options.reweighting_rounds` rounds of bounded least squares, the first with w^2 = 1 / n, each
/// next one with w^2 = 1 / (n RMSE) from the round before and starting from its solution.
[[nodiscard]] inline reweighted_fit fit_reweighted(const regularised_residuals& objective, const start_point& start,
                                                   const sync_fit_options& options) {
    const Eigen::Index n = objective.data_count();
    double weight = 1.0 / std::sqrt(static_cast<double>(n));
    reweighted_fit out{.fit = {}, .weight = weight};
    Eigen::VectorXd x0 = start.initial;
    for (std::int32_t round = 0; round < options.reweighting_rounds; ++round) {
        const auto residual = [&](const Eigen::VectorXd& x, Eigen::VectorXd& r) { objective.evaluate(x, weight, r); };
        levenberg_marquardt_options solver = options.solver;
        if (round > 0) solver.starts = 1;  // later rounds refine the previous round's best
        out.fit = bounded_least_squares(residual, objective.count(), x0, start.bounds, solver);
        out.weight = weight;
        x0 = out.fit.parameters;
        const double rmse = std::sqrt(out.fit.residuals.head(n).squaredNorm() / (weight * weight) / static_cast<double>(n));
        weight = 1.0 / std::sqrt(static_cast<double>(n) * std::max(rmse, 1e-6));
    }
    return out;
}

/// Intervals: the unweighted log residuals of the data alone (the regularisers are a prior
/// preference, not observations).
inline void store_data_statistics(sync_fit_result& out, const reweighted_fit& last, Eigen::Index n,
                                  const parameter_bounds& bounds) {
    nonlinear_fit data;
    data.parameters = last.fit.parameters;
    data.residuals = last.fit.residuals.head(n) / last.weight;
    data.jacobian = last.fit.jacobian.topRows(n) / last.weight;
    data.cost = 0.5 * data.residuals.squaredNorm();
    out.covariance = parameter_covariance(data, bounds);
    out.residual_variance = residual_variance(data, bounds);
    out.degrees_of_freedom = degrees_of_freedom(data, bounds);
}

}  // namespace detail::sync_fit

namespace detail {

/// fit_sync_data_parallel for one model form (`variant`):
/// Fits pollux_params to `samples`. The objective, as least squares over n + 3 residuals:
///   r_i = w (log T_pred(x_i) - log T_i)          i < n (log step time, goodput.py err1)
///   sqrt(2 * 1e-3) (gamma - 1)                  (reg1)
///   sqrt(2 * 1e-2) beta_n / alpha_n,  sqrt(2 * 1e-2) beta_r / alpha_r   (reg2)
/// so that 0.5 ||r||^2 = 0.5 w^2 sum_i e_i^2 + reg1 + reg2. Pollux minimises RMSE + reg1 + reg2;
/// with w^2 = 1 / (n RMSE*) the gradient of the data term equals that of RMSE at RMSE = RMSE*,
/// so re-fitting with w from the previous round's RMSE (`reweighting_rounds` rounds, the first
/// with w^2 = 1 / n) stops where Pollux's objective is stationary. Pollux's second term (error of
/// a separately measured compute time) is not used: a trace's sync_time overlaps compute and does
/// not give it. Pinned parameters (Pollux's rules) are held at their value by equal bounds.
/// options.variant adds the variants' parameters (sync_variant) with one regulariser each:
///   sqrt(2 * 1e-2) delta_n / alpha_n (like Pollux's reg2), sqrt(2 * 1e-3) (p - 1) (like reg1),
/// and their pinning rules: delta_n at 1e-8 unless multi-node samples show two or more values of
/// K / N, p = 1 with fewer than
/// three distinct local batches. sync_variant::pollux is the fit above, unchanged.
/// Throws invalid_input for bad options or samples ("samples[i]..."), and for fewer samples than
/// free parameters ("samples": how many are needed).
[[nodiscard]] inline sync_fit_result fit_sync_form(std::span<const sync_step_sample> samples, const sync_fit_options& options,
                                                   const sync_variant variant) {
    namespace sf = detail::sync_fit;
    options.validate("options");
    require_samples("samples", samples.size(), 1, "the synchronous data-parallel model");
    for (std::size_t i = 0; i < samples.size(); ++i) samples[i].validate("samples[" + std::to_string(i) + "]");

    sf::start_point start = sf::pinned_start(sf::pin(samples), variant);
    std::string what = "the ";
    what += std::to_string(start.free_count);
    what += " parameters this data leaves free (";
    what += start.free_names;
    what += ")";
    require_samples("samples", samples.size(), start.free_count, what);

    const sf::regularised_residuals objective(samples, options, variant);
    const sf::reweighted_fit last = sf::fit_reweighted(objective, start, options);

    sync_fit_result out;
    out.params = pollux_params_from(last.fit.parameters, variant);
    out.variant = variant;
    out.pinned = std::move(start.pinned);
    out.status = last.fit.status;
    out.iterations = last.fit.iterations;
    sf::store_data_statistics(out, last, objective.data_count(), start.bounds);

    std::vector<double> observed(samples.size()), predicted(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
        observed[i] = samples[i].step_time_s;
        predicted[i] = pollux_step_time_s(out.params, samples[i].shape);
    }
    out.quality = assess_fit(observed, predicted, "samples");
    return out;
}

}  // namespace detail

/// The predicted step time of `shape` with its prediction interval (delta method on log step
/// time, fit/quality.hpp prediction_interval in residual_space::log). Throws invalid_input for a
/// bad shape or fit, or confidence outside (0, 1).
[[nodiscard]] inline interval predict_step_time_with_interval(const sync_fit_result& fit, const sync_shape& shape,
                                                              double confidence = 0.95) {
    shape.validate("shape");
    fit.validate("fit");
    const auto f = [&](const Eigen::VectorXd& x) { return pollux_step_time_s(pollux_params_from(x, fit.variant), shape); };
    const Eigen::VectorXd x = to_vector(fit.params, fit.variant);
    const Eigen::VectorXd gradient = finite_difference_gradient(f, x, fit.bounds());
    return prediction_interval(f(x), gradient, fit.covariance, fit.residual_variance, fit.degrees_of_freedom, confidence,
                               residual_space::log);
}

// ---- choosing a variant on the training rows alone ------------------------------------------

struct sync_selection_options {
    std::vector<sync_variant> candidates{all_sync_variants.begin(), all_sync_variants.end()};
    std::int32_t folds = 5;            ///< k of the k-fold cross-validation, >= 2
    std::uint64_t seed = 0;            ///< of the fold assignment (Fisher-Yates, std::mt19937_64)
    /// A candidate with more parameters than the best so far must lower the cross-validated
    /// median APE by more than this (a ratio: 0.001 = 0.1 percentage point) to be chosen.
    double min_improvement_ratio = 0.001;
    sync_fit_options fit{};            ///< fit.variant is ignored: each candidate's is used

    void validate(std::string_view path = "selection") const {
        const std::string p = detail::field_prefix(path);
        if (candidates.empty()) throw invalid_input(p + "candidates", "[]", "at least one variant");
        detail::require_at_least(p + "folds", folds, 2);
        detail::require_non_negative(p + "min_improvement_ratio", min_improvement_ratio);
        fit.validate(p + "fit");
    }
};

/// One candidate's out-of-fold errors: every sample predicted by the fit on the other folds.
struct sync_variant_score {
    sync_variant variant = sync_variant::pollux;
    double cv_median_ape_ratio = 0.0;
    double cv_p90_ape_ratio = 0.0;
};

struct sync_variant_selection {
    sync_variant chosen = sync_variant::pollux;
    std::vector<sync_variant_score> scores{};  ///< in the order of the candidates
};

/// Chooses the model form by k-fold cross-validation inside `samples` (the training rows; nothing
/// else is looked at): a seeded shuffle deals the samples into `folds` folds, each candidate is
/// fitted on k - 1 folds and predicts the k-th, and its score is the median APE of all n
/// out-of-fold predictions. Candidates are visited by parameter count (stable), and one replaces
/// the best so far when its score is lower, by more than min_improvement_ratio if it has more
/// parameters. Throws invalid_input for bad options or samples, or when a fold leaves too few
/// samples to fit a candidate.
[[nodiscard]] inline sync_variant_selection select_sync_variant(std::span<const sync_step_sample> samples,
                                                                const sync_selection_options& options = {}) {
    options.validate("options");
    const auto folds = static_cast<std::size_t>(options.folds);
    require_samples("samples", samples.size(), folds, "one sample per fold");
    std::vector<std::size_t> order(samples.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937_64 engine(options.seed);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(engine() % i)]);
    std::vector<std::size_t> fold_of(samples.size());
    for (std::size_t r = 0; r < order.size(); ++r) fold_of[order[r]] = r % folds;

    sync_variant_selection out;
    std::vector<double> observed(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) observed[i] = samples[i].step_time_s;
    for (const auto variant : options.candidates) {
        sync_fit_options fit_options = options.fit;
        fit_options.variant = variant;
        std::vector<double> predicted(samples.size());
        for (std::size_t f = 0; f < folds; ++f) {
            std::vector<sync_step_sample> train;
            for (std::size_t i = 0; i < samples.size(); ++i)
                if (fold_of[i] != f) train.push_back(samples[i]);
            const auto fit = detail::fit_sync_form(train, fit_options, variant);
            for (std::size_t i = 0; i < samples.size(); ++i)
                if (fold_of[i] == f) predicted[i] = pollux_step_time_s(fit.params, samples[i].shape);
        }
        const auto q = assess_fit(observed, predicted, "samples");
        out.scores.push_back({.variant = variant, .cv_median_ape_ratio = q.median_ape_ratio, .cv_p90_ape_ratio = q.p90_ape_ratio});
    }
    std::vector<std::size_t> by_size(out.scores.size());
    for (std::size_t i = 0; i < by_size.size(); ++i) by_size[i] = i;
    std::stable_sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) {
        return sync_param_count(out.scores[a].variant) < sync_param_count(out.scores[b].variant);
    });
    std::size_t best = by_size.front();
    for (std::size_t k = 1; k < by_size.size(); ++k) {
        const auto& c = out.scores[by_size[k]];
        const double margin =
            sync_param_count(c.variant) > sync_param_count(out.scores[best].variant) ? options.min_improvement_ratio : 0.0;
        if (c.cv_median_ape_ratio < out.scores[best].cv_median_ape_ratio - margin) best = by_size[k];
    }
    out.chosen = out.scores[best].variant;
    return out;
}

/// Fits the synchronous model (detail::fit_sync_form: Pollux's objective, bounds and pinning) in
/// the form options.variant names; without one, in the form select_sync_variant chooses on the
/// samples (default selection options, the fit's other options), or Pollux's form for fewer than
/// sync_fit_options::auto_variant_min_samples samples. result.variant says which.
[[nodiscard]] inline sync_fit_result fit_sync_data_parallel(std::span<const sync_step_sample> samples,
                                                            const sync_fit_options& options = {}) {
    if (options.variant) return detail::fit_sync_form(samples, options, *options.variant);
    // Checked here, so that errors name the caller's fields (the selection fits subsets).
    options.validate("options");
    for (std::size_t i = 0; i < samples.size(); ++i) samples[i].validate("samples[" + std::to_string(i) + "]");
    if (samples.size() < sync_fit_options::auto_variant_min_samples)
        return detail::fit_sync_form(samples, options, sync_variant::pollux);
    sync_selection_options selection;
    selection.fit = options;
    return detail::fit_sync_form(samples, options, select_sync_variant(samples, selection).chosen);
}

}  // namespace dnnplan
