// The 1F1B stage-cost model of model/pipeline_1f1b.hpp: its formulas on hand-computed cases, the
// memory check, and its contract with the partitioners (stage_cost_model).

#include <dnnplan/model/pipeline_1f1b.hpp>
#include <dnnplan/model/concepts.hpp>

#include <catch2/catch.hpp>

#include <cmath>

namespace {

// L0: forward 0.001 + 0.0001 b, backward 0.002 + 0.0002 b, 1e6 activation bytes per sample,
//     1e8 parameter bytes, 2e8 optimizer state; 1e6 bytes per sample cross the cut after it.
// L1: forward 0.0003 b, backward 0.0006 b, 2e5 bytes per sample, 3e8 parameters, 6e8 state.
dnnplan::layer_chain two_layers() {
    dnnplan::layer_chain c;
    c.layers.push_back({.layer = 0, .forward = {0.001, 0.0001}, .backward = {0.002, 0.0002},
                        .activation_bytes_per_sample = 1e6, .parameter_bytes = 1e8, .optimizer_state_bytes = 2e8});
    c.layers.push_back({.layer = 1, .forward = {0.0, 0.0003}, .backward = {0.0, 0.0006},
                        .activation_bytes_per_sample = 2e5, .parameter_bytes = 3e8, .optimizer_state_bytes = 6e8});
    c.cut_bytes_per_sample = {1e6, 0.0};
    return c;
}

const dnnplan::pipeline_config hand_options{.micro_batch_size = 8, .micro_batches = 4, .bandwidth_bytes_per_s = 1e9,
                                            .sync_overlap_ratio = 0.5, .device_memory_bytes = 16e9, .speed_ratio = 1.0};

struct missing_pipeline_time {
    static constexpr bool needs_stage_count = true;
    std::size_t num_states() const noexcept { return 1; }
    double stage_time_s(const dnnplan::stage_candidate&) const noexcept { return 1.0; }
};

struct position_free_stage {
    static constexpr bool needs_stage_count = false;
    static constexpr bool depends_only_on_remaining_stages = false;
    std::size_t num_states() const noexcept { return 1; }
    double stage_time_s(const dnnplan::stage_candidate&) const noexcept { return 1.0; }
    double pipeline_time_s(double slowest, std::int32_t) const noexcept { return slowest; }
};

}  // namespace

static_assert(dnnplan::stage_cost_model<dnnplan::pipeline_1f1b_model>);
static_assert(dnnplan::remaining_stages_cost_model<dnnplan::pipeline_1f1b_model>);
static_assert(!dnnplan::stage_cost_model<missing_pipeline_time>);
static_assert(dnnplan::stage_cost_model<position_free_stage>);
static_assert(!dnnplan::remaining_stages_cost_model<position_free_stage>);

TEST_CASE("the 1F1B formulas on a hand-computed two-stage pipeline", "[model][pipeline_1f1b]") {
    const dnnplan::pipeline_1f1b_model model(two_layers(), hand_options);
    CHECK(model.num_states() == 2);
    CHECK(model.minibatch_samples() == 32.0);

    // Stage 0 of 2 = [0, 1) on 2 replicas: b_r = ceil(8 / 2) = 4.
    //   compute   = (0.001 + 0.0001*4) + (0.002 + 0.0002*4) = 0.0014 + 0.0028 = 0.0042
    //   transfer  = 2 * (0 + 1e6) * 4 / 1e9 = 0.008
    //   allreduce = 2 * (2-1)/2 * 1e8 / 1e9 = 0.1; exposed = (1 - 0.5) * 0.1 = 0.05
    //   t         = max(0.0042, 0.008) + 0.05 / 4 = 0.0205
    //   memory    = 1e8 + 2e8 + min(2, 4) * 1e6 * 4 = 3.08e8
    const auto s0 = model.breakdown({.first_state = 0, .end_state = 1, .replicas = 2, .stage_index = 0, .stage_count = 2});
    CHECK(s0.samples_per_replica == 4);
    CHECK(s0.in_flight == 2);
    CHECK(s0.forward_s == Approx(0.0014));
    CHECK(s0.backward_s == Approx(0.0028));
    CHECK(s0.compute_s == Approx(0.0042));
    CHECK(s0.transfer_s == Approx(0.008));
    CHECK(s0.allreduce_s == Approx(0.1));
    CHECK(s0.exposed_sync_s == Approx(0.05));
    CHECK(s0.memory_bytes == Approx(3.08e8));
    CHECK(s0.fits);
    CHECK(s0.stage_time_s == Approx(0.0205));

    // Stage 1 of 2 = [1, 2) on 1 replica: b_r = 8, one micro-batch in flight.
    //   compute = 0.0003*8 + 0.0006*8 = 0.0072; transfer = 2 * (1e6 + 0) * 8 / 1e9 = 0.016;
    //   no all-reduce; t = 0.016; memory = 3e8 + 6e8 + 1 * 2e5 * 8 = 9.016e8
    const dnnplan::stage_candidate last{.first_state = 1, .end_state = 2, .replicas = 1, .stage_index = 1, .stage_count = 2};
    const auto s1 = model.breakdown(last);
    CHECK(s1.in_flight == 1);
    CHECK(s1.compute_s == Approx(0.0072));
    CHECK(s1.transfer_s == Approx(0.016));
    CHECK(s1.allreduce_s == 0.0);
    CHECK(s1.memory_bytes == Approx(9.016e8));
    CHECK(model.stage_time_s(last) == Approx(0.016));

    // Time per minibatch: (M + S - 1) * slowest = (4 + 2 - 1) * 0.0205 = 0.1025 s.
    CHECK(model.pipeline_time_s(std::max(s0.stage_time_s, s1.stage_time_s), 2) == Approx(0.1025));
    // One stage on one device, M = 4: 4 * (compute of 8 samples of both layers) =
    // 4 * (0.0018 + 0.0036 + 0.0072) = 0.0504; no transfer, no all-reduce.
    const double alone = model.stage_time_s({.first_state = 0, .end_state = 2, .replicas = 1, .stage_index = 0, .stage_count = 1});
    CHECK(alone == Approx(0.0126));
    CHECK(model.pipeline_time_s(alone, 1) == Approx(0.0504));
}

TEST_CASE("replicas split each micro-batch: ceil(b / r) samples each", "[model][pipeline_1f1b]") {
    const dnnplan::pipeline_1f1b_model model(two_layers(), hand_options);
    const auto share = [&](std::int32_t r) {
        return model.breakdown({.first_state = 1, .end_state = 2, .replicas = r, .stage_index = 0, .stage_count = 1}).samples_per_replica;
    };
    CHECK(share(1) == 8);
    CHECK(share(3) == 3);  // ceil(8 / 3)
    CHECK(share(8) == 1);
    CHECK(share(12) == 1);  // more replicas than samples: the extra ones idle
    // Ring all-reduce of L1's 3e8 bytes on 3 replicas: 2 * 2/3 * 3e8 / 1e9 = 0.4 s, half exposed.
    const auto b3 = model.breakdown({.first_state = 1, .end_state = 2, .replicas = 3, .stage_index = 0, .stage_count = 1});
    CHECK(b3.allreduce_s == Approx(0.4));
    CHECK(b3.exposed_sync_s == Approx(0.2));
    // compute 0.0009 * 3 = 0.0027 < transfer 2 * 1e6 * 3 / 1e9 = 0.006; + 0.2 / 4.
    CHECK(b3.stage_time_s == Approx(0.056));
}

TEST_CASE("1F1B holds min(S - t, M) micro-batches: a stage that does not fit is infinite", "[model][pipeline_1f1b]") {
    auto options = hand_options;
    options.micro_batches = 2;
    // Stage [0, 1) on 1 replica (b_r = 8): memory = 3e8 + k * 1e6 * 8 with k in flight.
    const dnnplan::pipeline_1f1b_model model(two_layers(), options);
    const auto in_flight = [&](std::int32_t index, std::int32_t count) {
        return model.breakdown({.first_state = 0, .end_state = 1, .replicas = 1, .stage_index = index, .stage_count = count}).in_flight;
    };
    CHECK(in_flight(0, 1) == 1);
    CHECK(in_flight(0, 2) == 2);
    CHECK(in_flight(0, 4) == 2);  // capped at M = 2
    CHECK(in_flight(3, 4) == 1);
    CHECK(in_flight(0, 0) == 2);  // stage count unknown: the most 1F1B holds

    options.device_memory_bytes = 3.1e8;  // 3e8 + 1 * 8e6 fits, 3e8 + 2 * 8e6 does not
    const dnnplan::pipeline_1f1b_model tight(two_layers(), options);
    const auto first = [&](std::int32_t count) {
        return tight.breakdown({.first_state = 0, .end_state = 1, .replicas = 1, .stage_index = 0, .stage_count = count});
    };
    CHECK(first(1).fits);
    CHECK(std::isfinite(first(1).stage_time_s));
    CHECK_FALSE(first(2).fits);
    CHECK(first(2).memory_bytes == Approx(3.16e8));
    CHECK(std::isinf(first(2).stage_time_s));
    // Two replicas halve the activations: 3e8 + 2 * 1e6 * 4 = 3.08e8 fits.
    CHECK(std::isfinite(tight.stage_time_s({.first_state = 0, .end_state = 1, .replicas = 2, .stage_index = 0, .stage_count = 2})));
    // Outside the space: infinite.
    CHECK(std::isinf(tight.stage_time_s({.first_state = 1, .end_state = 1, .replicas = 1})));
    CHECK(std::isinf(tight.stage_time_s({.first_state = 0, .end_state = 3, .replicas = 1})));
    CHECK(std::isinf(tight.stage_time_s({.first_state = 0, .end_state = 1, .replicas = 0})));
}

TEST_CASE("a faster device divides compute, not communication", "[model][pipeline_1f1b]") {
    auto options = hand_options;
    options.speed_ratio = 2.0;
    const dnnplan::pipeline_1f1b_model model(two_layers(), options);
    const auto b = model.breakdown({.first_state = 0, .end_state = 1, .replicas = 2, .stage_index = 0, .stage_count = 2});
    CHECK(b.compute_s == Approx(0.0021));
    CHECK(b.transfer_s == Approx(0.008));
    CHECK(b.allreduce_s == Approx(0.1));
}

TEST_CASE("bad options and chains are rejected naming the field", "[model][pipeline_1f1b][errors]") {
    using Catch::Matchers::Contains;
    const auto make = [](dnnplan::pipeline_config o) { return dnnplan::pipeline_1f1b_model(two_layers(), o); };
    CHECK_THROWS_WITH(make({.micro_batch_size = 0}), Contains("options.micro_batch_size = 0"));
    CHECK_THROWS_WITH(make({.micro_batches = 0}), Contains("options.micro_batches = 0"));
    CHECK_THROWS_WITH(make({.bandwidth_bytes_per_s = 0}), Contains("options.bandwidth_bytes_per_s = 0"));
    CHECK_THROWS_WITH(make({.sync_overlap_ratio = 1.5}), Contains("options.sync_overlap_ratio = 1.5") && Contains("[0, 1]"));
    CHECK_THROWS_WITH(make({.device_memory_bytes = -1}), Contains("options.device_memory_bytes = -1"));
    CHECK_THROWS_WITH(make({.speed_ratio = 0}), Contains("options.speed_ratio = 0"));
    CHECK_THROWS_WITH(dnnplan::pipeline_1f1b_model(dnnplan::layer_chain{}, {}), Contains("chain = 0 layers"));
    auto chain = two_layers();
    chain.layers[1].backward.per_sample_s = -1;
    CHECK_THROWS_WITH(dnnplan::pipeline_1f1b_model(chain, {}), Contains("chain.layers[1].backward.per_sample_s = -1"));
    chain = two_layers();
    chain.cut_bytes_per_sample.pop_back();
    CHECK_THROWS_WITH(dnnplan::pipeline_1f1b_model(chain, {}), Contains("chain.cut_bytes_per_sample = 1 values"));
    chain = two_layers();
    chain.layers[0].parameter_bytes = std::nan("");
    CHECK_THROWS_WITH(dnnplan::pipeline_1f1b_model(chain, {}), Contains("chain.layers[0].parameter_bytes = nan"));
}
