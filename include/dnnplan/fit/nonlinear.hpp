#pragma once
// Bounded non-linear least squares: minimise 0.5 ||r(x)||^2 subject to lower <= x <= upper by a
// Levenberg-Marquardt method (Levenberg 1944, "A method for the solution of certain non-linear
// problems in least squares", Q. Appl. Math. 2(2); Marquardt 1963, "An algorithm for
// least-squares estimation of nonlinear parameters", SIAM J. Appl. Math. 11(2)) with the damping
// update of Nielsen (1999, "Damping parameter in Marquardt's method", IMM-REP-1999-05, DTU; as in
// Madsen, Nielsen and Tingleff, "Methods for non-linear least squares problems", 2004, alg. 3.16),
// made bounded by an active set (parameters at a bound whose gradient pushes outward are held)
// and projection of the step onto the box. Jacobians by central finite differences. Seeded
// multi-start for objectives that are not convex. docs/fit.md describes the method and options.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/numeric_kernels.hpp>
#include <dnnplan/fit/least_squares.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// Box constraints lower <= x <= upper; entries may be -infinity / +infinity. Both vectors empty
/// means unbounded (any parameter count); otherwise each has one entry per parameter.
struct parameter_bounds {
    Eigen::VectorXd lower;
    Eigen::VectorXd upper;

    /// Every parameter in (-inf, +inf).
    [[nodiscard]] static parameter_bounds unbounded(Eigen::Index count) {
        return {Eigen::VectorXd::Constant(count, -std::numeric_limits<double>::infinity()),
                Eigen::VectorXd::Constant(count, std::numeric_limits<double>::infinity())};
    }
    /// Every parameter in [0, +inf).
    [[nodiscard]] static parameter_bounds non_negative(Eigen::Index count) {
        return {Eigen::VectorXd::Zero(count), Eigen::VectorXd::Constant(count, std::numeric_limits<double>::infinity())};
    }
};

/// The space in which curve_fit compares predictions with observations.
enum class residual_space {
    linear,  ///< residual_i = prediction_i - observed_i
    log,     ///< residual_i = log(prediction_i) - log(observed_i): relative errors weigh alike
};

template <>
struct enum_text<residual_space> {
    static constexpr std::array<enum_name<residual_space>, 2> names{{{residual_space::linear, "linear"}, {residual_space::log, "log"}}};
};

struct levenberg_marquardt_options {
    /// Trial steps per start (each costs one residual evaluation; an accepted one also a
    /// Jacobian, 2 evaluations per parameter). >= 1.
    std::int32_t max_iterations = 500;
    /// Stopping test: a step changes every parameter by at most tolerance * (|x_j| + tolerance),
    /// or an accepted step lowers the cost by at most tolerance * cost. In (0, 1).
    double tolerance = 1e-10;
    /// Multi-start: start 0 is `initial`; starts 1.. are drawn from the bounds with `seed`
    /// (log-uniform on [lower, upper] when 0 < lower and upper is finite, uniform when both bounds
    /// are finite, otherwise initial_j * exp(N(0,1)) kept in the bounds). >= 1.
    std::int32_t starts = 1;
    std::uint64_t seed = 0;

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        detail::require_at_least(p + "max_iterations", max_iterations, 1);
        if (!std::isfinite(tolerance) || tolerance <= 0.0 || tolerance >= 1.0)
            throw invalid_input(p + "tolerance", detail::format_number(tolerance), "a number in (0, 1)");
        detail::require_at_least(p + "starts", starts, 1);
    }
};

struct nonlinear_fit {
    Eigen::VectorXd parameters;
    Eigen::VectorXd residuals;   ///< at the solution
    double cost = 0.0;           ///< 0.5 * ||residuals||^2
    Eigen::MatrixXd jacobian;    ///< d residuals / d parameters at the solution (finite differences)
    std::int32_t iterations = 0; ///< trial steps of the best start
    std::int32_t best_start = 0; ///< which start gave the lowest cost (0 = `initial`)
    fit_status status = fit_status::converged;  ///< of the best start
    std::int64_t residual_evaluations = 0;      ///< over every start, Jacobians included
};

namespace detail {

/// Portable draws from a seeded std::mt19937_64 (the std:: distributions differ between
/// standard libraries; these do not, so a seed gives the same starts everywhere).
class fit_random {
public:
    explicit fit_random(std::uint64_t seed) : engine_(seed) {}
    double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
    double normal() {  // Box-Muller
        const double u1 = 1.0 - unit();  // (0, 1]
        const double u2 = unit();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    }

private:
    std::mt19937_64 engine_;
};

inline std::string indexed(std::string_view name, Eigen::Index j) {
    std::string s(name);
    s += "[";
    s += std::to_string(j);
    s += "]";
    return s;
}

/// The bounds with one entry per parameter (empty bounds -> unbounded), checked: sizes, no NaN,
/// lower <= upper. Fields are named "bounds.lower[j]" / "bounds.upper[j]".
[[nodiscard]] inline parameter_bounds resolve_bounds(const parameter_bounds& bounds, Eigen::Index count) {
    if (bounds.lower.size() == 0 && bounds.upper.size() == 0) return parameter_bounds::unbounded(count);
    const auto check_size = [&](const Eigen::VectorXd& v, const char* field) {
        if (v.size() == count) return;
        std::string value = std::to_string(v.size());
        value += " entries";
        std::string expected = std::to_string(count);
        expected += " entries (one per parameter), or both bounds empty for none";
        throw invalid_input(field, std::move(value), std::move(expected));
    };
    check_size(bounds.lower, "bounds.lower");
    check_size(bounds.upper, "bounds.upper");
    for (Eigen::Index j = 0; j < count; ++j) {
        if (std::isnan(bounds.lower(j)) || bounds.lower(j) == std::numeric_limits<double>::infinity())
            throw invalid_input(indexed("bounds.lower", j), format_number(bounds.lower(j)), "a number or -inf");
        if (std::isnan(bounds.upper(j)) || bounds.upper(j) == -std::numeric_limits<double>::infinity())
            throw invalid_input(indexed("bounds.upper", j), format_number(bounds.upper(j)), "a number or +inf");
        if (bounds.lower(j) > bounds.upper(j)) {
            std::string expected = "<= bounds.upper[";
            expected += std::to_string(j);
            expected += "] = ";
            expected += format_number(bounds.upper(j));
            throw invalid_input(indexed("bounds.lower", j), format_number(bounds.lower(j)), std::move(expected));
        }
    }
    return bounds;
}

/// Checks of a bounded problem; returns the resolved bounds.
[[nodiscard]] inline parameter_bounds validate_bounded_problem(Eigen::Index residual_count, const Eigen::VectorXd& initial,
                                                               const parameter_bounds& bounds,
                                                               const levenberg_marquardt_options& options) {
    options.validate("options");
    if (residual_count < 1)
        throw invalid_input("residual_count", std::to_string(residual_count), "at least one residual");
    if (initial.size() < 1) throw invalid_input("initial", "0 parameters", "at least one parameter");
    parameter_bounds b = resolve_bounds(bounds, initial.size());
    for (Eigen::Index j = 0; j < initial.size(); ++j) {
        if (!std::isfinite(initial(j)) || initial(j) < b.lower(j) || initial(j) > b.upper(j)) {
            std::string expected = "a finite number in [";
            expected += format_number(b.lower(j));
            expected += ", ";
            expected += format_number(b.upper(j));
            expected += "] (the bounds)";
            throw invalid_input(indexed("initial", j), format_number(initial(j)), std::move(expected));
        }
    }
    return b;
}

/// Calls residual(x, out) with out pre-sized; true when every entry is finite. Throws
/// invalid_input when the function changed the size of out.
template <class Residual>
bool evaluate_residual(Residual& residual, const Eigen::VectorXd& x, Eigen::VectorXd& out, Eigen::Index count,
                       std::int64_t& evaluations) {
    out.resize(count);
    residual(x, out);
    ++evaluations;
    if (out.size() != count) {
        std::string expected = "the number of residuals the function writes (";
        expected += std::to_string(out.size());
        expected += ")";
        throw invalid_input("residual_count", std::to_string(count), std::move(expected));
    }
    return out.allFinite();
}

/// Finite-difference step of parameter j: h = cbrt(eps) * max(|x_j|, 1e-8) (Nocedal and Wright,
/// "Numerical Optimization", 2nd ed., sec. 8.1: cbrt(eps) balances truncation and rounding for
/// central differences), shortened on each side to stay inside [lower, upper]. Returns the
/// forward and backward lengths actually representable.
inline std::pair<double, double> difference_steps(double x, double lower, double upper) {
    const double h = std::cbrt(std::numeric_limits<double>::epsilon()) * std::max(std::abs(x), 1e-8);
    const double forward = (std::min(x + h, upper)) - x;
    const double backward = x - (std::max(x - h, lower));
    return {forward, backward};
}

/// Column j of the Jacobian: central difference where both sides fit in the bounds (unequal
/// lengths when one side is shortened by a bound), one-sided at a bound, and one-sided from the
/// finite side when one side's residual is not finite; zero when lower == upper or no side is
/// finite.
template <class Residual>
void finite_difference_jacobian(Residual& residual, const Eigen::VectorXd& x, const Eigen::VectorXd& r0,
                                const parameter_bounds& b, Eigen::MatrixXd& jacobian, std::int64_t& evaluations) {
    const Eigen::Index m = r0.size();
    jacobian.resize(m, x.size());
    Eigen::VectorXd xs = x;
    Eigen::VectorXd rp(m), rm(m);
    for (Eigen::Index j = 0; j < x.size(); ++j) {
        const auto [hp, hm] = difference_steps(x(j), b.lower(j), b.upper(j));
        bool plus_ok = false, minus_ok = false;
        if (hp > 0.0) {
            xs(j) = x(j) + hp;
            plus_ok = evaluate_residual(residual, xs, rp, m, evaluations);
        }
        if (hm > 0.0) {
            xs(j) = x(j) - hm;
            minus_ok = evaluate_residual(residual, xs, rm, m, evaluations);
        }
        xs(j) = x(j);
        if (plus_ok && minus_ok)
            jacobian.col(j) = (rp - rm) / (hp + hm);
        else if (plus_ok)
            jacobian.col(j) = (rp - r0) / hp;
        else if (minus_ok)
            jacobian.col(j) = (r0 - rm) / hm;
        else
            jacobian.col(j).setZero();
    }
}

/// What one Levenberg-Marquardt run carries from step to step: the point, its residuals and
/// cost, the Gauss-Newton model of the cost (a = J^T J, g = J^T r) and the damping mu * D.
struct lm_state {
    Eigen::VectorXd x, r;
    double cost = 0.0;
    Eigen::MatrixXd jac, a;
    Eigen::VectorXd g, d;
    double mu = 1e-3;
    double nu = 2.0;
    bool jacobian_current = true;
};

/// The Jacobian at st.x and the Gauss-Newton model a = J^T J, g = J^T r.
template <class Residual>
void linearise(Residual& residual, lm_state& st, const parameter_bounds& b, std::int64_t& evaluations) {
    finite_difference_jacobian(residual, st.x, st.r, b, st.jac, evaluations);
    st.a.noalias() = st.jac.transpose() * st.jac;
    st.g.noalias() = st.jac.transpose() * st.r;
}

/// A scaling entry that is not positive (a column of zeros) becomes 1.
inline void floor_scaling(Eigen::VectorXd& d) noexcept {
    for (Eigen::Index j = 0; j < d.size(); ++j)
        if (!(d(j) > 0.0)) d(j) = 1.0;
}

/// Active set: a parameter on a bound whose cost gradient points out of the box is held; `free`
/// gets the others.
inline void free_parameters(const parameter_bounds& b, const Eigen::VectorXd& x, const Eigen::VectorXd& g,
                            std::vector<Eigen::Index>& free) {
    free.clear();
    for (Eigen::Index j = 0; j < x.size(); ++j) {
        const bool held = b.lower(j) == b.upper(j) || (x(j) <= b.lower(j) && g(j) > 0.0) ||
                          (x(j) >= b.upper(j) && g(j) < 0.0);
        if (!held) free.push_back(j);
    }
}

/// The projected gradient vanishes: a (bound-constrained) stationary point.
[[nodiscard]] inline bool projected_gradient_vanishes(const Eigen::VectorXd& g, const std::vector<Eigen::Index>& free) noexcept {
    bool stationary = true;
    for (const Eigen::Index j : free)
        if (g(j) != 0.0) stationary = false;
    return stationary;
}

/// x_new: st.x moved on the free parameters by the damped step, projected onto the box; st.x
/// itself (and false) when the solve fails.
inline bool damped_step(const lm_state& st, const std::vector<Eigen::Index>& free, const parameter_bounds& b,
                        Eigen::VectorXd& x_new) {
    const auto nf = static_cast<Eigen::Index>(free.size());
    Eigen::MatrixXd mf(nf, nf);
    Eigen::VectorXd gf(nf);
    for (Eigen::Index u = 0; u < nf; ++u) {
        const Eigen::Index ju = free[static_cast<std::size_t>(u)];
        gf(u) = st.g(ju);
        for (Eigen::Index v = 0; v < nf; ++v) mf(u, v) = st.a(ju, free[static_cast<std::size_t>(v)]);
        mf(u, u) += st.mu * st.d(ju);
    }
    // Damped normal equations (J_F^T J_F + mu D_F) h_F = -g_F (Marquardt 1963, eq. 2.9).
    const std::optional<Eigen::VectorXd> solved = ldlt_solve(mf, -gf);
    const bool step_ok = solved && solved->allFinite();
    const Eigen::VectorXd hf = solved ? *solved : Eigen::VectorXd();
    x_new = st.x;
    if (step_ok)
        for (Eigen::Index u = 0; u < nf; ++u) {
            const Eigen::Index ju = free[static_cast<std::size_t>(u)];
            x_new(ju) = std::clamp(st.x(ju) + hf(u), b.lower(ju), b.upper(ju));
        }
    return step_ok;
}

/// The stopping test on the step: every parameter moves by at most tol * (|x_j| + tol).
[[nodiscard]] inline bool step_is_small(const Eigen::VectorXd& s, const Eigen::VectorXd& x, double tol) noexcept {
    bool small = true;
    for (Eigen::Index j = 0; j < s.size(); ++j)
        if (std::abs(s(j)) > tol * (std::abs(x(j)) + tol)) small = false;
    return small;
}

/// Takes an accepted step (gain ratio rho > 0) with Nielsen's (1999) update of the damping. True
/// when the cost fell by at most tol * cost (converged: the Jacobian is left stale); otherwise the
/// model is rebuilt at the new point, the scaling kept at its running maximum.
template <class Residual>
bool accept_step(Residual& residual, lm_state& st, Eigen::VectorXd& x_new, Eigen::VectorXd& r_new, double cost_new,
                 double rho, const parameter_bounds& b, double tol, std::int64_t& evaluations) {
    const double decrease = st.cost - cost_new;
    const double previous = st.cost;
    st.x.swap(x_new);
    st.r.swap(r_new);
    st.cost = cost_new;
    st.mu *= std::max(1.0 / 3.0, 1.0 - std::pow(2.0 * rho - 1.0, 3));
    st.nu = 2.0;
    if (decrease <= tol * previous) {
        st.jacobian_current = false;
        return true;
    }
    linearise(residual, st, b, evaluations);
    st.d = st.d.cwiseMax(st.a.diagonal());
    floor_scaling(st.d);
    st.jacobian_current = true;
    return false;
}

/// A rejected step (no decrease, a non-finite residual, or a failed solve): damp harder. True
/// when no step lowers the cost even with overwhelming damping (converged).
inline bool reject_step(lm_state& st) noexcept {
    st.mu *= st.nu;
    st.nu *= 2.0;
    return !(st.mu < 1e150);
}

/// One Levenberg-Marquardt run from x0 (inside the bounds, r0 = r(x0) finite).
template <class Residual>
nonlinear_fit levenberg_marquardt_run(Residual& residual, const Eigen::VectorXd& x0, const Eigen::VectorXd& r0,
                                      const parameter_bounds& b, const levenberg_marquardt_options& options,
                                      std::int64_t& evaluations) {
    const Eigen::Index m = r0.size();
    const double tol = options.tolerance;
    lm_state st;
    st.x = x0;
    st.r = r0;
    st.cost = 0.5 * st.r.squaredNorm();
    linearise(residual, st, b, evaluations);
    // Marquardt's scaling: damping mu * D with D = diag(J^T J), kept at its running maximum (as
    // MINPACK's lmder does) so a column that vanishes at one point does not remove the damping.
    st.d = st.a.diagonal().cwiseMax(0.0);
    floor_scaling(st.d);
    Eigen::VectorXd x_new(x0.size()), r_new(m);

    nonlinear_fit out;
    out.status = fit_status::max_iterations;
    std::vector<Eigen::Index> free;
    free.reserve(static_cast<std::size_t>(x0.size()));
    while (out.iterations < options.max_iterations) {
        free_parameters(b, st.x, st.g, free);
        if (st.cost == 0.0 || projected_gradient_vanishes(st.g, free)) {
            out.status = fit_status::converged;
            break;
        }
        ++out.iterations;
        const bool step_ok = damped_step(st, free, b, x_new);
        const Eigen::VectorXd s = x_new - st.x;
        if (step_ok && step_is_small(s, st.x, tol)) {
            out.status = fit_status::converged;
            break;
        }
        // Gain ratio of Nielsen (1999): actual over predicted decrease of the (projected) step,
        // predicted by the Gauss-Newton model L(s) = cost + g^T s + 0.5 s^T J^T J s.
        const double predicted = -(st.g.dot(s) + 0.5 * s.dot(st.a * s));
        double rho = -1.0;
        double cost_new = st.cost;
        if (step_ok && predicted > 0.0 && evaluate_residual(residual, x_new, r_new, m, evaluations)) {
            cost_new = 0.5 * r_new.squaredNorm();
            rho = (st.cost - cost_new) / predicted;
        }
        const bool converged = rho > 0.0 ? accept_step(residual, st, x_new, r_new, cost_new, rho, b, tol, evaluations)
                                         : reject_step(st);
        if (converged) {
            out.status = fit_status::converged;
            break;
        }
    }
    if (!st.jacobian_current) finite_difference_jacobian(residual, st.x, st.r, b, st.jac, evaluations);
    out.parameters = std::move(st.x);
    out.residuals = std::move(st.r);
    out.cost = st.cost;
    out.jacobian = std::move(st.jac);
    return out;
}

/// Start k >= 1 of a multi-start, drawn per coordinate (see levenberg_marquardt_options::starts).
inline Eigen::VectorXd draw_start(fit_random& random, const Eigen::VectorXd& initial, const parameter_bounds& b) {
    Eigen::VectorXd x(initial.size());
    for (Eigen::Index j = 0; j < initial.size(); ++j) {
        const double lo = b.lower(j), hi = b.upper(j);
        double v;
        if (lo > 0.0 && std::isfinite(hi))
            v = std::exp(std::log(lo) + random.unit() * (std::log(hi) - std::log(lo)));
        else if (std::isfinite(lo) && std::isfinite(hi))
            v = lo + random.unit() * (hi - lo);
        else
            v = initial(j) * std::exp(random.normal());
        x(j) = std::clamp(v, lo, hi);  // rounding of exp/log can step just outside
    }
    return x;
}

}  // namespace detail

/// Minimises 0.5 ||r(x)||^2 subject to bounds.lower <= x <= bounds.upper.
///
/// `residual(const Eigen::VectorXd& x, Eigen::VectorXd& out)` writes the residual_count
/// residuals at x into out (already sized). A non-finite residual during the iteration rejects
/// that trial step (more damping). The Jacobian is by finite differences (see
/// detail::difference_steps), each step an active-set, projected Levenberg-Marquardt step with
/// Nielsen's damping update; with options.starts > 1 the run is repeated from seeded random
/// starts (a start whose residual is not finite is skipped) and the lowest cost kept (ties: the
/// earlier start). Same inputs and seed, same result, bit for bit.
///
/// Throws invalid_input for: options (see levenberg_marquardt_options::validate), residual_count
/// < 1 ("residual_count"), no parameters ("initial"), bounds of the wrong size or with NaN or
/// lower > upper ("bounds.lower[j]", ...), initial outside the bounds or not finite
/// ("initial[j]"), a residual that is not finite at `initial` ("initial"), and a function that
/// writes a different number of residuals ("residual_count").
template <class Residual>
[[nodiscard]] nonlinear_fit bounded_least_squares(Residual&& residual, Eigen::Index residual_count,
                                                  const Eigen::VectorXd& initial, const parameter_bounds& bounds,
                                                  const levenberg_marquardt_options& options = {}) {
    const parameter_bounds b = detail::validate_bounded_problem(residual_count, initial, bounds, options);
    std::int64_t evaluations = 0;
    Eigen::VectorXd r0(residual_count);
    if (!detail::evaluate_residual(residual, initial, r0, residual_count, evaluations)) {
        Eigen::Index bad = 0;
        while (bad < r0.size() && std::isfinite(r0(bad))) ++bad;
        std::string value = "residual[";
        value += std::to_string(bad);
        value += "] = ";
        value += detail::format_number(r0(bad));
        throw invalid_input("initial", std::move(value), "parameters at which every residual is finite");
    }
    detail::fit_random random(options.seed);
    std::optional<nonlinear_fit> best;
    for (std::int32_t start = 0; start < options.starts; ++start) {
        Eigen::VectorXd x0 = start == 0 ? initial : detail::draw_start(random, initial, b);
        if (start > 0 && !detail::evaluate_residual(residual, x0, r0, residual_count, evaluations)) continue;
        nonlinear_fit run = detail::levenberg_marquardt_run(residual, x0, r0, b, options, evaluations);
        if (!best || run.cost < best->cost) {
            run.best_start = start;
            best = std::move(run);
        }
    }
    best->residual_evaluations = evaluations;
    return std::move(*best);
}

/// Fits predict(params, i) to observed[i]: bounded_least_squares on the residuals
/// prediction_i - observed_i (residual_space::linear) or log(prediction_i) - log(observed_i)
/// (residual_space::log). `predict(const Eigen::VectorXd& params, std::size_t i) -> double`
/// (the index is a std::size_t). A prediction that is not finite (or <= 0 in log space) during
/// the iteration rejects the trial step.
///
/// Throws invalid_input as bounded_least_squares, and for: no observations ("observed"), an
/// observation not finite or, in log space, <= 0 ("observed[i]"), a prediction at `initial` that
/// is not finite or, in log space, <= 0 ("initial").
template <class Predict>
[[nodiscard]] nonlinear_fit curve_fit(Predict&& predict, std::span<const double> observed, const Eigen::VectorXd& initial,
                                      const parameter_bounds& bounds, residual_space space = residual_space::linear,
                                      const levenberg_marquardt_options& options = {}) {
    if (observed.empty()) throw invalid_input("observed", "0 values", "at least one observation");
    const bool log_space = space == residual_space::log;
    Eigen::VectorXd target(static_cast<Eigen::Index>(observed.size()));
    for (std::size_t i = 0; i < observed.size(); ++i) {
        const double y = observed[i];
        const auto at = static_cast<Eigen::Index>(i);
        if (!std::isfinite(y) || (log_space && y <= 0.0))
            throw invalid_input(detail::indexed("observed", at), detail::format_number(y),
                                log_space ? "a finite number > 0 (log residuals)" : "a finite number");
        target(at) = log_space ? std::log(y) : y;
    }
    const auto count = static_cast<Eigen::Index>(observed.size());
    (void)detail::validate_bounded_problem(count, initial, bounds, options);
    for (std::size_t i = 0; i < observed.size(); ++i) {
        const double v = static_cast<double>(predict(initial, i));
        if (!std::isfinite(v) || (log_space && v <= 0.0)) {
            std::string value = "prediction[";
            value += std::to_string(i);
            value += "] = ";
            value += detail::format_number(v);
            throw invalid_input("initial", std::move(value),
                                log_space ? "parameters whose predictions are finite and > 0 (log residuals)"
                                          : "parameters whose predictions are finite");
        }
    }
    const auto residual = [&](const Eigen::VectorXd& params, Eigen::VectorXd& out) {
        for (std::size_t i = 0; i < observed.size(); ++i) {
            const auto at = static_cast<Eigen::Index>(i);
            const double v = static_cast<double>(predict(params, i));
            if (log_space)
                out(at) = v > 0.0 && std::isfinite(v) ? std::log(v) - target(at) : std::numeric_limits<double>::quiet_NaN();
            else
                out(at) = v - target(at);
        }
    };
    return bounded_least_squares(residual, count, initial, bounds, options);
}

/// Gradient of a scalar function f(const Eigen::VectorXd&) -> double at x by the finite
/// differences of bounded_least_squares (central inside the bounds, one-sided at a bound).
/// For the delta-method intervals of fit/quality.hpp. Throws invalid_input when the bounds do not
/// fit x ("bounds.lower", ...).
template <class Function>
[[nodiscard]] Eigen::VectorXd finite_difference_gradient(Function&& f, const Eigen::VectorXd& x,
                                                         const parameter_bounds& bounds = {}) {
    const parameter_bounds b = detail::resolve_bounds(bounds, x.size());
    // The rules of detail::finite_difference_jacobian on a scalar (written out rather than
    // through 1-row Eigen matrices, whose vectorised code GCC 12 at -O3 flags with a false
    // -Warray-bounds).
    const double f0 = static_cast<double>(f(x));
    Eigen::VectorXd gradient(x.size());
    Eigen::VectorXd xs = x;
    for (Eigen::Index j = 0; j < x.size(); ++j) {
        const auto [hp, hm] = detail::difference_steps(x(j), b.lower(j), b.upper(j));
        double fp = std::numeric_limits<double>::quiet_NaN(), fm = fp;
        if (hp > 0.0) {
            xs(j) = x(j) + hp;
            fp = static_cast<double>(f(xs));
        }
        if (hm > 0.0) {
            xs(j) = x(j) - hm;
            fm = static_cast<double>(f(xs));
        }
        xs(j) = x(j);
        const bool plus_ok = std::isfinite(fp), minus_ok = std::isfinite(fm);
        if (plus_ok && minus_ok)
            gradient(j) = (fp - fm) / (hp + hm);
        else if (plus_ok)
            gradient(j) = (fp - f0) / hp;
        else if (minus_ok)
            gradient(j) = (f0 - fm) / hm;
        else
            gradient(j) = 0.0;
    }
    return gradient;
}

}  // namespace dnnplan
