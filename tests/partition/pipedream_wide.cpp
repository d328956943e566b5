// PipeDream's objective on graphs over options.max_states states: the wide path
// (partition/pipedream_wide.hpp; docs/design/pipedream-wide-graphs.md, sections 3 and 5). Forced
// onto the small fixtures (max_states = 0) it is held to the exact solver: its bound is below the
// exact answer, its partition's time above it, that time is PipeDream's price of the partition
// (re-priced here over the exact solver's own states), and optimal means equal. The routing
// leaves every graph within max_states on the exact path. On the wide fixtures: valid plans,
// repeatable results, and the prototype's published values (design note, section 4).

#include <dnnplan/io/pipeline_plan_json.hpp>
#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/partition/pipedream.hpp>
#include <dnnplan/solve/pipeline_plan/solve.hpp>

#include "../support/checks.hpp"
#include "../support/pipedream_fixtures.hpp"
#include "../support/random_problems.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using dnnplan_test::pipedream_fixture;

dnnplan::pipedream_result wide_run(const dnnplan::layer_graph& graph, dnnplan::pipedream_options o) {
    o.max_states = 0;
    return dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o});
}

bool within_relative(double a, double b, double tolerance) { return a <= b + tolerance * std::abs(b); }

/// The flag sets of the comparison: none, straight, fewer, memory, and memory on a straight
/// pipeline (which may have no partition), the memory at `memory_bytes`.
std::vector<dnnplan::pipedream_options> wide_flag_sets(std::int32_t m, double memory_bytes) {
    std::vector<dnnplan::pipedream_options> sets(5);
    for (auto& o : sets) o.machines = {m};
    sets[1].straight_pipeline = true;
    sets[2].use_fewer_machines = true;
    sets[3].use_memory_constraint = sets[4].use_memory_constraint = true;
    sets[3].memory_bytes = sets[4].memory_bytes = memory_bytes;
    sets[4].straight_pipeline = true;
    return sets;
}

/// Half of the kept layers' activation and parameter bytes: a limit that binds.
double half_model_bytes(const dnnplan::layer_graph& graph) {
    const std::vector<bool> removed = dnnplan::detail::pipedream_removed_layers(graph);
    double bytes = 0.0;
    for (std::size_t i = 0; i < graph.size(); ++i)
        if (!removed[i]) bytes += graph.at(i).activation_bytes + graph.at(i).parameter_bytes;
    return bytes / 2.0;
}

/// A wide plan is a chain of ideals: every kept layer in exactly one stage, no removed layer,
/// every prefix of stages closed under the kept in-neighbours, cut ordinals for state numbers,
/// M machines (at most M with use_fewer_machines), one replica per stage on a straight pipeline.
void check_wide_plan(const dnnplan::layer_graph& graph, const dnnplan::pipedream_plan& plan, const dnnplan::pipedream_options& o) {
    const std::vector<bool> removed = dnnplan::detail::pipedream_removed_layers(graph);
    std::vector<int> stage_of(graph.size(), -1);
    std::int32_t used = 0;
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const auto& st = plan.stages[s];
        CHECK(st.first_state == s);
        CHECK(st.end_state == s + 1);
        CHECK(st.replicas >= 1);
        if (o.straight_pipeline) CHECK(st.replicas == 1);
        REQUIRE_FALSE(st.layers.empty());
        used += st.replicas;
        for (const std::size_t l : st.layers) {
            REQUIRE(l < graph.size());
            CHECK_FALSE(removed[l]);
            CHECK(stage_of[l] == -1);
            stage_of[l] = static_cast<int>(s);
        }
    }
    for (std::size_t l = 0; l < graph.size(); ++l) {
        if (removed[l]) continue;
        CHECK(stage_of[l] >= 0);
        for (const std::size_t p : graph.predecessors(l))
            if (!removed[p]) CHECK(stage_of[p] <= stage_of[l]);  // the prefixes are ideals
    }
    if (o.use_fewer_machines) CHECK(used <= o.machines[0]);
    else CHECK(used == o.machines[0]);
}

/// The state of `states` whose layers are exactly those of stages 0..s of `plan`.
std::size_t state_of_prefix(const dnnplan::antichain_states& states, const dnnplan::pipedream_plan& plan, std::size_t s) {
    std::vector<std::size_t> layers;
    for (std::size_t i = 0; i <= s; ++i) layers.insert(layers.end(), plan.stages[i].layers.begin(), plan.stages[i].layers.end());
    std::sort(layers.begin(), layers.end());
    for (std::size_t j = 0; j < states.states.size(); ++j) {
        std::vector<std::size_t> own = dnnplan::state_layers(states, j);
        std::sort(own.begin(), own.end());
        if (own == layers) return j;
    }
    FAIL("stages 0.." << s << " are no state of PipeDream's");
    return 0;
}

/// The plan's time as PipeDream's recurrence prices its path over the exact solver's states:
/// stage (k, j] on r replicas after the machines before it, the first stage the initialisation.
double reprice(const dnnplan::antichain_states& states, const dnnplan::pipedream_plan& plan, const dnnplan::pipedream_options& o) {
    const dnnplan::pipedream_stage_cost cost(
        states, {.bandwidth_bytes_per_s = o.bandwidths_bytes_per_s.empty() ? 1e9 : o.bandwidths_bytes_per_s[0],
                 .activation_compression_ratio = o.activation_compression_ratio,
                 .memory_bytes = o.use_memory_constraint ? std::optional<double>(o.memory_bytes) : std::nullopt});
    double slowest = 0.0;
    std::int32_t before = 0;
    std::size_t first = 0;
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const std::size_t j = state_of_prefix(states, plan, s);
        slowest = std::max(slowest, cost.stage_time_s({.first_state = first, .end_state = j + 1, .replicas = plan.stages[s].replicas,
                                                       .devices_before = before, .devices_total = o.machines[0]}));
        before += plan.stages[s].replicas;
        first = j + 1;
    }
    return slowest;
}

/// The wide result against the exact one (same options).
void check_against_exact(const dnnplan::layer_graph& graph, const dnnplan::antichain_states& states,
                         const dnnplan::pipedream_options& o, const dnnplan::pipedream_result& exact,
                         const dnnplan::pipedream_result& wide) {
    dnnplan_test::check_result_shape(wide);
    CHECK_FALSE(wide.details.states_enumerated);
    CHECK(wide.limit == dnnplan::search_limit::none);
    if (!exact.plan) {  // PipeDream's None: no real partition has a finite price
        CHECK_FALSE(wide.plan);
        return;
    }
    const double best = exact.plan->time_per_minibatch_s;
    REQUIRE(wide.bound);
    CHECK(within_relative(*wide.bound, best, 1e-12));
    CHECK((*wide.bound == wide.details.lattice.lower_bound_s || wide.status == dnnplan::solve_status::optimal));
    if (!wide.plan) {
        // Only a straight pipeline under a memory limit may leave the packing without a plan where
        // one exists (without one, a stage on all M replicas always fits and the packing finds it).
        CHECK(wide.status == dnnplan::solve_status::no_plan_found);
        CHECK((o.straight_pipeline && o.use_memory_constraint));
        return;
    }
    const double time = wide.plan->time_per_minibatch_s;
    CHECK(*wide.objective_value == time);
    CHECK(within_relative(best, time, 1e-12));
    CHECK(std::abs(reprice(states, *wide.plan, o) - time) <= 1e-12 * time);
    if (wide.status == dnnplan::solve_status::optimal) CHECK(std::abs(time - best) <= 1e-9 * best);
    check_wide_plan(graph, *wide.plan, o);
}

/// A random single-source DAG of n layers: layer i > 0 has one or two inputs among the layers
/// before it, anywhere (so the graph is wide, unlike a chain with shortcuts).
/// `zeros`: the chance that a layer has no compute, and (apart) no activations.
dnnplan::layer_graph wide_random_dag(dnnplan_test::rng& r, std::size_t n, double zeros = 0.0) {
    std::vector<dnnplan::layer> ls;
    std::vector<dnnplan::layer_edge> es;
    for (std::size_t i = 0; i < n; ++i) {
        const bool idle = r.chance(zeros), bare = r.chance(zeros);
        ls.push_back({.id = "l" + std::to_string(i), .description = "Conv2d", .forward_s = idle ? 0.0 : r.uniform(0.0, 0.05),
                      .backward_s = idle ? 0.0 : r.uniform(0.0, 0.08), .activation_bytes = bare ? 0.0 : r.uniform(1e5, 5e8),
                      .parameter_bytes = r.chance(0.3) ? 0.0 : r.uniform(1e5, 8e8)});
        const std::int32_t inputs = i > 0 ? r.integer(1, 2) : 0;
        for (std::int32_t e = 0; e < inputs; ++e) {
            const auto from = static_cast<std::size_t>(r.integer(0, static_cast<std::int32_t>(i) - 1));
            if (std::find(es.begin(), es.end(), dnnplan::layer_edge{from, i}) == es.end()) es.push_back({from, i});
        }
    }
    return dnnplan::layer_graph(std::move(ls), std::move(es));
}

/// The chances of PipeDream's flags in random_wide_options.
struct flag_chances {
    double transfers = 0.0, straight = 0.0, fewer = 0.0, memory = 0.0;
};

/// Random flags for a random wide DAG: 1 to `most_machines` machines, a bandwidth of 1e8 to 1e10,
/// a compression ratio of 0.5 to 4, a memory limit of 5e8 to 6e9 bytes, each flag by its chance.
dnnplan::pipedream_options random_wide_options(dnnplan_test::rng& r, std::int32_t most_machines, flag_chances c) {
    dnnplan::pipedream_options o;
    o.machines = {r.integer(1, most_machines)};
    o.bandwidths_bytes_per_s = {r.uniform(1e8, 1e10)};
    if (r.chance(c.transfers)) o.activation_compression_ratio = r.uniform(0.5, 4.0);
    o.straight_pipeline = r.chance(c.straight);
    o.use_fewer_machines = r.chance(c.fewer);
    if (r.chance(c.memory)) {
        o.use_memory_constraint = true;
        o.memory_bytes = r.uniform(5e8, 6e9);
    }
    return o;
}
/// An ideal of a small graph, found by trying every subset of its kept layers (bit b: kept layer
/// b in order), with its compute and stashed bytes.
struct small_ideal {
    std::uint32_t mask;
    double compute_s, stashed_bytes;
};

/// The kept layers' activation and parameter bytes (what PipeDream's memory check stashes).
double kept_stashed_bytes(const dnnplan::detail::ideal_lattice& lattice) {
    double bytes = 0.0;
    for (const std::size_t l : lattice.kept().order) bytes += lattice.figures().activation[l] + lattice.figures().parameter[l];
    return bytes;
}

/// Every ideal of a graph of at most 20 kept layers, the empty one and the whole graph included.
std::vector<small_ideal> every_ideal(const dnnplan::detail::ideal_lattice& lattice) {
    const auto& f = lattice.figures();
    const auto& order = lattice.kept().order;
    REQUIRE(order.size() <= 20);
    std::vector<small_ideal> out;
    for (std::uint32_t mask = 0; mask < (1U << order.size()); ++mask) {
        auto d = lattice.empty_ideal();
        small_ideal i{mask, 0.0, 0.0};
        for (std::size_t b = 0; b < order.size(); ++b)
            if ((mask >> b) & 1U) {
                dnnplan::detail::add_layer(d, order[b]);
                i.compute_s += f.compute[order[b]];
                i.stashed_bytes += f.parameter[order[b]] + f.activation[order[b]];
            }
        if (lattice.is_ideal(d)) out.push_back(i);
    }
    return out;
}

/// One of PipeDream's own runs with a memory limit, and a ratio: the windows-only bound rejects
/// T* / below_ratio (it admitted it before the change a test names).
struct memory_run {
    const char* name;
    std::int32_t machines;
    double memory_bytes;
    double below_ratio;
};

/// The windows-only relaxation admits each run's exact optimum T* and rejects T* / below_ratio.
void check_windows_only_memory(const std::vector<memory_run>& runs) {
    for (const memory_run& r : runs) {
        const auto graph = pipedream_fixture(r.name);
        dnnplan::pipedream_options o;
        o.machines = {r.machines};
        o.use_memory_constraint = true;
        o.memory_bytes = r.memory_bytes;
        const auto exact = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o});
        INFO(r.name);
        REQUIRE(exact.plan);
        const double t = exact.plan->time_per_minibatch_s;
        const dnnplan::detail::ideal_lattice lattice(graph);
        dnnplan::detail::window_relaxation windows_only(lattice, dnnplan::detail::wide_setting::of(o), 0);
        CHECK(windows_only.admits(t * (1.0 + 1e-12)));
        CHECK_FALSE(windows_only.admits(t / r.below_ratio));
    }
}

}  // namespace

TEST_CASE("the wide path brackets PipeDream's own answers", "[partition][pipedream][wide][published]") {
    // tests/fixtures/pipedream/reference_runs.json: PipeDream's optimizer on its profiles. Every
    // one-level run of a single-source profile, forced onto the wide path: bound <= PipeDream's
    // time <= objective (1e-9: PipeDream's own runs differ by rounding), equal when optimal; no
    // plan where PipeDream has none.
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/pipedream/reference_runs.json");
    REQUIRE(in);
    const nlohmann::json reference = nlohmann::json::parse(in);
    std::map<std::string, dnnplan::layer_graph> graphs;
    std::int64_t bracketed = 0, met = 0, transfers = 0, transfers_tight = 0, plans_tight = 0;
    for (const auto& run : reference.at("runs")) {
        const std::string name = run.at("profile");
        if (name == "gnmt" || name == "gnmt_large") continue;  // several sources: no wide path
        const auto o = dnnplan_test::pipedream_options_from_args(run.at("args").get<std::vector<std::string>>());
        if (o.machines.size() != 1) continue;  // several levels: no wide path
        if (!graphs.contains(name)) graphs.emplace(name, pipedream_fixture(name));
        INFO(name << " " << run.at("args").dump());
        const auto wide = wide_run(graphs.at(name), o);
        dnnplan_test::check_result_shape(wide);
        const auto& expected = run.at("time_per_minibatch_s");
        if (expected.is_null()) {
            CHECK_FALSE(wide.plan);
            continue;
        }
        const double pd = expected.get<double>();
        REQUIRE(wide.bound);
        CHECK(*wide.bound <= pd * (1.0 + 1e-9));
        if (o.activation_compression_ratio) {  // the window bound sees the transfers
            ++transfers;
            transfers_tight += *wide.bound >= pd * (1.0 - 0.005) ? 1 : 0;
        }
        if (wide.plan) {
            CHECK(*wide.objective_value >= pd * (1.0 - 1e-9));
            plans_tight += *wide.objective_value <= pd * 1.005 ? 1 : 0;
            if (wide.status == dnnplan::solve_status::optimal) {
                CHECK(std::abs(*wide.objective_value - pd) <= 1e-9 * pd);
                ++met;
            }
        } else {
            CHECK((o.straight_pipeline && o.use_memory_constraint));  // the packing's one miss
        }
        ++bracketed;
    }
    CHECK(bracketed >= 600);  // 610 one-level runs of single-source profiles
    // 351 of 610 when this was written; 497 before the window bound saw transfers and memory, and
    // the packing tried the replica counts where a stage's memory copies drop; 532 since.
    CHECK(met >= 520);
    // With transfers the bound is within 0.5 % of PipeDream's answer in 124 of 126 runs (80 before
    // it saw them).
    CHECK(transfers >= 120);
    CHECK(transfers_tight >= transfers - 4);
    // The plan within 0.5 % of PipeDream's answer: 606 of 610 when this was written, 603 before the
    // packing, under the memory check, kept machine counts that do no more than fewer machines
    // (alexnet -n 32 -s 6.8e8 had only the plan of one stage, 6.7 times PipeDream's time).
    CHECK(plans_tight >= 604);
}

TEST_CASE("on random wide DAGs the wide path bounds the exact answer", "[partition][pipedream][wide][oracle]") {
    std::int64_t compared = 0, optimal = 0;
    for (std::uint64_t seed = 0; seed < 300; ++seed) {
        dnnplan_test::rng r(seed);
        const auto graph = wide_random_dag(r, static_cast<std::size_t>(r.integer(4, 18)));
        const auto states = dnnplan::try_build_antichain_states(graph, 3000);
        if (!states || states->chain) continue;
        const dnnplan::pipedream_options o = random_wide_options(r, 12, {.transfers = 0.3, .straight = 0.3, .fewer = 0.4, .memory = 0.3});
        INFO("seed " << seed << ", " << graph.size() << " layers, " << states->states.size() << " states, " << o.machines[0]
                     << " machines, straight " << o.straight_pipeline << ", fewer " << o.use_fewer_machines << ", memory "
                     << o.use_memory_constraint << ", ratio " << o.activation_compression_ratio.value_or(0.0));
        const auto exact = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o}, *states);
        const auto wide = wide_run(graph, o);
        check_against_exact(graph, *states, o, exact, wide);
        ++compared;
        optimal += wide.status == dnnplan::solve_status::optimal ? 1 : 0;
    }
    CHECK(compared >= 200);
    CHECK(optimal >= 20);
}

TEST_CASE("on random wide DAGs the windows alone admit the exact answer", "[partition][pipedream][wide][oracle]") {
    // The windows-only form of the window bound (what the nasnets use: the transfers through vertex
    // cuts, pipedream_lattice_cuts.hpp; the memory through a knapsack of a stage's compute,
    // pipedream_lattice_knapsack.hpp) admits the exact optimum T*, also with layers of no compute
    // or no activations; and a graph with no compute at all still gets a plan.
    std::int64_t compared = 0;
    for (std::uint64_t seed = 0; seed < 300; ++seed) {
        dnnplan_test::rng r(seed + 1000);
        const auto graph = wide_random_dag(r, static_cast<std::size_t>(r.integer(4, 16)), 0.25);
        const auto states = dnnplan::try_build_antichain_states(graph, 3000);
        if (!states || states->chain) continue;
        const dnnplan::pipedream_options o = random_wide_options(r, 10, {.transfers = 0.6, .straight = 0.2, .fewer = 0.3, .memory = 0.6});
        const auto exact = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o}, *states);
        if (!exact.plan) continue;
        INFO("seed " << seed + 1000 << ", " << graph.size() << " layers, " << o.machines[0] << " machines, straight "
                     << o.straight_pipeline << ", fewer " << o.use_fewer_machines << ", memory " << o.use_memory_constraint
                     << ", ratio " << o.activation_compression_ratio.value_or(0.0));
        const dnnplan::detail::ideal_lattice lattice(graph);
        const auto setting = dnnplan::detail::wide_setting::of(o);
        const double t = exact.plan->time_per_minibatch_s * (1.0 + 1e-12);
        dnnplan::detail::window_relaxation windows_only(lattice, setting, 0), exact_points(lattice, setting);
        CHECK(windows_only.admits(t));
        // LB1x (pipedream_lattice_sync.hpp) with the least cut output of either form.
        for (const auto* form : {&windows_only, &exact_points})
            CHECK(dnnplan::detail::aggregate_sync_bound(lattice, setting, form->cut_output_steps()).admits(t));
        ++compared;
    }
    CHECK(compared >= 150);
    std::vector<dnnplan::layer> idle;
    for (int i = 0; i < 3; ++i)
        idle.push_back({.id = "z" + std::to_string(i), .description = "ReLU", .forward_s = 0.0, .backward_s = 0.0,
                        .activation_bytes = 1e6, .parameter_bytes = 0.0});
    dnnplan::pipedream_options o;
    o.machines = {2};
    o.activation_compression_ratio = 1.0;
    const auto none = wide_run(dnnplan::layer_graph(std::move(idle), {{0, 1}, {0, 2}}), o);
    dnnplan_test::check_result_shape(none);
    CHECK(none.plan);
}

TEST_CASE("the stages' synchronisation in aggregate bounds the exact answer, above the window bound",
          "[partition][pipedream][wide][oracle]") {
    // LB1x (pipedream_lattice_sync.hpp) with the windows' least outputs, on random wide DAGs with
    // transfers over two decades of bandwidth: never above the exact optimum, and above the
    // window bound on many (280 of 582 when this was written, at 600 seeds).
    std::int64_t compared = 0, above = 0;
    for (std::uint64_t seed = 0; seed < 300; ++seed) {
        dnnplan_test::rng r(seed + 5000);
        const auto graph = wide_random_dag(r, static_cast<std::size_t>(r.integer(4, 16)), 0.1);
        const auto states = dnnplan::try_build_antichain_states(graph, 3000);
        if (!states || states->chain) continue;
        dnnplan::pipedream_options o = random_wide_options(r, 16, {.transfers = 1.0, .straight = 0.0, .fewer = 0.3, .memory = 0.0});
        o.bandwidths_bytes_per_s = {r.uniform(1e7, 1e9)};
        const auto exact = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o}, *states);
        if (!exact.plan) continue;
        INFO("seed " << seed + 5000 << ", " << graph.size() << " layers, " << o.machines[0] << " machines, bandwidth "
                     << o.bandwidths_bytes_per_s[0]);
        const dnnplan::detail::ideal_lattice lattice(graph);
        const auto setting = dnnplan::detail::wide_setting::of(o);
        dnnplan::detail::window_relaxation windows(lattice, setting, 0);
        const dnnplan::detail::aggregate_sync_bound sync(lattice, setting, windows.cut_output_steps());
        std::int64_t tests = 0;
        const double hi = lattice.total_compute_s();
        const double bound = dnnplan::detail::largest_failing_threshold(1e-3 * hi, hi, [&](double t) { return sync.admits(t); }, tests);
        const double window = dnnplan::detail::largest_failing_threshold(1e-3 * hi, hi, [&](double t) { return windows.admits(t); }, tests);
        CHECK(bound <= exact.plan->time_per_minibatch_s * (1.0 + 1e-12));
        above += bound > window * (1.0 + 1e-6) ? 1 : 0;
        ++compared;
    }
    CHECK(compared >= 250);
    CHECK(above >= compared / 4);
}

TEST_CASE("the stages' memory together bounds the exact answer, above the window bound", "[partition][pipedream][wide][oracle]") {
    // LBm (pipedream_lattice_memory.hpp) on random wide DAGs with a memory limit of 3 % to 100 % of
    // their stashed bytes, with and without use_fewer_machines, straight pipelines and transfers:
    // never above the exact optimum, and above the window bound on some.
    std::int64_t compared = 0, above = 0;
    for (std::uint64_t seed = 0; seed < 400; ++seed) {
        dnnplan_test::rng r(seed + 7000);
        const auto graph = wide_random_dag(r, static_cast<std::size_t>(r.integer(4, 16)), 0.1);
        const auto states = dnnplan::try_build_antichain_states(graph, 3000);
        if (!states || states->chain) continue;
        dnnplan::pipedream_options o = random_wide_options(r, 24, {.transfers = 0.3, .straight = 0.2, .fewer = 0.4, .memory = 1.0});
        const dnnplan::detail::ideal_lattice lattice(graph);
        const double stashed = kept_stashed_bytes(lattice);
        o.memory_bytes = stashed * r.uniform(0.03, 1.0);
        const auto exact = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o}, *states);
        if (!exact.plan) continue;
        INFO("seed " << seed + 7000 << ", " << graph.size() << " layers, " << o.machines[0] << " machines, straight "
                     << o.straight_pipeline << ", fewer " << o.use_fewer_machines << ", memory " << o.memory_bytes << " of " << stashed);
        const auto setting = dnnplan::detail::wide_setting::of(o);
        // With the exact points, and with the windows alone (the closures' reach, as on the nasnets).
        dnnplan::detail::window_relaxation windows(lattice, setting), windows_only(lattice, setting, 0);
        const dnnplan::detail::prefix_memory_bound memory(lattice, setting, windows), memory_only(lattice, setting, windows_only);
        std::int64_t tests = 0;
        const double hi = lattice.total_compute_s();
        const auto bisect = [&](auto& form) {
            return dnnplan::detail::largest_failing_threshold(1e-3 * hi, hi, [&](double t) { return form.admits(t); }, tests);
        };
        const double bound = bisect(memory), window = bisect(windows);
        CHECK(bound <= exact.plan->time_per_minibatch_s * (1.0 + 1e-12));
        CHECK(bisect(memory_only) <= exact.plan->time_per_minibatch_s * (1.0 + 1e-12));
        above += bound > window * (1.0 + 1e-6) ? 1 : 0;
        ++compared;
    }
    CHECK(compared >= 300);
    CHECK(above >= 40);  // 57 of 329 when this was written
    // The single-source fixtures with a quarter and an eighth of their kept bytes, with and without
    // use_fewer_machines: the whole wide path's bound never above the exact answer.
    std::int64_t fixtures = 0, lifted = 0;
    for (const char* name : {"vgg16", "alexnet", "resnet18", "resnet50", "resnext50", "squeezenet1_0", "resnet101", "resnext101", "densenet121"}) {
        const auto graph = pipedream_fixture(name);
        const auto states = dnnplan::build_antichain_states(graph);
        for (const std::int32_t m : {2, 4, 8, 16})
            for (const double share : {0.25, 0.125})
                for (const bool fewer : {false, true}) {
                    dnnplan::pipedream_options o;
                    o.machines = {m};
                    o.use_fewer_machines = fewer;
                    o.use_memory_constraint = true;
                    o.memory_bytes = 2.0 * half_model_bytes(graph) * share;
                    INFO(name << " on " << m << " machines, fewer " << fewer << ", memory " << share);
                    const auto exact = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o}, states);
                    const auto wide = wide_run(graph, o);
                    check_against_exact(graph, states, o, exact, wide);
                    ++fixtures;
                    lifted += wide.details.lattice.memory_bound_s > wide.details.lattice.window_bound_s * (1.0 + 1e-6) ? 1 : 0;
                }
    }
    CHECK(fixtures == 9 * 4 * 2 * 2);
    CHECK(lifted >= 50);  // 72 of 144 when this was written
}

TEST_CASE("the wide path bounds the exact answer on every single-source fixture", "[partition][pipedream][wide][oracle]") {
    std::int64_t compared = 0, optimal = 0, infeasible = 0;
    for (const char* name : {"vgg16", "alexnet", "resnet18", "resnet50", "resnext50", "squeezenet1_0", "resnet101", "resnext101", "densenet121"}) {
        const auto graph = pipedream_fixture(name);
        const auto states = dnnplan::build_antichain_states(graph);
        REQUIRE_FALSE(dnnplan::try_build_antichain_states(graph, 0));  // a branching graph: the wide path can be forced
        for (const std::int32_t m : {1, 2, 3, 4, 8, 16})
            for (const auto& o : wide_flag_sets(m, half_model_bytes(graph))) {
                INFO(name << " on " << m << " machines, straight " << o.straight_pipeline << ", fewer " << o.use_fewer_machines
                          << ", memory " << o.use_memory_constraint);
                const auto exact = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o}, states);
                const auto wide = wide_run(graph, o);
                check_against_exact(graph, states, o, exact, wide);
                ++compared;
                optimal += wide.status == dnnplan::solve_status::optimal ? 1 : 0;
                infeasible += exact.plan ? 0 : 1;
            }
    }
    CHECK(compared == 9 * 6 * 5);
    // The bounds meet on a good share of the runs (one machine, straight pipelines the
    // windows close), and some straight runs have no partition at all.
    CHECK(optimal >= compared / 4);
    CHECK(infeasible > 0);
}

TEST_CASE("the window relaxation admits every threshold a partition meets, with and without exact points",
          "[partition][pipedream][wide][oracle]") {
    // The relaxation behind the nasnets' bounds (windows only: too many ideals to enumerate) is
    // checked where the exact answer is known: at the exact optimum T*, both forms must admit T*
    // (a real partition within T* maps to an abstract one), so the bound never passes T*. And no
    // ideal's compute sum lies inside a forbidden window.
    std::int64_t checked = 0;
    for (const char* name : {"vgg16", "alexnet", "resnet18", "resnet50", "squeezenet1_0", "densenet121"}) {
        const auto graph = pipedream_fixture(name);
        const auto states = dnnplan::build_antichain_states(graph);
        const dnnplan::detail::ideal_lattice lattice(graph);
        const auto windows = dnnplan::detail::forbidden_compute_windows(lattice);
        const auto points = dnnplan::detail::ideal_compute_enumerator(lattice, 1'000'000).points();
        REQUIRE(points);
        // The wide path reports the ideals it counted: PipeDream's state count.
        dnnplan::pipedream_options counted;
        counted.machines = {4};
        CHECK(wide_run(graph, counted).details.num_states == states.states.size());
        for (const double c : points->compute_s)
            for (const auto& [lo, hi] : windows) CHECK_FALSE((lo < c && c < hi));
        for (const std::int32_t m : {2, 4, 8, 16})
            for (const bool straight : {false, true})
                for (const int variant : {0, 1, 2, 3}) {  // plain; transfers; memory; both
                    dnnplan::pipedream_options o;
                    o.machines = {m};
                    o.straight_pipeline = straight;
                    if (variant % 2 == 1) o.activation_compression_ratio = 1.0;
                    if (variant >= 2) o.use_memory_constraint = true, o.memory_bytes = half_model_bytes(graph) / m;
                    const auto exact = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o}, states);
                    if (!exact.plan) continue;
                    INFO(name << " on " << m << " machines, straight " << straight << ", variant " << variant);
                    const double t = exact.plan->time_per_minibatch_s * (1.0 + 1e-12);
                    const auto setting = dnnplan::detail::wide_setting::of(o);
                    dnnplan::detail::window_relaxation windows_only(lattice, setting, 0), exact_points(lattice, setting);
                    CHECK_FALSE(windows_only.has_exact_points());
                    CHECK(exact_points.has_exact_points());
                    CHECK(windows_only.admits(t));
                    CHECK(exact_points.admits(t));
                    // Below C / M no relaxation of M machines reaches the end (the test is not vacuous).
                    const double below = 0.99 * lattice.total_compute_s() / static_cast<double>(m);
                    CHECK_FALSE(windows_only.admits(below));
                    CHECK_FALSE(exact_points.admits(below));
                    ++checked;
                }
    }
    CHECK(checked >= 150);
}

TEST_CASE("the windows' output bound is at most every ideal's output", "[partition][pipedream][wide][oracle]") {
    // pipedream_lattice_cuts.hpp against brute force: every nonempty ideal of a random wide DAG
    // but the whole graph, PipeDream's out of its state (dead tensors included) is at least the
    // bound at its compute.
    std::int64_t ideals = 0, positive = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        dnnplan_test::rng r(seed);
        const auto graph = wide_random_dag(r, static_cast<std::size_t>(r.integer(4, 14)));
        const dnnplan::detail::ideal_lattice lattice(graph);
        const auto& order = lattice.kept().order;
        const dnnplan::detail::window_output_bounds bounds(lattice, 1e-12 * lattice.total_compute_s());
        for (std::uint32_t mask = 1; mask < (1U << order.size()); ++mask) {
            auto d = lattice.empty_ideal();
            for (std::size_t i = 0; i < order.size(); ++i)
                if ((mask >> i) & 1U) dnnplan::detail::add_layer(d, order[i]);
            // The whole graph's output is never sent (the last stage has no output transfer).
            if (!lattice.is_ideal(d) || d == lattice.full_ideal()) continue;
            const auto st = lattice.state_of(d);
            INFO("seed " << seed << ", ideal " << mask << ", compute " << st.compute_s << ", out " << st.output_activation_bytes);
            CHECK(bounds.last_position(st.compute_s, st.compute_s, st.output_activation_bytes).has_value());
            ++ideals;
            positive += bounds.last_position(st.compute_s, st.compute_s, 0.0) ? 0 : 1;
        }
    }
    CHECK(ideals > 10000);
    CHECK(positive > ideals / 10);  // not vacuous: the bound is above 0 at many ideals
}

TEST_CASE("with the windows alone the bound sees transfers through vertex cuts, below the exact answer",
          "[partition][pipedream][wide][oracle]") {
    // pipedream_lattice_cuts.hpp: without exact points the window bound once ignored transfers
    // (its bound with a ratio was the bound without one). Now it must rise above that on some
    // runs with transfers, and never above the exact optimum.
    std::int64_t checked = 0, higher = 0;
    for (const char* name : {"resnet18", "resnet50", "resnext50", "squeezenet1_0", "densenet121"}) {
        const auto graph = pipedream_fixture(name);
        const auto states = dnnplan::build_antichain_states(graph);
        const dnnplan::detail::ideal_lattice lattice(graph);
        for (const std::int32_t m : {2, 4, 8, 16})
            for (const double bandwidth : {1e9, 1e8}) {
                dnnplan::pipedream_options o;
                o.machines = {m};
                o.bandwidths_bytes_per_s = {bandwidth};
                o.activation_compression_ratio = 1.0;
                const auto exact = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o}, states);
                REQUIRE(exact.plan);
                INFO(name << " on " << m << " machines, bandwidth " << bandwidth);
                auto setting = dnnplan::detail::wide_setting::of(o);
                std::int64_t tests = 0;
                const double hi = lattice.total_compute_s();
                dnnplan::detail::window_relaxation with(lattice, setting, 0);
                const double bound = dnnplan::detail::largest_failing_threshold(0.01 * hi, hi, [&](double t) { return with.admits(t); }, tests);
                const dnnplan::detail::aggregate_sync_bound sync(lattice, setting, with.cut_output_steps());
                const double aggregate = dnnplan::detail::largest_failing_threshold(0.01 * hi, hi, [&](double t) { return sync.admits(t); }, tests);
                CHECK(aggregate <= exact.plan->time_per_minibatch_s * (1.0 + 1e-12));
                setting.activation_compression_ratio.reset();
                dnnplan::detail::window_relaxation without(lattice, setting, 0);
                const double before = dnnplan::detail::largest_failing_threshold(0.01 * hi, hi, [&](double t) { return without.admits(t); }, tests);
                CHECK(bound <= exact.plan->time_per_minibatch_s * (1.0 + 1e-12));
                CHECK(bound >= before);
                higher += bound > before * (1.0 + 1e-6) ? 1 : 0;
                ++checked;
            }
    }
    CHECK(checked == 5 * 4 * 2);
    CHECK(higher >= 30);  // 39 of 40 when this was written
}

TEST_CASE("the windows alone see a stage's memory through its compute", "[partition][pipedream][wide][oracle]") {
    // PipeDream's own runs (reference_runs.json) where the windows-only bound was far below the
    // exact answer T*: alexnet -n 2 -s 8.6e7, where the first stage could end within the windows'
    // slack of 0 and so hold nothing (bound T* / 3.36), and resnet50 -n 32 -s 9.7e9, where only the
    // forced layers' bytes were counted (bound T* / 1.197; the knapsack of the stage's compute,
    // pipedream_lattice_knapsack.hpp, lifts it to T* / 1.156). Both still admit T*.
    check_windows_only_memory({{"alexnet", 2, 8.6e7, 2.0}, {"resnet50", 32, 9.7e9, 1.17}});
}

TEST_CASE("with the windows alone the memory check keeps precedence", "[partition][pipedream][wide][oracle]") {
    // PipeDream's own runs (reference_runs.json) where the windows-only bound with the knapsack of
    // a stage's compute alone was below T* by the ratio given: resnet50 -n 8 -s 9.7e9 (T* / 1.0625)
    // and resnext50 -n 32 -s 1.2e10 (T* / 1.098). The Lagrangian closures
    // (pipedream_lattice_closures.hpp) reject T* / 1.03 and T* / 1.05 there, and still admit T*.
    check_windows_only_memory({{"resnet50", 8, 9.7e9, 1.03}, {"resnext50", 32, 1.2e10, 1.05}});
}

TEST_CASE("the windows' closure bound on a stage's stashed bytes is at most every stage's", "[partition][pipedream][wide][oracle]") {
    // pipedream_lattice_closures.hpp against brute force: for every pair of ideals I within I' of a
    // random wide DAG (layers of no compute or no activations too), the Lagrangian bound for a
    // stage from a cut at or before C(I) to one at C(I') is at most S(I' \ I), and the query
    // passes C(I') within that budget.
    std::int64_t pairs = 0, positive = 0;
    for (std::uint64_t seed = 0; seed < 80; ++seed) {
        dnnplan_test::rng r(seed + 2000);
        const auto graph = wide_random_dag(r, static_cast<std::size_t>(r.integer(4, 10)), 0.15);
        const dnnplan::detail::ideal_lattice lattice(graph);
        const dnnplan::detail::stashed_closure_bounds bounds(lattice, 1e-12 * lattice.total_compute_s());
        const std::vector<small_ideal> ideals = every_ideal(lattice);
        const double total_bytes = kept_stashed_bytes(lattice);
        for (const small_ideal& a : ideals)
            for (const small_ideal& b : ideals) {
                if ((a.mask & b.mask) != a.mask || a.mask == b.mask) continue;
                const double stage = b.stashed_bytes - a.stashed_bytes, bound = bounds.least_stashed_bytes(a.compute_s, b.compute_s);
                INFO("seed " << seed + 2000 << ", ideals " << a.mask << " within " << b.mask << ", bytes " << stage << ", bound " << bound);
                CHECK(bound <= stage + 1e-9 * total_bytes);
                if (b.compute_s > a.compute_s)
                    CHECK(bounds.farthest(a.compute_s, b.compute_s, stage + 1e-9 * total_bytes) >= b.compute_s);
                ++pairs;
                positive += bound > 1e-6 * total_bytes ? 1 : 0;
            }
    }
    CHECK(pairs > 10000);
    CHECK(positive > pairs / 10);  // not vacuous
    // Over its cap of free layers the bound gives up: no restriction.
    dnnplan_test::rng r(2000);
    const auto graph = wide_random_dag(r, 8);
    const dnnplan::detail::ideal_lattice lattice(graph);
    const dnnplan::detail::stashed_closure_bounds none(lattice, 0.0, 3, 0);
    CHECK(none.steps() == 0);
    CHECK(none.least_stashed_bytes(0.0, lattice.total_compute_s()) == 0.0);
    CHECK(none.farthest(0.0, lattice.total_compute_s(), 0.0) == lattice.total_compute_s());
}

TEST_CASE("a single-source graph's states are its nonempty ideals", "[partition][pipedream][wide]") {
    // The design note's proposition (section 1.3), counted: the reverse search over the ideal
    // lattice finds as many nonempty ideals as PipeDream's construction finds states.
    for (const char* name : {"vgg16", "alexnet", "resnet18", "resnet50", "resnext50", "squeezenet1_0", "resnet101", "resnext101",
                             "densenet121"}) {
        const auto graph = pipedream_fixture(name);
        const dnnplan::detail::ideal_lattice lattice(graph);
        const dnnplan::detail::ideal_compute_enumerator ideals(lattice, 1'000'000);
        INFO(name);
        REQUIRE(ideals.complete());
        CHECK(ideals.ideal_count() == dnnplan::build_antichain_states(graph).states.size());
    }
    // inception_v3: 221,564 states (the fixtures' README; PipeDream takes 75 s to enumerate them).
    const auto inception = pipedream_fixture("inception_v3");
    const dnnplan::detail::ideal_lattice lattice(inception);
    const dnnplan::detail::ideal_compute_enumerator ideals(lattice, 1'000'000);
    CHECK(ideals.complete());
    CHECK(ideals.ideal_count() == 221'564);
    CHECK_FALSE(dnnplan::detail::ideal_compute_enumerator(lattice, 1000).complete());
}

TEST_CASE("the enumeration finds the ideal of most compute within each stash cap", "[partition][pipedream][wide][oracle]") {
    // ideal_compute_enumerator's most_compute_within (the first stages the packing starts from
    // with exact points) against every subset of the kept layers of small random wide DAGs: the
    // most compute of a proper ideal within each cap, and an ideal within it of that compute.
    std::int64_t caps = 0, found = 0;
    for (std::uint64_t seed = 0; seed < 60; ++seed) {
        dnnplan_test::rng r(seed + 9000);
        const auto graph = wide_random_dag(r, static_cast<std::size_t>(r.integer(4, 11)), 0.15);
        const dnnplan::detail::ideal_lattice lattice(graph);
        const auto& f = lattice.figures();
        const auto& order = lattice.kept().order;
        const double total_bytes = kept_stashed_bytes(lattice);
        const std::vector<double> bytes{0.0, 0.1 * total_bytes, 0.3 * total_bytes, 0.6 * total_bytes, 0.95 * total_bytes};
        const dnnplan::detail::ideal_compute_enumerator ideals(lattice, 100'000, bytes);
        REQUIRE(ideals.most_compute_within().size() == bytes.size());
        const std::vector<small_ideal> every = every_ideal(lattice);
        for (std::size_t j = 0; j < bytes.size(); ++j) {
            double most = -1.0;  // over the nonempty proper ideals within bytes[j]
            for (const small_ideal& i : every)
                if (i.mask != 0 && i.mask + 1 != (1U << order.size()) && i.stashed_bytes <= bytes[j]) most = std::max(most, i.compute_s);
            const auto& [compute, ideal] = ideals.most_compute_within()[j];
            INFO("seed " << seed + 9000 << ", cap " << j);
            CHECK(std::abs(compute - most) <= 1e-12 * (1.0 + most));
            if (compute >= 0.0) {
                REQUIRE(lattice.is_ideal(ideal));
                double c = 0.0, stashed = 0.0;
                dnnplan::detail::for_each_layer(ideal, [&](std::size_t l) { c += f.compute[l], stashed += f.parameter[l] + f.activation[l]; });
                CHECK(stashed <= bytes[j] * (1.0 + 1e-12));
                CHECK(std::abs(c - compute) <= 1e-12 * (1.0 + c));
                ++found;
            }
            ++caps;
        }
    }
    CHECK(caps == 60 * 5);
    CHECK(found > caps / 2);
}

TEST_CASE("graphs within max_states keep the exact path", "[partition][pipedream][wide]") {
    const auto graph = pipedream_fixture("resnet50");
    dnnplan::pipedream_options o;
    o.machines = {4};
    const auto routed = dnnplan::pipedream_partition(graph, o);
    const auto direct = dnnplan::pipedream_partition(graph, dnnplan::build_antichain_states(graph), o);
    REQUIRE(routed.plan);
    CHECK(routed.details.states_enumerated);
    CHECK(routed.details.num_states == 240);
    CHECK(routed.plan->time_per_minibatch_s == direct.plan->time_per_minibatch_s);
    CHECK(routed.details.work == direct.details.work);
    CHECK(routed.details.lattice == dnnplan::pipedream_lattice_details{});

    // A chain has no state limit: max_states = 0 still answers exactly.
    o.max_states = 0;
    std::string text;
    for (const char* id : {"node1", "node2", "node3", "node4", "node5"}) text += dnnplan_test::pipedream_node(id);
    text += "\tnode1 -- node2\n\tnode2 -- node3\n\tnode3 -- node4\n\tnode4 -- node5\n";
    const auto chain = dnnplan::pipedream_partition(dnnplan::parse_pipedream_graph(text), o);
    CHECK(chain.details.states_enumerated);
    CHECK(chain.status == dnnplan::solve_status::optimal);
}

TEST_CASE("graphs over max_states: statuses, not refusals, where the wide path cannot go", "[partition][pipedream][wide][errors]") {
    const auto graph = pipedream_fixture("resnet50");
    CHECK_FALSE(dnnplan::try_build_antichain_states(graph, 239));
    CHECK(dnnplan::try_build_antichain_states(graph, 240));
    CHECK(dnnplan_test::field_of([&] { return dnnplan::build_antichain_states(graph, 239); }) == "graph");

    dnnplan::pipedream_options levels;
    levels.machines = {2, 2};
    levels.max_states = 100;
    const auto hierarchy = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = levels});
    dnnplan_test::check_result_shape(hierarchy);
    CHECK(hierarchy.status == dnnplan::solve_status::no_plan_found);
    CHECK(dnnplan_test::contains(hierarchy.reason, "options.machines"));
    CHECK_FALSE(hierarchy.details.states_enumerated);

    // Several sources (gnmt's): the ideals are not PipeDream's states; the refusal stays.
    dnnplan::pipedream_options one;
    one.machines = {4};
    one.max_states = 10;
    const auto gnmt = pipedream_fixture("gnmt");
    CHECK(dnnplan_test::field_of([&] { return dnnplan::pipedream_partition(gnmt, one); }) == "graph");
    CHECK(dnnplan_test::field_of([&] { return dnnplan::solve(dnnplan::pipedream_request{.graph = gnmt, .options = one}); }) == "graph");

    // max_states is bounded (the exact path's table takes max_states^2 bits).
    dnnplan::pipedream_options huge;
    huge.machines = {4};
    huge.max_states = dnnplan::pipedream_options::max_antichain_states_limit + 1;
    CHECK(dnnplan_test::field_of([&] { return dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = huge}); }) ==
          "options.max_states");

    // More kept layers than the wide path takes (a chain of 5,001 layers and one branch).
    std::vector<dnnplan::layer> layers;
    std::vector<dnnplan::layer_edge> edges;
    for (std::size_t i = 0; i <= dnnplan::detail::wide_max_kept_layers + 1; ++i) {
        layers.push_back({.id = "l" + std::to_string(i), .description = "Conv2d", .forward_s = 0.001, .backward_s = 0.002,
                          .activation_bytes = 1e5, .parameter_bytes = 1e5});
        if (i > 0) edges.push_back({i == dnnplan::detail::wide_max_kept_layers + 1 ? 0 : i - 1, i});
    }
    const dnnplan::layer_graph long_graph(std::move(layers), std::move(edges));
    dnnplan::pipedream_options wide_long;
    wide_long.machines = {4};
    wide_long.max_states = 0;
    const auto too_long = dnnplan::solve(dnnplan::pipedream_request{.graph = long_graph, .options = wide_long});
    dnnplan_test::check_result_shape(too_long);
    CHECK(too_long.status == dnnplan::solve_status::no_plan_found);
    CHECK(dnnplan_test::contains(too_long.reason, "at most 5000 layers"));
    REQUIRE(too_long.bound);
    CHECK(*too_long.bound > 0.0);
}

TEST_CASE("a budget stops the wide path with a status", "[partition][pipedream][wide]") {
    const auto graph = pipedream_fixture("densenet121");
    dnnplan::pipedream_options o;
    o.machines = {8};
    o.budget.max_nodes = 100;  // over M^2 = 64: started, and stopped by its fills
    const auto r = wide_run(graph, o);
    dnnplan_test::check_result_shape(r);
    CHECK(r.limit == dnnplan::search_limit::nodes);
    CHECK(r.status != dnnplan::solve_status::optimal);
    REQUIRE(r.bound);
    if (r.plan) CHECK(*r.bound <= *r.objective_value);
    CHECK(r.counters.nodes <= o.budget.max_nodes);  // the fills, never past the budget

    // UB3's state pairs count against max_evaluations.
    dnnplan::pipedream_options few;
    few.machines = {8};
    few.budget.max_evaluations = 10;
    const auto stopped = wide_run(pipedream_fixture("resnet50"), few);
    dnnplan_test::check_result_shape(stopped);
    CHECK(stopped.counters.evaluations <= 10);
    CHECK((stopped.status == dnnplan::solve_status::optimal || stopped.limit == dnnplan::search_limit::evaluations));

    // Machines beyond the budget's measure M^2 (its DPs run over the machines): not started.
    o.machines = {300'000};
    o.budget.max_nodes = 10'000'000;
    const auto many = wide_run(graph, o);
    dnnplan_test::check_result_shape(many);
    CHECK(many.status == dnnplan::solve_status::no_plan_found);
    CHECK(many.limit == dnnplan::search_limit::nodes);
    CHECK(dnnplan_test::contains(many.reason, "options.budget.max_nodes"));
    REQUIRE(many.bound);  // LB0 still
    CHECK(*many.bound > 0.0);
}

TEST_CASE("a budget that stops the recurrence hands over to the wide path", "[partition][pipedream][wide][budget]") {
    // One level of a single-source graph within max_states: the exact recurrence stopped by a
    // budget leaves what is left of it to the wide path, whose plan and bound bracket the exact
    // answer; the counters stay within the budget and the reason names both.
    const auto graph = pipedream_fixture("resnet50");
    dnnplan::pipedream_options o;
    o.machines = {8};
    const auto exact = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = o});
    REQUIRE(exact.status == dnnplan::solve_status::optimal);
    REQUIRE(exact.details.states_enumerated);
    const double answer = *exact.objective_value;
    const auto brackets = [&](const dnnplan::pipedream_result& r) {
        dnnplan_test::check_result_shape(r);
        REQUIRE(r.plan);
        REQUIRE(r.bound);
        CHECK(*r.bound <= answer * (1.0 + 1e-12));
        CHECK(*r.objective_value >= answer * (1.0 - 1e-12));
        CHECK_FALSE(r.details.states_enumerated);  // the wide path's plan: cut ordinals
        CHECK(r.details.num_states == exact.details.num_states);
        if (r.status != dnnplan::solve_status::optimal) {
            CHECK(r.status == dnnplan::solve_status::feasible);
            CHECK(r.limit != dnnplan::search_limit::none);
            CHECK(dnnplan_test::contains(r.reason, "the wide path"));
        }
    };
    // The tables over max_nodes: the recurrence does not start; the wide path has the whole budget.
    dnnplan::pipedream_options tables = o;
    tables.budget.max_nodes = 1000;
    const auto handed = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = tables});
    brackets(handed);
    CHECK(handed.counters.nodes <= 1000);
    // Stopped at the evaluation budget: nothing left for UB3, the packing's fills only.
    dnnplan::pipedream_options evaluations = o;
    evaluations.budget.max_evaluations = 2000;
    const auto stopped = dnnplan::solve(dnnplan::pipedream_request{.graph = graph, .options = evaluations});
    brackets(stopped);
    CHECK(stopped.counters.evaluations == 2000);  // the recurrence's, none of UB3's
    CHECK(stopped.details.lattice.state_pairs == 0);
    // pipedream_partition(graph, options) hands over the same way; with prebuilt states it does not.
    CHECK(dnnplan::pipedream_partition(graph, evaluations).objective_value == stopped.objective_value);
    const auto prebuilt = dnnplan::pipedream_partition(graph, dnnplan::build_antichain_states(graph), evaluations);
    CHECK(prebuilt.status == dnnplan::solve_status::no_plan_found);
    CHECK_FALSE(prebuilt.plan);
}

TEST_CASE("the wide fixtures: valid plans, repeatable, the prototype's optima", "[partition][pipedream][wide][published]") {
    // inception_v3 on straight pipelines: 0.177874 s on 4 machines, 0.040494 s (its largest
    // layer) on 64, both optimal in the design note's prototype (section 4).
    const auto inception = pipedream_fixture("inception_v3");
    CHECK_FALSE(dnnplan::try_build_antichain_states(inception));
    for (const auto& [m, expected] : {std::pair{4, 0.177874}, std::pair{64, 0.040494}}) {
        dnnplan::pipedream_options o;
        o.machines = {m};
        o.straight_pipeline = true;
        const auto r = dnnplan::solve(dnnplan::pipedream_request{.graph = inception, .options = o});
        INFO("inception_v3 straight on " << m);
        dnnplan_test::check_result_shape(r);
        REQUIRE(r.status == dnnplan::solve_status::optimal);
        CHECK(std::abs(*r.objective_value - expected) <= 1e-9 * expected);
        CHECK(r.details.num_states == 221'564);  // counted by the window bound, not enumerated
        check_wide_plan(inception, *r.plan, o);
    }
    // With replication on 64 machines, inception_v3 within the 1 % (the design note's
    // prototype: 1.00 %), from its exact cut points and forced parameters.
    dnnplan::pipedream_options wide64;
    wide64.machines = {64};
    const auto replicated = dnnplan::solve(dnnplan::pipedream_request{.graph = inception, .options = wide64});
    dnnplan_test::check_result_shape(replicated);
    REQUIRE(replicated.plan);
    CHECK(*replicated.bound >= *replicated.objective_value / 1.01);
    check_wide_plan(inception, *replicated.plan, wide64);

    // nasnetamobile (1.6e11 states): within 1 % of the proven bound, and the same answer twice.
    const auto nasnet = pipedream_fixture("nasnetamobile");
    dnnplan::pipedream_options o;
    o.machines = {16};
    const auto r = dnnplan::solve(dnnplan::pipedream_request{.graph = nasnet, .options = o});
    dnnplan_test::check_result_shape(r);
    REQUIRE(r.plan);
    CHECK(*r.bound >= *r.objective_value / 1.01);
    CHECK(r.details.num_states == 0);  // too many ideals to count
    check_wide_plan(nasnet, *r.plan, o);
    const auto again = dnnplan::solve(dnnplan::pipedream_request{.graph = nasnet, .options = o});
    CHECK(*again.objective_value == *r.objective_value);
    CHECK(*again.bound == *r.bound);
    REQUIRE(again.plan->stages.size() == r.plan->stages.size());
    for (std::size_t s = 0; s < r.plan->stages.size(); ++s) CHECK(again.plan->stages[s].layers == r.plan->stages[s].layers);

    // nasnetalarge with activation transfers on 4 machines: the cheap cuts UB3 is given
    // (lattice_local_search::add_low_output_ideals) bring the plan within 10 % of the bound (5.3 %
    // when this was written; 43 % before).
    const auto large = pipedream_fixture("nasnetalarge");
    dnnplan::pipedream_options transfers;
    transfers.machines = {4};
    transfers.activation_compression_ratio = 1.0;
    const auto t = dnnplan::solve(dnnplan::pipedream_request{.graph = large, .options = transfers});
    dnnplan_test::check_result_shape(t);
    REQUIRE(t.plan);
    CHECK(*t.bound >= *t.objective_value / 1.10);
    check_wide_plan(large, *t.plan, transfers);

    // nasnetamobile with transfers on 64 machines: the stages' synchronisation in aggregate (LB1x,
    // pipedream_lattice_sync.hpp) lifts the bound above the window bound, which sees almost none of
    // the parameters there, to within 2 % of the plan (1.3 % when this was written; 12 % before).
    dnnplan::pipedream_options many = transfers;
    many.machines = {64};
    const auto sync = dnnplan::solve(dnnplan::pipedream_request{.graph = nasnet, .options = many});
    dnnplan_test::check_result_shape(sync);
    REQUIRE(sync.plan);
    CHECK(sync.details.lattice.machine_bound_s > 1.05 * sync.details.lattice.window_bound_s);
    CHECK(*sync.bound >= *sync.objective_value / 1.02);

    // nasnetalarge on 2 machines with an eighth of its bytes: the first stage is held by the memory
    // check. UB3's search for the first stage of most compute within the cap
    // (stash_capped_first_stages, pipedream_lattice_pack.hpp) brings the plan within 1 % of the bound
    // (0.94 % when this was written; 1.22 % before, its first stage 51.08 ms of compute; the most
    // an ideal within the cap has is 55.63 ms, docs/solvers/pipeline_plan.md).
    double bytes = 0.0;
    for (std::size_t i = 0; i < large.size(); ++i) bytes += large.at(i).activation_bytes + large.at(i).parameter_bytes;
    dnnplan::pipedream_options eighth;
    eighth.machines = {2};
    eighth.use_memory_constraint = true;
    eighth.memory_bytes = bytes / 8.0;
    const auto capped = dnnplan::solve(dnnplan::pipedream_request{.graph = large, .options = eighth});
    dnnplan_test::check_result_shape(capped);
    REQUIRE(capped.plan);
    REQUIRE(capped.plan->stages.size() == 2);
    CHECK(capped.plan->stages.front().compute_s > 0.0515);
    CHECK(*capped.bound >= *capped.objective_value / 1.01);
    check_wide_plan(large, *capped.plan, eighth);

    // inception_v3 with half of its bytes on 16 machines: the packing starts from the first stage
    // of most compute within the memory (253.94 ms, found by the window bound's enumeration; the
    // fills reach 251.24 ms), and the plan is within 1 % of the bound (0.53 % when this was
    // written; 1.05 % before).
    double inception_bytes = 0.0;
    for (std::size_t i = 0; i < inception.size(); ++i) inception_bytes += inception.at(i).activation_bytes + inception.at(i).parameter_bytes;
    dnnplan::pipedream_options half;
    half.machines = {16};
    half.use_memory_constraint = true;
    half.memory_bytes = inception_bytes / 2.0;
    const auto seeded = dnnplan::solve(dnnplan::pipedream_request{.graph = inception, .options = half});
    dnnplan_test::check_result_shape(seeded);
    REQUIRE(seeded.plan);
    CHECK(seeded.plan->stages.front().compute_s > 0.2539);
    CHECK(*seeded.bound >= *seeded.objective_value / 1.01);
    check_wide_plan(inception, *seeded.plan, half);

    // The same memory on 32 machines: the stages before any cut hold too little of the model
    // together (LBm, pipedream_lattice_memory.hpp), so the plan of one stage on all 32 (65.25 ms)
    // is proven optimal; the window bound is 52.2 ms there (a gap of 25 % before LBm).
    eighth.machines = {32};
    const auto together = dnnplan::solve(dnnplan::pipedream_request{.graph = large, .options = eighth});
    dnnplan_test::check_result_shape(together);
    REQUIRE(together.plan);
    CHECK(together.status == dnnplan::solve_status::optimal);
    CHECK(together.plan->stages.size() == 1);
    CHECK(together.details.lattice.memory_bound_s > 1.2 * together.details.lattice.window_bound_s);
    check_wide_plan(large, *together.plan, eighth);
}
