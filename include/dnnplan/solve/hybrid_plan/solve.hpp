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
// (partition/pipeline_dp.hpp). The request and result types are in solve/hybrid_plan/problem.hpp;
// docs/solvers/hybrid_plan.md describes it.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/layer_chain.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/pipeline_1f1b.hpp>
#include <dnnplan/partition/pipeline_dp.hpp>
#include <dnnplan/solve/hybrid_plan/problem.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dnnplan {

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

/// The planner's search (the header comment): every global batch size and micro-batch count,
/// every container type within the limits, and every container count of it, each priced from the
/// exact partition of its GPU group for every device budget.
template <pipeline_model_factory Factory>
class hybrid_search {
public:
    hybrid_search(const hybrid_problem& problem, const hybrid_options& options, const layer_chain& chain,
                  const Factory& factory)
        : problem_(problem), options_(options), chain_(chain), factory_(factory) {}

    [[nodiscard]] hybrid_result run() {
        const auto start = std::chrono::steady_clock::now();
        for (const std::int32_t batch : problem_.global_batch_sizes)
            for (std::int32_t m = 1; m <= std::min(batch, options_.max_micro_batches); ++m) {
                if (batch % m != 0) continue;
                partitions_.assign(catalog().size(), std::nullopt);
                for (std::size_t k = 0; k < catalog().size(); ++k) search_container(catalog()[k], batch, m);
            }
        result_.counters.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return conclude();
    }

private:
    [[nodiscard]] const std::vector<container_type>& catalog() const noexcept { return problem_.catalog.containers; }

    [[nodiscard]] std::int32_t container_limit(const container_type& c) const {
        return std::max(0, std::min(c.max_containers, problem_.max_workers / c.gpus));
    }

    // Container types with the same GPU (memory, bandwidth, speed) share one model, hence one
    // partition for every device budget: the partitioner runs once per group, for the group's
    // largest budget (a budget's answer does not depend on the larger budgets).
    [[nodiscard]] static bool same_gpu(const container_type& a, const container_type& b) {
        return a.gpu_memory_bytes == b.gpu_memory_bytes && a.network_bandwidth_bytes_per_s == b.network_bandwidth_bytes_per_s &&
               a.speed_ratio == b.speed_ratio;
    }

    // One container type for `batch` samples in m micro-batches: its group's partition, then a
    // plan for every number of containers.
    void search_container(const container_type& container, std::int32_t batch, std::int32_t m) {
        const std::int32_t max_containers = container_limit(container);
        if (max_containers < 1) return;
        std::size_t group = 0;  // the first type of the group (the container itself at the latest)
        while (!same_gpu(catalog()[group], container)) ++group;
        const pipeline_config config{.micro_batch_size = batch / m,
                                     .micro_batches = m,
                                     .bandwidth_bytes_per_s = container.network_bandwidth_bytes_per_s,
                                     .sync_overlap_ratio = options_.sync_overlap_ratio,
                                     .device_memory_bytes = container.gpu_memory_bytes,
                                     .speed_ratio = container.speed_ratio};
        const auto model = factory_(chain_, config);
        const pipeline_dp_result& dp = group_partition(group, container, model);
        if (dp.limit != search_limit::none) return;
        ++result_.counters.nodes;
        for (std::int32_t c = 1; c <= max_containers; ++c) {
            const std::optional<pipeline_dp_plan>& p = dp.details.by_devices[static_cast<std::size_t>(c * container.gpus - 1)];
            if (!p) continue;
            // A budget that a smaller one already covers with the same plan adds nothing.
            if (c > 1 && p->devices <= (c - 1) * container.gpus) continue;
            consider(make_hybrid_plan(model, config, *p, chain_, container));
        }
    }

    // The partition of `group` (run on its first container type), for the largest device budget
    // of its types; a partition over its budget is counted and skipped.
    template <class Model>
    [[nodiscard]] const pipeline_dp_result& group_partition(std::size_t group, const container_type& container, const Model& model) {
        std::optional<pipeline_dp_result>& partition = partitions_[group];
        if (partition) return *partition;
        std::int32_t devices = 0;
        for (std::size_t q = group; q < catalog().size(); ++q)
            if (same_gpu(catalog()[q], container)) devices = std::max(devices, container_limit(catalog()[q]) * catalog()[q].gpus);
        partition = pipeline_dp_partition(model, {.max_devices = devices, .max_stages = options_.max_stages, .budget = options_.budget});
        result_.counters.evaluations += partition->counters.evaluations;
        if (partition->limit != search_limit::none) {
            ++over_budget_;
            over_budget_reason_ = partition->reason;
            over_budget_limit_ = partition->limit;
        }
        return *partition;
    }

    // A plan that fits: the fastest and the cheapest (for the reason when none meets the
    // objective's constraint), and the best under the objective.
    void consider(hybrid_plan plan) {
        if (!std::isfinite(plan.samples_per_s) || !std::isfinite(plan.usd_per_h) || !std::isfinite(plan.samples_per_usd)) {
            ++non_finite_;
            return;
        }
        if (!fastest_ || hybrid_better(plan, *fastest_, objective_kind::max_throughput)) fastest_ = plan;
        if (!cheapest_ || hybrid_better(plan, *cheapest_, objective_kind::min_cost)) cheapest_ = plan;
        if (options_.objective == objective_kind::max_throughput && plan.usd_per_h > options_.budget_usd_per_h) return;
        if (options_.objective == objective_kind::min_cost && plan.samples_per_s < options_.target_samples_per_s) return;
        if (!result_.plan || hybrid_better(plan, *result_.plan, options_.objective)) result_.plan = std::move(plan);
    }

    // The result: every status, reason and bound the planner reports is set here.
    [[nodiscard]] hybrid_result conclude() {
        hybrid_result& result = result_;
        if (over_budget_ > 0) {
            // Some configurations were not partitioned: the best plan found is not proven optimal.
            result.status = result.plan ? solve_status::feasible : solve_status::no_plan_found;
            result.limit = over_budget_limit_;
            result.reason = std::to_string(over_budget_) + " configurations skipped: " + over_budget_reason_;
            if (result.plan) result.objective_value = hybrid_objective_value(*result.plan, options_.objective);
            return std::move(result_);
        }
        if (result.plan) {
            result.status = solve_status::optimal;
            result.objective_value = result.bound = hybrid_objective_value(*result.plan, options_.objective);
            return std::move(result_);
        }
        result.status = solve_status::infeasible;
        if (!fastest_) {
            result.reason = "no container type, global batch size and micro-batch count gives a pipeline that fits in GPU "
                            "memory within the worker and container limits";
            if (non_finite_ > 0)
                result.reason += " (" + std::to_string(non_finite_) + " plans fit but their figures are too large for a double)";
        } else if (options_.objective == objective_kind::max_throughput) {
            result.reason = "the cheapest plan costs " + format_number(cheapest_->usd_per_h) + " USD/h, over the budget of " +
                            format_number(options_.budget_usd_per_h) + " USD/h; best_effort is that plan";
            result.best_effort = cheapest_;
        } else {
            result.reason = "the fastest plan gives " + format_number(fastest_->samples_per_s) + " samples/s, below the target of " +
                            format_number(options_.target_samples_per_s) + " samples/s; best_effort is that plan";
            result.best_effort = fastest_;
        }
        return std::move(result_);
    }

    const hybrid_problem& problem_;
    const hybrid_options& options_;
    const layer_chain& chain_;
    const Factory& factory_;
    hybrid_result result_;
    std::vector<std::optional<pipeline_dp_result>> partitions_;  // per group, for the current batch and micro-batching
    std::optional<hybrid_plan> fastest_, cheapest_;              // over every plan that fits, for the reason
    std::int64_t non_finite_ = 0, over_budget_ = 0;
    std::string over_budget_reason_;
    search_limit over_budget_limit_ = search_limit::none;
};

template <pipeline_model_factory Factory>
[[nodiscard]] hybrid_result solve_hybrid(const hybrid_problem& problem, const hybrid_options& options,
                                         const layer_chain& chain, const Factory& factory) {
    return hybrid_search<Factory>(problem, options, chain, factory).run();
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
