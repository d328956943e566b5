#pragma once
// The two policies the replay harness runs (solve/elastic_advisor/replay.hpp; both satisfy
// elastic_policy, solve/elastic_advisor/concepts.hpp): the model advisor (model_policy, each
// decision solve() of solve/elastic_advisor/advisor.hpp on what the view shows) and DLRover's local
// optimizer in the stages of its job master (dlrover_policy, solve/elastic_advisor/dlrover_local.hpp,
// reading the harness's PS CPU proxy).

#include <dnnplan/solve/elastic_advisor/advisor.hpp>
#include <dnnplan/solve/elastic_advisor/concepts.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_local.hpp>
#include <dnnplan/solve/elastic_advisor/load_model.hpp>
#include <dnnplan/solve/elastic_advisor/problem.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>

namespace dnnplan {

/// The advisor's request at a decision of the replay: the job as the view shows it (remaining
/// steps, deadline left, prices, the table's configurations), the measured speeds so far, the
/// running configuration, `options` with the view's trial length. A deadline that has passed stays
/// in the request (deadline_s <= 0): the advisor then says infeasible and runs the fastest to the end.
[[nodiscard]] inline elastic_request advisor_request(const policy_view& v, const elastic_options& options) {
    elastic_request r{.job = {.gpu = v.table->gpu, .remaining_steps = v.remaining_steps,
                              .deadline_s = v.deadline_left_s, .worker_usd_per_h = v.table->worker_usd_per_h,
                              .ps_usd_per_h = v.table->ps_usd_per_h, .configurations = v.configurations},
                      .current = v.current, .options = options};
    r.options.trial_s = v.trial_s;
    for (const auto& o : v.observations) r.observations.push_back(o.measured);
    return r;
}

/// The replay's decision for an advisor's result: its plan, else the best effort it would run
/// (result.plan_to_run()); a commitment runs until the work is done.
[[nodiscard]] inline policy_decision decision_of(const elastic_result& result) {
    const elastic_plan& plan = *result.plan_to_run();
    return {.configuration = plan.configuration(), .final = plan.action == elastic_action::commit, .why = plan.why};
}

/// The model advisor as a replay policy: each decision is solve(advisor_request(view, options), model).
template <elastic_throughput_model Model = ps_load_contention_model>
struct basic_model_policy {
    elastic_options options{};
    Model model{};

    [[nodiscard]] policy_decision operator()(const policy_view& v) const { return decision_of(solve(advisor_request(v, options), model)); }
};

/// The model advisor with the load-contention PS model.
using model_policy = basic_model_policy<>;

/// DLRover's local optimizer (solve/elastic_advisor/dlrover_local.hpp) as a replay policy, in the stages of its
/// job master: a cold start (one PS, one worker), after the first period the PS initial plan (its
/// PS count), then the running plan every period (hot PS, else worker scaling with its stop rules).
/// Each period adds records sampled every `sample_s` (DLRover's 30 s) of the configuration that ran,
/// with the PS CPU proxy as the PS CPU use. The table's largest PS and worker counts are the job's
/// quota (DLRover's resource limits): a plan beyond them gets the largest the table holds; a PS
/// count or worker count the table lacks gets the nearest the table holds (more PS CPU on fixed-size
/// machines is a PS more: a hot-PS plan adds one). It never commits: it is asked every period.
struct dlrover_policy {
    double ps_cpu = 8.0;             ///< each PS's CPU request (cores)
    double worker_cpu = 8.0;         ///< each worker's request; its use is worker_cpu_used
    double worker_cpu_used = 4.0;
    double node_memory_mb = 16384.0; ///< every node's request; use is half of it
    double sample_s = 30.0;
    dlrover::local_optimizer_params params{};

    dlrover::record_store store{};

    [[nodiscard]] policy_decision operator()(const policy_view& v) {
        std::int32_t max_ps = 1, max_workers = 1;
        for (const auto& c : v.configurations) {
            max_ps = std::max(max_ps, c.ps);
            max_workers = std::max(max_workers, c.workers);
        }
        const dlrover::resource_limits limits{.cpu = max_ps * ps_cpu + max_workers * worker_cpu_used,
                                              .memory_mb = (max_ps + max_workers) * node_memory_mb};
        if (!v.current) {
            const auto plan = dlrover::cold_start_plan(limits, params);
            return {.configuration = nearest(v, plan.groups.at(dlrover::node_type::ps).count,
                                             plan.groups.at(dlrover::node_type::worker).count),
                    .final = false, .why = "DLRover cold start"};
        }
        const replay_observation& last = v.observations.back();
        const auto samples = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(v.trial_s / sample_s)));
        for (std::int64_t i = 0; i < samples; ++i) store.add(record_of(last));
        ps_configuration next = *v.current;
        std::string why;
        if (v.observations.size() == 1) {  // after the cold start's first period
            const auto plan = dlrover::ps_initial_plan(store.records(), limits, params);
            if (const auto it = plan.groups.find(dlrover::node_type::ps); it != plan.groups.end()) next.ps = it->second.count;
            why = "DLRover PS initial plan";
        } else {
            if (auto hot = dlrover::hot_ps_plan(store.records(), limits, params)) {
                if (!hot->nodes.empty()) next.ps += 1;
                why = "DLRover hot PS";
            } else {
                const auto plan = dlrover::worker_plan(store.records(), limits, params);
                if (const auto it = plan.groups.find(dlrover::node_type::worker); it != plan.groups.end() && it->second.count > 0)
                    next.workers = it->second.count;
                why = "DLRover worker plan";
            }
        }
        return {.configuration = nearest(v, next.ps, next.workers), .final = false, .why = why};
    }

private:
    [[nodiscard]] dlrover::runtime_record record_of(const replay_observation& o) const {
        dlrover::runtime_record r{.speed = o.measured.steps_per_s};
        for (std::int32_t i = 0; i < o.measured.ps; ++i)
            r.nodes.push_back({.type = dlrover::node_type::ps, .id = i, .name = "ps-" + std::to_string(i),
                               .config = {ps_cpu, node_memory_mb},
                               .used = {o.ps_cpu_utilisation * ps_cpu, node_memory_mb / 2.0}});
        for (std::int32_t i = 0; i < o.measured.workers; ++i)
            r.nodes.push_back({.type = dlrover::node_type::worker, .id = i, .name = "worker-" + std::to_string(i),
                               .config = {worker_cpu, node_memory_mb}, .used = {worker_cpu_used, node_memory_mb / 2.0}});
        return r;
    }

    /// The table's configuration nearest (ps, workers): the nearest PS count it holds, then the
    /// nearest worker count with that PS count (ties: fewer).
    [[nodiscard]] static ps_configuration nearest(const policy_view& v, std::int32_t ps, std::int32_t workers) {
        const auto distance = [](std::int32_t a, std::int32_t b) { return a > b ? a - b : b - a; };
        ps_configuration best = v.configurations.front();
        for (const auto& c : v.configurations) {
            const auto key = [&](const ps_configuration& x) {
                return std::tuple{distance(x.ps, ps), distance(x.workers, workers), x.ps, x.workers};
            };
            if (key(c) < key(best)) best = c;
        }
        return best;
    }
};

}  // namespace dnnplan
