// Preemption-aware planning: Bamboo's simulation in trace mode with runs of steps in
// closed form against the same simulation stepping one step at a time (the reference loop,
// bamboo_options::closed_form_steps = false) on the same traces; a 2,000-seed row of Bamboo's
// random mode; the resilience planner on the bundled problem of resilience_plan (GPT-2 on the p3
// trace, q = 0.9, 200 start times), with and without its fallback (the deadline policy's tick
// runs, one per Bamboo run); a checkpoint-restart interval choice. docs/performance.md has the
// figures and compares them with the time of Bamboo's Python simulator.

#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/preemption/bamboo_simulator.hpp>
#include <dnnplan/solve/resilience_plan/checkpoint.hpp>
#include <dnnplan/solve/resilience_plan/solve.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

namespace {

const dnnplan::instance_trace& trace_named(int which) {
    static const auto read = [](const std::string& name) {
        std::ifstream in(std::string(DNNPLAN_FIXTURES_DIR) + "/bamboo/" + name + "-trace.csv");
        if (!in) throw std::runtime_error("cannot open the " + name + " trace under " DNNPLAN_FIXTURES_DIR "/bamboo");
        return dnnplan::parse_instance_trace(in);
    };
    static const dnnplan::instance_trace p3 = read("p3"), g4dn = read("g4dn");
    return which == 0 ? p3 : g4dn;
}

/// Args: trace (0 p3, 1 g4dn), workload (bamboo_workload), closed form (1) or step by step (0).
void trace_mode(benchmark::State& state) {
    const auto& trace = trace_named(static_cast<int>(state.range(0)));
    dnnplan::bamboo_options options;
    const auto workload = static_cast<dnnplan::bamboo_workload>(state.range(1));
    options.workload = dnnplan::bamboo_workload_preset(workload);
    options.closed_form_steps = state.range(2) == 1;
    dnnplan::bamboo_run run;
    for (auto _ : state) {
        run = dnnplan::simulate_bamboo(trace, options);
        benchmark::DoNotOptimize(run);
    }
    state.SetLabel(std::string(state.range(0) == 0 ? "p3 " : "g4dn ") + std::string(to_string(workload)) +
                   (options.closed_form_steps ? " closed form" : " step by step"));
    state.counters["steps"] = static_cast<double>(run.steps);
    state.counters["closed_form_steps"] = static_cast<double>(run.closed_form_steps);
}
BENCHMARK(trace_mode)
    ->ArgsProduct({{0, 1}, {static_cast<long>(dnnplan::bamboo_workload::gpt2), static_cast<long>(dnnplan::bamboo_workload::bert)}, {1, 0}})
    ->Unit(benchmark::kMicrosecond);

/// Bamboo's random mode, GPT-2, removal probability 0.05 per hour, 12 h: seeds 1..2,000 per iteration.
void random_mode_row(benchmark::State& state) {
    const dnnplan::bamboo_random_options random{.capacity = 48, .removal_probability = 0.05};
    dnnplan::bamboo_options options;
    const auto seeds = static_cast<std::uint64_t>(state.range(0));
    std::int64_t steps = 0;
    for (auto _ : state) {
        steps = 0;
        for (std::uint64_t seed = 1; seed <= seeds; ++seed) steps += dnnplan::simulate_bamboo(random, seed, options).steps;
        benchmark::DoNotOptimize(steps);
    }
    state.counters["runs"] = static_cast<double>(seeds);
    state.counters["mean_steps"] = static_cast<double>(steps) / static_cast<double>(seeds);
}
BENCHMARK(random_mode_row)->Arg(2000)->Unit(benchmark::kMillisecond);

/// resilience_plan's bundled problem (examples/data/resilience_gpt2_p3.json), built here; with
/// the argument 0 the fallback is not evaluated (the baseline of what its policy runs cost).
void resilience_planner(benchmark::State& state) {
    dnnplan::resilience_request request;
    request.job = {.workload = dnnplan::bamboo_workload_preset(dnnplan::bamboo_workload::gpt2),
                   .work_samples = 200'000,
                   .deadline_h = 6.0,
                   .probability = 0.9,
                   .checkpoint_h = 0.05,
                   .restart_h = 0.1};
    request.offers = {{.name = "p3.2xlarge",
                       .spot_usd_per_h = 0.91,
                       .on_demand_usd_per_h = 3.06,
                       .speed = 1.0,
                       .max_instances = 32,
                       .preemption = dnnplan::trace_replay(trace_named(0))}};
    request.options.samples = static_cast<std::int32_t>(state.range(0));
    request.options.spot_with_fallback = state.range(1) != 0;
    dnnplan::resilience_result result;
    for (auto _ : state) {
        result = dnnplan::solve(request);
        benchmark::DoNotOptimize(result);
    }
    if (!result.plan) state.SkipWithError("the bundled problem has no plan");
    state.SetLabel(std::string(to_string(result.status)) + ": " + (result.plan ? std::string(to_string(result.plan->strategy)) : ""));
    state.counters["simulations"] = static_cast<double>(result.details.simulations);
}
BENCHMARK(resilience_planner)->Args({200, 1})->Args({200, 0})->Unit(benchmark::kMillisecond);

/// The interval of greatest P(T <= D) for a 10 h job (checkpoint 6 min, restart 12 min, 0.1
/// preemptions per hour, deadline 14 h).
void checkpoint_interval(benchmark::State& state) {
    dnnplan::checkpoint_request request{.work_h = 10.0, .checkpoint_h = 0.1, .restart_h = 0.2,
                                        .preemption = dnnplan::poisson_preemption{.rate_per_instance_h = 0.1}, .deadline_h = 14.0};
    request.options.objective = dnnplan::checkpoint_objective::max_deadline_probability;
    dnnplan::checkpoint_result result;
    for (auto _ : state) {
        result = dnnplan::solve(request);
        benchmark::DoNotOptimize(result);
    }
    state.SetLabel(std::string(to_string(result.status)));
}
BENCHMARK(checkpoint_interval)->Unit(benchmark::kMicrosecond);

}  // namespace
