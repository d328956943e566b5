// The exact solver against the exhaustive oracle on seeded random problems, and against the
// published heuristic (docs/solvers/exact.md states the bounds these tests exercise).

#include <dnnplan/search/exact.hpp>
#include <dnnplan/solve/spot_provision.hpp>

#include "../support/random_problems.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

namespace {

using dnnplan::solve_status;

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)) + 1e-12; }

std::string describe(std::uint64_t seed, const dnnplan::spot_result& exact, const dnnplan::spot_result& oracle) {
    std::string s = "seed " + std::to_string(seed) + ": exact " + std::string(to_string(exact.status)) + " oracle " +
                    std::string(to_string(oracle.status));
    if (exact.prediction) s += " exact cost " + std::to_string(exact.prediction->cost_usd);
    if (oracle.prediction) s += " oracle cost " + std::to_string(oracle.prediction->cost_usd);
    return s;
}

}  // namespace

TEST_CASE("exact equals exhaustive enumeration on 600 seeded random problems", "[search][exact][oracle]") {
    int feasible = 0, infeasible = 0, with_gamma4 = 0, with_existing = 0, by_time = 0;
    for (std::uint64_t seed = 0; seed < 600; ++seed) {
        auto req = dnnplan_test::random_spot_request(seed);
        auto exhaustive_options = req.options;
        exhaustive_options.method = dnnplan::spot_method::exhaustive;
        const dnnplan::spot_result exact = dnnplan::solve(req.problem, req.options);
        const dnnplan::spot_result oracle = dnnplan::solve(req.problem, exhaustive_options);
        INFO(describe(seed, exact, oracle));
        REQUIRE(exact.status == oracle.status);
        with_gamma4 += req.problem.profile.loss.gamma4.has_value();
        with_existing += !req.problem.existing.empty();
        by_time += req.options.objective == dnnplan::search_objective::minimize_time;
        if (oracle.status == solve_status::infeasible) {
            ++infeasible;
            CHECK(std::isinf(exact.lower_bound));
            continue;
        }
        ++feasible;
        REQUIRE(exact.prediction);
        const double e = objective_value(*exact.prediction, req.options.objective);
        const double o = objective_value(*oracle.prediction, req.options.objective);
        CHECK(close(e, o));
        CHECK(exact.prediction->training_time_s <= req.problem.goals.deadline_s);
        CHECK(exact.lower_bound <= e);
        // The plan keeps the existing instances and respects the quotas.
        for (const auto& tc : exact.counts) {
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
        req.options.objective = dnnplan::search_objective::minimize_cost;
        for (const bool paper_bounds : {true, false}) {
            auto window_options = req.options;
            window_options.method = dnnplan::spot_method::sliding_window;
            window_options.sliding_window_paper_bounds = paper_bounds;
            window_options.sliding_window_wrap_around = !paper_bounds;
            const dnnplan::spot_result window = dnnplan::solve(req.problem, window_options);
            if (window.status != solve_status::feasible) continue;
            const dnnplan::spot_result exact = dnnplan::solve(req.problem, req.options);
            INFO("seed " << seed);
            REQUIRE(exact.status == solve_status::optimal);
            CHECK(exact.prediction->cost_usd <= window.prediction->cost_usd * (1.0 + 1e-9));
            ++compared;
        }
    }
    CHECK(compared >= 100);
}

TEST_CASE("a node budget stops the search with the best plan so far and a valid lower bound",
          "[search][exact][budget]") {
    int exhausted = 0;
    for (std::uint64_t seed = 2000; seed < 2200; ++seed) {
        auto req = dnnplan_test::random_spot_request(seed);
        auto oracle_options = req.options;
        oracle_options.method = dnnplan::spot_method::exhaustive;
        const dnnplan::spot_result oracle = dnnplan::solve(req.problem, oracle_options);
        req.options.node_budget = 3;
        const dnnplan::spot_result cut = dnnplan::solve(req.problem, req.options);
        INFO("seed " << seed);
        if (cut.status != solve_status::budget_exhausted) continue;
        ++exhausted;
        CHECK(cut.counters.nodes <= 3 + 1);
        if (oracle.status == solve_status::optimal) {
            const double best = objective_value(*oracle.prediction, req.options.objective);
            CHECK(cut.lower_bound <= best * (1.0 + 1e-9));
            if (cut.prediction) CHECK(objective_value(*cut.prediction, req.options.objective) >= best * (1.0 - 1e-9));
        }
    }
    CHECK(exhausted >= 20);
}
