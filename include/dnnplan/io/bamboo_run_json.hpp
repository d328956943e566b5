#pragma once
// The documents of Bamboo's simulation (preemption/bamboo_simulator.hpp, bamboo_seeds.hpp) as
// `resilience_plan simulate --json` prints them, built here so that the command line and the
// Python module (dnnplan.bamboo_simulate, dnnplan.bamboo_sweep) print the same ones:
//   one run:    {"status", "reason"? (when the run gave one), "preemptions", "fatal_failures",
//                "steps", "average_instances", "samples_per_s", "usd_per_h", "value",
//                "on_demand_samples_per_s", "on_demand_usd_per_h", "on_demand_value"}
//   seed range: {"workload", "removal_probability", "seeds": [first, last], "runs", "completed",
//                "mean": {FIGURE: number | null}, "interval_95": {FIGURE: [lower, upper] | null},
//                "per_seed": [{"seed", ...one run's keys}]}
// FIGURE: the names of bamboo_figures, in their order; null: no completed run (mean), fewer than
// two (interval).

#include <dnnplan/io/detail/json_core.hpp>
#include <dnnplan/preemption/bamboo_seeds.hpp>
#include <dnnplan/preemption/bamboo_simulator.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace dnnplan {

/// One run's figures under the keys of Bamboo's output.
[[nodiscard]] inline nlohmann::ordered_json bamboo_run_json(const bamboo_run& r) {
    nlohmann::ordered_json j;
    j["status"] = std::string(to_string(r.status));
    if (!r.reason.empty()) j["reason"] = r.reason;
    j["preemptions"] = r.preemptions;
    j["fatal_failures"] = r.fatal_failures;
    j["steps"] = r.steps;
    j["average_instances"] = r.average_instances;
    j["samples_per_s"] = r.samples_per_s;
    j["usd_per_h"] = r.usd_per_h;
    j["value"] = r.value;
    j["on_demand_samples_per_s"] = r.on_demand_samples_per_s;
    j["on_demand_usd_per_h"] = r.on_demand_usd_per_h;
    j["on_demand_value"] = r.on_demand_value;
    return j;
}

/// Bamboo's random mode over the seeds first..last (simulate_bamboo_seeds' summary) of a
/// workload at a removal probability.
[[nodiscard]] inline nlohmann::ordered_json bamboo_seeds_json(const bamboo_seed_summary& summary, const std::string& workload,
                                                              double removal_probability, std::uint64_t first_seed, std::uint64_t last_seed) {
    nlohmann::ordered_json mean, interval;
    for (std::size_t f = 0; f < bamboo_figures.size(); ++f) {
        const std::string key(bamboo_figures[f].name);
        const run_figure_summary& s = summary.figures[f];
        mean[key] = s.mean ? nlohmann::ordered_json(*s.mean) : nlohmann::ordered_json();
        interval[key] = s.lower ? nlohmann::ordered_json{*s.lower, *s.upper} : nlohmann::ordered_json();
    }
    nlohmann::ordered_json per_seed = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < summary.runs.size(); ++i) {
        nlohmann::ordered_json row{{"seed", first_seed + i}};
        const nlohmann::ordered_json run = bamboo_run_json(summary.runs[i]);
        for (auto it = run.begin(); it != run.end(); ++it) row[it.key()] = it.value();
        per_seed.push_back(std::move(row));
    }
    nlohmann::ordered_json out;
    out["workload"] = workload;
    out["removal_probability"] = removal_probability;
    out["seeds"] = {first_seed, last_seed};
    out["runs"] = summary.runs.size();
    out["completed"] = summary.completed;
    out["mean"] = std::move(mean);
    out["interval_95"] = std::move(interval);
    out["per_seed"] = std::move(per_seed);
    return out;
}

}  // namespace dnnplan
