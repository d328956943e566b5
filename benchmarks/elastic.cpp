// The elastic advisor's decision time (docs/performance.md, "Elastic advisor"; goal: an advise call
// under 1 ms). Same input for every row: runtime records of four configurations of the ICAC'19 V100
// table (tests/fixtures/elastic/icac19_v100.json), 16 configurations (1-2 PS x 1-8 workers).
//   advise_model:            the model advisor as shipped (elastic_options: 3 fitter starts, 200 iterations)
//   advise_model_fitter_defaults: the same with the fitter's own defaults (24 starts, 2000 iterations), the baseline
//   advise_dlrover:          DLRover's running-stage plan on the same records (with their nodes)
#include <dnnplan/solve/elastic_advisor/runtime_records.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace {

std::vector<dnnplan::elastic_record> records() {
    std::vector<dnnplan::elastic_record> out;
    const struct {
        std::int32_t ps, workers;
        double speed;
    } runs[] = {{1, 2, 26.96}, {1, 4, 38.942}, {2, 4, 60.468}, {2, 3, 46.395}};
    double time = 0.0;
    std::int64_t step = 0;
    for (const auto& r : runs)
        for (int sample = 0; sample < 4; ++sample) {
            dnnplan::elastic_record rec{.time_s = time, .global_step = step, .speed = r.speed, .ps = r.ps, .workers = r.workers};
            for (std::int32_t i = 0; i < r.ps; ++i)
                rec.nodes.push_back({.type = dnnplan::dlrover::node_type::ps, .id = i, .cpu_used = 0.2 * r.speed / r.ps,
                                     .cpu_requested = 16.0, .memory_used_mb = 2000, .memory_requested_mb = 8192});
            for (std::int32_t i = 0; i < r.workers; ++i)
                rec.nodes.push_back({.type = dnnplan::dlrover::node_type::worker, .id = i, .cpu_used = 4.0,
                                     .cpu_requested = 8.0, .memory_used_mb = 4000, .memory_requested_mb = 16384});
            out.push_back(rec);
            time += 30.0;
            step += static_cast<std::int64_t>(30.0 * r.speed);
        }
    return out;
}

dnnplan::advise_setup setup() {
    dnnplan::advise_setup s{.job = {.gpu = "V100", .remaining_steps = 64'000.0, .deadline_s = 1600.0,
                                    .worker_usd_per_h = 0.861, .ps_usd_per_h = 0.1429}};
    for (std::int32_t p = 1; p <= 2; ++p)
        for (std::int32_t w = 1; w <= 8; ++w) s.job.configurations.push_back({p, w});
    return s;
}

void advise_model(benchmark::State& state) {
    const auto r = records();
    const auto s = setup();
    for (auto _ : state) benchmark::DoNotOptimize(dnnplan::advise(r, s));
}
BENCHMARK(advise_model)->Unit(benchmark::kMicrosecond);

void advise_model_fitter_defaults(benchmark::State& state) {
    const auto r = records();
    auto s = setup();
    s.options.fit.solver = dnnplan::ps_async_fit_options{}.solver;
    // A baseline only if it advises the same: the ratio is then the price of the extra starts.
    if (dnnplan::advise(r, s).plan != dnnplan::advise(r, setup()).plan) {
        state.SkipWithError("the fitter's defaults give another plan than the shipped options on this input");
        return;
    }
    for (auto _ : state) benchmark::DoNotOptimize(dnnplan::advise(r, s));
}
BENCHMARK(advise_model_fitter_defaults)->Unit(benchmark::kMicrosecond);

void advise_dlrover(benchmark::State& state) {
    const auto r = records();
    const dnnplan::dlrover::resource_limits limits{.cpu = 2 * 16.0 + 8 * 8.0, .memory_mb = 10 * 16384.0};
    for (auto _ : state) benchmark::DoNotOptimize(dnnplan::dlrover_advise(r, limits));
}
BENCHMARK(advise_dlrover)->Unit(benchmark::kMicrosecond);

}  // namespace
