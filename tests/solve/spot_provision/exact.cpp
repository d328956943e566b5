// The exact solver against the exhaustive oracle on seeded random problems, and against the
// published heuristic (docs/solvers/exact.md states the bounds these tests exercise).

#include <dnnplan/solve/spot_provision/exact.hpp>
#include <dnnplan/solve/spot_provision/solve.hpp>

#include "../../support/checks.hpp"
#include "../../support/random_problems.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

namespace {

using dnnplan_test::close;

using dnnplan::solve_status;

std::string describe(std::uint64_t seed, const dnnplan::spot_result& exact, const dnnplan::spot_result& oracle) {
    std::string s = "seed " + std::to_string(seed) + ": exact " + std::string(to_string(exact.status)) + " oracle " +
                    std::string(to_string(oracle.status));
    if (exact.plan) s += " exact cost " + std::to_string(exact.plan->prediction.cost_usd);
    if (oracle.plan) s += " oracle cost " + std::to_string(oracle.plan->prediction.cost_usd);
    return s;
}

}  // namespace

TEST_CASE("exact equals exhaustive enumeration on 600 seeded random problems", "[search][exact][oracle]") {
    int feasible = 0, infeasible = 0, with_gamma4 = 0, with_existing = 0, by_time = 0;
    for (std::uint64_t seed = 0; seed < 600; ++seed) {
        auto req = dnnplan_test::random_spot_request(seed);
        auto exhaustive = req;
        exhaustive.options.method = dnnplan::search_method::exhaustive;
        const dnnplan::spot_result exact = dnnplan::solve(req);
        const dnnplan::spot_result oracle = dnnplan::solve(exhaustive);
        INFO(describe(seed, exact, oracle));
        REQUIRE(exact.status == oracle.status);
        with_gamma4 += req.problem.profile.loss.gamma4.has_value();
        with_existing += !req.problem.existing.empty();
        by_time += req.options.objective == dnnplan::objective_kind::min_time;
        if (oracle.status == solve_status::infeasible) {
            ++infeasible;
            // Infeasible: no plan, no value and no bound (nothing to bound).
            CHECK_FALSE(exact.plan);
            CHECK_FALSE(exact.objective_value);
            CHECK_FALSE(exact.bound);
            CHECK_FALSE(oracle.bound);
            continue;
        }
        ++feasible;
        REQUIRE(exact.plan);
        REQUIRE(oracle.plan);
        const double e = objective_value(exact.plan->prediction, req.options.objective);
        const double o = objective_value(oracle.plan->prediction, req.options.objective);
        CHECK(close(e, o));
        REQUIRE(exact.objective_value);
        CHECK(*exact.objective_value == e);
        CHECK(exact.plan->prediction.training_time_s <= req.problem.goals.deadline_s);
        // Optimal: the bound is the plan's value (exact's relative gap is a cut tolerance only).
        REQUIRE(exact.bound);
        CHECK(*exact.bound <= e);
        CHECK(close(*exact.bound, e));
        REQUIRE(oracle.bound);
        CHECK(close(*oracle.bound, o));
        // The exhaustive oracle visits every count vector of the box and evaluates those of the
        // allowed sizes.
        CHECK(oracle.counters.nodes >= oracle.counters.evaluations);
        CHECK(oracle.counters.evaluations > 0);
        // The plan keeps the existing instances and respects the quotas.
        for (const auto& tc : exact.plan->counts) {
            const auto& type = req.problem.catalog.instances[*req.problem.catalog.find(tc.name)];
            CHECK(tc.count <= type.quota);
            const auto it = req.problem.existing.find(tc.name);
            if (it != req.problem.existing.end()) CHECK(tc.count >= it->second);
            if (!req.problem.profile.per_instance.contains(tc.name)) CHECK(tc.count == 0);
        }
    }
    // The generator must exercise every branch it claims to.
    CHECK(feasible >= 150);
    CHECK(infeasible >= 50);
    CHECK(with_gamma4 >= 200);
    CHECK(with_existing >= 100);
    CHECK(by_time >= 60);
}

TEST_CASE("exact is never costlier than the sliding window", "[search][exact][sliding_window]") {
    int compared = 0;
    for (std::uint64_t seed = 1000; seed < 1400; ++seed) {
        auto req = dnnplan_test::random_spot_request(seed);
        req.options.objective = dnnplan::objective_kind::min_cost;
        for (const bool paper_bounds : {true, false}) {
            auto window_request = req;
            window_request.options.method = dnnplan::search_method::sliding_window;
            window_request.options.sliding_window.paper_bounds = paper_bounds;
            window_request.options.sliding_window.wrap_around = !paper_bounds;
            const dnnplan::spot_result window = dnnplan::solve(window_request);
            if (window.status != solve_status::feasible) continue;
            // A heuristic proves nothing: a plan, no bound; it counts the windows it visits.
            REQUIRE(window.plan);
            CHECK_FALSE(window.bound);
            CHECK(window.counters.nodes >= window.counters.evaluations);
            CHECK(window.counters.evaluations > 0);
            const dnnplan::spot_result exact = dnnplan::solve(req);
            INFO("seed " << seed);
            REQUIRE(exact.status == solve_status::optimal);
            CHECK(exact.plan->prediction.cost_usd <= window.plan->prediction.cost_usd * (1.0 + 1e-9));
            ++compared;
        }
    }
    CHECK(compared >= 100);
}

TEST_CASE("a node budget stops the search with the best plan so far and a valid lower bound",
          "[search][exact][budget]") {
    int exhausted = 0, bounded = 0;
    for (std::uint64_t seed = 2000; seed < 2200; ++seed) {
        auto req = dnnplan_test::random_spot_request(seed);
        auto oracle_request = req;
        oracle_request.options.method = dnnplan::search_method::exhaustive;
        const dnnplan::spot_result oracle = dnnplan::solve(oracle_request);
        req.options.budget.max_nodes = 3;
        const dnnplan::spot_result cut = dnnplan::solve(req);
        INFO("seed " << seed);
        if (cut.limit == dnnplan::search_limit::none) continue;
        ++exhausted;
        CHECK(cut.counters.nodes <= 3 + 1);
        CHECK_THAT(cut.reason, Catch::Contains("budget"));
        CHECK(cut.plan.has_value() == cut.objective_value.has_value());
        if (cut.plan) CHECK(*cut.objective_value == objective_value(cut.plan->prediction, req.options.objective));
        bounded += cut.bound ? 1 : 0;
        if (cut.bound && cut.objective_value) CHECK(*cut.bound <= *cut.objective_value);
        if (oracle.status == solve_status::optimal) {
            const double best = objective_value(oracle.plan->prediction, req.options.objective);
            if (cut.bound) CHECK(*cut.bound <= best * (1.0 + 1e-9));
            if (cut.plan) CHECK(objective_value(cut.plan->prediction, req.options.objective) >= best * (1.0 - 1e-9));
        }
    }
    CHECK(exhausted >= 20);
    // The exact search always proves some bound (0 at worst) when its budget runs out.
    CHECK(bounded == exhausted);
}
