#pragma once
// DLRover's "Brain" worker algorithms, as pure functions: the first worker from the history of
// earlier jobs, the first worker after an out-of-memory, and the worker count and resource of a
// running job. Restated from intelligent-machine-learning/dlrover,
// dlrover/go/brain/pkg/optimizer/implementation/optalgorithm/optimize_job_worker_*.go (the file
// and commit of each rule are named where it is restated); the types and options are in
// dlrover_brain_inputs.hpp, the shared helpers in dlrover_brain_utils.hpp, the PS algorithms in
// dlrover_brain.hpp; docs/solvers/dlrover.md lists the rules, the quirks kept and what differs.

#include <dnnplan/core/error.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_brain_inputs.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_brain_utils.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_local.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan::dlrover {

/// The first worker (OptimizeJobWorkerCreateResource, optalgorithm/
/// optimize_job_worker_create_resource.go, commit 5c4f181e): over the history jobs that
/// "Completed", the largest worker memory x (1 + job_node_memory_margin_ratio, 0.5), at least
/// 16 GiB, and ceil(the largest worker CPU), at least min_worker_create_cpu_cores (12); count 1.
/// Always a plan (16 GiB and 12 cores without history).
[[nodiscard]] inline brain_plan optimize_job_worker_create_resource(const std::vector<brain_job>& history,
                                                                    const brain_options& options = {}) {
    options.validate();
    for (std::size_t i = 0; i < history.size(); ++i) history[i].validate("history[" + std::to_string(i) + "]");
    double memory = 0.0, cpu = 0.0;
    for (const brain_job& job : history) {
        if (job.exit_reason != "Completed" || !job.runtime) continue;
        for (const brain_runtime_record& r : *job.runtime) {
            memory = std::max(memory, detail::max_value(r.worker_memory_bytes));
            cpu = std::max(cpu, detail::max_value(r.worker_cpu_cores));
        }
    }
    memory *= 1.0 + detail::zero_reads_as(options.job_node_memory_margin_ratio, 0.5);
    if (memory < brain_constants::worker_create_memory_bytes) memory = brain_constants::worker_create_memory_bytes;
    cpu = std::ceil(cpu);
    const double min_cpu = detail::zero_reads_as(options.min_worker_create_cpu_cores, 12.0);
    if (cpu < min_cpu) cpu = min_cpu;
    brain_plan plan;
    plan.groups[node_type::worker] = {.count = 1, .resource = {.cpu_cores = cpu, .memory_bytes = memory}};
    return plan;
}

namespace detail {
/// getWorkerMemoryFromOptimizeResult (optimize_job_worker_create_oom_resource.go): the largest
/// memory of the plan's pods named "...worker-..." and of its worker group; 0 if none.
[[nodiscard]] inline double worker_memory_of(const brain_plan& plan) {
    double most = 0.0;
    for (const auto& [name, pod] : plan.pods)
        if (name.find("worker-") != std::string::npos) most = std::max(most, pod.memory_bytes);
    if (const auto it = plan.groups.find(node_type::worker); it != plan.groups.end())
        most = std::max(most, it->second.resource.memory_bytes);
    return most;
}
}  // namespace detail

/// The first worker after an out-of-memory (OptimizeJobWorkerCreateOomResource, optalgorithm/
/// optimize_job_worker_create_oom_resource.go, commit 13d79d18). Over the history jobs whose
/// runtime parsed (whatever their exit reason), each worker node's memory in the newest record
/// that has its index (skipped when 0), x (1 + worker_oom_memory_margin_ratio, 0.2) if that node
/// ran out of memory; m = the largest. The job's last worker memory: from its newest earlier plan
/// that sets one, else the largest worker memory of its latest record. When that is > 0, the
/// memory is at least it + worker_oom_memory_min_increase_bytes (4e9). Only the worker memory is
/// set (count 0: unchanged); it may be 0.
[[nodiscard]] inline brain_plan optimize_job_worker_create_oom_resource(const brain_job& job, const std::vector<brain_job>& history,
                                                                        const brain_options& options = {}) {
    options.validate();
    job.validate();
    for (std::size_t i = 0; i < history.size(); ++i) history[i].validate("history[" + std::to_string(i) + "]");
    double memory = 0.0;
    for (const brain_job& past : history) {
        if (!past.runtime) continue;  // Go: the JSON did not parse; skipped before the node query
        const std::vector<brain_runtime_record>& records = *past.runtime;
        for (const brain_job_node& node : past.worker_nodes) {
            const auto index = detail::pod_index(node.name);
            if (!index) continue;
            double used = 0.0;
            for (std::size_t i = records.size(); i-- > 0;)
                if (const auto it = records[i].worker_memory_bytes.find(*index); it != records[i].worker_memory_bytes.end()) {
                    used = it->second;
                    break;
                }
            if (used == 0.0) continue;
            if (node.is_oom) used *= 1.0 + options.worker_oom_memory_margin_ratio;
            memory = std::max(memory, used);
        }
    }
    double last = 0.0;
    for (std::size_t i = job.optimizations.size(); i-- > 0;)
        if ((last = detail::worker_memory_of(job.optimizations[i])) > 0.0) break;
    if (last == 0.0 && job.runtime && !job.runtime->empty()) last = detail::max_value(job.runtime->back().worker_memory_bytes);
    if (last > 0.0 && last + options.worker_oom_memory_min_increase_bytes > memory)
        memory = last + options.worker_oom_memory_min_increase_bytes;
    brain_plan plan;
    plan.groups[node_type::worker] = {.count = 0, .resource = {.cpu_cores = 0.0, .memory_bytes = memory}};
    return plan;
}

namespace detail {

// optalgorithm/optimize_job_worker_resource.go, commit 4eaf4cb9.

/// preProcessRuntimeInfos: the records with the latest PS set, less the "singular" ones: a record
/// (not the first kept, not the last) whose largest PS CPU utilisation u is above `overload` and
/// for which every record j within `count` of it (j indexes the unfiltered list) has utilisation
/// u_j < u with (u - u_j) / u >= less.
[[nodiscard]] inline std::vector<brain_runtime_record> without_singular_records(const std::vector<brain_runtime_record>& records,
                                                                                const node_values& ps_cpus, double overload,
                                                                                std::int64_t count, double less) {
    std::vector<brain_runtime_record> out;
    const auto l = static_cast<std::int64_t>(records.size());
    for (std::int64_t i = 0; i < l; ++i) {
        const brain_runtime_record& r = records[static_cast<std::size_t>(i)];
        if (!same_nodes(r.ps_cpu_cores, records.back().ps_cpu_cores)) continue;
        const double util = max_util(r.ps_cpu_cores, ps_cpus);
        bool singular = !out.empty() && i != l - 1 && !(util <= overload);
        for (std::int64_t j = std::max<std::int64_t>(i - count, 0); singular && j <= std::min(i + count, l - 1); ++j) {
            if (j == i) continue;
            const double other = max_util(records[static_cast<std::size_t>(j)].ps_cpu_cores, ps_cpus);
            if (util <= other || (util - other) / util < less) singular = false;  // util > overload >= 0 here
        }
        if (!singular) out.push_back(r);
    }
    return out;
}

enum class speed_state { decelerated, increased, stable };

/// getTrainingSpeedState: `inter`, the newest record whose worker count differs from the newest
/// one's (records without workers at the newest end do not set that count). Stable when fewer than
/// `count` records follow it; increased when fewer than `count` precede it (or none differs);
/// otherwise the mean speed of the `count` records up to it against the `count` after it:
/// decelerated when it fell by at least `less`, increased when it rose, else stable.
[[nodiscard]] inline speed_state training_speed_state(const std::vector<brain_runtime_record>& records, std::int64_t count,
                                                      double less) {
    const auto l = static_cast<std::int64_t>(records.size());
    std::size_t current = 0;
    std::int64_t inter = -1;
    for (std::int64_t i = l - 1; i >= 0; --i) {
        const std::size_t workers = records[static_cast<std::size_t>(i)].worker_cpu_cores.size();
        if (current == 0) current = workers;
        else if (current != workers) {
            inter = i;
            break;
        }
    }
    if (inter > l - count - 1) return speed_state::stable;
    if (inter < count - 1) return speed_state::increased;
    double pre = 0.0, post = 0.0;
    for (std::int64_t i = inter; i >= inter - count + 1; --i) pre += records[static_cast<std::size_t>(i)].speed_steps_per_s;
    for (std::int64_t i = inter + 1; i <= inter + count; ++i) post += records[static_cast<std::size_t>(i)].speed_steps_per_s;
    pre /= static_cast<double>(count);
    post /= static_cast<double>(count);
    if (pre > post && (pre - post) / pre >= less) return speed_state::decelerated;  // pre > post >= 0
    if (pre < post) return speed_state::increased;
    return speed_state::stable;
}

[[nodiscard]] inline double go_min(double a, double b) noexcept { return a < b ? a : b; }

}  // namespace detail

/// The worker count and resource of a running job (OptimizeJobWorkerResource, optalgorithm/
/// optimize_job_worker_resource.go, commit 4eaf4cb9). PS requests by the index after the last '-'
/// of the PS node names; records without the singular ones (above); none with fewer than
/// worker_cpu_util_comp_count of them. n = the latest worker count; u = the largest PS CPU of the
/// last 3 over its request.
/// - Some PS's mean CPU of the last 3 over its request > ps_cpu_exhausted_threshold_ratio (0.95):
///   n - worker_replica_decrease_count (4) when n is larger.
/// - Else if u < ps_cpu_overload_ratio (0.8) and the speed has not decelerated: r = n +
///   worker_max_count_per_step (4) when u <= 0, else ceil(0.8 / u x n); then phase initial or
///   sample: with a per-worker speed of 0, n + min(4, r - n); else 10 when the training would take
///   at most 1800 s, else min(worker_max_init_count_per_step (32), r) (r when a feature did not
///   parse); phase stable with the speed increased: n + min(4, r - n); any other phase: r, not
///   capped per step (DLRover only logs "invalid optimize phase").
/// - Else n.
/// At most worker_max_replica_count (60). CPU: ceil(the largest worker CPU (the max of the last 3
/// with fewer than 6 records, else their mean) + worker_cpu_margin_cores (1)), 0 when that is 0;
/// memory: the largest worker memory of the kept records + min(its x worker_memory_margin_ratio
/// (0.2), 8 GiB). None without records; invalid_input "job.runtime" when it did not parse.
[[nodiscard]] inline std::optional<brain_plan> optimize_job_worker_resource(const brain_job& job, const brain_options& options = {}) {
    options.validate();
    job.validate();
    if (detail::parsed_runtime(job).empty()) return std::nullopt;
    node_values ps_cpus;
    for (const brain_job_node& node : job.ps_nodes)
        if (const auto index = detail::index_after_last_dash(node.name)) ps_cpus[*index] = node.resource.cpu_cores;
    const std::vector<brain_runtime_record> records = detail::without_singular_records(
        *job.runtime, ps_cpus, options.ps_cpu_overload_ratio, options.worker_cpu_util_comp_count, options.worker_cpu_util_less_ratio);
    if (static_cast<std::int64_t>(records.size()) < options.worker_cpu_util_comp_count || records.empty()) return std::nullopt;
    constexpr std::size_t step = brain_constants::records_to_average;
    // Go's int arithmetic on the count, in double here: every path ends capped by
    // worker_max_replica_count, so the result is whole and in range (a NaN one is 0, go_count).
    const auto current = static_cast<double>(records.back().worker_cpu_cores.size());
    double replica = current;
    const double util = detail::max_util(detail::node_maximum(records, step, &brain_runtime_record::ps_cpu_cores), ps_cpus);
    const detail::speed_state speed =
        detail::training_speed_state(records, options.step_count_threshold, options.training_speed_less_ratio);
    const auto per_step = static_cast<double>(options.worker_max_count_per_step);
    if (!detail::hot_cpu_nodes(records, ps_cpus, options.ps_cpu_exhausted_threshold_ratio, step).empty()) {
        const auto decrease = static_cast<double>(options.worker_replica_decrease_count);
        if (replica > decrease) replica -= decrease;
    } else if (util < options.ps_cpu_overload_ratio && speed != detail::speed_state::decelerated) {
        // computeWorkerReplicaForIdlePSCPU; util < overload here
        replica = util <= 0.0 ? replica + per_step : std::ceil((options.ps_cpu_overload_ratio / util) * current);
        const worker_optimize_phase phase = options.worker_phase;
        if (phase == worker_optimize_phase::initial || phase == worker_optimize_phase::sample) {
            const double per_worker = detail::mean_speed_per_worker(records, options.step_count_threshold);
            if (per_worker == 0.0) replica = current + detail::go_min(per_step, replica - current);
            else if (const auto time = detail::training_time_s(job, per_worker)) {
                replica = *time <= brain_constants::init_training_time_s
                              ? brain_constants::default_init_workers
                              : detail::go_min(static_cast<double>(options.worker_max_init_count_per_step), replica);
            }
        } else if (phase == worker_optimize_phase::stable && speed == detail::speed_state::increased) {
            replica = current + detail::go_min(per_step, replica - current);
        }
    }
    const node_values worker_cpu = records.size() < brain_constants::init_training_records
                                       ? detail::node_maximum(records, step, &brain_runtime_record::worker_cpu_cores)
                                       : detail::node_average(records, step, &brain_runtime_record::worker_cpu_cores);
    double cpu = detail::max_value(worker_cpu);
    double memory = 0.0;
    for (const brain_runtime_record& r : records) memory = std::max(memory, detail::max_value(r.worker_memory_bytes));
    memory += detail::go_min(memory * options.worker_memory_margin_ratio, brain_constants::max_worker_memory_increase_bytes);
    if (cpu > 0.0) cpu = std::ceil(cpu + options.worker_cpu_margin_cores);  // 0 stays: DLRover's "invalid" result
    const auto max_replica = static_cast<double>(options.worker_max_replica_count);
    if (replica > max_replica) replica = max_replica;
    brain_plan plan;
    plan.groups[node_type::worker] = {.count = detail::go_count(replica), .resource = {.cpu_cores = cpu, .memory_bytes = memory}};
    return plan;
}

}  // namespace dnnplan::dlrover
