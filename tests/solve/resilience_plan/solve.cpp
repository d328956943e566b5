// The resilience planner (solve/resilience_plan/solve.hpp: on-demand, checkpoint-restart,
// Bamboo's redundant computation, spot with an on-demand fallback run by the deadline policy).
// Oracles: the checkpoint interval against a brute-force sweep of the equal splits, the
// redundant-computation choice and its expected cost's interval against every pipeline count
// simulated here, hand-computed on-demand figures (the spot layout's step time) and the
// fallback's without preemptions (the tick model by hand); properties: the fallback keeps every
// deadline on-demand from the start keeps, on deterministic processes and at a high rate, and on
// the bundled problem costs less than on-demand; a plan meets q and is the cheapest that does, a q
// nothing meets is no_plan_found with the likeliest configuration as best_effort, and infeasible
// only when proven. Every result keeps the one result shape (result_shape_violation).

#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/preemption/checkpoint_probability.hpp>
#include <dnnplan/preemption/checkpoint_restart.hpp>
#include <dnnplan/solve/resilience_plan/solve.hpp>

#include "../../support/checks.hpp"
#include "../../support/periodic_loss.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using dnnplan::resilience_candidate;
using dnnplan::resilience_request;
using dnnplan::resilience_strategy;
using dnnplan::solve_status;
using dnnplan_test::field_of;

/// A two-stage workload: 8 samples a step; 1.0 s a step with one pipeline, 0.6 s with two, 0.45 s
/// with three; on-demand: 2 instances at 1.0 s a step.
dnnplan::bamboo_workload_spec small_workload() {
    return {.name = "small",
            .samples_per_step = 8,
            .stages = 2,
            .local_rendezvous_ms = 5'000,
            .step_ms = {1'000, 600, 450},
            .on_demand_instances = 2,
            .on_demand_step_s = 1.0,
            .random_capacity = 0};
}

/// 3,600 steps: 1 h on on-demand; deadline 2 h; one offer preempted at `rate` per instance-hour.
resilience_request small_request(double rate_per_instance_h, double probability = 0.9) {
    resilience_request r;
    r.job = {.workload = small_workload(),
             .work_samples = 8.0 * 3600.0,
             .deadline_h = 2.0,
             .probability = probability,
             .checkpoint_h = 0.01,
             .restart_h = 0.02};
    r.offers = {{.name = "gpu.spot",
                 .spot_usd_per_h = 0.3,
                 .on_demand_usd_per_h = 1.0,
                 .speed = 1.0,
                 .max_instances = 6,
                 .preemption = dnnplan::poisson_preemption{.rate_per_instance_h = rate_per_instance_h,
                                                           .replacement_delay_ms = 60'000}}};
    r.options.samples = 60;
    return r;
}

const resilience_candidate& strategy_of(const dnnplan::resilience_result& r, resilience_strategy s) {
    for (const auto& c : r.details.strategies)
        if (c.strategy == s) return c;
    FAIL("strategy " << to_string(s) << " not reported");
    throw;  // unreachable: FAIL throws
}

/// A process of the test's own: every `period_ms`, the whole pool is lost for `outage_ms`, then
/// replaced (new names); the seed is ignored. Long outages: the fallback must wait or pay.
struct blackout {
    std::int64_t period_ms = 1'800'000;
    std::int64_t outage_ms = 900'000;
    double preemptions_per_instance_h() const noexcept { return 3.6e6 / static_cast<double>(period_ms); }
    dnnplan::instance_trace events(std::int32_t capacity, std::int64_t horizon_ms, std::uint64_t) const {
        dnnplan::instance_trace out;
        std::int64_t next = 0;
        const auto add_all = [&](std::int64_t t) {
            for (std::int32_t i = 0; i < capacity; ++i) out.events.push_back({t, dnnplan::instance_event_kind::add, "n" + std::to_string(next + i)});
        };
        add_all(0);
        for (std::int64_t t = period_ms; t <= horizon_ms; t += period_ms) {
            for (std::int32_t i = 0; i < capacity; ++i) out.events.push_back({t, dnnplan::instance_event_kind::remove, "n" + std::to_string(next + i)});
            next += capacity;
            if (t + outage_ms > horizon_ms) break;
            add_all(t + outage_ms);
        }
        return out;
    }
};
static_assert(dnnplan::preemption_process<blackout>);

/// The planner's result, checked against the one result shape.
dnnplan::resilience_result solved(const resilience_request& request) {
    auto r = dnnplan::solve(request);
    dnnplan_test::check_result_shape(r);
    return r;
}

}  // namespace

TEST_CASE("resilience: on-demand runs the spot strategies' layout, its figures exact, and it wins when spot is disabled",
          "[solve][resilience]") {
    auto request = small_request(0.5);
    request.options.checkpoint_restart = request.options.redundant_computation = request.options.spot_with_fallback = false;
    // The workload's own on-demand layout (Bamboo's baseline: 8 instances at 3 s a step) is not
    // what on-demand runs: it runs the pipeline layouts (P = 1: 2 instances at 1.0 s a step).
    request.job.workload.on_demand_instances = 8;
    request.job.workload.on_demand_step_s = 3.0;
    const auto r = solved(request);
    REQUIRE(r.status == solve_status::feasible);
    REQUIRE(r.plan);
    CHECK(r.plan->strategy == resilience_strategy::on_demand);
    CHECK(r.plan->instances == 2);
    CHECK(r.plan->pipelines == 1);
    CHECK(r.plan->p_meet_deadline == 1.0);
    CHECK(*r.plan->expected_h == Approx(1.0).epsilon(1e-12));           // 3,600 steps of 1 s
    CHECK(*r.plan->expected_usd == Approx(2.0 * 1.0 * 1.0).epsilon(1e-12));  // 2 instances x 1 h x 1 USD/h
    CHECK(*r.plan->samples_per_usd == Approx(8.0 * 3600.0 / 2.0).epsilon(1e-12));
    CHECK(r.objective_value == r.plan->expected_usd);
    CHECK_FALSE(r.bound);  // nothing is proven the best
    CHECK(r.figures == dnnplan::figure_kind::exact);
    CHECK_FALSE(r.estimate);
    CHECK(r.limit == dnnplan::search_limit::none);
    CHECK(r.reason == "exact: on-demand is not preempted");
    CHECK(r.details.simulations == 0);
    CHECK(r.counters.nodes == 3);  // P = 1, 2, 3 (P S <= 6)

    // A deadline of 0.8 h: one pipeline (1 h) misses it, two (3,600 steps of 0.6 s on 4
    // instances: 0.6 h, 4 x 0.6 x 1 USD) meet it, three cost more (6 x 0.45 = 2.7 USD).
    request.job.deadline_h = 0.8;
    const auto two = solved(request);
    REQUIRE(two.plan);
    CHECK(two.plan->pipelines == 2);
    CHECK(two.plan->instances == 4);
    CHECK(*two.plan->expected_h == Approx(0.6).epsilon(1e-12));
    CHECK(*two.plan->expected_usd == Approx(2.4).epsilon(1e-12));
}

TEST_CASE("resilience: the checkpoint interval is the best of a brute-force sweep of equal splits", "[solve][resilience]") {
    auto request = small_request(0.5);
    request.options.redundant_computation = request.options.spot_with_fallback = false;
    const auto r = solved(request);
    const auto& cr = strategy_of(r, resilience_strategy::checkpoint_restart);
    REQUIRE(cr.checkpoint_interval_h);
    // The planner's model: the job's 2 instances, any loss interrupting it (rate 2 lambda), a
    // restart of R + the replacement delay + an instance's readiness.
    const double restart_h = 0.02 + (60'000.0 + 45'000.0) / 3.6e6;
    double best = 0.0;
    for (std::int64_t n = 1; n <= 400; ++n) {
        const dnnplan::checkpoint_restart_model m{.work_h = 1.0, .interval_h = 1.0 / static_cast<double>(n),
                                                  .checkpoint_h = 0.01, .restart_h = restart_h, .preemptions_per_h = 1.0};
        best = std::max(best, dnnplan::completion_probability(m, 2.0, 1e-6).p);
    }
    CHECK(cr.p_meet_deadline == Approx(best).margin(2e-4));  // the planner asks for a 1e-4 error bound
    CHECK(cr.instances == 2);
    CHECK(*cr.expected_usd == Approx(*cr.expected_h * 2.0 * 0.3).epsilon(1e-12));  // spot price while it runs
    REQUIRE(cr.time_h.lower);
    CHECK(*cr.time_h.lower <= *cr.expected_h);
    REQUIRE(cr.time_h.upper);
    CHECK(*cr.time_h.upper >= *cr.expected_h);
}

TEST_CASE("resilience: redundant computation picks the cheapest pipeline count meeting q, as simulated here",
          "[solve][resilience]") {
    auto request = small_request(0.3);
    request.options.checkpoint_restart = request.options.spot_with_fallback = false;
    const auto r = solved(request);
    // The oracle: every pipeline count the quota allows (P S <= 6: P = 1..3), each simulated on
    // the same realisations, the cheapest mean cost among those meeting q.
    const double deadline_h = request.job.deadline_h;
    const auto deadline_ms = static_cast<std::int64_t>(std::ceil(deadline_h * 3.6e6));
    const std::int64_t horizon_ms = 3 * deadline_ms;
    std::optional<std::pair<std::int32_t, double>> cheapest;
    double cheapest_half_width = 0.0;
    for (std::int32_t pipelines = 1; pipelines <= 3; ++pipelines) {
        dnnplan::bamboo_options b;
        b.workload = small_workload();
        b.duration_ms = horizon_ms;
        b.target_steps = 3600;
        b.instance_creation_ms = 45'000;
        b.spot_usd_per_h = 0.3;
        b.on_demand_usd_per_h = 1.0;
        b.beyond_table = dnnplan::beyond_step_table::use_last_row;
        double met = 0.0, usd = 0.0, usd_squares = 0.0;
        bool all_done = true;
        for (std::int32_t k = 0; k < request.options.samples; ++k) {
            const auto events = dnnplan::detail::sampling::realisation(request.offers[0].preemption, 2 * pipelines, horizon_ms,
                                                                       deadline_ms, k, request.options.samples);
            const auto run = dnnplan::simulate_bamboo(events, b);
            const bool done = run.status == dnnplan::bamboo_status::completed && run.steps >= 3600;
            all_done = all_done && done;
            met += done && run.end_h <= deadline_h ? 1.0 : 0.0;
            usd += done ? run.usd_per_h * run.end_h : 0.0;
            usd_squares += done ? run.usd_per_h * run.end_h * run.usd_per_h * run.end_h : 0.0;
        }
        const double n = request.options.samples;
        const double p = met / n;
        if (all_done && p >= 0.9 && (!cheapest || usd / n < cheapest->second)) {
            cheapest = std::pair{pipelines, usd / n};
            // mean +- 1.96 s / sqrt(n), s the sample standard deviation.
            cheapest_half_width = 1.96 * std::sqrt((usd_squares - usd * usd / n) / (n - 1.0) / n);
        }
    }
    REQUIRE(cheapest);
    const auto& rc = strategy_of(r, resilience_strategy::redundant_computation);
    CHECK(rc.pipelines == cheapest->first);
    CHECK(*rc.expected_usd == Approx(cheapest->second).epsilon(1e-12));
    // And the plan is the cheaper of it and on-demand (2 USD).
    REQUIRE(r.plan);
    if (cheapest->second < 2.0) {
        CHECK(r.plan->strategy == resilience_strategy::redundant_computation);
        CHECK(r.plan->pipelines == cheapest->first);
        // Estimated figures: the expected cost's 95% interval over the 60 runs.
        CHECK(r.status == solve_status::feasible);
        CHECK(r.figures == dnnplan::figure_kind::estimated);
        REQUIRE(r.estimate);
        CHECK(r.estimate->samples == 60);
        CHECK(r.estimate->confidence_prob == 0.95);
        CHECK(r.estimate->lower == Approx(cheapest->second - cheapest_half_width).epsilon(1e-9));
        CHECK(r.estimate->upper == Approx(cheapest->second + cheapest_half_width).epsilon(1e-9));
    } else {
        CHECK(r.plan->strategy == resilience_strategy::on_demand);
    }
    CHECK(r.details.simulations == 3 * request.options.samples);
}

TEST_CASE("resilience: the plan meets q and is the cheapest strategy that does; the others say why they lost",
          "[solve][resilience]") {
    for (const double rate : {0.05, 0.5, 2.0}) {
        INFO("rate " << rate);
        const auto r = solved(small_request(rate));
        REQUIRE(r.plan);
        CHECK(r.status == solve_status::feasible);
        CHECK(r.limit == dnnplan::search_limit::none);
        CHECK_FALSE(r.best_effort);
        const bool exact = r.plan->strategy == resilience_strategy::on_demand || r.plan->strategy == resilience_strategy::checkpoint_restart;
        CHECK(r.figures == (exact ? dnnplan::figure_kind::exact : dnnplan::figure_kind::estimated));
        CHECK(r.estimate.has_value() == !exact);
        CHECK(r.plan->meets_probability);
        CHECK(r.plan->p_meet_deadline >= 0.9);
        CHECK(r.details.strategies.size() == 4);
        for (const auto& c : r.details.strategies) {
            INFO(to_string(c.strategy) << ": " << c.note);
            if (c.meets_probability && c.expected_usd) CHECK(*r.plan->expected_usd <= *c.expected_usd);
            if (c.strategy != r.plan->strategy) CHECK_THAT(c.note, Catch::Contains("lost:"));
            CHECK(r.details.best_probability >= c.p_meet_deadline);
        }
    }
}

TEST_CASE("resilience: the fallback keeps the deadline whenever on-demand alone can, whatever the preemptions",
          "[solve][resilience]") {
    // Preemptions so frequent that a gang on spot is rarely whole for long: the deadline policy's
    // safety net moves to on-demand in time on every run (on-demand from the start needs at most
    // 1 h of steps and a changeover of 153 s of the 2 h).
    auto request = small_request(6.0);
    request.options.checkpoint_restart = request.options.redundant_computation = false;
    const auto r = solved(request);
    const auto& fb = strategy_of(r, resilience_strategy::spot_with_fallback);
    CHECK(fb.p_meet_deadline == 1.0);
    REQUIRE(fb.time_h.upper);
    CHECK(*fb.time_h.upper <= 2.0 + 1e-9);
    // What it costs is bounded: every tick up to the deadline billed at most at the on-demand
    // price of its P S instances.
    REQUIRE(fb.expected_usd);
    REQUIRE(fb.usd.upper);
    CHECK(*fb.usd.upper <= 2.0 * fb.instances * 1.0 + 1e-9);
    REQUIRE(r.plan);
    if (r.plan->strategy != resilience_strategy::spot_with_fallback) CHECK_THAT(fb.note, Catch::Contains("lost:"));
}

TEST_CASE("resilience: the quota bounds every strategy's pipelines; checkpoint-restart needs the workload's on-demand layout within it",
          "[solve][resilience]") {
    auto request = small_request(0.3);
    request.job.workload.on_demand_instances = 8;  // the workload's on-demand layout: over the quota of 6
    auto r = solved(request);
    std::vector<resilience_strategy> seen;
    for (const auto& c : r.details.strategies) seen.push_back(c.strategy);
    CHECK(seen == std::vector<resilience_strategy>{resilience_strategy::on_demand, resilience_strategy::redundant_computation,
                                                   resilience_strategy::spot_with_fallback});
    // P = 1..3 pipelines of 2 fit: three on-demand candidates, and per P a Bamboo run and a
    // deadline-policy run on each realisation.
    CHECK(r.details.simulations == 3 * 2 * request.options.samples);
    CHECK(r.counters.nodes == 3 * 3);
    request.offers[0].max_instances = 3;  // one pipeline
    r = solved(request);
    CHECK(r.details.simulations == 2 * request.options.samples);
    for (const auto& c : r.details.strategies) CHECK(c.instances == 2);
}

TEST_CASE("resilience: without preemptions the fallback runs spot throughout: the work and one changeover, in whole ticks",
          "[solve][resilience]") {
    // The tick model by hand: 3,600 steps of 1 s on one pipeline (2 instances); a changeover of
    // delta + R + r = 0.03 h + 45 s = 153 s; so 3,753 s, 63 ticks of 60 s = 1.05 h, every tick
    // billed on spot: 1.05 h x 2 x 0.3 USD = 0.63 USD, on every run.
    auto request = small_request(0.0);
    request.job.deadline_h = 1.5;
    request.offers[0].max_instances = 2;
    request.options.checkpoint_restart = false;
    const auto r = solved(request);
    const auto& fb = strategy_of(r, resilience_strategy::spot_with_fallback);
    CHECK(fb.pipelines == 1);
    CHECK(fb.p_meet_deadline == 1.0);
    REQUIRE(fb.expected_h);
    CHECK(*fb.expected_h == Approx(1.05).epsilon(1e-12));
    CHECK(*fb.expected_usd == Approx(0.63).epsilon(1e-12));
    CHECK(fb.time_h.lower == fb.time_h.upper);
    CHECK_THAT(fb.note, Catch::Contains("default deadline policy on 60 s ticks"));
    // A coarser tick: 3,753 s in ticks of 600 s is 7 ticks, 4,200 s.
    request.options.fallback_tick_s = 600.0;
    const auto coarse = strategy_of(solved(request), resilience_strategy::spot_with_fallback);
    CHECK(*coarse.expected_h == Approx(4200.0 / 3600.0).epsilon(1e-12));
}

TEST_CASE("resilience: on deterministic processes the fallback never misses a deadline on-demand from the start meets",
          "[solve][resilience]") {
    // On-demand from the start, in the tick model: the work (3,600 s) and one changeover (153 s)
    // in whole ticks: 3,780 s = 1.05 h. Every deadline from there on is met on every run, whatever
    // the outages; below it the fallback is proven unable (its work and a changeover).
    for (const bool long_outages : {false, true}) {
        for (const double deadline_h : {1.05, 1.06, 1.1, 1.25, 1.5, 2.0, 3.0}) {
            INFO((long_outages ? "blackouts of 15 min every 30 min" : "one instance lost every 30 min") << ", D = " << deadline_h << " h");
            auto request = small_request(0.0, 1.0);
            request.offers[0].preemption = long_outages ? dnnplan::any_preemption_process(blackout{})
                                                        : dnnplan::any_preemption_process(dnnplan_test::periodic_loss{});
            request.offers[0].max_instances = 2;
            request.job.deadline_h = deadline_h;
            request.options.checkpoint_restart = request.options.redundant_computation = false;
            request.options.samples = 3;
            const auto r = solved(request);
            const auto& fb = strategy_of(r, resilience_strategy::spot_with_fallback);
            CHECK(fb.p_meet_deadline == 1.0);
            REQUIRE(fb.time_h.upper);
            CHECK(*fb.time_h.upper <= deadline_h + 1e-12);
            // Never dearer than the layout on on-demand for the whole deadline.
            CHECK(*fb.usd.upper <= deadline_h * 2 * 1.0 + 1e-12);
        }
    }
    auto request = small_request(0.0, 1.0);
    request.offers[0].preemption = dnnplan::any_preemption_process(blackout{});
    request.offers[0].max_instances = 2;
    request.job.deadline_h = 1.04;  // on-demand's 1 h of steps meets it; with a changeover nothing can
    request.options.checkpoint_restart = false;
    const auto r = solved(request);
    CHECK(strategy_of(r, resilience_strategy::on_demand).p_meet_deadline == 1.0);
    CHECK(strategy_of(r, resilience_strategy::spot_with_fallback).p_meet_deadline == 0.0);
}

TEST_CASE("resilience: on the bundled problem the fallback costs less than on-demand and keeps the deadline",
          "[solve][resilience]") {
    // examples/data/resilience_gpt2_p3.json: GPT-2 on the p3 trace, 200,000 samples within 6 h.
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/bamboo/p3-trace.csv");
    REQUIRE(in);
    resilience_request request;
    request.job = {.workload = dnnplan::bamboo_workload_preset(dnnplan::bamboo_workload::gpt2),
                   .work_samples = 200'000,
                   .deadline_h = 6.0,
                   .probability = 0.9,
                   .checkpoint_h = 0.05,
                   .restart_h = 0.1};
    request.offers = {{.name = "p3.2xlarge", .spot_usd_per_h = 0.91, .on_demand_usd_per_h = 3.06, .max_instances = 32,
                       .preemption = dnnplan::trace_replay(dnnplan::parse_instance_trace(in))}};
    const auto r = solved(request);
    const auto& od = strategy_of(r, resilience_strategy::on_demand);
    const auto& fb = strategy_of(r, resilience_strategy::spot_with_fallback);
    // On-demand: one pipeline of 12 instances, 6,250 steps of 1.2 s: 7,500 s, 12 x 3.06 USD/h.
    CHECK(od.instances == 12);
    CHECK(*od.expected_usd == Approx(7500.0 / 3600.0 * 12 * 3.06).epsilon(1e-12));
    CHECK(fb.p_meet_deadline == 1.0);
    REQUIRE(fb.expected_usd);
    CHECK(*fb.expected_usd < *od.expected_usd);
    REQUIRE(r.plan);
    CHECK(*r.plan->expected_usd <= *fb.expected_usd);
}

TEST_CASE("resilience: a q nothing is estimated to meet is no_plan_found, the likeliest configuration its best effort",
          "[solve][resilience]") {
    // Half an hour, at most two pipelines: on-demand needs 1 h or 0.6 h; checkpoint-restart runs
    // the workload's faster on-demand layout (0.3 h of steps) under Bamboo's random mode, so only
    // some of its runs make it, and q = 1 asks for all of them. Not a Poisson process: its P is
    // an estimate of the process, which proves nothing.
    auto request = small_request(1.0, 1.0);
    request.job.deadline_h = 0.5;
    request.job.workload.on_demand_step_s = 0.3;
    request.offers[0].max_instances = 4;
    request.offers[0].preemption = dnnplan::bamboo_random_process{.options = {.removal_probability = 0.5}};
    const auto r = solved(request);
    CHECK(r.status == solve_status::no_plan_found);
    CHECK(r.limit == dnnplan::search_limit::none);
    CHECK_FALSE(r.plan);
    CHECK_FALSE(r.objective_value);
    INFO("best probability " << r.details.best_probability);
    CHECK(r.details.best_probability > 0.0);
    CHECK(r.details.best_probability < 1.0);
    CHECK_THAT(r.reason, Catch::Contains("no configuration meets the deadline with probability 1") &&
                             Catch::Contains("proves nothing"));
    double best = 0.0;
    for (const auto& c : r.details.strategies) best = std::max(best, c.p_meet_deadline);
    CHECK(r.details.best_probability == best);
    REQUIRE(r.best_effort);
    CHECK(r.best_effort->p_meet_deadline == best);
    CHECK(r.plan_to_run() == r.best_effort);
    CHECK(strategy_of(r, resilience_strategy::on_demand).p_meet_deadline == 0.0);
}

TEST_CASE("resilience: infeasible only when proven: every configuration's time without preemptions is over the deadline",
          "[solve][resilience]") {
    // 0.4 h: on-demand needs 1 h; the fastest row (0.45 s a step) 0.45 h; checkpoint-restart at
    // least 1 h + a checkpoint. Nothing can meet it, whatever the preemptions.
    auto request = small_request(0.2);
    request.job.deadline_h = 0.4;
    const auto r = solved(request);
    CHECK(r.status == solve_status::infeasible);
    CHECK(r.limit == dnnplan::search_limit::none);
    CHECK_FALSE(r.plan);
    CHECK_FALSE(r.bound);
    CHECK_THAT(r.reason, Catch::Contains("proven"));
    CHECK(r.details.best_probability == 0.0);
    CHECK(r.best_effort);
    // On-demand alone over the deadline is a proof too (its figures are exact): one pipeline, 1 h.
    request.options.checkpoint_restart = request.options.redundant_computation = request.options.spot_with_fallback = false;
    request.offers[0].max_instances = 2;
    request.job.deadline_h = 0.9;
    CHECK(solved(request).status == solve_status::infeasible);
    // ... but not with redundant computation, whose runs are bounded by the fastest row only:
    // no_plan_found.
    request.options.redundant_computation = true;
    request.job.probability = 1.0;
    CHECK(solved(request).status != solve_status::infeasible);
}

TEST_CASE("resilience: the simulation budget ends the comparison with a status", "[solve][resilience]") {
    auto request = small_request(0.5);
    request.options.budget.max_evaluations = 150;  // one pipeline count (60 Bamboo and 60 policy runs), not two
    const auto r = solved(request);
    CHECK((r.status == solve_status::feasible || r.status == solve_status::no_plan_found));
    CHECK(r.limit == dnnplan::search_limit::samples);
    CHECK(r.details.simulations == 120);
    CHECK(r.counters.evaluations == 120);
    CHECK_THAT(r.reason, Catch::StartsWith("the budget ended the comparison") && Catch::Contains("max_evaluations = 150"));
}

TEST_CASE("resilience: the configuration and time budgets end the comparison with a status too", "[solve][resilience]") {
    auto request = small_request(0.5);
    request.options.budget.max_nodes = 1;  // on-demand on one pipeline only
    auto r = solved(request);
    CHECK(r.status == solve_status::feasible);
    CHECK(r.limit == dnnplan::search_limit::nodes);
    CHECK(r.counters.nodes == 1);
    REQUIRE(r.plan);
    CHECK(r.plan->strategy == resilience_strategy::on_demand);
    CHECK_THAT(r.reason, Catch::StartsWith("the budget ended the comparison"));
    request.options.budget = {.max_nodes = 0, .max_evaluations = 0, .max_time_s = 1e-9};
    r = solved(request);
    CHECK(r.status == solve_status::no_plan_found);
    CHECK(r.limit == dnnplan::search_limit::time);
    CHECK_FALSE(r.best_effort);  // nothing evaluated
    CHECK(r.details.simulations == 0);
}

TEST_CASE("resilience: progress is reported after each simulated run, against the runs planned", "[solve][resilience]") {
    // Quota 6, 2 stages: pipeline counts 1 to 3 (the table's rows), 60 Bamboo and 60 policy runs
    // each: 360 planned. A budget of 150 runs stops after one count: 120 reports, all of 360.
    auto request = small_request(0.5);
    std::vector<std::pair<std::int64_t, std::int64_t>> seen;
    const auto whole = dnnplan::solve(request, [&](std::int64_t done, std::int64_t total) { seen.emplace_back(done, total); });
    REQUIRE(seen.size() == 360);
    for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == std::pair<std::int64_t, std::int64_t>{static_cast<std::int64_t>(i) + 1, 360});
    CHECK(whole.details == dnnplan::solve(request).details);  // reporting changes nothing
    request.options.budget.max_evaluations = 150;
    seen.clear();
    (void)dnnplan::solve(request, [&](std::int64_t done, std::int64_t total) { seen.emplace_back(done, total); });
    CHECK(seen.size() == 120);
    CHECK(seen.back() == std::pair<std::int64_t, std::int64_t>{120, 360});
}

TEST_CASE("resilience: the same request gives the same result", "[solve][resilience]") {
    const auto a = solved(small_request(0.5));
    const auto b = solved(small_request(0.5));
    CHECK(a.status == b.status);
    CHECK(a.plan == b.plan);
    CHECK(a.details == b.details);
    CHECK(a.counters.evaluations == b.counters.evaluations);
}

TEST_CASE("resilience: a preemption process written in the test goes into the planner", "[solve][resilience][concepts]") {
    auto request = small_request(0.5);
    request.offers[0].preemption = dnnplan::any_preemption_process(dnnplan_test::periodic_loss{});
    request.options.checkpoint_restart = false;
    const auto r = solved(request);
    REQUIRE(r.plan);
    // The process is deterministic: every realisation is the same run, so P is 0 or 1 and the
    // interval has no width.
    const auto& rc = strategy_of(r, resilience_strategy::redundant_computation);
    CHECK((rc.p_meet_deadline == 0.0 || rc.p_meet_deadline == 1.0));
    REQUIRE(rc.time_h.lower);
    REQUIRE(rc.time_h.upper);
    CHECK(*rc.time_h.lower == *rc.time_h.upper);
    const auto& fb = strategy_of(r, resilience_strategy::spot_with_fallback);
    REQUIRE(fb.time_h.lower);
    CHECK(fb.time_h.lower == fb.time_h.upper);
    // What it did is what the simulation of its events gives.
    dnnplan::bamboo_options b;
    b.workload = small_workload();
    b.duration_ms = 3 * 7'200'000;
    b.target_steps = 3600;
    b.spot_usd_per_h = 0.3;
    b.on_demand_usd_per_h = 1.0;
    b.beyond_table = dnnplan::beyond_step_table::use_last_row;
    const auto run = dnnplan::simulate_bamboo(dnnplan_test::periodic_loss{}.events(2 * rc.pipelines, 3 * 7'200'000, 1), b);
    CHECK(*rc.expected_h == Approx(run.end_h).epsilon(1e-12));
    CHECK(*rc.expected_usd == Approx(run.usd_per_h * run.end_h).epsilon(1e-12));
}

TEST_CASE("resilience: malformed requests name the field", "[solve][resilience][errors]") {
    auto r = small_request(0.5);
    r.job.probability = 0.0;
    CHECK(field_of([&] { (void)dnnplan::solve(r); }) == "job.probability");
    r = small_request(0.5);
    r.job.probability = 1.5;
    CHECK(field_of([&] { (void)dnnplan::solve(r); }) == "job.probability");
    r = small_request(-0.5);
    CHECK(field_of([&] { (void)dnnplan::solve(r); }) == "offers[0].preemption.rate_per_instance_h");
    r = small_request(0.5);
    r.offers.clear();
    CHECK(field_of([&] { (void)dnnplan::solve(r); }) == "offers");
    r = small_request(0.5);
    r.job.workload.step_ms.clear();
    CHECK(field_of([&] { (void)dnnplan::solve(r); }) == "job.workload.step_ms");
    r = small_request(0.5);
    r.options.samples = 0;
    CHECK(field_of([&] { (void)dnnplan::solve(r); }) == "options.samples");
    r = small_request(0.5);
    r.options.fallback_tick_s = 0.5;
    CHECK(field_of([&] { (void)dnnplan::solve(r); }) == "options.fallback_tick_s");
    r = small_request(0.5);
    r.job.deadline_h = std::numeric_limits<double>::quiet_NaN();
    CHECK(field_of([&] { (void)dnnplan::solve(r); }) == "job.deadline_h");
}
