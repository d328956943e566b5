// The runtime deadline policy (docs/performance.md, "Runtime deadline policy"). Input of every row:
// SkyNomad's p3.2xlarge availability in us-west-2a with its per-tick spot prices
// (tests/fixtures/spot_availability/aws-2023-02-15), on-demand 3.06 USD/h, a job of C = 48 h with a
// deadline of R = 70 h and a changeover of d = 0.2 h, started at tick 4200 (goal: a default decision
// under 1 us, the optimum under 20 ms).
//   decide_default:            one decision of the default policy, averaged over the decisions of
//                              the whole job (its threshold computations included)
//   decide_uniform_progress:   one decision of Uniform Progress over the same job: the baseline
//   decide_default_3_regions:  one decision of the default policy on us-east-1c, 1d and 1f on one
//                              clock (egress 1 USD), started at tick 4200: its per-region histories
//   optimum:                   the hindsight optimum (DP with its bounds and dominance)
//   optimum_without_bounds:    the same DP without them: the baseline
#include <dnnplan/io/deadline_policy_json.hpp>
#include <dnnplan/io/spot_market_csv.hpp>
#include <dnnplan/runtime/adaptive.hpp>
#include <dnnplan/solve/deadline_policy/optimal.hpp>
#include <dnnplan/runtime/policies.hpp>

#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

namespace {

const std::string dir = std::string(DNNPLAN_FIXTURES_DIR) + "/spot_availability/aws-2023-02-15/";

dnnplan::spot_market_trace zone(const std::string& name) {
    std::ifstream csv(dir + name + "_v100_1.csv");
    std::ifstream prices(dir + "v100_spot_prices.json");
    dnnplan::spot_market_trace t = dnnplan::parse_spot_market_csv(csv, name).trace;
    t.spot_usd_per_h = dnnplan::parse_spot_price_table(prices).at(name + "_v100_1");
    t.on_demand_usd_per_h = 3.06;
    return t;
}

const dnnplan::deadline_market& market() {
    static const dnnplan::deadline_market m{.regions = {zone("us-west-2a")}};
    return m;
}

const dnnplan::deadline_market& three_regions() {
    static const dnnplan::deadline_market m{.regions = {zone("us-east-1c"), zone("us-east-1d"), zone("us-east-1f")}};
    return m;
}

constexpr dnnplan::deadline_job job{.work_s = 48 * 3600.0, .deadline_s = 70 * 3600.0, .changeover_s = 0.2 * 3600.0};
constexpr std::size_t start = 4200;

/// A policy counted: its decisions, for the time per decision.
template <class Policy>
struct counted {
    Policy policy = Policy();
    std::int64_t decisions = 0;
    dnnplan::deadline_decision decide(const dnnplan::deadline_view& v) {
        ++decisions;
        return policy.decide(v);
    }
};

template <class Policy>
void per_decision(benchmark::State& state, const dnnplan::deadline_market& m = market(), const dnnplan::deadline_job& j = job) {
    std::int64_t decisions = 0;
    for (auto _ : state) {
        counted<Policy> p;
        benchmark::DoNotOptimize(dnnplan::simulate_window(m, j, start, p));
        decisions += p.decisions;
    }
    // Time per decision: the simulator's own work per tick is included (a few comparisons).
    state.counters["decisions"] = benchmark::Counter(static_cast<double>(decisions), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void decide_default(benchmark::State& state) { per_decision<dnnplan::adaptive_deadline_policy>(state); }
BENCHMARK(decide_default)->Unit(benchmark::kMillisecond);

void decide_uniform_progress(benchmark::State& state) { per_decision<dnnplan::uniform_progress_policy>(state); }
BENCHMARK(decide_uniform_progress)->Unit(benchmark::kMillisecond);

void decide_default_3_regions(benchmark::State& state) {
    dnnplan::deadline_job three = job;
    three.egress_usd = 1.0;
    per_decision<dnnplan::adaptive_deadline_policy>(state, three_regions(), three);
}
BENCHMARK(decide_default_3_regions)->Unit(benchmark::kMillisecond);

void optimum(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(dnnplan::hindsight_optimum(market(), job, start));
}
BENCHMARK(optimum)->Unit(benchmark::kMillisecond);

void optimum_without_bounds(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(dnnplan::hindsight_optimum(market(), job, start, false));
}
BENCHMARK(optimum_without_bounds)->Unit(benchmark::kMillisecond);

}  // namespace
