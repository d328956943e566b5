// Eq. (11) cost with billing, and eq. (10) batch from memory (spotDNN, IWQoS 2023).

#include <dnnplan/model/cost.hpp>
#include <dnnplan/model/memory.hpp>

#include <catch2/catch.hpp>

#include <vector>


TEST_CASE("cost is billed time times the cluster price, eq. (11)", "[model][cost]") {
    const dnnplan::instance_cost_model per_second({1.25, 0.36}, 0.192, 1.0);
    const std::vector<std::int32_t> counts{2, 3};
    CHECK(per_second.usd_per_h(counts) == Approx(0.192 + 2 * 1.25 + 3 * 0.36));
    CHECK(per_second.billed_s(100.2) == 101.0);
    CHECK(per_second.billed_s(100.0) == 100.0);
    CHECK(per_second.cost_usd(counts, 100.2) == Approx(101.0 * (0.192 + 2.5 + 1.08) / 3600.0));
    const dnnplan::instance_cost_model continuous({1.25, 0.36}, 0.0, 0.0);
    CHECK(continuous.billed_s(100.2) == 100.2);
    const dnnplan::instance_cost_model per_minute({1.25}, 0.0, 60.0);
    CHECK(per_minute.billed_s(61.0) == 120.0);
}

TEST_CASE("catalog prices follow the pricing choice", "[model][cost]") {
    dnnplan::instance_catalog catalog;
    catalog.instances = {{.name = "a", .gpus = 1, .quota = 1, .spot_usd_per_h = 1.0, .on_demand_usd_per_h = 3.0},
                         {.name = "b", .gpus = 1, .quota = 1, .spot_usd_per_h = 0.5, .on_demand_usd_per_h = 2.0}};
    const auto spot = dnnplan::instance_cost_model::from_catalog(catalog, {1, 0}, dnnplan::price_kind::spot, 1.0);
    CHECK(spot.type_usd_per_h(0) == 0.5);
    CHECK(spot.type_usd_per_h(1) == 1.0);
    const auto on_demand = dnnplan::instance_cost_model::from_catalog(catalog, {1, 0}, dnnplan::price_kind::on_demand, 1.0);
    CHECK(on_demand.type_usd_per_h(0) == 2.0);
}

TEST_CASE("negative prices are rejected", "[model][cost][errors]") {
    CHECK_THROWS_AS(dnnplan::instance_cost_model({1.0, -0.1}, 0.0, 1.0), dnnplan::invalid_input);
    CHECK_THROWS_AS(dnnplan::instance_cost_model({1.0}, -1.0, 1.0), dnnplan::invalid_input);
    CHECK_THROWS_AS(dnnplan::instance_cost_model({1.0}, 0.0, -1.0), dnnplan::invalid_input);
}

TEST_CASE("batch from memory is the largest power of two below the fit, eq. (10)", "[model][memory]") {
    const dnnplan::batch_memory_fit fit{.alpha2_samples_per_byte = 100.0 / 1e9, .beta2_samples = -50.0};
    CHECK(dnnplan::batch_from_memory(fit, 16e9) == 1024);  // 1550 -> 1024
    CHECK(dnnplan::batch_from_memory(fit, 10.74e9) == 1024);  // 1024 exactly stays 1024
    CHECK(dnnplan::batch_from_memory(fit, 10.7e9) == 512);   // 1020 -> 512
    CHECK(dnnplan::batch_from_memory(fit, 0.51e9) == 1);     // 1 sample
    CHECK_THROWS_AS(dnnplan::batch_from_memory(fit, 0.4e9), dnnplan::invalid_input);  // -10 samples
    CHECK_THROWS_AS(dnnplan::batch_from_memory(fit, -1.0), dnnplan::invalid_input);
}
