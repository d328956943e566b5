// The worked figures of docs/solvers/deadline_policy.md on the shared traces (SkyNomad's p3.2xlarge
// availability, tests/fixtures/spot_availability/aws-2023-02-15): greedy, Uniform Progress and the
// hindsight optimum, with the per-tick spot prices, on-demand 3.06 USD/h, C = 48 h, N = 1. Greedy
// and Uniform Progress are the published policies rule for rule, and the figures were given with
// the tick model's specification (to the micro-dollar); the optimum is this library's DP, checked
// against brute force in optimal.cpp.

#include <dnnplan/io/deadline_policy_json.hpp>
#include <dnnplan/io/spot_market_csv.hpp>
#include <dnnplan/solve/deadline_policy/optimal.hpp>
#include <dnnplan/runtime/policies.hpp>
#include <dnnplan/solve/deadline_policy/solve.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

const std::string traces_dir = std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/spot_availability/aws-2023-02-15/";

dnnplan::deadline_market zone(const std::string& name) {
    static const std::map<std::string, std::vector<double>> prices = [] {
        std::ifstream in(traces_dir + "v100_spot_prices.json");
        return dnnplan::parse_spot_price_table(in);
    }();
    std::ifstream in(traces_dir + name + "_v100_1.csv");
    dnnplan::spot_market_trace t = dnnplan::parse_spot_market_csv(in, name).trace;
    t.spot_usd_per_h = prices.at(name + "_v100_1");
    t.on_demand_usd_per_h = 3.06;
    return {.regions = {t}};
}

}  // namespace

TEST_CASE("worked figures: greedy, Uniform Progress and the optimum on the shared traces", "[solve][deadline_policy][figures]") {
    struct row {
        const char* zone;
        std::size_t start;
        double deadline_h, changeover_h, greedy, uniform_progress, optimal;
    };
    const row rows[] = {
        {"us-west-2a", 0, 60, 0.2, 138.2355, 69.9465, 61.940775},
        {"us-west-2a", 5000, 60, 0.2, 103.179375, 86.836425, 69.05145},
        {"us-west-2a", 12000, 52, 0.1, 108.054375, 92.738382, 60.251647},
        {"us-east-1f", 3000, 60, 0.2, 122.271148, 125.338628, 115.40626},
        {"us-east-2b", 15000, 52, 0.1, 64.7088, 63.01815, 49.8576},
    };
    for (const row& r : rows) {
        INFO(r.zone << " from tick " << r.start << ", R = " << r.deadline_h << " h, d = " << r.changeover_h << " h");
        const dnnplan::deadline_market m = zone(r.zone);
        REQUIRE(m.gap_s() == 195.0);
        const dnnplan::deadline_job job{.work_s = 48 * 3600.0, .deadline_s = r.deadline_h * 3600.0, .changeover_s = r.changeover_h * 3600.0};
        dnnplan::greedy_policy greedy;
        dnnplan::uniform_progress_policy up;
        const auto g = dnnplan::simulate_window(m, job, r.start, greedy);
        const auto u = dnnplan::simulate_window(m, job, r.start, up);
        const auto best = dnnplan::hindsight_optimum(m, job, r.start);
        REQUIRE(best);
        CHECK(g.cost_usd == Approx(r.greedy).margin(1e-6));
        CHECK(u.cost_usd == Approx(r.uniform_progress).margin(1e-6));
        CHECK(best->outcome.cost_usd == Approx(r.optimal).margin(1e-6));
        CHECK((g.met && u.met && best->outcome.met));
    }
}

TEST_CASE("compare reports its progress and gives the same figures on any number of threads", "[solve][deadline_policy][compare]") {
    dnnplan::deadline_simulation r{.market = zone("us-east-2b"),
                                   .job = {.work_s = 6 * 3600.0, .deadline_s = 8 * 3600.0, .changeover_s = 0.1 * 3600.0},
                                   .start_ticks = {0, 2000, 4000, 6000, 8000, 10000, 12000}};
    const dnnplan::deadline_comparison plain = dnnplan::compare(r);
    for (const std::int32_t threads : {1, 3}) {
        INFO(threads << " threads");
        r.threads = threads;
        std::vector<std::pair<std::int64_t, std::int64_t>> reports;
        const dnnplan::deadline_comparison c = dnnplan::compare(r, [&](std::int64_t done, std::int64_t total) { reports.emplace_back(done, total); });
        REQUIRE_FALSE(reports.empty());
        CHECK(reports.back() == std::pair<std::int64_t, std::int64_t>{7, 7});  // once at the end, every window done
        for (std::size_t i = 1; i < reports.size(); ++i) CHECK(reports[i].first > reports[i - 1].first);
        if (threads == 1) CHECK(reports.size() == 7);  // after every window
        REQUIRE(c.policies.size() == plain.policies.size());
        for (std::size_t k = 0; k < c.policies.size(); ++k) CHECK(c.policies[k].ratios == plain.policies[k].ratios);
    }
}
