#pragma once
// The hybrid-parallel planner's request and result (solve/hybrid_plan/solve.hpp; Hydrozoa: R. Guo,
// V. Guo, A. Kim, J. Hildred, K. Daudjee, MLSys 2022): a layer profile, a catalog of serverless
// container shapes billed per second, the worker limit and the global batch sizes allowed (the
// problem), the objective and its limits (the options); the answer is a hybrid_plan (container,
// stages and their replicas, micro-batching and its figures), and for a re-plan the layers that
// move. docs/solvers/hybrid_plan.md.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/layer_chain.hpp>
#include <dnnplan/model/concepts.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
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
    /// is over it is skipped, and a result with none left says so (result.limit).
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

}  // namespace dnnplan
