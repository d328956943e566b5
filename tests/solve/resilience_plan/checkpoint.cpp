// The checkpoint-restart planner (solve/resilience_plan/checkpoint.hpp). With a Poisson process:
// the interval of least E[T] and of greatest P(T <= D) against brute force over the equal splits,
// N instances at rate lambda as one at N lambda with the delays in the restart, and the statuses
// (optimal with an empty reason and its note, feasible for a local search, infeasible past the
// double range). With any other process: the model's interval and its figures estimated by
// replay, against the exact figures (a Poisson process passed as a process of one's own) and
// against a hand-computed run (a deterministic process written here). Every result keeps the
// one result shape.

#include <dnnplan/solve/resilience_plan/checkpoint.hpp>

#include "../../support/checks.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

using dnnplan::checkpoint_request;
using dnnplan::solve_status;
using dnnplan_test::field_of;

namespace {

dnnplan::poisson_preemption poisson_at(double rate_per_instance_h) { return {.rate_per_instance_h = rate_per_instance_h}; }

dnnplan::checkpoint_result solved(const checkpoint_request& r) {
    auto result = dnnplan::solve(r);
    const auto violation = dnnplan::result_shape_violation(result);
    INFO(violation.field << ": " << violation.rule);
    CHECK(!violation);
    return result;
}

/// A process of the test's own: every `period_ms`, the pool's oldest instance is lost and a new
/// one added at once; the seed is ignored (every realisation is the same).
struct periodic_checkpoint_loss {
    std::int64_t period_ms = 5'400'000;  // 1.5 h
    double preemptions_per_instance_h() const noexcept { return 3.6e6 / static_cast<double>(period_ms); }
    dnnplan::instance_trace events(std::int32_t capacity, std::int64_t horizon_ms, std::uint64_t) const {
        dnnplan::instance_trace out;
        std::int64_t next = 0, oldest = 0;
        for (std::int32_t i = 0; i < capacity; ++i) out.events.push_back({0, dnnplan::instance_event_kind::add, "n" + std::to_string(next++)});
        for (std::int64_t t = period_ms; t <= horizon_ms && capacity > 0; t += period_ms) {
            out.events.push_back({t, dnnplan::instance_event_kind::remove, "n" + std::to_string(oldest++)});
            out.events.push_back({t, dnnplan::instance_event_kind::add, "n" + std::to_string(next++)});
        }
        return out;
    }
};
static_assert(dnnplan::preemption_process<periodic_checkpoint_loss>);

}  // namespace

TEST_CASE("checkpoint planner: the interval of least E[T] is the brute-force optimum over the segment counts",
          "[solve][checkpoint]") {
    for (const double lambda : {0.02, 0.3, 1.5}) {
        const checkpoint_request r{.work_h = 50.0, .checkpoint_h = 0.1, .restart_h = 0.25, .preemption = poisson_at(lambda), .deadline_h = 70.0};
        const auto result = solved(r);
        REQUIRE(result.status == solve_status::optimal);
        REQUIRE(result.plan);
        CHECK(result.reason.empty());
        CHECK(result.figures == dnnplan::figure_kind::exact);
        CHECK(result.limit == dnnplan::search_limit::none);
        double best = std::numeric_limits<double>::infinity();
        for (int n = 1; n <= 5000; ++n) best = std::min(best, dnnplan::expected_completion_h(r.model(50.0 / n)));
        CHECK(result.plan->expected_h == Approx(best).epsilon(1e-13));
        CHECK(*result.objective_value == result.plan->expected_h);
        CHECK(*result.bound == result.plan->expected_h);
        CHECK(result.details.preemptions_per_h == lambda);
        // Any other interval is no better (partial last segments included).
        for (const double tau : {*result.details.young_interval_h, *result.details.daly_interval_h, 0.77, 3.3})
            CHECK(dnnplan::expected_completion_h(r.model(tau)) >= result.plan->expected_h * (1.0 - 1e-14));
        CHECK(result.plan->p_meet_deadline == dnnplan::completion_probability(r.model(result.plan->interval_h), 70.0).p);
        CHECK(result.details.daly_expected_h == Approx(result.plan->expected_h).epsilon(1e-12));  // W / tau is an integer
    }
    // lambda = 0 (the default process): one segment; no Young or Daly interval.
    const auto calm = solved({.work_h = 5.0, .checkpoint_h = 0.1, .deadline_h = 6.0});
    REQUIRE(calm.plan);
    CHECK(calm.status == solve_status::optimal);
    CHECK(calm.plan->segments == 1);
    CHECK(calm.plan->expected_h == Approx(5.1));
    CHECK(calm.plan->p_meet_deadline == 1.0);
    CHECK_FALSE(calm.details.young_interval_h);
    // A given interval is evaluated: optimal, nothing searched, said in the note.
    const auto given = solved({.work_h = 10.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemption = poisson_at(0.05),
                               .deadline_h = 12.0, .interval_h = 3.0});
    REQUIRE(given.plan);
    CHECK(given.status == solve_status::optimal);
    CHECK(given.reason.empty());
    CHECK(given.details.note == "interval_h was given: evaluated, not searched");
    CHECK(given.plan->segments == 4);
    CHECK(given.plan->interval_h == 3.0);
    CHECK(given.plan->expected_h == dnnplan::expected_completion_h(
                                        {.work_h = 10.0, .interval_h = 3.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.05}));
    // E[T] beyond the double range: infeasible, no plan.
    const auto hopeless = solved({.work_h = 10.0, .checkpoint_h = 0.1, .restart_h = 800.0, .preemption = poisson_at(1.0), .deadline_h = 12.0});
    CHECK(hopeless.status == solve_status::infeasible);
    CHECK_FALSE(hopeless.plan);
    CHECK_FALSE(hopeless.bound);
    CHECK_THAT(hopeless.reason, Catch::Contains("double range"));
}

TEST_CASE("checkpoint planner: the interval of greatest P(T <= D) is the brute-force optimum over the equal splits",
          "[solve][checkpoint]") {
    checkpoint_request r{.work_h = 6.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemption = poisson_at(0.4), .deadline_h = 8.0};
    r.options.objective = dnnplan::checkpoint_objective::max_deadline_probability;
    const auto result = solved(r);
    REQUIRE(result.status == solve_status::optimal);  // n_max = 20 <= 64 candidates
    REQUIRE(result.plan);
    CHECK(result.reason.empty());
    CHECK_THAT(result.details.note, Catch::Contains("n = 1..20") && Catch::Contains("none reaches more than"));
    CHECK(result.counters.evaluations == 20);
    double best = 0.0;
    for (int n = 1; n <= 25; ++n) best = std::max(best, dnnplan::completion_probability(r.model(6.0 / n), 8.0).p);
    CHECK(result.plan->p_meet_deadline == Approx(best).margin(2e-6));
    CHECK(*result.bound == *result.objective_value);
    CHECK(*result.objective_value == result.plan->p_meet_deadline);
    // A window of candidates: feasible, not proven, said in the reason.
    r.options.max_candidates = 5;
    const auto window = solved(r);
    CHECK(window.status == solve_status::feasible);
    CHECK(window.counters.evaluations == 5);
    CHECK_FALSE(window.bound);
    CHECK_THAT(window.reason, Catch::Contains("local search"));
    // The deadline below W + delta: every P is 0, proven.
    r.deadline_h = 6.05;
    const auto late = solved(r);
    REQUIRE(late.plan);
    CHECK(late.status == solve_status::optimal);
    CHECK(late.plan->p_meet_deadline == 0.0);
    CHECK(*late.bound == 0.0);
    CHECK_THAT(late.details.note, Catch::Contains("below W + delta"));
}

TEST_CASE("checkpoint planner: N Poisson instances are one at N lambda, the delays part of the restart", "[solve][checkpoint]") {
    const checkpoint_request pool{.work_h = 20.0, .checkpoint_h = 0.1, .restart_h = 0.2,
                                  .preemption = dnnplan::poisson_preemption{.rate_per_instance_h = 0.125, .replacement_delay_ms = 360'000},
                                  .instances = 4, .instance_ready_ms = 180'000, .deadline_h = 26.0};
    const checkpoint_request one{.work_h = 20.0, .checkpoint_h = 0.1, .restart_h = 0.2 + 0.1 + 0.05, .preemption = poisson_at(0.5),
                                 .deadline_h = 26.0};
    const auto a = solved(pool), b = solved(one);
    REQUIRE(a.plan);
    REQUIRE(b.plan);
    CHECK(a.details.preemptions_per_h == 0.5);
    CHECK(a.plan->segments == b.plan->segments);
    CHECK(a.plan->expected_h == Approx(b.plan->expected_h).epsilon(1e-12));
    CHECK(a.plan->p_meet_deadline == Approx(b.plan->p_meet_deadline).margin(2e-6));
}

TEST_CASE("checkpoint planner: another process is replayed, and a Poisson one replayed agrees with the exact figures",
          "[solve][checkpoint][concepts]") {
    // Without delays the replay of Poisson events is the model (lifetimes rounded up to the ms).
    const checkpoint_request exact{.work_h = 10.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemption = poisson_at(0.3), .deadline_h = 13.0};
    auto replayed = exact;
    replayed.preemption = dnnplan::any_preemption_process(poisson_at(0.3));
    replayed.options.samples = 2000;
    const auto e = solved(exact), s = solved(replayed);
    REQUIRE(e.plan);
    REQUIRE(s.plan);
    CHECK(s.status == solve_status::feasible);
    CHECK(s.figures == dnnplan::figure_kind::estimated);
    REQUIRE(s.estimate);
    CHECK(s.estimate->samples == 2000);
    CHECK_FALSE(s.bound);
    CHECK_THAT(s.reason, Catch::Contains("2000 replayed realisations"));
    CHECK(s.plan->interval_h == e.plan->interval_h);  // the model's choice at the same mean rate
    // Within 4.5 standard errors (the estimate's half width is 1.96 of them).
    const double se_t = (s.estimate->upper - s.estimate->lower) / 2.0 / 1.96;
    CHECK(std::abs(s.plan->expected_h - e.plan->expected_h) <= 4.5 * se_t);
    CHECK(s.estimate->lower <= s.plan->expected_h);
    CHECK(s.estimate->upper >= s.plan->expected_h);
    const double p = e.plan->p_meet_deadline;
    CHECK(std::abs(s.plan->p_meet_deadline - p) <= 4.5 * std::sqrt(p * (1.0 - p) / 2000.0));
    // The same request gives the same figures (seeded).
    CHECK(solved(replayed).plan == s.plan);
    // By P(T <= D): the objective and its interval are the probability's.
    replayed.options.objective = dnnplan::checkpoint_objective::max_deadline_probability;
    const auto by_p = solved(replayed);
    REQUIRE(by_p.plan);
    CHECK(*by_p.objective_value == by_p.plan->p_meet_deadline);
    CHECK(by_p.estimate->lower == Approx(std::max(0.0, by_p.plan->p_meet_deadline - by_p.plan->p_error_bound)));
}

TEST_CASE("checkpoint planner: a process written in the test gives the hand-computed run", "[solve][checkpoint][concepts]") {
    // W = 3 h in segments of 1 h + 0.1 h, R = 0.2 h; the instance lost every 1.5 h, replaced at
    // once. Segment 1 is saved at 1.1; the loss at 1.5 costs 0.4 h, the restart ends at 1.7;
    // segment 2 is saved at 2.8; the loss at 3.0 costs 0.2 h, the restart ends at 3.2; segment 3
    // is saved at 4.3.
    checkpoint_request r{.work_h = 3.0, .checkpoint_h = 0.1, .restart_h = 0.2,
                         .preemption = dnnplan::any_preemption_process(periodic_checkpoint_loss{}), .deadline_h = 5.0,
                         .interval_h = 1.0};
    r.options.samples = 10;
    const auto result = solved(r);
    REQUIRE(result.plan);
    CHECK(result.status == solve_status::feasible);
    CHECK(result.figures == dnnplan::figure_kind::estimated);
    CHECK(result.plan->expected_h == Approx(4.3));
    CHECK(result.plan->p_meet_deadline == 1.0);
    CHECK(result.estimate->upper - result.estimate->lower < 1e-12);  // every realisation is the same run
    CHECK(result.estimate->samples == 10);
    CHECK(result.details.preemptions_per_h == Approx(1.0 / 1.5));
    CHECK(result.details.young_interval_h);
    // A deadline before the run ends: P = 0.
    r.deadline_h = 4.2;
    CHECK(solved(r).plan->p_meet_deadline == 0.0);
    // A horizon before the run ends: E[T] unknown, no plan found; the interval as best_effort.
    r.deadline_h = 2.0;
    r.options.horizon_deadlines = 1.5;
    const auto cut = solved(r);
    CHECK(cut.status == solve_status::no_plan_found);
    CHECK_FALSE(cut.plan);
    REQUIRE(cut.best_effort);
    CHECK(cut.best_effort->interval_h == 1.0);
    CHECK_THAT(cut.reason, Catch::Contains("horizon"));
}

TEST_CASE("checkpoint planner: malformed input names the field", "[solve][checkpoint][errors]") {
    const checkpoint_request good{.work_h = 10.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemption = poisson_at(0.1), .deadline_h = 12.0};
    const auto with = [&](auto mutate) {
        auto r = good;
        mutate(r);
        return field_of([&] { (void)dnnplan::solve(r); });
    };
    CHECK(with([](auto& r) { r.work_h = 0.0; }) == "work_h");
    CHECK(with([](auto& r) { r.preemption = poisson_at(-0.1); }) == "preemption.rate_per_instance_h");
    CHECK(with([](auto& r) { r.preemption = poisson_at(std::nan("")); }) == "preemption.rate_per_instance_h");
    CHECK(with([](auto& r) { r.restart_h = -1.0; }) == "restart_h");
    CHECK(with([](auto& r) { r.checkpoint_h = 0.0; }) == "checkpoint_h");  // no interval: the best would be 0
    CHECK(with([](auto& r) { r.deadline_h = 0.0; }) == "deadline_h");
    CHECK(with([](auto& r) { r.instances = 0; }) == "instances");
    CHECK(with([](auto& r) { r.instance_ready_ms = -1; }) == "instance_ready_ms");
    CHECK(with([](auto& r) { r.interval_h = -2.0; }) == "interval_h");
    CHECK(with([](auto& r) { r.interval_h = 1e-15; }) == "interval_h");  // 1e16 segments
    CHECK(with([](auto& r) { r.options.probability_tolerance = 0.01; }) == "options.probability_tolerance");
    CHECK(with([](auto& r) { r.options.max_candidates = 0; }) == "options.max_candidates");
    CHECK(with([](auto& r) { r.options.objective = static_cast<dnnplan::checkpoint_objective>(7); }) == "options.objective");
    CHECK(with([](auto& r) { r.options.samples = 0; }) == "options.samples");
    CHECK(with([](auto& r) { r.options.horizon_deadlines = 0.5; }) == "options.horizon_deadlines");
}
