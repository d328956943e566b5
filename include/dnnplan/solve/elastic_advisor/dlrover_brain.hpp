#pragma once
// DLRover's "Brain" optimizer algorithms for parameter-server jobs, as pure functions (issue 13,
// section 1): PS sizing from the history of earlier jobs (the "majority cluster"), the cold-start
// PS, the PS adjustment from the model's receive-op count, the PS out-of-memory plan, hot PS and
// the shrinking of cold PS of a running job. The worker algorithms are in
// dlrover_brain_worker.hpp. Restated from intelligent-machine-learning/dlrover,
// dlrover/go/brain/pkg/optimizer/implementation/optalgorithm/*.go and utils/*.go (the file and
// commit of each rule are named where it is restated); docs/solvers/dlrover.md lists the rules,
// the quirks kept and what differs.
//
// Units: CPU in cores, memory in bytes (the Brain's PodResource.Memory), speed in steps/s.
// The Brain reads JSON from its database; here the caller passes the parsed values (a JSON string
// that does not parse is a std::nullopt where DLRover tells it apart from an empty one). Go's
// map iteration order is random; every map here is scanned by ascending node index (sums of
// more than two values may then differ from a given Go run in the last bit).
// Go divides floats by zero and gets +-Inf or NaN, and several rules rely on it; C++ leaves that
// undefined, so each such place goes through detail::go_div, which spells out what Go's IEEE
// division returns, and every count goes through detail::go_count (Go's int32 of NaN or Inf is
// platform-dependent; 0 here).

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_local.hpp>

#include <algorithm>
#include <array>
#include <cmath>
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

namespace detail {

/// a / b as Go's float64 division gives it (IEEE 754). C++ leaves division by zero undefined, so
/// that case is spelled out: +-Inf by the signs, NaN for 0 / 0 and NaN / 0.
[[nodiscard]] inline double go_div(double a, double b) noexcept {
    if (b != 0.0) return a / b;
    if (std::isnan(a) || a == 0.0) return std::numeric_limits<double>::quiet_NaN();
    const bool negative = (a < 0.0) != std::signbit(b);
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
}

/// Go's int32(x) of a count: x truncated when it is in int32's range. Go's conversion of NaN,
/// +-Inf or a value out of range is platform-dependent (amd64 gives -2^31) and C++'s undefined:
/// 0 ("unchanged") here.
[[nodiscard]] inline std::int32_t go_count(double x) noexcept {
    if (!(x > -2147483649.0 && x < 2147483648.0)) return 0;
    return static_cast<std::int32_t>(x);
}

/// DLRover's `err != nil || value == 0` fallback to a default.
[[nodiscard]] inline double zero_reads_as(double value, double fallback) noexcept { return value == 0.0 ? fallback : value; }

/// Go's strconv.Atoi: an optional sign and decimal digits, within int64.
[[nodiscard]] inline std::optional<std::int64_t> go_atoi(std::string_view text) noexcept {
    bool negative = false;
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty()) return std::nullopt;
    std::uint64_t magnitude = 0;
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    for (const char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (magnitude > (limit - digit) / 10) return std::nullopt;
        magnitude = magnitude * 10 + digit;
    }
    if (!negative) return static_cast<std::int64_t>(magnitude);
    return magnitude == (std::uint64_t{1} << 63) ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(magnitude);
}

/// ExtractPodTypeAndIDFromName (brain/pkg/utils/job.go, commit 4eaf4cb9): the text after the last
/// of the left-to-right, non-overlapping occurrences of "-worker-" (or, if there is none, of
/// "-ps-"), read by Atoi. None when there is no separator, no number, or a negative one.
[[nodiscard]] inline std::optional<std::uint64_t> pod_index(std::string_view name) noexcept {
    for (const std::string_view separator : {std::string_view("-worker-"), std::string_view("-ps-")}) {
        std::size_t end = std::string_view::npos;
        for (std::size_t at = name.find(separator); at != std::string_view::npos; at = name.find(separator, at + separator.size()))
            end = at + separator.size();
        if (end == std::string_view::npos) continue;
        const auto id = go_atoi(name.substr(end));
        if (!id || *id < 0) return std::nullopt;
        return static_cast<std::uint64_t>(*id);
    }
    return std::nullopt;
}

/// GetResourceFromJobNode's index (implementation/utils/job.go, commit c7391143): Atoi of the text
/// after the last '-'.
[[nodiscard]] inline std::optional<std::uint64_t> index_after_last_dash(std::string_view name) noexcept {
    const std::size_t dash = name.rfind('-');
    if (dash == std::string_view::npos) return std::nullopt;
    const auto id = go_atoi(name.substr(dash + 1));
    if (!id || *id < 0) return std::nullopt;
    return static_cast<std::uint64_t>(*id);
}

/// The value of node `index`, 0 when it has none (Go's map read of a missing key).
[[nodiscard]] inline double value_or(const node_values& values, std::uint64_t index) {
    const auto it = values.find(index);
    return it == values.end() ? 0.0 : it->second;
}

using record_values = node_values brain_runtime_record::*;

// implementation/utils/math.go (commit 4350fbde) and runtime.go (commit 0baaaea0).

/// GetMaxJobNodeResource: the largest value, at least 0.
[[nodiscard]] inline double max_value(const node_values& values) noexcept {
    double most = 0.0;
    for (const auto& entry : values)
        if (most < entry.second) most = entry.second;
    return most;
}

/// ComputeAverage of a non-empty list (Go's 0 / 0 for an empty one is handled by the callers).
[[nodiscard]] inline double mean(const std::vector<double>& values) noexcept {
    double sum = 0.0;
    for (const double v : values) sum += v;
    return sum / static_cast<double>(values.size());
}

/// GetMaxUtil: the largest used / requested over the nodes in both maps; the first ratio replaces a
/// running 0 whatever it is (Go's `max == 0 || max < util`).
[[nodiscard]] inline double max_util(const node_values& used, const node_values& requested) noexcept {
    double most = 0.0;
    for (const auto& [index, value] : used) {
        const auto it = requested.find(index);
        if (it == requested.end()) continue;
        const double util = go_div(value, it->second);
        if (most == 0.0 || most < util) most = util;
    }
    return most;
}

/// CalculateJobNodeAvgResources: per node, the mean over the last `step` records it appears in
/// (0 when the sum is 0).
[[nodiscard]] inline node_values node_average(const std::vector<brain_runtime_record>& records, std::size_t step,
                                              record_values member) {
    node_values sum, count;
    for (std::size_t i = 0; i < std::min(step, records.size()); ++i)
        for (const auto& [index, value] : records[records.size() - 1 - i].*member) {
            sum[index] += value;
            count[index] += 1.0;
        }
    node_values out;
    for (const auto& [index, total] : sum) out[index] = total > 0.0 ? total / count[index] : 0.0;
    return out;
}

/// CalculateJobNodeMaxResource: per node, the largest value over the last `step` records; a node
/// enters only with a value above 0 (Go reads a missing entry as 0 and never stores it).
[[nodiscard]] inline node_values node_maximum(const std::vector<brain_runtime_record>& records, std::size_t step,
                                              record_values member) {
    node_values out;
    for (std::size_t i = 0; i < std::min(step, records.size()); ++i)
        for (const auto& [index, value] : records[records.size() - 1 - i].*member)
            if (value > value_or(out, index)) out[index] = value;
    return out;
}

[[nodiscard]] inline bool same_nodes(const node_values& a, const node_values& b) noexcept {
    if (a.size() != b.size()) return false;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
        if (i->first != j->first) return false;
    return true;
}

// implementation/utils/optimize_algorithm.go (commit e426cd5e).

/// FilterRuntimeInfosWithLatestPS: the records whose PS set (the keys of ps_cpu_cores) is the
/// latest record's, in order.
[[nodiscard]] inline std::vector<brain_runtime_record> with_latest_ps(const std::vector<brain_runtime_record>& records) {
    std::vector<brain_runtime_record> out;
    for (const brain_runtime_record& r : records)
        if (same_nodes(r.ps_cpu_cores, records.back().ps_cpu_cores)) out.push_back(r);
    return out;
}

/// CheckHotCPUNodes: the PS (ascending) whose mean CPU over the last `step` records over its request
/// is above `threshold`; none when there are fewer records.
[[nodiscard]] inline std::vector<std::uint64_t> hot_cpu_nodes(const std::vector<brain_runtime_record>& records,
                                                              const node_values& requested, double threshold, std::size_t step) {
    std::vector<std::uint64_t> hot;
    if (records.size() < step) return hot;
    for (const auto& [index, cpu] : node_average(records, step, &brain_runtime_record::ps_cpu_cores)) {
        const auto it = requested.find(index);
        if (it != requested.end() && go_div(cpu, it->second) > threshold) hot.push_back(index);
    }
    return hot;
}

/// ComputeAvgSpeed (and the worker file's computePreAvgSpeed, the same): the mean over the last
/// `count` records of the speed per worker; 0 without records. A record without workers gives
/// Go's x / 0: +Inf, or NaN when its speed is 0.
[[nodiscard]] inline double mean_speed_per_worker(const std::vector<brain_runtime_record>& records, std::int64_t count) {
    const std::size_t n = std::min(records.size(), static_cast<std::size_t>(count));
    if (n == 0) return 0.0;
    double total = 0.0;
    for (std::size_t i = records.size(); i-- > records.size() - n;)
        total += go_div(records[i].speed_steps_per_s, static_cast<double>(records[i].worker_cpu_cores.size()));
    return total / static_cast<double>(n);
}

/// The training's step count: DatasetSize / BatchSize (Go's float division: +Inf, or NaN, for a
/// batch size of 0), times Epoch when > 0, at most MaxSteps when > 0. None when either feature did
/// not parse.
[[nodiscard]] inline std::optional<double> training_steps(const brain_job& job) {
    if (!job.hyper_params || !job.dataset_size) return std::nullopt;
    double steps = go_div(static_cast<double>(*job.dataset_size), static_cast<double>(job.hyper_params->batch_size));
    const auto epoch = static_cast<double>(job.hyper_params->epoch);
    const auto max_steps = static_cast<double>(job.hyper_params->max_steps);
    if (epoch > 0.0) steps = epoch * steps;
    if (max_steps > 0.0 && steps > max_steps) steps = max_steps;
    return steps;
}

/// ComputePerStepTime (and computeInitPerStepTime): despite the name, the whole training's time,
/// steps / speed.
[[nodiscard]] inline std::optional<double> training_time_s(const brain_job& job, double speed_steps_per_s) {
    const auto steps = training_steps(job);
    if (!steps) return std::nullopt;
    return go_div(*steps, speed_steps_per_s);
}

/// The PS nodes' requests and names by ExtractPodTypeAndIDFromName's index (a later node with the
/// same index replaces an earlier one, as Go's map assignment).
struct ps_requests {
    node_values cpu_cores, memory_bytes;
    std::map<std::uint64_t, std::string> names;
};

[[nodiscard]] inline ps_requests ps_requests_of(const std::vector<brain_job_node>& nodes) {
    ps_requests out;
    for (const brain_job_node& node : nodes)
        if (const auto index = pod_index(node.name)) {
            out.cpu_cores[*index] = node.resource.cpu_cores;
            out.memory_bytes[*index] = node.resource.memory_bytes;
            out.names[*index] = node.name;
        }
    return out;
}

[[nodiscard]] inline const std::vector<brain_runtime_record>& parsed_runtime(const brain_job& job, std::string_view path = "job") {
    if (!job.runtime)
        throw invalid_input(std::string(path) + ".runtime", "none",
                            "runtime records (DLRover returns an error when JobRuntime does not parse)");
    return *job.runtime;
}

}  // namespace detail

/// ComputeMajorCluster (implementation/utils/math.go, commit 4350fbde), DLRover's "majority
/// cluster": sort; start from the upper median nums[n/2]; while values remain on both sides and
/// the cluster has fewer than n/2 + 1, take the left neighbour if it is strictly closer to the
/// cluster's own upper median than the right one, else the right one (ties go right). It stops as
/// soon as one side runs out, even short of a majority: [1,2,3,4] gives [3,4], and two samples give
/// the larger alone. (Go sorts the caller's slice; here the argument is a copy.)
[[nodiscard]] inline std::vector<double> compute_major_cluster(std::vector<double> nums) {
    for (std::size_t i = 0; i < nums.size(); ++i)
        dnnplan::detail::require_finite([&] { return "nums[" + std::to_string(i) + "]"; }, nums[i]);
    std::vector<double> cluster;
    if (nums.empty()) return cluster;
    std::sort(nums.begin(), nums.end());
    const auto n = static_cast<std::ptrdiff_t>(nums.size());
    const std::ptrdiff_t median = n / 2;
    cluster.push_back(nums[static_cast<std::size_t>(median)]);
    std::ptrdiff_t left = median - 1, right = median + 1;
    while (left >= 0 && right < n && static_cast<std::ptrdiff_t>(cluster.size()) < median + 1) {
        const double kernel = cluster[cluster.size() / 2];
        const double l = nums[static_cast<std::size_t>(left)], r = nums[static_cast<std::size_t>(right)];
        if (kernel - l < r - kernel) {
            cluster.insert(cluster.begin(), l);
            --left;
        } else {
            cluster.push_back(r);
            ++right;
        }
    }
    return cluster;
}

/// PS creation from history (OptimizeJobPSCreateResource, optalgorithm/
/// optimize_job_ps_create_resource.go, commit dad320ad, delegating to
/// EstimateJobResourceByHistoricJobs, utils/optimize_algorithm.go, commit e426cd5e). Per history
/// job with records: its total PS CPU is the mean of the majority cluster of its records' totals;
/// the job totals' majority cluster's mean is T. cores = the largest per-node mean CPU of any job +
/// the CPU margin (4); count = ceil(T x (1 + 0.5) / cores); above ps_max_count (15) the count is
/// capped and cores = ceil(T x 1.5 / count) (no margin re-added). Memory: the largest node memory
/// m, raised to ceil(M / count) when m x count < M (M the largest record total of any job), times
/// (1 + 0.2). None (DLRover's nil plan) when T, m or the largest mean CPU is 0. Every history job
/// counts, whatever its exit reason.
[[nodiscard]] inline std::optional<brain_plan> optimize_job_ps_create_resource(const std::vector<brain_job>& history,
                                                                               const brain_options& options = {}) {
    options.validate();
    for (std::size_t i = 0; i < history.size(); ++i) history[i].validate("history[" + std::to_string(i) + "]");
    const double memory_margin = detail::zero_reads_as(options.ps_memory_margin_ratio, 0.2);
    const double cpu_margin_ratio = detail::zero_reads_as(options.ps_cpu_margin_ratio, 0.5);
    const double cpu_margin = detail::zero_reads_as(options.job_node_cpu_margin_cores, 4.0);
    double max_memory = 0.0, max_cpu = 0.0, max_job_memory = 0.0;
    std::vector<double> job_cpus;
    for (const brain_job& job : history) {
        if (!job.runtime || job.runtime->empty()) continue;
        node_values node_sum, node_count;
        std::vector<double> totals;
        for (const brain_runtime_record& r : *job.runtime) {
            double total = 0.0;
            for (const auto& [index, cpu] : r.ps_cpu_cores) {
                node_sum[index] += cpu;
                node_count[index] += 1.0;
                total += cpu;
            }
            totals.push_back(total);
        }
        job_cpus.push_back(detail::mean(compute_major_cluster(std::move(totals))));
        for (const auto& [index, sum] : node_sum) max_cpu = std::max(max_cpu, sum / node_count[index]);
        double job_memory = 0.0;
        for (const brain_runtime_record& r : *job.runtime) {
            double total = 0.0;
            for (const auto& entry : r.ps_memory_bytes) {
                max_memory = std::max(max_memory, entry.second);
                total += entry.second;
            }
            job_memory = std::max(job_memory, total);
        }
        max_job_memory = std::max(max_job_memory, job_memory);
    }
    // No job with records: Go's mean of an empty cluster is NaN, and max_memory == 0 returns nil.
    if (job_cpus.empty()) return std::nullopt;
    const double job_cpu = detail::mean(compute_major_cluster(job_cpus));
    if (job_cpu == 0.0 || max_memory == 0.0 || max_cpu == 0.0) return std::nullopt;
    double cores = max_cpu + cpu_margin;
    const double total_cpu = job_cpu * (1.0 + cpu_margin_ratio);
    double count = std::ceil(total_cpu / cores);
    const auto max_count = static_cast<double>(options.ps_max_count);
    if (count > max_count) {
        count = max_count;
        cores = std::ceil(detail::go_div(total_cpu, count));  // ps_max_count 0: +Inf (DLRover's bug)
    }
    if (max_memory * count < max_job_memory) max_memory = std::ceil(detail::go_div(max_job_memory, count));
    brain_plan plan;
    plan.groups[node_type::ps] = {.count = detail::go_count(count),
                                  .resource = {.cpu_cores = cores, .memory_bytes = max_memory * (1.0 + memory_margin)}};
    return plan;
}

/// The cold-start PS (OptimizeJobPSColdCreateResource, optalgorithm/
/// optimize_job_ps_cold_create_resource.go, commit dad320ad): the configured count, CPU and memory.
/// DLRover's JobPSCreateResourceOptimizer runs it when the history gives no plan.
[[nodiscard]] inline brain_plan optimize_job_ps_cold_create_resource(const brain_options& options = {}) {
    options.validate();
    brain_plan plan;
    plan.groups[node_type::ps] = {.count = static_cast<std::int32_t>(options.ps_cold_replica),
                                  .resource = {.cpu_cores = options.ps_cold_cpu_cores, .memory_bytes = options.ps_cold_memory_bytes}};
    return plan;
}

namespace detail {
/// computePSCPUDiff (optimize_job_ps_init_adjust_resource.go): the busiest PS's mean CPU minus the
/// others' mean; 0 with one PS or when the others use nothing.
[[nodiscard]] inline double ps_cpu_diff(const node_values& average) noexcept {
    double most = 0.0;
    std::uint64_t busiest = 0;
    for (const auto& [index, cpu] : average)
        if (cpu > most) most = cpu, busiest = index;
    double others = 0.0;
    for (const auto& [index, cpu] : average)
        if (index != busiest) others += cpu;
    if (average.size() == 1 || others == 0.0) return 0.0;
    return most - others / static_cast<double>(average.size() - 1);
}
}  // namespace detail

/// The PS adjustment just after the start (OptimizeJobPSInitAdjustResource, optalgorithm/
/// optimize_job_ps_init_adjust_resource.go, commit e426cd5e). Target workers: 10 if the training
/// would take at most 1800 s at the mean per-worker speed of the last step_count_threshold records,
/// else ps_init_adjust_target_worker_count (0 without a speed). PS cores: 16 (no margin) unless
/// the receive ops per PS r <= 150, then ceil(0.08 r) + ps_margin_cpu_cores; at least
/// ceil(largest PS mean CPU of the last 3) + margin. The target is at most
/// ceil(free x workers), free = cores / (that largest / (15 / PS count)), or cores / (the busiest PS's
/// excess over the others' mean) when smaller. Count = ceil(target / workers x the largest record
/// total PS CPU / cores); memory = the latest record's largest PS memory x (1 + 0.2). Without a
/// worker in the latest record Go's count is int32 of NaN or Inf: 0 here (the CPU is still set).
/// Throws invalid_input "job.recv_op_count" / "job.runtime" when missing or without records.
[[nodiscard]] inline brain_plan optimize_job_ps_init_adjust_resource(const brain_job& job, const brain_options& options = {}) {
    options.validate();
    job.validate();
    if (!job.recv_op_count)
        throw invalid_input("job.recv_op_count", "none", "the model's receive-op count (DLRover returns an error)");
    const auto& records = detail::parsed_runtime(job);
    if (records.empty())
        throw invalid_input("job.runtime", "0 records", "at least one record (DLRover: \"does not have enough runtime infos\")");
    const brain_runtime_record& latest = records.back();
    const auto ps_count = static_cast<double>(latest.ps_cpu_cores.size());
    const node_values ps_average = detail::node_average(records, brain_constants::records_to_average, &brain_runtime_record::ps_cpu_cores);
    const double speed = detail::mean_speed_per_worker(records, options.step_count_threshold);
    double target = 0.0;
    if (speed > 0.0)
        if (const auto time = detail::training_time_s(job, speed))
            target = *time <= brain_constants::init_training_time_s ? brain_constants::default_init_workers
                                                                    : static_cast<double>(options.ps_init_adjust_target_worker_count);
    const auto margin = static_cast<double>(options.ps_margin_cpu_cores);
    const double ops_per_ps = detail::go_div(static_cast<double>(*job.recv_op_count), ps_count);  // no PS: Inf or NaN, so 16
    double cores = 16.0;
    if (ops_per_ps <= 150.0) cores = std::ceil(0.08 * ops_per_ps) + margin;
    const double busiest = std::ceil(detail::max_value(ps_average));
    if (cores < busiest + margin) cores = busiest + margin;
    double max_total_cpu = 0.0;
    for (const brain_runtime_record& r : records) {
        double total = 0.0;
        for (const auto& entry : r.ps_cpu_cores) total += entry.second;
        max_total_cpu = std::max(max_total_cpu, total);
    }
    const double memory = detail::max_value(latest.ps_memory_bytes);
    const auto workers = static_cast<double>(latest.worker_cpu_cores.size());
    // After more PS share the load the busiest one's CPU shrinks; 15 is DefaultMaxPSCount, not the option.
    const double estimated_max = busiest / detail::go_div(brain_constants::default_max_ps_count, ps_count);
    double free_rate = detail::go_div(cores, estimated_max);
    if (ps_average.size() > 1) {
        const double diff = detail::ps_cpu_diff(ps_average);
        if (diff > 0.0 && free_rate > cores / diff) free_rate = cores / diff;
    }
    const double estimated_workers = std::ceil(free_rate * workers);
    if (estimated_workers < target) target = estimated_workers;
    const double total_cpu = detail::go_div(target, workers) * max_total_cpu;
    brain_plan plan;
    plan.groups[node_type::ps] = {
        .count = detail::go_count(std::ceil(detail::go_div(total_cpu, cores))),
        .resource = {.cpu_cores = cores, .memory_bytes = memory * (1.0 + detail::zero_reads_as(options.ps_memory_margin_ratio, 0.2))}};
    return plan;
}

/// A PS ran out of memory (OptimizeJobPSOomResource, optalgorithm/optimize_job_ps_oom_resource.go,
/// commit 13d79d18). From the PS nodes: the largest memory and CPU request, and the count of those
/// Running or OOM. No runtime collected: that count doubled when the memory is already at 64 GiB,
/// else twice the memory (count 0: unchanged). Otherwise, from the latest record: twice its largest
/// PS memory when (largest - mean) / largest > ps_memory_workload_unbalance_ratio (0.2), else twice
/// its PS count with the nodes' memory (NaN comparisons, e.g. no PS memory, take this branch). None
/// for an empty runtime list. The CPU is always the nodes' largest.
[[nodiscard]] inline std::optional<brain_plan> optimize_job_ps_oom_resource(const brain_job& job, const brain_options& options = {}) {
    options.validate();
    job.validate();
    double memory = 0.0, cpu = 0.0, count = 0.0;
    double running = 0.0;
    for (const brain_job_node& node : job.ps_nodes) {
        if (node.status == "Running" || node.is_oom) running += 1.0;
        memory = std::max(memory, node.resource.memory_bytes);
        cpu = std::max(cpu, node.resource.cpu_cores);
    }
    if (!job.runtime) {  // Go: JobRuntime == ""
        if (memory >= brain_constants::max_ps_memory_bytes) count = running * 2.0;
        else memory *= 2.0;
    } else {
        if (job.runtime->empty()) return std::nullopt;
        const node_values& latest = job.runtime->back().ps_memory_bytes;
        double total = 0.0, most = 0.0;
        for (const auto& entry : latest) {
            most = std::max(most, entry.second);
            total += entry.second;
        }
        const auto replicas = static_cast<double>(latest.size());
        const double mean = detail::go_div(total, replicas);
        if (detail::go_div(most - mean, most) > options.ps_memory_workload_unbalance_ratio) memory = most * 2.0;
        else count = replicas * 2.0;
    }
    brain_plan plan;
    plan.groups[node_type::ps] = {.count = detail::go_count(count), .resource = {.cpu_cores = cpu, .memory_bytes = memory}};
    return plan;
}

namespace detail {
/// checkHotMemoryNodes (optimize_job_hot_ps_resource.go): the PS (ascending) whose memory over its
/// request is above `threshold` in each of the last `step` records.
[[nodiscard]] inline std::vector<std::uint64_t> hot_memory_nodes(const std::vector<brain_runtime_record>& records,
                                                                 const node_values& requested, double threshold, std::size_t step) {
    std::vector<std::uint64_t> hot;
    if (records.size() < step) return hot;
    std::map<std::uint64_t, std::size_t> over;
    for (std::size_t i = 0; i < step; ++i)
        for (const auto& [index, memory] : records[records.size() - 1 - i].ps_memory_bytes) {
            const auto it = requested.find(index);
            if (it != requested.end() && go_div(memory, it->second) > threshold) ++over[index];
        }
    for (const auto& [index, n] : over)
        if (n >= step) hot.push_back(index);
    return hot;
}
}  // namespace detail

/// Hot PS of a running job (OptimizeJobHotPSResource, optalgorithm/optimize_job_hot_ps_resource.go,
/// commit 0baaaea0), over the records with the latest PS set. Hot CPU: mean CPU of the last 3 over
/// the request > hot_ps_cpu_threshold_ratio (0.8). Then k = hot_ps_cpu_target_worker_count (32) /
/// the latest worker count (+Inf without workers, as Go's division), lowered to 32 / a hot PS's
/// mean whenever ceil(mean x k) > 32 (hot PS by ascending index; Go's order is random); every PS
/// whose ceil(mean x k) exceeds its request gets it. Hot memory: used / request >
/// hot_ps_memory_threshold_ratio (0.9) in each of the last 3 records (a request of 0 is +Inf, so
/// hot): request + hot_ps_memory_adjust_bytes. Pods by name; none when no pod changes.
[[nodiscard]] inline std::optional<brain_plan> optimize_job_hot_ps_resource(const brain_job& job, const brain_options& options = {}) {
    options.validate();
    job.validate();
    const detail::ps_requests nodes = detail::ps_requests_of(job.ps_nodes);
    if (detail::parsed_runtime(job).empty()) return std::nullopt;
    const std::vector<brain_runtime_record> records = detail::with_latest_ps(*job.runtime);
    constexpr std::size_t step = brain_constants::records_to_average;
    const auto hot_cpu = detail::hot_cpu_nodes(records, nodes.cpu_cores, options.hot_ps_cpu_threshold_ratio, step);
    const auto hot_memory = detail::hot_memory_nodes(records, nodes.memory_bytes, options.hot_ps_memory_threshold_ratio, step);
    const auto name_of = [&nodes](std::uint64_t index) {
        const auto it = nodes.names.find(index);
        return it == nodes.names.end() ? std::string() : it->second;
    };
    brain_plan plan;
    if (!hot_cpu.empty()) {
        const node_values average = detail::node_average(records, step, &brain_runtime_record::ps_cpu_cores);
        double k = detail::go_div(static_cast<double>(options.hot_ps_cpu_target_worker_count),
                                  static_cast<double>(records.back().worker_cpu_cores.size()));
        for (const std::uint64_t index : hot_cpu) {
            const double cpu = detail::value_or(average, index);
            if (std::ceil(cpu * k) > brain_constants::max_ps_cpu_cores) k = detail::go_div(brain_constants::max_ps_cpu_cores, cpu);
        }
        for (const auto& [index, cpu] : average) {
            const double cores = std::ceil(cpu * k);
            if (cores > detail::value_or(nodes.cpu_cores, index)) plan.pods[name_of(index)] = {.cpu_cores = cores, .memory_bytes = 0.0};
        }
    }
    for (const std::uint64_t index : hot_memory)
        plan.pods[name_of(index)].memory_bytes =
            detail::value_or(nodes.memory_bytes, index) + static_cast<double>(options.hot_ps_memory_adjust_bytes);
    if (plan.pods.empty()) return std::nullopt;
    return plan;
}

/// Shrink the cold PS of a busy job (OptimizeJobPSResourceUtil, optalgorithm/
/// optimize_job_ps_resource_util.go, commit e426cd5e), over the records with the latest PS set. None
/// with fewer than 3 records, or when the remaining time, (steps - the latest global step) / the
/// mean speed of the last 3 (0 when a feature did not parse), is under 3600 s, or unless (workers
/// >= hot_ps_cpu_target_worker_count and the largest PS mean CPU utilisation > ps_cpu_overload_ratio)
/// or some PS mean CPU >= 32 x ps_cpu_overload_ratio. Then every PS whose largest CPU of the last 3
/// over its request is below low_ps_cpu_threshold_ratio (0.4) gets ceil(that CPU) +
/// ps_margin_cpu_cores and its latest memory x (1 + ps_memory_margin_ratio; no fallback here).
[[nodiscard]] inline std::optional<brain_plan> optimize_job_ps_resource_util(const brain_job& job, const brain_options& options = {}) {
    options.validate();
    job.validate();
    const detail::ps_requests nodes = detail::ps_requests_of(job.ps_nodes);
    const std::vector<brain_runtime_record> records = detail::parsed_runtime(job).empty()
                                                          ? std::vector<brain_runtime_record>{}
                                                          : detail::with_latest_ps(*job.runtime);
    constexpr std::size_t step = brain_constants::records_to_average;
    if (records.size() < step) return std::nullopt;
    const brain_runtime_record& latest = records.back();
    double remaining_s = 0.0;  // estimateRemainingRunningTime
    if (const auto steps = detail::training_steps(job)) {
        double speed = 0.0;
        for (std::size_t i = records.size(); i-- > records.size() - step;) speed += records[i].speed_steps_per_s;
        remaining_s = detail::go_div(*steps - static_cast<double>(latest.global_step), speed / static_cast<double>(step));
    }
    if (remaining_s < brain_constants::remaining_time_threshold_s) return std::nullopt;
    const node_values average = detail::node_average(records, step, &brain_runtime_record::ps_cpu_cores);
    bool enabled = static_cast<std::int64_t>(latest.worker_cpu_cores.size()) >= options.hot_ps_cpu_target_worker_count &&
                   detail::max_util(average, nodes.cpu_cores) > options.ps_cpu_overload_ratio;
    for (const auto& entry : average)
        if (entry.second >= brain_constants::max_ps_cpu_cores * options.ps_cpu_overload_ratio) enabled = true;
    if (!enabled) return std::nullopt;
    brain_plan plan;
    for (const auto& [index, cpu] : detail::node_maximum(records, step, &brain_runtime_record::ps_cpu_cores)) {
        const auto request = nodes.cpu_cores.find(index);
        if (request == nodes.cpu_cores.end() || !(detail::go_div(cpu, request->second) < options.low_ps_cpu_threshold_ratio)) continue;
        plan.pods[nodes.names.at(index)] = {
            .cpu_cores = std::ceil(cpu) + static_cast<double>(options.ps_margin_cpu_cores),
            .memory_bytes = detail::value_or(latest.ps_memory_bytes, index) * (1.0 + options.ps_memory_margin_ratio)};
    }
    if (plan.pods.empty()) return std::nullopt;
    return plan;
}

}  // namespace dnnplan::dlrover
