#pragma once
// The numerical kernels the fitters take from Eigen and Boost.Math, behind plain functions:
// column-pivoted Householder QR (least squares and its rank), the pseudo-inverse from a complete
// orthogonal decomposition (covariances), LDL^T (Levenberg-Marquardt's damped normal equations),
// the Student-t quantile (prediction intervals) and the chi-square quantile and upper tail (the
// preemption hazard's exact rate interval and likelihood-ratio test, preemption/hazard.hpp).
//
// Why a seam: instantiating these class templates costs the compiler about 7 s of front-end time
// in every translation unit that includes a fitter, whether it fits anything or not (GCC 12,
// measured in docs/performance.md, "Build and test time"). Behind these functions the cost is
// paid where they are defined:
//   - by default (header-only), they are inline here, like the rest of the library;
//   - with DNNPLAN_SEPARATE_COMPILATION defined in every translation unit of a program, they are
//     only declared, and exactly one translation unit of the program includes
//     <dnnplan/separate_compilation.hpp> to define them (the model of Asio's
//     ASIO_SEPARATE_COMPILATION). dnnplan's own tests, examples and benchmarks build this way.

#include <Eigen/Core>

#include <optional>
#include <vector>

#if defined(DNNPLAN_SEPARATE_COMPILATION)
#define DNNPLAN_SEPARATE_DECL
#else
#define DNNPLAN_SEPARATE_DECL inline
#endif

namespace dnnplan::detail {

/// The least-squares solution of X c = y by column-pivoted Householder QR (Golub and Van Loan,
/// "Matrix Computations", 4th ed., sec. 5.4.2), with the numerical rank (Eigen's default
/// threshold |r_kk| <= eps * min(rows, cols) * |r_11|) and the pivot order of the columns.
struct pivoted_qr_solution {
    Eigen::Index rank = 0;
    std::vector<Eigen::Index> column_order{};  ///< column_order[k]: the k-th column chosen by pivoting
    Eigen::VectorXd solution{};                 ///< for rank < x.cols(), a basic solution (not unique)
};

DNNPLAN_SEPARATE_DECL pivoted_qr_solution pivoted_qr_solve(const Eigen::MatrixXd& x, const Eigen::VectorXd& y);

/// The Moore-Penrose pseudo-inverse of x, from a complete orthogonal decomposition.
DNNPLAN_SEPARATE_DECL Eigen::MatrixXd pseudo_inverse(const Eigen::MatrixXd& x);

/// The solution of M h = b for a symmetric M by LDL^T with pivoting; none when the
/// factorisation fails (Eigen's info() is not Success).
DNNPLAN_SEPARATE_DECL std::optional<Eigen::VectorXd> ldlt_solve(const Eigen::MatrixXd& m, const Eigen::VectorXd& b);

/// The p-quantile of Student's t distribution with `degrees_of_freedom` (> 0) degrees of freedom
/// (boost::math::students_t), for p in (0, 1).
DNNPLAN_SEPARATE_DECL double student_t_quantile(double degrees_of_freedom, double p);

/// The p-quantile of the chi-square distribution with `degrees_of_freedom` (> 0, not necessarily
/// an integer) degrees of freedom (boost::math::chi_squared), for p in [0, 1) (0 at p = 0).
DNNPLAN_SEPARATE_DECL double chi_squared_quantile(double p, double degrees_of_freedom);

/// P(X > x) for X chi-square with `degrees_of_freedom` (> 0) degrees of freedom, x >= 0: the
/// p-value of a likelihood-ratio statistic x (computed as the complement, not 1 - cdf, so that
/// small p-values keep their digits).
DNNPLAN_SEPARATE_DECL double chi_squared_upper_tail(double x, double degrees_of_freedom);

}  // namespace dnnplan::detail

#if !defined(DNNPLAN_SEPARATE_COMPILATION)
#include <dnnplan/fit/detail/numeric_kernels_impl.hpp>
#endif
