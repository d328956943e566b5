// spotDNN's planner under preemptions (solve/spot_provision/preemptions.hpp): without
// preemptions it is spotDNN's plan, met with certainty; with them a plan meets q (feasible,
// estimated figures with the expected cost's interval) or none does (no_plan_found, the likeliest
// plan as best_effort); a regression test of the mix simulation; a process written in the test;
// and bad input. Every result keeps the one result shape (result_shape_violation).

#include <dnnplan/solve/spot_provision/preemptions.hpp>

#include "../../../benchmarks/problems.hpp"
#include "../../support/checks.hpp"
#include "../../support/periodic_loss.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

using dnnplan::solve_status;
using dnnplan_test::field_of;

namespace {

dnnplan::spot_resilience_request spot_request_with(double rate_per_instance_h) {
    dnnplan::spot_resilience_request r;
    r.spot.problem = dnnplan_bench::resnet110_problem();
    for (const auto& t : r.spot.problem.catalog.instances)
        r.preemption.per_type[t.name] = dnnplan::poisson_preemption{.rate_per_instance_h = rate_per_instance_h,
                                                                    .replacement_delay_ms = 120'000};
    r.preemption.samples = 60;
    return r;
}

/// A trace of two workers "a" and "b" added at 0, "a" removed at loss_ms, replayed over length_ms.
dnnplan::preemption_process_variant two_lose_one(std::int64_t loss_ms, std::int64_t length_ms) {
    dnnplan::instance_trace trace;
    trace.events = {{0, dnnplan::instance_event_kind::add, "a"},
                    {0, dnnplan::instance_event_kind::add, "b"},
                    {loss_ms, dnnplan::instance_event_kind::remove, "a"}};
    return dnnplan::trace_replay(trace, length_ms);
}

/// The planner's result, checked against the one result shape.
dnnplan::spot_resilience_result solved_spot(const dnnplan::spot_resilience_request& request) {
    auto r = dnnplan::solve(request);
    dnnplan_test::check_result_shape(r);
    return r;
}

}  // namespace

TEST_CASE("spot under preemptions: without preemptions it is spotDNN's plan, met with certainty", "[solve][resilience][spot]") {
    auto request = spot_request_with(0.0);
    const auto r = solved_spot(request);
    const auto plain = dnnplan::solve(request.spot);
    REQUIRE(plain.plan);
    REQUIRE(r.plan);
    CHECK(r.status == solve_status::feasible);
    CHECK(r.figures == dnnplan::figure_kind::estimated);
    REQUIRE(r.estimate);
    CHECK(r.estimate->samples == 60);
    CHECK(r.estimate->lower <= *r.objective_value);
    CHECK(r.estimate->upper >= *r.objective_value);
    CHECK(r.limit == dnnplan::search_limit::none);
    CHECK(r.plan->counts == plain.plan->counts);
    CHECK(r.details.p_meet_deadline == 1.0);
    CHECK(r.details.planner_runs == 1);
    // The simulated time is the model's (the same iterations at the same rate); the cost is billed
    // continuously here, per started second in spotDNN's plan.
    CHECK(*r.details.expected_training_time_s == Approx(plain.plan->prediction.training_time_s).epsilon(1e-9));
    CHECK(*r.details.expected_cost_usd == Approx(plain.plan->prediction.cost_usd).epsilon(1e-3));
}

TEST_CASE("spot under preemptions: a plan meets q and costs at least the plan without them", "[solve][resilience][spot]") {
    const auto plain = dnnplan::solve(spot_request_with(0.0).spot);
    for (const double rate : {0.5, 2.0}) {
        INFO("rate " << rate);
        const auto r = solved_spot(spot_request_with(rate));
        if (r.plan) {
            CHECK(r.status == solve_status::feasible);
            CHECK(r.figures == dnnplan::figure_kind::estimated);
            CHECK(r.objective_value == r.details.expected_cost_usd);
            CHECK(r.details.p_meet_deadline >= 0.9);
            CHECK(*r.details.expected_cost_usd >= plain.plan->prediction.cost_usd * (1.0 - 1e-3));
            CHECK(r.details.planned_deadline_s <= 2400.0);
        } else {
            CHECK(r.status == solve_status::no_plan_found);
            CHECK_THAT(r.reason, Catch::Contains("the best reached"));
            REQUIRE(r.best_effort);  // the likeliest plan simulated
            CHECK(r.details.p_meet_deadline == r.details.best_probability);
        }
        CHECK(r.details.best_probability <= 1.0);
    }
}

TEST_CASE("spot under preemptions: one of two workers added together lost before it is ready leaves the other working",
          "[solve][resilience][spot]") {
    // Regression: the lost worker's "ready" change was erased with every identical one (same
    // time, same type), so its twin never worked and the run never finished.
    const auto setup = dnnplan::make_spotdnn_setup(spot_request_with(0.0).spot);
    const dnnplan::preemption_process_variant process = two_lose_one(10'000, 10'000);
    std::vector<std::int32_t> counts(setup.catalog_index.size(), 0);
    counts[0] = 2;
    std::vector<const dnnplan::preemption_process_variant*> processes(counts.size(), nullptr);
    processes[0] = &process;
    const std::vector<double> usd_per_h(counts.size(), 1.0);
    const auto o = dnnplan::detail::spot_resilience::simulate_mix(setup.provisioner.throughput, counts, usd_per_h, 0.0,
                                                                  processes, 1000.0, 3'600'000, 1'200'000, 60'000, 0, 1);
    CHECK(std::isfinite(o.time_s));
    CHECK(o.time_s > 60.0);  // nobody works before the survivor is ready
}

TEST_CASE("spot under preemptions: the on-demand fallback moves at the last moment that meets the deadline",
          "[solve][resilience][spot]") {
    // Two workers of type 0, ready after 60 s; one is lost at 100 s for good. The fallback's mix
    // (both, on-demand) runs at r_od; the survivor alone at r1 < r_od.
    namespace ds = dnnplan::detail::spot_resilience;
    const auto setup = dnnplan::make_spotdnn_setup(spot_request_with(0.0).spot);
    const dnnplan::preemption_process_variant process = two_lose_one(100'000, 100'000'000);
    std::vector<std::int32_t> counts(setup.catalog_index.size(), 0), one = counts;
    counts[0] = 2;
    one[0] = 1;
    std::vector<const dnnplan::preemption_process_variant*> processes(counts.size(), nullptr);
    processes[0] = &process;
    const std::vector<double> usd_per_h(counts.size(), 1.0);
    const double r_od = dnnplan::asp_aggregate(setup.provisioner.throughput, std::span<const std::int32_t>(counts)).iterations_per_s;
    const double r1 = dnnplan::asp_aggregate(setup.provisioner.throughput, std::span<const std::int32_t>(one)).iterations_per_s;
    REQUIRE(r1 < r_od);
    const double iterations = 5000.0 * r_od;  // 5,000 s with both workers
    const auto run = [&](std::optional<ds::on_demand_fallback_terms> f) {
        return ds::simulate_mix(setup.provisioner.throughput, counts, usd_per_h, 0.0, processes, iterations, 100'000'000, 6'000'000,
                                60'000, 0, 1, f);
    };
    const auto spot = run(std::nullopt);
    const double done_at_loss = 40.0 * r_od;  // both worked from 60 s to 100 s
    CHECK(spot.time_s == Approx(100.0 + (iterations - done_at_loss) / r1));
    const double deadline_s = 6000.0;
    REQUIRE(spot.time_s > deadline_s);
    const ds::on_demand_fallback_terms f{.iterations_per_s = r_od, .usd_per_h = 10.0, .deadline_s = deadline_s, .ready_s = 60.0};
    const auto safe = run(f);
    CHECK(safe.time_s <= deadline_s);
    CHECK(safe.time_s == Approx(deadline_s).margin(1e-3));
    // The switch x: x + 60 + (I - done(x)) / r_od = D, done(x) = done_at_loss + r1 (x - 100).
    const double x = (deadline_s - 60.0 - (iterations - done_at_loss) / r_od - 100.0 * r1 / r_od) / (1.0 - r1 / r_od);
    CHECK(safe.cost_usd == Approx((2.0 * 100.0 + (x - 100.0)) / 3600.0 + 10.0 * (deadline_s - x) / 3600.0).epsilon(1e-7));
    // Spot as fast as on-demand never moves; a deadline on-demand cannot meet moves at once.
    const auto none_lost = ds::simulate_mix(setup.provisioner.throughput, counts, usd_per_h, 0.0,
                                            std::vector<const dnnplan::preemption_process_variant*>(counts.size(), nullptr), iterations,
                                            100'000'000, 6'000'000, 60'000, 0, 1, f);
    CHECK(none_lost.time_s == Approx(5060.0));
    CHECK(none_lost.cost_usd == Approx(2.0 * 5060.0 / 3600.0));
    auto late = f;
    late.deadline_s = 5000.0;
    const auto hopeless = run(late);
    CHECK(hopeless.time_s == Approx(5060.0));
    CHECK(hopeless.cost_usd == Approx(10.0 * 5060.0 / 3600.0));
}

TEST_CASE("spot under preemptions: with the on-demand fallback the plan meets the deadline in every run", "[solve][resilience][spot]") {
    auto request = spot_request_with(2.0);
    request.preemption.max_tightenings = 0;  // the planner's plan for the goal's deadline, simulated
    const auto plain = solved_spot(request);
    request.preemption.on_demand_fallback = true;
    const auto safe = solved_spot(request);
    CHECK(plain.details.p_meet_deadline < 1.0);  // the losses alone make some runs miss
    REQUIRE(safe.plan);
    CHECK(safe.details.p_meet_deadline == 1.0);
    REQUIRE(safe.details.expected_training_time_s);
    CHECK(*safe.details.expected_training_time_s <= request.spot.problem.goals.deadline_s);
    // The runs that move pay on-demand for the rest: dearer than spot alone, cheaper than on-demand throughout.
    request.preemption.on_demand_fallback = false;
    request.preemption.per_type.clear();
    request.spot.options.pricing = dnnplan::price_kind::on_demand;
    const auto on_demand = solved_spot(request);
    REQUIRE((safe.details.expected_cost_usd && plain.details.expected_cost_usd && on_demand.details.expected_cost_usd));
    CHECK(*safe.details.expected_cost_usd > *plain.details.expected_cost_usd);
    CHECK(*safe.details.expected_cost_usd < *on_demand.details.expected_cost_usd);
}

TEST_CASE("spot under preemptions: a preemption process written in the test goes into the planner",
          "[solve][resilience][spot][concepts]") {
    auto request = spot_request_with(0.0);
    for (auto& [name, process] : request.preemption.per_type)
        process = dnnplan::any_preemption_process(dnnplan_test::periodic_loss{600'000});
    const auto r = solved_spot(request);
    // Deterministic losses: the probability is 0 or 1, and a plan, if any, meets it with 1.
    CHECK((r.details.best_probability == 0.0 || r.details.best_probability == 1.0));
    if (r.plan) CHECK(r.details.p_meet_deadline == 1.0);
    CHECK(r.details.planner_runs >= 1);
}

TEST_CASE("spot under preemptions: malformed requests name the field", "[solve][resilience][spot][errors]") {
    auto r = spot_request_with(0.5);
    r.preemption.probability = 0.0;
    CHECK(field_of([&] { (void)dnnplan::solve(r); }) == "preemption.probability");
    r = spot_request_with(0.5);
    r.preemption.per_type["no.such.type"] = dnnplan::poisson_preemption{};
    CHECK(field_of([&] { (void)dnnplan::solve(r); }) == "preemption.per_type.no.such.type");
    r = spot_request_with(-1.0);
    CHECK_THAT(field_of([&] { (void)dnnplan::solve(r); }), Catch::StartsWith("preemption.per_type.") &&
                                                               Catch::EndsWith(".rate_per_instance_h"));
}

TEST_CASE("spot under preemptions: a q no plan meets is no_plan_found, the likeliest plan its best effort",
          "[solve][resilience][spot]") {
    auto request = spot_request_with(4.0);
    request.preemption.probability = 1.0;
    request.preemption.max_tightenings = 2;
    const auto r = solved_spot(request);
    if (r.plan) {
        CHECK(r.details.p_meet_deadline == 1.0);
    } else {
        CHECK(r.status == solve_status::no_plan_found);
        CHECK(r.limit == dnnplan::search_limit::none);
        REQUIRE(r.best_effort);
        CHECK(r.details.p_meet_deadline == r.details.best_probability);
        CHECK(r.details.planner_runs == 3);
        CHECK_THAT(r.reason, Catch::Contains("proves nothing"));
    }
}
