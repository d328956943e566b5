// The model concepts accept the published models and reject types that do not conform.

#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/convergence.hpp>
#include <dnnplan/model/cost.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>

namespace {

struct no_batch {  // lacks worker_batch
    std::size_t type_count() const noexcept { return 1; }
    double iteration_time_s(std::size_t, std::int64_t) const noexcept { return 1.0; }
};
struct throwing_time {  // evaluation must be noexcept
    std::size_t type_count() const noexcept { return 1; }
    double iteration_time_s(std::size_t, std::int64_t) const { return 1.0; }
    double worker_batch(std::size_t) const noexcept { return 1.0; }
};
struct float_time {  // returns float, not double
    std::size_t type_count() const noexcept { return 1; }
    float iteration_time_s(std::size_t, std::int64_t) const noexcept { return 1.0f; }
    double worker_batch(std::size_t) const noexcept { return 1.0; }
};
struct conforming_time {  // a constant-time model: a researcher's own, accepted as is
    std::size_t type_count() const noexcept { return 1; }
    double iteration_time_s(std::size_t, std::int64_t) const noexcept { return 1.0; }
    double worker_batch(std::size_t) const noexcept { return 64.0; }
};
struct no_minorant {  // an exact solver cannot bound it
    double loss_floor() const noexcept { return 0.0; }
    double iterations_to_reach(double, std::int64_t, double, double) const noexcept { return 1.0; }
};
struct no_billing {
    double type_usd_per_h(std::size_t) const noexcept { return 1.0; }
    double fixed_usd_per_h() const noexcept { return 0.0; }
};

}  // namespace

TEST_CASE("the published models satisfy the concepts", "[model][concepts]") {
    STATIC_REQUIRE(dnnplan::asynchronous_throughput_model<dnnplan::heterogeneous_ps_model>);
    STATIC_REQUIRE(dnnplan::convergence_model<dnnplan::spotdnn_loss_model>);
    STATIC_REQUIRE(dnnplan::linear_cost_model<dnnplan::instance_cost_model>);
    STATIC_REQUIRE(dnnplan::asynchronous_throughput_model<conforming_time>);
}

TEST_CASE("non-conforming models are rejected", "[model][concepts]") {
    STATIC_REQUIRE_FALSE(dnnplan::asynchronous_throughput_model<no_batch>);
    STATIC_REQUIRE_FALSE(dnnplan::asynchronous_throughput_model<throwing_time>);
    STATIC_REQUIRE_FALSE(dnnplan::asynchronous_throughput_model<float_time>);
    STATIC_REQUIRE_FALSE(dnnplan::convergence_model<no_minorant>);
    STATIC_REQUIRE_FALSE(dnnplan::linear_cost_model<no_billing>);
    STATIC_REQUIRE_FALSE(dnnplan::asynchronous_throughput_model<dnnplan::spotdnn_loss_model>);
}
