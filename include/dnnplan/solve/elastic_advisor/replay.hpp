#pragma once
// The replay harness: a table of measured speeds per configuration (measurement_table,
// solve/elastic_advisor/problem.hpp) stands for the cluster; a policy (elastic_policy,
// solve/elastic_advisor/concepts.hpp) sees only the configurations it has run, each for a trial of
// stated length, and the harness accounts the time and the cost. Progress made during trials
// counts toward the work. Two policies run in it (solve/elastic_advisor/policies.hpp): the model
// advisor and DLRover's local optimizer, which reads PS CPU use; a speed table has none, so the
// harness supplies a proxy (below and docs/solvers/elastic_advisor.md, "The PS CPU proxy").
//
// PS CPU proxy: a PS's CPU does the work of moving and applying updates, so its use follows the
// bytes it serves. The harness fits the load-contention model (solve/elastic_advisor/load_model.hpp)
// on the whole table once and reports, for configuration c at measured speed X_c, the utilisation
// of each PS
//   u_c = X_c 2 S / (ps B_ps)
// (the share of its fitted service capacity in use; the closed network's utilisation law, Lazowska
// et al., "Quantitative System Performance", 1984, sec. 3.2: U = X D with demand D = 2 S / B_ps
// per step, spread over ps servers). u_c < 1 whenever X_c is within the model's capacity bound.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/ps_async_types.hpp>
#include <dnnplan/solve/elastic_advisor/concepts.hpp>
#include <dnnplan/solve/elastic_advisor/load_model.hpp>
#include <dnnplan/solve/elastic_advisor/problem.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

struct replay_options {
    double work_steps = 0.0;             ///< > 0
    std::optional<double> deadline_s{};  ///< none: no deadline (met_deadline is then true)
    double trial_s = 120.0;              ///< a decision every trial_s while the policy has not committed
    double switch_s = 0.0;               ///< time (billed, no progress) to change configuration; 0: free, as in the comparison
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
    const auto fit = contended ? std::optional(detail::elastic::fit_load_contention(speeds, options)) : std::nullopt;
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

}  // namespace dnnplan
