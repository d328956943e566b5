#pragma once
// Hybrid-parallel planning on serverless GPU containers, after Hydrozoa (R. Guo, V. Guo, A. Kim,
// J. Hildred, K. Daudjee, "Hydrozoa: Dynamic Hybrid-Parallel DNN Training on Serverless
// Containers", MLSys 2022): a model is split into pipeline stages, each stage replicated
// data-parallel over GPU containers billed per second; the planner chooses the container shape,
// the number of stages, the replicas of each stage, the global batch and its micro-batching that
// maximise throughput per dollar (or throughput within a budget, or minimise the price of a
// target throughput), and re-plans when workers join or leave (Hydrozoa's dynamic worker
// scaling). Times come from a stage-cost model per configuration (by default the 1F1B model of
// model/pipeline_1f1b.hpp; any pipeline_model_factory), partitions from the exact partitioner
// (partition/pipeline_dp.hpp). docs/solvers/hybrid_plan.md describes it.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/pipeline_1f1b.hpp>
#include <dnnplan/fit/layer_chain.hpp>
#include <dnnplan/partition/pipeline_dp.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// A container shape of a serverless platform, billed per second for what it reserves.
struct container_type {
    std::string name{};                         ///< unique in the catalog, e.g. "v100x1"
    std::string gpu_type{};                     ///< e.g. "V100"
    std::int32_t gpus = 1;                      ///< GPUs per container (>= 1); one worker per GPU
    double vcpus = 0.0;                         ///< vCPUs per container (>= 0)
    double memory_gib = 0.0;                    ///< host memory per container, GiB (>= 0)
    double gpu_usd_per_s = 0.0;                 ///< price of one GPU for one second
    double vcpu_usd_per_s = 0.0;                ///< price of one vCPU for one second
    double gib_usd_per_s = 0.0;                 ///< price of one GiB for one second
    std::int32_t max_containers = 1;            ///< the platform's limit on containers of this shape (>= 1)
    double gpu_memory_bytes = 16e9;             ///< per GPU
    double network_bandwidth_bytes_per_s = 1e9; ///< per GPU, between containers
    double speed_ratio = 1.0;                   ///< this GPU's speed / the profiled GPU's speed (> 0)

    /// gpus * gpu_usd_per_s + vcpus * vcpu_usd_per_s + memory_gib * gib_usd_per_s.
    [[nodiscard]] double usd_per_s() const noexcept {
        return static_cast<double>(gpus) * gpu_usd_per_s + vcpus * vcpu_usd_per_s + memory_gib * gib_usd_per_s;
    }

    void validate(std::string_view path = "container") const {
        const std::string p = detail::field_prefix(path);
        if (name.empty()) throw invalid_input(p + "name", "\"\"", "a non-empty name");
        detail::require_at_least(p + "gpus", gpus, 1);
        detail::require_non_negative(p + "vcpus", vcpus);
        detail::require_non_negative(p + "memory_gib", memory_gib);
        detail::require_non_negative(p + "gpu_usd_per_s", gpu_usd_per_s);
        detail::require_non_negative(p + "vcpu_usd_per_s", vcpu_usd_per_s);
        detail::require_non_negative(p + "gib_usd_per_s", gib_usd_per_s);
        if (!(usd_per_s() > 0.0))
            throw invalid_input(p + "gpu_usd_per_s", detail::format_number(gpu_usd_per_s),
                                "prices that make the container cost more than 0 per second");
        detail::require_at_least(p + "max_containers", max_containers, 1);
        detail::require_positive(p + "gpu_memory_bytes", gpu_memory_bytes);
        detail::require_positive(p + "network_bandwidth_bytes_per_s", network_bandwidth_bytes_per_s);
        detail::require_positive(p + "speed_ratio", speed_ratio);
    }
};

struct container_catalog {
    std::vector<container_type> containers{};

    /// Throws invalid_input naming "catalog.containers[k]...." (or the path given).
    void validate(std::string_view path = "catalog") const {
        const std::string p = detail::field_prefix(path) + "containers";
        if (containers.empty()) throw invalid_input(p, "[]", "at least one container type");
        for (std::size_t k = 0; k < containers.size(); ++k) {
            const std::string at = p + "[" + std::to_string(k) + "]";
            containers[k].validate(at);
            for (std::size_t q = 0; q < k; ++q)
                if (containers[q].name == containers[k].name)
                    throw invalid_input(at + ".name", '"' + containers[k].name + '"', "a name no other container type has");
        }
    }
};

struct hybrid_problem {
    std::vector<batch_profile> profiles{};        ///< the layer profile at >= 1 batch sizes (the first is the reference)
    container_catalog catalog{};
    std::int32_t max_workers = 1;                 ///< GPUs in total (>= 1)
    std::vector<std::int32_t> global_batch_sizes{};  ///< allowed samples per minibatch (each >= 1)

    /// The checks that need no chain; build_layer_chain checks the profiles.
    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        if (profiles.empty()) throw invalid_input(p + "profiles", "[]", "at least one profile");
        for (std::size_t k = 0; k < profiles.size(); ++k) profiles[k].validate(p + "profiles[" + std::to_string(k) + "]");
        catalog.validate(p + "catalog");
        detail::require_at_least(p + "max_workers", max_workers, 1);
        if (global_batch_sizes.empty()) throw invalid_input(p + "global_batch_sizes", "[]", "at least one batch size");
        for (std::size_t k = 0; k < global_batch_sizes.size(); ++k)
            detail::require_at_least(p + "global_batch_sizes[" + std::to_string(k) + "]", global_batch_sizes[k], 1);
    }
};

struct hybrid_options {
    /// max_samples_per_usd (Hydrozoa's objective), max_throughput (within budget_usd_per_h) or
    /// min_cost (the price per hour, at target_samples_per_s or more).
    objective_kind objective = objective_kind::max_samples_per_usd;
    double budget_usd_per_h = std::numeric_limits<double>::infinity();  ///< max_throughput: the price cap (> 0; +inf: none)
    double target_samples_per_s = 0.0;  ///< min_cost: the throughput to reach (> 0 then)
    std::int32_t max_micro_batches = 32;  ///< M tried: every divisor of the global batch up to this (>= 1)
    std::int32_t max_stages = 0;          ///< 0: no limit; 1: pure data parallelism
    double sync_overlap_ratio = 0.0;      ///< pipeline_config::sync_overlap_ratio, [0, 1]
    double optimizer_state_ratio = 2.0;   ///< layer_chain_options::optimizer_state_ratio (>= 0)
    /// The budget of each partition (pipeline_dp_options::budget): a configuration whose partition
    /// is over it is skipped, and a result with none left says so (status budget_exhausted).
    search_budget budget{};

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        budget.validate(p + "budget");
        if (objective == objective_kind::min_time)
            throw invalid_input(p + "objective", "\"min_time\"",
                                "\"max_samples_per_usd\", \"max_throughput\" or \"min_cost\"");
        if (!(budget_usd_per_h > 0.0))
            throw invalid_input(p + "budget_usd_per_h", detail::format_number(budget_usd_per_h), "a number > 0 (or +inf: no budget)");
        detail::require_non_negative(p + "target_samples_per_s", target_samples_per_s);
        if (objective == objective_kind::min_cost && !(target_samples_per_s > 0.0))
            throw invalid_input(p + "target_samples_per_s", detail::format_number(target_samples_per_s),
                                "a number > 0 with the objective min_cost");
        detail::require_at_least(p + "max_micro_batches", max_micro_batches, 1);
        detail::require_at_least(p + "max_stages", max_stages, 0);
        if (!(sync_overlap_ratio >= 0.0 && sync_overlap_ratio <= 1.0))
            throw invalid_input(p + "sync_overlap_ratio", detail::format_number(sync_overlap_ratio), "a number in [0, 1]");
        detail::require_non_negative(p + "optimizer_state_ratio", optimizer_state_ratio);
    }
};

/// What the planner is asked: the problem and the options (a problem file holds both).
struct hybrid_request {
    hybrid_problem problem{};
    hybrid_options options{};

    void validate(std::string_view path = "") const {
        problem.validate(path);
        options.validate(detail::field_prefix(path) + "options");
    }
};

struct hybrid_stage {
    std::size_t first_state = 0;
    std::size_t end_state = 0;            ///< exclusive
    std::int32_t replicas = 1;
    std::vector<std::size_t> layers{};    ///< layer indices (into the profile's graph), chain order
    stage_breakdown figures{};            ///< the model's figures of the stage in its place (stage_breakdown_model), else only stage_time_s
    friend bool operator==(const hybrid_stage&, const hybrid_stage&) = default;
};

struct hybrid_plan {
    std::string container{};               ///< the container type's name
    std::int32_t containers = 0;           ///< ceil(workers / gpus per container)
    std::int32_t workers = 0;              ///< GPUs the stages use (sum of replicas)
    std::int32_t global_batch_size = 0;    ///< micro_batch_size * micro_batches
    std::int32_t micro_batch_size = 0;
    std::int32_t micro_batches = 0;
    std::vector<hybrid_stage> stages{};
    double time_per_minibatch_s = 0.0;     ///< (M + S - 1) * slowest stage per micro-batch
    double samples_per_s = 0.0;            ///< global_batch_size / time_per_minibatch_s
    double usd_per_h = 0.0;                ///< containers * container price * 3600
    double samples_per_usd = 0.0;          ///< samples_per_s * 3600 / usd_per_h
    friend bool operator==(const hybrid_plan&, const hybrid_plan&) = default;
};

/// status optimal (every container, batch and micro-batch count partitioned exactly:
/// objective_value = bound = the plan's samples_per_usd, samples_per_s or usd_per_h) or infeasible;
/// counters.nodes = configurations (container group, global batch, micro-batch count) partitioned,
/// counters.evaluations = stage times computed by the partitioner.
using hybrid_result = solve_result<hybrid_plan>;

/// A layer whose stage changes in a re-plan.
struct layer_move {
    std::size_t layer = 0;
    std::string id{};
    std::optional<std::int32_t> from_stage{};  ///< none: the layer is in no stage of the running plan
    std::optional<std::int32_t> to_stage{};    ///< none: the layer is in no stage of the new plan
    double bytes = 0.0;  ///< parameters + optimizer state
    friend bool operator==(const layer_move&, const layer_move&) = default;
};

struct replan_result {
    hybrid_result result{};                ///< the new plan
    std::vector<layer_move> moves{};       ///< in layer-chain order
    std::vector<double> bytes_in_by_stage{};   ///< per new stage: bytes of the layers it receives
    std::vector<double> bytes_out_by_stage{};  ///< per running stage: bytes of the layers it gives away
    double bytes_moved = 0.0;
};

namespace detail {

/// a < b, treating values within a relative 1e-9 as equal (so that rounding in the last digit,
/// e.g. 2 x a half batch against one whole batch, does not decide between equal plans).
[[nodiscard]] inline bool clearly_less(double a, double b) noexcept {
    return a < b && !(b - a <= 1e-9 * std::max(std::abs(a), std::abs(b)));
}

/// How the objective ranks two feasible plans: true when `a` is strictly better than `b`. Ties on
/// the objective go to the other figure (throughput, then price); full ties keep the plan found
/// first.
[[nodiscard]] inline bool hybrid_better(const hybrid_plan& a, const hybrid_plan& b, objective_kind objective) noexcept {
    const auto compare = [](double x, double y, bool larger_is_better) {
        if (larger_is_better) return clearly_less(y, x) ? 1 : clearly_less(x, y) ? -1 : 0;
        return clearly_less(x, y) ? 1 : clearly_less(y, x) ? -1 : 0;
    };
    int first = 0, second = 0;
    switch (objective) {
        case objective_kind::max_samples_per_usd:
            first = compare(a.samples_per_usd, b.samples_per_usd, true);
            second = compare(a.samples_per_s, b.samples_per_s, true);
            break;
        case objective_kind::max_throughput:
        case objective_kind::min_time:  // rejected by hybrid_options::validate
            first = compare(a.samples_per_s, b.samples_per_s, true);
            second = compare(a.usd_per_h, b.usd_per_h, false);
            break;
        case objective_kind::min_cost:
            first = compare(a.usd_per_h, b.usd_per_h, false);
            second = compare(a.samples_per_s, b.samples_per_s, true);
            break;
    }
    return first != 0 ? first > 0 : second > 0;
}

/// The objective's figure of a plan.
[[nodiscard]] inline double hybrid_objective_value(const hybrid_plan& plan, objective_kind objective) noexcept {
    switch (objective) {
        case objective_kind::max_samples_per_usd: return plan.samples_per_usd;
        case objective_kind::min_cost: return plan.usd_per_h;
        case objective_kind::max_throughput:
        case objective_kind::min_time: break;
    }
    return plan.samples_per_s;
}

template <remaining_stages_cost_model Model>
[[nodiscard]] hybrid_plan make_hybrid_plan(const Model& model, const pipeline_config& config, const pipeline_dp_plan& p,
                                           const layer_chain& chain, const container_type& container) {
    hybrid_plan plan;
    plan.container = container.name;
    plan.workers = p.devices;
    plan.containers = (p.devices + container.gpus - 1) / container.gpus;
    plan.micro_batch_size = config.micro_batch_size;
    plan.micro_batches = config.micro_batches;
    plan.global_batch_size = plan.micro_batch_size * plan.micro_batches;
    const auto count = static_cast<std::int32_t>(p.stages.size());
    for (std::int32_t s = 0; s < count; ++s) {
        const pipeline_dp_stage& st = p.stages[static_cast<std::size_t>(s)];
        hybrid_stage stage{.first_state = st.first_state, .end_state = st.end_state, .replicas = st.replicas};
        for (std::size_t i = st.first_state; i < st.end_state; ++i) stage.layers.push_back(chain.layers[i].layer);
        const stage_candidate candidate{.first_state = st.first_state, .end_state = st.end_state, .replicas = st.replicas,
                                        .stage_index = s, .stage_count = count};
        if constexpr (stage_breakdown_model<Model>) stage.figures = model.breakdown(candidate);
        else stage.figures.stage_time_s = st.stage_time_s;
        plan.stages.push_back(std::move(stage));
    }
    plan.time_per_minibatch_s = p.time_s;
    plan.samples_per_s = static_cast<double>(plan.global_batch_size) / p.time_s;
    plan.usd_per_h = static_cast<double>(plan.containers) * container.usd_per_s() * 3600.0;
    plan.samples_per_usd = plan.samples_per_s * 3600.0 / plan.usd_per_h;
    return plan;
}

template <pipeline_model_factory Factory>
[[nodiscard]] hybrid_result solve_hybrid(const hybrid_problem& problem, const hybrid_options& options,
                                         const layer_chain& chain, const Factory& factory) {
    hybrid_result result;
    const auto start = std::chrono::steady_clock::now();
    std::optional<hybrid_plan> fastest, cheapest;  // over every plan that fits, for the reason
    std::int64_t non_finite = 0, over_budget = 0;
    std::string over_budget_reason;
    const auto& catalog = problem.catalog.containers;
    const auto container_limit = [&](const container_type& c) {
        return std::max(0, std::min(c.max_containers, problem.max_workers / c.gpus));
    };
    // Container types with the same GPU (memory, bandwidth, speed) share one model, hence one
    // partition for every device budget: the partitioner runs once per group, for the group's
    // largest budget (a budget's answer does not depend on the larger budgets).
    const auto same_gpu = [](const container_type& a, const container_type& b) {
        return a.gpu_memory_bytes == b.gpu_memory_bytes && a.network_bandwidth_bytes_per_s == b.network_bandwidth_bytes_per_s &&
               a.speed_ratio == b.speed_ratio;
    };
    for (const std::int32_t batch : problem.global_batch_sizes)
        for (std::int32_t m = 1; m <= std::min(batch, options.max_micro_batches); ++m) {
            if (batch % m != 0) continue;
            std::vector<std::optional<pipeline_dp_result>> partitions(catalog.size());
            for (std::size_t k = 0; k < catalog.size(); ++k) {
                const container_type& container = catalog[k];
                const std::int32_t max_containers = container_limit(container);
                if (max_containers < 1) continue;
                std::size_t group = 0;  // the first type of the group (k itself at the latest)
                while (!same_gpu(catalog[group], container)) ++group;
                const pipeline_config config{.micro_batch_size = batch / m,
                                             .micro_batches = m,
                                             .bandwidth_bytes_per_s = container.network_bandwidth_bytes_per_s,
                                             .sync_overlap_ratio = options.sync_overlap_ratio,
                                             .device_memory_bytes = container.gpu_memory_bytes,
                                             .speed_ratio = container.speed_ratio};
                const auto model = factory(chain, config);
                if (!partitions[group]) {
                    std::int32_t devices = 0;
                    for (std::size_t q = group; q < catalog.size(); ++q)
                        if (same_gpu(catalog[q], container)) devices = std::max(devices, container_limit(catalog[q]) * catalog[q].gpus);
                    partitions[group] = pipeline_dp_partition(
                        model, {.max_devices = devices, .max_stages = options.max_stages, .budget = options.budget});
                    result.counters.evaluations += partitions[group]->counters.evaluations;
                    if (partitions[group]->status == solve_status::budget_exhausted) {
                        ++over_budget;
                        over_budget_reason = partitions[group]->reason;
                    }
                }
                const pipeline_dp_result& dp = *partitions[group];
                if (dp.status == solve_status::budget_exhausted) continue;
                ++result.counters.nodes;
                for (std::int32_t c = 1; c <= max_containers; ++c) {
                    const std::optional<pipeline_dp_plan>& p = dp.details.by_devices[static_cast<std::size_t>(c * container.gpus - 1)];
                    if (!p) continue;
                    // A budget that a smaller one already covers with the same plan adds nothing.
                    if (c > 1 && p->devices <= (c - 1) * container.gpus) continue;
                    hybrid_plan plan = make_hybrid_plan(model, config, *p, chain, container);
                    if (!std::isfinite(plan.samples_per_s) || !std::isfinite(plan.usd_per_h) ||
                        !std::isfinite(plan.samples_per_usd)) {
                        ++non_finite;
                        continue;
                    }
                    if (!fastest || hybrid_better(plan, *fastest, objective_kind::max_throughput)) fastest = plan;
                    if (!cheapest || hybrid_better(plan, *cheapest, objective_kind::min_cost)) cheapest = plan;
                    if (options.objective == objective_kind::max_throughput && plan.usd_per_h > options.budget_usd_per_h)
                        continue;
                    if (options.objective == objective_kind::min_cost && plan.samples_per_s < options.target_samples_per_s)
                        continue;
                    if (!result.plan || hybrid_better(plan, *result.plan, options.objective)) result.plan = std::move(plan);
                }
            }
        }
    result.counters.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (over_budget > 0) {
        // Some configurations were not partitioned: the best plan found is not proven optimal.
        result.status = solve_status::budget_exhausted;
        result.reason = std::to_string(over_budget) + " configurations skipped: " + over_budget_reason;
        if (result.plan) result.objective_value = hybrid_objective_value(*result.plan, options.objective);
        return result;
    }
    if (result.plan) {
        result.status = solve_status::optimal;
        result.objective_value = result.bound = hybrid_objective_value(*result.plan, options.objective);
        return result;
    }
    if (!fastest) {
        result.reason = "no container type, global batch size and micro-batch count gives a pipeline that fits in GPU "
                        "memory within the worker and container limits";
        if (non_finite > 0)
            result.reason += " (" + std::to_string(non_finite) + " plans fit but their figures are too large for a double)";
    } else if (options.objective == objective_kind::max_throughput) {
        result.reason = "the cheapest plan costs " + format_number(cheapest->usd_per_h) + " USD/h, over the budget of " +
                        format_number(options.budget_usd_per_h) + " USD/h";
    } else {
        result.reason = "the fastest plan gives " + format_number(fastest->samples_per_s) + " samples/s, below the target of " +
                        format_number(options.target_samples_per_s) + " samples/s";
    }
    return result;
}

}  // namespace detail

/// The published configuration: the 1F1B model (model/pipeline_1f1b.hpp) of each configuration.
struct pipeline_1f1b_factory {
    [[nodiscard]] pipeline_1f1b_model operator()(const layer_chain& chain, const pipeline_config& config) const {
        return pipeline_1f1b_model(chain, config);
    }
};

static_assert(pipeline_model_factory<pipeline_1f1b_factory>);

/// Plans the request (the header comment) with the stage-cost models `factory` builds. Throws
/// invalid_input for a bad problem or options (fields named as in hybrid_problem::validate,
/// "options...." and build_layer_chain's "profiles[k]...."); no plan meeting the objective's
/// constraint is status infeasible with the reason.
template <pipeline_model_factory Factory>
[[nodiscard]] hybrid_result solve(const hybrid_request& request, const Factory& factory) {
    request.validate();
    const layer_chain chain =
        build_layer_chain(request.problem.profiles, {.optimizer_state_ratio = request.options.optimizer_state_ratio});
    return detail::solve_hybrid(request.problem, request.options, chain, factory);
}

/// Plans the request with the 1F1B model.
[[nodiscard]] inline hybrid_result solve(const hybrid_request& request) { return solve(request, pipeline_1f1b_factory{}); }

/// Dynamic worker scaling: `running` (a plan of solve() for the request) continues on
/// `new_workers` workers of the same container type. The new plan is solve() with max_workers =
/// new_workers and the catalog narrowed to running.container (global batch and micro-batching
/// may change); a layer moves when its stage index changes, carrying its parameters and optimizer
/// state. Throws invalid_input when running.container is not in the catalog ("running.container")
/// or new_workers < 1 ("new_workers").
template <pipeline_model_factory Factory>
[[nodiscard]] replan_result replan(const hybrid_request& request, const hybrid_plan& running, std::int32_t new_workers,
                                   const Factory& factory) {
    request.validate();
    const hybrid_problem& problem = request.problem;
    detail::require_at_least("new_workers", new_workers, 1);
    const auto& all = problem.catalog.containers;
    const auto it = std::find_if(all.begin(), all.end(), [&](const container_type& c) { return c.name == running.container; });
    if (it == all.end())
        throw invalid_input("running.container", '"' + running.container + '"', "the name of a container type in the catalog");
    hybrid_problem narrowed = problem;
    narrowed.catalog.containers = {*it};
    narrowed.max_workers = new_workers;
    const layer_chain chain = build_layer_chain(problem.profiles, {.optimizer_state_ratio = request.options.optimizer_state_ratio});
    replan_result out;
    out.result = detail::solve_hybrid(narrowed, request.options, chain, factory);

    const std::size_t graph_size = problem.profiles.front().graph.size();
    const auto stage_of = [&](const std::vector<hybrid_stage>& stages, const char* field) {
        std::vector<std::int32_t> stage(graph_size, -1);
        for (std::size_t s = 0; s < stages.size(); ++s)
            for (const std::size_t l : stages[s].layers) {
                if (l >= graph_size)
                    throw invalid_input(std::string(field) + "[" + std::to_string(s) + "].layers", std::to_string(l),
                                        "a layer index below " + std::to_string(graph_size));
                stage[l] = static_cast<std::int32_t>(s);
            }
        return stage;
    };
    const std::vector<std::int32_t> before = stage_of(running.stages, "running.stages");
    const std::vector<std::int32_t> after =
        out.result.plan ? stage_of(out.result.plan->stages, "plan.stages") : std::vector<std::int32_t>(graph_size, -1);
    out.bytes_out_by_stage.assign(running.stages.size(), 0.0);
    out.bytes_in_by_stage.assign(out.result.plan ? out.result.plan->stages.size() : 0, 0.0);
    for (const chain_layer& l : chain.layers) {
        const std::int32_t from = before[l.layer], to = after[l.layer];
        if (from == to) continue;
        const double bytes = l.parameter_bytes + l.optimizer_state_bytes;
        out.moves.push_back({.layer = l.layer, .id = problem.profiles.front().graph.at(l.layer).id,
                             .from_stage = from >= 0 ? std::optional<std::int32_t>(from) : std::nullopt,
                             .to_stage = to >= 0 ? std::optional<std::int32_t>(to) : std::nullopt, .bytes = bytes});
        if (from >= 0) out.bytes_out_by_stage[static_cast<std::size_t>(from)] += bytes;
        if (to >= 0) out.bytes_in_by_stage[static_cast<std::size_t>(to)] += bytes;
        out.bytes_moved += bytes;
    }
    return out;
}

/// Dynamic worker scaling with the 1F1B model.
[[nodiscard]] inline replan_result replan(const hybrid_request& request, const hybrid_plan& running,
                                          std::int32_t new_workers) {
    return replan(request, running, new_workers, pipeline_1f1b_factory{});
}

}  // namespace dnnplan
