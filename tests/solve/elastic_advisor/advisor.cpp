// The model-based elastic advisor (solve/elastic_advisor/advisor.hpp), the replay harness and its DLRover
// policy (solve/elastic_advisor/replay.hpp), the runtime records (solve/elastic_advisor/runtime_records.hpp) and their JSON
// (io/elastic_advisor_json.hpp): the harness on hand-computed tables, the advisor on tables drawn from a
// known model (it finds the optimum), the PS-bottleneck case, the ICAC'19 tables (the goals of
// docs/solvers/elastic_advisor.md), every malformed input.

#include <dnnplan/io/elastic_advisor_json.hpp>
#include <dnnplan/model/ps_load_contention.hpp>

#include "../../support/checks.hpp"
#include "../../support/fixture_files.hpp"
#include "../../support/json_checks.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace dnnplan;
using dnnplan_test::field_of;

namespace {

/// A table drawn from the load-contention model: work Z s between exchanges, 2 S / B_req = a s
/// alone, 2 S / B_ps = b s per step at one PS (P PS: b / P).
measurement_table synthetic_table(double z_s, double a_s, double b_s, std::int32_t max_ps, std::int32_t max_workers) {
    measurement_table t{.gpu = "synthetic", .worker_usd_per_h = 0.9, .ps_usd_per_h = 0.15};
    for (std::int32_t p = 1; p <= max_ps; ++p)
        for (std::int32_t n = 1; n <= max_workers; ++n) {
            const std::array<double, 1> work{z_s};
            const std::array<std::int32_t, 1> counts{n};
            // exchange 2 S = 1 byte: B_req = 1 / a, B_ps = P / b.
            const double x = ps_load_iterations_per_s(work, counts, 1.0, 1.0 / a_s, p / b_s);
            t.measured.push_back({p, n, x});
        }
    return t;
}


measurement_table icac_table(const std::string& name) {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/elastic/" + name);
    REQUIRE(in);
    return parse_measurement_table(in);
}

/// The advisor's view of configuration (ps, workers) in a result.
elastic_candidate candidate(const elastic_result& res, std::int32_t ps, std::int32_t workers) {
    for (const auto& c : res.details.candidates)
        if (c.ps == ps && c.workers == workers) return c;
    FAIL("no candidate (" << ps << ", " << workers << ")");
    return {};
}

/// A scripted policy: the listed decisions in order, the last one repeated.
struct scripted {
    std::vector<policy_decision> steps;
    std::size_t next = 0;
    policy_decision operator()(const policy_view&) {
        const policy_decision d = steps[std::min(next, steps.size() - 1)];
        ++next;
        return d;
    }
};

}  // namespace

TEST_CASE("replay harness: trials count toward the work, time and cost by hand", "[elastic][replay]") {
    // 10 steps/s on (1,1), 18 on (1,2); 0.9 USD/h a worker, 0.18 a PS.
    const measurement_table t{.gpu = "g", .worker_usd_per_h = 0.9, .ps_usd_per_h = 0.18,
                              .measured = {{1, 1, 10.0}, {1, 2, 18.0}}};
    scripted policy{{{.configuration = {1, 1}}, {.configuration = {1, 2}}, {.configuration = {1, 2}, .final = true}}};
    const replay_options o{.work_steps = 10'000.0, .deadline_s = 600.0, .trial_s = 100.0};
    const replay_report r = replay(t, o, policy);
    // 100 s at 10 -> 1000 steps; 100 s at 18 -> 1800; the rest, 7200 steps at 18 = 400 s.
    REQUIRE(r.segments.size() == 3);
    CHECK(r.segments[0].steps == Approx(1000.0));
    CHECK(r.segments[1].steps == Approx(1800.0));
    CHECK(r.segments[2].duration_s == Approx(400.0));
    CHECK(r.time_s == Approx(600.0));
    CHECK(r.cost_usd == Approx(100.0 * 1.08 / 3600.0 + 500.0 * 1.98 / 3600.0));
    CHECK(r.met_deadline);
    REQUIRE(r.trials.size() == 2);
    CHECK(r.trials[0] == configuration_speed{1, 1, 10.0});
    CHECK(r.trials[1] == configuration_speed{1, 2, 18.0});
    CHECK(r.final == ps_configuration{1, 2});

    SECTION("a deadline a hair shorter is missed") {
        replay_options tight = o;
        tight.deadline_s = 599.0;
        scripted again{policy.steps};
        CHECK_FALSE(replay(t, tight, again).met_deadline);
    }
    SECTION("a trial ends early when the work does; switching time is billed without progress") {
        replay_options small = o;
        small.work_steps = 1500.0;
        small.switch_s = 10.0;
        scripted again{policy.steps};
        const replay_report s = replay(t, small, again);
        // 10 s switch + 100 s at 10 (1000 steps), 10 s switch + 500/18 s at 18.
        REQUIRE(s.segments.size() == 2);
        CHECK(s.segments[1].duration_s == Approx(10.0 + 500.0 / 18.0));
        CHECK(s.time_s == Approx(120.0 + 500.0 / 18.0));
        CHECK(s.trials.size() == 2);  // both ran as trials; the work ended during the second
    }
    SECTION("a configuration the table lacks is the policy's error") {
        scripted bad{{{.configuration = {2, 1}}}};
        CHECK_THROWS_AS(replay(t, o, bad), error);
    }
    SECTION("max_decisions: the last configuration finishes the work") {
        replay_options few = o;
        few.max_decisions = 1;
        scripted once{{{.configuration = {1, 1}}}};
        const replay_report s = replay(t, few, once);
        CHECK(s.decisions_exhausted);
        CHECK(s.time_s == Approx(1000.0));
    }
}

TEST_CASE("PS CPU proxy: the fitted PS utilisation, below 1 and rising with the speed", "[elastic][replay]") {
    const measurement_table t = synthetic_table(0.08, 0.02, 0.025, 2, 8);
    const auto u = ps_cpu_proxy(t);
    for (const auto& m : t.measured) {
        const double v = u.at(m.configuration());
        CHECK(v > 0.0);
        CHECK(v < 1.0 + 1e-6);
        // The true utilisation X b / P of the model the table was drawn from, to the fit's accuracy.
        CHECK(v == Approx(m.steps_per_s * 0.025 / m.ps).epsilon(0.02));
    }
    CHECK(u.at({1, 8}) > u.at({1, 4}));
    CHECK(u.at({1, 8}) > u.at({2, 8}));
    const measurement_table single{.gpu = "g", .worker_usd_per_h = 1.0, .ps_usd_per_h = 0.1, .measured = {{1, 1, 5.0}}};
    CHECK(ps_cpu_proxy(single).at({1, 1}) == 0.0);
    // One configuration of 2+ workers: B_ps cannot be told from the compute time (pinned: no contention).
    const measurement_table one{.gpu = "g", .worker_usd_per_h = 1.0, .ps_usd_per_h = 0.1, .measured = {{1, 4, 20.0}}};
    CHECK(ps_cpu_proxy(one).at({1, 4}) < 1e-5);
}

TEST_CASE("advisor finds the optimum on tables drawn from a known model", "[elastic][advisor]") {
    // PS-bound (b large), balanced, compute-bound: each with and without deadlines.
    struct model_case {
        double z, a, b;
    };
    const std::array<model_case, 3> models{{{0.08, 0.02, 0.030}, {0.10, 0.02, 0.015}, {0.12, 0.01, 0.004}}};
    for (const auto& mc : models) {
        const measurement_table t = synthetic_table(mc.z, mc.a, mc.b, 3, 8);
        double fastest = 0.0;
        for (const auto& m : t.measured) fastest = std::max(fastest, m.steps_per_s);
        for (const double slack : {0.0, 1.5, 2.5}) {
            replay_options o{.work_steps = 2.0e6};
            if (slack > 0.0) o.deadline_s = o.work_steps / fastest * slack;
            const auto best = best_with_hindsight(t, o);
            REQUIRE(best);
            const replay_report r = replay(t, o, model_policy{});
            INFO("z " << mc.z << " a " << mc.a << " b " << mc.b << " slack " << slack << ": final " << to_string(r.final)
                      << " best " << to_string(best->configuration));
            CHECK(r.met_deadline);
            CHECK(r.trials.size() <= 5);
            CHECK(r.cost_usd <= 1.02 * best->cost_usd);
            const double final_cost = o.work_steps / *t.speed(r.final) * t.usd_per_s(r.final);
            CHECK(final_cost <= 1.01 * best->cost_usd);
        }
    }
}

TEST_CASE("advisor: a PS bottleneck adds a PS, not workers", "[elastic][advisor]") {
    const measurement_table t = synthetic_table(0.08, 0.02, 0.04, 2, 8);  // one PS saturates near 25 steps/s
    elastic_request r{.job = {.remaining_steps = 1.0e6, .worker_usd_per_h = 0.9, .ps_usd_per_h = 0.15,
                              .configurations = t.configurations()},
                      .current = ps_configuration{1, 4}};
    for (const ps_configuration c : {ps_configuration{1, 2}, ps_configuration{1, 4}})
        r.observations.push_back({c.ps, c.workers, *t.speed(c)});
    const elastic_result res = solve(r);
    REQUIRE(res.plan);
    CHECK(res.details.ps_bottleneck);
    CHECK(res.plan->action == elastic_action::trial);
    CHECK(res.plan->configuration() == ps_configuration{2, 4});
    CHECK(res.plan->why.find("PS bottleneck") != std::string::npos);

    SECTION("no bottleneck when the PS is far from its capacity") {
        const measurement_table light = synthetic_table(0.08, 0.02, 0.002, 2, 8);
        elastic_request l = r;
        l.observations.clear();
        for (const ps_configuration c : {ps_configuration{1, 2}, ps_configuration{1, 4}})
            l.observations.push_back({c.ps, c.workers, *light.speed(c)});
        const elastic_result lr = solve(l);
        CHECK_FALSE(lr.details.ps_bottleneck);
        REQUIRE(lr.plan);
        CHECK(lr.plan->ps == 1);
    }
}

TEST_CASE("advisor: the model's bounds from one measured configuration", "[elastic][advisor]") {
    // One measurement, (1 PS, 2 workers) at 20 steps/s (10 per worker); speed_noise 5%.
    const elastic_request r{.job = {.remaining_steps = 100'000.0, .worker_usd_per_h = 0.9, .ps_usd_per_h = 0.15,
                                    .configurations = {{1, 1}, {1, 2}, {1, 4}, {2, 3}, {2, 4}, {2, 6}}},
                            .observations = {{1, 2, 20.0}}};
    const elastic_result res = solve(r);
    const auto at = [&](std::int32_t ps, std::int32_t workers) { return candidate(res, ps, workers); };
    // A bound from a per-worker rule is loosened by the noise, up or down.
    // (1,1): no more PS nor workers, at most 20 (+ noise); a worker fewer on as many PS, x >= 10 (- noise).
    CHECK(at(1, 1).upper == Approx(20.0 * 1.05));
    CHECK(at(1, 1).lower == Approx(10.0 * 0.95));
    // (1,4): at least 20 (more workers), at most 4 x 10 (a worker more never raises x), + noise.
    CHECK(at(1, 4).lower == Approx(20.0));
    CHECK(at(1, 4).upper == Approx(40.0 * 1.05));
    // (2,4) and (2,3): as many PS per worker or more over more workers, x >= 10 (- noise).
    CHECK(at(2, 4).lower == Approx(40.0 * 0.95));
    CHECK(at(2, 3).lower == Approx(30.0 * 0.95));
    // (2,6): fewer PS per worker: only the cluster bound, 20 (a one-point fit bounds nothing below).
    CHECK(at(2, 6).lower == Approx(20.0));
    for (const auto& c : res.details.candidates)
        if (!c.tried) {
            CHECK(c.steps_per_s >= c.lower);
            CHECK(c.steps_per_s <= c.upper);
        }
}

TEST_CASE("advisor: a fit that has seen no contention bounds nothing below past the measured PS load", "[elastic][advisor]") {
    // Compute-bound (the PS far from saturation): (3, 8) and (3, 6) run at the same rate per worker,
    // so B_ps is pinned at its optimistic guess and the fit's interval is the point +- speed_noise.
    const measurement_table t = synthetic_table(0.12, 0.01, 0.004, 3, 8);
    elastic_request r{.job = {.remaining_steps = 2.0e6, .worker_usd_per_h = 0.9, .ps_usd_per_h = 0.15,
                              .configurations = t.configurations()}};
    for (const ps_configuration c : {ps_configuration{3, 8}, ps_configuration{3, 6}})
        r.observations.push_back({c.ps, c.workers, *t.speed(c)});
    const elastic_result res = solve(r);
    REQUIRE(std::any_of(res.details.pinned.begin(), res.details.pinned.end(),
                        [](const std::string& p) { return p.starts_with("ps_bandwidth_bytes_per_s"); }));
    const auto at = [&](std::int32_t ps, std::int32_t workers) { return candidate(res, ps, workers); };
    // 4 and 8 workers per PS, more than the measured 2.67 and 2: nothing from the fit, no rule applies.
    CHECK(at(2, 8).lower == 0.0);
    CHECK(at(1, 8).lower == 0.0);
    // 2.33 workers per PS, within the measured load: the fit's lower end, at most the point - 5%.
    CHECK(at(3, 7).lower > 0.0);
    CHECK(at(3, 7).lower <= at(3, 7).steps_per_s * 0.95 * (1.0 + 1e-12));
    // The two points fit exactly, so the fit's own interval is the point; the floor widens it.
    CHECK(at(3, 7).upper >= at(3, 7).steps_per_s * 1.05 * (1.0 - 1e-9));
}

TEST_CASE("advisor: speeds per worker within the noise are not read as contention", "[elastic][advisor]") {
    // (1,2) at 9.2 steps/s and (2,4) at 19.1 (K80, tests/fixtures/elastic): 4.6 and 4.77 per worker,
    // 3.8% apart. Read as contention, the two points would saturate one PS near 20 steps/s.
    elastic_request r{.job = {.remaining_steps = 600'000.0, .worker_usd_per_h = 0.2556, .ps_usd_per_h = 0.1429,
                              .configurations = {{1, 2}, {1, 7}, {2, 4}}},
                      .observations = {{1, 2, 9.194}, {2, 4, 19.079}}};
    const auto predicted_1_7 = [&] { return candidate(solve(r), 1, 7).steps_per_s; };
    // No contention: 7 workers at a rate between the two measured ones.
    CHECK(predicted_1_7() >= 7.0 * 9.194 / 2.0 * (1.0 - 1e-6));
    CHECK(predicted_1_7() <= 7.0 * 19.079 / 4.0 * (1.0 + 1e-6));
    r.options.speed_noise = 0.0;
    CHECK(predicted_1_7() < 0.7 * 7.0 * 9.194 / 2.0);  // the gap read as contention
    r.options.speed_noise = 1.0;
    CHECK(field_of([&] { (void)solve(r); }) == "options.speed_noise");
}

TEST_CASE("advisor: first trial, commitment, infeasible", "[elastic][advisor]") {
    elastic_request r{.job = {.remaining_steps = 100'000.0, .worker_usd_per_h = 0.9, .ps_usd_per_h = 0.15,
                              .configurations = {{1, 1}, {1, 2}, {1, 4}, {2, 4}}}};
    SECTION("nothing measured: the smallest cluster with 2+ workers, the trial's cost as its objective") {
        const elastic_result res = solve(r);
        REQUIRE(res.plan);
        CHECK(res.plan->configuration() == ps_configuration{1, 2});
        CHECK(res.plan->action == elastic_action::trial);
        // Nothing predicts the cost of finishing: the objective is the trial's own, 120 s of (1,2).
        REQUIRE(res.objective_value);
        CHECK(*res.objective_value == Approx(120.0 * (2 * 0.9 + 0.15) / 3600.0));
        // The result writes and reads back (a plan has its objective value).
        dnnplan_test::check_round_trip(res);
        CHECK_FALSE(res.details.model_fitted);
    }
    SECTION("nothing measured, a deadline: the largest cluster, the one no other can outrun") {
        r.job.deadline_s = 5'000.0;
        const elastic_result res = solve(r);
        REQUIRE(res.plan);
        CHECK(res.plan->configuration() == ps_configuration{2, 4});  // as many PS and workers as any
        CHECK(res.plan->action == elastic_action::trial);
        CHECK(*res.objective_value == Approx(120.0 * (4 * 0.9 + 2 * 0.15) / 3600.0));
        // No configuration dominates every other: the one that dominates the most, then more workers.
        r.job.configurations = {{1, 1}, {2, 4}, {1, 8}};  // (2, 4) and (1, 8) each dominate (1, 1)
        CHECK(solve(r).plan->configuration() == ps_configuration{1, 8});
        r.job.configurations = {{1, 1}, {2, 4}, {1, 8}, {2, 2}};  // (2, 4) dominates (2, 2) too
        CHECK(solve(r).plan->configuration() == ps_configuration{2, 4});
    }
    SECTION("every configuration measured: commit to the cheapest") {
        r.observations = {{1, 1, 10.0}, {1, 2, 19.0}, {1, 4, 30.0}, {2, 4, 37.0}};
        const elastic_result res = solve(r);
        REQUIRE(res.plan);
        CHECK(res.status == solve_status::feasible);
        CHECK(res.plan->action == elastic_action::commit);
        // USD/h per step/s: (1,1) 1.05 / 10 = 0.105, (1,2) 1.95 / 19 = 0.1026 (the least),
        // (1,4) 3.75 / 30 = 0.125, (2,4) 3.9 / 37 = 0.1054.
        CHECK(res.plan->configuration() == ps_configuration{1, 2});
        CHECK(*res.objective_value == Approx(100'000.0 / 19.0 * 1.95 / 3600.0));
    }
    SECTION("max_trials reached: commit even with the choice open") {
        r.observations = {{1, 1, 10.0}};
        r.options.max_trials = 1;
        const elastic_result res = solve(r);
        REQUIRE(res.plan);
        CHECK(res.plan->action == elastic_action::commit);
    }
    SECTION("a deadline nothing can meet: infeasible, the fastest") {
        r.observations = {{1, 1, 10.0}, {1, 2, 19.0}, {1, 4, 30.0}, {2, 4, 37.0}};
        r.job.deadline_s = 100.0;  // 100,000 steps need 2,703 s at the fastest, 37 steps/s
        const elastic_result res = solve(r);
        CHECK(res.status == solve_status::infeasible);
        REQUIRE(res.plan);
        CHECK(res.plan->configuration() == ps_configuration{2, 4});
        CHECK_FALSE(res.reason.empty());
    }
    SECTION("the same request gives the same plan") {
        r.observations = {{1, 2, 19.0}, {1, 4, 30.0}};
        CHECK(solve(r).plan == solve(r).plan);
    }
}

TEST_CASE("ICAC'19 tables: the model policy within 1.10x of hindsight in <= 5 trials", "[elastic][advisor][icac]") {
    // The goals of docs/solvers/elastic_advisor.md ("Against DLRover on the ICAC'19 tables"): deadlines
    // from the fastest configuration's time (1.0x: only it, from the start, meets it) to 5x, and none;
    // the ICAC workload, twice and ten times it.
    for (const char* name : {"icac19_v100.json", "icac19_k80.json"}) {
        const measurement_table t = icac_table(name);
        double fastest = 0.0;
        for (const auto& m : t.measured) fastest = std::max(fastest, m.steps_per_s);
        for (const double work : {64'000.0, 128'000.0, 640'000.0})
            for (const double slack : {0.0, 1.0, 1.02, 1.05, 1.08, 1.1, 1.15, 1.2, 1.25, 1.3, 1.4, 1.5, 1.75, 2.0, 3.0, 5.0}) {
                replay_options o{.work_steps = work};
                if (slack > 0.0) o.deadline_s = work / fastest * slack;
                const auto best = best_with_hindsight(t, o);
                REQUIRE(best);
                const replay_report r = replay(t, o, model_policy{});
                INFO(name << " work " << work << " slack " << slack << ": " << r.cost_usd / best->cost_usd << "x");
                CHECK(r.met_deadline);
                CHECK(r.trials.size() <= 5);
                CHECK(r.cost_usd <= 1.10 * best->cost_usd);
            }
    }
}

TEST_CASE("DLRover policy in the harness: cold start, then its rules on the proxy", "[elastic][replay]") {
    const measurement_table t = icac_table("icac19_v100.json");
    const replay_report r = replay(t, {.work_steps = 64'000.0}, dlrover_policy{});
    REQUIRE(r.segments.size() >= 3);
    CHECK(r.segments[0].run.configuration() == ps_configuration{1, 1});  // DLRover's cold start
    CHECK(r.segments[0].why == "DLRover cold start");
    CHECK(r.segments[1].why == "DLRover PS initial plan");
    CHECK_FALSE(r.segments.back().final);  // it never commits
    double done = 0.0;
    for (const auto& s : r.segments) done += s.steps;
    CHECK(done == Approx(64'000.0));
}

TEST_CASE("runtime records: advise reads configurations and speeds; time order", "[elastic][records]") {
    advise_setup setup{.job = {.remaining_steps = 64'000.0, .deadline_s = 2000.0, .worker_usd_per_h = 0.861,
                               .ps_usd_per_h = 0.1429, .configurations = {}}};
    for (std::int32_t p = 1; p <= 2; ++p)
        for (std::int32_t w = 1; w <= 8; ++w) setup.job.configurations.push_back({p, w});
    std::vector<elastic_record> records{{.time_s = 0, .global_step = 0, .speed = 26.96, .ps = 1, .workers = 2},
                                        {.time_s = 120, .global_step = 3235, .speed = 38.94, .ps = 1, .workers = 4}};
    const elastic_result a = advise(records, setup);
    elastic_request direct{.job = setup.job, .observations = {{1, 2, 26.96}, {1, 4, 38.94}}, .current = ps_configuration{1, 4}};
    direct.job.remaining_steps = 64'000.0 - 3235.0;
    direct.job.deadline_s = 2000.0 - 120.0;
    CHECK(a.plan == solve(direct).plan);

    records.push_back({.time_s = 100, .global_step = 4000, .speed = 38.9, .ps = 1, .workers = 4});
    CHECK(field_of([&] { (void)advise(records, setup); }) == "records[2].time_s");
    records.back() = {.time_s = 240, .global_step = 4000, .speed = 38.9, .ps = 3, .workers = 4};
    CHECK(field_of([&] { (void)advise(records, setup); }) == "records[2]");
    records.back() = {.time_s = 240, .global_step = 4000, .speed = -1.0, .ps = 1, .workers = 4};
    CHECK(field_of([&] { (void)advise(records, setup); }) == "records[2].speed");
    records.back() = {.time_s = 240, .global_step = 4000, .speed = 38.9, .ps = 1, .workers = 4,
                      .nodes = {{.type = dlrover::node_type::ps, .cpu_used = 1, .cpu_requested = 8}}};
    CHECK(field_of([&] { (void)advise(records, setup); }) == "records[2].nodes");  // 0 worker nodes for 4 workers
}

TEST_CASE("dlrover_advise: DLRover's running plan on records with nodes", "[elastic][records]") {
    std::vector<elastic_record> records;
    for (int i = 0; i < 5; ++i) {
        elastic_record r{.time_s = 30.0 * i, .global_step = 300 * i, .speed = 10.0, .ps = 1, .workers = 2};
        r.nodes.push_back({.type = dlrover::node_type::ps, .id = 0, .cpu_used = 2.0, .cpu_requested = 8.0,
                           .memory_used_mb = 1000, .memory_requested_mb = 4096});
        for (std::int32_t w = 0; w < 2; ++w)
            r.nodes.push_back({.type = dlrover::node_type::worker, .id = w, .cpu_used = 4.0, .cpu_requested = 8.0,
                               .memory_used_mb = 2000, .memory_requested_mb = 8192});
        records.push_back(r);
    }
    const auto plan = dlrover_advise(records, {.cpu = 8.0 + 8 * 8.0, .memory_mb = 1e6});
    // PS at 0.25 of its request: workers x 0.9 / 0.25 = 7.2 -> 7 (DLRover's worker plan).
    REQUIRE(plan.groups.contains(dlrover::node_type::worker));
    CHECK(plan.groups.at(dlrover::node_type::worker).count == 7);
}

TEST_CASE("elastic JSON: tables, records, reports; malformed input names its field", "[elastic][io]") {
    const measurement_table t = icac_table("icac19_k80.json");
    CHECK(t.gpu == "K80");
    CHECK(t.measured.size() == 15);
    const std::string good = R"({"gpu": "g", "worker_usd_per_h": 1, "ps_usd_per_h": 0.1, "measured": [{"ps": 1, "workers": 4, "steps_per_s": 38.9}]})";
    CHECK(parse_measurement_table(good).measured.front().steps_per_s == 38.9);
    const auto field = [](const std::string& text) { return field_of([&] { (void)parse_measurement_table(text); }); };
    CHECK(field(R"({"gpu": "g", "worker_usd_per_h": 1, "ps_usd_per_h": 0.1, "measured": [], "extra": 1})") == "extra");
    CHECK(field(R"({"gpu": "g", "worker_usd_per_h": 1, "ps_usd_per_h": 0.1, "measured": [{"ps": 1, "workers": 4, "steps_per_s": -2}]})") ==
          "measured[0].steps_per_s");
    CHECK(field(R"({"gpu": "g", "worker_usd_per_h": 1, "ps_usd_per_h": 0.1, "measured": [{"ps": 1, "workers": 4, "steps_per_s": 2},
                   {"ps": 1, "workers": 4, "steps_per_s": 3}]})") == "measured[1]");
    CHECK(field(R"({"gpu": "g", "worker_usd_per_h": 1, "ps_usd_per_h": 0.1, "measured": []})") == "measured");

    const elastic_record rec = parse_elastic_record(
        R"({"time_s": 30, "global_step": 300, "speed": 10, "ps": 1, "workers": 1, "nodes": [{"type": "ps", "id": 0, "cpu_used": 1,
            "cpu_requested": 8, "memory_used_mb": 100, "memory_requested_mb": 200}, {"type": "worker", "cpu_used": 1,
            "cpu_requested": 8, "memory_used_mb": 100, "memory_requested_mb": 200}]})");
    CHECK(rec.nodes.size() == 2);
    CHECK(field_of([] { (void)parse_elastic_record(R"({"time_s": 0, "global_step": 0, "speed": 1, "ps": 1, "workers": 1, "gpu": 1})"); }) ==
          "gpu");
    CHECK(field_of([] { (void)parse_elastic_record(R"({"time_s": 0, "global_step": 0, "speed": -1, "ps": 1, "workers": 1})"); }) ==
          "speed");

    scripted policy{{{.configuration = {1, 1}, .final = true}}};
    const replay_report r = replay(t, {.work_steps = 1000.0}, policy);
    const std::string text = to_json_text(r, -1);
    CHECK(text.find(R"("final":{"ps":1,"workers":1})") != std::string::npos);
    CHECK(text.find(R"("met_deadline":true)") != std::string::npos);
    dnnplan_test::check_round_trip(r);
    elastic_request nothing{.job = {.remaining_steps = 10.0, .worker_usd_per_h = 1.0, .configurations = {{1, 1}}}};
    CHECK(to_json_text(solve(nothing), -1).find(R"("upper":null)") != std::string::npos);  // unbounded, written as null
}

TEST_CASE("the fuzz seeds of tests/fixtures/fuzz_seeds are read by their readers (elastic)", "[elastic][io][fuzz]") {
    // scripts/fuzz seeds fuzz_elastic_inputs with it: every line is a record the reader accepts.
    const auto files = dnnplan_test::fixture_files("fuzz_seeds", "elastic_records");
    REQUIRE(files.size() == 1);
    std::istringstream lines(files.front().second);
    std::vector<elastic_record> records;
    for (std::string line; std::getline(lines, line);) records.push_back(parse_elastic_record(line));
    CHECK(records.size() == 4);
    CHECK_NOTHROW(validate_records(records));
}

TEST_CASE("elastic request validation names the field", "[elastic][advisor]") {
    const elastic_request good{.job = {.remaining_steps = 10.0, .worker_usd_per_h = 1.0, .configurations = {{1, 1}, {1, 2}}}};
    auto r = good;
    r.job.configurations.push_back({1, 1});
    CHECK(field_of([&] { r.validate(); }) == "job.configurations[2]");
    r = good;
    r.job.remaining_steps = 0.0;
    CHECK(field_of([&] { r.validate(); }) == "job.remaining_steps");
    r = good;
    r.observations = {{2, 1, 5.0}};
    CHECK(field_of([&] { r.validate(); }) == "observations[0]");
    r = good;
    r.observations = {{1, 1, 0.0}};
    CHECK(field_of([&] { r.validate(); }) == "observations[0].steps_per_s");
    r = good;
    r.current = ps_configuration{1, 3};
    CHECK(field_of([&] { r.validate(); }) == "current");
    r = good;
    r.options.confidence = 1.0;
    CHECK(field_of([&] { r.validate(); }) == "options.confidence");
    r = good;
    r.job.worker_usd_per_h = 0.0;
    CHECK(field_of([&] { r.validate(); }) == "job.worker_usd_per_h");
    replay_options o{.work_steps = 0.0};
    CHECK(field_of([&] { o.validate(); }) == "options.work_steps");
}
