// The hybrid-parallel planner of solve/hybrid_plan/solve.hpp: agreement with a brute-force planner
// on seeded random problems, the three objectives and their infeasible statuses, pipelining
// against pure data parallelism, the re-plan when workers join or leave, and pipeline model
// factories of the host's own (solve(request, factory)).

#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/solve/hybrid_plan/solve.hpp>

#include "../../support/pipeline_oracle.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
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

// The objective as a figure to maximise.
double objective_value(const dnnplan::hybrid_plan& p, dnnplan::objective_kind o) {
    switch (o) {
        case dnnplan::objective_kind::max_samples_per_usd: return p.samples_per_usd;
        case dnnplan::objective_kind::max_throughput: return p.samples_per_s;
        case dnnplan::objective_kind::min_cost: return -p.usd_per_h;
        case dnnplan::objective_kind::min_time: break;
    }
    return 0;
}

/// The planner on the 1F1B model: solve(hybrid_request).
dnnplan::hybrid_result run(const dnnplan::hybrid_problem& problem, const dnnplan::hybrid_options& options = {}) {
    return dnnplan::solve(dnnplan::hybrid_request{.problem = problem, .options = options});
}

/// Optimal results carry the plan's objective figure as value and bound.
void check_value_and_bound(const dnnplan::hybrid_result& r, dnnplan::objective_kind o) {
    REQUIRE(r.status == dnnplan::solve_status::optimal);
    REQUIRE(r.plan.has_value());
    REQUIRE(r.objective_value);
    REQUIRE(r.bound);
    const double figure = o == dnnplan::objective_kind::min_cost ? r.plan->usd_per_h : objective_value(*r.plan, o);
    CHECK(*r.objective_value == figure);
    CHECK(*r.bound == figure);
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
        constexpr dnnplan::objective_kind objectives[] = {dnnplan::objective_kind::max_samples_per_usd,
                                                          dnnplan::objective_kind::max_throughput,
                                                          dnnplan::objective_kind::min_cost};
        options.objective = objectives[pick];
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
        const auto result = run(problem, options);
        if (std::isinf(best)) {
            CHECK(result.status == dnnplan::solve_status::infeasible);
            CHECK_FALSE(result.plan.has_value());
            CHECK_FALSE(result.objective_value);
            CHECK_FALSE(result.bound);
            CHECK_FALSE(result.reason.empty());
            continue;
        }
        ++feasible;
        check_value_and_bound(result, options.objective);
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
    const dnnplan::hybrid_options fastest{.objective = dnnplan::objective_kind::max_throughput};
    const auto hybrid = run(problem, fastest);
    auto dp_options = fastest;
    dp_options.max_stages = 1;
    const auto data_parallel = run(problem, dp_options);
    REQUIRE(hybrid.plan.has_value());
    REQUIRE(data_parallel.plan.has_value());
    CHECK(data_parallel.plan->stages.size() == 1);
    CHECK(hybrid.plan->stages.size() > 1);
    // 553 MB of parameters at 1 GB/s: a 16-way all-reduce alone takes 2 * 15/16 * 0.553 = 1.04 s.
    CHECK(hybrid.plan->samples_per_s > 2 * data_parallel.plan->samples_per_s);
    CHECK(hybrid.plan->workers <= 16);
    CHECK(hybrid.counters.nodes == 2 * 2 * 6);  // 2 container types x 2 batches x M in {1, 2, 4, 8, 16, 32}
    CHECK(hybrid.counters.evaluations > 0);     // stage times computed by the partitioner
    check_value_and_bound(hybrid, fastest.objective);
}

TEST_CASE("the objectives: per dollar, within a budget, the cheapest for a target", "[solve][hybrid]") {
    const auto problem = vgg16_problem(16);
    // Prices are linear in GPUs and parallelism never makes a sample cheaper in the model, so
    // throughput per dollar is best on the fewest GPUs that hold the model: one.
    const auto per_usd = run(problem);
    check_value_and_bound(per_usd, dnnplan::objective_kind::max_samples_per_usd);
    CHECK(per_usd.plan->workers == 1);
    // 190.3 samples/s at 3.06 USD/h: 128 / 0.672535 s per minibatch (PipeDream's one-machine time).
    CHECK(per_usd.plan->samples_per_s == Approx(128 / 0.672535));
    CHECK(per_usd.plan->usd_per_h == Approx(3.06));
    CHECK(per_usd.plan->samples_per_usd == Approx(128 / 0.672535 * 3600 / 3.06));

    // Within 4 V100-hours per hour: at most 4 GPUs, faster than one.
    const auto budget = run(problem, {.objective = dnnplan::objective_kind::max_throughput, .budget_usd_per_h = 4 * 3.06});
    REQUIRE(budget.plan.has_value());
    CHECK(budget.plan->usd_per_h <= 4 * 3.06 + 1e-9);
    CHECK(budget.plan->samples_per_s > per_usd.plan->samples_per_s);
    const auto more = run(problem, {.objective = dnnplan::objective_kind::max_throughput, .budget_usd_per_h = 8 * 3.06});
    REQUIRE(more.plan.has_value());
    CHECK(more.plan->samples_per_s > budget.plan->samples_per_s);

    // The cheapest plan reaching the 4-GPU plan's throughput costs no more than it.
    const auto target = run(problem, {.objective = dnnplan::objective_kind::min_cost,
                                      .target_samples_per_s = budget.plan->samples_per_s});
    check_value_and_bound(target, dnnplan::objective_kind::min_cost);
    CHECK(target.plan->samples_per_s >= budget.plan->samples_per_s);
    CHECK(target.plan->usd_per_h <= budget.plan->usd_per_h);
    // ... and a little more throughput than one GPU gives needs a second GPU.
    const auto two = run(problem, {.objective = dnnplan::objective_kind::min_cost,
                                   .target_samples_per_s = per_usd.plan->samples_per_s * 1.01});
    REQUIRE(two.plan.has_value());
    CHECK(two.plan->usd_per_h == Approx(2 * 3.06));
}

TEST_CASE("no plan is status infeasible with the reason", "[solve][hybrid]") {
    using Catch::Matchers::Contains;
    const auto problem = vgg16_problem(4);
    const auto poor = run(problem, {.objective = dnnplan::objective_kind::max_throughput, .budget_usd_per_h = 1.0});
    CHECK(poor.status == dnnplan::solve_status::infeasible);
    CHECK_FALSE(poor.plan.has_value());
    CHECK_FALSE(poor.objective_value);
    CHECK_FALSE(poor.bound);
    CHECK_THAT(poor.reason, Contains("the cheapest plan costs 3.06 USD/h, over the budget of 1 USD/h"));
    const auto greedy = run(problem, {.objective = dnnplan::objective_kind::min_cost, .target_samples_per_s = 1e6});
    CHECK(greedy.status == dnnplan::solve_status::infeasible);
    CHECK_THAT(greedy.reason, Contains("below the target of 1e+06 samples/s"));
    auto small = problem;
    for (auto& c : small.catalog.containers) c.gpu_memory_bytes = 1e8;  // vgg16's last layer alone has 411 MB
    const auto none = run(small);
    CHECK(none.status == dnnplan::solve_status::infeasible);
    CHECK_THAT(none.reason, Contains("fits in GPU memory"));
    auto narrow = problem;
    narrow.max_workers = 3;
    narrow.catalog.containers = {v100("v100x4", 4, 16)};  // a container has more GPUs than the worker limit
    CHECK(run(narrow).status == dnnplan::solve_status::infeasible);
}

TEST_CASE("GPU memory that cannot hold the model moves the per-dollar optimum off one GPU", "[solve][hybrid]") {
    auto problem = vgg16_problem(8);
    problem.global_batch_sizes = {128};
    // vgg16: 553 MB of parameters, 1.66 GB with SGD-momentum state, 115 MB of activations per
    // sample. One GPU holds the model and its smallest micro-batch (128 / 32 = 4 samples) in
    // 1.66e9 + 4 * 1.15e8 = 2.12e9 bytes: with 2e9 per GPU, the per-dollar optimum (one GPU
    // otherwise, see above) needs a second one.
    for (auto& c : problem.catalog.containers) c.gpu_memory_bytes = 2e9;
    const auto r = run(problem);
    REQUIRE(r.plan.has_value());
    CHECK(r.plan->workers >= 2);
    for (const auto& s : r.plan->stages) {
        CHECK(s.figures.fits);
        CHECK(s.figures.memory_bytes <= 2e9);
    }
    auto roomy = problem;
    for (auto& c : roomy.catalog.containers) c.gpu_memory_bytes = 2.2e9;
    const auto one = run(roomy);
    REQUIRE(one.plan.has_value());
    CHECK(one.plan->workers == 1);
    CHECK(one.plan->micro_batches == 32);
}

TEST_CASE("re-plan on scale-out and scale-in reports the layers that move and their bytes", "[solve][hybrid][replan]") {
    const auto problem = vgg16_problem(64);
    const dnnplan::hybrid_options options{.objective = dnnplan::objective_kind::max_throughput};
    const dnnplan::hybrid_request request{.problem = problem, .options = options};
    auto four = problem;
    four.max_workers = 4;
    const auto running = run(four, options);
    REQUIRE(running.plan.has_value());
    const auto chain = dnnplan::build_layer_chain(problem.profiles);

    const auto check_moves = [&](const dnnplan::replan_result& r, const dnnplan::hybrid_plan& before) {
        REQUIRE(r.result.plan.has_value());
        double in = 0, out = 0, total = 0;
        for (const double b : r.bytes_in_by_stage) in += b;
        for (const double b : r.bytes_out_by_stage) out += b;
        for (const auto& m : r.moves) {
            CHECK(m.from_stage != m.to_stage);
            // Every layer is in a stage of both plans here (no layer is left out of a plan).
            CHECK(m.from_stage.has_value());
            CHECK(m.to_stage.has_value());
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

    const auto out = dnnplan::replan(request, *running.plan, 16);
    check_moves(out, *running.plan);
    CHECK(out.result.plan->container == running.plan->container);
    CHECK(out.result.plan->workers > running.plan->workers);
    CHECK(out.result.plan->workers <= 16);
    CHECK(out.result.plan->samples_per_s > running.plan->samples_per_s);
    CHECK_FALSE(out.moves.empty());
    CHECK(out.bytes_moved > 0);

    const auto in = dnnplan::replan(request, *out.result.plan, 2);
    check_moves(in, *out.result.plan);
    CHECK(in.result.plan->workers <= 2);
    CHECK(in.result.plan->samples_per_s < out.result.plan->samples_per_s);

    // The same worker count gives the same plan: nothing moves.
    const auto same = dnnplan::replan(request, *running.plan, 4);
    REQUIRE(same.result.plan.has_value());
    CHECK(same.moves.empty());
    CHECK(same.bytes_moved == 0.0);
    CHECK(same.result.plan->stages.size() == running.plan->stages.size());
}

namespace {

/// A stage-cost model of the host's own around the 1F1B model: every stage `slowdown` times slower
/// (a device slower than the profiled one, say). It has no breakdown member, so a plan's stages
/// carry only their stage_time_s.
struct slowed_1f1b {
    dnnplan::pipeline_1f1b_model inner;
    double slowdown = 2.0;

    static constexpr bool needs_stage_count = true;
    static constexpr bool depends_only_on_remaining_stages = true;
    [[nodiscard]] std::size_t num_states() const noexcept { return inner.num_states(); }
    [[nodiscard]] double stage_time_s(const dnnplan::stage_candidate& c) const noexcept {
        return slowdown * inner.stage_time_s(c);
    }
    [[nodiscard]] double pipeline_time_s(double slowest_s, std::int32_t stages) const noexcept {
        return inner.pipeline_time_s(slowest_s, stages);
    }
};
static_assert(dnnplan::remaining_stages_cost_model<slowed_1f1b>);
static_assert(!dnnplan::stage_breakdown_model<slowed_1f1b>);

/// Builds slowed_1f1b models, counting them.
struct slowed_factory {
    double slowdown = 2.0;
    std::int64_t* built = nullptr;
    [[nodiscard]] slowed_1f1b operator()(const dnnplan::layer_chain& chain, const dnnplan::pipeline_config& config) const {
        if (built) ++*built;
        return {.inner = dnnplan::pipeline_1f1b_model(chain, config), .slowdown = slowdown};
    }
};
static_assert(dnnplan::pipeline_model_factory<slowed_factory>);

/// The 1F1B model with a device memory of the factory's, whatever the container says.
struct memory_factory {
    double device_memory_bytes = 2e9;
    [[nodiscard]] dnnplan::pipeline_1f1b_model operator()(const dnnplan::layer_chain& chain, dnnplan::pipeline_config config) const {
        config.device_memory_bytes = device_memory_bytes;
        return dnnplan::pipeline_1f1b_model(chain, config);
    }
};
static_assert(dnnplan::pipeline_model_factory<memory_factory>);

/// The same pipeline (container, batching, stages and their layers); with `figures`, the same
/// stage figures too. (hybrid_plan's operator== does not compile: /work/notes/requests-solve.md.)
void check_same_pipeline(const dnnplan::hybrid_plan& a, const dnnplan::hybrid_plan& b, bool figures) {
    CHECK(a.container == b.container);
    CHECK(a.containers == b.containers);
    CHECK(a.workers == b.workers);
    CHECK(a.global_batch_size == b.global_batch_size);
    CHECK(a.micro_batch_size == b.micro_batch_size);
    CHECK(a.micro_batches == b.micro_batches);
    CHECK(a.usd_per_h == b.usd_per_h);
    REQUIRE(a.stages.size() == b.stages.size());
    for (std::size_t s = 0; s < a.stages.size(); ++s) {
        CHECK(a.stages[s].first_state == b.stages[s].first_state);
        CHECK(a.stages[s].end_state == b.stages[s].end_state);
        CHECK(a.stages[s].replicas == b.stages[s].replicas);
        CHECK(a.stages[s].layers == b.stages[s].layers);
        if (!figures) continue;
        CHECK(a.stages[s].figures.stage_time_s == b.stages[s].figures.stage_time_s);
        CHECK(a.stages[s].figures.memory_bytes == b.stages[s].figures.memory_bytes);
        CHECK(a.stages[s].figures.fits == b.stages[s].figures.fits);
        CHECK(a.stages[s].figures.compute_s == b.stages[s].figures.compute_s);
    }
    if (figures) {
        CHECK(a.time_per_minibatch_s == b.time_per_minibatch_s);
        CHECK(a.samples_per_s == b.samples_per_s);
    }
}

}  // namespace

TEST_CASE("a pipeline model factory of the host's own: twice slower stages halve the throughput of the same plan",
          "[solve][hybrid][factory]") {
    const auto problem = vgg16_problem(16);
    for (const auto objective : {dnnplan::objective_kind::max_samples_per_usd, dnnplan::objective_kind::max_throughput}) {
        INFO(to_string(objective));
        const dnnplan::hybrid_request request{.problem = problem, .options = {.objective = objective}};
        const auto base = dnnplan::solve(request);
        std::int64_t built = 0;
        const auto slow = dnnplan::solve(request, slowed_factory{.slowdown = 2.0, .built = &built});
        check_value_and_bound(base, objective);
        check_value_and_bound(slow, objective);
        // One model per configuration partitioned.
        CHECK(built == slow.counters.nodes);
        CHECK(slow.counters.nodes == base.counters.nodes);
        // Scaling every stage time by 2 changes no decision: the same pipeline, twice as slow.
        check_same_pipeline(*slow.plan, *base.plan, false);
        CHECK(slow.plan->time_per_minibatch_s == 2.0 * base.plan->time_per_minibatch_s);
        CHECK(slow.plan->samples_per_s == base.plan->samples_per_s / 2.0);
        CHECK(*slow.objective_value == Approx(*base.objective_value / 2.0).epsilon(1e-12));
        for (std::size_t s = 0; s < slow.plan->stages.size(); ++s) {
            const auto& f = slow.plan->stages[s].figures;
            CHECK(f.stage_time_s == 2.0 * base.plan->stages[s].figures.stage_time_s);
            CHECK(f.compute_s == 0.0);  // no breakdown member: only the stage time is known
            CHECK(base.plan->stages[s].figures.compute_s > 0.0);
        }
    }
    // The cheapest plan for a throughput one GPU gives at the profiled speed needs more GPUs.
    const auto one = dnnplan::solve(dnnplan::hybrid_request{.problem = problem, .options = {}});
    REQUIRE(one.plan.has_value());
    REQUIRE(one.plan->workers == 1);
    const dnnplan::hybrid_request target{
        .problem = problem,
        .options = {.objective = dnnplan::objective_kind::min_cost, .target_samples_per_s = one.plan->samples_per_s}};
    const auto at_speed = dnnplan::solve(target);
    const auto slowed = dnnplan::solve(target, slowed_factory{});
    REQUIRE(at_speed.plan.has_value());
    REQUIRE(slowed.plan.has_value());
    CHECK(at_speed.plan->workers == 1);
    CHECK(slowed.plan->workers >= 2);
    CHECK(slowed.plan->usd_per_h > at_speed.plan->usd_per_h);
    CHECK(slowed.plan->samples_per_s >= one.plan->samples_per_s);
    // A slowdown of 1 is the published model (but without the breakdown).
    const auto same = dnnplan::solve(dnnplan::hybrid_request{.problem = problem, .options = {}}, slowed_factory{.slowdown = 1.0});
    REQUIRE(same.plan.has_value());
    check_same_pipeline(*same.plan, *one.plan, false);
    CHECK(same.plan->samples_per_s == one.plan->samples_per_s);
}

TEST_CASE("a pipeline model factory of the host's own: its device memory replaces the container's", "[solve][hybrid][factory]") {
    auto problem = vgg16_problem(8);
    problem.global_batch_sizes = {128};
    const dnnplan::hybrid_request request{.problem = problem, .options = {}};
    // 16 GB per GPU (the containers'): one GPU is the per-dollar optimum; 2 GB (the factory's):
    // the model and a micro-batch no longer fit on one (see the test above with 2e9 per GPU).
    const auto roomy = dnnplan::solve(request);
    const auto tight = dnnplan::solve(request, memory_factory{.device_memory_bytes = 2e9});
    check_value_and_bound(roomy, dnnplan::objective_kind::max_samples_per_usd);
    check_value_and_bound(tight, dnnplan::objective_kind::max_samples_per_usd);
    CHECK(roomy.plan->workers == 1);
    CHECK(tight.plan->workers >= 2);
    CHECK(*tight.objective_value < *roomy.objective_value);
    for (const auto& s : tight.plan->stages) {
        CHECK(s.figures.fits);
        CHECK(s.figures.memory_bytes <= 2e9);
    }
    // The same as containers of 2 GB GPUs with the published factory, figure for figure.
    auto small = request;
    for (auto& c : small.problem.catalog.containers) c.gpu_memory_bytes = 2e9;
    const auto published = dnnplan::solve(small);
    REQUIRE(published.plan.has_value());
    check_same_pipeline(*tight.plan, *published.plan, true);
    CHECK(tight.objective_value == published.objective_value);
    // A memory nothing fits in: infeasible, whatever the containers say.
    const auto none = dnnplan::solve(request, memory_factory{.device_memory_bytes = 1e8});
    CHECK(none.status == dnnplan::solve_status::infeasible);
    CHECK_FALSE(none.plan.has_value());
    CHECK_FALSE(none.bound.has_value());
    CHECK_THAT(none.reason, Catch::Matchers::Contains("fits in GPU memory"));
}

TEST_CASE("re-plan with a pipeline model factory of the host's own", "[solve][hybrid][replan][factory]") {
    auto problem = vgg16_problem(16);
    const dnnplan::hybrid_request request{.problem = problem, .options = {.objective = dnnplan::objective_kind::max_throughput}};
    auto four = request;
    four.problem.max_workers = 4;
    const auto running = dnnplan::solve(four);
    REQUIRE(running.plan.has_value());
    const auto base = dnnplan::replan(request, *running.plan, 8);
    const auto slow = dnnplan::replan(request, *running.plan, 8, slowed_factory{});
    REQUIRE(base.result.plan.has_value());
    REQUIRE(slow.result.plan.has_value());
    check_same_pipeline(*slow.result.plan, *base.result.plan, false);
    CHECK(slow.result.plan->samples_per_s == base.result.plan->samples_per_s / 2.0);
    // The same new plan: the same layers move.
    CHECK(slow.moves == base.moves);
    CHECK(slow.bytes_moved == base.bytes_moved);
}

TEST_CASE("bad problems and options are rejected naming the field", "[solve][hybrid][errors]") {
    using Catch::Matchers::Contains;
    const auto base = vgg16_problem(4);
    const auto fails = [&](auto edit, const std::string& text) {
        auto p = base;
        edit(p);
        CHECK_THROWS_WITH(run(p), Contains(text));
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
        CHECK_THROWS_WITH(run(base, o), Contains(text));
    };
    option_fails({.budget_usd_per_h = 0}, "options.budget_usd_per_h = 0");
    option_fails({.target_samples_per_s = -1}, "options.target_samples_per_s = -1");
    option_fails({.objective = dnnplan::objective_kind::min_cost}, "options.target_samples_per_s = 0");
    option_fails({.objective = dnnplan::objective_kind::min_time}, "options.objective = \"min_time\"");
    option_fails({.max_micro_batches = 0}, "options.max_micro_batches = 0");
    option_fails({.max_stages = -2}, "options.max_stages = -2");
    option_fails({.sync_overlap_ratio = 2}, "options.sync_overlap_ratio = 2");
    option_fails({.optimizer_state_ratio = -1}, "options.optimizer_state_ratio = -1");
    const dnnplan::hybrid_request request{.problem = base, .options = {}};
    dnnplan::hybrid_plan running;
    running.container = "tpu";
    CHECK_THROWS_WITH(dnnplan::replan(request, running, 4), Contains("running.container = \"tpu\""));
    running.container = "v100x1";
    CHECK_THROWS_WITH(dnnplan::replan(request, running, 0), Contains("new_workers = 0"));
    running.stages.push_back({.layers = {999}});
    CHECK_THROWS_WITH(dnnplan::replan(request, running, 2), Contains("running.stages[0].layers = 999"));
    // The request is validated by replan too.
    auto bad = request;
    bad.options.max_micro_batches = 0;
    running.stages.clear();
    CHECK_THROWS_WITH(dnnplan::replan(bad, running, 2), Contains("options.max_micro_batches = 0"));
}

TEST_CASE("configurations whose partition is over the budget are skipped and the result says so", "[solve][hybrid][budget]") {
    const auto problem = vgg16_problem(16);
    dnnplan::hybrid_options options{.objective = dnnplan::objective_kind::max_throughput};
    const auto full = run(problem, options);
    REQUIRE(full.status == dnnplan::solve_status::optimal);
    // Every partition is over a budget of 10 cells: no plan, and why.
    options.budget.max_nodes = 10;
    const auto none = run(problem, options);
    CHECK(none.status == dnnplan::solve_status::no_plan_found);
    CHECK(none.limit != dnnplan::search_limit::none);
    CHECK_FALSE(none.plan);
    CHECK_FALSE(none.objective_value);
    CHECK_FALSE(none.bound);
    CHECK_THAT(none.reason, Catch::Contains("configurations skipped") && Catch::Contains("over the budget"));
}
