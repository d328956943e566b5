// The Pollux-form fitter (adaptdl/goodput.py fit_perf_params): recovery of known parameters from
// seeded noisy synthetic steps, each pinning rule, interval coverage, and the errors.

#include <dnnplan/fit/sync_data_parallel.hpp>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace dnnplan;

namespace {
const pollux_params truth{.alpha_c_s = 0.05,
                          .beta_c_s = 0.002,
                          .alpha_n_s = 0.15,
                          .beta_n_s = 0.01,
                          .alpha_r_s = 0.04,
                          .beta_r_s = 0.005,
                          .gamma = 2.0};

double normal(std::mt19937_64& g) { return dnnplan_test::standard_normal(g); }

/// Placements as in the Pollux traces: 1-4 nodes of up to 4 GPUs, batches 16..128.
std::vector<sync_shape> shapes(std::mt19937_64& g, std::size_t count) {
    std::vector<sync_shape> out;
    const double batches[] = {16.0, 32.0, 64.0, 128.0};
    for (std::size_t i = 0; i < count; ++i) {
        const auto nodes = static_cast<std::int64_t>(1 + g() % 4);
        std::int64_t replicas = 0;
        for (std::int64_t k = 0; k < nodes; ++k) replicas += static_cast<std::int64_t>(1 + g() % 4);
        out.push_back({.replicas = replicas, .nodes = nodes, .local_batch = batches[g() % 4], .accumulation_steps = 0});
    }
    return out;
}

std::vector<sync_step_sample> noisy(const std::vector<sync_shape>& where, double sigma, std::mt19937_64& g) {
    std::vector<sync_step_sample> out;
    for (const auto& s : where)
        out.push_back({.shape = s, .step_time_s = pollux_step_time_s(truth, s) * std::exp(sigma * normal(g))});
    return out;
}

sync_step_sample at(std::int64_t replicas, std::int64_t nodes, double batch, double time_s) {
    return {.shape = {.replicas = replicas, .nodes = nodes, .local_batch = batch, .accumulation_steps = 0},
            .step_time_s = time_s};
}
}  // namespace

TEST_CASE("the fit recovers known parameters from noisy synthetic steps", "[fit][sync]") {
    std::mt19937_64 g(7);
    const auto samples = noisy(shapes(g, 200), 0.01, g);
    sync_fit_options options;
    options.gamma_weight = 0.0;  // no pull towards gamma = 1 or small betas: recover the truth
    options.retrogression_weight = 0.0;
    const auto fit = fit_sync_data_parallel(samples, options);
    CHECK(fit.pinned.empty());
    CHECK(fit.params.alpha_c_s == Approx(truth.alpha_c_s).epsilon(0.1));
    CHECK(fit.params.beta_c_s == Approx(truth.beta_c_s).epsilon(0.05));
    CHECK(fit.params.alpha_n_s == Approx(truth.alpha_n_s).epsilon(0.1));
    CHECK(fit.params.beta_n_s == Approx(truth.beta_n_s).epsilon(0.2));
    CHECK(fit.params.alpha_r_s == Approx(truth.alpha_r_s).epsilon(0.2));
    CHECK(fit.params.gamma == Approx(truth.gamma).epsilon(0.1));
    CHECK(fit.quality.median_ape_ratio < 0.015);  // noise of 1%: median |e| ~ 0.67%
    CHECK(fit.degrees_of_freedom == 200 - 7);
    CHECK(std::sqrt(fit.residual_variance) == Approx(0.01).epsilon(0.2));

    // With Pollux's regularisers the fit stays close (they are small nudges).
    const auto regularised = fit_sync_data_parallel(samples);
    CHECK(regularised.quality.median_ape_ratio < 0.02);
    CHECK(regularised.params.gamma <= fit.params.gamma + 1e-6);
}

TEST_CASE("the fit is deterministic", "[fit][sync]") {
    std::mt19937_64 g(3);
    const auto samples = noisy(shapes(g, 40), 0.02, g);
    const auto a = fit_sync_data_parallel(samples);
    const auto b = fit_sync_data_parallel(samples);
    CHECK(a.params == b.params);
}

TEST_CASE("pinning: one local batch fixes alpha_c at half the mean compute time", "[fit][sync][pinning]") {
    std::mt19937_64 g(11);
    std::vector<sync_shape> where = shapes(g, 30);
    for (auto& s : where) s.local_batch = 32.0;
    auto samples = noisy(where, 0.01, g);
    double compute = 0.0;
    for (auto& s : samples) {
        s.sync_time_s = 0.25 * s.step_time_s;
        compute += 0.75 * s.step_time_s;
    }
    const auto fit = fit_sync_data_parallel(samples);
    CHECK(fit.is_pinned("alpha_c_s"));
    CHECK_FALSE(fit.is_pinned("beta_c_s"));
    CHECK(fit.params.alpha_c_s == Approx(compute / 30.0 / 2.0));
    CHECK(fit.covariance(0, 0) == 0.0);  // pinned: no variance
    // Without sync times, the step time stands for the compute time.
    for (auto& s : samples) s.sync_time_s.reset();
    double mean_step = 0.0;
    for (const auto& s : samples) mean_step += s.step_time_s / 30.0;
    CHECK(fit_sync_data_parallel(samples).params.alpha_c_s == Approx(mean_step / 2.0));
}

TEST_CASE("pinning: no multi-node sample fixes alpha_n and beta_n", "[fit][sync][pinning]") {
    std::vector<sync_step_sample> samples;
    for (const std::int64_t k : {1, 2, 3, 4})
        for (const double m : {16.0, 64.0})
            samples.push_back(at(k, 1, m, pollux_step_time_s(truth, {.replicas = k, .nodes = 1, .local_batch = m})));
    const auto fit = fit_sync_data_parallel(samples);
    CHECK(fit.pinned == std::vector<std::string>{"alpha_n_s", "beta_n_s"});
    CHECK(fit.params.alpha_n_s == 1e-8);
    CHECK(fit.params.beta_n_s == 1e-8);
    CHECK(fit.quality.median_ape_ratio < 0.01);
}

TEST_CASE("pinning: no single-node multi-replica sample fixes alpha_r and beta_r", "[fit][sync][pinning]") {
    std::vector<sync_step_sample> samples;
    for (const std::int64_t n : {2, 3, 4})
        for (const double m : {16.0, 64.0})
            samples.push_back(at(2 * n, n, m, pollux_step_time_s(truth, {.replicas = 2 * n, .nodes = n, .local_batch = m})));
    samples.push_back(at(1, 1, 32.0, pollux_step_time_s(truth, {.replicas = 1, .nodes = 1, .local_batch = 32.0})));
    const auto fit = fit_sync_data_parallel(samples);
    CHECK(fit.pinned == std::vector<std::string>{"alpha_r_s", "beta_r_s"});
    CHECK(fit.params.alpha_r_s == 1e-8);
    CHECK(fit.params.beta_r_s == 1e-8);
}

TEST_CASE("pinning: no sample with more than 2 replicas fixes beta_n and beta_r", "[fit][sync][pinning]") {
    std::vector<sync_step_sample> samples;
    for (const double m : {16.0, 32.0, 64.0, 128.0}) {
        samples.push_back(at(1, 1, m, pollux_step_time_s(truth, {.replicas = 1, .nodes = 1, .local_batch = m})));
        samples.push_back(at(2, 1, m, pollux_step_time_s(truth, {.replicas = 2, .nodes = 1, .local_batch = m})));
        samples.push_back(at(2, 2, m, pollux_step_time_s(truth, {.replicas = 2, .nodes = 2, .local_batch = m})));
    }
    const auto fit = fit_sync_data_parallel(samples);
    CHECK(fit.pinned == std::vector<std::string>{"beta_n_s", "beta_r_s"});
    CHECK(fit.params.beta_n_s == 1e-8);
    CHECK(fit.params.beta_r_s == 1e-8);
    CHECK(fit.quality.median_ape_ratio < 0.02);
}

TEST_CASE("pinning: every rule at once on a single sample", "[fit][sync][pinning]") {
    // One K = 1 sample: alpha_c pinned (one batch), all four network parameters pinned; beta_c
    // and gamma free -> 2 samples needed.
    const std::vector<sync_step_sample> one{at(1, 1, 32.0, 0.1)};
    try {
        (void)fit_sync_data_parallel(one);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "samples");
        CHECK(e.value() == "1 samples");
        CHECK(e.expected().find("at least 2 samples") != std::string::npos);
        CHECK(e.expected().find("beta_c_s, gamma") != std::string::npos);
    }
    const std::vector<sync_step_sample> two{at(1, 1, 32.0, 0.1), at(1, 1, 32.0, 0.102)};
    const auto fit = fit_sync_data_parallel(two);
    CHECK(fit.pinned.size() == 5);
    CHECK(fit.params.alpha_c_s == Approx(0.101 / 2.0));
    CHECK(pollux_step_time_s(fit.params, two[0].shape) == Approx(0.101).epsilon(0.02));
}

TEST_CASE("prediction intervals cover new observations at the nominal rate", "[fit][sync][interval]") {
    std::mt19937_64 g(21);
    const double sigma = 0.03;
    const auto train = noisy(shapes(g, 120), sigma, g);
    const auto fit = fit_sync_data_parallel(train);
    const auto where = shapes(g, 1000);
    int inside = 0;
    for (const auto& s : where) {
        const double observed = pollux_step_time_s(truth, s) * std::exp(sigma * normal(g));
        const auto i = predict_step_time_with_interval(fit, s, 0.9);
        CHECK(i.lower < i.value);
        CHECK(i.value < i.upper);
        if (i.lower <= observed && observed <= i.upper) ++inside;
    }
    const double rate = inside / 1000.0;
    CHECK(rate > 0.86);
    CHECK(rate < 0.94);
}

TEST_CASE("fitter errors name the field", "[fit][sync]") {
    const std::vector<sync_step_sample> none;
    try {
        (void)fit_sync_data_parallel(none);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "samples");
        CHECK(e.expected().find("at least 1 samples") != std::string::npos);
    }
    std::vector<sync_step_sample> bad{at(1, 1, 32.0, 0.1), at(4, 1, 32.0, -0.1)};
    try {
        (void)fit_sync_data_parallel(bad);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "samples[1].step_time_s");
    }
    bad[1] = at(1, 2, 32.0, 0.1);
    try {
        (void)fit_sync_data_parallel(bad);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "samples[1].shape.replicas");
    }
    sync_fit_options options;
    options.reweighting_rounds = 0;
    const std::vector<sync_step_sample> ok{at(1, 1, 32.0, 0.1), at(1, 1, 64.0, 0.15), at(1, 1, 128.0, 0.26)};
    try {
        (void)fit_sync_data_parallel(ok, options);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "options.reweighting_rounds");
    }
    const auto fit = fit_sync_data_parallel(ok);
    try {
        (void)predict_step_time_with_interval(fit, {.replicas = 1, .nodes = 1, .local_batch = 32.0}, 1.5);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "confidence");
    }
}
