// Exact search vs the exhaustive oracle vs the paper's sliding window on the same inputs:
// (a) the artifact's ResNet-110 problem, (b) a 7-type quota-10 catalog shaped like Table III
// (19.5 million clusters), (c) a synthetic 30-type quota-32 catalog (33^30 clusters: no
// exhaustive run), and the cost of evaluating one cluster. Counters carry the search work and
// the answer, so every ratio in docs/performance.md comes from one run of this binary.

#include <dnnplan/solve/spot_provision/solve.hpp>

#include "problems.hpp"

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

// Counts heap allocations in this binary, to show that evaluating a cluster allocates nothing.
namespace {
std::atomic<long long> allocations{0};
}
// GCC cannot see that this operator new and the operator delete below are a matched pair.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

dnnplan::spot_problem problem_for(int which) {
    switch (which) {
        case 0: return dnnplan_bench::resnet110_problem();
        case 1: return dnnplan_bench::table3_problem();
        default: return dnnplan_bench::synthetic_problem(30, 32);
    }
}

const char* label_for(int which) {
    return which == 0 ? "(a) resnet110" : which == 1 ? "(b) table3 7x10" : "(c) synthetic 30x32";
}

/// The planner with `method`; a wall-clock limit when `max_time_s` > 0, otherwise no limit at all
/// (the figures compare whole searches, not the default budget's cut).
void run_solver(benchmark::State& state, dnnplan::search_method method, double max_time_s) {
    const auto which = static_cast<int>(state.range(0));
    dnnplan::spot_request request{.problem = problem_for(which), .options = {}};
    request.options.method = method;
    request.options.budget = {.max_nodes = 0, .max_evaluations = 0, .max_time_s = max_time_s};
    dnnplan::spot_result result;
    for (auto _ : state) {
        result = dnnplan::solve(request);
        benchmark::DoNotOptimize(result);
    }
    state.SetLabel(std::string(label_for(which)) + " " + std::string(to_string(result.status)));
    state.counters["nodes"] = static_cast<double>(result.counters.nodes);
    state.counters["evaluated"] = static_cast<double>(result.counters.evaluations);
    state.counters["cost_usd"] = result.plan ? result.plan->prediction.cost_usd : -1.0;
    state.counters["lower_bound_usd"] = result.bound.value_or(0.0);
    state.counters["gap"] = result.plan && result.bound && *result.bound > 0.0
                                ? (result.plan->prediction.cost_usd - *result.bound) / result.plan->prediction.cost_usd
                                : 0.0;
}

void BM_exact(benchmark::State& state) { run_solver(state, dnnplan::search_method::exact, 0.0); }
void BM_exact_budget_1s(benchmark::State& state) { run_solver(state, dnnplan::search_method::exact, 1.0); }
void BM_exhaustive(benchmark::State& state) { run_solver(state, dnnplan::search_method::exhaustive, 0.0); }
void BM_sliding_window(benchmark::State& state) { run_solver(state, dnnplan::search_method::sliding_window, 0.0); }

BENCHMARK(BM_exact)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_exhaustive)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->MinTime(2.0);
BENCHMARK(BM_sliding_window)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_exact_budget_1s)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(3);

// One cluster of the Table III catalog: eqs. (2)-(9) and (11), as every search evaluates it.
void BM_evaluate_cluster(benchmark::State& state) {
    const dnnplan::spot_problem problem = dnnplan_bench::table3_problem();
    const dnnplan::spotdnn_setup setup = dnnplan::make_spotdnn_setup({.problem = problem, .options = {}});
    const std::vector<std::int32_t> counts{2, 1, 0, 3, 1, 4, 2};
    const long long before = allocations.load();
    for (auto _ : state) {
        const dnnplan::cluster_prediction p = setup.provisioner.predict(counts, problem.goals.target_loss);
        benchmark::DoNotOptimize(p);
    }
    state.counters["allocations_per_evaluation"] =
        static_cast<double>(allocations.load() - before) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_evaluate_cluster)->Unit(benchmark::kNanosecond);

}  // namespace
