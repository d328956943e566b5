// The model-based elastic advisor (solve/elastic_advisor/advisor.hpp), the replay harness
// (solve/elastic_advisor/replay.hpp) and its two policies (solve/elastic_advisor/policies.hpp): the
// harness on hand-computed tables, the advisor on tables drawn from a known model (it finds the
// optimum), the PS-bottleneck case, the statuses and figures of every kind of decision (each
// result the tests produce keeps the one result shape, core/result.hpp), a deadline no
// configuration can meet, the ICAC'19 tables (the goals of docs/solvers/elastic_advisor.md), bad
// requests by field. Runtime records: runtime_records.cpp; a model of one's own: concepts.cpp; JSON:
// tests/io/elastic_advisor_json.cpp.

#include <dnnplan/io/elastic_advisor_json.hpp>
#include <dnnplan/model/ps_load_contention.hpp>
#include <dnnplan/solve/elastic_advisor/policies.hpp>

#include "../../support/checks.hpp"
#include "../../support/json_checks.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
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

/// solve(r), checked to keep the one result shape and, for every status but optimal, to say why.
elastic_result solved(const elastic_request& r) {
    elastic_result res = solve(r);
    const result_violation broken = result_shape_violation(res);
    INFO(broken.field << ": " << broken.rule);
    CHECK(!broken);
    CHECK_FALSE(res.reason.empty());
    CHECK(res.plan_to_run());
    return res;
}

/// model_policy with every result it acts on checked (solved()): the same decisions.
struct shape_checked_policy {
    elastic_options options{};
    policy_decision operator()(const policy_view& v) const { return decision_of(solved(advisor_request(v, options))); }
};

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
            const replay_report r = replay(t, o, shape_checked_policy{});
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
    const elastic_result res = solved(r);
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
        const elastic_result lr = solved(l);
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
    const elastic_result res = solved(r);
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
    const elastic_result res = solved(r);
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
    const auto predicted_1_7 = [&] { return candidate(solved(r), 1, 7).steps_per_s; };
    // No contention: 7 workers at a rate between the two measured ones.
    CHECK(predicted_1_7() >= 7.0 * 9.194 / 2.0 * (1.0 - 1e-6));
    CHECK(predicted_1_7() <= 7.0 * 19.079 / 4.0 * (1.0 + 1e-6));
    r.options.speed_noise = 0.0;
    CHECK(predicted_1_7() < 0.7 * 7.0 * 9.194 / 2.0);  // the gap read as contention
    r.options.speed_noise = 1.0;
    CHECK(field_of([&] { (void)solve(r); }) == "options.speed_noise");
}

TEST_CASE("advisor: statuses and figures of every decision", "[elastic][advisor]") {
    elastic_request r{.job = {.remaining_steps = 100'000.0, .worker_usd_per_h = 0.9, .ps_usd_per_h = 0.15,
                              .configurations = {{1, 1}, {1, 2}, {1, 4}, {2, 4}}}};
    SECTION("nothing measured: the smallest cluster with 2+ workers, the trial's own cost, exact") {
        const elastic_result res = solved(r);
        CHECK(res.status == solve_status::feasible);
        REQUIRE(res.plan);
        CHECK(res.plan->configuration() == ps_configuration{1, 2});
        CHECK(res.plan->action == elastic_action::trial);
        // Nothing predicts the cost of finishing: the objective is the trial's own, 120 s of (1,2),
        // exact (no sample to estimate from), and the reason says so.
        REQUIRE(res.objective_value);
        CHECK(*res.objective_value == Approx(120.0 * (2 * 0.9 + 0.15) / 3600.0));
        CHECK(res.figures == figure_kind::exact);
        CHECK_FALSE(res.estimate);
        CHECK(res.reason.find("nothing measured yet") != std::string::npos);
        CHECK_FALSE(res.bound);
        CHECK_FALSE(res.details.model_fitted);
        dnnplan_test::check_round_trip(res);
    }
    SECTION("nothing measured, a deadline: the largest cluster, the one no other can outrun") {
        r.job.deadline_s = 5'000.0;
        const elastic_result res = solved(r);
        REQUIRE(res.plan);
        CHECK(res.plan->configuration() == ps_configuration{2, 4});  // as many PS and workers as any
        CHECK(res.plan->action == elastic_action::trial);
        CHECK(*res.objective_value == Approx(120.0 * (4 * 0.9 + 2 * 0.15) / 3600.0));
        // No configuration dominates every other: the one that dominates the most, then more workers.
        r.job.configurations = {{1, 1}, {2, 4}, {1, 8}};  // (2, 4) and (1, 8) each dominate (1, 1)
        CHECK(solved(r).plan->configuration() == ps_configuration{1, 8});
        r.job.configurations = {{1, 1}, {2, 4}, {1, 8}, {2, 2}};  // (2, 4) dominates (2, 2) too
        CHECK(solved(r).plan->configuration() == ps_configuration{2, 4});
    }
    SECTION("every configuration measured: commit to the cheapest, its measured cost, estimated") {
        r.observations = {{1, 1, 10.0}, {1, 2, 19.0}, {1, 4, 30.0}, {2, 4, 37.0}};
        const elastic_result res = solved(r);
        CHECK(res.status == solve_status::feasible);
        REQUIRE(res.plan);
        CHECK(res.plan->action == elastic_action::commit);
        // USD/h per step/s: (1,1) 1.05 / 10 = 0.105, (1,2) 1.95 / 19 = 0.1026 (the least),
        // (1,4) 3.75 / 30 = 0.125, (2,4) 3.9 / 37 = 0.1054.
        CHECK(res.plan->configuration() == ps_configuration{1, 2});
        const double cost = 100'000.0 / 19.0 * 1.95 / 3600.0;
        CHECK(*res.objective_value == Approx(cost));
        // Measured: its interval is the point; the fit rests on the 4 measured configurations.
        CHECK(res.figures == figure_kind::estimated);
        REQUIRE(res.estimate);
        CHECK(res.estimate->lower == Approx(cost));
        CHECK(res.estimate->upper == Approx(cost));
        CHECK(res.estimate->samples == 4);
        CHECK(res.estimate->confidence_prob == 0.95);
        CHECK_FALSE(res.bound);
        dnnplan_test::check_round_trip(res);
    }
    SECTION("a trial: its predicted cost within the interval from its speed interval") {
        r.observations = {{1, 1, 10.0}, {1, 2, 19.0}, {1, 4, 30.0}};
        const elastic_result res = solved(r);
        REQUIRE(res.plan);
        REQUIRE(res.plan->action == elastic_action::trial);
        CHECK(res.plan->configuration() == ps_configuration{2, 4});
        const elastic_candidate e = candidate(res, 2, 4);
        const double usd_per_s = (4 * 0.9 + 2 * 0.15) / 3600.0;
        REQUIRE(res.estimate);
        CHECK(res.estimate->lower == Approx(100'000.0 / e.upper * usd_per_s));  // optimistic: at the upper end
        CHECK(res.estimate->upper == Approx(100'000.0 / e.lower * usd_per_s));  // pessimistic: at the lower end
        CHECK(res.estimate->lower <= *res.objective_value);
        CHECK(*res.objective_value <= res.estimate->upper);
        CHECK(res.estimate->samples == 3);
        dnnplan_test::check_round_trip(res);
    }
    SECTION("a blind trial: nothing bounds its speed below, so nothing bounds its cost above") {
        // (2,2) at 20 steps/s alone. (1,4), a PS fewer, is bounded above (a PS fewer never raises the
        // speed, a worker more never raises a worker's rate: 4 x 10 + 5%) but not below (fewer PS per
        // worker; one point fits nothing below): the cheapest optimistically, tried.
        r.job.configurations = {{1, 2}, {1, 4}, {2, 2}, {2, 4}};
        r.observations = {{2, 2, 20.0}};
        const elastic_result res = solved(r);
        REQUIRE(res.plan);
        CHECK(res.plan->action == elastic_action::trial);
        CHECK(res.plan->configuration() == ps_configuration{1, 4});
        CHECK(candidate(res, 1, 4).lower == 0.0);
        REQUIRE(res.estimate);
        CHECK(res.estimate->lower == Approx(100'000.0 / 42.0 * (4 * 0.9 + 0.15) / 3600.0));
        CHECK(res.estimate->upper == std::numeric_limits<double>::infinity());
        CHECK(res.estimate->samples == 1);
    }
    SECTION("max_trials reached: commit even with the choice open") {
        r.observations = {{1, 1, 10.0}};
        r.options.max_trials = 1;
        const elastic_result res = solved(r);
        REQUIRE(res.plan);
        CHECK(res.plan->action == elastic_action::commit);
        CHECK(res.estimate->samples == 1);
    }
    SECTION("a deadline nothing can meet: infeasible at once, no plan, best_effort the fastest") {
        r.observations = {{1, 1, 10.0}, {1, 2, 19.0}, {1, 4, 30.0}, {2, 4, 37.0}};
        r.job.deadline_s = 100.0;  // 100,000 steps need 2,703 s at the fastest, 37 steps/s
        const elastic_result res = solved(r);
        CHECK(res.status == solve_status::infeasible);
        CHECK_FALSE(res.plan);
        CHECK_FALSE(res.objective_value);
        CHECK_FALSE(res.bound);
        CHECK(res.figures == figure_kind::exact);
        CHECK_FALSE(res.estimate);
        REQUIRE(res.best_effort);
        CHECK(res.best_effort->configuration() == ps_configuration{2, 4});
        CHECK(res.best_effort->action == elastic_action::commit);
        CHECK(res.reason.find("upper end") != std::string::npos);
        dnnplan_test::check_round_trip(res);
    }
    SECTION("a deadline that has passed: infeasible, best_effort the fastest; nothing measured, the largest") {
        r.observations = {{1, 2, 19.0}};
        r.job.deadline_s = -30.0;
        elastic_result res = solved(r);
        CHECK(res.status == solve_status::infeasible);
        REQUIRE(res.best_effort);
        // The fastest it can count on: (2, 4), at least 4 x 9.5 - 5% = 36.1 steps/s (more workers with
        // as many PS per worker: a worker's rate never falls), against 19 for (1, 2) and (1, 4).
        CHECK(res.best_effort->configuration() == ps_configuration{2, 4});
        CHECK(res.reason.find("passed") != std::string::npos);
        r.observations.clear();
        r.job.deadline_s = 0.0;
        res = solved(r);
        CHECK(res.status == solve_status::infeasible);
        REQUIRE(res.best_effort);
        CHECK(res.best_effort->configuration() == ps_configuration{2, 4});
        CHECK(res.best_effort->action == elastic_action::commit);
    }
    SECTION("none predicted to meet the deadline, some may, no trial left: no_plan_found, best_effort") {
        // (1,1) at 10 steps/s; (1,2) untried: at least 10 (a worker more), at most 2 x 10 + 5%
        // (a worker more never raises a worker's rate), predicted 20. A deadline that needs 20.5
        // steps/s: only the upper end of (1,2) meets it, and max_trials 1 leaves no trial.
        r.job.configurations = {{1, 1}, {1, 2}};
        r.observations = {{1, 1, 10.0}};
        r.options.max_trials = 1;
        r.job.deadline_s = 100'000.0 / 20.5;
        const elastic_result res = solved(r);
        CHECK(candidate(res, 1, 2).upper > 20.5);
        CHECK(candidate(res, 1, 2).steps_per_s < 20.5);
        CHECK(res.status == solve_status::no_plan_found);
        CHECK_FALSE(res.plan);
        REQUIRE(res.best_effort);
        CHECK(res.best_effort->configuration() == ps_configuration{1, 2});
        CHECK(res.limit == search_limit::none);
        // With a trial left, it tries (1,2): the only way to learn whether it meets the deadline.
        r.options.max_trials = 5;
        const elastic_result again = solved(r);
        CHECK(again.status == solve_status::feasible);
        REQUIRE(again.plan);
        CHECK(again.plan->action == elastic_action::trial);
        CHECK(again.plan->configuration() == ps_configuration{1, 2});
    }
    SECTION("the same request gives the same plan") {
        r.observations = {{1, 2, 19.0}, {1, 4, 30.0}};
        CHECK(solved(r).plan == solved(r).plan);
    }
}

TEST_CASE("advisor: a deadline of 1 s on the V100 table: infeasible once measured, the fastest to the end",
          "[elastic][advisor][icac]") {
    // 64,000 steps in 1 s need 64,000 steps/s; the fastest configuration, (2, 8), runs 78.8. Before
    // anything is measured nothing bounds a speed: the first trial is the largest cluster. From the
    // next decision the deadline has passed and the advisor says infeasible at once, its best
    // effort the fastest, run to the end: no more trials (before: 5 trials, then the cheapest,
    // 1,697 s).
    const measurement_table t = icac_table("icac19_v100.json");
    const double fastest = *t.speed({2, 8});
    const replay_options o{.work_steps = 64'000.0, .deadline_s = 1.0};
    const replay_report report = replay(t, o, shape_checked_policy{});
    CHECK_FALSE(report.met_deadline);
    CHECK(report.trials.size() == 1);
    CHECK(report.final == ps_configuration{2, 8});
    REQUIRE(report.segments.size() == 2);
    CHECK(report.segments[1].final);
    CHECK(report.time_s == Approx(64'000.0 / fastest));
    CHECK(replay(t, o, model_policy{}).time_s == report.time_s);

    // The second decision's request: (2, 8) measured, the deadline passed.
    elastic_request second{.job = {.remaining_steps = 64'000.0 - 120.0 * fastest, .deadline_s = 1.0 - 120.0,
                                   .worker_usd_per_h = t.worker_usd_per_h, .ps_usd_per_h = t.ps_usd_per_h,
                                   .configurations = t.configurations()},
                           .observations = {{2, 8, fastest}},
                           .current = ps_configuration{2, 8}};
    const elastic_result passed = solved(second);
    CHECK(passed.status == solve_status::infeasible);
    CHECK_FALSE(passed.plan);
    REQUIRE(passed.best_effort);
    CHECK(passed.best_effort->configuration() == ps_configuration{2, 8});
    // Before the deadline passes, the bounds already say so: the measured (2, 8) bounds every
    // configuration above (each has at most as many PS and workers), at 78.8 + 5%.
    second.job.deadline_s = 1.0;
    const elastic_result bounded = solved(second);
    CHECK(bounded.status == solve_status::infeasible);
    CHECK(bounded.reason.find("upper end") != std::string::npos);
    CHECK(bounded.best_effort->configuration() == ps_configuration{2, 8});
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
                const replay_report r = replay(t, o, shape_checked_policy{});
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
