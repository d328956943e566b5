// Linear and non-negative least squares of fit/least_squares.hpp: exact recovery, known
// coefficients under noise, the covariance, NNLS against a brute-force KKT oracle, every error.

#include <dnnplan/fit/least_squares.hpp>

#include <Eigen/LU>
#include <Eigen/QR>
#include <dnnplan/fit/nonlinear.hpp>  // detail::fit_random: portable seeded draws

#include <catch2/catch.hpp>

#include "../support/checks.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

using dnnplan::linear_fit;

namespace {

Eigen::MatrixXd random_matrix(dnnplan::detail::fit_random& random, Eigen::Index rows, Eigen::Index cols) {
    Eigen::MatrixXd x(rows, cols);
    for (Eigen::Index i = 0; i < rows; ++i)
        for (Eigen::Index j = 0; j < cols; ++j) x(i, j) = 2.0 * random.unit() - 1.0;
    return x;
}

using dnnplan_test::error_of;

/// NNLS by enumeration: for every subset S of columns, the unconstrained least squares on S; a
/// subset whose solution is >= 0 is feasible; the best feasible objective is the NNLS optimum
/// (the optimum's support S has that property, and every feasible candidate is a feasible point).
Eigen::VectorXd nnls_oracle(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
    const Eigen::Index n = x.cols();
    Eigen::VectorXd best = Eigen::VectorXd::Zero(n);
    double best_objective = y.squaredNorm();
    for (std::uint32_t mask = 1; mask < (1u << n); ++mask) {
        Eigen::MatrixXd xs(x.rows(), 0);
        std::vector<Eigen::Index> cols;
        for (Eigen::Index j = 0; j < n; ++j)
            if (mask & (1u << j)) cols.push_back(j);
        xs.resize(x.rows(), static_cast<Eigen::Index>(cols.size()));
        for (std::size_t k = 0; k < cols.size(); ++k) xs.col(static_cast<Eigen::Index>(k)) = x.col(cols[k]);
        const Eigen::VectorXd zs = xs.colPivHouseholderQr().solve(y);
        if (zs.minCoeff() < 0.0) continue;
        Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
        for (std::size_t k = 0; k < cols.size(); ++k) z(cols[k]) = zs(static_cast<Eigen::Index>(k));
        const double objective = (y - x * z).squaredNorm();
        if (objective < best_objective) {
            best_objective = objective;
            best = z;
        }
    }
    return best;
}

}  // namespace

TEST_CASE("linear least squares recovers exact coefficients from noiseless data", "[fit][least_squares]") {
    dnnplan::detail::fit_random random(7);
    for (int trial = 0; trial < 50; ++trial) {
        const Eigen::Index cols = 1 + static_cast<Eigen::Index>(trial % 6);
        const Eigen::Index rows = cols + static_cast<Eigen::Index>(trial % 5);
        const Eigen::MatrixXd x = random_matrix(random, rows, cols);
        Eigen::VectorXd truth(cols);
        for (Eigen::Index j = 0; j < cols; ++j) truth(j) = 10.0 * random.unit() - 5.0;
        const linear_fit f = dnnplan::linear_least_squares(x, x * truth);
        CHECK((f.coefficients - truth).cwiseAbs().maxCoeff() < 1e-10);
        CHECK(f.residual_sum_of_squares < 1e-20);
        CHECK(f.degrees_of_freedom == rows - cols);
        CHECK(f.covariance.rows() == cols);
        CHECK(f.status == dnnplan::fit_status::converged);
        if (rows == cols) CHECK(f.covariance.isZero());  // no residual degrees of freedom
    }
}

TEST_CASE("linear least squares on noisy data: coefficients, covariance and normal equations", "[fit][least_squares]") {
    // y = 3 - 2 x1 + 0.5 x2 + N(0, 0.1^2); 2000 rows. The covariance is s^2 (X^T X)^-1 and the
    // coefficients lie within 4 standard errors of the truth.
    dnnplan::detail::fit_random random(11);
    const Eigen::Index rows = 2000;
    Eigen::MatrixXd x(rows, 3);
    Eigen::VectorXd y(rows);
    const Eigen::Vector3d truth(3.0, -2.0, 0.5);
    for (Eigen::Index i = 0; i < rows; ++i) {
        x(i, 0) = 1.0;
        x(i, 1) = 10.0 * random.unit();
        x(i, 2) = 100.0 * random.unit();
        y(i) = x.row(i).dot(truth) + 0.1 * random.normal();
    }
    const linear_fit f = dnnplan::linear_least_squares(x, y);
    REQUIRE(f.degrees_of_freedom == rows - 3);
    const double s2 = f.residual_sum_of_squares / static_cast<double>(rows - 3);
    CHECK(s2 == Approx(0.01).epsilon(0.1));
    CHECK(dnnplan::residual_variance(f) == Approx(s2));
    const Eigen::MatrixXd expected = s2 * (x.transpose() * x).inverse();
    CHECK((f.covariance - expected).cwiseAbs().maxCoeff() < 1e-9 * expected.cwiseAbs().maxCoeff());
    for (Eigen::Index j = 0; j < 3; ++j) CHECK(std::abs(f.coefficients(j) - truth(j)) < 4.0 * std::sqrt(f.covariance(j, j)));
    // The residual is orthogonal to every column (the normal equations).
    CHECK((x.transpose() * f.residuals).cwiseAbs().maxCoeff() < 1e-8 * x.cwiseAbs().maxCoeff() * y.cwiseAbs().maxCoeff());
    CHECK((f.residuals - (y - x * f.coefficients)).cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("linear least squares rejects linearly dependent columns", "[fit][least_squares]") {
    Eigen::MatrixXd x(5, 3);
    x << 1, 2, 3,  //
        1, 0, 1,   //
        2, 1, 3,   //
        0, 4, 4,   //
        3, 3, 6;   // column 2 = column 0 + column 1
    const Eigen::VectorXd y = Eigen::VectorXd::LinSpaced(5, 1.0, 5.0);
    const auto e = error_of([&] { (void)dnnplan::linear_least_squares(x, y, "profile"); });
    CHECK(e.field() == "profile");
    CHECK(e.value().find("rank 2 of 3 columns") != std::string::npos);
    CHECK(e.expected().find("linearly independent") != std::string::npos);
    // A zero column is dependent too, and named.
    Eigen::MatrixXd z = Eigen::MatrixXd::Ones(4, 2);
    z.col(1).setZero();
    const auto e2 = error_of([&] { (void)dnnplan::linear_least_squares(z, Eigen::VectorXd::Ones(4)); });
    CHECK(e2.value() == "rank 1 of 2 columns (dependent: 1)");
    // NNLS accepts the dependent design (its passive set stays independent).
    const linear_fit n = dnnplan::nonnegative_least_squares(x, y);
    CHECK(n.coefficients.minCoeff() >= 0.0);
}

TEST_CASE("the linear fits name every bad input", "[fit][least_squares]") {
    const Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 3);
    for (const bool nonnegative : {false, true}) {
        const auto fit = [&](const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
            return nonnegative ? dnnplan::nonnegative_least_squares(a, b) : dnnplan::linear_least_squares(a, b);
        };
        auto e = error_of([&] { (void)fit(x, Eigen::VectorXd::Ones(2)); });
        CHECK(e.field() == "samples");
        CHECK(e.value() == "2 samples");
        CHECK(e.expected() == "at least 3 samples to fit 3 coefficients");
        e = error_of([&] { (void)fit(Eigen::MatrixXd::Ones(4, 2), Eigen::VectorXd::Ones(3)); });
        CHECK(e.field() == "samples");
        CHECK(e.value() == "4 rows of x and 3 observations");
        e = error_of([&] { (void)fit(Eigen::MatrixXd(3, 0), Eigen::VectorXd::Ones(3)); });
        CHECK(e.value() == "0 columns");
        Eigen::MatrixXd bad = Eigen::MatrixXd::Identity(3, 2);
        bad(1, 1) = std::numeric_limits<double>::quiet_NaN();
        e = error_of([&] { (void)fit(bad, Eigen::VectorXd::Ones(3)); });
        CHECK(e.field() == "samples[1].x[1]");
        CHECK(e.value() == "nan");
        Eigen::VectorXd y = Eigen::VectorXd::Ones(3);
        y(2) = std::numeric_limits<double>::infinity();
        e = error_of([&] { (void)fit(Eigen::MatrixXd::Identity(3, 2), y); });
        CHECK(e.field() == "samples[2].y");
        CHECK(e.value() == "inf");
    }
    const auto e = error_of([] { dnnplan::require_samples("runs", 2, 5, "the Pollux model"); });
    CHECK(e.field() == "runs");
    CHECK(e.value() == "2 samples");
    CHECK(e.expected() == "at least 5 samples to fit the Pollux model");
    CHECK_NOTHROW(dnnplan::require_samples("runs", 5, 5, "x"));
    CHECK(std::string(e.what()) == "invalid input: runs = 2 samples: expected at least 5 samples to fit the Pollux model");
}

TEST_CASE("NNLS equals a brute-force oracle on 200 seeded problems", "[fit][least_squares][nnls]") {
    dnnplan::detail::fit_random random(2024);
    int with_zeros = 0;
    for (int problem = 0; problem < 200; ++problem) {
        const auto cols = static_cast<Eigen::Index>(1 + problem % 6);
        const Eigen::Index rows = cols + static_cast<Eigen::Index>(random.unit() * 10.0);
        const Eigen::MatrixXd x = random_matrix(random, rows, cols);
        Eigen::VectorXd y(rows);
        for (Eigen::Index i = 0; i < rows; ++i) y(i) = 4.0 * random.unit() - 2.0;
        INFO("problem " << problem << " rows " << rows << " cols " << cols);
        const linear_fit f = dnnplan::nonnegative_least_squares(x, y);
        const Eigen::VectorXd oracle = nnls_oracle(x, y);
        CHECK(f.status == dnnplan::fit_status::converged);
        CHECK(f.coefficients.minCoeff() >= 0.0);
        CHECK((f.coefficients - oracle).cwiseAbs().maxCoeff() < 1e-9);
        const double objective = (y - x * f.coefficients).squaredNorm();
        CHECK(objective <= (y - x * oracle).squaredNorm() * (1.0 + 1e-12) + 1e-14);
        // KKT: the dual w = X^T r is <= 0 at zero coefficients and 0 at positive ones.
        const Eigen::VectorXd w = x.transpose() * f.residuals;
        std::int64_t free = 0;
        for (Eigen::Index j = 0; j < cols; ++j) {
            if (f.coefficients(j) > 0.0) {
                ++free;
                CHECK(std::abs(w(j)) < 1e-9);
            } else {
                CHECK(w(j) < 1e-9);
                CHECK(f.covariance.row(j).isZero());
                CHECK(f.covariance.col(j).isZero());
            }
        }
        if (free < cols) ++with_zeros;
        CHECK(f.degrees_of_freedom == rows - free);
        CHECK(f.iterations <= 3 * cols);
    }
    CHECK(with_zeros > 50);  // the random problems do exercise the constraint
}

TEST_CASE("NNLS keeps an interior solution and returns zero for zero data", "[fit][least_squares][nnls]") {
    dnnplan::detail::fit_random random(5);
    const Eigen::MatrixXd x = random_matrix(random, 30, 4);
    const Eigen::Vector4d truth(1.0, 0.5, 2.0, 0.25);
    const linear_fit f = dnnplan::nonnegative_least_squares(x, x * truth);
    CHECK((f.coefficients - truth).cwiseAbs().maxCoeff() < 1e-10);
    const linear_fit l = dnnplan::linear_least_squares(x, x * truth);
    CHECK((f.coefficients - l.coefficients).cwiseAbs().maxCoeff() < 1e-10);
    const linear_fit z = dnnplan::nonnegative_least_squares(x, Eigen::VectorXd::Zero(30));
    CHECK(z.coefficients.isZero());
    CHECK(z.degrees_of_freedom == 30);
    CHECK(z.covariance.isZero());
    CHECK(z.iterations == 0);
}

TEST_CASE("NNLS covariance is the linear covariance of the free columns", "[fit][least_squares][nnls]") {
    // y is fitted by columns 0 and 2; column 1 is pushed to zero by a negative correlation.
    dnnplan::detail::fit_random random(3);
    const Eigen::Index rows = 40;
    Eigen::MatrixXd x = random_matrix(random, rows, 3);
    Eigen::VectorXd y = x.col(0) * 2.0 - x.col(1) * 1.5 + x.col(2) * 0.5;
    for (Eigen::Index i = 0; i < rows; ++i) y(i) += 0.05 * random.normal();
    const linear_fit f = dnnplan::nonnegative_least_squares(x, y);
    REQUIRE(f.coefficients(1) == 0.0);
    REQUIRE(f.coefficients(0) > 0.0);
    REQUIRE(f.coefficients(2) > 0.0);
    Eigen::MatrixXd xf(rows, 2);
    xf.col(0) = x.col(0);
    xf.col(1) = x.col(2);
    const linear_fit l = dnnplan::linear_least_squares(xf, y);
    CHECK(f.coefficients(0) == Approx(l.coefficients(0)).epsilon(1e-10));
    CHECK(f.coefficients(2) == Approx(l.coefficients(1)).epsilon(1e-10));
    CHECK(f.degrees_of_freedom == l.degrees_of_freedom);
    CHECK(f.covariance(0, 0) == Approx(l.covariance(0, 0)).epsilon(1e-9));
    CHECK(f.covariance(0, 2) == Approx(l.covariance(0, 1)).epsilon(1e-9));
    CHECK(f.covariance(2, 2) == Approx(l.covariance(1, 1)).epsilon(1e-9));
}
