#pragma once
// What DLRover's "Brain" optimizer algorithms read and return (dlrover_brain.hpp: the PS
// algorithms; dlrover_brain_worker.hpp: the worker ones): a job's runtime records and nodes as the
// Brain's store holds them (brain_runtime_record, brain_job), its plan (brain_plan), the constants
// it hard-codes (brain_constants) and its CustomizedConfig keys with their defaults
// (brain_options). Restated from intelligent-machine-learning/dlrover, dlrover/go/brain/pkg (the
// file and commit of each type and default are named where it is restated); docs/solvers/dlrover.md
// lists the rules, the quirks kept and what differs.
//
// Units: CPU in cores, memory in bytes (the Brain's PodResource.Memory), speed in steps/s.
// The Brain reads JSON from its database; here the caller passes the parsed values (a JSON string
// that does not parse is a std::nullopt where DLRover tells it apart from an empty one).

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_local.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace dnnplan::dlrover {

/// OptimizerWorkerOptimizePhase: "initial", "sample" or "stable"; `unset` when the request has
/// none (DLRover then logs "invalid optimize phase").
enum class worker_optimize_phase { unset, initial, sample, stable };

}  // namespace dnnplan::dlrover

namespace dnnplan {
template <>
struct enum_text<dlrover::worker_optimize_phase> {
    static constexpr std::array<enum_name<dlrover::worker_optimize_phase>, 4> names{{
        {dlrover::worker_optimize_phase::unset, "unset"},
        {dlrover::worker_optimize_phase::initial, "initial"},
        {dlrover::worker_optimize_phase::sample, "sample"},
        {dlrover::worker_optimize_phase::stable, "stable"},
    }};
};
}  // namespace dnnplan

namespace dnnplan::dlrover {

/// Go's map[uint64]float64 of a runtime record: a value per node index.
using node_values = std::map<std::uint64_t, double>;

/// The Brain's constants (not configurable there either).
namespace brain_constants {
inline constexpr double init_training_time_s = 1800.0;    ///< initStepTime (optalgorithm/optimize_algorithm.go)
inline constexpr double default_init_workers = 10.0;      ///< defaultInitWorker (same file)
inline constexpr std::size_t records_to_average = 3;      ///< NRecordToAvgResource (implementation/common/common.go)
inline constexpr double default_max_ps_count = 15.0;      ///< DefaultMaxPSCount, hard-coded in the PS init adjustment
inline constexpr double max_ps_memory_bytes = 68719476736.0;       ///< DefaultMaxPSMemory (64 GiB)
inline constexpr double max_ps_cpu_cores = 32.0;                   ///< maxCPUThreshold (optimize_job_hot_ps_resource.go)
inline constexpr double remaining_time_threshold_s = 3600.0;       ///< remainingTimeThreshold (optimize_job_ps_resource_util.go)
inline constexpr double worker_create_memory_bytes = 17179869184.0;  ///< DefaultWorkerCreateMemory (16 GiB)
inline constexpr double max_worker_memory_increase_bytes = 8589934592.0;  ///< maxWorkerIncreasedMemory (8 GiB)
inline constexpr std::size_t init_training_records = 6;  ///< initTrainingRecordNumThres (optimize_job_worker_resource.go)
}  // namespace brain_constants

/// One sample of a job's run (the Brain's JobRuntimeInfo, pkg/common): per node index, the CPU
/// and memory each worker and PS used. A map absent from the JSON (Go's nil) is an empty map here.
struct brain_runtime_record {
    std::uint64_t global_step = 0;
    std::uint64_t timestamp_s = 0;
    double speed_steps_per_s = 0.0;
    node_values worker_memory_bytes{};
    node_values worker_cpu_cores{};
    node_values ps_memory_bytes{};
    node_values ps_cpu_cores{};

    void validate(std::string_view path = "record") const {
        const std::string p = dnnplan::detail::field_prefix(path);
        dnnplan::detail::require_non_negative(p + "speed_steps_per_s", speed_steps_per_s);
        const auto check = [&p](const char* name, const node_values& values) {
            for (const auto& [index, value] : values)
                dnnplan::detail::require_non_negative([&] { return p + name + "[" + std::to_string(index) + "]"; }, value);
        };
        check("worker_memory_bytes", worker_memory_bytes);
        check("worker_cpu_cores", worker_cpu_cores);
        check("ps_memory_bytes", ps_memory_bytes);
        check("ps_cpu_cores", ps_cpu_cores);
    }
};

/// The Brain's PodResource (CPUCore, Memory; its GPU fields are never set by these algorithms).
/// In a plan, 0 means "not set". DLRover narrows the CPU to float32; it is kept as a double here
/// (the same value for the whole cores every rule but PS creation and the cold start gives).
struct pod_resource {
    double cpu_cores = 0.0;
    double memory_bytes = 0.0;
    friend bool operator==(const pod_resource&, const pod_resource&) = default;

    void validate(std::string_view path = "resource") const {
        const std::string p = dnnplan::detail::field_prefix(path);
        dnnplan::detail::require_non_negative(p + "cpu_cores", cpu_cores);
        dnnplan::detail::require_non_negative(p + "memory_bytes", memory_bytes);
    }
};

/// A TaskGroupResource: a count (0: unchanged) and each node's resource.
struct brain_group {
    std::int32_t count = 0;
    pod_resource resource{};
    friend bool operator==(const brain_group&, const brain_group&) = default;
};

/// The Brain's AlgorithmOptimizePlan: per group ("ps", "worker") and per pod name.
struct brain_plan {
    std::map<node_type, brain_group> groups{};
    std::map<std::string, pod_resource> pods{};
    friend bool operator==(const brain_plan&, const brain_plan&) = default;
};

/// A job node from the Brain's store (mysql.JobNode): its pod name (the node index is read from
/// it), its status (JobNodeStatus) and its request.
struct brain_job_node {
    std::string name{};
    std::string status{};  ///< "Running", "Error", ...
    bool is_oom = false;
    pod_resource resource{};
};

/// TrainingHyperParams.
struct training_hyper_params {
    std::uint64_t batch_size = 0;
    std::int64_t epoch = 0;        ///< <= 0: one pass
    std::uint64_t max_steps = 0;   ///< 0: no cap
};

/// A job as the algorithms see it: its JobMetrics (parsed) and its nodes in the store.
struct brain_job {
    /// JobRuntime, oldest first. None: the JSON string was empty or did not parse.
    std::optional<std::vector<brain_runtime_record>> runtime{};
    std::optional<training_hyper_params> hyper_params{};  ///< none: HyperParamsFeature did not parse
    std::optional<std::uint64_t> dataset_size{};          ///< TrainingSetFeature.DatasetSize; none: did not parse
    std::optional<std::uint64_t> recv_op_count{};         ///< ModelFeature.RecvOpCount; none: did not parse
    std::string exit_reason{};                            ///< "Completed", ...
    std::vector<brain_plan> optimizations{};              ///< earlier plans (Metrics.Optimization), oldest first
    std::vector<brain_job_node> ps_nodes{};
    std::vector<brain_job_node> worker_nodes{};

    void validate(std::string_view path = "job") const {
        const std::string p = dnnplan::detail::field_prefix(path);
        if (runtime)
            for (std::size_t i = 0; i < runtime->size(); ++i) (*runtime)[i].validate(p + "runtime[" + std::to_string(i) + "]");
        for (std::size_t i = 0; i < optimizations.size(); ++i) {
            const std::string o = p + "optimizations[" + std::to_string(i) + "].";
            for (const auto& [type, group] : optimizations[i].groups)
                group.resource.validate(o + "groups[" + std::string(dnnplan::to_string(type)) + "].resource");
            for (const auto& [name, pod] : optimizations[i].pods) pod.validate(o + "pods[" + name + "]");
        }
        for (std::size_t i = 0; i < ps_nodes.size(); ++i)
            ps_nodes[i].resource.validate(p + "ps_nodes[" + std::to_string(i) + "].resource");
        for (std::size_t i = 0; i < worker_nodes.size(); ++i)
            worker_nodes[i].resource.validate(p + "worker_nodes[" + std::to_string(i) + "].resource");
    }
};

/// The algorithms' parameters, DLRover's CustomizedConfig keys (pkg/config/common.go, commit
/// e426cd5e; older versions spell "optimizer." as "optimization."), with the defaults its
/// optimizers (implementation/optimizer/*.go) and implementation/common/common.go (commit
/// f0070bde) put in. "0 reads as the default" marks a key DLRover replaces by its default when it
/// is 0 (`err != nil || value == 0`); these functions do the same.
struct brain_options {
    // Creation from history, and the cold start.
    double job_node_memory_margin_ratio = 0.5;  ///< "job.node.memory.margin.percent"; worker creation; 0 reads as 0.5
    double job_node_cpu_margin_cores = 4.0;     ///< "job-node.cpu.margin"; PS creation; 0 reads as 4
    double min_worker_create_cpu_cores = 12.0;  ///< "optimizer.worker.create.cpu.min"; 0 reads as 12
    /// "optimizer.ps.memory.margin.percent"; 0 reads as 0.2 in PS creation and the init adjustment,
    /// but is 0 in the PS utilisation rule (no fallback there).
    double ps_memory_margin_ratio = 0.2;
    double ps_cpu_margin_ratio = 0.5;  ///< "optimizer.ps.cpu.margin.percent"; PS creation; 0 reads as 0.5
    /// "optimizer.ps.count.maximum"; PS creation. 0 is kept: DLRover's fallback tests the CPU margin
    /// instead of this value (utils/optimize_algorithm.go), so 0 gives 0 PS of infinite CPU and memory.
    std::int64_t ps_max_count = 15;
    std::int64_t ps_cold_replica = 4;              ///< "optimizer.ps.cold.replica"
    double ps_cold_cpu_cores = 12.0;               ///< "optimizer.ps.cold.cpu"
    double ps_cold_memory_bytes = 17179869184.0;   ///< "optimizer.ps.cold.memory" (16 GiB)
    // Running PS.
    std::int64_t step_count_threshold = 5;                 ///< "optimizer.step.count.threshold"
    std::int64_t ps_init_adjust_target_worker_count = 20;  ///< "optimizer.ps.init-adjust.target-worker-count"
    std::int64_t ps_margin_cpu_cores = 4;                  ///< "optimizer.ps.cpu.margin" (an integer there)
    double ps_memory_workload_unbalance_ratio = 0.2;       ///< "optimizer.ps.memory.workload-balance-percent"
    double hot_ps_cpu_threshold_ratio = 0.8;               ///< "optimizer.ps.cpu.hot-threshold"
    double hot_ps_memory_threshold_ratio = 0.9;            ///< "optimizer.ps.memory.hot-threshold"
    /// "optimizer.ps.cpu.hot-target-worker-count"; also the worker-count threshold of the PS
    /// utilisation rule.
    std::int64_t hot_ps_cpu_target_worker_count = 32;
    std::int64_t hot_ps_memory_adjust_bytes = 8589934592;  ///< "optimizer.ps.memory.hot-adjust" (8 GiB)
    double low_ps_cpu_threshold_ratio = 0.4;               ///< "optimizer.ps.cpu.low-threshold"
    double ps_cpu_overload_ratio = 0.8;                    ///< "optimizer.ps.cpu.overload"
    double ps_cpu_exhausted_threshold_ratio = 0.95;        ///< "optimizer.ps.cpu.exhausted-threshold"
    // Workers.
    double worker_oom_memory_margin_ratio = 0.2;           ///< "optimizer.worker.oom.memory.margin-percent"
    double worker_oom_memory_min_increase_bytes = 4e9;     ///< "optimizer.worker.oom.memory.min-increase"
    double worker_memory_margin_ratio = 0.2;               ///< "optimizer.worker.memory.margin-percent"
    std::int64_t worker_max_replica_count = 60;            ///< "optimizer.worker.max.replica-count"
    std::int64_t worker_replica_decrease_count = 4;        ///< "optimizer.worker.replica.decrease-count"
    std::int64_t worker_max_init_count_per_step = 32;      ///< "optimizer.worker.max.init-count-per-step"
    std::int64_t worker_max_count_per_step = 4;            ///< "optimizer.worker.max.count-per-step"
    double worker_cpu_margin_cores = 1.0;                  ///< "optimizer.worker.cpu.margin-core"
    std::int64_t worker_cpu_util_comp_count = 2;           ///< "optimizer.worker.cpu-util.comp-count"
    double worker_cpu_util_less_ratio = 0.15;              ///< "optimizer.worker.cpu-util.less-percent"
    /// "optimizer.training-speed.less-percent". DLRover's JobWorkerResourceOptimizer always passes
    /// 0.1: it looks the key's configured value up as if it were a key (optimizer/
    /// job_worker_resource_optimizer.go, commit 9da9ee63). Settable here.
    double training_speed_less_ratio = 0.1;
    worker_optimize_phase worker_phase = worker_optimize_phase::unset;  ///< "optimizer.worker.optimize-phase"

    void validate(std::string_view path = "options") const {
        const std::string p = dnnplan::detail::field_prefix(path);
        for (const auto& [name, value] : std::array<std::pair<const char*, double>, 19>{{
                 {"job_node_memory_margin_ratio", job_node_memory_margin_ratio},
                 {"job_node_cpu_margin_cores", job_node_cpu_margin_cores},
                 {"min_worker_create_cpu_cores", min_worker_create_cpu_cores},
                 {"ps_memory_margin_ratio", ps_memory_margin_ratio},
                 {"ps_cpu_margin_ratio", ps_cpu_margin_ratio},
                 {"ps_cold_cpu_cores", ps_cold_cpu_cores},
                 {"ps_cold_memory_bytes", ps_cold_memory_bytes},
                 {"ps_memory_workload_unbalance_ratio", ps_memory_workload_unbalance_ratio},
                 {"hot_ps_cpu_threshold_ratio", hot_ps_cpu_threshold_ratio},
                 {"hot_ps_memory_threshold_ratio", hot_ps_memory_threshold_ratio},
                 {"low_ps_cpu_threshold_ratio", low_ps_cpu_threshold_ratio},
                 {"ps_cpu_overload_ratio", ps_cpu_overload_ratio},
                 {"ps_cpu_exhausted_threshold_ratio", ps_cpu_exhausted_threshold_ratio},
                 {"worker_oom_memory_margin_ratio", worker_oom_memory_margin_ratio},
                 {"worker_oom_memory_min_increase_bytes", worker_oom_memory_min_increase_bytes},
                 {"worker_memory_margin_ratio", worker_memory_margin_ratio},
                 {"worker_cpu_margin_cores", worker_cpu_margin_cores},
                 {"worker_cpu_util_less_ratio", worker_cpu_util_less_ratio},
                 {"training_speed_less_ratio", training_speed_less_ratio},
             }})
            dnnplan::detail::require_non_negative(p + name, value);
        // Counts become int32 replica counts or are added to them: at most int32's maximum.
        constexpr std::int64_t most = std::numeric_limits<std::int32_t>::max();
        for (const auto& [name, value, least] : std::array<std::tuple<const char*, std::int64_t, std::int64_t>, 11>{{
                 {"ps_max_count", ps_max_count, 0},
                 {"ps_cold_replica", ps_cold_replica, 0},
                 {"step_count_threshold", step_count_threshold, 1},
                 {"ps_init_adjust_target_worker_count", ps_init_adjust_target_worker_count, 0},
                 {"ps_margin_cpu_cores", ps_margin_cpu_cores, 0},
                 {"hot_ps_cpu_target_worker_count", hot_ps_cpu_target_worker_count, 0},
                 {"worker_max_replica_count", worker_max_replica_count, 0},
                 {"worker_replica_decrease_count", worker_replica_decrease_count, 0},
                 {"worker_max_init_count_per_step", worker_max_init_count_per_step, 0},
                 {"worker_max_count_per_step", worker_max_count_per_step, 0},
                 {"worker_cpu_util_comp_count", worker_cpu_util_comp_count, 0},
             }}) {
            dnnplan::detail::require_at_least(p + name, value, least);
            if (value > most) throw invalid_input(p + name, std::to_string(value), "an integer <= " + std::to_string(most));
        }
        dnnplan::detail::require_at_least(p + "hot_ps_memory_adjust_bytes", hot_ps_memory_adjust_bytes, 0);
    }
};

}  // namespace dnnplan::dlrover
