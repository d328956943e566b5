#pragma once
// JSON of the hybrid-parallel planner on serverless containers (solve/hybrid_plan/solve.hpp). The
// rules of every JSON header are in io/detail/json_core.hpp; "?": optional (absent: the struct's
// default).
//   container_type:    {"name", "gpu_type", "gpus", "vcpus", "memory_gib", "gpu_usd_per_s",
//                       "vcpu_usd_per_s", "gib_usd_per_s", "max_containers", "gpu_memory_bytes"?,
//                       "network_bandwidth_bytes_per_s"?, "speed_ratio"?}                 then validate
//   container_catalog: {"containers": [container_type]}                                 then validate
//   hybrid_problem:    {"profiles": [batch_profile], "catalog", "max_workers", "global_batch_sizes"}
//                                                                                        then validate
//   hybrid_options:    {"objective"? ("max_samples_per_usd" | "max_throughput" | "min_cost"; 0.1:
//                       "max_samples_per_s", "min_usd_per_h"), "budget_usd_per_h"? (null: no
//                       budget), "target_samples_per_s"?, "max_micro_batches"?, "max_stages"?,
//                       "sync_overlap_ratio"?, "optimizer_state_ratio"?, "budget"?}       then validate
//   hybrid_request:    the members of hybrid_problem side by side with "options"?: {"profiles", "catalog",
//                       "max_workers", "global_batch_sizes", "options"?}                  then validate
//   hybrid_result:     the result shape; plan {"container", "containers", "workers",
//                       "global_batch_size", "micro_batch_size", "micro_batches", "time_per_minibatch_s",
//                       "samples_per_s", "usd_per_h", "samples_per_usd", "stages": [{"first_state",
//                       "end_state", "replicas", "layers", "figures": stage_breakdown}]}
//   layer_move:        {"layer", "id", "from_stage" (null: in no stage), "to_stage" (null), "bytes"}
//   replan_result:     {"result": hybrid_result, "moves", "bytes_in_by_stage", "bytes_out_by_stage",
//                       "bytes_moved"}

#include <dnnplan/io/core_json.hpp>
#include <dnnplan/io/detail/json_core.hpp>
#include <dnnplan/io/pipeline_plan_json.hpp>
#include <dnnplan/solve/hybrid_plan/solve.hpp>

#include <istream>
#include <string_view>
#include <tuple>

namespace dnnplan::detail::json_io {

template <>
struct json_fields<container_type> {
    static constexpr auto fields = std::tuple{
        required("name", &container_type::name),
        required("gpu_type", &container_type::gpu_type),
        required("gpus", &container_type::gpus),
        required("vcpus", &container_type::vcpus),
        required("memory_gib", &container_type::memory_gib),
        required("gpu_usd_per_s", &container_type::gpu_usd_per_s),
        required("vcpu_usd_per_s", &container_type::vcpu_usd_per_s),
        required("gib_usd_per_s", &container_type::gib_usd_per_s),
        required("max_containers", &container_type::max_containers),
        optional("gpu_memory_bytes", &container_type::gpu_memory_bytes),
        optional("network_bandwidth_bytes_per_s", &container_type::network_bandwidth_bytes_per_s),
        optional("speed_ratio", &container_type::speed_ratio),
    };
};

template <>
struct json_fields<container_catalog> {
    static constexpr auto fields = std::tuple{required("containers", &container_catalog::containers)};
};

template <>
struct json_fields<hybrid_problem> {
    static constexpr auto fields = std::tuple{
        required("profiles", &hybrid_problem::profiles),
        required("catalog", &hybrid_problem::catalog),
        required("max_workers", &hybrid_problem::max_workers),
        required("global_batch_sizes", &hybrid_problem::global_batch_sizes),
    };
};

template <>
struct json_fields<hybrid_options> {
    static constexpr auto fields = std::tuple{
        optional("objective", &hybrid_options::objective),
        unbounded("budget_usd_per_h", &hybrid_options::budget_usd_per_h),
        optional("target_samples_per_s", &hybrid_options::target_samples_per_s),
        optional("max_micro_batches", &hybrid_options::max_micro_batches),
        optional("max_stages", &hybrid_options::max_stages),
        optional("sync_overlap_ratio", &hybrid_options::sync_overlap_ratio),
        optional("optimizer_state_ratio", &hybrid_options::optimizer_state_ratio),
        optional("budget", &hybrid_options::budget),
    };
};

template <>
struct json_fields<hybrid_request> {
    static constexpr auto fields = std::tuple{
        required("profiles", &hybrid_request::problem, &hybrid_problem::profiles),
        required("catalog", &hybrid_request::problem, &hybrid_problem::catalog),
        required("max_workers", &hybrid_request::problem, &hybrid_problem::max_workers),
        required("global_batch_sizes", &hybrid_request::problem, &hybrid_problem::global_batch_sizes),
        optional("options", &hybrid_request::options),
    };
};

template <>
struct json_fields<hybrid_stage> {
    static constexpr auto fields = std::tuple{
        required("first_state", &hybrid_stage::first_state), required("end_state", &hybrid_stage::end_state),
        required("replicas", &hybrid_stage::replicas), required("layers", &hybrid_stage::layers),
        required("figures", &hybrid_stage::figures),
    };
};

template <>
struct json_fields<hybrid_plan> {
    static constexpr auto fields = std::tuple{
        required("container", &hybrid_plan::container),
        required("containers", &hybrid_plan::containers),
        required("workers", &hybrid_plan::workers),
        required("global_batch_size", &hybrid_plan::global_batch_size),
        required("micro_batch_size", &hybrid_plan::micro_batch_size),
        required("micro_batches", &hybrid_plan::micro_batches),
        required("time_per_minibatch_s", &hybrid_plan::time_per_minibatch_s),
        required("samples_per_s", &hybrid_plan::samples_per_s),
        required("usd_per_h", &hybrid_plan::usd_per_h),
        required("samples_per_usd", &hybrid_plan::samples_per_usd),
        required("stages", &hybrid_plan::stages),
    };
};

template <>
struct json_fields<layer_move> {
    static constexpr auto fields = std::tuple{
        required("layer", &layer_move::layer), required("id", &layer_move::id),
        required("from_stage", &layer_move::from_stage), required("to_stage", &layer_move::to_stage),
        required("bytes", &layer_move::bytes),
    };
};

template <>
struct json_fields<replan_result> {
    static constexpr auto fields = std::tuple{
        required("result", &replan_result::result),
        required("moves", &replan_result::moves),
        required("bytes_in_by_stage", &replan_result::bytes_in_by_stage),
        required("bytes_out_by_stage", &replan_result::bytes_out_by_stage),
        required("bytes_moved", &replan_result::bytes_moved),
    };
};

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

/// A container catalog file. Malformed JSON: parse_error("byte N", ...); anything else wrong:
/// invalid_input naming the field ("containers[1].gpus").
[[nodiscard]] inline container_catalog parse_container_catalog(std::istream& in) { return parse_json<container_catalog>(in); }
[[nodiscard]] inline container_catalog parse_container_catalog(std::string_view text) {
    return parse_json<container_catalog>(text);
}

}  // namespace dnnplan
