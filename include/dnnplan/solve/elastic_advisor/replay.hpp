#pragma once
// The replay harness (issue 13, section 3): a table of measured speeds per configuration stands
// for the cluster; a policy sees only the configurations it has run, each for a trial of stated
// length, and the harness accounts the time and the cost. Progress made during trials counts
// toward the work. Two policies run in it: the model advisor (solve/elastic_advisor/advisor.hpp) and DLRover's
// local optimizer (solve/elastic_advisor/dlrover_local.hpp), which reads PS CPU use; a speed table has none, so
// the harness supplies a proxy (below and docs/solvers/elastic_advisor.md, "The PS CPU proxy").
//
// PS CPU proxy: a PS's CPU does the work of moving and applying updates, so its use follows the
// bytes it serves. The harness fits the load-contention model (fit/ps_async.hpp) on the whole table
// once and reports, for configuration c at measured speed X_c, the utilisation of each PS
//   u_c = X_c 2 S / (ps B_ps)
// (the share of its fitted service capacity in use; the closed network's utilisation law, Lazowska
// et al., "Quantitative System Performance", 1984, sec. 3.2: U = X D with demand D = 2 S / B_ps
// per step, spread over ps servers). u_c < 1 whenever X_c is within the model's capacity bound.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_local.hpp>
#include <dnnplan/solve/elastic_advisor/advisor.hpp>
#include <dnnplan/fit/ps_async.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// Measured speeds of one job on one worker type, with the prices (the `--measurements` file).
struct measurement_table {
    std::string gpu{};
    double worker_usd_per_h = 0.0;
    double ps_usd_per_h = 0.0;
    std::vector<configuration_speed> measured{};  ///< each configuration once

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        detail::require_utf8(p + "gpu", gpu);
        detail::require_positive(p + "worker_usd_per_h", worker_usd_per_h);
        detail::require_non_negative(p + "ps_usd_per_h", ps_usd_per_h);
        if (measured.empty()) throw invalid_input(p + "measured", "[]", "at least one measured configuration");
        for (std::size_t i = 0; i < measured.size(); ++i) measured[i].validate(p + "measured[" + std::to_string(i) + "]");
        detail::elastic::require_distinct(measured, p + "measured", [](const configuration_speed& m) { return m.configuration(); });
    }

    [[nodiscard]] std::optional<double> speed(const ps_configuration& c) const {
        for (const auto& m : measured)
            if (m.configuration() == c) return m.steps_per_s;
        return std::nullopt;
    }
    [[nodiscard]] std::vector<ps_configuration> configurations() const {
        std::vector<ps_configuration> out;
        for (const auto& m : measured) out.push_back(m.configuration());
        return out;
    }
    [[nodiscard]] double usd_per_s(const ps_configuration& c) const noexcept {
        return detail::elastic::usd_per_s(c, worker_usd_per_h, ps_usd_per_h);
    }
};

struct replay_options {
    double work_steps = 0.0;             ///< > 0
    std::optional<double> deadline_s{};  ///< none: no deadline (met_deadline is then true)
    double trial_s = 120.0;              ///< a decision every trial_s while the policy has not committed
    double switch_s = 0.0;               ///< time (billed, no progress) to change configuration; the issue's harness: 0
    std::int64_t max_decisions = 100'000;

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        detail::require_positive(p + "work_steps", work_steps);
        if (deadline_s) detail::require_positive(p + "deadline_s", *deadline_s);
        detail::require_positive(p + "trial_s", trial_s);
        detail::require_non_negative(p + "switch_s", switch_s);
        detail::require_at_least(p + "max_decisions", max_decisions, 1);
    }
};

/// What a run has shown the policy: a configuration's speed and its PS CPU use (the proxy).
struct replay_observation {
    configuration_speed measured{};
    double ps_cpu_utilisation = 0.0;
};

/// What a policy sees at a decision.
struct policy_view {
    const measurement_table* table = nullptr;          ///< prices and the configurations (speeds are not for policies)
    std::vector<ps_configuration> configurations{};    ///< the space
    std::vector<replay_observation> observations{};    ///< one per period run so far, in order
    std::optional<ps_configuration> current{};
    double elapsed_s = 0.0;
    double done_steps = 0.0;
    double remaining_steps = 0.0;
    std::optional<double> deadline_left_s{};           ///< may be <= 0 once the deadline has passed
    double trial_s = 0.0;
};

struct policy_decision {
    ps_configuration configuration{};
    bool final = false;  ///< run it until the work is done
    std::string why{};
};

template <class P>
concept elastic_policy = requires(P& p, const policy_view& v) {
    { p(v) } -> std::convertible_to<policy_decision>;
};

struct replay_segment {
    configuration_speed run{};
    double start_s = 0.0;
    double duration_s = 0.0;  ///< including switch_s
    double steps = 0.0;
    double cost_usd = 0.0;
    bool final = false;
    std::string why{};
};

struct replay_report {
    std::vector<configuration_speed> trials{};  ///< the distinct configurations of the trial (not final) periods, in order
    ps_configuration final{};                   ///< the configuration that finished the work
    double time_s = 0.0;
    double cost_usd = 0.0;
    bool met_deadline = true;
    bool decisions_exhausted = false;           ///< max_decisions reached: the last configuration finished the work
    std::vector<replay_segment> segments{};
};

/// The cheapest single configuration of `table` that meets options.deadline_s, chosen with
/// hindsight (no trials): what docs/solvers/elastic_advisor.md measures a policy against. None: no
/// configuration of the table meets the deadline.
struct hindsight_choice {
    ps_configuration configuration{};
    double time_s = 0.0;
    double cost_usd = 0.0;
};

[[nodiscard]] inline std::optional<hindsight_choice> best_with_hindsight(const measurement_table& table,
                                                                         const replay_options& options) {
    table.validate("table");
    options.validate("options");
    std::optional<hindsight_choice> best;
    for (const auto& m : table.measured) {
        const double time = options.work_steps / m.steps_per_s;
        if (options.deadline_s && time > *options.deadline_s) continue;
        const double cost = time * table.usd_per_s(m.configuration());
        if (!best || cost < best->cost_usd) best = hindsight_choice{m.configuration(), time, cost};
    }
    return best;
}

/// The PS CPU proxy of every configuration of `table` (top of this header): u = X 2 S / (ps B_ps)
/// with the load-contention model fitted on the whole table.
[[nodiscard]] inline std::map<ps_configuration, double> ps_cpu_proxy(const measurement_table& table,
                                                                     const ps_async_fit_options& options = {}) {
    table.validate("table");
    std::map<ps_configuration, double> speeds;
    bool contended = false;  // a configuration of 2+ workers: without one the PS limits nothing
    for (const auto& m : table.measured) {
        speeds[m.configuration()] = m.steps_per_s;
        contended = contended || m.workers >= 2;
    }
    std::map<ps_configuration, double> out;
    const auto fit = contended ? detail::elastic::fit_speeds(speeds, options) : std::nullopt;
    for (const auto& [c, x] : speeds)
        out[c] = fit ? detail::elastic::ps_utilisation(x, c.ps, fit->network) : 0.0;
    return out;
}

/// Replays `policy` on `table` (the rules at the top of this header). Throws invalid_input for a bad
/// table or options, and error when the policy asks for a configuration the table does not hold.
template <elastic_policy Policy>
[[nodiscard]] replay_report replay(const measurement_table& table, const replay_options& options, Policy&& policy) {
    table.validate("table");
    options.validate("options");
    const auto proxy = ps_cpu_proxy(table);
    replay_report report;
    policy_view view{.table = &table, .configurations = table.configurations(), .remaining_steps = options.work_steps,
                     .deadline_left_s = options.deadline_s, .trial_s = options.trial_s};
    const auto remaining = [&] { return options.work_steps - view.done_steps; };
    for (std::int64_t decision = 0; remaining() > 0.0; ++decision) {
        policy_decision next;
        const bool exhausted = decision >= options.max_decisions;
        if (exhausted) {
            report.decisions_exhausted = true;
            next = {.configuration = *view.current, .final = true, .why = "max_decisions reached"};
        } else {
            next = policy(std::as_const(view));
        }
        const auto speed = table.speed(next.configuration);
        if (!speed)
            throw error("the policy asked for " + to_string(next.configuration) + ", which the measurement table does not hold");
        const double switching = !view.current || *view.current != next.configuration ? options.switch_s : 0.0;
        const double run_s = next.final ? remaining() / *speed : std::min(options.trial_s, remaining() / *speed);
        replay_segment seg{.run = {next.configuration.ps, next.configuration.workers, *speed},
                           .start_s = view.elapsed_s, .duration_s = switching + run_s,
                           .steps = next.final ? remaining() : std::min(remaining(), *speed * run_s),
                           .final = next.final, .why = std::move(next.why)};
        seg.cost_usd = seg.duration_s * table.usd_per_s(next.configuration);
        view.elapsed_s += seg.duration_s;
        view.done_steps = next.final ? options.work_steps : view.done_steps + seg.steps;
        view.remaining_steps = std::max(0.0, remaining());
        if (options.deadline_s) view.deadline_left_s = *options.deadline_s - view.elapsed_s;
        view.current = next.configuration;
        view.observations.push_back({.measured = seg.run, .ps_cpu_utilisation = proxy.at(next.configuration)});
        report.cost_usd += seg.cost_usd;
        report.segments.push_back(std::move(seg));
        if (next.final) break;
    }
    report.time_s = view.elapsed_s;
    report.final = *view.current;
    for (const auto& s : report.segments)  // the distinct configurations of the trial periods, in order
        if (!s.final && std::none_of(report.trials.begin(), report.trials.end(),
                                     [&](const configuration_speed& t) { return t == s.run; }))
            report.trials.push_back(s.run);
    report.met_deadline = !options.deadline_s || detail::elastic::within_deadline(report.time_s, *options.deadline_s);
    return report;
}

/// The model advisor as a replay policy: each decision is solve() on what the view shows.
struct model_policy {
    elastic_options options{};

    [[nodiscard]] policy_decision operator()(const policy_view& v) const {
        elastic_request r{.job = {.gpu = v.table->gpu, .remaining_steps = v.remaining_steps,
                                  .deadline_s = std::nullopt, .worker_usd_per_h = v.table->worker_usd_per_h,
                                  .ps_usd_per_h = v.table->ps_usd_per_h, .configurations = v.configurations},
                          .current = v.current, .options = options};
        // Past the deadline the job still has to finish: advise as without one.
        if (v.deadline_left_s && *v.deadline_left_s > 0.0) r.job.deadline_s = v.deadline_left_s;
        r.options.trial_s = v.trial_s;
        for (const auto& o : v.observations) r.observations.push_back(o.measured);
        const elastic_result res = solve(r);
        return {.configuration = res.plan->configuration(), .final = res.plan->action == elastic_action::commit, .why = res.plan->why};
    }
};

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
