#pragma once
// JSON of the VM recommender (solve/vm_recommend/problem.hpp, solve/vm_recommend/request.hpp). The rules of every
// JSON header are in io/detail/json_core.hpp; "?": optional (absent: the struct's default).
//   vm_work:          {"samples"?, "epochs"?, "dataset_samples"?}                        then validate
//   vm_constraints:   {"max_usd_per_h"? (null: no budget), "min_samples_per_s"?, "deadline_s"? (null:
//                      none), "max_instances"?, "max_distinct_types"?, "allowed_types"? [name],
//                      "allowed_price_kinds"? [price_kind]} (their rules are checked inside a problem)
//   vm_problem:       {"catalog", "work"?, "constraints"?, "objective"? ("min_cost" | "max_throughput" |
//                      "max_samples_per_usd")}                                            then validate
//   vm_options:       {"method"? ("exact" | "exhaustive"; 0.1: "branch_and_bound"), "pareto"?,
//                      "budget"?: search_budget, "relative_gap"?} (0.1: "node_budget",
//                      "evaluation_budget")                                               then validate
//   ring_allreduce:   {"parameter_bytes", "intra_node_bytes_per_s", "inter_node_bytes_per_s", "latency_s"?}
//   sync_network:     {"alpha_n_s", "beta_n_s", "alpha_r_s", "beta_r_s", "gamma", "delta_n_s"?}
//   sync_vm_workload: {"gpu_types": {GPU: affine_time}, "instance_gpu_types": {INSTANCE: GPU},
//                      "network": sync_network, "ring"? (null: none), "policy"? ("equal" | "balanced"),
//                      "basis"? ("per_replica" | "global"), "batch", "accumulation_steps"?}
//   vm_request:       the members of vm_problem side by side with "workload" and "options"?:
//                     {"catalog", "work"?, "constraints"?, "objective"?, "workload", "options"?}
//                                                                                        then validate
//   vm_result:        the result shape; plan vm_configuration {"offers": [{"type", "kind", "count"}],
//                     "figures": {"instances", "gpus", "samples_per_s", "usd_per_h", "samples_per_usd",
//                     "time_s" (null: no work), "cost_usd" (null: no work)}}; details {"method",
//                     "frontier": [vm_configuration], "frontier_status" (null: not asked),
//                     "frontier_limit", "frontier_counters"}

#include <dnnplan/io/core_json.hpp>
#include <dnnplan/io/detail/json_core.hpp>
#include <dnnplan/solve/vm_recommend/problem.hpp>
#include <dnnplan/solve/vm_recommend/request.hpp>

#include <istream>
#include <string_view>
#include <tuple>

namespace dnnplan::detail::json_io {

template <>
struct json_fields<vm_work> {
    static constexpr auto fields = std::tuple{optional("samples", &vm_work::samples), optional("epochs", &vm_work::epochs),
                                              optional("dataset_samples", &vm_work::dataset_samples)};
};

template <>
struct json_fields<vm_constraints> {
    static constexpr auto fields = std::tuple{
        unbounded("max_usd_per_h", &vm_constraints::max_usd_per_h),
        optional("min_samples_per_s", &vm_constraints::min_samples_per_s),
        unbounded("deadline_s", &vm_constraints::deadline_s),
        optional("max_instances", &vm_constraints::max_instances),
        optional("max_distinct_types", &vm_constraints::max_distinct_types),
        optional("allowed_types", &vm_constraints::allowed_types),
        optional("allowed_price_kinds", &vm_constraints::allowed_price_kinds),
    };
};

template <>
struct json_fields<vm_problem> {
    static constexpr auto fields = std::tuple{
        required("catalog", &vm_problem::catalog),
        optional("work", &vm_problem::work),
        optional("constraints", &vm_problem::constraints),
        optional("objective", &vm_problem::objective),
    };
};

template <>
struct json_fields<vm_options> {
    static constexpr auto fields = std::tuple{
        optional("method", &vm_options::method),
        optional("pareto", &vm_options::pareto),
        optional("budget", &vm_options::budget),
        optional("relative_gap", &vm_options::relative_gap),
        deprecated("node_budget", &vm_options::budget, &search_budget::max_nodes, "budget"),
        deprecated("evaluation_budget", &vm_options::budget, &search_budget::max_evaluations, "budget"),
    };
};

template <>
struct json_fields<ring_allreduce> {
    static constexpr auto fields = std::tuple{
        required("parameter_bytes", &ring_allreduce::parameter_bytes),
        required("intra_node_bytes_per_s", &ring_allreduce::intra_node_bytes_per_s),
        required("inter_node_bytes_per_s", &ring_allreduce::inter_node_bytes_per_s),
        optional("latency_s", &ring_allreduce::latency_s),
    };
};

template <>
struct json_fields<sync_network> {
    static constexpr auto fields = std::tuple{
        required("alpha_n_s", &sync_network::alpha_n_s), required("beta_n_s", &sync_network::beta_n_s),
        required("alpha_r_s", &sync_network::alpha_r_s), required("beta_r_s", &sync_network::beta_r_s),
        required("gamma", &sync_network::gamma),         optional("delta_n_s", &sync_network::delta_n_s),
    };
};

template <>
struct json_fields<sync_vm_workload> {
    static constexpr auto fields = std::tuple{
        required("gpu_types", &sync_vm_workload::gpu_types),
        required("instance_gpu_types", &sync_vm_workload::instance_gpu_types),
        required("network", &sync_vm_workload::network),
        optional("ring", &sync_vm_workload::ring),
        optional("policy", &sync_vm_workload::policy),
        optional("basis", &sync_vm_workload::basis),
        required("batch", &sync_vm_workload::batch),
        optional("accumulation_steps", &sync_vm_workload::accumulation_steps),
    };
};

template <>
struct json_fields<vm_request> {
    static constexpr auto fields = std::tuple{
        required("catalog", &vm_request::problem, &vm_problem::catalog),
        optional("work", &vm_request::problem, &vm_problem::work),
        optional("constraints", &vm_request::problem, &vm_problem::constraints),
        optional("objective", &vm_request::problem, &vm_problem::objective),
        required("workload", &vm_request::workload),
        optional("options", &vm_request::options),
    };
};

template <>
struct json_fields<vm_offer_count> {
    static constexpr auto fields = std::tuple{required("type", &vm_offer_count::type), required("kind", &vm_offer_count::kind),
                                              required("count", &vm_offer_count::count)};
};

template <>
struct json_fields<vm_figures> {
    static constexpr auto fields = std::tuple{
        required("instances", &vm_figures::instances), required("gpus", &vm_figures::gpus),
        required("samples_per_s", &vm_figures::samples_per_s), required("usd_per_h", &vm_figures::usd_per_h),
        required("samples_per_usd", &vm_figures::samples_per_usd), required("time_s", &vm_figures::time_s),
        required("cost_usd", &vm_figures::cost_usd),
    };
};

template <>
struct json_fields<vm_configuration> {
    static constexpr auto fields = std::tuple{required("offers", &vm_configuration::offers),
                                              required("figures", &vm_configuration::figures)};
};

template <>
struct json_fields<vm_details> {
    static constexpr auto fields = std::tuple{
        required("method", &vm_details::method), required("frontier", &vm_details::frontier),
        required("frontier_status", &vm_details::frontier_status), required("frontier_limit", &vm_details::frontier_limit),
        required("frontier_counters", &vm_details::frontier_counters),
    };
};

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

/// Reads a problem file. Malformed JSON: parse_error("byte N", ...); anything else wrong:
/// invalid_input naming the field.
[[nodiscard]] inline vm_request parse_vm_request(std::istream& in) { return parse_json<vm_request>(in); }
[[nodiscard]] inline vm_request parse_vm_request(std::string_view text) { return parse_json<vm_request>(text); }

[[nodiscard]] inline vm_result parse_vm_result(std::istream& in) { return parse_json<vm_result>(in); }
[[nodiscard]] inline vm_result parse_vm_result(std::string_view text) { return parse_json<vm_result>(text); }

}  // namespace dnnplan
