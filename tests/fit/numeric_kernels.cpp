// The numeric kernels seam of fit/numeric_kernels.hpp (pivoted QR, pseudo-inverse, LDL^T, the
// Student-t quantile): the same answers as Eigen's decompositions called directly, the defining
// properties of each result, and known quantiles. In the tests' build the kernels are compiled
// once (DNNPLAN_SEPARATE_COMPILATION), so this also checks that the seam links.

#include <dnnplan/fit/numeric_kernels.hpp>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <Eigen/QR>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

using dnnplan_test::vec;

namespace {

/// A fixed well-conditioned 6 x 3 design (no randomness: the values are the test).
Eigen::MatrixXd design() {
    Eigen::MatrixXd x(6, 3);
    x << 1.0, 0.5, -2.0,  //
        1.0, 1.5, 0.0,    //
        1.0, -0.5, 1.0,   //
        1.0, 2.0, 3.0,    //
        1.0, 3.0, -1.0,   //
        1.0, -1.0, 0.5;
    return x;
}

/// max |a - b| over the entries, relative to max(1, max |b|).
double relative_gap(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
    return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

}  // namespace

TEST_CASE("pivoted_qr_solve: exact recovery, and Eigen's rank, pivots and solution", "[fit][numeric_kernels]") {
    const Eigen::MatrixXd x = design();
    const Eigen::VectorXd c = vec({0.25, -1.5, 2.0});
    const auto exact = dnnplan::detail::pivoted_qr_solve(x, x * c);
    CHECK(exact.rank == 3);
    REQUIRE(exact.solution.size() == 3);
    CHECK(relative_gap(exact.solution, c) < 1e-12);

    // A noisy right-hand side: the least-squares solution (normal equations X'(y - Xc) = 0), the
    // same as ColPivHouseholderQR called directly.
    const Eigen::VectorXd y = x * c + vec({0.1, -0.2, 0.05, 0.3, -0.1, 0.02});
    const auto ls = dnnplan::detail::pivoted_qr_solve(x, y);
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x);
    CHECK(ls.rank == qr.rank());
    REQUIRE(ls.column_order.size() == 3);
    for (Eigen::Index k = 0; k < 3; ++k)
        CHECK(ls.column_order[static_cast<std::size_t>(k)] == qr.colsPermutation().indices()(k));
    CHECK(relative_gap(ls.solution, qr.solve(y)) < 1e-14);
    CHECK((x.transpose() * (y - x * ls.solution)).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("pivoted_qr_solve reports the rank of dependent columns", "[fit][numeric_kernels]") {
    // Column 2 = column 0 + column 1: rank 2; the column order is a permutation of 0, 1, 2; the
    // basic solution still satisfies the normal equations.
    Eigen::MatrixXd x = design();
    x.col(2) = x.col(0) + x.col(1);
    const Eigen::VectorXd y = vec({1.0, 2.0, 0.5, 3.0, 4.0, -1.0});
    const auto out = dnnplan::detail::pivoted_qr_solve(x, y);
    CHECK(out.rank == 2);
    std::vector<Eigen::Index> order = out.column_order;
    std::sort(order.begin(), order.end());
    CHECK(order == std::vector<Eigen::Index>{0, 1, 2});
    REQUIRE(out.solution.size() == 3);
    CHECK((x.transpose() * (y - x * out.solution)).cwiseAbs().maxCoeff() < 1e-10);
    // A zero matrix has rank 0.
    CHECK(dnnplan::detail::pivoted_qr_solve(Eigen::MatrixXd::Zero(3, 2), vec({1.0, 2.0, 3.0})).rank == 0);
}

TEST_CASE("pseudo_inverse: known values and the four Moore-Penrose conditions", "[fit][numeric_kernels]") {
    // A column vector v: v+ = v' / |v|^2.
    Eigen::MatrixXd v(2, 1);
    v << 1.0, 2.0;
    const Eigen::MatrixXd vp = dnnplan::detail::pseudo_inverse(v);
    REQUIRE(vp.rows() == 1);
    REQUIRE(vp.cols() == 2);
    CHECK(vp(0, 0) == Approx(0.2).epsilon(1e-14));
    CHECK(vp(0, 1) == Approx(0.4).epsilon(1e-14));
    // diag(2, 0): diag(0.5, 0) (the zero direction gets zero, not infinity).
    const Eigen::MatrixXd d = Eigen::Vector2d(2.0, 0.0).asDiagonal();
    const Eigen::MatrixXd dp = dnnplan::detail::pseudo_inverse(d);
    CHECK(dp(0, 0) == Approx(0.5).epsilon(1e-14));
    CHECK(dp(0, 1) == 0.0);
    CHECK(dp(1, 0) == 0.0);
    CHECK(dp(1, 1) == 0.0);
    // An invertible matrix: the inverse.
    Eigen::MatrixXd m(2, 2);
    m << 4.0, 1.0, 2.0, 3.0;
    CHECK(relative_gap(dnnplan::detail::pseudo_inverse(m), m.inverse()) < 1e-14);

    // A rank-deficient 4 x 3: A A+ A = A, A+ A A+ = A+, A A+ and A+ A symmetric; the same as
    // Eigen's CompleteOrthogonalDecomposition.
    Eigen::MatrixXd a(4, 3);
    a << 1.0, 2.0, 3.0,  //
        2.0, 4.0, 6.0,   //
        0.0, 1.0, 1.0,   //
        1.0, 0.0, 1.0;   // column 2 = column 0 + column 1
    const Eigen::MatrixXd ap = dnnplan::detail::pseudo_inverse(a);
    REQUIRE(ap.rows() == 3);
    REQUIRE(ap.cols() == 4);
    CHECK(relative_gap(a * ap * a, a) < 1e-12);
    CHECK(relative_gap(ap * a * ap, ap) < 1e-12);
    const Eigen::MatrixXd left = a * ap, right = ap * a;
    CHECK(relative_gap(left, left.transpose()) < 1e-12);
    CHECK(relative_gap(right, right.transpose()) < 1e-12);
    const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(a);
    CHECK(relative_gap(ap, cod.pseudoInverse()) < 1e-14);
}

TEST_CASE("ldlt_solve: symmetric systems, and none when the factorisation fails", "[fit][numeric_kernels]") {
    // Positive definite: M h = b, the same as LDLT called directly.
    Eigen::MatrixXd m(3, 3);
    m << 4.0, 1.0, 0.5,  //
        1.0, 3.0, -1.0,  //
        0.5, -1.0, 2.0;
    const Eigen::VectorXd b = vec({1.0, -2.0, 0.5});
    const std::optional<Eigen::VectorXd> h = dnnplan::detail::ldlt_solve(m, b);
    REQUIRE(h.has_value());
    CHECK(relative_gap(m * *h, b) < 1e-14);
    CHECK(relative_gap(*h, Eigen::LDLT<Eigen::MatrixXd>(m).solve(b)) < 1e-15);
    // Negative definite (LDL^T with pivoting takes either sign): -M h = b gives -h.
    const std::optional<Eigen::VectorXd> minus = dnnplan::detail::ldlt_solve(-m, b);
    REQUIRE(minus.has_value());
    CHECK(relative_gap(*minus, -*h) < 1e-14);
    // A zero diagonal under a non-zero off-diagonal: a zero pivot, Eigen's NumericalIssue.
    Eigen::MatrixXd swap(2, 2);
    swap << 0.0, 1.0, 1.0, 0.0;
    CHECK_FALSE(dnnplan::detail::ldlt_solve(swap, vec({1.0, 1.0})).has_value());
}

TEST_CASE("student_t_quantile on known values", "[fit][numeric_kernels]") {
    using dnnplan::detail::student_t_quantile;
    // Tables (and closed forms): 1 degree of freedom is the Cauchy distribution, tan(pi (p - 1/2));
    // 2 degrees: (2p - 1) / sqrt(2 p (1 - p)).
    CHECK(student_t_quantile(10.0, 0.975) == Approx(2.228138851986273).epsilon(1e-12));
    CHECK(student_t_quantile(1.0, 0.975) == Approx(12.706204736174698).epsilon(1e-12));
    CHECK(student_t_quantile(1.0, 0.75) == Approx(1.0).epsilon(1e-12));
    CHECK(student_t_quantile(2.0, 0.975) == Approx(0.95 / std::sqrt(2.0 * 0.975 * 0.025)).epsilon(1e-12));
    // The median is 0; the distribution is symmetric.
    CHECK(student_t_quantile(5.0, 0.5) == Approx(0.0).margin(1e-15));
    CHECK(student_t_quantile(7.0, 0.1) == Approx(-student_t_quantile(7.0, 0.9)).epsilon(1e-12));
    // Many degrees of freedom: the normal's 1.959963984540054.
    CHECK(student_t_quantile(1e7, 0.975) == Approx(1.959963984540054).epsilon(1e-6));
    // Non-integer degrees of freedom (the fitters pass dof as a double): between its neighbours.
    const double t = student_t_quantile(10.5, 0.975);
    CHECK(t < student_t_quantile(10.0, 0.975));
    CHECK(t > student_t_quantile(11.0, 0.975));
}

TEST_CASE("chi_squared_quantile and chi_squared_upper_tail on known values", "[fit][numeric_kernels]") {
    using dnnplan::detail::chi_squared_quantile;
    using dnnplan::detail::chi_squared_upper_tail;
    // 2 degrees of freedom: the exponential distribution of mean 2, F(x) = 1 - exp(-x / 2).
    CHECK(chi_squared_quantile(0.5, 2.0) == Approx(2.0 * std::log(2.0)).epsilon(1e-12));
    CHECK(chi_squared_quantile(0.975, 2.0) == Approx(-2.0 * std::log(0.025)).epsilon(1e-12));
    CHECK(chi_squared_upper_tail(3.0, 2.0) == Approx(std::exp(-1.5)).epsilon(1e-12));
    // 1 degree of freedom: the square of a standard normal (z_0.975 = 1.959963984540054).
    CHECK(chi_squared_quantile(0.95, 1.0) == Approx(1.959963984540054 * 1.959963984540054).epsilon(1e-12));
    CHECK(chi_squared_upper_tail(1.959963984540054 * 1.959963984540054, 1.0) == Approx(0.05).epsilon(1e-12));
    CHECK(chi_squared_quantile(0.0, 4.0) == 0.0);
    // The upper tail keeps its digits far out (1 - cdf would round to 0).
    CHECK(chi_squared_upper_tail(200.0, 2.0) == Approx(std::exp(-100.0)).epsilon(1e-12));
    // Round trip at a non-integer number of degrees of freedom.
    CHECK(chi_squared_upper_tail(chi_squared_quantile(0.3, 7.5), 7.5) == Approx(0.7).epsilon(1e-12));
}
