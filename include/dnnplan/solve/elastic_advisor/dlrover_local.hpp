#pragma once
// DLRover's single-job ("local") resource optimizer for parameter-server jobs, as pure functions:
// a cold-start plan, PS sizing, hot-PS CPU tuning, worker scaling with its two stop rules, and the
// out-of-memory plan, each a function of runtime records, the job's resource limits and DLRover's
// parameters. Restated from intelligent-machine-learning/dlrover,
// dlrover/python/master/resource/local_optimizer.py (PSLocalOptimizer, commit 6a24f9a6) and the
// record store it reads (dlrover/python/master/stats/reporter.py, LocalStatsReporter, commit
// 0907e09f); docs/solvers/dlrover.md lists the rules and the quirks kept.
//
// Units: CPU in cores, memory in MB (DLRover's MemoryUnit.MB = 2^20 bytes); the limits are taken in
// MB as the upstream tests pass them (DLRover's job master passes bytes and converts the plan back
// to MB, with a cold-start cap in MB that then rounds to 0: a unit slip not reproduced here).
// No global state: the record store is a value the caller owns (DLRover's is a process-wide
// singleton).

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan::dlrover {

enum class node_type { ps, worker, chief, evaluator, master };

}  // namespace dnnplan::dlrover

namespace dnnplan {
template <>
struct enum_text<dlrover::node_type> {
    static constexpr std::array<enum_name<dlrover::node_type>, 5> names{{
        {dlrover::node_type::ps, "ps"},
        {dlrover::node_type::worker, "worker"},
        {dlrover::node_type::chief, "chief"},
        {dlrover::node_type::evaluator, "evaluator"},
        {dlrover::node_type::master, "master"},
    }};
};
}  // namespace dnnplan

namespace dnnplan::dlrover {

struct node_resource {
    double cpu = 0.0;        ///< cores
    double memory_mb = 0.0;  ///< MB; 0 in a plan: unchanged
    friend bool operator==(const node_resource&, const node_resource&) = default;
};

/// One node of a runtime record: what it asked for and what it used.
struct runtime_node {
    node_type type = node_type::worker;
    std::int32_t id = 0;
    std::string name{};
    node_resource config{};
    node_resource used{};
};

/// DLRover's RuntimeMetric: the running nodes, the global step, the job's speed (steps/s), the
/// time. The optimizer reads only the nodes and the speed.
struct runtime_record {
    std::vector<runtime_node> nodes{};
    std::int64_t global_step = 0;
    double speed = 0.0;
    std::int64_t timestamp_s = 0;

    void validate(std::string_view path = "record") const {
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "speed", speed);
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const std::string n = p + "nodes[" + std::to_string(i) + "].";
            // A PS's CPU request divides its use (utilisation): it must be > 0.
            if (nodes[i].type == node_type::ps) detail::require_positive(n + "config.cpu", nodes[i].config.cpu);
            else detail::require_non_negative(n + "config.cpu", nodes[i].config.cpu);
            detail::require_non_negative(n + "config.memory_mb", nodes[i].config.memory_mb);
            detail::require_non_negative(n + "used.cpu", nodes[i].used.cpu);
            detail::require_non_negative(n + "used.memory_mb", nodes[i].used.memory_mb);
        }
    }
};

/// The job's totals (DLRover's ResourceLimits).
struct resource_limits {
    double cpu = 0.0;
    double memory_mb = 0.0;

    void validate(std::string_view path = "limits") const {
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "cpu", cpu);
        detail::require_non_negative(p + "memory_mb", memory_mb);
    }
};

struct group_resource {
    std::int32_t count = 0;
    node_resource resource{};
    friend bool operator==(const group_resource&, const group_resource&) = default;
};

/// DLRover's ResourcePlan: per node type a count and a per-node resource, and per node name a
/// resource.
struct resource_plan {
    std::map<node_type, group_resource> groups{};
    std::map<std::string, node_resource> nodes{};
    [[nodiscard]] bool empty() const noexcept { return groups.empty() && nodes.empty(); }
    friend bool operator==(const resource_plan&, const resource_plan&) = default;
};

/// DLRover's OptimizerParams and the module's constants, with its defaults.
struct local_optimizer_params {
    double ps_cpu_hot_threshold = 0.9;       ///< a PS is hot when mean use / request >= it
    double ps_cpu_target_utilisation = 0.9;  ///< workers grow by it / the busiest PS's utilisation
    double ps_memory_margin = 0.2;
    double worker_memory_margin = 0.5;
    double oom_memory_factor = 2.0;
    double node_max_cpu = 32.0;
    double min_worker_speed_ratio = 0.2;     ///< stop adding workers below it
    double max_ps_cpu_utilisation = 0.95;    ///< no worker plan while a PS sample is above it
    double max_initial_node_cpu = 16.0;
    double max_initial_node_memory_mb = 8192.0;
    double min_node_cpu = 1.0;
    double min_node_memory_mb = 1024.0;
    std::size_t latest_samples = 5;          ///< records the optimizer looks at
};

/// DLRover's LocalStatsReporter: the records, trimmed on every addition to at most
/// `max_per_count` from the FIRST record (anywhere in the list) with the latest record's total node
/// count; records before it are kept. (The speed ratio of the upstream tests depends on it.)
class record_store {
public:
    explicit record_store(std::size_t max_per_count = 5) : max_per_count_(max_per_count) {}

    void add(runtime_record record) {
        record.validate("record");
        records_.push_back(std::move(record));
        const std::size_t latest = records_.back().nodes.size();
        std::size_t index = 0;
        while (records_[index].nodes.size() != latest) ++index;
        if (records_.size() - index > max_per_count_)
            records_.erase(records_.begin() + static_cast<std::ptrdiff_t>(index),
                           records_.end() - static_cast<std::ptrdiff_t>(max_per_count_));
    }

    [[nodiscard]] const std::vector<runtime_record>& records() const noexcept { return records_; }

private:
    std::size_t max_per_count_;
    std::vector<runtime_record> records_{};
};

namespace detail {

[[nodiscard]] inline bool is_worker_or_chief(node_type t) noexcept { return t == node_type::worker || t == node_type::chief; }

/// Every record's validate(), named by its index: bad input is an invalid_input, never a division
/// by a zero request.
inline void validate_records(const std::vector<runtime_record>& records) {
    for (std::size_t i = 0; i < records.size(); ++i) records[i].validate("records[" + std::to_string(i) + "]");
}

/// Python's round(x, 1): the double's exact value rounded half to even at one decimal, as glibc's
/// printf rounds (CPython rounds through the same correctly rounded conversion).
[[nodiscard]] inline double python_round_1(double x) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.1f", x);
    return std::strtod(buffer, nullptr);
}

}  // namespace detail

/// The latest samples (newest first) whose PS id set equals the latest record's (PS nodes), and
/// whose chief + worker count equals the latest record's (worker nodes), among the last
/// `params.latest_samples` records (DLRover's _extract_node_resource).
struct node_samples {
    std::vector<std::vector<runtime_node>> ps{}, workers{};
};

[[nodiscard]] inline node_samples extract_samples(const std::vector<runtime_record>& records,
                                                  const local_optimizer_params& params = {}) {
    detail::validate_records(records);
    node_samples out;
    if (records.empty()) return out;
    std::set<std::int32_t> latest_ps;
    std::size_t latest_workers = 0;
    for (const runtime_node& n : records.back().nodes) {
        if (n.type == node_type::ps) latest_ps.insert(n.id);
        if (detail::is_worker_or_chief(n.type)) ++latest_workers;
    }
    const std::size_t first = records.size() > params.latest_samples ? records.size() - params.latest_samples : 0;
    for (std::size_t i = records.size(); i-- > first;) {
        std::vector<runtime_node> ps, workers;
        std::set<std::int32_t> ids;
        for (const runtime_node& n : records[i].nodes) {
            if (n.type == node_type::ps) {
                ps.push_back(n);
                ids.insert(n.id);
            }
            if (detail::is_worker_or_chief(n.type)) workers.push_back(n);
        }
        if (ids == latest_ps) out.ps.push_back(std::move(ps));
        if (workers.size() == latest_workers) out.workers.push_back(std::move(workers));
    }
    return out;
}

/// What one training process needs (DLRover's _estimate_process_require_resource): a worker's
/// mean CPU, the PS CPU per worker (mean total PS use over the latest chief + worker count), the
/// largest worker memory.
struct process_requirement {
    double worker_cpu = 0.0;
    double ps_cpu = 0.0;
    double worker_memory_mb = 0.0;
};

/// Throws invalid_input "records" when there is no PS sample or no worker in the latest record
/// (DLRover divides by zero there).
[[nodiscard]] inline process_requirement estimate_process_requirement(const std::vector<runtime_record>& records,
                                                                      const local_optimizer_params& params = {}) {
    const node_samples s = extract_samples(records, params);
    std::size_t latest_workers = 0;
    if (!records.empty())
        for (const runtime_node& n : records.back().nodes) latest_workers += detail::is_worker_or_chief(n.type) ? 1U : 0U;
    if (s.ps.empty() || latest_workers == 0)
        throw invalid_input("records", std::to_string(records.size()) + " records",
                            "a latest record with PS and workers (the PS CPU per worker divides by them)");
    double ps_total = 0.0;
    for (const auto& sample : s.ps)
        for (const runtime_node& n : sample) ps_total += n.used.cpu;
    process_requirement r;
    double worker_sum = 0.0;
    std::size_t worker_entries = 0;
    for (const auto& sample : s.workers)
        for (const runtime_node& n : sample) {
            worker_sum += n.used.cpu;
            ++worker_entries;
            r.worker_memory_mb = std::max(r.worker_memory_mb, n.used.memory_mb);
        }
    r.worker_cpu = worker_entries > 0 ? worker_sum / static_cast<double>(worker_entries) : 0.0;
    r.ps_cpu = ps_total / static_cast<double>(s.ps.size()) / static_cast<double>(latest_workers);
    return r;
}

/// Cold start (DLRover's _generate_job_create_resource): one PS and one worker, each with a fifth
/// of the limits, rounded up, at most 16 cores and 8192 MB.
[[nodiscard]] inline resource_plan cold_start_plan(const resource_limits& limits, const local_optimizer_params& params = {}) {
    limits.validate();
    const node_resource each{.cpu = std::min(std::ceil(limits.cpu / 5.0), params.max_initial_node_cpu),
                             .memory_mb = std::min(std::ceil(limits.memory_mb / 5.0), params.max_initial_node_memory_mb)};
    resource_plan plan;
    plan.groups[node_type::worker] = {.count = 1, .resource = each};
    plan.groups[node_type::ps] = {.count = 1, .resource = each};
    return plan;
}

/// PS sizing (DLRover's _generate_ps_initial_resource): the PS share of the CPU limit,
/// limits.cpu x ps_cpu / (ps_cpu + worker_cpu), over the latest PS request, rounded up; memory the
/// largest PS use + 20%; the PS request kept. No PS sample: an empty plan.
[[nodiscard]] inline resource_plan ps_initial_plan(const std::vector<runtime_record>& records, const resource_limits& limits,
                                                   const local_optimizer_params& params = {}) {
    limits.validate();
    const node_samples s = extract_samples(records, params);
    if (s.ps.empty()) return {};
    double max_memory = 0.0, requested_cpu = 0.0;
    for (const runtime_node& n : s.ps.front()) {
        max_memory = std::max(max_memory, n.used.memory_mb);
        requested_cpu = std::max(requested_cpu, n.config.cpu);
    }
    const process_requirement r = estimate_process_requirement(records, params);
    const double max_workers = limits.cpu / (r.ps_cpu + r.worker_cpu);  // not floored (DLRover's)
    const double total_ps_cpu = limits.cpu - max_workers * r.worker_cpu;
    resource_plan plan;
    plan.groups[node_type::ps] = {.count = static_cast<std::int32_t>(std::ceil(total_ps_cpu / requested_cpu)),
                                  .resource = {.cpu = requested_cpu,
                                               .memory_mb = std::trunc(max_memory * (1.0 + params.ps_memory_margin))}};
    return plan;
}

/// Hot PS (DLRover's _optimize_hot_ps_cpu): a PS whose mean use over the samples is at least 0.9 of
/// its request is hot; every PS is then scaled by max(1, floor(limits.cpu / process CPU) / workers),
/// no hot one past 32 cores, and those whose scaled CPU (Python's round to 0.1) exceeds their
/// request are in the plan (memory 0: unchanged). None: no PS is hot. A plan may be empty and
/// still stops worker scaling in running_plan (DLRover's quirk, kept).
[[nodiscard]] inline std::optional<resource_plan> hot_ps_plan(const std::vector<runtime_record>& records,
                                                              const resource_limits& limits,
                                                              const local_optimizer_params& params = {}) {
    limits.validate();
    const node_samples s = extract_samples(records, params);
    std::vector<std::int32_t> order;                   // first seen: the newest sample's order
    std::map<std::int32_t, std::vector<double>> used;  // per PS id
    std::map<std::int32_t, double> config;             // the oldest sample's request (DLRover's)
    for (const auto& sample : s.ps)
        for (const runtime_node& n : sample) {
            if (!used.contains(n.id)) order.push_back(n.id);
            used[n.id].push_back(n.used.cpu);
            config[n.id] = n.config.cpu;
        }
    std::map<std::int32_t, double> mean;
    std::vector<std::int32_t> hot;
    for (const std::int32_t id : order) {
        double sum = 0.0;
        for (const double u : used[id]) sum += u;
        mean[id] = sum / static_cast<double>(used[id].size());
        if (mean[id] / config[id] >= params.ps_cpu_hot_threshold) hot.push_back(id);
    }
    if (hot.empty()) return std::nullopt;
    const auto workers = static_cast<double>(s.workers.front().size());
    const process_requirement r = estimate_process_requirement(records, params);
    const double max_workers = std::trunc(limits.cpu / (r.ps_cpu + r.worker_cpu));
    double tune = std::max(1.0, max_workers / workers);
    for (const std::int32_t id : hot) tune = std::min(params.node_max_cpu / mean[id], tune);
    resource_plan plan;
    for (const runtime_node& n : s.ps.front()) {
        const double cpu = detail::python_round_1(mean[n.id] * tune);
        if (n.config.cpu >= cpu) continue;
        plan.nodes[n.name] = {.cpu = cpu, .memory_mb = 0.0};
    }
    return plan;
}

/// The marginal speed of the last change of the worker count over the old per-worker speed
/// (DLRover's _compute_worker_speed_ratio): ((v_post - v_pre) / (w_post - w_pre)) / (v_pre / w_pre),
/// v the mean speed and w the worker count (type worker only, from the oldest record) of the last
/// run of records with the latest total node count and of the run before it. 1 when there is no
/// earlier run, or the worker count did not change, or the earlier run had no workers or speed.
[[nodiscard]] inline double worker_speed_ratio(const std::vector<runtime_record>& records) {
    detail::validate_records(records);
    const auto group = [&](std::size_t end) {  // [start, end): the run ending at end - 1
        std::size_t start = end - 1;
        while (start > 0 && records[start - 1].nodes.size() == records[end - 1].nodes.size()) --start;
        return start;
    };
    const auto speed_of = [&](std::size_t start, std::size_t end) {
        double sum = 0.0;
        for (std::size_t i = start; i < end; ++i) sum += records[i].speed;
        double workers = 0.0;
        for (const runtime_node& n : records[start].nodes) workers += n.type == node_type::worker ? 1.0 : 0.0;
        return std::pair{workers, sum / static_cast<double>(end - start)};
    };
    if (records.empty()) return 1.0;
    const std::size_t post_start = group(records.size());
    if (post_start == 0) return 1.0;
    const auto [post_workers, post_speed] = speed_of(post_start, records.size());
    const std::size_t pre_start = group(post_start);
    const auto [pre_workers, pre_speed] = speed_of(pre_start, post_start);
    if (pre_workers == 0.0 || pre_speed == 0.0 || pre_workers == post_workers) return 1.0;
    return ((post_speed - pre_speed) / (post_workers - pre_workers)) / (pre_speed / pre_workers);
}

/// Worker scaling (DLRover's _generate_worker_resoruce): no plan while a PS sample uses more than
/// 0.95 of its request, or when the speed ratio is below 0.2 (the stop rule); otherwise the
/// latest worker count times 0.9 / the busiest PS sample's utilisation (when that is above 1,
/// truncated), at most what the CPU and memory left after the PS requests hold; each worker the
/// mean CPU used (at least 1) and 1.5 x the largest memory used (at least 1024 MB).
[[nodiscard]] inline resource_plan worker_plan(const std::vector<runtime_record>& records, const resource_limits& limits,
                                               const local_optimizer_params& params = {}) {
    limits.validate();
    const node_samples s = extract_samples(records, params);
    double max_utilisation = 0.0;
    for (const auto& sample : s.ps)
        for (const runtime_node& n : sample) max_utilisation = std::max(max_utilisation, n.used.cpu / n.config.cpu);
    if (max_utilisation > params.max_ps_cpu_utilisation) return {};
    if (worker_speed_ratio(records) < params.min_worker_speed_ratio) return {};
    if (max_utilisation == 0.0 || s.workers.empty()) return {};
    double count = static_cast<double>(s.workers.front().size());
    const double factor = params.ps_cpu_target_utilisation / max_utilisation;
    if (factor > 1.0) count = std::trunc(count * factor);
    double cpu_sum = 0.0, memory = 0.0;
    std::size_t entries = 0;
    for (const auto& sample : s.workers)
        for (const runtime_node& n : sample) {
            cpu_sum += n.used.cpu;
            memory = std::max(memory, n.used.memory_mb);
            ++entries;
        }
    const double mean_cpu = cpu_sum / static_cast<double>(entries);
    const node_resource each{.cpu = mean_cpu > params.min_node_cpu ? mean_cpu : params.min_node_cpu,
                             .memory_mb = std::max(std::trunc((1.0 + params.worker_memory_margin) * memory), params.min_node_memory_mb)};
    double ps_cpu = 0.0, ps_memory = 0.0;
    for (const runtime_node& n : records.back().nodes)
        if (n.type == node_type::ps) {
            ps_cpu += n.config.cpu;
            ps_memory += n.config.memory_mb;
        }
    const double fits = std::min((limits.cpu - ps_cpu) / each.cpu, (limits.memory_mb - ps_memory) / each.memory_mb);
    resource_plan plan;
    plan.groups[node_type::worker] = {.count = static_cast<std::int32_t>(std::trunc(std::min(fits, count))), .resource = each};
    return plan;
}

/// The running stage (DLRover's _generate_job_running_resource): the hot-PS plan when some PS is
/// hot (even an empty one), otherwise worker scaling.
[[nodiscard]] inline resource_plan running_plan(const std::vector<runtime_record>& records, const resource_limits& limits,
                                                const local_optimizer_params& params = {}) {
    if (auto hot = hot_ps_plan(records, limits, params)) return *hot;
    return worker_plan(records, limits, params);
}

/// Out of memory (DLRover's generate_oom_recovery_plan): each node keeps its CPU and gets twice its
/// memory request.
[[nodiscard]] inline resource_plan oom_recovery_plan(const std::vector<runtime_node>& oom_nodes,
                                                     const local_optimizer_params& params = {}) {
    resource_plan plan;
    for (const runtime_node& n : oom_nodes)
        plan.nodes[n.name] = {.cpu = n.config.cpu, .memory_mb = params.oom_memory_factor * n.config.memory_mb};
    return plan;
}

}  // namespace dnnplan::dlrover
