// The VM recommender (solve/vm_recommend/solve.hpp): branch and bound against the exhaustive oracle on
// the same inputs. Two 30-type catalogs with the synchronous model, every objective proven
// optimal (relative_gap 1e-9), with a deadline job: (a) a seeded synthetic catalog (1-8 GPUs per
// instance, 10 GPU speeds, spot at 25-45% of on-demand, quota 8, at most 16 instances), and
// (b) thirty real EC2 GPU instance types (ec2_rows below: approximate us-east-1 on-demand prices,
// assumed spot fractions, approximate relative GPU speeds), quota 8, at most 16 instances. Their
// exact Pareto frontiers: the frontier by replica counts (solve/vm_recommend/replica_frontier.hpp,
// what solve() runs) against the branch and bound's frontier search that came before it (one
// iteration each: 10-70 s). The exhaustive oracle cannot enumerate 30 types (about 10^20
// configurations), so (c) a 6-type cut of the synthetic catalog (quota 3, at most 8 instances:
// 82,664 offer configurations) is timed with every method for the ratio, frontier included.
// Counters carry the search work and the answer; docs/performance.md ("VM recommender") quotes
// runs of this binary.

#include <dnnplan/solve/vm_recommend/solve.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

struct bench_case {
    dnnplan::vm_problem problem;
    dnnplan::sync_cluster_throughput model;
};

/// Thirty real EC2 GPU instance types (seven GPU generations, 1-16 GPUs per instance): us-east-1
/// Linux on-demand USD/h as recalled from AWS's public price list, not checked against its current
/// figures (only the shape of the catalog matters for a timing input); spot at a fixed fraction per family (an assumption,
/// spot prices move); per-GPU speed relative to a K80 for a ResNet-50-like job (approximate
/// public benchmark ratios). Same job and network as the synthetic case.
struct ec2_row {
    const char* name;
    std::int32_t gpus;
    double on_demand_usd_per_h;
    double spot_ratio;
    double speed;
};
constexpr ec2_row ec2_rows[] = {
    {"p2.xlarge", 1, 0.90, 0.30, 1.0},       {"p2.8xlarge", 8, 7.20, 0.30, 1.0},
    {"p2.16xlarge", 16, 14.40, 0.30, 1.0},   {"g3s.xlarge", 1, 0.75, 0.30, 1.2},
    {"g3.4xlarge", 1, 1.14, 0.30, 1.2},      {"g3.8xlarge", 2, 2.28, 0.30, 1.2},
    {"g3.16xlarge", 4, 4.56, 0.30, 1.2},     {"g4dn.xlarge", 1, 0.526, 0.32, 1.8},
    {"g4dn.2xlarge", 1, 0.752, 0.32, 1.8},   {"g4dn.4xlarge", 1, 1.204, 0.32, 1.8},
    {"g4dn.8xlarge", 1, 2.176, 0.32, 1.8},   {"g4dn.12xlarge", 4, 3.912, 0.32, 1.8},
    {"g4dn.16xlarge", 1, 4.352, 0.32, 1.8},  {"g4dn.metal", 8, 7.824, 0.32, 1.8},
    {"g5.xlarge", 1, 1.006, 0.40, 3.9},      {"g5.2xlarge", 1, 1.212, 0.40, 3.9},
    {"g5.4xlarge", 1, 1.624, 0.40, 3.9},     {"g5.8xlarge", 1, 2.448, 0.40, 3.9},
    {"g5.12xlarge", 4, 5.672, 0.40, 3.9},    {"g5.16xlarge", 1, 4.096, 0.40, 3.9},
    {"g5.24xlarge", 4, 8.144, 0.40, 3.9},    {"g5.48xlarge", 8, 16.288, 0.40, 3.9},
    {"g6.xlarge", 1, 0.8048, 0.45, 3.4},     {"g6.12xlarge", 4, 4.6016, 0.45, 3.4},
    {"g6.48xlarge", 8, 13.3504, 0.45, 3.4},  {"p3.2xlarge", 1, 3.06, 0.33, 5.4},
    {"p3.8xlarge", 4, 12.24, 0.33, 5.4},     {"p3.16xlarge", 8, 24.48, 0.33, 5.4},
    {"p3dn.24xlarge", 8, 31.212, 0.33, 5.4}, {"p4d.24xlarge", 8, 32.7726, 0.40, 9.5},
};

/// `types` instance types of a seeded synthetic catalog (or the EC2 rows with `ec2`); the
/// synchronous model of an ImageNet-like job (Pollux form; per-replica batch 64).
bench_case make_case(std::size_t types, std::int32_t quota, std::int32_t max_instances, dnnplan::objective_kind objective,
                     bool ec2 = false) {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const std::int32_t shapes[] = {1, 2, 4, 8};
    dnnplan::vm_problem p;
    std::vector<dnnplan::affine_time> compute;
    for (std::size_t k = 0; k < types; ++k) {
        const int gpu = static_cast<int>(k % 10);              // 10 GPU generations
        const double speed = 1.0 + 0.35 * gpu;               // relative to the slowest
        const std::int32_t gpus = shapes[(k / 10 + k) % 4];
        const double on_demand = gpus * (0.5 + 0.45 * gpu) * (0.9 + 0.2 * unit(rng));
        p.catalog.instances.push_back({.name = "type" + std::to_string(k), .gpus = gpus, .quota = quota,
                                       .spot_usd_per_h = on_demand * (0.25 + 0.2 * unit(rng)),
                                       .on_demand_usd_per_h = on_demand});
        compute.push_back({.fixed_s = 0.02 / speed, .per_sample_s = 0.004 / speed});
        if (ec2) {
            const ec2_row& e = ec2_rows[k];
            p.catalog.instances.back() = {.name = e.name, .gpus = e.gpus, .quota = quota,
                                          .spot_usd_per_h = e.on_demand_usd_per_h * e.spot_ratio,
                                          .on_demand_usd_per_h = e.on_demand_usd_per_h};
            compute.back() = {.fixed_s = 0.02 / e.speed, .per_sample_s = 0.004 / e.speed};
        }
    }
    dnnplan::sync_cluster_spec spec;
    spec.network = {.alpha_n_s = 0.08, .beta_n_s = 0.004, .alpha_r_s = 0.01, .beta_r_s = 0.002, .gamma = 1.5};
    spec.batch = 64.0;
    auto model = dnnplan::sync_cluster_throughput::from_catalog(p.catalog, compute, spec);
    p.work.epochs = 10.0;
    p.work.dataset_samples = 1.28e6;
    p.constraints.deadline_s = 2.0 * 3600.0;
    p.constraints.max_instances = max_instances;
    p.objective = objective;
    return {std::move(p), std::move(model)};
}

/// The objective of Arg 0, 1, 2: min_cost, max_throughput, max_samples_per_usd.
dnnplan::objective_kind objective_of(std::int64_t arg) {
    return arg == 0 ? dnnplan::objective_kind::min_cost
           : arg == 1 ? dnnplan::objective_kind::max_throughput
                      : dnnplan::objective_kind::max_samples_per_usd;
}

/// No search budget: the figures compare whole searches.
void run(benchmark::State& state, std::size_t types, std::int32_t quota, std::int32_t max_instances,
         dnnplan::search_method method, bool pareto, bool ec2 = false) {
    const dnnplan::objective_kind objective = objective_of(state.range(0));
    const bench_case c = make_case(types, quota, max_instances, objective, ec2);
    dnnplan::vm_request request{.problem = c.problem, .workload = {}, .options = {}};
    request.options.method = method;
    request.options.pareto = pareto;
    request.options.budget = {.max_nodes = 0, .max_evaluations = 0, .max_time_s = 0.0};
    dnnplan::vm_result result;
    for (auto _ : state) {
        result = dnnplan::solve(request, c.model);
        benchmark::DoNotOptimize(result);
    }
    state.SetLabel(std::string(to_string(objective)) + " " +
                   std::string(to_string(pareto ? *result.details.frontier_status : result.status)));
    const auto& counters = pareto ? result.details.frontier_counters : result.counters;
    state.counters["nodes"] = static_cast<double>(counters.nodes);
    state.counters["evaluations"] = static_cast<double>(counters.evaluations);
    state.counters["objective"] = result.objective_value.value_or(0.0);
    if (pareto) state.counters["frontier"] = static_cast<double>(result.details.frontier.size());
}

/// The exact Pareto frontier of a case by one search, called directly on the offer space that
/// solve() builds: the frontier by replica counts, or the branch and bound's frontier search.
void frontier(benchmark::State& state, std::size_t types, std::int32_t quota, std::int32_t max_instances, bool ec2,
              bool branch_and_bound) {
    const bench_case c = make_case(types, quota, max_instances, dnnplan::objective_kind::min_cost, ec2);
    const dnnplan::detail::vm_space space = dnnplan::detail::make_vm_space(c.problem, dnnplan::catalog_offer_cost(c.problem.catalog));
    const dnnplan::search_budget budget{.max_nodes = 0, .max_evaluations = 0, .max_time_s = 0.0};
    dnnplan::detail::vm_search_outcome out;
    for (auto _ : state) {
        out = branch_and_bound ? dnnplan::detail::vm_branch_and_bound<dnnplan::sync_cluster_throughput>(c.model, space, true, budget, 1e-9).run()
                               : dnnplan::detail::vm_replica_frontier(c.model, space, budget).run();
        benchmark::DoNotOptimize(out);
    }
    state.SetLabel(out.limit == dnnplan::search_limit::none ? "exact" : "stopped");
    state.counters["nodes"] = static_cast<double>(out.counters.nodes);
    state.counters["evaluations"] = static_cast<double>(out.counters.evaluations);
    state.counters["frontier"] = static_cast<double>(out.frontier.points().size());
}

void catalog30_branch_and_bound(benchmark::State& s) { run(s, 30, 8, 16, dnnplan::search_method::exact, false); }
void ec2_30_branch_and_bound(benchmark::State& s) { run(s, 30, 8, 16, dnnplan::search_method::exact, false, true); }
void cut6_branch_and_bound(benchmark::State& s) { run(s, 6, 3, 8, dnnplan::search_method::exact, false); }
void cut6_exhaustive(benchmark::State& s) { run(s, 6, 3, 8, dnnplan::search_method::exhaustive, false); }
void cut6_pareto_exact(benchmark::State& s) { run(s, 6, 3, 8, dnnplan::search_method::exact, true); }
void cut6_pareto_exhaustive(benchmark::State& s) { run(s, 6, 3, 8, dnnplan::search_method::exhaustive, true); }
void cut6_frontier_by_replicas(benchmark::State& s) { frontier(s, 6, 3, 8, false, false); }
void cut6_frontier_branch_and_bound(benchmark::State& s) { frontier(s, 6, 3, 8, false, true); }
void catalog30_frontier_by_replicas(benchmark::State& s) { frontier(s, 30, 8, 16, false, false); }
void catalog30_frontier_branch_and_bound(benchmark::State& s) { frontier(s, 30, 8, 16, false, true); }
void ec2_30_frontier_by_replicas(benchmark::State& s) { frontier(s, 30, 8, 16, true, false); }
void ec2_30_frontier_branch_and_bound(benchmark::State& s) { frontier(s, 30, 8, 16, true, true); }

}  // namespace

BENCHMARK(catalog30_branch_and_bound)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(ec2_30_branch_and_bound)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(cut6_branch_and_bound)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(cut6_exhaustive)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(cut6_pareto_exact)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(cut6_pareto_exhaustive)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(cut6_frontier_by_replicas)->Unit(benchmark::kMillisecond);
BENCHMARK(cut6_frontier_branch_and_bound)->Unit(benchmark::kMillisecond);
BENCHMARK(catalog30_frontier_by_replicas)->Unit(benchmark::kMillisecond);
BENCHMARK(catalog30_frontier_branch_and_bound)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(ec2_30_frontier_by_replicas)->Unit(benchmark::kMillisecond);
BENCHMARK(ec2_30_frontier_branch_and_bound)->Iterations(1)->Unit(benchmark::kMillisecond);
