// PipeDream-compatible partitioning (reference note on PipeDream's optimizer, sections 1-6):
// its own outputs on its shipped profiles, flag properties, and three oracles: the plain
// transcription of PipeDream's loops (tests/support/pipedream_reference.hpp) on every fixture
// and flag set, and brute force over every partition on random chains and DAGs. Also the generic
// recurrence solve(pipedream_request, states, model): with PipeDream's own stage cost it equals
// the fast solver on every fixture, and with a stage-cost model written here it equals brute force.

#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/partition/pipedream.hpp>
#include <dnnplan/solve/pipeline_plan/solve.hpp>

#include "../support/checks.hpp"
#include "../support/pipedream_brute_force.hpp"
#include "../support/pipedream_fixtures.hpp"
#include "../support/pipedream_reference.hpp"
#include "../support/random_problems.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using dnnplan_test::close;

using dnnplan_test::pipedream_fixture;

dnnplan::pipedream_options machines(std::vector<std::int32_t> m, std::optional<double> ratio = 1.0) {
    dnnplan::pipedream_options o;
    o.machines = std::move(m);
    o.activation_compression_ratio = ratio;
    return o;
}

/// PipeDream's optimizer through the planner's entry: solve(pipedream_request).
dnnplan::pipedream_result run(const dnnplan::layer_graph& graph, const dnnplan::pipedream_options& options) {
    return dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = options});
}

/// The same on states built once: solve(pipedream_request, states).
dnnplan::pipedream_result run(const dnnplan::layer_graph& graph, const dnnplan::antichain_states& states,
                              const dnnplan::pipedream_options& options) {
    return dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = options}, states);
}

using dnnplan_test::time_or_inf;

/// A result with a partition: status optimal, objective_value = bound = its time.
const dnnplan::pipedream_plan& plan_of(const dnnplan::pipedream_result& r) {
    REQUIRE(r.status == dnnplan::solve_status::optimal);
    REQUIRE(r.plan);
    CHECK(r.objective_value == r.plan->time_per_minibatch_s);
    CHECK(r.bound == r.plan->time_per_minibatch_s);
    return *r.plan;
}

/// A result without one: status infeasible, no plan, value or bound, a reason.
void check_no_partition(const dnnplan::pipedream_result& r) {
    CHECK(r.status == dnnplan::solve_status::infeasible);
    CHECK_FALSE(r.plan);
    CHECK_FALSE(r.objective_value);
    CHECK_FALSE(r.bound);
    CHECK_FALSE(r.reason.empty());
}

/// A fuzz finding of the pipedream_graph harness as the harness solved it: its first byte (0x12)
/// says 3 machines and a straight pipeline, the rest is the graph.
dnnplan::pipedream_request fuzz_finding_request(const std::string& name) {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/fuzz_findings/" + name, std::ios::binary);
    REQUIRE(in);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(bytes.size() > 1);
    CHECK(static_cast<unsigned char>(bytes[0]) == 0x12U);
    dnnplan::pipedream_request request{.graph = dnnplan::parse_pipedream_graph(std::string_view(bytes).substr(1))};
    request.options.machines = {3};
    request.options.straight_pipeline = true;
    return request;
}

}  // namespace

TEST_CASE("PipeDream's worked examples are reproduced", "[partition][pipedream][published]") {
    // Reference note, section 6: PipeDream's own output on its shipped profiles.
    const auto vgg = pipedream_fixture("vgg16");
    const auto r = run(vgg, machines({4}));
    CHECK(r.details.num_states == 40);
    const auto& plan = plan_of(r);
    CHECK(close(plan.time_per_minibatch_s, 0.205520896));
    REQUIRE(plan.stages.size() == 2);
    CHECK(plan.stages[0].first_state == 0);
    CHECK(plan.stages[0].end_state == 17);
    CHECK(plan.stages[0].replicas == 3);
    CHECK(plan.stages[1].first_state == 17);
    CHECK(plan.stages[1].end_state == 40);
    CHECK(plan.stages[1].replicas == 1);
    CHECK(r.counters.evaluations > 0);
    CHECK(close(plan_of(run(vgg, machines({1}))).time_per_minibatch_s, 0.672535));
    // The library's own function gives the same result.
    const auto direct = dnnplan::pipedream_partition(vgg, machines({4}));
    CHECK(direct.status == r.status);
    CHECK(plan_of(direct).time_per_minibatch_s == plan.time_per_minibatch_s);

    const auto resnet = run(pipedream_fixture("resnet50"), machines({4}));
    CHECK(resnet.details.num_states == 240);
    CHECK(close(plan_of(resnet).time_per_minibatch_s, 0.162880924));
}

TEST_CASE("stages cover every state and every kept layer once", "[partition][pipedream]") {
    for (const char* name : {"vgg16", "resnet50", "alexnet", "gnmt"}) {
        const auto graph = pipedream_fixture(name);
        for (const auto& m : {std::vector<std::int32_t>{4}, std::vector<std::int32_t>{3}, std::vector<std::int32_t>{2, 2}}) {
            INFO(name << " on " << m.size() << " levels");
            const auto r = run(graph, machines(m));
            const auto& plan = plan_of(r);
            REQUIRE(std::isfinite(plan.time_per_minibatch_s));
            REQUIRE_FALSE(plan.stages.empty());
            CHECK(plan.stages.front().first_state == 0);
            CHECK(plan.stages.back().end_state == r.details.num_states);
            std::int32_t used = 0;
            std::vector<int> seen(graph.size(), 0);
            for (std::size_t s = 0; s < plan.stages.size(); ++s) {
                if (s > 0) CHECK(plan.stages[s].first_state == plan.stages[s - 1].end_state);
                used += plan.stages[s].replicas;
                for (const auto l : plan.stages[s].layers) ++seen[l];
            }
            CHECK(used == m.back());
            const auto removed = dnnplan::build_antichain_states(graph).removed_layers;
            for (std::size_t l = 0; l < graph.size(); ++l)
                CHECK(seen[l] == (std::find(removed.begin(), removed.end(), l) == removed.end() ? 1 : 0));
        }
    }
}

TEST_CASE("flags behave as PipeDream's", "[partition][pipedream]") {
    const auto vgg = pipedream_fixture("vgg16");
    const double free = plan_of(run(vgg, machines({8}))).time_per_minibatch_s;
    auto straight = machines({8});
    straight.straight_pipeline = true;
    const auto straight_result = run(vgg, straight);
    const auto& s = plan_of(straight_result);
    for (const auto& stage : s.stages) CHECK(stage.replicas == 1);
    CHECK(s.time_per_minibatch_s >= free);
    auto fewer = machines({8});
    fewer.use_fewer_machines = true;
    CHECK(plan_of(run(vgg, fewer)).time_per_minibatch_s <= free);
    // Activation transfer ignored without a ratio: never slower.
    CHECK(plan_of(run(vgg, machines({8}, std::nullopt))).time_per_minibatch_s <= free);
    // A memory limit nothing fits leaves only pure data parallelism: PipeDream's stash term
    // ceil((M - (m + 1)) / (m + 1)) * (activations + parameters) is 0 when one stage is
    // replicated on all M machines (a quirk of its model, reproduced). A generous limit changes
    // nothing.
    auto tight = machines({8});
    tight.use_memory_constraint = true;
    tight.memory_bytes = 1.0;
    const auto data_parallel_result = run(vgg, tight);
    const auto& data_parallel = plan_of(data_parallel_result);
    REQUIRE(data_parallel.stages.size() == 1);
    CHECK(data_parallel.stages[0].replicas == 8);
    CHECK(data_parallel.time_per_minibatch_s >= free);
    tight.memory_bytes = 1e18;
    CHECK(plan_of(run(vgg, tight)).time_per_minibatch_s == free);
    // A straight pipeline has no such way out: its first stage stashes for the 7 machines after
    // it. No partition: status infeasible, no plan (was a time of +inf).
    tight.memory_bytes = 1.0;
    tight.straight_pipeline = true;
    check_no_partition(run(vgg, tight));
}

TEST_CASE("bad options are rejected by field", "[partition][pipedream][errors]") {
    const auto vgg = pipedream_fixture("vgg16");
    const auto field_of = [](auto&& call) -> std::string {
        try {
            (void)call();
        } catch (const dnnplan::invalid_input& e) {
            return e.field();
        }
        return "(accepted)";
    };
    // The planner's entry names them under "options."; pipedream_partition without a prefix.
    const auto entry = [&](const dnnplan::pipedream_options& o) { return field_of([&] { return run(vgg, o); }); };
    const auto direct = [&](const dnnplan::pipedream_options& o) {
        return field_of([&] { return dnnplan::pipedream_partition(vgg, o); });
    };
    CHECK(entry({}) == "options.machines");
    CHECK(direct({}) == "machines");
    CHECK(entry(machines({4, 0})) == "options.machines[1]");
    CHECK(direct(machines({4, 0})) == "machines[1]");
    auto o = machines({4, 2});
    o.bandwidths_bytes_per_s = {1e9};
    CHECK(entry(o) == "options.bandwidths_bytes_per_s");
    o.bandwidths_bytes_per_s = {1e9, -1};
    CHECK(entry(o) == "options.bandwidths_bytes_per_s[1]");
    CHECK(direct(o) == "bandwidths_bytes_per_s[1]");
    CHECK(entry(machines({4}, 0.0)) == "options.activation_compression_ratio");
    o = machines({4});
    o.memory_bytes = 0.0;
    CHECK(entry(o) == "options.memory_bytes");
    // pipedream_options::validate takes a path prefix.
    CHECK(field_of([] {
              dnnplan::pipedream_options{}.validate("job.options");
              return 0;
          }) == "job.options.machines");
    // The generic recurrence: one level, and a model built over these states.
    const auto states = dnnplan::build_antichain_states(vgg);
    const dnnplan::pipedream_stage_cost cost(states, {});
    const dnnplan::pipedream_request two_levels{.graph = vgg, .options = machines({2, 2})};
    CHECK(field_of([&] { return dnnplan::solve(two_levels, states, cost); }) == "options.machines");
    const auto other = dnnplan::build_antichain_states(pipedream_fixture("alexnet"));
    const dnnplan::pipedream_stage_cost other_cost(other, {});
    const dnnplan::pipedream_request one_level{.graph = vgg, .options = machines({4})};
    CHECK(field_of([&] { return dnnplan::solve(one_level, states, other_cost); }) == "model.num_states()");
    const dnnplan::pipedream_request bad{.graph = vgg, .options = machines({0})};
    CHECK(field_of([&] { return dnnplan::solve(bad, states, cost); }) == "options.machines[0]");
}

// Brute force over every split of a chain into contiguous stages with replica counts summing to
// M, each stage timed with PipeDream's formulas (note, section 3), activation transfer included.
TEST_CASE("on random chains the recurrence equals brute force", "[partition][pipedream][oracle]") {
    for (std::uint64_t seed = 0; seed < 150; ++seed) {
        dnnplan_test::rng r(seed);
        const auto layers = static_cast<std::size_t>(r.integer(1, 7));
        const std::int32_t m_total = r.integer(1, 5);
        const double bw = r.uniform(1e8, 1e10);
        std::vector<dnnplan::layer> ls;
        std::vector<dnnplan::layer_edge> es;
        for (std::size_t i = 0; i < layers; ++i) {
            std::string id = "l";  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "l" + string
            id += std::to_string(i);
            ls.push_back({.id = id,
                          .description = "Linear",
                          .forward_s = r.uniform(0.001, 0.05),
                          .backward_s = r.uniform(0.001, 0.08),
                          .activation_bytes = r.uniform(1e5, 5e8),
                          .parameter_bytes = r.chance(0.3) ? 0.0 : r.uniform(1e5, 5e8)});
            if (i > 0) es.push_back({i - 1, i});
        }
        const dnnplan::layer_graph graph(ls, es);
        auto options = machines({m_total}, r.chance(0.7) ? std::optional<double>(r.uniform(0.5, 4.0)) : std::nullopt);
        options.bandwidths_bytes_per_s = {bw};
        const auto result = run(graph, options);

        // States of a chain are its prefixes: state j = layers 0..j.
        const std::size_t s = layers;
        std::vector<double> c(s), w(s), out(s);
        for (std::size_t j = 0; j < s; ++j) {
            c[j] = (j ? c[j - 1] : 0.0) + ls[j].forward_s + ls[j].backward_s;
            w[j] = (j ? w[j - 1] : 0.0) + ls[j].parameter_bytes;
            out[j] = ls[j].activation_bytes;
        }
        const auto stage_time = [&](std::size_t a, std::size_t b, std::int32_t reps) {
            const double rd = reps;
            const double comp = c[b] - (a ? c[a - 1] : 0.0), par = w[b] - (a ? w[a - 1] : 0.0);
            return (comp + 4.0 * (rd - 1.0) * par / (bw * rd)) / rd;
        };
        double best = std::numeric_limits<double>::infinity();
        // Stages as (end state, replicas), built left to right.
        std::function<void(std::size_t, std::int32_t, double)> extend = [&](std::size_t start, std::int32_t left, double t) {
            for (std::size_t end = start; end < s; ++end)
                for (std::int32_t reps = 1; reps <= left; ++reps) {
                    double tt = std::max(t, stage_time(start, end, reps));
                    if (start > 0 && options.activation_compression_ratio) {
                        const double ratio = *options.activation_compression_ratio;
                        tt = std::max(tt, 2.0 * out[start - 1] / (bw * reps) / ratio);
                        if (end + 1 < s) tt = std::max(tt, 2.0 * out[end] / (bw * reps) / ratio);
                    }
                    if (end + 1 == s) {
                        if (reps == left) best = std::min(best, tt);
                    } else {
                        extend(end + 1, left - reps, tt);
                    }
                }
        };
        extend(0, m_total, 0.0);
        INFO("seed " << seed << ", " << layers << " layers, " << m_total << " machines");
        REQUIRE(result.details.num_states == s);
        if (std::isinf(best)) {
            check_no_partition(result);
        } else {
            CHECK(close(plan_of(result).time_per_minibatch_s, best));
        }
    }
}

namespace {

// Every flag combination of PipeDream's command line on one level, for machine count m.
std::vector<dnnplan::pipedream_options> flag_sets(std::int32_t m, double memory_bytes) {
    std::vector<dnnplan::pipedream_options> out;
    for (int flags = 0; flags < 32; ++flags) {
        dnnplan::pipedream_options o;
        o.machines = {m};
        if (flags & 1) o.activation_compression_ratio = (flags & 16) ? 4.0 : 1.0;
        if (flags & 2) o.straight_pipeline = true;
        if (flags & 4) o.use_fewer_machines = true;
        if (flags & 8) {
            o.use_memory_constraint = true;
            o.memory_bytes = memory_bytes;
        }
        if (flags & 16) o.bandwidths_bytes_per_s = {2.5e9};
        out.push_back(o);
    }
    return out;
}

std::string describe(const dnnplan::pipedream_options& o) {
    // Appends only: GCC 12 at -O3 warns falsely (-Wrestrict) on "text" + std::string.
    std::string d = "-n";
    const auto add = [&d](const char* text, const std::string& value) {
        d += text;
        d += value;
    };
    for (const auto m : o.machines) add(" ", std::to_string(m));
    if (!o.bandwidths_bytes_per_s.empty()) {
        d += " -b";
        for (const auto b : o.bandwidths_bytes_per_s) add(" ", std::to_string(b));
    }
    if (o.activation_compression_ratio) add(" --activation_compression_ratio ", std::to_string(*o.activation_compression_ratio));
    if (o.straight_pipeline) d += " --straight_pipeline";
    if (o.use_fewer_machines) d += " --use_fewer_machines";
    if (o.use_memory_constraint) add(" --use_memory_constraint -s ", std::to_string(o.memory_bytes));
    return d;
}

bool same_time(double a, double b) {
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b));
}

// The stages returned must realise the time returned: recompute it with the stage-cost model.
double time_of_stages(const dnnplan::antichain_states& built, const dnnplan::pipedream_options& o,
                      const dnnplan::pipedream_result& r) {
    const dnnplan::pipedream_stage_cost cost(
        built, {.bandwidth_bytes_per_s = o.bandwidths_bytes_per_s.empty() ? 1e9 : o.bandwidths_bytes_per_s[0],
                .activation_compression_ratio = o.activation_compression_ratio,
                .memory_bytes = std::nullopt});
    double slowest = 0.0;
    std::int32_t before = 0;
    REQUIRE(r.plan);
    for (const auto& st : r.plan->stages) {
        slowest = std::max(slowest, cost.stage_time_s({.first_state = st.first_state, .end_state = st.end_state,
                                                        .replicas = st.replicas, .devices_before = before,
                                                        .devices_total = o.machines.back()}));
        before += st.replicas;
    }
    return slowest;
}

// A random single-source DAG of `n` layers (every layer after the first has 1-3 inputs among
// the earlier ones), in PipeDream's sense: profiled times and sizes.
dnnplan::layer_graph random_dag(dnnplan_test::rng& r, std::size_t n, bool chain) {
    std::vector<dnnplan::layer> ls;
    std::vector<dnnplan::layer_edge> es;
    for (std::size_t i = 0; i < n; ++i) {
        std::string id = "l";
        id += std::to_string(i);
        ls.push_back({.id = id,
                      .description = "Conv2d",
                      .forward_s = r.uniform(0.001, 0.05),
                      .backward_s = r.uniform(0.001, 0.08),
                      .activation_bytes = r.uniform(1e5, 5e8),
                      .parameter_bytes = r.chance(0.3) ? 0.0 : r.uniform(1e5, 8e8)});
        if (i == 0) continue;
        es.push_back({i - 1, i});
        if (chain) continue;
        const std::int32_t extra = r.integer(0, 2);
        for (std::int32_t e = 0; e < extra && i >= 2; ++e) {
            const auto from = static_cast<std::size_t>(r.integer(0, static_cast<std::int32_t>(i) - 2));
            if (std::find(es.begin(), es.end(), dnnplan::layer_edge{from, i}) == es.end()) es.push_back({from, i});
        }
    }
    return {ls, es};
}

}  // namespace

TEST_CASE("the solver equals PipeDream's plain recurrence on every fixture and flag set", "[partition][pipedream][oracle]") {
    // memory_bytes: a limit that binds for each profile (some partitions fit, some do not).
    const std::vector<std::pair<const char*, double>> profiles = {
        {"vgg16", 4e9}, {"alexnet", 1.5e9}, {"resnet50", 6e9}, {"gnmt", 5e9}};
    std::int64_t checked = 0, memory_changed = 0, retried = 0, first_bound = 0;
    for (const auto& [name, memory] : profiles) {
        const auto graph = pipedream_fixture(name);
        const auto built = dnnplan::build_antichain_states(graph);
        for (const std::int32_t m : {1, 2, 3, 5, 8}) {
            const double free = time_or_inf(run(graph, built, machines({m}, std::nullopt)));
            for (const auto& o : flag_sets(m, memory)) {
                INFO(name << " " << describe(o));
                dnnplan::pipedream_counters work;
                const auto fast = dnnplan::pipedream_partition(graph, built, o, &work);
                const auto plain = dnnplan_test::pipedream_partition_reference(graph, o);
                (work.searches_retried > 0 ? retried : first_bound) += 1;
                CHECK(fast.status == plain.status);
                CHECK(fast.details.work == work);
                CHECK(same_time(time_or_inf(fast), time_or_inf(plain)));
                if (fast.plan && !o.use_memory_constraint)
                    CHECK(same_time(time_of_stages(built, o, fast), fast.plan->time_per_minibatch_s));
                if (o.use_memory_constraint && !o.activation_compression_ratio && !o.straight_pipeline &&
                    !o.use_fewer_machines && o.bandwidths_bytes_per_s.empty() && time_or_inf(fast) != free)
                    ++memory_changed;
                ++checked;
            }
        }
        // Hierarchical runs: two levels, with and without transfers.
        for (const auto& [levels, bws] : std::vector<std::pair<std::vector<std::int32_t>, std::vector<double>>>{
                 {{2, 2}, {1e9, 2e9}}, {{3, 2}, {1e10, 1e9}}, {{2, 3}, {2.5e10, 1e9}}}) {
            for (const bool ratio : {false, true}) {
                auto o = machines(levels, ratio ? std::optional<double>(1.0) : std::nullopt);
                o.bandwidths_bytes_per_s = bws;
                INFO(name << " " << describe(o));
                CHECK(same_time(time_or_inf(run(graph, built, o)), time_or_inf(dnnplan_test::pipedream_partition_reference(graph, o))));
                ++checked;
            }
        }
    }
    CHECK(checked == 4 * (5 * 32 + 6));
    CHECK(memory_changed >= 4);  // the memory limits bind somewhere
    // Both paths of the bounded search ran: answered below the first bound, and after raising it.
    CHECK(retried >= 50);
    CHECK(first_bound >= 50);
}

TEST_CASE("the bounded search's lower and upper bounds enclose the answer", "[partition][pipedream][bounds]") {
    // The lower bound (compute over the machines, each layer alone on its best replica count)
    // and the upper bound (a partition along one path of the state DAG, timed with the full
    // cost) only decide the work, but a lower bound above the answer or an upper bound below it
    // would be a wrong proof in the docs: both are checked on every fixture.
    std::int64_t checked = 0, tight = 0;
    for (const char* name : {"alexnet", "vgg16", "resnet18", "squeezenet1_0", "gnmt", "resnet50", "densenet121"}) {
        const auto graph = pipedream_fixture(name);
        const auto built = dnnplan::build_antichain_states(graph);
        const std::size_t s_count = built.states.size();
        for (const std::int32_t m : {2, 4, 16}) {
            for (const bool ratio : {false, true}) {
                for (const bool straight : {false, true}) {
                    auto o = machines({m}, ratio ? std::optional<double>(1.0) : std::nullopt);
                    o.straight_pipeline = straight;
                    INFO(name << " " << describe(o));
                    const double answer = time_or_inf(run(graph, built, o));
                    const dnnplan::pipedream_stage_cost cost(
                        built, {.bandwidth_bytes_per_s = 1e9, .activation_compression_ratio = o.activation_compression_ratio});
                    const double lower = std::max(cost.compute_s(0, s_count) / m,
                                                  dnnplan::detail::pipedream_layer_lower_bound(graph, built, 1e9, straight ? 1 : m));
                    dnnplan::pipedream_counters work;
                    const double upper = dnnplan::detail::pipedream_path_upper_bound(built, cost, m, straight, false, work);
                    CHECK(lower <= answer * (1 + 1e-12));
                    CHECK(upper >= answer * (1 - 1e-12));
                    if (std::isfinite(upper) && upper <= answer * 1.02) ++tight;
                    ++checked;
                }
            }
        }
    }
    CHECK(checked == 7 * 3 * 2 * 2);
    CHECK(tight >= 10);  // the path's partition is often within 2% of the optimum
}

TEST_CASE("on random chains and DAGs the solver, the plain recurrence and brute force agree", "[partition][pipedream][oracle]") {
    std::int64_t dags = 0, finite = 0, infinite = 0;
    for (std::uint64_t seed = 0; seed < 400; ++seed) {
        dnnplan_test::rng r(seed);
        const bool chain = seed % 4 == 0;
        const auto graph = random_dag(r, static_cast<std::size_t>(r.integer(1, chain ? 7 : 6)), chain);
        const auto built = dnnplan::build_antichain_states(graph);
        if (built.states.size() > 9) continue;  // keep the brute force small
        dnnplan::pipedream_options o;
        o.machines = {r.integer(1, 5)};
        o.bandwidths_bytes_per_s = {r.uniform(1e8, 1e10)};
        if (r.chance(0.6)) o.activation_compression_ratio = r.uniform(0.5, 4.0);
        o.straight_pipeline = r.chance(0.2);
        o.use_fewer_machines = r.chance(0.4);
        if (r.chance(0.4)) {
            o.use_memory_constraint = true;
            o.memory_bytes = r.uniform(5e8, 6e9);
        }
        INFO("seed " << seed << ", " << graph.size() << " layers, " << built.states.size() << " states, " << describe(o));
        const double fast = time_or_inf(run(graph, built, o));
        const double plain = time_or_inf(dnnplan_test::pipedream_partition_reference(graph, o));
        const double brute = dnnplan_test::pipedream_brute_force(built, o);
        CHECK(same_time(fast, plain));
        CHECK(same_time(fast, brute));
        dags += chain ? 0 : 1;
        (std::isinf(brute) ? infinite : finite) += 1;
    }
    CHECK(dags >= 200);
    CHECK(finite >= 200);
    CHECK(infinite >= 10);
}

TEST_CASE("on chains the threshold solver equals the general solver and the plain recurrence", "[partition][pipedream][oracle][chain]") {
    // A memory limit nothing reaches changes no answer but sends a chain to the general solver
    // (the threshold solver of partition/pipedream_chain.hpp does not take memory limits).
    std::int64_t used_threshold = 0, fewer_than_all = 0;
    for (std::uint64_t seed = 0; seed < 120; ++seed) {
        dnnplan_test::rng r(1000 + seed);
        const auto layers = static_cast<std::size_t>(r.integer(2, seed < 100 ? 40 : 300));
        const auto graph = random_dag(r, layers, true);
        const auto built = dnnplan::build_antichain_states(graph);
        REQUIRE(built.chain);
        dnnplan::pipedream_options o;
        // One seed in five: a slow network and a few more machines than states, where leaving
        // machines idle beats replicating a stage (use_fewer_machines pays off).
        const bool spare = seed % 5 == 1;
        o.machines = {spare ? static_cast<std::int32_t>(layers) + r.integer(1, 3) : r.integer(2, seed < 100 ? 12 : 96)};
        o.bandwidths_bytes_per_s = {spare || r.chance(0.2) ? r.uniform(1e5, 1e7) : r.uniform(1e8, 1e11)};
        o.use_fewer_machines = spare || r.chance(0.4);
        dnnplan::pipedream_counters work;
        const auto threshold_result = dnnplan::pipedream_partition(graph, built, o, &work);
        used_threshold += work.threshold_decisions > 0 ? 1 : 0;
        auto general_options = o;
        general_options.use_memory_constraint = true;
        general_options.memory_bytes = 1e300;
        const auto general_result = run(graph, built, general_options);
        INFO("seed " << seed << ", " << layers << " layers, " << describe(o));
        const auto& threshold = plan_of(threshold_result);
        const auto& general = plan_of(general_result);
        // The threshold solver stops within 1e-10 (relative) of the optimum (pipedream_chain.hpp).
        CHECK(std::abs(threshold.time_per_minibatch_s - general.time_per_minibatch_s) <=
              1e-10 * general.time_per_minibatch_s);
        CHECK(threshold.time_per_minibatch_s >= general.time_per_minibatch_s * (1.0 - 1e-15));
        CHECK(same_time(time_of_stages(built, o, threshold_result), threshold.time_per_minibatch_s));
        std::int32_t used = 0;
        for (const auto& st : threshold.stages) used += st.replicas;
        CHECK(used <= o.machines[0]);
        if (!o.use_fewer_machines) CHECK(used == o.machines[0]);
        fewer_than_all += used < o.machines[0] ? 1 : 0;
        if (layers <= 40 && o.machines[0] <= 16)
            CHECK(std::abs(threshold.time_per_minibatch_s -
                           time_or_inf(dnnplan_test::pipedream_partition_reference(graph, o))) <=
                  1e-10 * threshold.time_per_minibatch_s);
    }
    CHECK(used_threshold == 120);
    CHECK(fewer_than_all >= 1);  // idle machines were chosen at least once (coverage of that path)
}

namespace {

/// PipeDream's stage cost of the one level of `o`, as the fast solver builds it.
dnnplan::pipedream_stage_cost level_cost(const dnnplan::antichain_states& states, const dnnplan::pipedream_options& o) {
    return dnnplan::pipedream_stage_cost(
        states, {.bandwidth_bytes_per_s = o.bandwidths_bytes_per_s.empty() ? 1e9 : o.bandwidths_bytes_per_s[0],
                 .activation_compression_ratio = o.activation_compression_ratio,
                 .memory_bytes = o.use_memory_constraint ? std::optional<double>(o.memory_bytes) : std::nullopt});
}

/// A stage-cost model written here: a stage's compute spread evenly over its replicas (no
/// synchronisation, transfers or memory), +inf above `cap` seconds per replica.
struct compute_only {
    std::vector<double> prefix;  ///< compute of states 0..j (PipeDream's prefix figures)
    double cap = std::numeric_limits<double>::infinity();

    static constexpr bool needs_stage_count = false;

    explicit compute_only(const dnnplan::antichain_states& states, double limit = std::numeric_limits<double>::infinity())
        : cap(limit) {
        for (const auto& st : states.states) prefix.push_back(st.compute_s);
    }
    [[nodiscard]] std::size_t num_states() const noexcept { return prefix.size(); }
    [[nodiscard]] double stage_time_s(const dnnplan::stage_candidate& c) const noexcept {
        const double compute = prefix[c.end_state - 1] - (c.first_state == 0 ? 0.0 : prefix[c.first_state - 1]);
        const double t = compute / c.replicas;
        return t > cap ? std::numeric_limits<double>::infinity() : t;
    }
    [[nodiscard]] double pipeline_time_s(double slowest_s, std::int32_t /*stages*/) const noexcept { return slowest_s; }
};
static_assert(dnnplan::stage_cost_model<compute_only>);

/// The slowest stage of a plan, each stage priced by `model` in its place.
template <class Model>
double slowest_stage(const Model& model, const dnnplan::pipedream_plan& plan, std::int32_t machines) {
    double slowest = 0.0;
    std::int32_t before = 0;
    for (const auto& st : plan.stages) {
        slowest = std::max(slowest, static_cast<double>(model.stage_time_s({.first_state = st.first_state, .end_state = st.end_state,
                                                                            .replicas = st.replicas, .devices_before = before,
                                                                            .devices_total = machines})));
        before += st.replicas;
    }
    return slowest;
}

}  // namespace

TEST_CASE("the generic recurrence with PipeDream's stage cost equals the fast solver on every fixture",
          "[partition][pipedream][oracle][models]") {
    // solve(request, states, pipedream_stage_cost for the level) is PipeDream's recurrence run
    // plainly over the model; solve(request, states) is the fast exact solver.
    const std::map<std::string, double> memory = {{"vgg16", 4e9}, {"alexnet", 1.5e9}, {"resnet50", 6e9}, {"gnmt", 5e9}};
    std::int64_t checked = 0, none = 0;
    for (const char* name : {"alexnet", "vgg16", "resnet18", "squeezenet1_0", "gnmt", "resnet50", "resnext50", "resnet101",
                             "resnext101", "densenet121", "gnmt_large"}) {
        const auto graph = pipedream_fixture(name);
        const auto states = dnnplan::build_antichain_states(graph);
        const bool large = states.states.size() > 300;
        const std::vector<std::int32_t> counts = large ? std::vector<std::int32_t>{2, 4, 8} : std::vector<std::int32_t>{1, 2, 3, 5, 8};
        for (const std::int32_t m : counts) {
            for (int flags = 0; flags < (large ? 8 : 16); ++flags) {
                auto o = machines({m}, (flags & 4) ? std::optional<double>(1.0) : std::nullopt);
                o.straight_pipeline = (flags & 1) != 0;
                o.use_fewer_machines = (flags & 2) != 0;
                if ((flags & 8) != 0) {
                    if (!memory.contains(name)) continue;
                    o.use_memory_constraint = true;
                    o.memory_bytes = memory.at(name);
                }
                INFO(name << " " << describe(o));
                const dnnplan::pipedream_request request{.graph = graph, .options = o};
                const auto fast = dnnplan::solve(request, states);
                const auto cost = level_cost(states, o);
                const auto generic = dnnplan::solve(request, states, cost);
                ++checked;
                CHECK(generic.details.num_states == states.states.size());
                CHECK(generic.details.work == dnnplan::pipedream_counters{});  // the fast solver's counters only
                CHECK(generic.counters.evaluations > 0);
                REQUIRE(generic.status == fast.status);
                if (!fast.plan) {
                    check_no_partition(generic);
                    ++none;
                    continue;
                }
                const double t_fast = plan_of(fast).time_per_minibatch_s;
                const double t_generic = plan_of(generic).time_per_minibatch_s;
                CHECK(std::abs(t_generic - t_fast) <= 1e-9 * t_fast);
                // The generic plan's stages realise its time in the model (where the places of
                // idle machines do not matter: without a memory limit).
                if (!o.use_memory_constraint) CHECK(slowest_stage(cost, *generic.plan, m) == t_generic);
                std::int32_t used = 0;
                for (const auto& st : generic.plan->stages) {
                    used += st.replicas;
                    if (o.straight_pipeline) CHECK(st.replicas == 1);
                }
                CHECK(used <= m);
                if (!o.use_fewer_machines) CHECK(used == m);
            }
        }
    }
    CHECK(checked == 7 * 5 * 8 + 4 * 5 * 8 + 4 * 3 * 8);
    CHECK(none >= 1);  // the straight pipelines of 8 machines on a small profile, and memory limits
}

TEST_CASE("the generic recurrence with a stage-cost model written here equals brute force", "[partition][pipedream][oracle][models]") {
    std::int64_t dags = 0, finite = 0, infinite = 0, replicated = 0;
    for (std::uint64_t seed = 0; seed < 300; ++seed) {
        dnnplan_test::rng r(5000 + seed);
        const bool chain = seed % 4 == 0;
        const auto graph = random_dag(r, static_cast<std::size_t>(r.integer(2, chain ? 7 : 6)), chain);
        const auto states = dnnplan::build_antichain_states(graph);
        // Small for the brute force; one state is left to the next test (request 2 of
        // /work/notes/requests-solve.md: idle machines after the first state).
        if (states.states.size() > 9 || states.states.size() < 2) continue;
        dnnplan::pipedream_options o;
        o.machines = {r.integer(1, 5)};
        o.straight_pipeline = r.chance(0.2);
        o.use_fewer_machines = r.chance(0.4);
        // A cap on a stage's compute per replica that binds now and then.
        const double total = states.states.back().compute_s;
        const double cap = r.chance(0.4) ? total * r.uniform(0.1, 0.6) : std::numeric_limits<double>::infinity();
        const compute_only model(states, cap);
        INFO("seed " << seed << ", " << graph.size() << " layers, " << states.states.size() << " states, cap " << cap << ", "
                     << describe(o));
        const auto result = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o}, states, model);
        const double brute = dnnplan_test::pipedream_brute_force(states, model, o.machines[0], o.straight_pipeline,
                                                                 o.use_fewer_machines);
        dags += chain ? 0 : 1;
        if (std::isinf(brute)) {
            ++infinite;
            check_no_partition(result);
            continue;
        }
        ++finite;
        const auto& plan = plan_of(result);
        CHECK(plan.time_per_minibatch_s == brute);
        CHECK(slowest_stage(model, plan, o.machines[0]) == plan.time_per_minibatch_s);
        CHECK(plan.stages.front().first_state == 0);
        CHECK(plan.stages.back().end_state == states.states.size());
        std::int32_t used = 0;
        for (std::size_t s = 0; s < plan.stages.size(); ++s) {
            if (s > 0) CHECK(plan.stages[s].first_state == plan.stages[s - 1].end_state);
            used += plan.stages[s].replicas;
            replicated += plan.stages[s].replicas > 1 ? 1 : 0;
        }
        CHECK(used <= o.machines[0]);
        CHECK(result.details.work == dnnplan::pipedream_counters{});
    }
    CHECK(dags >= 100);
    CHECK(finite >= 100);
    CHECK(infinite >= 10);
    CHECK(replicated >= 50);
}

TEST_CASE("the generic recurrence leaves machines idle only where PipeDream does", "[partition][pipedream][models]") {
    // PipeDream's use_fewer_machines copies A[j][m - 1] into A[j][m] for j >= 1 only (its loop
    // over j starts after the row's first state): no idle machine right after a stage that ends
    // at state 0 (pipedream_brute_force.hpp encodes the same rule). The generic recurrence
    // (detail::pipedream_recurrence in solve/pipeline_plan/solve.hpp) copies at j = 0 too.
    // FAILS until that is fixed: /work/notes/requests-solve.md, request 2.
    const auto layer = [](const char* id, double parameter_bytes) {
        return dnnplan::layer{.id = id, .description = "Linear", .forward_s = 0.01, .backward_s = 0.02,
                              .activation_bytes = 1e6, .parameter_bytes = parameter_bytes};
    };
    SECTION("one state, a straight pipeline on 3 machines with use_fewer_machines: PipeDream has no partition") {
        const dnnplan::layer_graph graph({layer("a", 4e8)}, {});
        const auto states = dnnplan::build_antichain_states(graph);
        REQUIRE(states.states.size() == 1);
        auto o = machines({3}, std::nullopt);
        o.straight_pipeline = true;
        o.use_fewer_machines = true;
        const dnnplan::pipedream_request request{.graph = graph, .options = o};
        const auto fast = dnnplan::solve(request, states);
        const auto generic = dnnplan::solve(request, states, level_cost(states, o));
        check_no_partition(dnnplan_test::pipedream_partition_reference(graph, o));
        check_no_partition(fast);
        CHECK(generic.status == fast.status);  // fails: optimal with one replica and two idle machines
        CHECK(time_or_inf(generic) == time_or_inf(fast));
        CHECK(std::isinf(dnnplan_test::pipedream_brute_force(states, o)));
    }
    SECTION("one state, 3 machines with use_fewer_machines: PipeDream replicates it on all 3") {
        const dnnplan::layer_graph graph({layer("a", 4e8)}, {});
        const auto states = dnnplan::build_antichain_states(graph);
        auto o = machines({3}, std::nullopt);
        o.use_fewer_machines = true;
        const dnnplan::pipedream_request request{.graph = graph, .options = o};
        const auto fast = dnnplan::solve(request, states);
        const auto generic = dnnplan::solve(request, states, level_cost(states, o));
        REQUIRE(fast.plan);
        CHECK(fast.plan->stages.at(0).replicas == 3);
        CHECK(same_time(time_or_inf(fast), time_or_inf(dnnplan_test::pipedream_partition_reference(graph, o))));
        CHECK(same_time(time_or_inf(generic), time_or_inf(fast)));  // fails: 0.03 s on one replica
    }
    SECTION("two states under a memory limit: an idle machine right after state 0 is not PipeDream's") {
        // Stage [a] stashes 1.001e9 bytes for the 2 machines after it (fits in 2.5e9); stage [b]
        // stashes 3.001e9 bytes, which fits only with no machine after it, i.e. with the idle
        // machine placed between the two stages, which PipeDream does not do.
        const dnnplan::layer_graph graph({layer("a", 1e9), layer("b", 3e9)}, {{0, 1}});
        const auto states = dnnplan::build_antichain_states(graph);
        REQUIRE(states.states.size() == 2);
        auto o = machines({3}, std::nullopt);
        o.straight_pipeline = true;
        o.use_fewer_machines = true;
        o.use_memory_constraint = true;
        o.memory_bytes = 2.5e9;
        const dnnplan::pipedream_request request{.graph = graph, .options = o};
        const auto fast = dnnplan::solve(request, states);
        const auto generic = dnnplan::solve(request, states, level_cost(states, o));
        check_no_partition(dnnplan_test::pipedream_partition_reference(graph, o));
        check_no_partition(fast);
        CHECK(std::isinf(dnnplan_test::pipedream_brute_force(states, o)));
        CHECK(generic.status == fast.status);  // fails: optimal, 0.03 s
    }
}

#include <dnnplan/io/pipeline_plan_json.hpp>

TEST_CASE("a partition converts to JSON and back", "[partition][pipedream][json]") {
    const auto r = run(pipedream_fixture("vgg16"), machines({4}));
    const nlohmann::json j = r;
    CHECK(j.at("status") == "optimal");
    CHECK(j.at("details").at("num_states") == 40);
    CHECK(j.at("plan").at("stages").at(0).at("replicas") == 3);
    CHECK(j.at("objective_value") == j.at("plan").at("time_per_minibatch_s"));
    const auto back = j.get<dnnplan::pipedream_result>();
    CHECK(back.status == r.status);
    REQUIRE(back.plan);
    CHECK(back.plan->time_per_minibatch_s == r.plan->time_per_minibatch_s);
    REQUIRE(back.plan->stages.size() == r.plan->stages.size());
    CHECK(back.plan->stages[1].layers == r.plan->stages[1].layers);
    CHECK(back.details.num_states == r.details.num_states);
    CHECK(back.details.work == r.details.work);
    CHECK(back.bound == r.bound);
    // No partition: plan, value and bound are null (no infinity is written).
    dnnplan::pipedream_result none;
    none.status = dnnplan::solve_status::infeasible;
    none.reason = "no partition fits";
    const nlohmann::json n = none;
    CHECK(n.at("plan").is_null());
    CHECK(n.at("objective_value").is_null());
    CHECK(n.at("bound").is_null());
    const auto none_back = n.get<dnnplan::pipedream_result>();
    CHECK(none_back.status == dnnplan::solve_status::infeasible);
    CHECK_FALSE(none_back.plan);
    nlohmann::json bad = j;
    bad["plan"]["stages"][0]["colour"] = 1;
    try {
        (void)bad.get<dnnplan::pipedream_result>();
        FAIL("accepted an unknown key");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == "plan.stages[0].colour");
    }
}

TEST_CASE("PipeDream's own optimizer: every recorded run is reproduced", "[partition][pipedream][published]") {
    // tests/fixtures/pipedream/reference_runs.json: PipeDream's optimizer (the folder's README:
    // how it was run) on 11 of its profiles, machine counts 1-32, every flag, one and two levels,
    // each run under three PYTHONHASHSEED values. PipeDream's time varies between its runs by
    // rounding only (it sums over Python sets of node objects, ordered by memory address); a run
    // whose recorded spread exceeded 1e-9 (none does) would be checked to lie within it.
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/pipedream/reference_runs.json");
    REQUIRE(in);
    const nlohmann::json reference = nlohmann::json::parse(in);
    std::map<std::string, std::pair<dnnplan::layer_graph, dnnplan::antichain_states>> graphs;
    const auto graph_of = [&](const std::string& name) -> const auto& {
        auto it = graphs.find(name);
        if (it == graphs.end()) {
            auto g = pipedream_fixture(name);
            auto s = dnnplan::build_antichain_states(g);
            it = graphs.emplace(name, std::make_pair(std::move(g), std::move(s))).first;
        }
        return it->second;
    };
    std::int64_t exact = 0, within_spread = 0, none = 0;
    for (const auto& run : reference.at("runs")) {
        const std::string name = run.at("profile");
        const auto o = dnnplan_test::pipedream_options_from_args(run.at("args").get<std::vector<std::string>>());
        INFO(name << " " << describe(o));
        const auto& [graph, built] = graph_of(name);
        const auto r = ::run(graph, built, o);
        CHECK(r.details.num_states == run.at("num_states").get<std::size_t>());
        const auto& expected = run.at("time_per_minibatch_s");
        if (expected.is_null()) {
            // PipeDream's None: status infeasible, no plan (was a time of +inf).
            check_no_partition(r);
            ++none;
            continue;
        }
        const double ours = plan_of(r).time_per_minibatch_s;
        const double pd = expected.get<double>();
        const bool spread = run.contains("max_relative_spread") &&
                            (run.at("max_relative_spread").is_null() || run.at("max_relative_spread").get<double>() > 1e-9);
        if (!spread) {
            // The chain solver stops within 1e-10 of the optimum; every other path is exact.
            CHECK(std::abs(ours - pd) <= 1e-9 * pd);
            ++exact;
            continue;
        }
        double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
        for (const auto& [seed, time] : run.at("times_by_seed").items()) {
            if (time.is_null()) continue;
            lo = std::min(lo, time.get<double>());
            hi = std::max(hi, time.get<double>());
        }
        CHECK(ours >= lo * (1.0 - 1e-9));
        CHECK(ours <= hi * (1.0 + 1e-9));
        ++within_spread;
    }
    // PipeDream's optimizer raises TypeError (it compares None with a float) in some runs with
    // both --use_fewer_machines and --use_memory_constraint; dnnplan answers them.
    std::int64_t crashed = 0;
    for (const auto& run : reference.at("failed_runs")) {
        const std::string name = run.at("profile");
        const auto o = dnnplan_test::pipedream_options_from_args(run.at("args").get<std::vector<std::string>>());
        INFO(name << " " << describe(o) << ": " << run.at("error").get<std::string>());
        CHECK(o.use_fewer_machines);
        CHECK(o.use_memory_constraint);
        const auto& [graph, built] = graph_of(name);
        CHECK_NOTHROW((void)::run(graph, built, o));
        ++crashed;
    }
    // The file's own counts (its README): 869 runs, 70 of them without a partition; 179 crashes.
    CHECK(exact == 799);
    CHECK(none == 70);
    CHECK(crashed == 179);
    CHECK(within_spread + exact + none == static_cast<std::int64_t>(reference.at("runs").size()));
}

TEST_CASE("a 1,000,000-layer chain is read and partitioned without recursion or quadratic tables", "[pipedream][fuzz]") {
    // Hand-made cases: a chain this long must not recurse (reader, topological order,
    // antichain states) nor allocate the two-level tables (a budget status instead).
    constexpr std::size_t layers = 1'000'000;
    std::string text;
    text.reserve(layers * 130);
    for (std::size_t i = 0; i < layers; ++i) {
        text += "node";
        text += std::to_string(i);
        text += " -- Linear -- forward_compute_time=0.001, backward_compute_time=0.002, activation_size=1000.0, parameter_size=10.0\n";
    }
    for (std::size_t i = 0; i + 1 < layers; ++i) {
        text += "\tnode";
        text += std::to_string(i);
        text += " -- node";
        text += std::to_string(i + 1);
        text += '\n';
    }
    dnnplan::pipedream_request request{.graph = dnnplan::parse_pipedream_graph(text)};
    REQUIRE(request.graph.size() == layers);
    request.options.machines = {4};
    const auto one_level = dnnplan::solve(request);
    REQUIRE(one_level.status == dnnplan::solve_status::optimal);
    REQUIRE(one_level.plan);
    CHECK(one_level.plan->stages.size() == 4);
    CHECK(one_level.plan->time_per_minibatch_s == Approx(layers * 0.003e-3 / 4).epsilon(1e-6));  // ms in the file
    // Two levels: the table between levels has (states + 1) x states cells, 10^12 here.
    request.options.machines = {2, 2};
    const auto two_levels = dnnplan::solve(request);
    CHECK(two_levels.status == dnnplan::solve_status::no_plan_found);
    CHECK(two_levels.limit != dnnplan::search_limit::none);
    CHECK_FALSE(two_levels.plan);
    CHECK_THAT(two_levels.reason, Catch::Contains("budget"));
}

TEST_CASE("the chain solver's budget counts its bit rows and its arrays over the machine counts", "[pipedream][budget]") {
    // (states + 1) ceil((M + 1) / 64) + 3 (M + 1) cells: 3,000 layers on 4,096 machines are 207,356
    // cells (S x M would be 12.3 million, over the default budget).
    std::vector<dnnplan::layer> layers;
    std::vector<dnnplan::layer_edge> edges;
    for (std::size_t i = 0; i < 3000; ++i) {
        layers.push_back({.id = "l" + std::to_string(i), .description = "Linear", .forward_s = 1e-3, .backward_s = 2e-3,
                          .activation_bytes = 1e6, .parameter_bytes = i % 2 ? 1e6 : 0.0});
        if (i > 0) edges.push_back({i - 1, i});
    }
    dnnplan::pipedream_request request{.graph = dnnplan::layer_graph(std::move(layers), std::move(edges))};
    request.options.machines = {4096};
    const auto r = dnnplan::solve(request);
    CHECK(r.status == dnnplan::solve_status::optimal);
    request.options.budget.max_nodes = 207'355;
    const auto over = dnnplan::solve(request);
    CHECK(over.status == dnnplan::solve_status::no_plan_found);
    CHECK(over.limit != dnnplan::search_limit::none);
    CHECK_THAT(over.reason, Catch::Contains("207356 cells"));
    request.options.budget.max_nodes = 207'356;
    CHECK(dnnplan::solve(request).status == dnnplan::solve_status::optimal);
    // The largest machine count validation accepts: the count must not overflow into a pass.
    dnnplan::pipedream_request two{.graph = dnnplan::layer_graph(
                                       {{.id = "a", .description = "Linear", .forward_s = 1e-3, .backward_s = 1e-3, .activation_bytes = 1.0, .parameter_bytes = 1.0},
                                        {.id = "b", .description = "Linear", .forward_s = 1e-3, .backward_s = 1e-3, .activation_bytes = 1.0, .parameter_bytes = 1.0}},
                                       {{0, 1}})};
    two.options.machines = {std::numeric_limits<std::int32_t>::max()};
    CHECK(dnnplan::solve(two).limit == dnnplan::search_limit::nodes);
}

TEST_CASE("fuzz finding: the recurrence stops at the evaluation budget", "[pipedream][fuzz][budget]") {
    // tests/fixtures/fuzz_findings/README.md, pipedream_graph-15: under the fuzz harness's budget
    // (20,000 nodes and evaluations) the recurrence computed 33,344 stage times; max_evaluations
    // was not checked. The harness's first byte (0x12) says 3 machines and a straight pipeline.
    dnnplan::pipedream_request request = fuzz_finding_request("pipedream_graph-15-evaluations-over-budget.bin");
    const auto unlimited = dnnplan::solve(request);  // the default budget: 10^9 evaluations
    REQUIRE(unlimited.status == dnnplan::solve_status::optimal);
    CHECK(unlimited.counters.evaluations > 20'000);
    request.options.budget = {.max_nodes = 20'000, .max_evaluations = 20'000, .max_time_s = 0.0};
    const auto r = dnnplan::solve(request);
    CHECK(r.status == dnnplan::solve_status::no_plan_found);
    CHECK(r.limit != dnnplan::search_limit::none);
    CHECK_FALSE(r.plan);
    CHECK_FALSE(r.objective_value);
    CHECK(r.counters.evaluations == 20'000);
    CHECK_THAT(r.reason, Catch::Contains("evaluation budget of 20000"));
    // A budget the answer fits in gives the same answer.
    request.options.budget.max_evaluations = unlimited.counters.evaluations;
    const auto enough = dnnplan::solve(request);
    REQUIRE(enough.status == dnnplan::solve_status::optimal);
    CHECK(enough.objective_value == unlimited.objective_value);
}

TEST_CASE("fuzz finding: the bounded search's retries stop at the node budget", "[pipedream][fuzz][budget]") {
    // tests/fixtures/fuzz_findings/README.md, pipedream_graph-16: under the fuzz harness's budget
    // (20,000 nodes and evaluations) the searches below growing bounds refilled rows and counted
    // 23,844 cells: max_nodes was checked only against one fill. First byte 0x12: 3 machines, a
    // straight pipeline.
    dnnplan::pipedream_request request = fuzz_finding_request("pipedream_graph-16-nodes-over-budget.bin");
    const auto unlimited = dnnplan::solve(request);
    REQUIRE(unlimited.status == dnnplan::solve_status::optimal);
    CHECK(unlimited.counters.nodes > 20'000);
    request.options.budget = {.max_nodes = 20'000, .max_evaluations = 20'000, .max_time_s = 0.0};
    const auto r = dnnplan::solve(request);
    CHECK(r.status == dnnplan::solve_status::no_plan_found);
    CHECK(r.limit != dnnplan::search_limit::none);
    CHECK_FALSE(r.plan);
    CHECK_FALSE(r.objective_value);
    CHECK(r.counters.nodes <= 20'000);
    CHECK(r.counters.evaluations <= 20'000);
    CHECK_THAT(r.reason, Catch::Contains("node budget of 20000"));
}
