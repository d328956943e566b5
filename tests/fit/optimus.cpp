// Tests of fit/optimus.hpp: Optimus's speed models by NNLS and its loss curve (Peng et al.,
// EuroSys 2018).
#include <dnnplan/fit/optimus.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace dnnplan;

namespace {
double noise(std::mt19937_64& rng, double sigma) {
    const double u1 = 1.0 - static_cast<double>(rng() >> 11) * 0x1.0p-53;
    const double u2 = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    return 1.0 + sigma * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}
}  // namespace

TEST_CASE("Optimus synchronous speed: NNLS recovers theta", "[fit][optimus]") {
    const optimus_sync_speed truth{.theta0 = 0.001, .theta1 = 0.02, .theta2 = 0.01, .theta3 = 0.002, .theta4 = 0.003, .global_batch = 512};
    std::mt19937_64 rng(7);
    std::vector<optimus_speed_sample> samples;
    for (std::int64_t p = 1; p <= 4; ++p)
        for (std::int64_t w = 1; w <= 8; ++w)
            samples.push_back({.parameter_servers = p, .workers = w, .steps_per_s = truth.steps_per_s(p, w) * noise(rng, 0.005)});
    const auto fit = fit_optimus_sync(samples, 512);
    CHECK(fit.model.theta0 == Approx(truth.theta0).epsilon(0.05));
    CHECK(fit.model.theta2 == Approx(truth.theta2).epsilon(0.1));
    CHECK(fit.quality.median_ape_ratio < 0.01);
    CHECK(fit.model.steps_per_s(3, 6) == Approx(truth.steps_per_s(3, 6)).epsilon(0.01));
    CHECK_NOTHROW(fit.model.validate());
}

TEST_CASE("Optimus asynchronous speed: NNLS recovers theta, keeps theta >= 0", "[fit][optimus]") {
    const optimus_async_speed truth{.theta0 = 0.1, .theta1 = 0.01, .theta2 = 0.0, .theta3 = 0.004};
    std::vector<optimus_speed_sample> samples;
    for (std::int64_t p = 1; p <= 3; ++p)
        for (std::int64_t w = 1; w <= 6; ++w) samples.push_back({.parameter_servers = p, .workers = w, .steps_per_s = truth.steps_per_s(p, w)});
    const auto fit = fit_optimus_async(samples);
    CHECK(fit.model.theta0 == Approx(0.1).epsilon(1e-6));
    CHECK(fit.model.theta1 == Approx(0.01).epsilon(1e-6));
    CHECK(fit.model.theta2 >= 0.0);
    CHECK(fit.model.theta2 < 1e-9);
    CHECK(fit.model.theta3 == Approx(0.004).epsilon(1e-6));
}

TEST_CASE("Optimus speed fits name how many samples they need", "[fit][optimus]") {
    const std::vector<optimus_speed_sample> four(4, {.parameter_servers = 1, .workers = 2, .steps_per_s = 3.0});
    try {
        (void)fit_optimus_sync(four, 128);
        FAIL("no throw");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "samples");
        CHECK(e.value() == "4 samples");
        CHECK(e.expected().find("at least 5 samples") != std::string::npos);
    }
    CHECK_THROWS_WITH(fit_optimus_async(std::span(four).first(3)), Catch::Contains("at least 4 samples"));
    auto bad = four;
    bad[2].workers = 0;
    CHECK_THROWS_WITH(fit_optimus_async(bad), Catch::Contains("samples[2].workers"));
    CHECK_THROWS_WITH(fit_optimus_sync(four, 0.0), Catch::Contains("global_batch"));
}

TEST_CASE("Optimus loss curve: weighted bounded fit recovers beta", "[fit][optimus]") {
    const optimus_loss_curve truth{.beta0 = 0.002, .beta1 = 0.4, .beta2 = 0.3};
    std::mt19937_64 rng(3);
    std::vector<loss_sample> samples;
    for (int k = 0; k <= 4000; k += 100) samples.push_back({.step = static_cast<double>(k), .loss = truth.loss(k) * noise(rng, 0.01)});
    const auto fit = fit_optimus_loss(samples);
    CHECK(fit.curve.beta2 == Approx(truth.beta2).epsilon(0.1));
    CHECK(fit.curve.beta0 == Approx(truth.beta0).epsilon(0.15));
    CHECK(fit.curve.loss(8000) == Approx(truth.loss(8000)).epsilon(0.03));
    CHECK(fit.quality.median_ape_ratio < 0.02);
    CHECK_NOTHROW(fit.curve.validate());
    // A curve with no floor: beta2 held at its bound 0, never negative.
    std::vector<loss_sample> no_floor;
    for (int k = 0; k <= 1000; k += 50) no_floor.push_back({.step = static_cast<double>(k), .loss = 1.0 / (0.01 * static_cast<double>(k) + 1.0)});
    const auto f2 = fit_optimus_loss(no_floor);
    CHECK(f2.curve.beta2 >= 0.0);
    CHECK(f2.curve.beta2 < 1e-6);
    CHECK_THROWS_WITH(fit_optimus_loss(std::span(no_floor).first(2)), Catch::Contains("at least 3 samples"));
    no_floor[1].loss = NAN;
    CHECK_THROWS_WITH(fit_optimus_loss(no_floor), Catch::Contains("samples[1].loss"));
}
