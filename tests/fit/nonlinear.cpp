// Bounded Levenberg-Marquardt of fit/nonlinear.hpp: known parameters of three model shapes from
// noisy data, bounds, multi-start, determinism, rejected steps, every error path.

#include <dnnplan/fit/nonlinear.hpp>
#include <dnnplan/fit/quality.hpp>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

using dnnplan::curve_fit;
using dnnplan::fit_status;
using dnnplan::levenberg_marquardt_options;
using dnnplan::nonlinear_fit;
using dnnplan::parameter_bounds;
using dnnplan::residual_space;

namespace {

using dnnplan_test::inf;

using dnnplan_test::vec;

using dnnplan_test::error_of;

/// Each parameter within `k` standard errors of the truth (parameter_covariance of the fit).
void check_within_standard_errors(const nonlinear_fit& f, const parameter_bounds& b, const Eigen::VectorXd& truth, double k) {
    const Eigen::MatrixXd c = dnnplan::parameter_covariance(f, b);
    for (Eigen::Index j = 0; j < truth.size(); ++j) {
        INFO("parameter " << j << " fitted " << f.parameters(j) << " truth " << truth(j) << " se " << std::sqrt(c(j, j)));
        CHECK(std::abs(f.parameters(j) - truth(j)) <= k * std::sqrt(c(j, j)));
    }
}

}  // namespace

TEST_CASE("exponential decay: exact from noiseless data, within standard errors under noise", "[fit][nonlinear]") {
    // y = a exp(-b t) + c, truth (5, 0.3, 1), t in [0, 20].
    const Eigen::VectorXd truth = vec({5.0, 0.3, 1.0});
    std::vector<double> t, clean, noisy;
    dnnplan::detail::fit_random random(42);
    for (int i = 0; i < 60; ++i) {
        t.push_back(20.0 * i / 59.0);
        clean.push_back(truth(0) * std::exp(-truth(1) * t.back()) + truth(2));
        noisy.push_back(clean.back() + 0.02 * random.normal());
    }
    const auto model = [&](const Eigen::VectorXd& p, std::size_t i) { return p(0) * std::exp(-p(1) * t[i]) + p(2); };
    const parameter_bounds b{vec({0.0, 0.0, -inf}), vec({inf, 10.0, inf})};
    const nonlinear_fit exact = curve_fit(model, clean, vec({1.0, 1.0, 0.0}), b);
    CHECK(exact.status == fit_status::converged);
    CHECK((exact.parameters - truth).cwiseAbs().maxCoeff() < 1e-7);
    CHECK(exact.cost < 1e-20);
    CHECK(exact.best_start == 0);
    CHECK(exact.residual_evaluations > exact.iterations);

    const nonlinear_fit f = curve_fit(model, noisy, vec({1.0, 1.0, 0.0}), b);
    CHECK(f.status == fit_status::converged);
    check_within_standard_errors(f, b, truth, 4.0);
    CHECK(dnnplan::residual_variance(f, b) == Approx(0.02 * 0.02).epsilon(0.35));
    // The residuals, cost and Jacobian describe the solution.
    for (std::size_t i = 0; i < t.size(); ++i) {
        const auto at = static_cast<Eigen::Index>(i);
        CHECK(f.residuals(at) == Approx(model(f.parameters, i) - noisy[i]).margin(1e-15));
        const double e = std::exp(-f.parameters(1) * t[i]);
        CHECK(f.jacobian(at, 0) == Approx(e).margin(1e-7));
        CHECK(f.jacobian(at, 1) == Approx(-f.parameters(0) * t[i] * e).margin(1e-6));
        CHECK(f.jacobian(at, 2) == Approx(1.0).margin(1e-7));
    }
    CHECK(f.cost == Approx(0.5 * f.residuals.squaredNorm()));
}

TEST_CASE("Michaelis-Menten in log space with multiplicative noise", "[fit][nonlinear]") {
    // v = vmax s / (km + s), truth (2.5, 0.8); noise: v * exp(N(0, 0.02^2)).
    const Eigen::VectorXd truth = vec({2.5, 0.8});
    std::vector<double> s, v;
    dnnplan::detail::fit_random random(9);
    for (int i = 0; i < 40; ++i) {
        s.push_back(0.05 * std::pow(1.15, i));
        v.push_back(truth(0) * s.back() / (truth(1) + s.back()) * std::exp(0.02 * random.normal()));
    }
    const auto model = [&](const Eigen::VectorXd& p, std::size_t i) { return p(0) * s[i] / (p(1) + s[i]); };
    const parameter_bounds b = parameter_bounds::non_negative(2);
    const nonlinear_fit f = curve_fit(model, v, vec({1.0, 1.0}), b, residual_space::log);
    CHECK(f.status == fit_status::converged);
    check_within_standard_errors(f, b, truth, 4.0);
    CHECK(std::abs(f.parameters(0) / truth(0) - 1.0) < 0.03);
    CHECK(std::abs(f.parameters(1) / truth(1) - 1.0) < 0.05);
    // Log residuals: log(pred) - log(obs).
    CHECK(f.residuals(3) == Approx(std::log(model(f.parameters, 3)) - std::log(v[3])).margin(1e-14));
}

TEST_CASE("a Pollux-like max-power model from noisy step times", "[fit][nonlinear]") {
    // T = (T_grad^g + T_sync^g)^(1/g), T_grad = ac + bc m, T_sync = an + bn (K - 2): the overlap
    // form of the synchronous model (reference note on synchronous models, after Pollux).
    const Eigen::VectorXd truth = vec({0.02, 0.004, 0.15, 0.01, 2.5});  // ac, bc, an, bn, gamma
    std::vector<double> m, k, time;
    dnnplan::detail::fit_random random(17);
    const auto step = [](const Eigen::VectorXd& p, double batch, double replicas) {
        const double grad = p(0) + p(1) * batch;
        const double sync = p(2) + p(3) * (replicas - 2.0);
        return std::pow(std::pow(grad, p(4)) + std::pow(sync, p(4)), 1.0 / p(4));
    };
    for (const double batch : {8.0, 16.0, 32.0, 64.0, 128.0})
        for (const double replicas : {2.0, 4.0, 8.0, 16.0, 32.0}) {
            m.push_back(batch);
            k.push_back(replicas);
            time.push_back(step(truth, batch, replicas) * std::exp(0.01 * random.normal()));
        }
    const auto model = [&](const Eigen::VectorXd& p, std::size_t i) { return step(p, m[i], k[i]); };
    const parameter_bounds b{vec({1e-8, 1e-8, 1e-8, 1e-8, 1.0}), vec({inf, inf, inf, inf, 10.0})};
    // Pollux's own start: alpha = 0.1, beta = 0.01, gamma = 1.001.
    const nonlinear_fit f = curve_fit(model, time, vec({0.1, 0.01, 0.1, 0.01, 1.001}), b, residual_space::log,
                                      {.starts = 4, .seed = 1});
    CHECK(f.status == fit_status::converged);
    check_within_standard_errors(f, b, truth, 4.0);
    for (Eigen::Index j = 0; j < 5; ++j) CHECK(std::abs(f.parameters(j) / truth(j) - 1.0) < 0.25);
    const dnnplan::fit_quality q = [&] {
        std::vector<double> pred;
        for (std::size_t i = 0; i < time.size(); ++i) pred.push_back(model(f.parameters, i));
        return dnnplan::assess_fit(time, pred);
    }();
    CHECK(q.median_ape_ratio < 0.01);
}

TEST_CASE("bounds hold and a constrained optimum sits on its bound", "[fit][nonlinear]") {
    // y = a t + c with data of slope -2: with a >= 0 the optimum is a = 0, c = mean(y).
    std::vector<double> t, y;
    for (int i = 0; i < 10; ++i) {
        t.push_back(i);
        y.push_back(7.0 - 2.0 * i + (i % 2 == 0 ? 0.1 : -0.1));
    }
    double mean = 0.0;
    for (const double v : y) mean += v / 10.0;
    const auto line = [&](const Eigen::VectorXd& p, std::size_t i) { return p(0) * t[i] + p(1); };
    const parameter_bounds b{vec({0.0, -inf}), vec({inf, inf})};
    const nonlinear_fit f = curve_fit(line, y, vec({1.0, 0.0}), b);
    CHECK(f.status == fit_status::converged);
    CHECK(f.parameters(0) == 0.0);
    CHECK(f.parameters(1) == Approx(mean).epsilon(1e-8));
    CHECK(dnnplan::degrees_of_freedom(f, b) == 9);  // a is at its bound: not estimated
    const Eigen::MatrixXd c = dnnplan::parameter_covariance(f, b);
    CHECK(c.row(0).isZero());
    CHECK(c.col(0).isZero());
    CHECK(c(1, 1) > 0.0);

    // An upper bound: the slope cannot fall below -1, so it stops at -1 and c is the best
    // intercept for that slope: mean(y + t).
    const parameter_bounds lower_slope{vec({-1.0, -inf}), vec({inf, inf})};
    const nonlinear_fit g = curve_fit(line, y, vec({0.0, 0.0}), lower_slope);
    CHECK(g.parameters(0) == -1.0);
    CHECK(g.parameters(1) == Approx(mean + 4.5).epsilon(1e-8));
    // A box that excludes the optimum in every direction: both at a corner.
    const parameter_bounds box{vec({0.5, 20.0}), vec({1.0, 30.0})};
    const nonlinear_fit h = curve_fit(line, y, vec({0.7, 25.0}), box);
    CHECK(h.parameters(0) == 0.5);
    CHECK(h.parameters(1) == 20.0);
    CHECK(dnnplan::degrees_of_freedom(h, box) == 10);
    // lower == upper pins a parameter.
    const parameter_bounds pinned{vec({-2.0, -inf}), vec({-2.0, inf})};
    const nonlinear_fit p = curve_fit(line, y, vec({-2.0, 0.0}), pinned);
    CHECK(p.parameters(0) == -2.0);
    CHECK(p.parameters(1) == Approx(7.0).epsilon(1e-8));
}

TEST_CASE("multi-start escapes a local minimum a single start gets stuck in", "[fit][nonlinear]") {
    // y = sin(w t), w = 3.7, t in [0, 10]: the cost in w is full of local minima; from w = 1
    // a single start stops in one of them.
    std::vector<double> t, y;
    for (int i = 0; i < 200; ++i) {
        t.push_back(10.0 * i / 199.0);
        y.push_back(std::sin(3.7 * t.back()));
    }
    const auto model = [&](const Eigen::VectorXd& p, std::size_t i) { return std::sin(p(0) * t[i]); };
    const parameter_bounds b{vec({0.1}), vec({10.0})};
    const nonlinear_fit single = curve_fit(model, y, vec({1.0}), b);
    CHECK(std::abs(single.parameters(0) - 3.7) > 0.5);
    CHECK(single.cost > 10.0);
    CHECK(single.best_start == 0);
    const levenberg_marquardt_options many{.starts = 30, .seed = 123};
    const nonlinear_fit multi = curve_fit(model, y, vec({1.0}), b, residual_space::linear, many);
    CHECK(multi.parameters(0) == Approx(3.7).epsilon(1e-8));
    CHECK(multi.cost < 1e-12);
    CHECK(multi.best_start > 0);
    CHECK(multi.residual_evaluations > single.residual_evaluations);

    // Deterministic for a seed, bit for bit.
    const nonlinear_fit again = curve_fit(model, y, vec({1.0}), b, residual_space::linear, many);
    CHECK(again.parameters(0) == multi.parameters(0));
    CHECK(again.cost == multi.cost);
    CHECK(again.best_start == multi.best_start);
    CHECK(again.iterations == multi.iterations);
    CHECK(again.residual_evaluations == multi.residual_evaluations);
}

TEST_CASE("the multi-start draws are the documented ones", "[fit][nonlinear]") {
    // Log-uniform when 0 < lower and upper is finite; uniform on finite bounds; otherwise
    // initial * exp(N(0, 1)), kept in the bounds.
    const parameter_bounds b{vec({1e-3, -1.0, 0.0, -inf}), vec({1e3, 1.0, inf, inf})};
    const Eigen::VectorXd initial = vec({1.0, 0.0, 2.0, -3.0});
    dnnplan::detail::fit_random random(99);
    int below_one = 0;
    for (int k = 0; k < 2000; ++k) {
        const Eigen::VectorXd x = dnnplan::detail::draw_start(random, initial, b);
        CHECK(x(0) >= 1e-3);
        CHECK(x(0) <= 1e3);
        if (x(0) < 1.0) ++below_one;
        CHECK(std::abs(x(1)) <= 1.0);
        CHECK(x(2) > 0.0);
        CHECK(x(3) < 0.0);
    }
    CHECK(below_one > 900);  // log-uniform on [1e-3, 1e3]: half below 1
    CHECK(below_one < 1100);
}

TEST_CASE("a non-finite residual during the iteration rejects the step", "[fit][nonlinear]") {
    // r(x) = (x - 3, 0.1 (x - 3)), defined (finite) only for x <= 1: from x = 0 the Gauss-Newton
    // step lands on 3, beyond the wall; the fit must back off and creep up to the wall at 1.
    int nan_calls = 0;
    const auto residual = [&](const Eigen::VectorXd& x, Eigen::VectorXd& out) {
        if (x(0) > 1.0) {
            out.setConstant(std::numeric_limits<double>::quiet_NaN());
            ++nan_calls;
            return;
        }
        out(0) = x(0) - 3.0;
        out(1) = 0.1 * (x(0) - 3.0);
    };
    const nonlinear_fit f = dnnplan::bounded_least_squares(residual, 2, vec({0.0}), parameter_bounds::unbounded(1));
    // The optimum of the defined region is its edge x = 1 (cost decreases towards 3).
    CHECK(nan_calls > 0);
    CHECK(f.parameters(0) <= 1.0);
    CHECK(f.parameters(0) == Approx(1.0).margin(1e-6));
}

TEST_CASE("the iteration cap is a status, not an error", "[fit][nonlinear]") {
    const auto rosenbrock = [](const Eigen::VectorXd& x, Eigen::VectorXd& out) {
        out(0) = 10.0 * (x(1) - x(0) * x(0));
        out(1) = 1.0 - x(0);
    };
    const nonlinear_fit capped = dnnplan::bounded_least_squares(rosenbrock, 2, vec({-1.2, 1.0}), {},
                                                                {.max_iterations = 2});
    CHECK(capped.status == fit_status::max_iterations);
    CHECK(capped.iterations == 2);
    CHECK(to_string(capped.status) == "max_iterations");
    const nonlinear_fit full = dnnplan::bounded_least_squares(rosenbrock, 2, vec({-1.2, 1.0}), {});
    CHECK(full.status == fit_status::converged);
    CHECK(to_string(full.status) == "converged");
    CHECK(full.parameters(0) == Approx(1.0).epsilon(1e-8));
    CHECK(full.parameters(1) == Approx(1.0).epsilon(1e-8));
    CHECK(full.cost < capped.cost);
}

TEST_CASE("finite-difference gradients stay inside the bounds", "[fit][nonlinear]") {
    const auto square = [](const Eigen::VectorXd& x) { return x(0) * x(0) + 3.0 * x(1); };
    const Eigen::VectorXd g = dnnplan::finite_difference_gradient(square, vec({2.0, 1.0}));
    CHECK(g(0) == Approx(4.0).epsilon(1e-8));
    CHECK(g(1) == Approx(3.0).epsilon(1e-8));
    // At x0 = 1 = upper: a backward difference (never evaluates beyond the bound).
    const auto guarded = [](const Eigen::VectorXd& x) {
        return x(0) > 1.0 ? std::numeric_limits<double>::quiet_NaN() : x(0) * x(0) + 3.0 * x(1);
    };
    const parameter_bounds b{vec({0.0, 0.0}), vec({1.0, 1.0})};
    const Eigen::VectorXd gb = dnnplan::finite_difference_gradient(guarded, vec({1.0, 0.5}), b);
    CHECK(gb(0) == Approx(2.0).epsilon(1e-5));
    CHECK(gb(1) == Approx(3.0).epsilon(1e-8));
    // At x1 = 0 = lower: a forward difference of length cbrt(eps) * 1e-8; rounding of f ~ 1 limits
    // it to about eps / h ~ 4e-3 relative (documented in docs/fit.md).
    const Eigen::VectorXd g0 = dnnplan::finite_difference_gradient(guarded, vec({1.0, 0.0}), b);
    CHECK(g0(1) == Approx(3.0).epsilon(1e-2));
    // lower == upper: no room, derivative reported 0.
    const parameter_bounds fixed{vec({0.5, 0.0}), vec({0.5, 1.0})};
    CHECK(dnnplan::finite_difference_gradient(square, vec({0.5, 0.5}), fixed)(0) == 0.0);
}

TEST_CASE("the bounded fits name every bad input", "[fit][nonlinear]") {
    const auto residual = [](const Eigen::VectorXd& x, Eigen::VectorXd& out) { out(0) = x(0) - 1.0; };
    const parameter_bounds b{vec({0.0}), vec({2.0})};
    auto e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 1, vec({3.0}), b); });
    CHECK(e.field() == "initial[0]");
    CHECK(e.value() == "3");
    CHECK(e.expected() == "a finite number in [0, 2] (the bounds)");
    e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 1, vec({std::nan("")}), {}); });
    CHECK(e.field() == "initial[0]");
    e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 0, vec({1.0}), b); });
    CHECK(e.field() == "residual_count");
    e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 1, Eigen::VectorXd(0), {}); });
    CHECK(e.field() == "initial");
    e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 1, vec({1.0}), {vec({2.0}), vec({1.0})}); });
    CHECK(e.field() == "bounds.lower[0]");
    CHECK(e.expected() == "<= bounds.upper[0] = 1");
    e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 1, vec({1.0}), {vec({0.0}), vec({1.0, 2.0})}); });
    CHECK(e.field() == "bounds.upper");
    CHECK(e.value() == "2 entries");
    e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 1, vec({1.0}), {vec({std::nan("")}), vec({2.0})}); });
    CHECK(e.field() == "bounds.lower[0]");
    e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 1, vec({1.0}), {vec({0.0}), vec({-inf})}); });
    CHECK(e.field() == "bounds.upper[0]");
    e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 1, vec({1.0}), b, {.max_iterations = 0}); });
    CHECK(e.field() == "options.max_iterations");
    e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 1, vec({1.0}), b, {.tolerance = 0.0}); });
    CHECK(e.field() == "options.tolerance");
    e = error_of([&] { (void)dnnplan::bounded_least_squares(residual, 1, vec({1.0}), b, {.starts = 0}); });
    CHECK(e.field() == "options.starts");
    // A residual that is not finite at the start.
    const auto log_residual = [](const Eigen::VectorXd& x, Eigen::VectorXd& out) { out(0) = std::log(x(0)); };
    e = error_of([&] { (void)dnnplan::bounded_least_squares(log_residual, 1, vec({-1.0}), {}); });
    CHECK(e.field() == "initial");
    CHECK(e.value() == "residual[0] = nan");
    // A function that writes another number of residuals than announced.
    const auto resizing = [](const Eigen::VectorXd& x, Eigen::VectorXd& out) {
        out.resize(3);
        out.setConstant(x(0));
    };
    e = error_of([&] { (void)dnnplan::bounded_least_squares(resizing, 2, vec({1.0}), {}); });
    CHECK(e.field() == "residual_count");
    CHECK(e.value() == "2");

    // curve_fit's own checks.
    const auto predict = [](const Eigen::VectorXd& p, std::size_t i) { return p(0) * static_cast<double>(i + 1); };
    const std::vector<double> obs{1.0, 2.0, 0.0};
    e = error_of([&] { (void)curve_fit(predict, obs, vec({1.0}), {}, residual_space::log); });
    CHECK(e.field() == "observed[2]");
    CHECK(e.value() == "0");
    CHECK_NOTHROW((void)curve_fit(predict, obs, vec({1.0}), {}, residual_space::linear));
    const std::vector<double> with_nan{1.0, std::nan("")};
    e = error_of([&] { (void)curve_fit(predict, with_nan, vec({1.0}), {}); });
    CHECK(e.field() == "observed[1]");
    e = error_of([&] { (void)curve_fit(predict, std::vector<double>{}, vec({1.0}), {}); });
    CHECK(e.field() == "observed");
    const std::vector<double> positive{1.0, 2.0, 3.0};
    e = error_of([&] { (void)curve_fit(predict, positive, vec({-1.0}), {}, residual_space::log); });
    CHECK(e.field() == "initial");
    CHECK(e.value() == "prediction[0] = -1");
    e = error_of([&] { (void)curve_fit(predict, positive, vec({5.0}), b); });
    CHECK(e.field() == "initial[0]");
}

TEST_CASE("a log-space fit rejects steps to non-positive predictions", "[fit][nonlinear]") {
    // prediction a - b t goes <= 0 for large b; observations from a = 10, b = 1 at t <= 5; the
    // start has b far below and undamped steps may overshoot to non-positive predictions.
    std::vector<double> t, y;
    for (int i = 0; i <= 8; ++i) {
        t.push_back(0.6 * i);
        y.push_back(10.0 - 1.0 * t.back());
    }
    const auto model = [&](const Eigen::VectorXd& p, std::size_t i) { return p(0) - p(1) * t[i]; };
    const nonlinear_fit f = curve_fit(model, y, vec({10.0, 0.0}), {}, residual_space::log);
    CHECK(f.parameters(0) == Approx(10.0).epsilon(1e-7));
    CHECK(f.parameters(1) == Approx(1.0).epsilon(1e-7));
}
