// The checkpoint-restart model (preemption/checkpoint_restart.hpp) and its P(T <= D)
// (preemption/checkpoint_probability.hpp), tested together because they share their oracle (an
// event-by-event simulation of the model): Young's and Daly's intervals, the exact mean against
// Daly's formula and the simulation, P(T <= D) against the simulation, the limits, and bad input.
// The replay is tests/preemption/checkpoint_replay.cpp; the planner,
// tests/solve/resilience_plan/checkpoint.cpp.

#include <dnnplan/preemption/checkpoint_probability.hpp>
#include <dnnplan/preemption/checkpoint_restart.hpp>

#include "../support/checks.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using dnnplan::checkpoint_restart_model;
using dnnplan_test::field_of;

namespace {

/// One job simulated event by event: each segment attempt draws the time to the next preemption;
/// a preemption before the attempt ends costs the time so far and then restart attempts, each
/// drawing its own time to the next preemption, until one lasts R. Independent of the header's
/// formulas (only the model's definition is shared).
struct job_simulator {
    checkpoint_restart_model m;
    std::mt19937_64 rng;

    double exponential() {
        const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
        return -std::log1p(-u) / m.preemptions_per_h;
    }
    double run() {
        const double w = m.work_h, tau = m.interval_h;
        double t = 0.0, left = w;
        while (left > 1e-12 * w) {
            const double work = std::min(tau, left);
            const double need = work + m.checkpoint_h;
            while (true) {
                const double f = exponential();
                if (f >= need) break;
                t += f;
                while (true) {  // restart, interruptible
                    const double g = exponential();
                    if (g >= m.restart_h) break;
                    t += g;
                }
                t += m.restart_h;
            }
            t += need;
            left -= work;
        }
        return t;
    }
};

std::vector<double> simulate(const checkpoint_restart_model& m, int runs, std::uint64_t seed) {
    job_simulator sim{m, std::mt19937_64(seed)};
    std::vector<double> times(static_cast<std::size_t>(runs));
    for (auto& t : times) t = sim.run();
    std::sort(times.begin(), times.end());
    return times;
}

double empirical_cdf(const std::vector<double>& sorted, double d) {
    return static_cast<double>(std::upper_bound(sorted.begin(), sorted.end(), d) - sorted.begin()) /
           static_cast<double>(sorted.size());
}

/// Daly's formula, written out again.
double daly_formula(double w, double tau, double delta, double r, double lambda) {
    return std::exp(lambda * r) / lambda * (std::exp(lambda * (tau + delta)) - 1.0) * w / tau;
}

}  // namespace

TEST_CASE("Young's and Daly's intervals: hand-computed values and Daly's published optima", "[preemption][checkpoint]") {
    // sqrt(2 * 5 min * 24 h) = sqrt(2 * (1/12) * 24) = 2 h.
    CHECK(dnnplan::young_interval_h(5.0 / 60.0, 24.0) == Approx(2.0));
    CHECK(dnnplan::young_interval_h(0.5, 8.0) == Approx(std::sqrt(8.0)));
    // delta = 1, M = 2: x = 1/4, 2 * (1 + 0.5/3 + 0.25/9) - 1 = 1.3888...
    CHECK(dnnplan::daly_interval_h(1.0, 2.0) == Approx(2.0 * (1.0 + 0.5 / 3.0 + 0.25 / 9.0) - 1.0));
    CHECK(dnnplan::daly_interval_h(1.0, 2.0) == Approx(1.3888888888888888));
    CHECK(dnnplan::daly_interval_h(5.0, 2.0) == 2.0);  // delta >= 2M: M
    CHECK(dnnplan::daly_interval_h(4.0, 2.0) == 2.0);
    // Daly 2006, figures 3-5: delta = 5 min, M = 24 h, 6 h, 15 min: tau_opt = 117, 57, 9.1 min.
    CHECK(dnnplan::daly_interval_h(5.0 / 60.0, 24.0) * 60.0 == Approx(117.0).margin(0.5));
    CHECK(dnnplan::daly_interval_h(5.0 / 60.0, 6.0) * 60.0 == Approx(57.0).margin(0.5));
    CHECK(dnnplan::daly_interval_h(5.0 / 60.0, 0.25) * 60.0 == Approx(9.1).margin(0.05));
    // The exact minimiser of Daly's E[T] (Lambert W): (1 - v) e^v = e^{-lambda delta}, v = lambda tau.
    for (const double lambda : {1.0 / 24.0, 1.0 / 6.0, 4.0, 0.01}) {
        const double delta = 5.0 / 60.0;
        const double tau = dnnplan::continuous_optimal_interval_h(delta, lambda);
        const double v = lambda * tau;
        CHECK((1.0 - v) * std::exp(v) == Approx(std::exp(-lambda * delta)).epsilon(1e-12));
        // Daly's estimate is close to it while delta << M (his figure 2: well under 1 % there).
        if (lambda * delta < 0.02) CHECK(dnnplan::daly_interval_h(delta, 1.0 / lambda) == Approx(tau).epsilon(2e-3));
        // ... and it is the minimum of the formula.
        const auto e = [&](double t) { return daly_formula(100.0, t, delta, 0.1, lambda); };
        CHECK(e(tau) < e(tau * 1.01));
        CHECK(e(tau) < e(tau * 0.99));
    }
}

TEST_CASE("the exact mean is Daly's formula when W / tau is an integer, the renewal sum otherwise", "[preemption][checkpoint]") {
    const checkpoint_restart_model m{.work_h = 100.0, .interval_h = 2.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.05};
    CHECK(dnnplan::daly_expected_completion_h(m) == Approx(daly_formula(100.0, 2.0, 0.1, 0.2, 0.05)).epsilon(1e-14));
    CHECK(dnnplan::expected_completion_h(m) == Approx(daly_formula(100.0, 2.0, 0.1, 0.2, 0.05)).epsilon(1e-13));
    // 10 / 0.1 = 100.00000000000001 in doubles: still 100 segments.
    auto fine = m;
    fine.work_h = 10.0;
    fine.interval_h = 0.1;
    CHECK(dnnplan::split_work(10.0, 0.1).count == 100);
    CHECK(dnnplan::expected_completion_h(fine) == Approx(daly_formula(10.0, 0.1, 0.1, 0.2, 0.05)).epsilon(1e-12));
    // W = 10, tau = 3: 3 segments of 3 h and one of 1 h, each with its checkpoint.
    auto partial = m;
    partial.work_h = 10.0;
    partial.interval_h = 3.0;
    const auto seg = [&](double s) { return std::exp(0.05 * 0.2) * (std::exp(0.05 * s) - 1.0) / 0.05; };
    CHECK(dnnplan::split_work(10.0, 3.0).count == 4);
    CHECK(dnnplan::split_work(10.0, 3.0).last_work_h == Approx(1.0));
    CHECK(dnnplan::expected_completion_h(partial) == Approx(3.0 * seg(3.1) + seg(1.1)).epsilon(1e-13));
    CHECK(dnnplan::daly_expected_completion_h(partial) == Approx(seg(3.1) * 10.0 / 3.0));
    CHECK(dnnplan::no_failure_time_h(partial) == Approx(10.0 + 4 * 0.1));

    // The mean against the simulation: within 4.5 standard errors of the sample mean.
    const checkpoint_restart_model sim{.work_h = 7.5, .interval_h = 2.0, .checkpoint_h = 0.25, .restart_h = 0.5, .preemptions_per_h = 0.4};
    const auto times = simulate(sim, 100'000, 7);
    double sum = 0.0, sq = 0.0;
    for (const double t : times) sum += t, sq += t * t;
    const double mean = sum / static_cast<double>(times.size());
    const double se = std::sqrt((sq / static_cast<double>(times.size()) - mean * mean) / static_cast<double>(times.size()));
    CHECK(std::abs(dnnplan::expected_completion_h(sim) - mean) < 4.5 * se);
}

TEST_CASE("P(T <= D) agrees with an event-by-event simulation", "[preemption][checkpoint]") {
    // Dvoretzky-Kiefer-Wolfowitz: the empirical CDF of M runs is within eps of the true one at
    // every D at once, except with probability 2 exp(-2 M eps^2): 8e-5 for M = 120,000 and
    // eps = 0.0065; 1.1e-4 for 100,000 and 0.007; 3.4e-4 for 15,000 and 0.017. The runs are seeded, so
    // the test is deterministic; the tolerance adds P's own error bound (<= 1e-8).
    struct config {
        checkpoint_restart_model m;
        int runs;
        double eps;
    };
    const std::vector<config> configs{
        // 20 segments, lambda (tau + delta) = 0.33: about 8 preemptions per job.
        {{.work_h = 20.0, .interval_h = 1.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.3}, 120'000, 0.0065},
        // A last partial segment (4 segments: 2, 2, 2, 1.5 h of work) and long restarts.
        {{.work_h = 7.5, .interval_h = 2.0, .checkpoint_h = 0.25, .restart_h = 0.5, .preemptions_per_h = 0.4}, 100'000, 0.007},
        // 40 segments, lambda (tau + delta) = 2.1: about 290 preemptions per job.
        {{.work_h = 40.0, .interval_h = 1.0, .checkpoint_h = 0.05, .restart_h = 0.1, .preemptions_per_h = 2.0}, 15'000, 0.017},
    };
    std::uint64_t seed = 11;
    for (const auto& [m, runs, eps] : configs) {
        const auto times = simulate(m, runs, seed++);
        const double t0 = dnnplan::no_failure_time_h(m);
        std::vector<double> deadlines{t0 - 0.01, t0 + 1e-9, t0 + 0.5 * m.restart_h};
        for (const double q : {0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98})
            deadlines.push_back(times[static_cast<std::size_t>(q * static_cast<double>(times.size()))]);
        for (const double d : deadlines) {
            const auto p = dnnplan::completion_probability(m, d, 1e-8);
            INFO("work " << m.work_h << ", lambda " << m.preemptions_per_h << ", D = " << d);
            CHECK(p.error_bound <= 1e-8);
            CHECK(std::abs(p.p - empirical_cdf(times, d)) <= eps + p.error_bound);
        }
    }
}

TEST_CASE("P(T <= D) at the edges: below the no-failure time, within a restart of it, far above, lambda -> 0", "[preemption][checkpoint]") {
    const checkpoint_restart_model m{.work_h = 20.0, .interval_h = 1.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.3};
    const double t0 = 22.0;
    CHECK(dnnplan::no_failure_time_h(m) == Approx(t0));
    // Below W + n delta: 0 exactly.
    const auto below = dnnplan::completion_probability(m, t0 - 1e-9);
    CHECK(below.p == 0.0);
    CHECK(below.error_bound == 0.0);
    // Any preemption costs at least R: on [t0, t0 + R] P is the no-preemption probability.
    for (const double d : {t0, t0 + 0.1, t0 + 0.2}) {
        const auto p = dnnplan::completion_probability(m, d);
        CHECK(p.p == Approx(std::exp(-0.3 * t0)).epsilon(1e-12));
        CHECK(p.error_bound == 0.0);
    }
    // Far above: 1 within the bound.
    const auto above = dnnplan::completion_probability(m, 1e4);
    CHECK(above.p == Approx(1.0).margin(above.error_bound));
    CHECK(above.error_bound <= 1e-6);
    // Non-decreasing in D (within the error bounds).
    double previous = 0.0;
    for (double d = t0; d < 60.0; d += 0.37) {
        const auto p = dnnplan::completion_probability(m, d);
        CHECK(p.p >= previous - 2e-6);
        previous = p.p;
    }

    // lambda = 0: T = W + n delta exactly.
    auto calm = m;
    calm.preemptions_per_h = 0.0;
    CHECK(dnnplan::expected_completion_h(calm) == Approx(t0).epsilon(1e-15));
    CHECK(dnnplan::daly_expected_completion_h(calm) == Approx(t0).epsilon(1e-15));
    CHECK(dnnplan::completion_probability(calm, t0).p == 1.0);
    CHECK(dnnplan::completion_probability(calm, t0 - 1e-9).p == 0.0);
    // lambda -> 0: the mean tends to W + n delta, P(T <= t0) to 1 - lambda t0.
    for (const double lambda : {1e-6, 1e-9, 1e-12}) {
        auto rare = m;
        rare.preemptions_per_h = lambda;
        CHECK(dnnplan::expected_completion_h(rare) == Approx(t0).epsilon(10.0 * lambda * t0));
        CHECK(dnnplan::expected_completion_h(rare) > t0);
        CHECK(dnnplan::completion_probability(rare, t0).p == Approx(1.0 - lambda * t0).epsilon(1e-15).margin(lambda * lambda * t0 * t0));
        const auto later = dnnplan::completion_probability(rare, t0 + 3.0);
        CHECK(later.p >= 1.0 - lambda * t0 - later.error_bound);
        CHECK(later.p <= 1.0);
    }
}

TEST_CASE("P(T <= D) with 1,000 segments and lambda (tau + delta) = 5 stays accurate", "[preemption][checkpoint]") {
    // About 150 preemptions per segment, 150,000 per job: no simulation here. The result is
    // checked for consistency: two tolerances agree within their bounds, it increases with D,
    // and it is near 1/2 at the mean (the sum of 1,000 i.i.d. segment times is nearly symmetric).
    const checkpoint_restart_model m{.work_h = 1000.0, .interval_h = 0.9, .checkpoint_h = 0.1, .restart_h = 0.1, .preemptions_per_h = 5.0};
    REQUIRE(dnnplan::split_work(1000.0, 0.9).count == 1112);
    const double mean = dnnplan::expected_completion_h(m);
    const auto fine = dnnplan::completion_probability(m, mean, 1e-8);
    const auto coarse = dnnplan::completion_probability(m, mean, 1e-3);
    CHECK(fine.error_bound <= 1e-8);
    CHECK(std::abs(fine.p - coarse.p) <= fine.error_bound + coarse.error_bound);
    CHECK(fine.p > 0.45);
    CHECK(fine.p < 0.55);
    CHECK(dnnplan::completion_probability(m, mean * 0.97).p < fine.p);
    CHECK(dnnplan::completion_probability(m, mean * 1.03).p > fine.p);
}

TEST_CASE("checkpoint-restart model: malformed input names the field", "[preemption][checkpoint]") {
    CHECK(field_of([] { (void)dnnplan::young_interval_h(-1.0, 2.0); }) == "checkpoint_h");
    CHECK(field_of([] { (void)dnnplan::daly_interval_h(1.0, 0.0); }) == "mtbf_h");
    const checkpoint_restart_model m{.work_h = 1.0, .interval_h = 1.0, .preemptions_per_h = -1.0};
    CHECK(field_of([&] { (void)dnnplan::expected_completion_h(m); }) == "preemptions_per_h");
    CHECK(field_of([] { (void)dnnplan::expected_completion_h({.work_h = 0.0}); }) == "work_h");
    CHECK(field_of([] { (void)dnnplan::no_failure_time_h({.work_h = 10.0, .interval_h = 1e-15}); }) == "interval_h");  // 1e16 segments
    CHECK(field_of([] { (void)dnnplan::daly_expected_completion_h({.restart_h = -1.0}); }) == "restart_h");
    CHECK(field_of([] { (void)dnnplan::completion_probability({}, std::nan("")); }) == "deadline_h");
    CHECK(field_of([] { (void)dnnplan::completion_probability({}, 1.0, 0.5); }) == "tolerance");
}
