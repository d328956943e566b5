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
    dnnplan::instance_trace trace;
    trace.events = {{0, dnnplan::instance_event_kind::add, "a"},
                    {0, dnnplan::instance_event_kind::add, "b"},
                    {10'000, dnnplan::instance_event_kind::remove, "a"}};
    const dnnplan::preemption_process_variant process = dnnplan::trace_replay(trace, 10'000);
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
