#pragma once
// Runtime records of a running PS job, DLRover-style (its RuntimeMetric: time, global step, speed,
// the nodes with CPU and memory used and requested), and the two advisors as pure functions of
// them: `advise` (the model advisor, solve/elastic_advisor/advisor.hpp) and `dlrover_advise`
// (DLRover's local optimizer, solve/elastic_advisor/dlrover_local.hpp).
// The model advisor reads from records only the configuration and the speed: one observation per
// record (solve() averages the records of a configuration into one mean). The remaining steps are
// the job's work less the latest global step; the deadline left is the deadline less the latest
// record's time (time since the job started).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/solve/elastic_advisor/advisor.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_local.hpp>
#include <dnnplan/solve/elastic_advisor/problem.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// One node of a runtime record.
struct node_usage {
    dlrover::node_type type = dlrover::node_type::worker;
    std::int32_t id = 0;
    double cpu_used = 0.0;             ///< cores
    double cpu_requested = 0.0;        ///< cores (> 0 for a PS: it divides its use)
    double memory_used_mb = 0.0;
    double memory_requested_mb = 0.0;
    friend bool operator==(const node_usage&, const node_usage&) = default;
};

/// One runtime record (DLRover's RuntimeMetric with the counts spelled out).
struct elastic_record {
    double time_s = 0.0;              ///< since the job started, >= 0
    std::int64_t global_step = 0;     ///< >= 0
    double speed = 0.0;               ///< steps/s, >= 0 (0: not measured, e.g. while starting)
    std::int32_t ps = 1;
    std::int32_t workers = 1;
    std::vector<node_usage> nodes{};  ///< may be empty; when given, its PS and workers match the counts
    friend bool operator==(const elastic_record&, const elastic_record&) = default;

    void validate(std::string_view path = "record") const {
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "time_s", time_s);
        detail::require_at_least(p + "global_step", global_step, 0);
        detail::require_non_negative(p + "speed", speed);
        detail::require_at_least(p + "ps", ps, 1);
        detail::require_at_least(p + "workers", workers, 1);
        std::int64_t ps_nodes = 0, worker_nodes = 0;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const std::string n = p + "nodes[" + std::to_string(i) + "].";
            const node_usage& u = nodes[i];
            detail::require_non_negative(n + "cpu_used", u.cpu_used);
            if (u.type == dlrover::node_type::ps) detail::require_positive(n + "cpu_requested", u.cpu_requested);
            else detail::require_non_negative(n + "cpu_requested", u.cpu_requested);
            detail::require_non_negative(n + "memory_used_mb", u.memory_used_mb);
            detail::require_non_negative(n + "memory_requested_mb", u.memory_requested_mb);
            ps_nodes += u.type == dlrover::node_type::ps ? 1 : 0;
            worker_nodes += u.type == dlrover::node_type::worker ? 1 : 0;
        }
        if (!nodes.empty() && ps_nodes != ps)
            throw invalid_input(p + "nodes", std::to_string(ps_nodes) + " PS nodes", std::to_string(ps) + " (the record's ps)");
        if (!nodes.empty() && worker_nodes != workers)
            throw invalid_input(p + "nodes", std::to_string(worker_nodes) + " worker nodes",
                                std::to_string(workers) + " (the record's workers)");
    }
};

/// Every record valid, and in time order (a record earlier than the one before it is an
/// invalid_input naming "records[i].time_s").
inline void validate_records(const std::vector<elastic_record>& records) {
    for (std::size_t i = 0; i < records.size(); ++i) {
        const std::string at = "records[" + std::to_string(i) + "]";
        records[i].validate(at);
        if (i > 0 && records[i].time_s < records[i - 1].time_s)
            throw invalid_input(at + ".time_s", detail::format_number(records[i].time_s),
                                "a time >= the previous record's " + detail::format_number(records[i - 1].time_s) +
                                    " (records in time order)");
    }
}

/// What `advise` needs besides the records: the job's work and deadline from its start, its prices
/// and its configurations, the advisor's options.
struct advise_setup {
    elastic_job job{};  ///< remaining_steps: the whole work; deadline_s: from the job's start
    elastic_options options{};
};

/// The configurations 1..max_ps PS x 1..max_workers workers, PS-major (a job's grid). Throws
/// invalid_input for a count below 1.
[[nodiscard]] inline std::vector<ps_configuration> configuration_grid(std::int32_t max_ps, std::int32_t max_workers) {
    detail::require_at_least("max_ps", max_ps, 1);
    detail::require_at_least("max_workers", max_workers, 1);
    std::vector<ps_configuration> out;
    for (std::int32_t p = 1; p <= max_ps; ++p)
        for (std::int32_t w = 1; w <= max_workers; ++w) out.push_back({p, w});
    return out;
}

/// The model advisor on runtime records (the rules at the top of this header). Throws
/// invalid_input for bad records or setup; records of a configuration the job does not list are an
/// invalid_input naming "records[i]". Past the deadline the deadline left is <= 0: the advisor says
/// infeasible, with the fastest configuration as best_effort; work already done gives remaining 1
/// step (the advice then only matters for the last step).
[[nodiscard]] inline elastic_result advise(const std::vector<elastic_record>& records, const advise_setup& setup) {
    validate_records(records);
    setup.job.validate("setup.job");
    elastic_request r{.job = setup.job, .options = setup.options};
    if (!records.empty()) {
        const elastic_record& last = records.back();
        r.job.remaining_steps = std::max(1.0, setup.job.remaining_steps - static_cast<double>(last.global_step));
        if (setup.job.deadline_s) r.job.deadline_s = *setup.job.deadline_s - last.time_s;
        r.current = ps_configuration{last.ps, last.workers};
    }
    for (std::size_t i = 0; i < records.size(); ++i) {
        const ps_configuration c{records[i].ps, records[i].workers};
        if (!setup.job.allows(c))
            throw invalid_input("records[" + std::to_string(i) + "]", to_string(c), "a configuration of setup.job.configurations");
        if (records[i].speed > 0.0) r.observations.push_back({c.ps, c.workers, records[i].speed});
    }
    return solve(r);
}

/// A record as DLRover's optimizer reads it (its node list; names "ps-<id>", "worker-<id>").
[[nodiscard]] inline dlrover::runtime_record to_dlrover(const elastic_record& r) {
    dlrover::runtime_record out{.global_step = r.global_step, .speed = r.speed,
                                .timestamp_s = static_cast<std::int64_t>(r.time_s)};
    for (const node_usage& n : r.nodes)
        out.nodes.push_back({.type = n.type, .id = n.id, .name = std::string(to_string(n.type)) + "-" + std::to_string(n.id),
                             .config = {n.cpu_requested, n.memory_requested_mb}, .used = {n.cpu_used, n.memory_used_mb}});
    return out;
}

/// DLRover's limits for a job of up to max_ps PS and max_workers workers (its ResourceLimits):
/// each node as large as the largest of its kind in the latest record (the CPU it requests; the
/// memory of the largest node of any kind). Throws invalid_input when that record lists no nodes
/// ("records[i].nodes": DLRover's rules read them) or a count is below 1.
[[nodiscard]] inline dlrover::resource_limits dlrover_limits(const std::vector<elastic_record>& records, std::int32_t max_ps,
                                                             std::int32_t max_workers) {
    detail::require_at_least("max_ps", max_ps, 1);
    detail::require_at_least("max_workers", max_workers, 1);
    if (records.empty() || records.back().nodes.empty())
        throw invalid_input(records.empty() ? std::string("records") : "records[" + std::to_string(records.size() - 1) + "].nodes", "[]",
                            "the nodes' CPU and memory (DLRover's rules read them)");
    double ps_cpu = 0.0, worker_cpu = 0.0, memory_mb = 0.0;
    for (const node_usage& n : records.back().nodes) {
        if (n.type == dlrover::node_type::ps) ps_cpu = std::max(ps_cpu, n.cpu_requested);
        else worker_cpu = std::max(worker_cpu, n.cpu_requested);
        memory_mb = std::max(memory_mb, n.memory_requested_mb);
    }
    return {.cpu = max_ps * ps_cpu + max_workers * worker_cpu, .memory_mb = (max_ps + max_workers) * memory_mb};
}

/// DLRover's running-stage plan (dlrover::running_plan: hot PS, else worker scaling with its stop
/// rules) on the records, kept in DLRover's record store (its trimming included).
[[nodiscard]] inline dlrover::resource_plan dlrover_advise(const std::vector<elastic_record>& records,
                                                           const dlrover::resource_limits& limits,
                                                           const dlrover::local_optimizer_params& params = {}) {
    validate_records(records);
    // DLRover keeps a record's timestamp in whole seconds (an int64); a time it cannot hold is bad input.
    constexpr double int64_end = 9223372036854775808.0;  // 2^63
    for (std::size_t i = 0; i < records.size(); ++i)
        if (records[i].time_s >= int64_end)
            throw invalid_input("records[" + std::to_string(i) + "].time_s", detail::format_number(records[i].time_s),
                                "a time below 2^63 s (DLRover's int64 timestamp)");
    dlrover::record_store store(params.latest_samples);
    for (const auto& r : records) store.add(to_dlrover(r));
    return dlrover::running_plan(store.records(), limits, params);
}

}  // namespace dnnplan
