#pragma once
// Definitions of fit/numeric_kernels.hpp: inline there by default; compiled once by the
// translation unit that includes <dnnplan/separate_compilation.hpp> when the program defines
// DNNPLAN_SEPARATE_COMPILATION. Not meant to be included directly.

#include <dnnplan/fit/numeric_kernels.hpp>

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <cstddef>
#include <optional>

namespace dnnplan::detail {

DNNPLAN_SEPARATE_DECL pivoted_qr_solution pivoted_qr_solve(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x);
    pivoted_qr_solution out;
    out.rank = qr.rank();
    const auto& order = qr.colsPermutation().indices();
    out.column_order.resize(static_cast<std::size_t>(order.size()));
    for (Eigen::Index k = 0; k < order.size(); ++k) out.column_order[static_cast<std::size_t>(k)] = order(k);
    out.solution = qr.solve(y);  // for a rank-deficient x, Eigen's basic solution
    return out;
}

DNNPLAN_SEPARATE_DECL Eigen::MatrixXd pseudo_inverse(const Eigen::MatrixXd& x) {
    const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(x);
    return cod.pseudoInverse();
}

DNNPLAN_SEPARATE_DECL std::optional<Eigen::VectorXd> ldlt_solve(const Eigen::MatrixXd& m, const Eigen::VectorXd& b) {
    const Eigen::LDLT<Eigen::MatrixXd> ldlt(m);
    Eigen::VectorXd h = ldlt.solve(b);
    if (ldlt.info() != Eigen::Success) return std::nullopt;
    return h;
}

DNNPLAN_SEPARATE_DECL double student_t_quantile(double degrees_of_freedom, double p) {
    const boost::math::students_t t(degrees_of_freedom);
    return boost::math::quantile(t, p);
}

DNNPLAN_SEPARATE_DECL double chi_squared_quantile(double p, double degrees_of_freedom) {
    const boost::math::chi_squared chi2(degrees_of_freedom);
    return boost::math::quantile(chi2, p);
}

DNNPLAN_SEPARATE_DECL double chi_squared_upper_tail(double x, double degrees_of_freedom) {
    const boost::math::chi_squared chi2(degrees_of_freedom);
    return boost::math::cdf(boost::math::complement(chi2, x));
}

}  // namespace dnnplan::detail
