// The hybrid-parallel planner of solve/hybrid_parallel.hpp: agreement with a brute-force planner
// on seeded random problems, the three objectives and their infeasible statuses, pipelining
// against pure data parallelism, and the re-plan when workers join or leave.

#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/solve/hybrid_parallel.hpp>

#include "../support/pipeline_oracle.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

dnnplan::layer_graph vgg16() {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/pipedream/vgg16.txt");
    REQUIRE(in);
    return dnnplan::parse_pipedream_graph(in);
}

// 0.85 mUSD per GPU-second: 3.06 USD per V100-hour (p3.2xlarge on demand, spotDNN's Table III).
dnnplan::container_type v100(std::string name, std::int32_t gpus, std::int32_t max_containers) {
    return {.name = std::move(name), .gpu_type = "V100", .gpus = gpus, .gpu_usd_per_s = 3.06 / 3600,
            .max_containers = max_containers};
}

dnnplan::hybrid_problem vgg16_problem(std::int32_t max_workers) {
    dnnplan::hybrid_problem p;
    p.profiles.push_back({.batch_size = 128, .graph = vgg16()});
    p.catalog.containers = {v100("v100x1", 1, 64), v100("v100x4", 4, 16)};
    p.max_workers = max_workers;
    p.global_batch_sizes = {128, 256};
    return p;
}

// A random chain as a graph: an Input source, n layers, profiled at batch 8.
dnnplan::layer_graph random_graph(dnnplan_test::rng& r, std::size_t n) {
    std::vector<dnnplan::layer> layers{{.id = "in", .description = "Input0", .activation_bytes = 8 * 1e5}};
    std::vector<dnnplan::layer_edge> edges;
    for (std::size_t i = 1; i <= n; ++i) {
        std::string id = "l";  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "l" + string
        id += std::to_string(i);
        layers.push_back({.id = id, .description = "Conv", .forward_s = r.uniform(1e-3, 2e-2),
                          .backward_s = r.uniform(2e-3, 4e-2), .activation_bytes = r.uniform(8e4, 8e7),
                          .parameter_bytes = r.chance(0.6) ? r.uniform(1e5, 4e8) : 0.0});
        edges.push_back({.from = i - 1, .to = i});
    }
    return dnnplan::layer_graph(layers, edges);
}

double objective_value(const dnnplan::hybrid_plan& p, dnnplan::hybrid_objective o) {
    switch (o) {
        case dnnplan::hybrid_objective::max_samples_per_usd: return p.samples_per_usd;
        case dnnplan::hybrid_objective::max_samples_per_s: return p.samples_per_s;
        case dnnplan::hybrid_objective::min_usd_per_h: return -p.usd_per_h;
    }
    return 0;
}

}  // namespace

TEST_CASE("on seeded random problems the planner's objective equals a brute-force planner's", "[solve][hybrid][oracle]") {
    const auto inf = std::numeric_limits<double>::infinity();
    int feasible = 0, multi_stage = 0;
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        dnnplan_test::rng r(seed);
        dnnplan::hybrid_problem problem;
        problem.profiles.push_back({.batch_size = 8, .graph = random_graph(r, static_cast<std::size_t>(r.integer(1, 5)))});
        for (int k = r.integer(1, 2); k > 0; --k)
            problem.catalog.containers.push_back({.name = "c" + std::to_string(k), .gpu_type = "G", .gpus = r.integer(1, 2),
                                                  .vcpus = r.uniform(1, 8), .memory_gib = r.uniform(1, 32),
                                                  .gpu_usd_per_s = r.uniform(1e-4, 1e-3), .vcpu_usd_per_s = r.uniform(0, 1e-5),
                                                  .gib_usd_per_s = r.uniform(0, 1e-6), .max_containers = r.integer(1, 4),
                                                  .gpu_memory_bytes = r.uniform(5e8, 4e9),
                                                  .network_bandwidth_bytes_per_s = r.uniform(1e8, 1e10),
                                                  .speed_ratio = r.uniform(0.5, 2)});
        problem.max_workers = r.integer(1, 5);
        problem.global_batch_sizes = {4, 8};
        dnnplan::hybrid_options options{.max_micro_batches = r.integer(1, 4), .sync_overlap_ratio = r.uniform(0, 1)};
        const int pick = r.integer(0, 2);
        options.objective = static_cast<dnnplan::hybrid_objective>(pick);
        if (pick == 1) options.budget_usd_per_h = r.uniform(0.5, 8);
        if (pick == 2) options.target_samples_per_s = r.uniform(5, 200);
        INFO("seed " << seed << ", objective " << to_string(options.objective));

        // Brute force: every container type, batch, micro-batch count and container count, with
        // the fastest pipeline on that many GPUs from brute_force_pipeline.
        const auto chain = dnnplan::build_layer_chain(problem.profiles, {.optimizer_state_ratio = options.optimizer_state_ratio});
        double best = -inf;
        for (const auto& c : problem.catalog.containers) {
            const std::int32_t count = std::min(c.max_containers, problem.max_workers / c.gpus);
            if (count < 1) continue;
            for (const std::int32_t batch : problem.global_batch_sizes)
                for (std::int32_t m = 1; m <= std::min(batch, options.max_micro_batches); ++m) {
                    if (batch % m != 0) continue;
                    const dnnplan::pipeline_1f1b_model model(chain, {.micro_batch_size = batch / m, .micro_batches = m,
                                                                     .bandwidth_bytes_per_s = c.network_bandwidth_bytes_per_s,
                                                                     .sync_overlap_ratio = options.sync_overlap_ratio,
                                                                     .device_memory_bytes = c.gpu_memory_bytes,
                                                                     .speed_ratio = c.speed_ratio});
                    const auto times = dnnplan_test::brute_force_pipeline(model, count * c.gpus);
                    for (std::int32_t k = 1; k <= count; ++k) {
                        const double t = times[static_cast<std::size_t>(k * c.gpus - 1)];
                        if (std::isinf(t)) continue;
                        dnnplan::hybrid_plan p;
                        p.samples_per_s = batch / t;
                        p.usd_per_h = k * c.usd_per_s() * 3600;
                        p.samples_per_usd = p.samples_per_s * 3600 / p.usd_per_h;
                        if (pick == 1 && p.usd_per_h > options.budget_usd_per_h) continue;
                        if (pick == 2 && p.samples_per_s < options.target_samples_per_s) continue;
                        best = std::max(best, objective_value(p, options.objective));
                    }
                }
        }
        const auto result = dnnplan::solve(problem, options);
        if (std::isinf(best)) {
            CHECK(result.status == dnnplan::solve_status::infeasible);
            CHECK_FALSE(result.plan);
            CHECK_FALSE(result.reason.empty());
            continue;
        }
        ++feasible;
        REQUIRE(result.status == dnnplan::solve_status::optimal);
        REQUIRE(result.plan);
        const auto& plan = *result.plan;
        CHECK(objective_value(plan, options.objective) == Approx(best).epsilon(1e-9));
        // The plan's figures are consistent with each other.
        std::int32_t workers = 0;
        for (const auto& s : plan.stages) workers += s.replicas;
        CHECK(workers == plan.workers);
        CHECK(plan.workers <= problem.max_workers);
        CHECK(plan.global_batch_size == plan.micro_batch_size * plan.micro_batches);
        CHECK(plan.samples_per_s == Approx(plan.global_batch_size / plan.time_per_minibatch_s));
        if (plan.stages.size() > 1) ++multi_stage;
    }
    CHECK(feasible > 15);
    CHECK(multi_stage > 2);
}

TEST_CASE("vgg16 on 16 V100s: pipelining beats pure data parallelism on the same containers", "[solve][hybrid]") {
    const auto problem = vgg16_problem(16);
    const dnnplan::hybrid_options fastest{.objective = dnnplan::hybrid_objective::max_samples_per_s};
    const auto hybrid = dnnplan::solve(problem, fastest);
    auto dp_options = fastest;
    dp_options.max_stages = 1;
    const auto data_parallel = dnnplan::solve(problem, dp_options);
    REQUIRE(hybrid.plan);
    REQUIRE(data_parallel.plan);
    CHECK(data_parallel.plan->stages.size() == 1);
    CHECK(hybrid.plan->stages.size() > 1);
    // 553 MB of parameters at 1 GB/s: a 16-way all-reduce alone takes 2 * 15/16 * 0.553 = 1.04 s.
    CHECK(hybrid.plan->samples_per_s > 2 * data_parallel.plan->samples_per_s);
    CHECK(hybrid.plan->workers <= 16);
    CHECK(hybrid.configurations == 2 * 2 * 6);  // 2 container types x 2 batches x M in {1, 2, 4, 8, 16, 32}
}

TEST_CASE("the objectives: per dollar, within a budget, the cheapest for a target", "[solve][hybrid]") {
    const auto problem = vgg16_problem(16);
    // Prices are linear in GPUs and parallelism never makes a sample cheaper in the model, so
    // throughput per dollar is best on the fewest GPUs that hold the model: one.
    const auto per_usd = dnnplan::solve(problem, {});
    REQUIRE(per_usd.plan);
    CHECK(per_usd.plan->workers == 1);
    // 190.3 samples/s at 3.06 USD/h: 128 / 0.672535 s per minibatch (PipeDream's one-machine time).
    CHECK(per_usd.plan->samples_per_s == Approx(128 / 0.672535));
    CHECK(per_usd.plan->usd_per_h == Approx(3.06));
    CHECK(per_usd.plan->samples_per_usd == Approx(128 / 0.672535 * 3600 / 3.06));

    // Within 4 V100-hours per hour: at most 4 GPUs, faster than one.
    const auto budget = dnnplan::solve(problem, {.objective = dnnplan::hybrid_objective::max_samples_per_s, .budget_usd_per_h = 4 * 3.06});
    REQUIRE(budget.plan);
    CHECK(budget.plan->usd_per_h <= 4 * 3.06 + 1e-9);
    CHECK(budget.plan->samples_per_s > per_usd.plan->samples_per_s);
    const auto more = dnnplan::solve(problem, {.objective = dnnplan::hybrid_objective::max_samples_per_s, .budget_usd_per_h = 8 * 3.06});
    REQUIRE(more.plan);
    CHECK(more.plan->samples_per_s > budget.plan->samples_per_s);

    // The cheapest plan reaching the 4-GPU plan's throughput costs no more than it.
    const auto target = dnnplan::solve(problem, {.objective = dnnplan::hybrid_objective::min_usd_per_h,
                                                 .target_samples_per_s = budget.plan->samples_per_s});
    REQUIRE(target.plan);
    CHECK(target.plan->samples_per_s >= budget.plan->samples_per_s);
    CHECK(target.plan->usd_per_h <= budget.plan->usd_per_h);
    // ... and a little more throughput than one GPU gives needs a second GPU.
    const auto two = dnnplan::solve(problem, {.objective = dnnplan::hybrid_objective::min_usd_per_h,
                                              .target_samples_per_s = per_usd.plan->samples_per_s * 1.01});
    REQUIRE(two.plan);
    CHECK(two.plan->usd_per_h == Approx(2 * 3.06));
}

TEST_CASE("no plan is status infeasible with the reason", "[solve][hybrid]") {
    using Catch::Matchers::Contains;
    const auto problem = vgg16_problem(4);
    const auto poor = dnnplan::solve(problem, {.objective = dnnplan::hybrid_objective::max_samples_per_s, .budget_usd_per_h = 1.0});
    CHECK(poor.status == dnnplan::solve_status::infeasible);
    CHECK_FALSE(poor.plan);
    CHECK_THAT(poor.reason, Contains("the cheapest plan costs 3.06 USD/h, over the budget of 1 USD/h"));
    const auto greedy = dnnplan::solve(problem, {.objective = dnnplan::hybrid_objective::min_usd_per_h, .target_samples_per_s = 1e6});
    CHECK(greedy.status == dnnplan::solve_status::infeasible);
    CHECK_THAT(greedy.reason, Contains("below the target of 1e+06 samples/s"));
    auto small = problem;
    for (auto& c : small.catalog.containers) c.gpu_memory_bytes = 1e8;  // vgg16's last layer alone has 411 MB
    const auto none = dnnplan::solve(small, {});
    CHECK(none.status == dnnplan::solve_status::infeasible);
    CHECK_THAT(none.reason, Contains("fits in GPU memory"));
    auto narrow = problem;
    narrow.max_workers = 3;
    narrow.catalog.containers = {v100("v100x4", 4, 16)};  // a container has more GPUs than the worker limit
    CHECK(dnnplan::solve(narrow, {}).status == dnnplan::solve_status::infeasible);
}

TEST_CASE("GPU memory that cannot hold the model moves the per-dollar optimum off one GPU", "[solve][hybrid]") {
    auto problem = vgg16_problem(8);
    problem.global_batch_sizes = {128};
    // vgg16: 553 MB of parameters, 1.66 GB with SGD-momentum state, 115 MB of activations per
    // sample. One GPU holds the model and its smallest micro-batch (128 / 32 = 4 samples) in
    // 1.66e9 + 4 * 1.15e8 = 2.12e9 bytes: with 2e9 per GPU, the per-dollar optimum (one GPU
    // otherwise, see above) needs a second one.
    for (auto& c : problem.catalog.containers) c.gpu_memory_bytes = 2e9;
    const auto r = dnnplan::solve(problem, {});
    REQUIRE(r.plan);
    CHECK(r.plan->workers >= 2);
    for (const auto& s : r.plan->stages) {
        CHECK(s.figures.fits);
        CHECK(s.figures.memory_bytes <= 2e9);
    }
    auto roomy = problem;
    for (auto& c : roomy.catalog.containers) c.gpu_memory_bytes = 2.2e9;
    const auto one = dnnplan::solve(roomy, {});
    REQUIRE(one.plan);
    CHECK(one.plan->workers == 1);
    CHECK(one.plan->micro_batches == 32);
}

TEST_CASE("re-plan on scale-out and scale-in reports the layers that move and their bytes", "[solve][hybrid][replan]") {
    const auto problem = vgg16_problem(64);
    const dnnplan::hybrid_options options{.objective = dnnplan::hybrid_objective::max_samples_per_s};
    auto four = problem;
    four.max_workers = 4;
    const auto running = dnnplan::solve(four, options);
    REQUIRE(running.plan);
    const auto chain = dnnplan::build_layer_chain(problem.profiles);

    const auto check_moves = [&](const dnnplan::replan_result& r, const dnnplan::hybrid_plan& before) {
        REQUIRE(r.result.plan);
        double in = 0, out = 0, total = 0;
        for (const double b : r.bytes_in_by_stage) in += b;
        for (const double b : r.bytes_out_by_stage) out += b;
        for (const auto& m : r.moves) {
            CHECK(m.from_stage != m.to_stage);
            CHECK(m.id == problem.profiles[0].graph.at(m.layer).id);
            double expected = 0;
            for (const auto& l : chain.layers)
                if (l.layer == m.layer) expected = l.parameter_bytes + l.optimizer_state_bytes;
            CHECK(m.bytes == expected);
            total += m.bytes;
        }
        CHECK(r.bytes_moved == Approx(total));
        CHECK(in == Approx(total));
        CHECK(out == Approx(total));
        CHECK(r.bytes_in_by_stage.size() == r.result.plan->stages.size());
        CHECK(r.bytes_out_by_stage.size() == before.stages.size());
    };

    const auto out = dnnplan::replan(problem, options, *running.plan, 16);
    check_moves(out, *running.plan);
    CHECK(out.result.plan->container == running.plan->container);
    CHECK(out.result.plan->workers > running.plan->workers);
    CHECK(out.result.plan->workers <= 16);
    CHECK(out.result.plan->samples_per_s > running.plan->samples_per_s);
    CHECK_FALSE(out.moves.empty());
    CHECK(out.bytes_moved > 0);

    const auto in = dnnplan::replan(problem, options, *out.result.plan, 2);
    check_moves(in, *out.result.plan);
    CHECK(in.result.plan->workers <= 2);
    CHECK(in.result.plan->samples_per_s < out.result.plan->samples_per_s);

    // The same worker count gives the same plan: nothing moves.
    const auto same = dnnplan::replan(problem, options, *running.plan, 4);
    REQUIRE(same.result.plan);
    CHECK(same.moves.empty());
    CHECK(same.bytes_moved == 0.0);
    CHECK(same.result.plan->stages.size() == running.plan->stages.size());
}

TEST_CASE("bad problems and options are rejected naming the field", "[solve][hybrid][errors]") {
    using Catch::Matchers::Contains;
    const auto base = vgg16_problem(4);
    const auto fails = [&](auto edit, const std::string& text) {
        auto p = base;
        edit(p);
        CHECK_THROWS_WITH(dnnplan::solve(p, {}), Contains(text));
    };
    fails([](auto& p) { p.profiles.clear(); }, "profiles = []");
    fails([](auto& p) { p.profiles[0].batch_size = -1; }, "profiles[0].batch_size = -1");
    fails([](auto& p) { p.catalog.containers.clear(); }, "catalog.containers = []");
    fails([](auto& p) { p.catalog.containers[1].gpus = 0; }, "catalog.containers[1].gpus = 0");
    fails([](auto& p) { p.catalog.containers[0].name = ""; }, "catalog.containers[0].name");
    fails([](auto& p) { p.catalog.containers[1].name = "v100x1"; }, "catalog.containers[1].name = \"v100x1\"");
    fails([](auto& p) { p.catalog.containers[0].gpu_usd_per_s = 0; }, "catalog.containers[0].gpu_usd_per_s = 0");
    fails([](auto& p) { p.catalog.containers[0].vcpu_usd_per_s = -1; }, "catalog.containers[0].vcpu_usd_per_s = -1");
    fails([](auto& p) { p.catalog.containers[0].max_containers = 0; }, "catalog.containers[0].max_containers = 0");
    fails([](auto& p) { p.catalog.containers[0].gpu_memory_bytes = 0; }, "catalog.containers[0].gpu_memory_bytes = 0");
    fails([](auto& p) { p.catalog.containers[0].network_bandwidth_bytes_per_s = -5; }, "network_bandwidth_bytes_per_s = -5");
    fails([](auto& p) { p.catalog.containers[0].speed_ratio = 0; }, "catalog.containers[0].speed_ratio = 0");
    fails([](auto& p) { p.max_workers = 0; }, "max_workers = 0");
    fails([](auto& p) { p.global_batch_sizes.clear(); }, "global_batch_sizes = []");
    fails([](auto& p) { p.global_batch_sizes[1] = 0; }, "global_batch_sizes[1] = 0");
    const auto option_fails = [&](dnnplan::hybrid_options o, const std::string& text) {
        CHECK_THROWS_WITH(dnnplan::solve(base, o), Contains(text));
    };
    option_fails({.budget_usd_per_h = 0}, "options.budget_usd_per_h = 0");
    option_fails({.target_samples_per_s = -1}, "options.target_samples_per_s = -1");
    option_fails({.objective = dnnplan::hybrid_objective::min_usd_per_h}, "options.target_samples_per_s = 0");
    option_fails({.max_micro_batches = 0}, "options.max_micro_batches = 0");
    option_fails({.max_stages = -2}, "options.max_stages = -2");
    option_fails({.sync_overlap_ratio = 2}, "options.sync_overlap_ratio = 2");
    option_fails({.optimizer_state_ratio = -1}, "options.optimizer_state_ratio = -1");
    dnnplan::hybrid_plan running;
    running.container = "tpu";
    CHECK_THROWS_WITH(dnnplan::replan(base, {}, running, 4), Contains("running.container = \"tpu\""));
    running.container = "v100x1";
    CHECK_THROWS_WITH(dnnplan::replan(base, {}, running, 0), Contains("new_workers = 0"));
    running.stages.push_back({.layers = {999}});
    CHECK_THROWS_WITH(dnnplan::replan(base, {}, running, 2), Contains("running.stages[0].layers = 999"));
}
