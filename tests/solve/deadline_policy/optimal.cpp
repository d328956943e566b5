// The hindsight optimum (solve/deadline_policy/optimal.hpp) against brute force: every sequence of
// decisions on small random traces, run through the tick simulator, with d = 0, d < g and d > g,
// one region and two (with egress); and its schedule replays at its cost.

#include <dnnplan/solve/deadline_policy/optimal.hpp>
#include <dnnplan/runtime/policies.hpp>
#include <dnnplan/runtime/simulate.hpp>

#include "../../support/checks.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

namespace {

using dnnplan::deadline_action;
using dnnplan::deadline_decision;
using dnnplan::deadline_job;
using dnnplan::deadline_market;

/// A random market of `regions` traces of `ticks` ticks at gap 60 s: availability in runs, prices
/// per tick, on-demand prices per region.
deadline_market random_market(std::mt19937_64& rng, std::size_t regions, std::size_t ticks) {
    deadline_market m;
    std::uniform_real_distribution<double> price(0.5, 2.0), flip(0.0, 1.0);
    for (std::size_t r = 0; r < regions; ++r) {
        dnnplan::spot_market_trace t{.name = "r" + std::to_string(r), .gap_s = 60.0, .available = {}, .spot_usd_per_h = {},
                                     .on_demand_usd_per_h = 3.0 + static_cast<double>(r) * 0.25};
        bool up = flip(rng) < 0.6;
        for (std::size_t k = 0; k < ticks; ++k) {
            if (flip(rng) < 0.3) up = !up;
            t.available.push_back(up ? 1 : 0);
            t.spot_usd_per_h.push_back(std::round(price(rng) * 100.0) / 100.0);
        }
        m.regions.push_back(std::move(t));
    }
    return m;
}

/// Replays a fixed sequence of decisions (wait after it).
struct sequence_policy {
    const std::vector<deadline_decision>* decisions = nullptr;
    deadline_decision decide(const dnnplan::deadline_view& v) const {
        const auto i = static_cast<std::size_t>(v.tick());
        return i < decisions->size() ? (*decisions)[i] : deadline_decision{deadline_action::wait, 0, ""};
    }
};

/// The least cost over every sequence of `length` decisions the market allows (a spot decision
/// where the gang fits), each run through the simulator; none when no sequence meets the deadline.
std::optional<double> brute_force(const deadline_market& m, const deadline_job& job, std::size_t start, std::size_t length) {
    std::vector<deadline_decision> options{{deadline_action::wait, 0, ""}};
    for (std::int32_t r = 0; r < static_cast<std::int32_t>(m.regions.size()); ++r) {
        options.push_back({deadline_action::spot, r, ""});
        options.push_back({deadline_action::on_demand, r, ""});
    }
    std::optional<double> best;
    std::vector<deadline_decision> seq(length);
    std::vector<std::size_t> digit(length, 0);
    while (true) {
        bool allowed = true;
        for (std::size_t i = 0; i < length && allowed; ++i) {
            seq[i] = options[digit[i]];
            if (seq[i].action == deadline_action::spot)
                allowed = m.regions[static_cast<std::size_t>(seq[i].region)].available[start + i] >= job.instances;
        }
        if (allowed) {
            sequence_policy p{&seq};
            const auto o = dnnplan::simulate_window(m, job, start, p);
            if (o.met && (!best || o.cost_usd < *best)) best = o.cost_usd;
        }
        std::size_t i = 0;
        while (i < length && ++digit[i] == options.size()) digit[i++] = 0;
        if (i == length) return best;
    }
}

}  // namespace

TEST_CASE("hindsight optimum equals brute force on small random traces", "[solve][deadline_policy][optimal]") {
    std::mt19937_64 rng(20);
    int feasible = 0, infeasible = 0;
    for (int trial = 0; trial < 240; ++trial) {
        const std::size_t regions = trial % 4 == 3 ? 2 : 1;
        const deadline_market m = random_market(rng, regions, 24);
        // d = 0, d < g, d = g, d > g (in seconds, the gap being 60).
        const double changeover = std::array{0.0, 20.0, 60.0, 100.0}[static_cast<std::size_t>(trial % 4)];
        const double work = 60.0 * static_cast<double>(2 + trial % 4);
        const double deadline = work + 60.0 * static_cast<double>(trial % 5) + (trial % 3 == 0 ? 30.0 : 0.0);
        const deadline_job job{.work_s = work, .deadline_s = deadline, .changeover_s = changeover, .instances = 1,
                               .egress_usd = regions > 1 ? 0.02 : 0.0};
        const std::size_t start = static_cast<std::size_t>(trial % 5);
        const std::size_t length = static_cast<std::size_t>(std::floor(deadline / 60.0));
        INFO("trial " << trial << ": work " << work << " s, deadline " << deadline << " s, d " << changeover << " s, regions " << regions);
        const std::optional<double> expected = brute_force(m, job, start, length);
        const auto dp = dnnplan::hindsight_optimum(m, job, start);
        REQUIRE(dp.has_value() == expected.has_value());
        if (!dp) {
            ++infeasible;
            continue;
        }
        ++feasible;
        CHECK(dp->outcome.cost_usd == Approx(*expected).epsilon(1e-12));
        CHECK(dnnplan::hindsight_optimum(m, job, start, false)->outcome.cost_usd == dp->outcome.cost_usd);  // the bounds cut nothing that matters
        CHECK(dp->outcome.met);
        CHECK(static_cast<double>(dp->schedule.size()) * 60.0 == dp->outcome.finish_s);
    }
    CHECK(feasible > 150);
    CHECK(infeasible > 5);
}

TEST_CASE("hindsight optimum: never above the published policies, and infeasible exactly when on-demand cannot finish",
          "[solve][deadline_policy][optimal]") {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 60; ++trial) {
        const deadline_market m = random_market(rng, 1, 400);
        const deadline_job job{.work_s = 60.0 * (100 + trial), .deadline_s = 60.0 * (130 + 2 * trial),
                               .changeover_s = 60.0 * (trial % 3) + 15.0 * (trial % 2)};
        dnnplan::on_demand_policy od;
        dnnplan::greedy_policy greedy;
        dnnplan::uniform_progress_policy up;
        const auto on_demand = dnnplan::simulate_window(m, job, 10, od);
        const auto best = dnnplan::hindsight_optimum(m, job, 10);
        REQUIRE(best.has_value() == on_demand.met);
        if (!best) continue;
        CHECK(best->outcome.cost_usd <= on_demand.cost_usd * (1 + 1e-12));
        for (const auto& o : {dnnplan::simulate_window(m, job, 10, greedy), dnnplan::simulate_window(m, job, 10, up)})
            if (o.met) CHECK(best->outcome.cost_usd <= o.cost_usd * (1 + 1e-12));
    }
}

TEST_CASE("hindsight optimum: a deadline past the trace's end is rejected, naming the start tick", "[solve][deadline_policy][optimal]") {
    std::mt19937_64 rng(3);
    const deadline_market m = random_market(rng, 1, 50);
    const deadline_job job{.work_s = 600.0, .deadline_s = 3000.0};
    try {
        (void)dnnplan::hindsight_optimum(m, job, 0);
        FAIL("accepted");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == "start_tick");
    }
    // R / g beyond any size_t, and a start tick whose window would wrap round: rejected, no UB.
    CHECK(dnnplan_test::field_of([&] { (void)dnnplan::hindsight_optimum(m, {.work_s = 600.0, .deadline_s = 1e300}, 0); }) == "start_tick");
    CHECK(dnnplan_test::field_of([&] {
              (void)dnnplan::hindsight_optimum(m, {.work_s = 600.0, .deadline_s = 1200.0}, std::numeric_limits<std::size_t>::max() - 2);
          }) == "start_tick");
    // Work of at most the done tolerance is not a job.
    CHECK(dnnplan_test::field_of([&] { (void)dnnplan::hindsight_optimum(m, {.work_s = 1e-3, .deadline_s = 1200.0}, 0); }) == "job.work_s");
    // A changeover longer than the deadline: infeasible (no run can finish), not an error.
    CHECK_FALSE(dnnplan::hindsight_optimum(m, {.work_s = 60.0, .deadline_s = 1200.0, .changeover_s = 1e300}, 0));
}
