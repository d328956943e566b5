#pragma once
// JSON of the vocabulary every planner shares: the instance catalog, search budgets and
// counters, and the one result shape (core/result.hpp):
//   instance_type:    {"name", "gpus", "quota", "spot_usd_per_h", "on_demand_usd_per_h",
//                      "gpu_memory_bytes"? (null: absent)}
//   instance_catalog: {"instances": [instance_type], "parameter_server_usd_per_h"?}   then validate
//   affine_time:      {"fixed_s", "per_sample_s"} (0.1 files: "alpha_c_s", "beta_c_s")       then validate
//   search_budget:    {"max_nodes"?, "max_evaluations"?, "max_time_s"?} (0: no limit)  then validate
//   search_counters:  {"nodes", "evaluations", "pruned_by_bound", "pruned_by_constraint", "elapsed_s"}
//   figure_estimate:  {"lower", "upper" (null: +inf), "confidence_prob", "samples"}
//   solve_result:     {"status", "limit", "figures", "estimate": figure_estimate or null, "reason",
//                      "plan": Plan or null, "objective_value": number or null,
//                      "bound": number or null (null: nothing proven), "best_effort": Plan or null,
//                      "counters", "details"?} ("details" only for planners that have any); read
//                     only when it keeps the rules of result_shape_violation (core/result.hpp).
// The rules of every JSON header are in io/detail/json_core.hpp.

#include <dnnplan/core/affine_time.hpp>
#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/io/detail/json_core.hpp>

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace dnnplan::detail::json_io {

template <>
struct json_fields<instance_type> {
    static constexpr auto fields = std::tuple{
        required("name", &instance_type::name),
        required("gpus", &instance_type::gpus),
        required("quota", &instance_type::quota),
        required("spot_usd_per_h", &instance_type::spot_usd_per_h),
        required("on_demand_usd_per_h", &instance_type::on_demand_usd_per_h),
        optional("gpu_memory_bytes", &instance_type::gpu_memory_bytes),
    };
};

template <>
struct json_fields<instance_catalog> {
    static constexpr auto fields = std::tuple{
        required("instances", &instance_catalog::instances),
        optional("parameter_server_usd_per_h", &instance_catalog::parameter_server_usd_per_h),
    };
};

template <>
struct json_fields<affine_time> {
    static constexpr auto fields = std::tuple{
        required("fixed_s", &affine_time::fixed_s).formerly("alpha_c_s"),
        required("per_sample_s", &affine_time::per_sample_s).formerly("beta_c_s"),
    };
};

template <>
struct json_fields<search_budget> {
    static constexpr auto fields = std::tuple{
        optional("max_nodes", &search_budget::max_nodes),
        optional("max_evaluations", &search_budget::max_evaluations),
        optional("max_time_s", &search_budget::max_time_s),
    };
};

template <>
struct json_fields<search_counters> {
    static constexpr auto fields = std::tuple{
        required("nodes", &search_counters::nodes),
        required("evaluations", &search_counters::evaluations),
        required("pruned_by_bound", &search_counters::pruned_by_bound),
        required("pruned_by_constraint", &search_counters::pruned_by_constraint),
        required("elapsed_s", &search_counters::elapsed_s),
    };
};

template <>
struct json_fields<figure_estimate> {
    static constexpr auto fields = std::tuple{
        required("lower", &figure_estimate::lower),
        unbounded("upper", &figure_estimate::upper),  // null: +inf (nothing bounds the figure on that side)
        required("confidence_prob", &figure_estimate::confidence_prob),
        required("samples", &figure_estimate::samples),
    };
};

template <class T>
struct is_solve_result : std::false_type {};
template <class Plan, class Details>
struct is_solve_result<solve_result<Plan, Details>> : std::true_type {};

template <document Json, class Plan, class Details>
void read_value(tag, const Json& j, const std::string& path, solve_result<Plan, Details>& out) {
    constexpr bool with_details = !std::is_same_v<Details, no_details>;
    static constexpr std::array<std::string_view, 11> all_keys{
        "status", "limit", "figures", "estimate", "reason", "plan", "objective_value", "bound", "best_effort", "counters", "details"};
    const object_reader<Json> in(j, path, std::span<const std::string_view>(all_keys.data(), with_details ? 11 : 10));
    in.required("status", out.status);
    in.required("limit", out.limit);
    in.required("figures", out.figures);
    in.required("estimate", out.estimate);
    in.required("reason", out.reason);
    in.required("plan", out.plan);
    in.required("objective_value", out.objective_value);
    in.required("bound", out.bound);
    in.required("best_effort", out.best_effort);
    in.required("counters", out.counters);
    if constexpr (with_details) in.required("details", out.details);
    if (const result_violation broken = result_shape_violation(out))
        fail(in.path_of(broken.field), value_text(in.at(broken.field, "")), broken.rule + " (the one result shape)");
}

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

/// Built in a local and assigned once: `nlohmann::json j = r;` runs this inside j's constructor,
/// and a write that throws (a non-finite number) would leave a half-built j whose destructor
/// never runs (nlohmann/json 3.11, basic_json's converting constructor): a leak.
template <detail::json_io::document Json, class Plan, class Details>
void to_json(Json& j, const solve_result<Plan, Details>& r) {
    using namespace detail::json_io;
    Json out = Json::object();
    out["status"] = std::string(to_string(r.status));
    out["limit"] = std::string(to_string(r.limit));
    out["figures"] = std::string(to_string(r.figures));
    out["estimate"] = write_value<Json>(r.estimate, "estimate");
    out["reason"] = r.reason;
    out["plan"] = write_value<Json>(r.plan, "plan");
    out["objective_value"] = write_value<Json>(r.objective_value, "objective_value");
    out["bound"] = write_value<Json>(r.bound, "bound");
    out["best_effort"] = write_value<Json>(r.best_effort, "best_effort");
    out["counters"] = write_value<Json>(r.counters, "counters");
    if constexpr (!std::is_same_v<Details, no_details>) out["details"] = write_value<Json>(r.details, "details");
    j = std::move(out);
}

template <detail::json_io::document Json, class Plan, class Details>
void from_json(const Json& j, solve_result<Plan, Details>& out) {
    detail::json_io::read_root(j, out);
}

}  // namespace dnnplan
