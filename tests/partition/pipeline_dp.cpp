// The exact partitioner of partition/pipeline_dp.hpp and its entry solve(pipeline_dp_request,
// model) (solve/pipeline_plan/solve.hpp): brute-force agreement on seeded random chains (both
// recurrences, the 1F1B model and stage-cost models written here), a hand-computed case where
// device memory changes the best plan, plans that re-price to their reported time, and vgg16 on
// 64 devices.

#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/model/pipeline_1f1b.hpp>
#include <dnnplan/partition/pipeline_dp.hpp>
#include <dnnplan/solve/pipeline_plan/solve.hpp>

#include "../support/pipeline_oracle.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

// The 1F1B model without its depends_only_on_remaining_stages declaration: the partitioner
// must take the prefix recurrence.
struct opaque_1f1b {
    dnnplan::pipeline_1f1b_model model;
    static constexpr bool needs_stage_count = true;
    std::size_t num_states() const noexcept { return model.num_states(); }
    double stage_time_s(const dnnplan::stage_candidate& c) const noexcept { return model.stage_time_s(c); }
    double pipeline_time_s(double slowest, std::int32_t stages) const noexcept { return model.pipeline_time_s(slowest, stages); }
};

// A model that reads devices_before (a stage further down a chain of devices is slower), which
// only the prefix recurrence may price.
struct position_dependent {
    std::vector<double> work;
    static constexpr bool needs_stage_count = true;
    std::size_t num_states() const noexcept { return work.size(); }
    double stage_time_s(const dnnplan::stage_candidate& c) const noexcept {
        double w = 0;
        for (std::size_t i = c.first_state; i < c.end_state; ++i) w += work[i];
        return w / c.replicas + 0.05 * c.devices_before + 0.01 * c.stage_index;
    }
    double pipeline_time_s(double slowest, std::int32_t stages) const noexcept { return (3.0 + stages) * slowest; }
};

// A stage-cost model written here whose stage time depends on its place only through the stages
// left (u = stage_count - stage_index): work over replicas, plus a per-replica synchronisation
// cost, plus a warm-up that grows with the stages still to come. The suffix recurrence takes it.
struct remaining_dependent {
    std::vector<double> work;
    std::vector<double> parameters;
    double sync_per_replica = 0.01;
    double warmup_per_stage = 0.02;
    double limit = std::numeric_limits<double>::infinity();  ///< work per replica above this: +inf (does not fit)
    static constexpr bool needs_stage_count = true;
    static constexpr bool depends_only_on_remaining_stages = true;
    std::size_t num_states() const noexcept { return work.size(); }
    double stage_time_s(const dnnplan::stage_candidate& c) const noexcept {
        double w = 0, p = 0;
        for (std::size_t i = c.first_state; i < c.end_state; ++i) w += work[i], p += parameters[i];
        const double per_replica = w / c.replicas;
        if (per_replica > limit) return std::numeric_limits<double>::infinity();
        return per_replica + sync_per_replica * p * (c.replicas - 1) +
               warmup_per_stage * (c.stage_count - c.stage_index - 1);
    }
    double pipeline_time_s(double slowest, std::int32_t stages) const noexcept { return (8.0 + stages) * slowest; }
};

// remaining_dependent without its declaration: the prefix recurrence.
struct opaque_remaining {
    remaining_dependent inner;
    static constexpr bool needs_stage_count = true;
    std::size_t num_states() const noexcept { return inner.num_states(); }
    double stage_time_s(const dnnplan::stage_candidate& c) const noexcept { return inner.stage_time_s(c); }
    double pipeline_time_s(double slowest, std::int32_t stages) const noexcept { return inner.pipeline_time_s(slowest, stages); }
};

static_assert(!dnnplan::remaining_stages_cost_model<opaque_1f1b>);
static_assert(!dnnplan::remaining_stages_cost_model<opaque_remaining>);
static_assert(dnnplan::remaining_stages_cost_model<remaining_dependent>);
static_assert(!dnnplan::remaining_stages_cost_model<position_dependent>);

template <class Model>
void check_against_brute_force(const Model& model, std::int32_t devices, std::int32_t max_stages = 0) {
    const auto expected = dnnplan_test::brute_force_pipeline(model, devices, max_stages);
    const auto r = dnnplan::solve(dnnplan::pipeline_dp_request{.options = {.max_devices = devices, .max_stages = max_stages}}, model);
    const auto& by_devices = r.details.by_devices;
    REQUIRE(by_devices.size() == expected.size());
    for (std::size_t d = 0; d < expected.size(); ++d) {
        INFO("devices " << d + 1);
        // No pipeline on d devices: no plan (was a plan of time +inf).
        CHECK(by_devices[d].has_value() == std::isfinite(expected[d]));
        if (!by_devices[d]) continue;
        const auto& plan = *by_devices[d];
        CHECK(plan.time_s == expected[d]);
        // The plan is what it claims: contiguous, within the budget, re-priced to its time.
        std::int32_t used = 0;
        double slowest = 0;
        const auto count = static_cast<std::int32_t>(plan.stages.size());
        for (std::size_t k = 0; k < plan.stages.size(); ++k) {
            const auto& s = plan.stages[k];
            CHECK(s.first_state == (k == 0 ? 0 : plan.stages[k - 1].end_state));
            const double t = model.stage_time_s({.first_state = s.first_state, .end_state = s.end_state, .replicas = s.replicas,
                                                 .devices_before = used, .stage_index = static_cast<std::int32_t>(k),
                                                 .stage_count = count});
            CHECK(t == s.stage_time_s);
            slowest = std::max(slowest, t);
            used += s.replicas;
        }
        CHECK(plan.stages.back().end_state == model.num_states());
        CHECK(used == plan.devices);
        CHECK(used <= static_cast<std::int32_t>(d + 1));
        CHECK(model.pipeline_time_s(slowest, count) == plan.time_s);
    }
    CHECK(r.counters.evaluations > 0);
    if (std::isinf(expected.back())) {
        CHECK(r.status == dnnplan::solve_status::infeasible);
        CHECK_FALSE(r.plan);
        CHECK_FALSE(r.objective_value);
        CHECK_FALSE(r.bound);
        CHECK_FALSE(r.reason.empty());
        return;
    }
    REQUIRE(r.status == dnnplan::solve_status::optimal);
    REQUIRE(r.plan);
    CHECK(r.plan->time_s == expected.back());
    // The recurrences are exact: value and bound are the plan's time.
    CHECK(r.objective_value == r.plan->time_s);
    CHECK(r.bound == r.plan->time_s);
}

}  // namespace

TEST_CASE("on seeded random chains both recurrences equal brute force for every device budget", "[partition][pipeline_dp][oracle]") {
    int infinite = 0, pipelined = 0;
    for (std::uint64_t seed = 1; seed <= 120; ++seed) {
        dnnplan_test::rng r(seed);
        const auto n = static_cast<std::size_t>(r.integer(1, 6));
        const dnnplan::layer_chain chain = dnnplan_test::random_chain(r, n);
        const dnnplan::pipeline_config options{.micro_batch_size = r.integer(1, 16),
                                                     .micro_batches = r.integer(1, 6),
                                                     .bandwidth_bytes_per_s = r.uniform(1e8, 2e10),
                                                     .sync_overlap_ratio = r.uniform(0.0, 1.0),
                                                     .device_memory_bytes = r.uniform(2e8, 4e9),
                                                     .speed_ratio = r.uniform(0.5, 2.0)};
        const dnnplan::pipeline_1f1b_model model(chain, options);
        const std::int32_t devices = r.integer(1, 6);
        const std::int32_t max_stages = r.chance(0.2) ? r.integer(1, 3) : 0;
        INFO("seed " << seed << ", " << n << " states, " << devices << " devices, max stages " << max_stages);
        check_against_brute_force(model, devices, max_stages);
        check_against_brute_force(opaque_1f1b{model}, devices, max_stages);
        const auto best = dnnplan::pipeline_dp_partition(model, {.max_devices = devices, .max_stages = max_stages}).plan;
        if (!best) ++infinite;
        else if (best->stages.size() > 1) ++pipelined;
    }
    // The seeds cover memory-infeasible problems and multi-stage optima, not only one shape.
    CHECK(infinite > 5);
    CHECK(pipelined > 20);
}

TEST_CASE("the prefix recurrence prices devices_before and stage_index exactly", "[partition][pipeline_dp][oracle]") {
    for (std::uint64_t seed = 200; seed < 260; ++seed) {
        dnnplan_test::rng r(seed);
        position_dependent model;
        for (int i = r.integer(1, 6); i > 0; --i) model.work.push_back(r.uniform(0.01, 1.0));
        INFO("seed " << seed);
        check_against_brute_force(model, r.integer(1, 6));
    }
}

TEST_CASE("device memory changes the best plan (hand-computed)", "[partition][pipeline_dp]") {
    // Two layers, each 0.001 + 0.002 s per sample forward + backward, 1e6 activation bytes per
    // sample, 4e9 parameter bytes, no optimizer state; b = 8, M = 4, bandwidth 1e12, no overlap.
    dnnplan::layer_chain chain;
    for (std::size_t i = 0; i < 2; ++i)
        chain.layers.push_back({.layer = i, .forward = {0, 0.001}, .backward = {0, 0.002}, .activation_bytes_per_sample = 1e6,
                                .parameter_bytes = 4e9, .optimizer_state_bytes = 0});
    chain.cut_bytes_per_sample = {1e6, 0};
    dnnplan::pipeline_config options{.micro_batch_size = 8, .micro_batches = 4, .bandwidth_bytes_per_s = 1e12,
                                           .sync_overlap_ratio = 0.0, .device_memory_bytes = 1e10};
    // On 2 devices:
    //  one stage x 2: b_r = 4, compute 2 * 0.003 * 4 = 0.024, all-reduce 2 * 1/2 * 8e9 / 1e12 =
    //    0.008, t = 0.024 + 0.008 / 4 = 0.026, T = (4 + 1 - 1) * 0.026 = 0.104; memory 8e9 + 8e6.
    //  two stages x 1: compute 0.003 * 8 = 0.024 each, transfer 2 * 1e6 * 8 / 1e12 = 1.6e-5,
    //    T = (4 + 2 - 1) * 0.024 = 0.12; memory 4e9 + 2 * 8e6 on the first stage.
    //  one stage x 1: T = 4 * 0.048 = 0.192.
    const dnnplan::pipeline_dp_request two{.options = {.max_devices = 2}};
    const auto roomy = dnnplan::solve(two, dnnplan::pipeline_1f1b_model(chain, options));
    REQUIRE(roomy.details.by_devices[0]);
    CHECK(roomy.details.by_devices[0]->time_s == Approx(0.192));
    REQUIRE(roomy.plan);
    CHECK(roomy.plan->time_s == Approx(0.104));
    REQUIRE(roomy.plan->stages.size() == 1);
    CHECK(roomy.plan->stages[0].replicas == 2);

    options.device_memory_bytes = 6e9;  // the whole model (8e9) no longer fits on a device
    const auto tight = dnnplan::solve(two, dnnplan::pipeline_1f1b_model(chain, options));
    CHECK_FALSE(tight.details.by_devices[0]);  // nothing fits on one device: no plan there
    REQUIRE(tight.plan);
    CHECK(tight.plan->time_s == Approx(0.12));
    REQUIRE(tight.plan->stages.size() == 2);
    CHECK(tight.plan->stages[0].end_state == 1);
    CHECK(tight.status == dnnplan::solve_status::optimal);

    options.device_memory_bytes = 3e9;  // not even one layer fits
    const auto none = dnnplan::solve(two, dnnplan::pipeline_1f1b_model(chain, options));
    CHECK(none.status == dnnplan::solve_status::infeasible);
    CHECK_THAT(none.reason, Catch::Matchers::Contains("device memory"));
    CHECK_FALSE(none.plan);
    CHECK_FALSE(none.bound);
    CHECK_FALSE(none.details.by_devices[0]);
    CHECK_FALSE(none.details.by_devices[1]);
}

TEST_CASE("vgg16 on up to 64 devices: budgets nest and the optimum takes milliseconds", "[partition][pipeline_dp]") {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/pipedream/vgg16.txt");
    REQUIRE(in);
    const auto chain = dnnplan::build_layer_chain(dnnplan::parse_pipedream_graph(in), 128);
    const dnnplan::pipeline_1f1b_model model(chain, {.micro_batch_size = 32, .micro_batches = 8});
    const auto start = std::chrono::steady_clock::now();
    const auto r = dnnplan::solve(dnnplan::pipeline_dp_request{.options = {.max_devices = 64}}, model);
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(r.status == dnnplan::solve_status::optimal);
    CHECK(elapsed_s < 0.5);  // about 10 ms optimised; generous for sanitizer and debug builds
    const auto& by_devices = r.details.by_devices;
    REQUIRE(by_devices.size() == 64);
    for (const auto& plan : by_devices) REQUIRE(plan);  // vgg16 fits on one device
    // One device: the whole model, 8 micro-batches of 32: 8 * 0.672535 / 4 = PipeDream's
    // one-machine time for 256 samples, 1.34507 s.
    CHECK(by_devices[0]->time_s == Approx(2 * 0.672535));
    for (std::size_t d = 1; d < by_devices.size(); ++d) CHECK(by_devices[d]->time_s <= by_devices[d - 1]->time_s);
    REQUIRE(r.plan);
    CHECK(r.plan->time_s == by_devices.back()->time_s);
    CHECK(r.plan->time_s < by_devices[7]->time_s);
    CHECK(r.plan->stages.size() > 1);
}

TEST_CASE("solve(pipeline_dp_request, model) with stage-cost models written here equals brute force",
          "[partition][pipeline_dp][oracle][models]") {
    int infinite = 0, pipelined = 0, replicated = 0;
    for (std::uint64_t seed = 400; seed < 520; ++seed) {
        dnnplan_test::rng r(seed);
        remaining_dependent model;
        for (int i = r.integer(1, 6); i > 0; --i) {
            model.work.push_back(r.uniform(0.01, 1.0));
            model.parameters.push_back(r.chance(0.5) ? r.uniform(0.0, 2.0) : 0.0);
        }
        model.sync_per_replica = r.uniform(0.0, 0.2);
        model.warmup_per_stage = r.uniform(0.0, 0.03);
        if (r.chance(0.3)) model.limit = r.uniform(0.2, 1.5);
        const std::int32_t devices = r.integer(1, 6);
        const std::int32_t max_stages = r.chance(0.2) ? r.integer(1, 3) : 0;
        INFO("seed " << seed << ", " << model.work.size() << " states, " << devices << " devices, max stages " << max_stages);
        check_against_brute_force(model, devices, max_stages);
        // The same model through the prefix recurrence (it does not say it depends only on the
        // stages left): the same answer.
        const auto suffix = dnnplan::solve(dnnplan::pipeline_dp_request{.options = {.max_devices = devices, .max_stages = max_stages}}, model);
        const auto prefix = dnnplan::solve(dnnplan::pipeline_dp_request{.options = {.max_devices = devices, .max_stages = max_stages}},
                                           opaque_remaining{model});
        REQUIRE(suffix.status == prefix.status);
        CHECK(suffix.objective_value == prefix.objective_value);
        if (!suffix.plan) {
            ++infinite;
            continue;
        }
        if (suffix.plan->stages.size() > 1) ++pipelined;
        for (const auto& st : suffix.plan->stages) replicated += st.replicas > 1 ? 1 : 0;
    }
    INFO(infinite << " without a plan, " << pipelined << " pipelined, " << replicated << " replicated stages");
    CHECK(infinite > 5);
    CHECK(pipelined > 20);
    CHECK(replicated > 20);
}

TEST_CASE("bad partitioner options are rejected naming the field", "[partition][pipeline_dp][errors]") {
    using Catch::Matchers::Contains;
    const position_dependent model{{1.0}};
    CHECK_THROWS_WITH(dnnplan::pipeline_dp_partition(model, {.max_devices = 0}), Contains("options.max_devices = 0"));
    CHECK_THROWS_WITH(dnnplan::pipeline_dp_partition(model, {.max_devices = 2, .max_stages = -1}), Contains("options.max_stages = -1"));
    CHECK_THROWS_WITH(dnnplan::pipeline_dp_partition(position_dependent{}, {.max_devices = 2}), Contains("model.num_states() = 0"));
    // The same through the planner's entry.
    using request = dnnplan::pipeline_dp_request;
    CHECK_THROWS_WITH(dnnplan::solve(request{.options = {.max_devices = 0}}, model), Contains("options.max_devices = 0"));
    CHECK_THROWS_WITH(dnnplan::solve(request{.options = {.max_devices = 2, .max_stages = -1}}, model),
                      Contains("options.max_stages = -1"));
    CHECK_THROWS_WITH(dnnplan::solve(request{.options = {.max_devices = 2}}, position_dependent{}), Contains("model.num_states() = 0"));
}

TEST_CASE("a budget smaller than the recurrence is no_plan_found with its limit, nothing computed", "[partition][pipeline_dp][budget]") {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/pipedream/vgg16.txt");
    REQUIRE(in);
    const auto chain = dnnplan::build_layer_chain(dnnplan::parse_pipedream_graph(in), 128);
    const dnnplan::pipeline_1f1b_model model(chain, {.micro_batch_size = 32, .micro_batches = 8});
    dnnplan::pipeline_dp_request request{.options = {.max_devices = 64}};
    const auto full = dnnplan::solve(request, model);
    REQUIRE(full.status == dnnplan::solve_status::optimal);
    for (const bool by_nodes : {true, false}) {
        INFO((by_nodes ? "max_nodes" : "max_evaluations"));
        request.options.budget = {};
        (by_nodes ? request.options.budget.max_nodes : request.options.budget.max_evaluations) = 100;
        const auto r = dnnplan::solve(request, model);
        CHECK(r.status == dnnplan::solve_status::no_plan_found);
        CHECK(r.limit != dnnplan::search_limit::none);
        CHECK_FALSE(r.plan);
        CHECK_FALSE(r.bound);
        CHECK(r.counters.evaluations == 0);
        CHECK_THAT(r.reason, Catch::Contains("over the budget"));
    }
}
