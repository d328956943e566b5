#pragma once
// DLRover's "Brain" optimizer algorithms for the parameter servers, as pure functions: PS sizing
// from the history of earlier jobs (the "majority cluster"), the cold-start PS, the PS adjustment
// from the model's receive-op count, the PS out-of-memory plan, hot PS and the shrinking of cold
// PS of a running job. Their inputs, options and plan are in dlrover_brain_inputs.hpp, the helpers
// they share with the worker algorithms (dlrover_brain_worker.hpp) in dlrover_brain_utils.hpp.
// Restated from intelligent-machine-learning/dlrover,
// dlrover/go/brain/pkg/optimizer/implementation/optalgorithm/*.go and utils/*.go (the file and
// commit of each rule are named where it is restated); docs/solvers/dlrover.md lists the rules,
// the quirks kept and what differs.
//
// Units: CPU in cores, memory in bytes (the Brain's PodResource.Memory), speed in steps/s. Every
// division by a value that may be 0 goes through detail::go_div (dlrover_brain_utils.hpp).

#include <dnnplan/core/error.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_brain_inputs.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_brain_utils.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dnnplan::dlrover {

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
