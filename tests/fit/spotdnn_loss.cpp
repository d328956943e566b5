// Tests of fit/spotdnn_loss.hpp: gamma1..gamma5 of spotDNN eq. (3) (Shang et al., IWQoS 2023).
#include <dnnplan/fit/spotdnn_loss.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace dnnplan;

namespace {

// The released artifact's ResNet-110 profile (../shared/reference/spotdnn.md): 5 types.
heterogeneous_ps_model artifact_model() {
    ps_network net{.parameter_bytes = 11.5e6, .required_bandwidth_bytes_per_s = 142e6, .ps_bandwidth_bytes_per_s = 1200e6,
                   .pcie_bandwidth_bytes_per_s = 10000e6, .contention = {.alpha1 = 0.8, .beta1 = -1.92}};
    const int gpus[] = {1, 1, 2, 4, 8};
    const double batch[] = {1024, 1024, 512, 512, 1024}, speed[] = {1885, 750, 1018, 1995, 2115};
    std::vector<measured_worker_type> m;
    for (int k = 0; k < 5; ++k) {
        std::string name = "t";  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "t" + string
        name += std::to_string(k);
        m.push_back({.name = name, .gpus = gpus[k], .worker_batch = gpus[k] * batch[k], .samples_per_s = speed[k]});
    }
    return heterogeneous_ps_model::from_measurements(net, m);
}

std::vector<spotdnn_loss_sample> synthetic(const loss_coefficients& c, double sigma, std::uint64_t seed) {
    const auto model = artifact_model();
    const spotdnn_loss_model loss(c);
    std::mt19937_64 rng(seed);
    const std::vector<std::vector<std::int32_t>> clusters{{2, 0, 0, 0, 0}, {2, 0, 2, 0, 0}, {0, 3, 0, 1, 0}, {1, 1, 1, 1, 3}};
    std::vector<spotdnn_loss_sample> out;
    for (const auto& counts : clusters)
        for (double j = 0; j <= 20000; j += 1000) {
            auto s = loss_sample_for(model, counts, j, 0.0);
            const double u1 = 1.0 - static_cast<double>(rng() >> 11) * 0x1.0p-53;
            const double u2 = static_cast<double>(rng() >> 11) * 0x1.0p-53;
            s.loss = loss.loss(s.workers, s.wa_batch, s.convergence_coefficient, j) +
                     sigma * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
            out.push_back(s);
        }
    return out;
}

}  // namespace

TEST_CASE("spotDNN loss fit recovers the artifact's coefficients (no gamma4)", "[fit][spotdnn_loss]") {
    const loss_coefficients truth{.gamma1 = 876.5, .gamma2 = -0.2, .gamma3 = 2507.6, .gamma5 = 0.5};
    const auto fit = fit_spotdnn_loss(synthetic(truth, 0.005, 1));
    CHECK(fit.coefficients.gamma1 == Approx(truth.gamma1).epsilon(0.05));
    CHECK(fit.coefficients.gamma2 == Approx(truth.gamma2).epsilon(0.1));
    CHECK(fit.coefficients.gamma3 == Approx(truth.gamma3).epsilon(0.05));
    CHECK(fit.coefficients.gamma5 == Approx(truth.gamma5).margin(0.01));
    CHECK_FALSE(fit.coefficients.gamma4.has_value());
    CHECK(fit.pinned.empty());
    const spotdnn_loss_model model(fit.coefficients);  // accepted by the model's constructor
    CHECK(model.loss_floor() == fit.coefficients.gamma5);
}

TEST_CASE("spotDNN loss fit with gamma4", "[fit][spotdnn_loss]") {
    const loss_coefficients truth{.gamma1 = 500.0, .gamma2 = -0.2, .gamma3 = 2500.0, .gamma4 = 0.4, .gamma5 = 0.5};
    const auto samples = synthetic(truth, 0.0, 2);
    const auto fit = fit_spotdnn_loss(samples, {.use_convergence_coefficient = true});
    REQUIRE(fit.coefficients.gamma4.has_value());
    CHECK(*fit.coefficients.gamma4 >= 0.0);
    CHECK(fit.quality.median_ape_ratio < 1e-3);
    const spotdnn_loss_model model(fit.coefficients);
    CHECK(model.loss(6, 1000.0, 0.5, 3000.0) == Approx(spotdnn_loss_model(truth).loss(6, 1000.0, 0.5, 3000.0)).epsilon(0.01));
}

TEST_CASE("spotDNN loss fit pins gamma2 and names what it needs", "[fit][spotdnn_loss]") {
    std::vector<spotdnn_loss_sample> same_batch;
    for (double j = 0; j < 5000; j += 500)
        same_batch.push_back({.workers = 2, .wa_batch = 512, .iteration = j, .loss = 1000.0 / (j + 300.0) + 0.4});
    const auto fit = fit_spotdnn_loss(same_batch);
    REQUIRE(fit.pinned.size() == 1);
    CHECK(fit.pinned[0].name == "gamma2");
    CHECK(fit.coefficients.gamma2 == 0.0);
    CHECK(fit.coefficients.gamma5 == Approx(0.4).margin(1e-4));
    try {
        (void)fit_spotdnn_loss(std::span(same_batch).first(2));
        FAIL("no throw");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "samples");
        CHECK(e.value() == "2 samples");
        CHECK(e.expected().find("at least 3 samples") != std::string::npos);
    }
    CHECK_THROWS_WITH(fit_spotdnn_loss(same_batch, {.use_convergence_coefficient = true}),
                      Catch::Contains("options.use_convergence_coefficient"));
    same_batch[4].wa_batch = 0.0;
    CHECK_THROWS_WITH(fit_spotdnn_loss(same_batch), Catch::Contains("samples[4].wa_batch"));
}
