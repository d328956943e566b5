// Tests of model/optimus.hpp (Peng et al., EuroSys 2018, eqs. (1), (3), (4)).
#include <dnnplan/model/optimus.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using namespace dnnplan;

TEST_CASE("Optimus speed models evaluate eqs. (3) and (4)", "[model][optimus]") {
    const optimus_sync_speed s{.theta0 = 0.001, .theta1 = 0.02, .theta2 = 0.01, .theta3 = 0.002, .theta4 = 0.003, .global_batch = 512};
    CHECK(s.steps_per_s(2, 4) == Approx(1.0 / (0.001 * 512 / 4 + 0.02 + 0.01 * 2 + 0.002 * 4 + 0.003 * 2)));
    const optimus_async_speed a{.theta0 = 0.1, .theta1 = 0.01, .theta2 = 0.002, .theta3 = 0.004};
    CHECK(a.steps_per_s(2, 8) == Approx(8.0 / (0.1 + 0.01 * 4 + 0.002 * 8 + 0.004 * 2)));
    CHECK_NOTHROW(s.validate());
    const optimus_sync_speed negative{.theta2 = -1.0, .global_batch = 1};
    CHECK_THROWS_WITH(negative.validate(), Catch::Contains("optimus_sync.theta2"));
    CHECK_THROWS_WITH(optimus_sync_speed{}.validate(), Catch::Contains("optimus_sync.global_batch"));
    const optimus_async_speed nan_theta{.theta3 = NAN};
    CHECK_THROWS_WITH(nan_theta.validate("m"), Catch::Contains("m.theta3"));
}

TEST_CASE("Optimus loss curve and its inverse", "[model][optimus]") {
    const optimus_loss_curve c{.beta0 = 0.01, .beta1 = 0.5, .beta2 = 0.2};
    CHECK(c.loss(0.0) == Approx(2.2));
    CHECK(c.loss(c.steps_to_reach(0.5)) == Approx(0.5));
    CHECK(c.steps_to_reach(3.0) == 0.0);
    CHECK(std::isinf(c.steps_to_reach(0.2)));
    const optimus_loss_curve zero{.beta0 = 1, .beta1 = 0};
    CHECK_THROWS_WITH(zero.validate(), Catch::Contains("optimus_loss.beta1"));
}
