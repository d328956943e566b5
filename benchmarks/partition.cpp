// PipeDream-compatible partitioning: the library's solver against the plain transcription of
// PipeDream's recurrence (tests/support/pipedream_reference.hpp, the tests' oracle) on the same
// inputs: every PipeDream profile in tests/fixtures/pipedream on 4, 16 and 64 machines (with
// and without --activation_compression_ratio 1), and synthetic 1,000- and 10,000-layer chains
// on 4 to 1,024 machines; "wide" rows: the three profiles over max_states states (inception_v3,
// the nasnets) on 2 to 64 machines, plain, straight, fewer machines, with transfers and with two
// memory limits, with their bound and gap. Both sides include building the states from the layer graph, as
// PipeDream's optimizer does;
// "solve" rows time one query on prebuilt states. Counters carry the answer so a run shows
// both sides agree.
//
//   partition [--benchmark_filter=...]   (reads DNNPLAN_FIXTURES_DIR/pipedream/<model>.txt)

#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/solve/pipeline_plan/solve.hpp>

#include "../tests/support/pipedream_reference.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

dnnplan::layer_graph profile(const std::string& name) {
    std::ifstream in(std::string(DNNPLAN_FIXTURES_DIR) + "/pipedream/" + name + ".txt");
    if (!in) throw std::runtime_error("missing fixture " + name);
    return dnnplan::parse_pipedream_graph(in);
}

// A chain of n layers with seeded per-layer figures in the range of the shipped profiles (1.5 to
// 7.5 ms per layer, activations up to 40 MB, half the layers with up to 20 MB of parameters).
dnnplan::layer_graph synthetic_chain(std::size_t n) {
    std::mt19937_64 engine(42);
    const auto unit = [&] { return static_cast<double>(engine() >> 11) * 0x1.0p-53; };
    std::vector<dnnplan::layer> layers;
    std::vector<dnnplan::layer_edge> edges;
    for (std::size_t i = 0; i < n; ++i) {
        std::string id = "layer";
        id += std::to_string(i);
        const double f = 0.0005 + 0.002 * unit(), b = 0.001 + 0.004 * unit(), a = 1e6 + 4e7 * unit();
        const double p = unit() < 0.5 ? 0.0 : 1e5 + 2e7 * unit();
        layers.push_back({.id = id, .description = "Linear", .forward_s = f, .backward_s = b, .activation_bytes = a, .parameter_bytes = p});
        if (i > 0) edges.push_back({i - 1, i});
    }
    return {std::move(layers), std::move(edges)};
}

dnnplan::pipedream_options options_for(std::int32_t machines, bool ratio) {
    dnnplan::pipedream_options o;
    o.machines = {machines};
    if (ratio) o.activation_compression_ratio = 1.0;
    return o;
}

void fast(benchmark::State& state, std::shared_ptr<const dnnplan::layer_graph> graph, dnnplan::pipedream_options o) {
    double t = 0.0;
    const dnnplan::pipedream_request request{.graph = *graph, .options = o};  // built once, as a host would
    for (auto _ : state) {
        const auto r = dnnplan::solve(request);
        benchmark::DoNotOptimize(r);  // the const overload: the non-const one may clobber a double (GCC)
        if (!r.plan) {
            state.SkipWithError(("no plan: " + std::string(dnnplan::to_string(r.status)) + ", " + r.reason).c_str());
            break;
        }
        t = r.plan->time_per_minibatch_s;
    }
    state.counters["time_per_minibatch_s"] = t;
}

void solve_only(benchmark::State& state, std::shared_ptr<const dnnplan::layer_graph> graph, dnnplan::pipedream_options o) {
    const auto built = dnnplan::build_antichain_states(*graph);
    dnnplan::pipedream_counters work;
    double t = 0.0;
    for (auto _ : state) {
        work = {};
        const auto r = dnnplan::pipedream_partition(*graph, built, o, &work);
        benchmark::DoNotOptimize(r);
        if (!r.plan) {
            state.SkipWithError(("no plan: " + std::string(dnnplan::to_string(r.status)) + ", " + r.reason).c_str());
            break;
        }
        t = r.plan->time_per_minibatch_s;
    }
    state.counters["time_per_minibatch_s"] = t;
    state.counters["states"] = static_cast<double>(built.states.size());
    state.counters["decisions"] = static_cast<double>(work.threshold_decisions);
    state.counters["state_pairs"] = static_cast<double>(work.state_pairs);
}

// The wide path (graphs over max_states states; docs/solvers/pipeline_plan.md, "Wide graphs"):
// the partition's time, the proven bound and their gap, and the work done.
void wide(benchmark::State& state, std::shared_ptr<const dnnplan::layer_graph> graph, dnnplan::pipedream_options o) {
    const dnnplan::pipedream_request request{.graph = *graph, .options = o};
    dnnplan::pipedream_result r;
    for (auto _ : state) {
        r = dnnplan::solve(request);
        benchmark::DoNotOptimize(r);
        if (!r.plan) {
            state.SkipWithError(("no plan: " + std::string(dnnplan::to_string(r.status)) + ", " + r.reason).c_str());
            return;
        }
    }
    state.counters["time_per_minibatch_s"] = r.plan->time_per_minibatch_s;
    state.counters["bound_s"] = r.bound.value_or(0.0);
    state.counters["gap"] = r.details.lattice.gap_ratio;
    state.counters["optimal"] = r.status == dnnplan::solve_status::optimal ? 1.0 : 0.0;
    state.counters["fills"] = static_cast<double>(r.details.lattice.fills);
    state.counters["family_states"] = static_cast<double>(r.details.lattice.family_states);
}

void plain(benchmark::State& state, std::shared_ptr<const dnnplan::layer_graph> graph, dnnplan::pipedream_options o) {
    double t = 0.0;
    for (auto _ : state) {
        const auto r = dnnplan_test::pipedream_partition_reference(*graph, o);
        benchmark::DoNotOptimize(r);
        t = dnnplan_test::time_or_inf(r);
    }
    state.counters["time_per_minibatch_s"] = t;
}

/// The profile, or null (with a line on stderr) when it cannot be read: its rows are skipped.
std::shared_ptr<const dnnplan::layer_graph> shared_profile(const std::string& name) {
    try {
        return std::make_shared<const dnnplan::layer_graph>(profile(name));
    } catch (const std::exception& e) {
        std::cerr << "skipping " << name << ": " << e.what() << "\n";
        return nullptr;
    }
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    const std::vector<std::string> names = {"alexnet",    "vgg16",     "resnet18",   "squeezenet1_0", "gnmt",       "gnmt_large",
                                            "resnet50",   "resnext50", "resnet101",  "resnext101",    "densenet121"};
    for (const auto& name : names) {
        const auto graph = shared_profile(name);
        if (!graph) continue;
        for (const std::int32_t m : {4, 16, 64})
            for (const bool ratio : {false, true}) {
                const std::string tag = name + "/" + std::to_string(m) + (ratio ? "/ratio1" : "");
                benchmark::RegisterBenchmark(("fast/" + tag).c_str(), fast, graph, options_for(m, ratio))->Unit(benchmark::kMillisecond);
                benchmark::RegisterBenchmark(("plain/" + tag).c_str(), plain, graph, options_for(m, ratio))->Unit(benchmark::kMillisecond);
            }
    }
    // The wide profiles: over max_states (inception_v3: 221,564 states; the nasnets: 1.6e11 and
    // 5.8e12), answered without their states.
    // Flags on 2 to 64 machines: none, a straight pipeline, fewer machines, transfers (ratio 1;
    // ratio 4 at PipeDream's -b 2.5e9) and a memory limit of a half and of an eighth of the model's
    // bytes (activations and parameters).
    for (const std::string name : {"inception_v3", "nasnetamobile", "nasnetalarge"}) {
        const auto graph = shared_profile(name);
        if (!graph) continue;
        double bytes = 0.0;
        for (std::size_t i = 0; i < graph->size(); ++i) bytes += graph->at(i).activation_bytes + graph->at(i).parameter_bytes;
        for (const std::int32_t m : {2, 4, 8, 16, 32, 64})
            for (const std::string flags : {"", "straight", "fewer", "ratio1", "ratio4-b2.5e9", "memory-half", "memory-eighth"}) {
                auto o = options_for(m, flags == "ratio1");
                o.straight_pipeline = flags == "straight";
                o.use_fewer_machines = flags == "fewer";
                if (flags == "ratio4-b2.5e9") o.activation_compression_ratio = 4.0, o.bandwidths_bytes_per_s = {2.5e9};
                if (flags == "memory-half") o.use_memory_constraint = true, o.memory_bytes = bytes / 2.0;
                if (flags == "memory-eighth") o.use_memory_constraint = true, o.memory_bytes = bytes / 8.0;
                const std::string tag = name + "/" + std::to_string(m) + (flags.empty() ? "" : "/" + flags);
                benchmark::RegisterBenchmark(("wide/" + tag).c_str(), wide, graph, o)->Unit(benchmark::kMillisecond);
            }
    }
    for (const std::size_t n : {std::size_t{1000}, std::size_t{10000}}) {
        auto graph = std::make_shared<const dnnplan::layer_graph>(synthetic_chain(n));
        for (const std::int32_t m : {4, 16, 64, 1024}) {
            const std::string tag = "chain" + std::to_string(n) + "/" + std::to_string(m);
            benchmark::RegisterBenchmark(("fast/" + tag).c_str(), fast, graph, options_for(m, false))->Unit(benchmark::kMillisecond);
            benchmark::RegisterBenchmark(("solve/" + tag).c_str(), solve_only, graph, options_for(m, false))->Unit(benchmark::kMillisecond);
            // The general (state x machine) solver on the same chain: a memory limit nothing
            // reaches routes the query there without changing its answer.
            auto general = options_for(m, false);
            general.use_memory_constraint = true;
            general.memory_bytes = 1e300;
            if (n <= 1000 && m <= 64)
                benchmark::RegisterBenchmark(("general/" + tag).c_str(), solve_only, graph, general)->Unit(benchmark::kMillisecond);
            // The plain recurrence is O(S^2 M^2): run where it finishes in seconds.
            if (n <= 1000 && m <= 16)
                benchmark::RegisterBenchmark(("plain/" + tag).c_str(), plain, graph, options_for(m, false))->Unit(benchmark::kMillisecond);
        }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
