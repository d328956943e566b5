#pragma once
// Linear least squares (rank-revealing QR) and non-negative least squares (Lawson and Hanson,
// "Solving Least Squares Problems", Prentice-Hall 1974, ch. 23, algorithm NNLS), with the
// classical parameter covariance s^2 (X^T X)^-1, s^2 = RSS / (n - p) (e.g. Seber and Wild,
// "Nonlinear Regression", 1989, sec. 2.1). docs/fit.md describes both.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/numeric_kernels.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// How an iterative fit ended. Both are results, not errors: `max_iterations` returns the best
/// point found so far.
enum class fit_status {
    converged,       ///< a stopping test on the step, the cost or the gradient was met
    max_iterations,  ///< the iteration cap ran out first
};

template <>
struct enum_text<fit_status> {
    static constexpr std::array<enum_name<fit_status>, 2> names{
        {{fit_status::converged, "converged"}, {fit_status::max_iterations, "max_iterations"}}};
};

/// Result of a linear (or non-negative) least-squares fit of y ~ X c.
struct linear_fit {
    Eigen::VectorXd coefficients;
    Eigen::VectorXd residuals;            ///< y - X * coefficients
    double residual_sum_of_squares = 0.0;
    std::int64_t degrees_of_freedom = 0;  ///< rows - number of free (not at a bound) coefficients
    /// s^2 (X_F^T X_F)^-1 on the free coefficients F, s^2 = RSS / degrees_of_freedom; zero rows
    /// and columns for coefficients held at a bound; the zero matrix when degrees_of_freedom <= 0.
    Eigen::MatrixXd covariance;
    std::int32_t iterations = 0;                  ///< NNLS main-loop iterations (0 for linear_least_squares)
    fit_status status = fit_status::converged;    ///< NNLS: max_iterations if the cap ran out
};

/// Throws invalid_input(path, "<have> samples", "at least <need> samples to fit <what>") when
/// have < need: the error every fitter gives for too few samples.
inline void require_samples(std::string_view path, std::size_t have, std::size_t need, std::string_view what) {
    if (have >= need) return;
    std::string value = std::to_string(have);
    value += " samples";
    std::string expected = "at least ";
    expected += std::to_string(need);
    expected += " samples to fit ";
    expected += what;
    throw invalid_input(std::string(path), std::move(value), std::move(expected));
}

/// s^2 = RSS / degrees_of_freedom, the unbiased residual variance; +infinity when
/// degrees_of_freedom <= 0 (no residual information: an interval built on it is unbounded).
[[nodiscard]] inline double residual_variance(const linear_fit& fit) noexcept {
    if (fit.degrees_of_freedom <= 0) return std::numeric_limits<double>::infinity();
    return fit.residual_sum_of_squares / static_cast<double>(fit.degrees_of_freedom);
}

namespace detail {

/// Checks shared by the linear fits: sizes, at least one column, rows >= cols, finite entries
/// (named "<path>[i].x[j]" and "<path>[i].y": row i is sample i).
inline void validate_linear_system(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, std::string_view path) {
    if (x.cols() < 1)
        throw invalid_input(std::string(path), "0 columns", "a design matrix with at least one column");
    if (x.rows() != y.size()) {
        std::string value = std::to_string(x.rows());
        value += " rows of x and ";
        value += std::to_string(y.size());
        value += " observations";
        throw invalid_input(std::string(path), std::move(value), "one observation per row of x");
    }
    std::string what = std::to_string(x.cols());
    what += " coefficients";
    require_samples(path, static_cast<std::size_t>(x.rows()), static_cast<std::size_t>(x.cols()), what);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        std::string row = std::string(path);
        row += "[";
        row += std::to_string(i);
        row += "]";
        for (Eigen::Index j = 0; j < x.cols(); ++j)
            if (!std::isfinite(x(i, j))) {
                std::string field = row;
                field += ".x[";
                field += std::to_string(j);
                field += "]";
                require_finite(field, x(i, j));
            }
        if (!std::isfinite(y(i))) require_finite(row + ".y", y(i));
    }
}

/// (X^T X)^+ of the full-column-rank (or nearly so) matrix x, from a complete orthogonal
/// decomposition: pinv(X) pinv(X)^T. Equals (X^T X)^-1 when x has full column rank.
[[nodiscard]] inline Eigen::MatrixXd unscaled_covariance(const Eigen::MatrixXd& x) {
    if (x.cols() == 0) return Eigen::MatrixXd(0, 0);
    const Eigen::MatrixXd pinv = pseudo_inverse(x);
    return pinv * pinv.transpose();
}

/// Fills rss, residuals, dof and the covariance expanded from the free columns `free` (zero
/// elsewhere).
inline void finish_linear_fit(linear_fit& fit, const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                              const std::vector<Eigen::Index>& free) {
    fit.residuals = y - x * fit.coefficients;
    fit.residual_sum_of_squares = fit.residuals.squaredNorm();
    fit.degrees_of_freedom = static_cast<std::int64_t>(x.rows()) - static_cast<std::int64_t>(free.size());
    fit.covariance = Eigen::MatrixXd::Zero(x.cols(), x.cols());
    if (fit.degrees_of_freedom <= 0 || free.empty()) return;
    Eigen::MatrixXd x_free(x.rows(), static_cast<Eigen::Index>(free.size()));
    for (std::size_t k = 0; k < free.size(); ++k) x_free.col(static_cast<Eigen::Index>(k)) = x.col(free[k]);
    const Eigen::MatrixXd c = residual_variance(fit) * unscaled_covariance(x_free);
    for (std::size_t a = 0; a < free.size(); ++a)
        for (std::size_t b = 0; b < free.size(); ++b)
            fit.covariance(free[a], free[b]) = c(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b));
}

/// NNLS's stopping tolerance on the duals: 10 eps max(rows, cols) ||X||_1 ||y||_inf (the scale
/// used by MATLAB's lsqnonneg, made invariant to the scale of y).
[[nodiscard]] inline double nnls_tolerance(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
    const double eps = std::numeric_limits<double>::epsilon();
    return 10.0 * eps * static_cast<double>(std::max(x.rows(), x.cols())) * x.cwiseAbs().colwise().sum().maxCoeff() *
           y.cwiseAbs().maxCoeff();
}

/// Unconstrained least squares on the passive columns; entries outside the passive set are 0.
[[nodiscard]] inline Eigen::VectorXd solve_passive(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                                   const std::vector<bool>& passive) {
    const Eigen::Index n = x.cols();
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<std::size_t>(j)]) cols.push_back(j);
    Eigen::MatrixXd xp(x.rows(), static_cast<Eigen::Index>(cols.size()));
    for (std::size_t k = 0; k < cols.size(); ++k) xp.col(static_cast<Eigen::Index>(k)) = x.col(cols[k]);
    const Eigen::VectorXd zp = pivoted_qr_solve(xp, y).solution;
    Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
    for (std::size_t k = 0; k < cols.size(); ++k) z(cols[k]) = zp(static_cast<Eigen::Index>(k));
    return z;
}

/// The variable that enters the passive set (Lawson and Hanson's steps 2-5): the largest dual
/// w_j = [X^T (y - X c)]_j > tol among the variables at zero and not blocked; -1 when there is
/// none (KKT: every variable at zero has a non-positive dual).
[[nodiscard]] inline Eigen::Index entering_variable(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                                    const Eigen::VectorXd& c, const std::vector<bool>& passive,
                                                    const std::vector<bool>& blocked, double tol) {
    const Eigen::VectorXd w = x.transpose() * (y - x * c);
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < c.size(); ++j) {
        const auto at = static_cast<std::size_t>(j);
        if (!passive[at] && !blocked[at] && w(j) > tol && (best < 0 || w(j) > w(best))) best = j;
    }
    return best;
}

/// Inner loop (steps 6-11): while the passive solution has a non-positive entry, step back to the
/// feasible boundary and release the variables that reached zero; then c is the passive
/// solution. Each pass releases at least one variable, so n + 1 passes suffice.
inline void restore_feasibility(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, std::vector<bool>& passive,
                                Eigen::VectorXd& c) {
    const Eigen::Index n = x.cols();
    for (Eigen::Index pass = 0; pass <= n; ++pass) {
        const Eigen::VectorXd z = solve_passive(x, y, passive);
        double alpha = std::numeric_limits<double>::infinity();
        Eigen::Index limiting = -1;
        for (Eigen::Index j = 0; j < n; ++j)
            if (passive[static_cast<std::size_t>(j)] && z(j) <= 0.0) {
                const double ratio = c(j) / (c(j) - z(j));
                if (ratio < alpha) {
                    alpha = ratio;
                    limiting = j;
                }
            }
        if (limiting < 0) {  // the passive solution is feasible
            c = z;
            return;
        }
        // Step back to the boundary; the limiting variable lands on zero (exactly, not up to rounding).
        c += alpha * (z - c);
        c(limiting) = 0.0;
        for (Eigen::Index j = 0; j < n; ++j)
            if (passive[static_cast<std::size_t>(j)] && c(j) <= 0.0) {
                c(j) = 0.0;
                passive[static_cast<std::size_t>(j)] = false;
            }
    }
}

}  // namespace detail

/// Ordinary least squares: minimise ||y - X c||^2 by column-pivoted Householder QR (Golub and
/// Van Loan, "Matrix Computations", 4th ed., sec. 5.4.2). Row i of x is sample i.
/// Throws invalid_input naming `path` when x has no column, rows != y.size(), rows < cols
/// ("at least <cols> samples to fit <cols> coefficients"), an entry is not finite
/// ("<path>[i].x[j]", "<path>[i].y"), or the columns are linearly dependent (numerical rank
/// below cols, with Eigen's default threshold |r_kk| <= eps * min(rows, cols) * |r_11|); the
/// message lists the columns the pivoting found dependent. No minimum-norm solution is returned
/// for a rank-deficient design: its coefficients would not be identifiable.
[[nodiscard]] inline linear_fit linear_least_squares(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                                     std::string_view path = "samples") {
    detail::validate_linear_system(x, y, path);
    detail::pivoted_qr_solution qr = detail::pivoted_qr_solve(x, y);
    if (qr.rank < x.cols()) {
        std::string value = "rank ";
        value += std::to_string(qr.rank);
        value += " of ";
        value += std::to_string(x.cols());
        value += " columns (dependent:";
        std::vector<Eigen::Index> dependent(qr.column_order.begin() + qr.rank, qr.column_order.end());
        std::sort(dependent.begin(), dependent.end());
        for (const Eigen::Index j : dependent) {
            value += " ";
            value += std::to_string(j);
        }
        value += ")";
        throw invalid_input(std::string(path), std::move(value),
                            "linearly independent columns of x (a column is a linear combination of the others)");
    }
    linear_fit fit;
    fit.coefficients = std::move(qr.solution);
    std::vector<Eigen::Index> all(static_cast<std::size_t>(x.cols()));
    for (std::size_t j = 0; j < all.size(); ++j) all[j] = static_cast<Eigen::Index>(j);
    detail::finish_linear_fit(fit, x, y, all);
    return fit;
}

/// Non-negative least squares: minimise ||y - X c||^2 subject to c >= 0, by the active-set
/// algorithm NNLS of Lawson and Hanson (1974, ch. 23, steps 1-12). The main loop moves the
/// variable with the largest positive dual w_j = [X^T (y - X c)]_j into the passive (free) set;
/// the inner loop solves the unconstrained problem on the passive set and, while that solution
/// has a non-positive entry, steps back to the feasible boundary and releases the variables that
/// reached zero. Stops when every dual of a variable at zero is <= tol, with
/// tol = 10 eps max(rows, cols) ||X||_1 ||y||_inf (the scale used by MATLAB's lsqnonneg, made
/// invariant to the scale of y), or after 3 * cols main-loop iterations (status max_iterations,
/// the current feasible point returned). Free coefficients are those > 0; the covariance is
/// restricted to them. Same errors as linear_least_squares except that dependent columns are
/// allowed (the passive set's columns stay independent).
[[nodiscard]] inline linear_fit nonnegative_least_squares(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                                          std::string_view path = "samples") {
    detail::validate_linear_system(x, y, path);
    const Eigen::Index n = x.cols();
    const double tol = detail::nnls_tolerance(x, y);
    const std::int32_t max_iterations = static_cast<std::int32_t>(3 * n);

    Eigen::VectorXd c = Eigen::VectorXd::Zero(n);
    std::vector<bool> passive(static_cast<std::size_t>(n), false);
    linear_fit fit;
    fit.status = fit_status::converged;
    // Variables whose dual is positive but whose passive solution came out <= 0 by rounding: the
    // safeguard of Lawson and Hanson's step 6 sets their dual to zero until the point moves.
    std::vector<bool> blocked(static_cast<std::size_t>(n), false);
    while (true) {
        const Eigen::Index best = detail::entering_variable(x, y, c, passive, blocked, tol);
        if (best < 0) break;
        if (fit.iterations >= max_iterations) {
            fit.status = fit_status::max_iterations;
            break;
        }
        ++fit.iterations;
        const auto entering = static_cast<std::size_t>(best);
        passive[entering] = true;
        if (detail::solve_passive(x, y, passive)(best) <= 0.0) {
            passive[entering] = false;
            blocked[entering] = true;
            continue;
        }
        std::fill(blocked.begin(), blocked.end(), false);
        detail::restore_feasibility(x, y, passive, c);
    }
    fit.coefficients = c;
    std::vector<Eigen::Index> free;
    for (Eigen::Index j = 0; j < n; ++j)
        if (c(j) > 0.0) free.push_back(j);
    detail::finish_linear_fit(fit, x, y, free);
    return fit;
}

}  // namespace dnnplan
