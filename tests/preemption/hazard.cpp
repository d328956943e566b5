// The preemption hazard fits of preemption/hazard.hpp: the censored MLE against its closed form,
// the exact interval's coverage on seeded synthetic data, the hour-of-day likelihood-ratio test
// (rejects a strong daily pattern, keeps its level on constant data), the fitted rates of
// lifetime.csv; bad input names the field. The processes are tests/preemption/processes.cpp.

#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/preemption/hazard.hpp>
#include <dnnplan/preemption/poisson_preemption.hpp>

#include "../support/checks.hpp"
#include "../support/instance_events.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace dnnplan;
using dnnplan_test::field_of;

namespace {

using dnnplan_test::add;
using dnnplan_test::remove;

/// Uniform in [0, 1) from the top 53 bits (the library's own draw, written again here).
double uniform(std::mt19937_64& g) { return static_cast<double>(g() >> 11U) * 0x1.0p-53; }
double exponential(std::mt19937_64& g, double rate) { return -std::log1p(-uniform(g)) / rate; }

/// A lifetime under a hazard that depends on the hour of the day (rate_by_hour[h] per hour, > 0),
/// starting at `start` (hour of the day), censored at limit_h: inversion of the cumulative hazard.
lifetime_observation daily_lifetime(std::mt19937_64& g, const std::array<double, 24>& rate_by_hour, double start,
                                    double limit_h) {
    double budget = -std::log1p(-uniform(g));  // the cumulative hazard at the preemption
    double t = 0.0;
    double position = start;
    while (t < limit_h) {
        const auto hour = static_cast<std::size_t>(std::floor(position)) % 24;
        const double segment = std::min(std::floor(position) + 1.0 - position, limit_h - t);
        const double rate = rate_by_hour[hour];
        if (budget <= rate * segment) return {.duration_h = t + budget / rate, .preempted = true, .start_hour_of_day = start};
        budget -= rate * segment;
        t += segment;
        position = hour + 1 == 24 ? 0.0 : static_cast<double>(hour + 1);
    }
    return {.duration_h = limit_h, .preempted = false, .start_hour_of_day = start};
}

std::vector<lifetime_observation> daily_sample(std::mt19937_64& g, const std::array<double, 24>& rate_by_hour,
                                               std::size_t n) {
    std::vector<lifetime_observation> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(daily_lifetime(g, rate_by_hour, 24.0 * uniform(g), 24.0));
    return out;
}

}  // namespace

TEST_CASE("exponential hazard: the censored MLE and Garwood's interval in closed form", "[preemption][hazard]") {
    // d = 3 preemptions over T = 1 + 2 + 3 + 4 = 10 h (the 4 h one censored): lambda = 0.3 / h.
    const std::vector<lifetime_observation> data{{1.0, true, {}}, {2.0, true, {}}, {3.0, true, {}}, {4.0, false, {}}};
    const exponential_hazard h = fit_exponential_hazard(data);
    CHECK(h.preemptions == 3);
    CHECK(h.censored == 1);
    CHECK(h.exposure_h == 10.0);
    CHECK(h.rate_per_h == Approx(0.3).epsilon(1e-15));
    CHECK(h.mean_lifetime_h() == Approx(10.0 / 3.0).epsilon(1e-15));
    // chi2_0.025(6) = 1.237344, chi2_0.975(8) = 17.534546 (tables, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.4)
    CHECK(h.lower_per_h == Approx(1.237344 / 20.0).epsilon(1e-6));
    CHECK(h.upper_per_h == Approx(17.534546 / 20.0).epsilon(1e-6));
    // The MLE maximises d ln(lambda) - lambda T.
    const auto loglik = [&](double rate) { return 3.0 * std::log(rate) - rate * 10.0; };
    CHECK(loglik(h.rate_per_h) > loglik(h.rate_per_h * 1.01));
    CHECK(loglik(h.rate_per_h) > loglik(h.rate_per_h * 0.99));

    // No preemption: rate 0, lower 0, upper = chi2_{1-a/2}(2) / (2T) = -ln(a/2) / T exactly.
    const std::vector<lifetime_observation> none{{5.0, false, {}}, {3.0, false, {}}};
    const exponential_hazard z = fit_exponential_hazard(none, {.confidence = 0.9});
    CHECK(z.rate_per_h == 0.0);
    CHECK(z.lower_per_h == 0.0);
    CHECK(z.upper_per_h == Approx(-std::log(0.05) / 8.0).epsilon(1e-12));
    CHECK(std::isinf(z.mean_lifetime_h()));
}

TEST_CASE("exponential hazard: the 95% interval covers the true rate in 93.5%-96.5% of 2000 censored samples",
          "[preemption][hazard]") {
    // 400 instances a sample, lifetimes exponential at 0.5 / h, each observed for a uniform
    // 0-4 h (random right-censoring; about 57% end in a preemption).
    const double rate = 0.5;
    std::mt19937_64 g(20240612);
    std::int64_t below = 0, above = 0;
    constexpr int replications = 2000;
    std::vector<lifetime_observation> sample(400);
    for (int r = 0; r < replications; ++r) {
        for (auto& o : sample) {
            const double life = exponential(g, rate);
            const double watch = 4.0 * uniform(g);
            o = {.duration_h = std::min(life, watch), .preempted = life <= watch, .start_hour_of_day = {}};
        }
        const exponential_hazard h = fit_exponential_hazard(sample);
        below += h.upper_per_h < rate ? 1 : 0;
        above += h.lower_per_h > rate ? 1 : 0;
    }
    const double coverage = 1.0 - static_cast<double>(below + above) / replications;
    INFO("coverage " << coverage << ", upper below the rate " << below << ", lower above " << above);
    CHECK(coverage >= 0.935);
    CHECK(coverage <= 0.965);
    CHECK(static_cast<double>(below) <= 0.04 * replications);  // neither tail takes all the misses
    CHECK(static_cast<double>(above) <= 0.04 * replications);
}

TEST_CASE("hour-of-day hazard: exposure split over the hours lived, the preemption in the last one",
          "[preemption][hazard]") {
    const std::vector<lifetime_observation> data{
        {3.0, true, 22.5},    // 22:30-01:30: 0.5 h in bin 22, 1 h in 23 and 0, 0.5 h in 1; preempted in bin 1
        {24.0, true, 5.0},    // a whole day from 05:00: 1 h in every bin; preempted just before 05:00 (bin 4)
        {0.0, true, 7.25},    // preempted at once: bin 7, no exposure
        {2.0, false, 10.0}};  // censored: 1 h in bins 10 and 11
    const hour_of_day_hazard h = fit_hour_of_day_hazard(data);
    REQUIRE(h.bins.size() == 24);
    std::array<double, 24> exposure{};
    exposure.fill(1.0);  // the whole day
    const std::array<std::pair<std::size_t, double>, 6> partial{{{22, 0.5}, {23, 1.0}, {0, 1.0}, {1, 0.5}, {10, 1.0}, {11, 1.0}}};
    for (const auto& [bin, hours] : partial) exposure[bin] += hours;
    for (std::size_t b = 0; b < 24; ++b) {
        CHECK(h.bins[b].begin_hour == static_cast<std::int32_t>(b));
        CHECK(h.bins[b].end_hour == static_cast<std::int32_t>(b + 1));
        CHECK(h.bins[b].exposure_h == Approx(exposure[b]).epsilon(1e-15));
        CHECK(h.bins[b].preemptions == (b == 1 || b == 4 || b == 7 ? 1 : 0));
    }
    CHECK(h.constant.preemptions == 3);
    CHECK(h.constant.exposure_h == 29.0);
    CHECK(h.degrees_of_freedom == 23);
    // LR = 2 sum_b d_b ln((d_b / T_b) / (D / T)).
    const double overall = 3.0 / 29.0;
    const double lr = 2.0 * (std::log(1.0 / 1.5 / overall) + std::log(1.0 / 1.0 / overall) + std::log(1.0 / 1.0 / overall));
    CHECK(h.likelihood_ratio == Approx(lr).epsilon(1e-12));
    CHECK(h.p_value == Approx(dnnplan::detail::chi_squared_upper_tail(lr, 23)).epsilon(1e-12));

    // Six 4 h bins: a start at a bin edge puts a whole-day observation's preemption in the bin before.
    const std::vector<lifetime_observation> edge{{48.0, true, 8.0}, {1.0, false, 0.0}};
    const hour_of_day_hazard e = fit_hour_of_day_hazard(edge, {.bins = 6});
    CHECK(e.bins[1].preemptions == 1);  // [4, 8)
    CHECK(e.bins[0].exposure_h == 9.0);
    CHECK(e.bins[1].exposure_h == 8.0);
}

TEST_CASE("hour-of-day hazard: a strong daily pattern is supported, a constant rate is not", "[preemption][hazard]") {
    std::array<double, 24> daily{};
    for (std::size_t h = 0; h < 24; ++h) daily[h] = h < 12 ? 0.02 : 0.3;
    std::mt19937_64 g(7);
    const auto patterned = daily_sample(g, daily, 300);
    const hour_of_day_hazard day = fit_hour_of_day_hazard(patterned);
    CHECK(day.supported);
    CHECK(day.p_value < 1e-6);
    const hour_of_day_hazard halves = fit_hour_of_day_hazard(patterned, {.bins = 2});
    CHECK(halves.supported);
    CHECK(halves.bins[0].rate_per_h == Approx(0.02).epsilon(0.5));
    CHECK(halves.bins[1].rate_per_h == Approx(0.3).epsilon(0.25));
    CHECK(halves.rate_per_h(13.5) == halves.bins[1].rate_per_h);

    std::array<double, 24> flat{};
    flat.fill(0.1);
    const auto constant = daily_sample(g, flat, 300);
    const hour_of_day_hazard none = fit_hour_of_day_hazard(constant);
    CHECK_FALSE(none.supported);
    CHECK(none.p_value > 0.05);
    CHECK(none.rate_per_h(13.5) == none.constant.rate_per_h);

    // The test keeps its level: on 300 constant samples it rejects about 5% of them.
    std::int64_t rejected = 0;
    for (int r = 0; r < 300; ++r) rejected += fit_hour_of_day_hazard(daily_sample(g, flat, 200), {.bins = 6}).supported ? 1 : 0;
    INFO("rejected " << rejected << " of 300");
    CHECK(rejected >= 5);   // 1.7%
    CHECK(rejected <= 27);  // 9%
}

TEST_CASE("hour-of-day hazard: each bin's 95% interval covers its true rate in 93%-97% of 1000 samples",
          "[preemption][hazard]") {
    // One sample's interval misses the truth 1 time in 20 by design, so coverage is what is tested:
    // 1000 samples of 300 lifetimes each under a two-level daily pattern (binomial standard error
    // of the coverage 0.7%: the band is about 3 standard errors).
    std::array<double, 24> daily{};
    for (std::size_t h = 0; h < 24; ++h) daily[h] = h < 12 ? 0.02 : 0.3;
    std::mt19937_64 g(99);
    std::array<int, 2> covered{};
    constexpr int repetitions = 1000;
    for (int r = 0; r < repetitions; ++r) {
        const hour_of_day_hazard fit = fit_hour_of_day_hazard(daily_sample(g, daily, 300), {.bins = 2});
        for (std::size_t b = 0; b < 2; ++b) {
            const double truth = b == 0 ? 0.02 : 0.3;
            covered[b] += fit.bins[b].lower_per_h <= truth && truth <= fit.bins[b].upper_per_h ? 1 : 0;
        }
    }
    for (std::size_t b = 0; b < 2; ++b) {
        INFO("bin " << b << ": covered " << covered[b] << " of " << repetitions);
        CHECK(covered[b] >= 930);
        CHECK(covered[b] <= 970);
    }
}

TEST_CASE("hazard fits: bad input names the field", "[preemption][hazard]") {
    const std::vector<lifetime_observation> ok{{1.0, true, 3.0}};
    CHECK(field_of([] { (void)fit_exponential_hazard({}); }) == "observations");
    CHECK(field_of([] {
              const std::vector<lifetime_observation> zero{{0.0, true, {}}};
              (void)fit_exponential_hazard(zero);
          }) == "observations");
    CHECK(field_of([] {
              const std::vector<lifetime_observation> bad{{1.0, true, {}}, {-1.0, true, {}}};
              (void)fit_exponential_hazard(bad);
          }) == "observations[1].duration_h");
    CHECK(field_of([&] { (void)fit_exponential_hazard(ok, {.confidence = 1.0}); }) == "options.confidence");
    CHECK(field_of([] {
              const std::vector<lifetime_observation> no_hour{{1.0, true, {}}};
              (void)fit_hour_of_day_hazard(no_hour);
          }) == "observations[0].start_hour_of_day");
    CHECK(field_of([] {
              const std::vector<lifetime_observation> late{{1.0, true, 24.0}};
              (void)fit_hour_of_day_hazard(late);
          }) == "observations[0].start_hour_of_day");
    CHECK(field_of([&] { (void)fit_hour_of_day_hazard(ok, {.bins = 5}); }) == "options.bins");
    CHECK(field_of([&] { (void)fit_hour_of_day_hazard(ok, {.bins = 1}); }) == "options.bins");
    CHECK(field_of([&] { (void)fit_hour_of_day_hazard(ok, {.significance = 0.0}); }) == "options.significance");
    CHECK(field_of([] { (void)rate_from_hourly_probability(1.0); }) == "probability");
    CHECK(rate_from_hourly_probability(0.5) == Approx(std::log(2.0)).epsilon(1e-15));
}

TEST_CASE("the fitted rates of lifetime.csv (docs/models/preemption.md)", "[preemption][hazard]") {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/preemption/lifetime.csv", std::ios::binary);
    REQUIRE(in.good());
    const auto groups = parse_lifetimes(in);
    REQUIRE(groups.size() == 3);
    // The tables of docs/models/preemption.md, "Readers", as printed there (rounded): preemptions,
    // exposure, rate and its 95% interval, the 4-bin hour-of-day p-value. The page's figures come
    // from these fits, so this pins the page to the code (a pinned output, not an independent
    // check); the counts and exposures alone can be counted from lifetime.csv by hand.
    struct published {
        const char* gpu;
        std::int64_t preempted;
        double exposure_h, rate_per_h, lower_per_h, upper_per_h, p_4_bins;
    };
    const std::array<published, 3> table{{{"K80", 20, 1245.27, 0.01606, 0.00981, 0.02480, 0.055},
                                          {"P100", 8, 840.50, 0.00952, 0.00411, 0.01875, 0.088},
                                          {"V100", 5, 1095.33, 0.00456, 0.00148, 0.01065, 0.035}}};
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const auto observations = lifetime_observations(groups[g].vms);
        const exponential_hazard h = fit_exponential_hazard(observations);
        const hour_of_day_hazard daily = fit_hour_of_day_hazard(observations, {.bins = 4});
        INFO(groups[g].name << ": d = " << h.preemptions << ", T = " << h.exposure_h << " h, rate " << h.rate_per_h
                            << " [" << h.lower_per_h << ", " << h.upper_per_h << "], hour of day (4 bins) LR "
                            << daily.likelihood_ratio << " p " << daily.p_value);
        const published& row = table[g];
        CHECK(groups[g].name == row.gpu);
        CHECK(h.preemptions == row.preempted);
        CHECK(h.exposure_h == Approx(row.exposure_h).margin(0.005));
        CHECK(h.rate_per_h == Approx(row.rate_per_h).margin(0.000005));
        CHECK(h.lower_per_h == Approx(row.lower_per_h).margin(0.000005));
        CHECK(h.upper_per_h == Approx(row.upper_per_h).margin(0.000005));
        CHECK(daily.p_value == Approx(row.p_4_bins).margin(0.0005));
        CHECK(daily.constant.rate_per_h == h.rate_per_h);
    }
}
