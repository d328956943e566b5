// The affine time fits of fit/linear_time.hpp (core/affine_time.hpp: t(b) = fixed_s +
// per_sample_s * b): the closed-form (non-negative) least-squares fit and the proportional default
// of a single profile.

#include <dnnplan/fit/linear_time.hpp>

#include <catch2/catch.hpp>

#include <vector>

using dnnplan::batch_time_sample;
using dnnplan::affine_time;

TEST_CASE("the fit recovers an exact line and minimises squared error on noisy data", "[fit][linear_time]") {
    // t = 0.004 + 0.0005 b at b = 16, 32, 64: 0.012, 0.020, 0.036 s.
    const std::vector<batch_time_sample> exact{{16, 0.012}, {32, 0.020}, {64, 0.036}};
    const affine_time m = dnnplan::fit_linear_time(exact);
    CHECK(m.fixed_s == Approx(0.004).epsilon(1e-12));
    CHECK(m.per_sample_s == Approx(0.0005).epsilon(1e-12));
    CHECK(m.at(128) == Approx(0.068).epsilon(1e-12));

    // By hand: b = 1, 2, 3, t = 1, 3, 2: mean b 2, mean t 2, Sbb = 2, Sbt = 1 -> slope 0.5,
    // intercept 1. Any other line has a larger squared error.
    const std::vector<batch_time_sample> noisy{{1, 1}, {2, 3}, {3, 2}};
    const affine_time f = dnnplan::fit_linear_time(noisy);
    CHECK(f.fixed_s == Approx(1.0));
    CHECK(f.per_sample_s == Approx(0.5));
    const auto sse = [&](affine_time x) {
        double e = 0;
        for (const auto& s : noisy) e += (x.at(s.batch) - s.time_s) * (x.at(s.batch) - s.time_s);
        return e;
    };
    for (const double dx : {-0.01, 0.01})
        for (const double dy : {-0.01, 0.01}) CHECK(sse(f) < sse({.fixed_s = f.fixed_s + dx, .per_sample_s = f.per_sample_s + dy}));
}

TEST_CASE("the fit keeps both coefficients non-negative", "[fit][linear_time]") {
    // The unconstrained line through (10, 0.5) and (20, 1.5) has intercept -0.5: the best line
    // through the origin is slope (10*0.5 + 20*1.5) / (100 + 400) = 35/500 = 0.07, which beats
    // the constant 1.0 (squared errors 0.05 against 0.5).
    const affine_time m = dnnplan::fit_linear_time(std::vector<batch_time_sample>{{10, 0.5}, {20, 1.5}});
    CHECK(m.fixed_s == 0.0);
    CHECK(m.per_sample_s == Approx(0.07));
    // Time falling with the batch: slope < 0 unconstrained; the constant mean 0.2 wins.
    const affine_time c = dnnplan::fit_linear_time(std::vector<batch_time_sample>{{10, 0.3}, {20, 0.1}});
    CHECK(c.per_sample_s == 0.0);
    CHECK(c.fixed_s == Approx(0.2));
}

TEST_CASE("one profile scales in proportion to the batch", "[fit][linear_time]") {
    const affine_time m = dnnplan::proportional_time(128, 0.0256);
    CHECK(m.fixed_s == 0.0);
    CHECK(m.per_sample_s == Approx(0.0002));
    CHECK(m.at(32) == Approx(0.0064));
}

TEST_CASE("too few batch sizes and bad samples are rejected naming the field", "[fit][linear_time][errors]") {
    using Catch::Matchers::Contains;
    CHECK_THROWS_WITH(dnnplan::fit_linear_time(std::vector<batch_time_sample>{{8, 0.1}}, "profiles"),
                      Contains("profiles = 1 samples") && Contains("two or more distinct batch sizes"));
    CHECK_THROWS_WITH(dnnplan::fit_linear_time(std::vector<batch_time_sample>{{8, 0.1}, {8, 0.2}}), Contains("samples = 2 samples"));
    CHECK_THROWS_WITH(dnnplan::fit_linear_time(std::vector<batch_time_sample>{}), Contains("samples = 0 samples"));
    CHECK_THROWS_WITH(dnnplan::fit_linear_time(std::vector<batch_time_sample>{{8, 0.1}, {0, 0.2}}), Contains("samples[1].batch = 0"));
    CHECK_THROWS_WITH(dnnplan::fit_linear_time(std::vector<batch_time_sample>{{8, -0.1}, {4, 0.2}}), Contains("samples[0].time_s = -0.1"));
    CHECK_THROWS_WITH(dnnplan::proportional_time(0, 1.0), Contains("sample.batch = 0"));
    CHECK_THROWS_WITH((affine_time{.fixed_s = -1.0}.validate("forward")), Contains("forward.fixed_s = -1"));
    CHECK_THROWS_WITH((affine_time{.per_sample_s = -1.0}.validate("")), Contains("invalid input: per_sample_s = -1"));
    CHECK_THROWS_WITH((affine_time{.fixed_s = -1.0}.validate()), Contains("time.fixed_s = -1"));  // the default path
}
