#pragma once
// JSON of the elastic advisor (solve/elastic_advisor/). The rules of every JSON header are in
// io/detail/json_core.hpp: unknown keys are errors; "?": optional (absent: the struct's default).
//   ps_configuration:    {"ps", "workers"}
//   configuration_speed: {"ps", "workers", "steps_per_s"}
//   measurement_table:   {"gpu", "worker_usd_per_h", "ps_usd_per_h", "measured": [configuration_speed]}  then validate
//   node_usage:          {"type" ("ps" | "worker" | "chief" | "evaluator" | "master"), "id"?, "cpu_used",
//                         "cpu_requested", "memory_used_mb", "memory_requested_mb"}
//   elastic_record:      {"time_s", "global_step", "speed", "ps", "workers", "nodes"?: [node_usage]}  then validate
//   replay_report:       {"trials": [configuration_speed], "final": ps_configuration, "time_s", "cost_usd",
//                         "met_deadline", "decisions_exhausted"}
//   elastic_result:      the result shape; plan and best_effort {"ps", "workers", "action" ("trial" | "commit"), "why"};
//                        details {"candidates": [{"ps", "workers", "tried", "steps_per_s", "lower", "upper"
//                        (null: unbounded), "time_s", "cost_usd"}], "trials", "model_fitted", "compute_s",
//                        "ps_bandwidth_bytes_per_s", "required_bandwidth_bytes_per_s", "pinned",
//                        "ps_utilisation", "ps_bottleneck"}
// The lines `elastic_advisor advise` prints, one per record (advice_json, dlrover_plan_json):
//   model:   {"policy": "model", "status", "ps", "workers", "action", "why", "predicted_cost_usd"
//             (null while nothing is measured, and for a best-effort plan), "ps_bottleneck"}
//   dlrover: {"policy": "dlrover", "groups": {TYPE: {"count", "cpu", "memory_mb"}},
//             "nodes": {NAME: {"cpu", "memory_mb"}}}

#include <dnnplan/io/core_json.hpp>
#include <dnnplan/io/detail/json_core.hpp>
#include <dnnplan/solve/elastic_advisor/problem.hpp>
#include <dnnplan/solve/elastic_advisor/replay.hpp>
#include <dnnplan/solve/elastic_advisor/runtime_records.hpp>

#include <istream>
#include <string>
#include <string_view>
#include <tuple>

namespace dnnplan::detail::json_io {

template <>
struct json_fields<ps_configuration> {
    static constexpr auto fields = std::tuple{required("ps", &ps_configuration::ps), required("workers", &ps_configuration::workers)};
};

template <>
struct json_fields<configuration_speed> {
    static constexpr auto fields = std::tuple{required("ps", &configuration_speed::ps),
                                              required("workers", &configuration_speed::workers),
                                              required("steps_per_s", &configuration_speed::steps_per_s)};
};

template <>
struct json_fields<measurement_table> {
    static constexpr auto fields = std::tuple{
        required("gpu", &measurement_table::gpu), required("worker_usd_per_h", &measurement_table::worker_usd_per_h),
        required("ps_usd_per_h", &measurement_table::ps_usd_per_h), required("measured", &measurement_table::measured)};
};

template <>
struct json_fields<node_usage> {
    static constexpr auto fields = std::tuple{
        required("type", &node_usage::type),
        optional("id", &node_usage::id),
        required("cpu_used", &node_usage::cpu_used),
        required("cpu_requested", &node_usage::cpu_requested),
        required("memory_used_mb", &node_usage::memory_used_mb),
        required("memory_requested_mb", &node_usage::memory_requested_mb),
    };
};

template <>
struct json_fields<elastic_record> {
    static constexpr auto fields = std::tuple{
        required("time_s", &elastic_record::time_s), required("global_step", &elastic_record::global_step),
        required("speed", &elastic_record::speed),   required("ps", &elastic_record::ps),
        required("workers", &elastic_record::workers), optional("nodes", &elastic_record::nodes),
    };
};

template <>
struct json_fields<replay_report> {
    static constexpr auto fields = std::tuple{
        required("trials", &replay_report::trials),     required("final", &replay_report::final),
        required("time_s", &replay_report::time_s),     required("cost_usd", &replay_report::cost_usd),
        required("met_deadline", &replay_report::met_deadline),
        required("decisions_exhausted", &replay_report::decisions_exhausted),
    };
};

template <>
struct json_fields<elastic_plan> {
    static constexpr auto fields = std::tuple{required("ps", &elastic_plan::ps), required("workers", &elastic_plan::workers),
                                              required("action", &elastic_plan::action), required("why", &elastic_plan::why)};
};

template <>
struct json_fields<elastic_candidate> {
    static constexpr auto fields = std::tuple{
        required("ps", &elastic_candidate::ps),
        required("workers", &elastic_candidate::workers),
        required("tried", &elastic_candidate::tried),
        required("steps_per_s", &elastic_candidate::steps_per_s),
        required("lower", &elastic_candidate::lower),
        unbounded("upper", &elastic_candidate::upper),
        unbounded("time_s", &elastic_candidate::time_s),
        unbounded("cost_usd", &elastic_candidate::cost_usd),
    };
};

template <>
struct json_fields<elastic_details> {
    static constexpr auto fields = std::tuple{
        required("candidates", &elastic_details::candidates),
        required("trials", &elastic_details::trials),
        required("model_fitted", &elastic_details::model_fitted),
        required("compute_s", &elastic_details::compute_s),
        required("ps_bandwidth_bytes_per_s", &elastic_details::ps_bandwidth_bytes_per_s),
        required("required_bandwidth_bytes_per_s", &elastic_details::required_bandwidth_bytes_per_s),
        required("pinned", &elastic_details::pinned),
        required("ps_utilisation", &elastic_details::ps_utilisation),
        required("ps_bottleneck", &elastic_details::ps_bottleneck),
    };
};

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

/// A measurement table (`elastic_advisor replay --measurements`) from JSON text or a stream.
[[nodiscard]] inline measurement_table parse_measurement_table(std::istream& in) { return parse_json<measurement_table>(in); }
[[nodiscard]] inline measurement_table parse_measurement_table(std::string_view text) { return parse_json<measurement_table>(text); }
/// One runtime record: one line of `elastic_advisor advise`'s input.
[[nodiscard]] inline elastic_record parse_elastic_record(std::string_view text) { return parse_json<elastic_record>(text); }

/// The model advisor's plan as `elastic_advisor advise` prints it: the plan to run (the best effort
/// when no plan meets the deadline: result.plan_to_run()) with the result's status.
[[nodiscard]] inline nlohmann::ordered_json advice_json(const elastic_result& r) {
    const elastic_plan& plan = *r.plan_to_run();
    nlohmann::ordered_json j;
    j["policy"] = "model";
    j["status"] = std::string(to_string(r.status));
    j["ps"] = plan.ps;
    j["workers"] = plan.workers;
    j["action"] = std::string(to_string(plan.action));
    j["why"] = plan.why;
    // Null while nothing is measured (the objective is then the first trial's own cost), and for a
    // best_effort plan (it has no objective value: it misses the deadline).
    j["predicted_cost_usd"] = r.details.model_fitted && r.objective_value ? nlohmann::ordered_json(*r.objective_value) : nlohmann::ordered_json();
    j["ps_bottleneck"] = r.details.ps_bottleneck;
    return j;
}

/// DLRover's running-stage plan as `elastic_advisor advise --policy dlrover` prints it.
[[nodiscard]] inline nlohmann::ordered_json dlrover_plan_json(const dlrover::resource_plan& plan) {
    nlohmann::ordered_json groups = nlohmann::ordered_json::object();
    for (const auto& [type, g] : plan.groups)
        groups[std::string(to_string(type))] = {{"count", g.count}, {"cpu", g.resource.cpu}, {"memory_mb", g.resource.memory_mb}};
    nlohmann::ordered_json nodes = nlohmann::ordered_json::object();
    for (const auto& [name, r] : plan.nodes) nodes[name] = {{"cpu", r.cpu}, {"memory_mb", r.memory_mb}};
    nlohmann::ordered_json j;
    j["policy"] = "dlrover";
    j["groups"] = std::move(groups);
    j["nodes"] = std::move(nodes);
    return j;
}

}  // namespace dnnplan
