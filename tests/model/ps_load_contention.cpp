// Tests of model/ps_load_contention.hpp: load-driven contention at a parameter server (a closed
// network of a delay station and a load-dependent processor-sharing station, product form).
#include <dnnplan/model/ps_load_contention.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

using namespace dnnplan;

namespace {

constexpr double exchange = 2.0e6;   // 2 S, S = 1 MB
constexpr double b_req = 100e6;      // 2 S / B_req = 0.02 s
constexpr double b_ps = 150e6;

double rate(const std::vector<double>& z, const std::vector<std::int32_t>& x, double ps = b_ps) {
    return ps_load_iterations_per_s(z, x, exchange, b_req, ps);
}

std::vector<double> type_rates(const std::vector<double>& z, const std::vector<std::int32_t>& x) {
    std::vector<double> r(x.size(), 0.0);
    ps_load_type_rates(z, x, exchange, b_req, b_ps, r);
    return r;
}

}  // namespace

TEST_CASE("ps load contention: one worker runs at its alone speed", "[model][ps_load]") {
    // n = 1: X = 1 / (Z + 2 S / min(B_req, B_ps)), eqs. (6)-(7) at n = 1.
    CHECK(rate({0.2}, {1}) == Approx(1.0 / (0.2 + 0.02)).epsilon(1e-12));
    CHECK(rate({0.2, 0.05}, {0, 1}) == Approx(1.0 / (0.05 + 0.02)).epsilon(1e-12));
    // A PS slower than the worker's link bounds even one worker.
    CHECK(rate({0.2}, {1}, 50e6) == Approx(1.0 / (0.2 + 0.04)).epsilon(1e-12));
}

TEST_CASE("ps load contention: an unbounded PS gives every worker its alone speed", "[model][ps_load]") {
    const std::vector<double> z{0.2, 0.06, 0.04};
    const std::vector<std::int32_t> x{3, 2, 4};
    const double alone = 3.0 / 0.22 + 2.0 / 0.08 + 4.0 / 0.06;
    CHECK(rate(z, x, 1e15) == Approx(alone).epsilon(1e-6));
}

TEST_CASE("ps load contention: matches the single-class machine-repairman recursion", "[model][ps_load]") {
    // One type, B_req >= B_ps: a single processor-sharing server of 2 S / B_ps seconds per visit and
    // a delay of Z: exact MVA (Reiser and Lavenberg 1980) gives X(n).
    const double z = 0.1;
    const double d = exchange / 80e6;
    double queue = 0.0;
    for (std::int32_t n = 1; n <= 12; ++n) {
        const double response = d * (1.0 + queue);
        const double x = static_cast<double>(n) / (z + response);
        queue = x * response;
        CHECK(ps_load_iterations_per_s(std::vector<double>{z}, std::vector<std::int32_t>{n}, exchange, 1e12, 80e6) ==
              Approx(x).epsilon(1e-10));
    }
}

TEST_CASE("ps load contention: monotone in added load", "[model][ps_load]") {
    const std::vector<double> z{0.2, 0.06, 0.04};
    for (std::size_t k = 0; k < 3; ++k) {
        std::vector<std::int32_t> x{1, 1, 1};
        double previous_total = rate(z, x);
        std::vector<double> previous = type_rates(z, x);
        for (std::int32_t add = 1; add <= 12; ++add) {
            ++x[k];
            const double total = rate(z, x);
            const std::vector<double> r = type_rates(z, x);
            CHECK(total >= previous_total);  // one more worker never slows the cluster
            for (std::size_t q = 0; q < 3; ++q) {
                // ... and never speeds up any worker (per-worker rate of each type)
                const double per_now = r[q] / static_cast<double>(x[q]);
                const double per_before = previous[q] / static_cast<double>(x[q] - (q == k ? 1 : 0));
                CHECK(per_now <= per_before * (1.0 + 1e-12));
            }
            previous_total = total;
            previous = r;
        }
    }
}

TEST_CASE("ps load contention: a fast worker loads the PS more than a slow one", "[model][ps_load]") {
    // The point of the model: contention follows the load, not the count. Adding a fast worker
    // (Z = 0.04 s) slows a fixed slow worker more than adding a slow one (Z = 0.2 s).
    const std::vector<double> z{0.2, 0.04};
    const double with_slow = type_rates(z, {2, 0})[0] / 2.0;
    const double with_fast = type_rates(z, {1, 1})[0];
    CHECK(with_fast < with_slow);
    // Many slow workers barely slow each other while as many fast workers saturate the PS.
    const double slow8 = rate({0.2}, {8}) / 8.0 * (0.2 + 0.02);
    const double fast8 = rate({0.04}, {8}) / 8.0 * (0.04 + 0.02);
    CHECK(slow8 > 0.8);
    CHECK(fast8 < 0.6);  // B_ps / 2 S = 75 steps/s against 8 / 0.06 = 133 alone
}

TEST_CASE("ps load contention: large clusters stay finite (log-space convolution)", "[model][ps_load]") {
    const std::vector<double> z{0.2, 0.06, 0.04};
    const double r = rate(z, {300, 300, 300});
    CHECK(std::isfinite(r));
    // Saturated: the PS moves B_ps bytes/s, 2 S per iteration.
    CHECK(r == Approx(b_ps / exchange).epsilon(1e-6));
}

TEST_CASE("ps load contention: the bounds between PS and worker counts", "[model][ps_load]") {
    // What solve/elastic_advisor/advisor.hpp reads from one measured configuration about another (P PS of
    // capacity P B_ps each, n workers of one type, x = X / n a worker's rate):
    //   a PS or a worker more never lowers X; a worker more never raises x;
    //   with n' >= n and P' / n' >= P / n (the PS pooled over more workers), x' >= x;
    //   with n' <= n and P' >= P (fewer workers, as many PS or more), x' >= x.
    // Swept over compute times and bandwidths from PS-bound to worker-bound.
    const auto cluster = [](double z, double ps_bytes_per_s, std::int32_t ps, std::int32_t n) {
        return ps_load_iterations_per_s(std::vector<double>{z}, std::vector<std::int32_t>{n}, exchange, b_req,
                                        ps_bytes_per_s * ps);
    };
    for (const double z : {0.005, 0.05, 0.5})
        for (const double ps_bytes_per_s : {20e6, 100e6, 500e6}) {
            for (std::int32_t ps = 1; ps <= 3; ++ps)
                for (std::int32_t n = 1; n <= 8; ++n) {
                    const double rate_now = cluster(z, ps_bytes_per_s, ps, n);  // X; a worker's rate is X / n
                    const double worker_more = cluster(z, ps_bytes_per_s, ps, n + 1);
                    CHECK(worker_more >= rate_now * (1.0 - 1e-12));
                    CHECK(worker_more / (n + 1) <= rate_now / n * (1.0 + 1e-12));
                    // ps2 = ps + 1, n2 = n is "a PS more never lowers X".
                    for (std::int32_t ps2 = ps; ps2 <= 4; ++ps2)
                        for (std::int32_t n2 = 1; n2 <= 10; ++n2)
                            if (n2 <= n || ps2 * n >= ps * n2)
                                CHECK(cluster(z, ps_bytes_per_s, ps2, n2) / n2 >= rate_now / n * (1.0 - 1e-12));
                }
        }
}
