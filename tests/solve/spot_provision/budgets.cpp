// The cluster searches' counters and budgets (solve/spot_provision/exhaustive.hpp, solve/spot_provision/sliding_window.hpp,
// solve/spot_provision/exact.hpp) on models written here: the exhaustive oracle counts the count vectors it
// visits (nodes) and the clusters it evaluates, the sliding window the windows it visits; every
// search stops at its node, evaluation or wall-clock budget with a limit (result.limit), at the
// granularity of its checks, even on quotas of 1e9 (a regression for fuzz findings).

#include <dnnplan/model/convergence.hpp>
#include <dnnplan/model/cost.hpp>
#include <dnnplan/solve/spot_provision/exact.hpp>
#include <dnnplan/solve/spot_provision/exhaustive.hpp>
#include <dnnplan/solve/spot_provision/sliding_window.hpp>

#include <catch2/catch.hpp>

#include "../../support/serialized_ps_model.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace {

using dnnplan::solve_status;
using dnnplan_test::serialized_ps_model;

struct models {
    serialized_ps_model throughput{};
    dnnplan::spotdnn_loss_model convergence{{.gamma1 = 876.5, .gamma2 = -0.2, .gamma3 = 2507.6, .gamma5 = 0.5}};
    dnnplan::instance_cost_model cost{{0.918, 0.684, 0.3612}, 0.0, 1.0};
};

const dnnplan::cluster_goals goals{.target_loss = 0.8, .deadline_s = 2500};

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("the exhaustive oracle counts every count vector it visits, and evaluates those of the allowed sizes",
          "[search][exhaustive][counters]") {
    const models m;
    dnnplan::cluster_space space{.lower = {0, 0, 0}, .upper = {2, 5, 5}};
    const auto all = dnnplan::exhaustive_search(m.throughput, m.convergence, m.cost, space, goals);
    REQUIRE(all.status == solve_status::optimal);
    CHECK(all.counters.nodes == 3 * 6 * 6);            // the empty cluster included
    CHECK(all.counters.evaluations == 3 * 6 * 6 - 1);  // min_workers = 1
    // docs/architecture.md: [2, 0, 0] for 1.0649 USD; the bound of an optimal answer is its value.
    CHECK(all.plan->counts == dnnplan::cluster_counts{2, 0, 0});
    REQUIRE(all.bound);
    CHECK(*all.bound == *all.objective_value);
    CHECK(*all.objective_value == all.plan->prediction.cost_usd);
    // Sizes 3 to 6 only: the same vectors visited, fewer evaluated.
    space.min_workers = 3;
    space.max_workers = 6;
    std::int64_t allowed = 0;
    space.for_each([&](std::span<const std::int32_t>, std::int64_t) { ++allowed; });
    const auto sized = dnnplan::exhaustive_search(m.throughput, m.convergence, m.cost, space, goals);
    CHECK(sized.counters.nodes == 3 * 6 * 6);
    CHECK(sized.counters.evaluations == allowed);
    CHECK(allowed < 3 * 6 * 6 - 1);
    // Nothing meets a 100 s deadline: infeasible, no plan and no bound.
    const auto none = dnnplan::exhaustive_search(m.throughput, m.convergence, m.cost, space,
                                                 {.target_loss = 0.8, .deadline_s = 100.0});
    CHECK(none.status == solve_status::infeasible);
    CHECK_FALSE(none.plan);
    CHECK_FALSE(none.objective_value);
    CHECK_FALSE(none.bound);
    CHECK(none.counters.nodes == 3 * 6 * 6);
}

TEST_CASE("the sliding window counts the windows it visits", "[search][sliding_window][counters]") {
    const models m;
    const dnnplan::cluster_space space{.lower = {0, 0, 0}, .upper = {2, 5, 5}};
    // Every size n from 1 to the 12 listed instances: 12 - n + 1 windows each, 78 in all; with
    // wrap-around, 12 windows of every size, 144.
    const auto plain = dnnplan::sliding_window_search(m.throughput, m.convergence, m.cost, space, goals,
                                                      {.paper_bounds = false, .n_upper = std::nullopt, .wrap_around = false});
    CHECK(plain.counters.nodes == 78);
    CHECK(plain.counters.evaluations <= plain.counters.nodes);
    CHECK(plain.counters.evaluations > 0);
    const auto wrapped = dnnplan::sliding_window_search(m.throughput, m.convergence, m.cost, space, goals,
                                                        {.paper_bounds = false, .n_upper = std::nullopt, .wrap_around = true});
    CHECK(wrapped.counters.nodes == 12 * 12);
    // A heuristic: feasible with its plan, never a bound.
    REQUIRE(plain.status == solve_status::feasible);
    REQUIRE(plain.plan);
    CHECK_FALSE(plain.bound);
    CHECK(*plain.objective_value == plain.plan->prediction.cost_usd);
    const auto exact = dnnplan::exact_search(m.throughput, m.convergence, m.cost, space, goals);
    REQUIRE(exact.status == solve_status::optimal);
    CHECK(*plain.objective_value >= *exact.objective_value);
}

TEST_CASE("every search stops at its node or evaluation budget, at the granularity of its checks",
          "[search][budget]") {
    const models m;
    const dnnplan::cluster_space space{.lower = {0, 0, 0}, .upper = {2, 5, 5}};
    const auto optimum = dnnplan::exhaustive_search(m.throughput, m.convergence, m.cost, space, goals);
    REQUIRE(optimum.status == solve_status::optimal);
    const double best = *optimum.objective_value;
    for (const std::int64_t limit : {1, 2, 5, 10, 40}) {
        for (const bool by_evaluations : {false, true}) {
            INFO("limit " << limit << (by_evaluations ? " evaluations" : " nodes"));
            const dnnplan::search_budget budget = by_evaluations
                                                      ? dnnplan::search_budget{.max_nodes = 0, .max_evaluations = limit, .max_time_s = 0}
                                                      : dnnplan::search_budget{.max_nodes = limit, .max_evaluations = 0, .max_time_s = 0};
            const auto counted = [&](const dnnplan::search_outcome& r) {
                return by_evaluations ? r.counters.evaluations : r.counters.nodes;
            };
            // Exhaustive and sliding window check after every vector (window): exactly the limit.
            const auto ex = dnnplan::exhaustive_search(m.throughput, m.convergence, m.cost, space, goals, budget);
            const auto limited = by_evaluations ? dnnplan::search_limit::evaluations : dnnplan::search_limit::nodes;
            CHECK(ex.limit == limited);
            CHECK(ex.status == (ex.plan ? solve_status::feasible : solve_status::no_plan_found));
            CHECK(counted(ex) == limit);
            CHECK_FALSE(ex.bound);  // the vectors not visited are unknown
            if (ex.plan) CHECK(*ex.objective_value >= best);
            const auto window = dnnplan::sliding_window_search(
                m.throughput, m.convergence, m.cost, space, goals,
                {.paper_bounds = false, .n_upper = std::nullopt, .wrap_around = false}, budget);
            CHECK(window.limit == limited);
            CHECK(window.status == (window.plan ? solve_status::feasible : solve_status::no_plan_found));
            CHECK(counted(window) == limit);
            CHECK_FALSE(window.bound);
            // The exact search checks before each node: at most one over.
            const auto exact = dnnplan::exact_search(m.throughput, m.convergence, m.cost, space, goals,
                                                     {.budget = budget, .relative_gap = 1e-9});
            CHECK(counted(exact) <= limit + 1);
            if (exact.limit != dnnplan::search_limit::none) {
                CHECK(exact.limit == limited);
                REQUIRE(exact.bound);
                CHECK(*exact.bound <= best);
                if (exact.plan) CHECK(*exact.bound <= *exact.objective_value);
            } else {
                CHECK(exact.status == solve_status::optimal);
                CHECK(*exact.objective_value == Approx(best).epsilon(1e-12));
            }
        }
    }
}

TEST_CASE("quotas of 1e9: every search returns promptly within its budget", "[search][budget]") {
    // Regression for fuzz findings: the exhaustive odometer, the sliding window's list of
    // instances (run-length encoded) and the exact search's sizes must not scale with the quotas.
    const models m;
    const std::int32_t quota = 1'000'000'000;
    const dnnplan::cluster_space space{.lower = {0, 0, 0}, .upper = {quota, quota, quota}};
    const dnnplan::cluster_goals generous{.target_loss = 0.8, .deadline_s = 1e12};
    for (const bool timed : {false, true}) {
        INFO((timed ? "50 ms, no node or evaluation limit" : "1000 nodes and evaluations"));
        const dnnplan::search_budget budget = timed ? dnnplan::search_budget{.max_nodes = 0, .max_evaluations = 0, .max_time_s = 0.05}
                                                    : dnnplan::search_budget{.max_nodes = 1000, .max_evaluations = 1000, .max_time_s = 0};
        auto start = std::chrono::steady_clock::now();
        const auto ex = dnnplan::exhaustive_search(m.throughput, m.convergence, m.cost, space, generous, budget);
        CHECK(seconds_since(start) < 5.0);
        CHECK(ex.limit != dnnplan::search_limit::none);
        CHECK_FALSE(ex.bound);
        for (const bool paper : {false, true}) {
            for (const bool wrap : {false, true}) {
                INFO("sliding window, paper bounds " << paper << ", wrap-around " << wrap);
                start = std::chrono::steady_clock::now();
                const auto window = dnnplan::sliding_window_search(m.throughput, m.convergence, m.cost, space, generous,
                                                                   {.paper_bounds = paper, .n_upper = std::nullopt, .wrap_around = wrap},
                                                                   budget);
                CHECK(seconds_since(start) < 5.0);
                CHECK(window.limit == (timed ? dnnplan::search_limit::time : dnnplan::search_limit::nodes));
                CHECK(window.status == (window.plan ? solve_status::feasible : solve_status::no_plan_found));
                CHECK_FALSE(window.bound);
                if (!timed) {
                    CHECK(window.counters.nodes <= 1000);
                    CHECK(window.counters.evaluations <= 1000);
                }
            }
        }
        start = std::chrono::steady_clock::now();
        const auto exact = dnnplan::exact_search(m.throughput, m.convergence, m.cost, space, generous,
                                                 {.budget = budget, .relative_gap = 1e-9});
        CHECK(seconds_since(start) < 5.0);
        CHECK((exact.limit != dnnplan::search_limit::none || exact.status == solve_status::optimal));
        if (exact.limit != dnnplan::search_limit::none) CHECK(exact.bound);
        if (exact.bound && exact.objective_value) CHECK(*exact.bound <= *exact.objective_value);
        if (!timed) {
            CHECK(ex.counters.nodes <= 1000);
            CHECK(ex.counters.evaluations <= 1000);
            CHECK(exact.counters.nodes <= 1000 + 1);
            CHECK(exact.counters.evaluations <= 1000 + 1);
        }
    }
}
