#pragma once
// How good a fit is (RMSE, absolute percentage errors, R^2) and how uncertain its predictions are:
// parameter covariance of a non-linear fit from its Jacobian, and prediction intervals of a new
// observation by the delta method with a Student-t quantile (Seber and Wild, "Nonlinear
// Regression", Wiley 1989, sec. 5.1, eqs. (5.3)-(5.4); Draper and Smith, "Applied Regression
// Analysis", 3rd ed., sec. 3.3 for the linear case). docs/fit.md describes the definitions.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/least_squares.hpp>
#include <dnnplan/fit/nonlinear.hpp>
#include <dnnplan/fit/numeric_kernels.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

struct fit_quality {
    std::int64_t samples = 0;
    double rmse = 0.0;              ///< sqrt(mean((pred - obs)^2)), in the unit of the observations
    double median_ape_ratio = 0.0;  ///< median of |pred - obs| / |obs| (0.05 = 5%)
    double p90_ape_ratio = 0.0;     ///< 90th percentile of the same
    /// 1 - SSR / SST with SST = sum (obs - mean obs)^2; none when SST = 0 (every observation
    /// equal: R^2 is undefined); may be negative for predictions worse than the mean.
    std::optional<double> r_squared{};

    friend bool operator==(const fit_quality&, const fit_quality&) = default;
};

namespace detail {

/// The q-quantile of sorted values by linear interpolation between order statistics (Hyndman
/// and Fan, "Sample quantiles in statistical packages", Am. Stat. 50(4), 1996, definition 7;
/// the default of R and numpy): h = (n - 1) q, x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
[[nodiscard]] inline double sorted_quantile(const std::vector<double>& sorted, double q) noexcept {
    const double h = static_cast<double>(sorted.size() - 1) * q;
    const double lo = std::floor(h);
    const auto k = static_cast<std::size_t>(lo);
    if (k + 1 >= sorted.size()) return sorted.back();
    return sorted[k] + (h - lo) * (sorted[k + 1] - sorted[k]);
}

}  // namespace detail

/// Quality of predictions against observations (same order). Throws invalid_input naming
/// `path` when the sizes differ or are 0, and "<path>[i]" / "predicted[i]" for a value that is not
/// finite or an observation equal to 0 (its percentage error is undefined).
[[nodiscard]] inline fit_quality assess_fit(std::span<const double> observed, std::span<const double> predicted,
                                            std::string_view path = "observed") {
    if (observed.empty()) throw invalid_input(std::string(path), "0 values", "at least one observation");
    if (observed.size() != predicted.size()) {
        std::string value = std::to_string(observed.size());
        value += " values";
        std::string expected = "one per prediction (";
        expected += std::to_string(predicted.size());
        expected += " predictions)";
        throw invalid_input(std::string(path), std::move(value), std::move(expected));
    }
    const std::size_t n = observed.size();
    std::vector<double> ape(n);
    double mean = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto at = static_cast<Eigen::Index>(i);
        if (!std::isfinite(observed[i]) || observed[i] == 0.0)
            throw invalid_input(detail::indexed(path, at), detail::format_number(observed[i]),
                                "a finite non-zero number (the percentage error divides by it)");
        if (!std::isfinite(predicted[i]))
            throw invalid_input(detail::indexed("predicted", at), detail::format_number(predicted[i]), "a finite number");
        ape[i] = std::abs(predicted[i] - observed[i]) / std::abs(observed[i]);
        mean += observed[i];
    }
    mean /= static_cast<double>(n);
    double ssr = 0.0, sst = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        ssr += (predicted[i] - observed[i]) * (predicted[i] - observed[i]);
        sst += (observed[i] - mean) * (observed[i] - mean);
    }
    std::sort(ape.begin(), ape.end());
    fit_quality q;
    q.samples = static_cast<std::int64_t>(n);
    q.rmse = std::sqrt(ssr / static_cast<double>(n));
    q.median_ape_ratio = detail::sorted_quantile(ape, 0.5);
    q.p90_ape_ratio = detail::sorted_quantile(ape, 0.9);
    if (sst > 0.0) q.r_squared = 1.0 - ssr / sst;
    return q;
}

/// A prediction with the bounds of its interval.
struct interval {
    double value = 0.0;
    double lower = 0.0;
    double upper = 0.0;
};

namespace detail {

/// The statistics a fit result carries for its prediction intervals, as read back from a file:
/// the covariance is square of `parameters` rows, finite, symmetric (to a relative 1e-9), with a
/// non-negative diagonal and |c_ij| <= sqrt(c_ii c_jj) (necessary for a covariance), and its
/// entries sum to a finite number in absolute value (so a prediction's variance g' C g is finite
/// for any finite gradient of moderate size); residual_variance >= 0 or +inf; degrees of freedom
/// at most the samples the fit saw (samples minus free parameters, so fewer).
inline void validate_fit_statistics(std::string_view path, const Eigen::MatrixXd& covariance, Eigen::Index parameters,
                                    double residual_variance, std::int64_t degrees_of_freedom,
                                    const fit_quality& quality) {
    const std::string p = field_prefix(path);
    if (covariance.rows() != parameters || covariance.cols() != parameters)
        throw invalid_input(p + "covariance", std::to_string(covariance.rows()) + "x" + std::to_string(covariance.cols()),
                            "a " + std::to_string(parameters) + "x" + std::to_string(parameters) + " matrix (one row per free parameter)");
    double total = 0.0;
    for (Eigen::Index r = 0; r < parameters; ++r)
        for (Eigen::Index c = 0; c < parameters; ++c) {
            const double v = covariance(r, c);
            const std::string at = p + "covariance[" + std::to_string(r) + "][" + std::to_string(c) + "]";
            if (!std::isfinite(v)) throw invalid_input(at, format_number(v), "a finite number");
            if (r == c && v < 0.0) throw invalid_input(at, format_number(v), "a variance >= 0");
            const double mirror = covariance(c, r);
            if (std::abs(v - mirror) > 1e-9 * std::max(std::abs(v), std::abs(mirror)))
                throw invalid_input(at, format_number(v), "the entry across the diagonal (" + format_number(mirror) + "): a symmetric matrix");
            if (r != c && std::abs(v) > std::sqrt(covariance(r, r) * covariance(c, c)) * (1.0 + 1e-9))
                throw invalid_input(at, format_number(v), "at most sqrt(c_ii c_jj) in magnitude (a covariance)");
            total += std::abs(v);
        }
    if (!std::isfinite(total))
        throw invalid_input(p + "covariance", "entries whose sum overflows", "entries whose absolute sum is finite");
    if (std::isnan(residual_variance) || residual_variance < 0.0)
        throw invalid_input(p + "residual_variance", format_number(residual_variance), "a number >= 0 (or null: +inf)");
    require_at_least(p + "quality.samples", quality.samples, 0);
    if (degrees_of_freedom > quality.samples)
        throw invalid_input(p + "degrees_of_freedom", std::to_string(degrees_of_freedom),
                            "at most quality.samples (" + std::to_string(quality.samples) +
                                "): a fit has the samples minus its free parameters");
}

}  // namespace detail

/// Prediction interval of a new observation at a point where the model predicts `value`, by the
/// delta method on the linearised model (Seber and Wild 1989, eq. (5.4)):
///     var = g^T C g + s^2,  half = t_{(1 + confidence) / 2, dof} sqrt(var)
/// with g = `gradient` (d value / d parameters), C = `covariance` (parameters), s^2 =
/// `residual_variance` and the Student-t quantile of `degrees_of_freedom` (boost::math::students_t).
/// residual_space::linear: [value - half, value + half]. residual_space::log (a fit of log
/// residuals, whose C and s^2 are in log units): the interval of log(value) with gradient
/// g / value, exponentiated: [value e^-half, value e^half].
/// degrees_of_freedom <= 0 or residual_variance = +inf: nothing bounds the error, the interval is
/// (-inf, +inf) (log space: (0, +inf)); it does not pretend to a precision the data cannot give.
/// Throws invalid_input for: value not finite (or <= 0 in log space) ("value"), gradient and
/// covariance sizes differing ("covariance"), a non-finite gradient or covariance entry
/// ("gradient[j]", "covariance"), residual_variance NaN or < 0 ("residual_variance"), confidence
/// outside (0, 1) ("confidence").
[[nodiscard]] inline interval prediction_interval(double value, const Eigen::VectorXd& gradient,
                                                  const Eigen::MatrixXd& covariance, double residual_variance,
                                                  std::int64_t degrees_of_freedom, double confidence = 0.95,
                                                  residual_space space = residual_space::linear) {
    const bool log_space = space == residual_space::log;
    if (!std::isfinite(value) || (log_space && value <= 0.0))
        throw invalid_input("value", detail::format_number(value),
                            log_space ? "a finite number > 0 (log space)" : "a finite number");
    if (covariance.rows() != gradient.size() || covariance.cols() != gradient.size()) {
        std::string v = std::to_string(covariance.rows());
        v += "x";
        v += std::to_string(covariance.cols());
        std::string expected = "a square matrix of the gradient's size (";
        expected += std::to_string(gradient.size());
        expected += ")";
        throw invalid_input("covariance", std::move(v), std::move(expected));
    }
    for (Eigen::Index j = 0; j < gradient.size(); ++j)
        if (!std::isfinite(gradient(j))) detail::require_finite(detail::indexed("gradient", j), gradient(j));
    if (!covariance.allFinite()) throw invalid_input("covariance", "a non-finite entry", "finite entries");
    if (std::isnan(residual_variance) || residual_variance < 0.0)
        throw invalid_input("residual_variance", detail::format_number(residual_variance), "a number >= 0 (or +inf)");
    if (!(confidence > 0.0 && confidence < 1.0))
        throw invalid_input("confidence", detail::format_number(confidence), "a number in (0, 1)");

    const double infinity = std::numeric_limits<double>::infinity();
    if (degrees_of_freedom <= 0 || std::isinf(residual_variance))
        return {.value = value, .lower = log_space ? 0.0 : -infinity, .upper = infinity};
    const Eigen::VectorXd g = log_space ? Eigen::VectorXd(gradient / value) : gradient;
    const double spread = g.dot(covariance * g);  // NaN when it overflows both ways (inf - inf)
    const double variance = (std::isnan(spread) ? spread : std::max(0.0, spread)) + residual_variance;
    if (!std::isfinite(variance))
        throw invalid_input("covariance", "a prediction variance of " + detail::format_number(variance),
                            "a covariance and gradient whose variance g' C g is finite");
    const double half =
        detail::student_t_quantile(static_cast<double>(degrees_of_freedom), 0.5 + 0.5 * confidence) * std::sqrt(variance);
    if (log_space) return {.value = value, .lower = value * std::exp(-half), .upper = value * std::exp(half)};
    return {.value = value, .lower = value - half, .upper = value + half};
}

/// Prediction interval of a new observation y = x_row . c of a linear fit (s^2 and C of `fit`).
/// Throws invalid_input ("row") when x_row's size differs from the coefficients'.
[[nodiscard]] inline interval prediction_interval(const linear_fit& fit, const Eigen::VectorXd& x_row,
                                                  double confidence = 0.95) {
    if (x_row.size() != fit.coefficients.size()) {
        std::string expected = std::to_string(fit.coefficients.size());
        expected += " entries (one per coefficient)";
        throw invalid_input("row", std::to_string(x_row.size()) + std::string(" entries"), std::move(expected));
    }
    for (Eigen::Index j = 0; j < x_row.size(); ++j)
        if (!std::isfinite(x_row(j))) detail::require_finite(detail::indexed("row", j), x_row(j));
    return prediction_interval(x_row.dot(fit.coefficients), x_row, fit.covariance, residual_variance(fit),
                               fit.degrees_of_freedom, confidence, residual_space::linear);
}

namespace detail {

/// Parameters strictly inside their bounds (the others are held at a bound: not estimated).
[[nodiscard]] inline std::vector<Eigen::Index> free_parameters(const nonlinear_fit& fit, const parameter_bounds& bounds) {
    const parameter_bounds b = resolve_bounds(bounds, fit.parameters.size());
    std::vector<Eigen::Index> free;
    for (Eigen::Index j = 0; j < fit.parameters.size(); ++j)
        if (fit.parameters(j) > b.lower(j) && fit.parameters(j) < b.upper(j)) free.push_back(j);
    return free;
}

}  // namespace detail

/// n - p_free: residuals less parameters strictly inside their bounds.
[[nodiscard]] inline std::int64_t degrees_of_freedom(const nonlinear_fit& fit, const parameter_bounds& bounds) {
    return static_cast<std::int64_t>(fit.residuals.size()) -
           static_cast<std::int64_t>(detail::free_parameters(fit, bounds).size());
}

/// s^2 = 2 cost / (n - p_free) = RSS / dof; +infinity when dof <= 0.
[[nodiscard]] inline double residual_variance(const nonlinear_fit& fit, const parameter_bounds& bounds) {
    const std::int64_t dof = degrees_of_freedom(fit, bounds);
    if (dof <= 0) return std::numeric_limits<double>::infinity();
    return 2.0 * fit.cost / static_cast<double>(dof);
}

/// s^2 (J_F^T J_F)^+ on the free parameters F (strictly inside their bounds), 0 rows and columns
/// for parameters at a bound (Seber and Wild 1989, eq. (5.3); the pseudo-inverse leaves a
/// direction the data does not determine with zero variance rather than failing). The zero matrix
/// when dof <= 0.
[[nodiscard]] inline Eigen::MatrixXd parameter_covariance(const nonlinear_fit& fit, const parameter_bounds& bounds) {
    const Eigen::Index p = fit.parameters.size();
    Eigen::MatrixXd out = Eigen::MatrixXd::Zero(p, p);
    const std::vector<Eigen::Index> free = detail::free_parameters(fit, bounds);
    const std::int64_t dof = static_cast<std::int64_t>(fit.residuals.size()) - static_cast<std::int64_t>(free.size());
    if (dof <= 0 || free.empty()) return out;
    if (fit.jacobian.rows() != fit.residuals.size() || fit.jacobian.cols() != p)
        throw invalid_input("fit.jacobian", std::to_string(fit.jacobian.rows()) + std::string(" rows"),
                            "one row per residual and one column per parameter");
    Eigen::MatrixXd j_free(fit.jacobian.rows(), static_cast<Eigen::Index>(free.size()));
    for (std::size_t k = 0; k < free.size(); ++k) j_free.col(static_cast<Eigen::Index>(k)) = fit.jacobian.col(free[k]);
    const Eigen::MatrixXd c = (2.0 * fit.cost / static_cast<double>(dof)) * detail::unscaled_covariance(j_free);
    for (std::size_t a = 0; a < free.size(); ++a)
        for (std::size_t b = 0; b < free.size(); ++b)
            out(free[a], free[b]) = c(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b));
    return out;
}

/// Prediction interval of a new observation from a non-linear fit: value = f(fit.parameters),
/// gradient by finite_difference_gradient, covariance, s^2 and dof of `fit` and `bounds`.
/// `f(const Eigen::VectorXd& params) -> double` predicts the new point; `space` must be the one
/// the fit used. Throws as prediction_interval.
template <class Function>
[[nodiscard]] interval curve_prediction_interval(Function&& f, const nonlinear_fit& fit, const parameter_bounds& bounds,
                                                 residual_space space = residual_space::linear,
                                                 double confidence = 0.95) {
    const double value = static_cast<double>(f(fit.parameters));
    const Eigen::VectorXd gradient = finite_difference_gradient(f, fit.parameters, bounds);
    return prediction_interval(value, gradient, parameter_covariance(fit, bounds), residual_variance(fit, bounds),
                               degrees_of_freedom(fit, bounds), confidence, space);
}

}  // namespace dnnplan
