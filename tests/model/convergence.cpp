// Eq. (3) and the convergence coefficient of eq. (5), spotDNN (Shang et al., IWQoS 2023).

#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/convergence.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using dnnplan::spotdnn_loss_model;

namespace {
const dnnplan::loss_coefficients resnet110_loss{.gamma1 = 876.5, .gamma2 = -0.2, .gamma3 = 2507.6, .gamma4 = std::nullopt, .gamma5 = 0.5};
}

TEST_CASE("iterations solve eq. (3) for the target", "[model][convergence]") {
    const spotdnn_loss_model model(resnet110_loss);
    // Without gamma4: j = (gamma2 b + gamma3) sqrt(n) / (L - gamma5) - gamma1.
    const double j = model.iterations_to_reach(0.8, 4, 1024.0, 0.7);
    CHECK(j == Approx((-0.2 * 1024 + 2507.6) * 2.0 / 0.3 - 876.5));
    // Plugging j back into eq. (3) gives the target.
    CHECK(model.loss(4, 1024.0, 0.7, j) == Approx(0.8));
    // R is ignored without gamma4.
    CHECK(model.iterations_to_reach(0.8, 4, 1024.0, 0.0) == j);
}

TEST_CASE("with gamma4 the convergence coefficient enters as sqrt((R + gamma4) n)", "[model][convergence]") {
    auto c = resnet110_loss;
    c.gamma4 = 0.25;
    const spotdnn_loss_model model(c);
    const double j = model.iterations_to_reach(0.8, 3, 2048.0, 0.5);
    CHECK(j == Approx((-0.2 * 2048 + 2507.6) * std::sqrt(0.75 * 3.0) / 0.3 - 876.5));
    CHECK(model.loss(3, 2048.0, 0.5, j) == Approx(0.8));
    CHECK(model.iterations_to_reach(0.8, 3, 2048.0, 0.9) > j);  // more spread, more iterations
}

TEST_CASE("a target at or below the asymptote is unreachable, never NaN", "[model][convergence]") {
    const spotdnn_loss_model model(resnet110_loss);
    CHECK(std::isinf(model.iterations_to_reach(0.5, 4, 1024.0, 0.0)));
    CHECK(std::isinf(model.iterations_to_reach(0.2, 4, 1024.0, 0.0)));
    CHECK(std::isinf(model.iterations_minorant(0.5, 4, 0.0).intercept));
}

TEST_CASE("a target already met at j = 0 needs zero iterations", "[model][convergence]") {
    const spotdnn_loss_model model(resnet110_loss);
    // Loss at j = 0 for n = 1, b = 1024: 2302.8 / 876.5 + 0.5 = 3.13; a target of 5 is met.
    CHECK(model.iterations_to_reach(5.0, 1, 1024.0, 0.0) == 0.0);
}

TEST_CASE("the minorant lies below the iterations for every R above its bound", "[model][convergence]") {
    for (const double gamma2 : {-0.3, -0.05, 0.1}) {
        for (const bool with_gamma4 : {false, true}) {
            auto c = resnet110_loss;
            c.gamma2 = gamma2;
            if (with_gamma4) c.gamma4 = 0.1;
            const spotdnn_loss_model model(c);
            for (const std::int64_t n : {1, 2, 7, 40}) {
                for (const double r_lower : {0.0, 0.3, 0.8}) {
                    const auto minorant = model.iterations_minorant(0.9, n, r_lower);
                    for (const double b : {32.0, 1024.0, 16384.0}) {
                        for (const double r : {r_lower, r_lower + 0.1, 0.99}) {
                            const double j = model.iterations_to_reach(0.9, n, b, r);
                            CHECK(j >= std::max(0.0, minorant.at(b)) - 1e-9 * std::abs(j));
                            if (!with_gamma4 || r == r_lower) CHECK(j == Approx(std::max(0.0, minorant.at(b))));
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("cluster aggregation follows eqs. (2), (4), (5)", "[model][asp]") {
    const dnnplan::ps_network net{.parameter_bytes = 1e6,
                                  .required_bandwidth_bytes_per_s = 1e8,
                                  .ps_bandwidth_bytes_per_s = 1e10,
                                  .pcie_bandwidth_bytes_per_s = 1e10,
                                  .contention = {.alpha1 = 0.5, .beta1 = -1.0}};
    const dnnplan::heterogeneous_ps_model model(net, {{.gpus = 1, .worker_batch = 100, .compute_s = 0.48},
                                                      {.gpus = 2, .worker_batch = 400, .compute_s = 0.98}});
    const double t0 = model.iteration_time_s(0, 3), t1 = model.iteration_time_s(1, 3);
    const std::vector<std::int32_t> counts{2, 1};
    const auto rates = dnnplan::asp_aggregate(model, counts);
    CHECK(rates.workers == 3);
    CHECK(rates.iterations_per_s == Approx(2.0 / t0 + 1.0 / t1));
    CHECK(rates.samples_per_s == Approx(200.0 / t0 + 400.0 / t1));
    CHECK(rates.wa_batch == Approx(rates.samples_per_s / rates.iterations_per_s));
    // R: shares w = (v0, v0, v1) / v; nearest one-hot at the largest share.
    const double v0 = 100.0 / t0, v1 = 400.0 / t1, v = 2 * v0 + v1;
    const double w0 = v0 / v, w1 = v1 / v;
    REQUIRE(w1 > w0);
    CHECK(rates.convergence_coefficient == Approx(std::sqrt(w0 * w0 + w0 * w0 + (1 - w1) * (1 - w1))));
    // One worker: R = 0, b_w = its batch.
    const auto single = dnnplan::asp_aggregate(model, std::vector<std::int32_t>{0, 1});
    CHECK(single.convergence_coefficient == 0.0);
    CHECK(single.wa_batch == Approx(400.0));
    // n identical workers: R = sqrt(1 - 1/n).
    CHECK(dnnplan::asp_aggregate(model, std::vector<std::int32_t>{4, 0}).convergence_coefficient ==
          Approx(std::sqrt(0.75)));
}
