// Checkpoint-restart (issue 12, section 3): Young's and Daly's intervals, the exact mean against
// Daly's formula, P(T <= D) against an independent event-by-event simulation, the limits, the
// interval search against brute force, the trace replay on a hand-made trace, and bad input.

#include <dnnplan/preemption/checkpoint_restart.hpp>

#include "../support/checks.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using dnnplan::checkpoint_restart_model;
using dnnplan_test::field_of;

namespace {

/// One job simulated event by event: each segment attempt draws the time to the next preemption;
/// a preemption before the attempt ends costs the time so far and then restart attempts, each
/// drawing its own time to the next preemption, until one lasts R. Independent of the header's
/// formulas (only the model's definition is shared).
struct job_simulator {
    checkpoint_restart_model m;
    std::mt19937_64 rng;

    double exponential() {
        const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
        return -std::log1p(-u) / m.preemptions_per_h;
    }
    double run() {
        const double w = m.work_h, tau = m.interval_h;
        double t = 0.0, left = w;
        while (left > 1e-12 * w) {
            const double work = std::min(tau, left);
            const double need = work + m.checkpoint_h;
            while (true) {
                const double f = exponential();
                if (f >= need) break;
                t += f;
                while (true) {  // restart, interruptible
                    const double g = exponential();
                    if (g >= m.restart_h) break;
                    t += g;
                }
                t += m.restart_h;
            }
            t += need;
            left -= work;
        }
        return t;
    }
};

std::vector<double> simulate(const checkpoint_restart_model& m, int runs, std::uint64_t seed) {
    job_simulator sim{m, std::mt19937_64(seed)};
    std::vector<double> times(static_cast<std::size_t>(runs));
    for (auto& t : times) t = sim.run();
    std::sort(times.begin(), times.end());
    return times;
}

double empirical_cdf(const std::vector<double>& sorted, double d) {
    return static_cast<double>(std::upper_bound(sorted.begin(), sorted.end(), d) - sorted.begin()) /
           static_cast<double>(sorted.size());
}

/// The issue's formula, written out again.
double issue_formula(double w, double tau, double delta, double r, double lambda) {
    return std::exp(lambda * r) / lambda * (std::exp(lambda * (tau + delta)) - 1.0) * w / tau;
}

}  // namespace

TEST_CASE("Young's and Daly's intervals: hand-computed values and Daly's published optima", "[preemption][checkpoint]") {
    // sqrt(2 * 5 min * 24 h) = sqrt(2 * (1/12) * 24) = 2 h.
    CHECK(dnnplan::young_interval_h(5.0 / 60.0, 24.0) == Approx(2.0));
    CHECK(dnnplan::young_interval_h(0.5, 8.0) == Approx(std::sqrt(8.0)));
    // delta = 1, M = 2: x = 1/4, 2 * (1 + 0.5/3 + 0.25/9) - 1 = 1.3888...
    CHECK(dnnplan::daly_interval_h(1.0, 2.0) == Approx(2.0 * (1.0 + 0.5 / 3.0 + 0.25 / 9.0) - 1.0));
    CHECK(dnnplan::daly_interval_h(1.0, 2.0) == Approx(1.3888888888888888));
    CHECK(dnnplan::daly_interval_h(5.0, 2.0) == 2.0);  // delta >= 2M: M
    CHECK(dnnplan::daly_interval_h(4.0, 2.0) == 2.0);
    // Daly 2006, figures 3-5: delta = 5 min, M = 24 h, 6 h, 15 min: tau_opt = 117, 57, 9.1 min.
    CHECK(dnnplan::daly_interval_h(5.0 / 60.0, 24.0) * 60.0 == Approx(117.0).margin(0.5));
    CHECK(dnnplan::daly_interval_h(5.0 / 60.0, 6.0) * 60.0 == Approx(57.0).margin(0.5));
    CHECK(dnnplan::daly_interval_h(5.0 / 60.0, 0.25) * 60.0 == Approx(9.1).margin(0.05));
    // The exact minimiser of Daly's E[T] (Lambert W): (1 - v) e^v = e^{-lambda delta}, v = lambda tau.
    for (const double lambda : {1.0 / 24.0, 1.0 / 6.0, 4.0, 0.01}) {
        const double delta = 5.0 / 60.0;
        const double tau = dnnplan::continuous_optimal_interval_h(delta, lambda);
        const double v = lambda * tau;
        CHECK((1.0 - v) * std::exp(v) == Approx(std::exp(-lambda * delta)).epsilon(1e-12));
        // Daly's estimate is close to it while delta << M (his figure 2: well under 1 % there).
        if (lambda * delta < 0.02) CHECK(dnnplan::daly_interval_h(delta, 1.0 / lambda) == Approx(tau).epsilon(2e-3));
        // ... and it is the minimum of the formula.
        const auto e = [&](double t) { return issue_formula(100.0, t, delta, 0.1, lambda); };
        CHECK(e(tau) < e(tau * 1.01));
        CHECK(e(tau) < e(tau * 0.99));
    }
}

TEST_CASE("the exact mean is Daly's formula when W / tau is an integer, the renewal sum otherwise", "[preemption][checkpoint]") {
    const checkpoint_restart_model m{.work_h = 100.0, .interval_h = 2.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.05};
    CHECK(dnnplan::daly_expected_completion_h(m) == Approx(issue_formula(100.0, 2.0, 0.1, 0.2, 0.05)).epsilon(1e-14));
    CHECK(dnnplan::expected_completion_h(m) == Approx(issue_formula(100.0, 2.0, 0.1, 0.2, 0.05)).epsilon(1e-13));
    // 10 / 0.1 = 100.00000000000001 in doubles: still 100 segments.
    auto fine = m;
    fine.work_h = 10.0;
    fine.interval_h = 0.1;
    CHECK(dnnplan::split_work(10.0, 0.1).count == 100);
    CHECK(dnnplan::expected_completion_h(fine) == Approx(issue_formula(10.0, 0.1, 0.1, 0.2, 0.05)).epsilon(1e-12));
    // W = 10, tau = 3: 3 segments of 3 h and one of 1 h, each with its checkpoint.
    auto partial = m;
    partial.work_h = 10.0;
    partial.interval_h = 3.0;
    const auto seg = [&](double s) { return std::exp(0.05 * 0.2) * (std::exp(0.05 * s) - 1.0) / 0.05; };
    CHECK(dnnplan::split_work(10.0, 3.0).count == 4);
    CHECK(dnnplan::split_work(10.0, 3.0).last_work_h == Approx(1.0));
    CHECK(dnnplan::expected_completion_h(partial) == Approx(3.0 * seg(3.1) + seg(1.1)).epsilon(1e-13));
    CHECK(dnnplan::daly_expected_completion_h(partial) == Approx(seg(3.1) * 10.0 / 3.0));
    CHECK(dnnplan::no_failure_time_h(partial) == Approx(10.0 + 4 * 0.1));

    // The mean against the simulation: within 4.5 standard errors of the sample mean.
    const checkpoint_restart_model sim{.work_h = 7.5, .interval_h = 2.0, .checkpoint_h = 0.25, .restart_h = 0.5, .preemptions_per_h = 0.4};
    const auto times = simulate(sim, 100'000, 7);
    double sum = 0.0, sq = 0.0;
    for (const double t : times) sum += t, sq += t * t;
    const double mean = sum / static_cast<double>(times.size());
    const double se = std::sqrt((sq / static_cast<double>(times.size()) - mean * mean) / static_cast<double>(times.size()));
    CHECK(std::abs(dnnplan::expected_completion_h(sim) - mean) < 4.5 * se);
}

TEST_CASE("P(T <= D) agrees with an event-by-event simulation", "[preemption][checkpoint]") {
    // Dvoretzky-Kiefer-Wolfowitz: the empirical CDF of M runs is within eps of the true one at
    // every D at once, except with probability 2 exp(-2 M eps^2): 8e-5 for M = 120,000 and
    // eps = 0.0065; 1.1e-4 for 100,000 and 0.007; 3.4e-4 for 15,000 and 0.017. The runs are seeded, so
    // the test is deterministic; the tolerance adds P's own error bound (<= 1e-8).
    struct config {
        checkpoint_restart_model m;
        int runs;
        double eps;
    };
    const std::vector<config> configs{
        // 20 segments, lambda (tau + delta) = 0.33: about 8 preemptions per job.
        {{.work_h = 20.0, .interval_h = 1.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.3}, 120'000, 0.0065},
        // A last partial segment (4 segments: 2, 2, 2, 1.5 h of work) and long restarts.
        {{.work_h = 7.5, .interval_h = 2.0, .checkpoint_h = 0.25, .restart_h = 0.5, .preemptions_per_h = 0.4}, 100'000, 0.007},
        // 40 segments, lambda (tau + delta) = 2.1: about 290 preemptions per job.
        {{.work_h = 40.0, .interval_h = 1.0, .checkpoint_h = 0.05, .restart_h = 0.1, .preemptions_per_h = 2.0}, 15'000, 0.017},
    };
    std::uint64_t seed = 11;
    for (const auto& [m, runs, eps] : configs) {
        const auto times = simulate(m, runs, seed++);
        const double t0 = dnnplan::no_failure_time_h(m);
        std::vector<double> deadlines{t0 - 0.01, t0 + 1e-9, t0 + 0.5 * m.restart_h};
        for (const double q : {0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98})
            deadlines.push_back(times[static_cast<std::size_t>(q * static_cast<double>(times.size()))]);
        for (const double d : deadlines) {
            const auto p = dnnplan::completion_probability(m, d, 1e-8);
            INFO("work " << m.work_h << ", lambda " << m.preemptions_per_h << ", D = " << d);
            CHECK(p.error_bound <= 1e-8);
            CHECK(std::abs(p.p - empirical_cdf(times, d)) <= eps + p.error_bound);
        }
    }
}

TEST_CASE("P(T <= D) at the edges: below the no-failure time, within a restart of it, far above, lambda -> 0", "[preemption][checkpoint]") {
    const checkpoint_restart_model m{.work_h = 20.0, .interval_h = 1.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.3};
    const double t0 = 22.0;
    CHECK(dnnplan::no_failure_time_h(m) == Approx(t0));
    // Below W + n delta: 0 exactly.
    const auto below = dnnplan::completion_probability(m, t0 - 1e-9);
    CHECK(below.p == 0.0);
    CHECK(below.error_bound == 0.0);
    // Any preemption costs at least R: on [t0, t0 + R] P is the no-preemption probability.
    for (const double d : {t0, t0 + 0.1, t0 + 0.2}) {
        const auto p = dnnplan::completion_probability(m, d);
        CHECK(p.p == Approx(std::exp(-0.3 * t0)).epsilon(1e-12));
        CHECK(p.error_bound == 0.0);
    }
    // Far above: 1 within the bound.
    const auto above = dnnplan::completion_probability(m, 1e4);
    CHECK(above.p == Approx(1.0).margin(above.error_bound));
    CHECK(above.error_bound <= 1e-6);
    // Non-decreasing in D (within the error bounds).
    double previous = 0.0;
    for (double d = t0; d < 60.0; d += 0.37) {
        const auto p = dnnplan::completion_probability(m, d);
        CHECK(p.p >= previous - 2e-6);
        previous = p.p;
    }

    // lambda = 0: T = W + n delta exactly.
    auto calm = m;
    calm.preemptions_per_h = 0.0;
    CHECK(dnnplan::expected_completion_h(calm) == Approx(t0).epsilon(1e-15));
    CHECK(dnnplan::daly_expected_completion_h(calm) == Approx(t0).epsilon(1e-15));
    CHECK(dnnplan::completion_probability(calm, t0).p == 1.0);
    CHECK(dnnplan::completion_probability(calm, t0 - 1e-9).p == 0.0);
    // lambda -> 0: the mean tends to W + n delta, P(T <= t0) to 1 - lambda t0.
    for (const double lambda : {1e-6, 1e-9, 1e-12}) {
        auto rare = m;
        rare.preemptions_per_h = lambda;
        CHECK(dnnplan::expected_completion_h(rare) == Approx(t0).epsilon(10.0 * lambda * t0));
        CHECK(dnnplan::expected_completion_h(rare) > t0);
        CHECK(dnnplan::completion_probability(rare, t0).p == Approx(1.0 - lambda * t0).epsilon(1e-15).margin(lambda * lambda * t0 * t0));
        const auto later = dnnplan::completion_probability(rare, t0 + 3.0);
        CHECK(later.p >= 1.0 - lambda * t0 - later.error_bound);
        CHECK(later.p <= 1.0);
    }
}

TEST_CASE("P(T <= D) with 1,000 segments and lambda (tau + delta) = 5 stays accurate", "[preemption][checkpoint]") {
    // About 150 preemptions per segment, 150,000 per job: no simulation here. The result is
    // checked for consistency: two tolerances agree within their bounds, it increases with D,
    // and it is near 1/2 at the mean (the sum of 1,000 i.i.d. segment times is nearly symmetric).
    const checkpoint_restart_model m{.work_h = 1000.0, .interval_h = 0.9, .checkpoint_h = 0.1, .restart_h = 0.1, .preemptions_per_h = 5.0};
    REQUIRE(dnnplan::split_work(1000.0, 0.9).count == 1112);
    const double mean = dnnplan::expected_completion_h(m);
    const auto fine = dnnplan::completion_probability(m, mean, 1e-8);
    const auto coarse = dnnplan::completion_probability(m, mean, 1e-3);
    CHECK(fine.error_bound <= 1e-8);
    CHECK(std::abs(fine.p - coarse.p) <= fine.error_bound + coarse.error_bound);
    CHECK(fine.p > 0.45);
    CHECK(fine.p < 0.55);
    CHECK(dnnplan::completion_probability(m, mean * 0.97).p < fine.p);
    CHECK(dnnplan::completion_probability(m, mean * 1.03).p > fine.p);
}

TEST_CASE("solve: the interval of least E[T] is the brute-force optimum over the segment counts", "[preemption][checkpoint]") {
    for (const double lambda : {0.02, 0.3, 1.5}) {
        dnnplan::checkpoint_request r{.work_h = 50.0, .checkpoint_h = 0.1, .restart_h = 0.25, .preemptions_per_h = lambda, .deadline_h = 70.0};
        const auto result = dnnplan::solve(r);
        REQUIRE(result.status == dnnplan::solve_status::optimal);
        REQUIRE(result.plan);
        double best = std::numeric_limits<double>::infinity();
        for (int n = 1; n <= 5000; ++n) best = std::min(best, dnnplan::expected_completion_h(r.model(50.0 / n)));
        CHECK(result.plan->expected_h == Approx(best).epsilon(1e-13));
        CHECK(*result.objective_value == result.plan->expected_h);
        CHECK(*result.bound == result.plan->expected_h);
        // Any other interval is no better (partial last segments included).
        for (const double tau : {*result.details.young_interval_h, *result.details.daly_interval_h, 0.77, 3.3})
            CHECK(dnnplan::expected_completion_h(r.model(tau)) >= result.plan->expected_h * (1.0 - 1e-14));
        CHECK(result.plan->p_meet_deadline == dnnplan::completion_probability(r.model(result.plan->interval_h), 70.0).p);
        CHECK(result.details.daly_expected_h == Approx(result.plan->expected_h).epsilon(1e-12));  // W / tau is an integer
    }
    // lambda = 0: one segment; no Young or Daly interval.
    const auto calm = dnnplan::solve({.work_h = 5.0, .checkpoint_h = 0.1, .deadline_h = 6.0});
    REQUIRE(calm.plan);
    CHECK(calm.plan->segments == 1);
    CHECK(calm.plan->expected_h == Approx(5.1));
    CHECK(calm.plan->p_meet_deadline == 1.0);
    CHECK_FALSE(calm.details.young_interval_h);
    // A given interval is evaluated.
    const auto given = dnnplan::solve({.work_h = 10.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.05,
                                       .deadline_h = 12.0, .interval_h = 3.0});
    REQUIRE(given.plan);
    CHECK(given.status == dnnplan::solve_status::optimal);
    CHECK(given.plan->segments == 4);
    CHECK(given.plan->interval_h == 3.0);
    CHECK(given.plan->expected_h == dnnplan::expected_completion_h(
                                        {.work_h = 10.0, .interval_h = 3.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.05}));
    // E[T] beyond the double range: infeasible, no plan.
    const auto hopeless = dnnplan::solve({.work_h = 10.0, .checkpoint_h = 0.1, .restart_h = 800.0, .preemptions_per_h = 1.0, .deadline_h = 12.0});
    CHECK(hopeless.status == dnnplan::solve_status::infeasible);
    CHECK_FALSE(hopeless.plan);
}

TEST_CASE("solve: the interval of greatest P(T <= D) is the brute-force optimum over the equal splits", "[preemption][checkpoint]") {
    dnnplan::checkpoint_request r{.work_h = 6.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.4, .deadline_h = 8.0};
    r.options.objective = dnnplan::checkpoint_objective::max_deadline_probability;
    const auto result = dnnplan::solve(r);
    REQUIRE(result.status == dnnplan::solve_status::optimal);  // n_max = 20 <= 64 candidates
    REQUIRE(result.plan);
    CHECK(result.counters.evaluations == 20);
    double best = 0.0;
    for (int n = 1; n <= 25; ++n) best = std::max(best, dnnplan::completion_probability(r.model(6.0 / n), 8.0).p);
    CHECK(result.plan->p_meet_deadline == Approx(best).margin(2e-6));
    CHECK(*result.bound >= result.plan->p_meet_deadline);
    CHECK(*result.bound <= best + 1e-5);
    // A window of candidates: feasible, not proven.
    r.options.max_candidates = 5;
    const auto window = dnnplan::solve(r);
    CHECK(window.status == dnnplan::solve_status::feasible);
    CHECK(window.counters.evaluations == 5);
    CHECK_FALSE(window.bound);
    // The deadline below W + delta: every P is 0.
    r.deadline_h = 6.05;
    const auto late = dnnplan::solve(r);
    REQUIRE(late.plan);
    CHECK(late.plan->p_meet_deadline == 0.0);
    CHECK(*late.bound == 0.0);
}

TEST_CASE("trace replay: a hand-made trace with a hand-computed answer", "[preemption][checkpoint]") {
    using dnnplan::instance_event_kind;
    constexpr std::int64_t h = 3'600'000;  // ms
    const auto at = [](double hours) { return static_cast<std::int64_t>(std::llround(hours * 3'600'000.0)); };
    dnnplan::instance_trace trace{{
        {0, instance_event_kind::add, "a"},
        {0, instance_event_kind::add, "b"},
        {0, instance_event_kind::add, "c"},
        {at(1.5), instance_event_kind::remove, "a"},  // held: interrupts segment 2 (0.4 h lost); c replaces a
        {2 * h, instance_event_kind::remove, "c"},    // held: interrupts segment 2 again (0.25 h lost); no spare
        {at(2.5), instance_event_kind::add, "d"},     // taken, usable at 2.55
        {at(2.6), instance_event_kind::add, "e"},     // spare
        {at(2.7), instance_event_kind::remove, "b"},  // held: interrupts the restart begun at 2.55; e replaces b
        {3 * h, instance_event_kind::add, "f"},       // spare
        {at(3.2), instance_event_kind::remove, "f"},  // not held: nothing
    }};
    // W = 3 in segments of 1 h + 0.1 h checkpoint, R = 0.2 h, replacements usable after 0.05 h.
    dnnplan::checkpoint_replay_options o{.work_h = 3.0, .interval_h = 1.0, .checkpoint_h = 0.1, .restart_h = 0.2,
                                         .replacement_delay_h = 0.05, .horizon_h = 10.0};
    // Timeline: work from 0 (a, b); segment 1 saved at 1.1; loss at 1.5; c usable 1.55, restart to
    // 1.75; loss at 2.0; d usable 2.55, restart from 2.55; loss at 2.7; e usable 2.75, restart to
    // 2.95; segments at 4.05 and 5.15. Waiting 0.05 + 0.55 + 0.05, restarting 0.2 + 0.15 + 0.2.
    const auto r = dnnplan::replay_checkpoint_restart(trace, 2, o);
    CHECK(r.outcome == dnnplan::replay_outcome::finished);
    CHECK(r.end_h == Approx(5.15));
    CHECK(r.interruptions == 3);
    CHECK(r.held_losses == 3);
    CHECK(r.segments_done == 3);
    CHECK(r.work_done_h == Approx(3.0));
    CHECK(r.lost_h == Approx(0.65));
    CHECK(r.restart_time_h == Approx(0.55));
    CHECK(r.waiting_h == Approx(0.65));
    CHECK(r.end_h == Approx(3.3 + r.lost_h + r.restart_time_h + r.waiting_h));

    // A horizon before the end: the trace ended with 2 segments saved.
    o.horizon_h = 5.0;
    const auto cut = dnnplan::replay_checkpoint_restart(trace, 2, o);
    CHECK(cut.outcome == dnnplan::replay_outcome::trace_ended);
    CHECK(cut.end_h == 5.0);
    CHECK(cut.segments_done == 2);
    // No horizon: the last event (3.2 h).
    o.horizon_h.reset();
    CHECK(dnnplan::replay_checkpoint_restart(trace, 2, o).segments_done == 1);
    // More instances than ever live at once: the job never starts.
    o.horizon_h = 4.0;
    const auto starved = dnnplan::replay_checkpoint_restart(trace, 4, o);
    CHECK(starved.outcome == dnnplan::replay_outcome::trace_ended);
    CHECK(starved.segments_done == 0);
    CHECK(starved.waiting_h == Approx(4.0));
    // One instance and no losses of it: W + n delta.
    // One instance, R = 0, no delay: a (held) lost at 1.5 with 0.4 h of segment 2, b taken; c
    // removed as a spare; b lost at 2.7 just after segment 2 was saved at 2.6 (0.1 h lost), d taken;
    // the last segment from 2.7 to 3.8.
    const auto single = dnnplan::replay_checkpoint_restart(trace, 1, {.work_h = 3.0, .interval_h = 1.0, .checkpoint_h = 0.1, .horizon_h = 10.0});
    CHECK(single.outcome == dnnplan::replay_outcome::finished);
    CHECK(single.end_h == Approx(3.8));
    CHECK(single.interruptions == 2);
    CHECK(single.lost_h == Approx(0.5));
}

TEST_CASE("checkpoint-restart: malformed input names the field", "[preemption][checkpoint]") {
    const dnnplan::checkpoint_request good{.work_h = 10.0, .checkpoint_h = 0.1, .restart_h = 0.2, .preemptions_per_h = 0.1, .deadline_h = 12.0};
    const auto with = [&](auto mutate) {
        auto r = good;
        mutate(r);
        return field_of([&] { (void)dnnplan::solve(r); });
    };
    CHECK(with([](auto& r) { r.work_h = 0.0; }) == "work_h");
    CHECK(with([](auto& r) { r.preemptions_per_h = -0.1; }) == "preemptions_per_h");
    CHECK(with([](auto& r) { r.preemptions_per_h = std::nan(""); }) == "preemptions_per_h");
    CHECK(with([](auto& r) { r.restart_h = -1.0; }) == "restart_h");
    CHECK(with([](auto& r) { r.checkpoint_h = 0.0; }) == "checkpoint_h");  // no interval: the best would be 0
    CHECK(with([](auto& r) { r.deadline_h = 0.0; }) == "deadline_h");
    CHECK(with([](auto& r) { r.interval_h = -2.0; }) == "interval_h");
    CHECK(with([](auto& r) { r.interval_h = 1e-15; }) == "interval_h");  // 1e16 segments
    CHECK(with([](auto& r) { r.options.probability_tolerance = 0.01; }) == "options.probability_tolerance");
    CHECK(with([](auto& r) { r.options.max_candidates = 0; }) == "options.max_candidates");
    CHECK(with([](auto& r) { r.options.objective = static_cast<dnnplan::checkpoint_objective>(7); }) == "options.objective");
    CHECK(field_of([] { (void)dnnplan::young_interval_h(-1.0, 2.0); }) == "checkpoint_h");
    CHECK(field_of([] { (void)dnnplan::daly_interval_h(1.0, 0.0); }) == "mtbf_h");
    const checkpoint_restart_model m{.work_h = 1.0, .interval_h = 1.0, .preemptions_per_h = -1.0};
    CHECK(field_of([&] { (void)dnnplan::expected_completion_h(m); }) == "preemptions_per_h");
    CHECK(field_of([] { (void)dnnplan::completion_probability({}, std::nan("")); }) == "deadline_h");
    CHECK(field_of([] { (void)dnnplan::completion_probability({}, 1.0, 0.5); }) == "tolerance");

    const dnnplan::instance_trace trace{{{0, dnnplan::instance_event_kind::add, "a"}, {5, dnnplan::instance_event_kind::remove, "b"}}};
    const dnnplan::instance_trace ok{{{0, dnnplan::instance_event_kind::add, "a"}}};
    CHECK(field_of([&] { (void)dnnplan::replay_checkpoint_restart(trace, 1, {}); }) == "trace.events[1].node");
    CHECK(field_of([&] { (void)dnnplan::replay_checkpoint_restart(ok, 0, {}); }) == "instances");
    CHECK(field_of([&] { (void)dnnplan::replay_checkpoint_restart(ok, 1, {.work_h = -1.0}); }) == "options.work_h");
    CHECK(field_of([&] { (void)dnnplan::replay_checkpoint_restart(ok, 1, {.replacement_delay_h = -1.0}); }) == "options.replacement_delay_h");
    CHECK(field_of([&] { (void)dnnplan::replay_checkpoint_restart(ok, 1, {.horizon_h = -1.0}); }) == "options.horizon_h");
}
