// Eqs. (6)-(9) and (15) of spotDNN (Shang et al., IWQoS 2023), checked on hand-computed values.

#include <dnnplan/model/heterogeneous_ps.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using dnnplan::heterogeneous_ps_model;
using dnnplan::ps_network;

namespace {
// The artifact's ResNet-110 communication figures (reference note).
const ps_network resnet110_network{.parameter_bytes = 11.5e6,
                           .required_bandwidth_bytes_per_s = 142e6,
                           .ps_bandwidth_bytes_per_s = 1200e6,
                           .pcie_bandwidth_bytes_per_s = 1e10,
                           .contention = {.alpha1 = 0.8, .beta1 = -1.92}};
}  // namespace

TEST_CASE("contention ratio follows eq. (9), clamped to [0, 1]", "[model][heterogeneous_ps]") {
    CHECK(heterogeneous_ps_model::contention_ratio(resnet110_network, 1) == 0.0);  // 0.8 - 1.92 < 0
    CHECK(heterogeneous_ps_model::contention_ratio(resnet110_network, 9) == Approx(0.8 * 3.0 - 1.92));
    CHECK(heterogeneous_ps_model::contention_ratio(resnet110_network, 13) == Approx(0.8 * std::sqrt(13.0) - 1.92));
    CHECK(heterogeneous_ps_model::contention_ratio(resnet110_network, 14) == 1.0);  // 0.8 sqrt(14) - 1.92 = 1.07
}

TEST_CASE("worker bandwidth follows eq. (8)", "[model][heterogeneous_ps]") {
    // B_ps / n >= B_req for n <= 8 (1200 / 142 = 8.45): every worker gets B_req.
    CHECK(heterogeneous_ps_model::worker_bandwidth_bytes_per_s(resnet110_network, 8) == 142e6);
    // n = 9: P = 0.48, B_wk = 0.48 * 1200/9 + 0.52 * 142 MB/s.
    const double p9 = 0.8 * 3.0 - 1.92;
    CHECK(heterogeneous_ps_model::worker_bandwidth_bytes_per_s(resnet110_network, 9) ==
          Approx(p9 * 1200e6 / 9.0 + (1.0 - p9) * 142e6));
    // n = 16: P = 1, an even share of the PS.
    CHECK(heterogeneous_ps_model::worker_bandwidth_bytes_per_s(resnet110_network, 16) == Approx(1200e6 / 16.0));
}

TEST_CASE("iteration time is compute plus eq. (7), with compute derived from the measurement",
          "[model][heterogeneous_ps]") {
    const auto model = heterogeneous_ps_model::from_measurements(
        resnet110_network, {{.name = "g3.16xlarge", .gpus = 4, .worker_batch = 2048, .samples_per_s = 1995}});
    const double measured_s = 2048.0 / 1995.0;
    const double comm1 = 2.0 * 11.5e6 / 142e6 + 2.0 * 4.0 * 11.5e6 / 1e10;
    CHECK(model.type(0).compute_s == Approx(measured_s - comm1));
    // Alone, the model gives back the measured time.
    CHECK(model.iteration_time_s(0, 1) == Approx(measured_s).epsilon(1e-12));
    // Below the PS limit the time does not depend on n; above it, it grows with n.
    CHECK(model.iteration_time_s(0, 8) == Approx(measured_s).epsilon(1e-12));
    CHECK(model.iteration_time_s(0, 12) > model.iteration_time_s(0, 9));
    CHECK(model.iteration_time_s(0, 12) ==
          Approx(model.type(0).compute_s +
                 2.0 * 11.5e6 / heterogeneous_ps_model::worker_bandwidth_bytes_per_s(resnet110_network, 12) +
                 2.0 * 4.0 * 11.5e6 / 1e10));
}

TEST_CASE("n_upper follows eq. (15)", "[model][heterogeneous_ps]") {
    const heterogeneous_ps_model model(resnet110_network, {{.gpus = 1, .worker_batch = 1024, .compute_s = 0.3}});
    // Published: n_upper = 13 for alpha1 = 0.8, beta1 = -1.92 ((2.92 / 0.8)^2 = 13.32).
    CHECK(model.n_upper() == 13);
    ps_network flat = resnet110_network;
    flat.contention.alpha1 = 0.0;
    CHECK_FALSE(heterogeneous_ps_model(flat, {{.gpus = 1, .worker_batch = 1024, .compute_s = 0.3}}).n_upper());
}

TEST_CASE("a measurement faster than its own communication names the instance type", "[model][heterogeneous_ps][errors]") {
    try {
        (void)heterogeneous_ps_model::from_measurements(
            resnet110_network, {{.name = "fast.xlarge", .gpus = 1, .worker_batch = 1024, .samples_per_s = 1e6}});
        FAIL("expected invalid_input");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == "profile.per_instance.fast.xlarge.samples_per_s");
        CHECK(e.value() == "1e+06");  // shortest text that reads back as the same double
        CHECK_THAT(e.expected(), Catch::Contains("fast.xlarge"));
    }
}

TEST_CASE("bad network and worker figures are rejected by field", "[model][heterogeneous_ps][errors]") {
    ps_network bad = resnet110_network;
    bad.ps_bandwidth_bytes_per_s = -1.0;
    CHECK_THROWS_MATCHES(heterogeneous_ps_model(bad, {}), dnnplan::invalid_input,
                         Catch::Predicate<dnnplan::invalid_input>(
                             [](const auto& e) { return e.field() == "network.ps_bandwidth_bytes_per_s"; }));
    bad = resnet110_network;
    bad.contention.beta1 = std::nan("");
    CHECK_THROWS_AS(heterogeneous_ps_model(bad, {}), dnnplan::invalid_input);
    CHECK_THROWS_MATCHES(heterogeneous_ps_model(resnet110_network, {{.gpus = 0, .worker_batch = 1, .compute_s = 1}}),
                         dnnplan::invalid_input,
                         Catch::Predicate<dnnplan::invalid_input>([](const auto& e) { return e.field() == "types[0].gpus"; }));
}
