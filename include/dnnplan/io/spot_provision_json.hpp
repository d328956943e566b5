#pragma once
// JSON of the spot-provisioning planner (solve/spot_provision/problem.hpp) and of the search and model
// layers it composes. The rules of every JSON header are in io/detail/json_core.hpp; "?":
// optional (absent: the struct's default).
//
// The problem file (spot_request):
//   { "catalog":  instance_catalog (io/core_json.hpp),
//     "profile":  {"parameter_bytes", "required_bandwidth_bytes_per_s", "ps_bandwidth_bytes_per_s",
//                  "pcie_bandwidth_bytes_per_s", "per_instance": {NAME: {"per_gpu_batch", "samples_per_s"}},
//                  "contention": {"alpha1", "beta1"}, "loss": {"gamma1", "gamma2", "gamma3", "gamma4"?, "gamma5"}},
//     "goals":    {"target_loss", "deadline_s"},
//     "existing"?: {NAME: count},
//     "options"?:  {"pricing"?, "billing_increment_s"?, "objective"? ("min_cost" | "min_time"),
//                   "method"? ("exact" | "exhaustive" | "sliding_window"), "cap_at_n_upper"?,
//                   "sliding_window"?: {"paper_bounds"?, "wrap_around"?}, "budget"?: search_budget,
//                   "relative_gap"?} }
//   Deprecated spellings of 0.1, still read: "node_budget" (budget.max_nodes), "time_budget_s"
//   (budget.max_time_s), "sliding_window_paper_bounds", "sliding_window_wrap_around", and the
//   objectives "minimize_cost", "minimize_time".
// The result (spot_result, the shape of core/result.hpp):
//   plan: {"counts": [{"name", "count"}] (catalog order), "prediction": cluster_prediction};
//   details: {"fastest_training_time_s": number or null}.
//   cluster_prediction: {"workers", "training_time_s", "cost_usd", "normalized_iterations", "wa_batch",
//     "convergence_coefficient", "samples_per_s", "iterations_per_s", "expected_iteration_time_s",
//     "usd_per_h", "billed_s"}
// The search and model layers (types indexed by position, not by name):
//   cluster_space:          {"lower", "upper", "min_workers"?, "max_workers"? (null: no cap)}   then validate
//   cluster_goals:          {"target_loss", "deadline_s"? (null: none), "objective"?}
//   exact_options:          {"budget"?, "relative_gap"?}                                          then validate
//   sliding_window_options: {"paper_bounds"?, "n_upper"? (null: none), "wrap_around"?}
//   search_outcome:         the result shape, plan {"counts": [count], "prediction"}
//   affine_in_batch:        {"intercept", "slope"}
//   ps_network:             {"parameter_bytes", "required_bandwidth_bytes_per_s", "ps_bandwidth_bytes_per_s",
//                            "pcie_bandwidth_bytes_per_s", "contention"}                         then validate
//   ps_worker_type:         {"gpus", "worker_batch", "compute_s"}
//   measured_worker_type:   {"name", "gpus", "worker_batch", "samples_per_s"}
//   batch_memory_fit:       {"alpha2_samples_per_byte", "beta2_samples"}

#include <dnnplan/io/core_json.hpp>
#include <dnnplan/io/detail/json_core.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/convergence.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>
#include <dnnplan/model/memory.hpp>
#include <dnnplan/solve/spot_provision/cluster_space.hpp>
#include <dnnplan/solve/spot_provision/exact.hpp>
#include <dnnplan/solve/spot_provision/outcome.hpp>
#include <dnnplan/solve/spot_provision/sliding_window.hpp>
#include <dnnplan/solve/spot_provision/problem.hpp>

#include <istream>
#include <string_view>
#include <tuple>

namespace dnnplan::detail::json_io {

template <>
struct json_fields<instance_profile> {
    static constexpr auto fields = std::tuple{
        required("per_gpu_batch", &instance_profile::per_gpu_batch),
        required("samples_per_s", &instance_profile::samples_per_s),
    };
};

template <>
struct json_fields<contention_coefficients> {
    static constexpr auto fields = std::tuple{
        required("alpha1", &contention_coefficients::alpha1),
        required("beta1", &contention_coefficients::beta1),
    };
};

template <>
struct json_fields<loss_coefficients> {
    static constexpr auto fields = std::tuple{
        required("gamma1", &loss_coefficients::gamma1), required("gamma2", &loss_coefficients::gamma2),
        required("gamma3", &loss_coefficients::gamma3), optional("gamma4", &loss_coefficients::gamma4),
        required("gamma5", &loss_coefficients::gamma5),
    };
};

template <>
struct json_fields<workload_profile> {
    static constexpr auto fields = std::tuple{
        required("parameter_bytes", &workload_profile::parameter_bytes),
        required("required_bandwidth_bytes_per_s", &workload_profile::required_bandwidth_bytes_per_s),
        required("ps_bandwidth_bytes_per_s", &workload_profile::ps_bandwidth_bytes_per_s),
        required("pcie_bandwidth_bytes_per_s", &workload_profile::pcie_bandwidth_bytes_per_s),
        required("per_instance", &workload_profile::per_instance),
        required("contention", &workload_profile::contention),
        required("loss", &workload_profile::loss),
    };
};

template <>
struct json_fields<training_goals> {
    static constexpr auto fields = std::tuple{
        required("target_loss", &training_goals::target_loss),
        required("deadline_s", &training_goals::deadline_s),
    };
};

template <>
struct json_fields<spot_sliding_window> {
    static constexpr auto fields = std::tuple{
        optional("paper_bounds", &spot_sliding_window::paper_bounds),
        optional("wrap_around", &spot_sliding_window::wrap_around),
    };
};

template <>
struct json_fields<spot_options> {
    static constexpr auto fields = std::tuple{
        optional("pricing", &spot_options::pricing),
        optional("billing_increment_s", &spot_options::billing_increment_s),
        optional("objective", &spot_options::objective),
        optional("method", &spot_options::method),
        optional("cap_at_n_upper", &spot_options::cap_at_n_upper),
        optional("sliding_window", &spot_options::sliding_window),
        optional("budget", &spot_options::budget),
        optional("relative_gap", &spot_options::relative_gap),
        deprecated("node_budget", &spot_options::budget, &search_budget::max_nodes, "budget"),
        deprecated("time_budget_s", &spot_options::budget, &search_budget::max_time_s, "budget"),
        deprecated("sliding_window_paper_bounds", &spot_options::sliding_window, &spot_sliding_window::paper_bounds,
                   "sliding_window"),
        deprecated("sliding_window_wrap_around", &spot_options::sliding_window, &spot_sliding_window::wrap_around,
                   "sliding_window"),
    };
};

template <>
struct json_fields<spot_problem> {
    static constexpr auto fields = std::tuple{
        required("catalog", &spot_problem::catalog),
        required("profile", &spot_problem::profile),
        required("goals", &spot_problem::goals),
        optional("existing", &spot_problem::existing),
    };
};

template <>
struct json_fields<spot_request> {
    static constexpr auto fields = std::tuple{
        required("catalog", &spot_request::problem, &spot_problem::catalog),
        required("profile", &spot_request::problem, &spot_problem::profile),
        required("goals", &spot_request::problem, &spot_problem::goals),
        optional("existing", &spot_request::problem, &spot_problem::existing),
        optional("options", &spot_request::options),
    };
};

template <>
struct json_fields<type_count> {
    static constexpr auto fields = std::tuple{required("name", &type_count::name), required("count", &type_count::count)};
};

template <>
struct json_fields<cluster_prediction> {
    static constexpr auto fields = std::tuple{
        required("workers", &cluster_prediction::workers),
        required("training_time_s", &cluster_prediction::training_time_s),
        required("cost_usd", &cluster_prediction::cost_usd),
        required("normalized_iterations", &cluster_prediction::normalized_iterations),
        required("wa_batch", &cluster_prediction::wa_batch),
        required("convergence_coefficient", &cluster_prediction::convergence_coefficient),
        required("samples_per_s", &cluster_prediction::samples_per_s),
        required("iterations_per_s", &cluster_prediction::iterations_per_s),
        required("expected_iteration_time_s", &cluster_prediction::expected_iteration_time_s),
        required("usd_per_h", &cluster_prediction::usd_per_h),
        required("billed_s", &cluster_prediction::billed_s),
    };
};

template <>
struct json_fields<spot_plan> {
    static constexpr auto fields = std::tuple{required("counts", &spot_plan::counts), required("prediction", &spot_plan::prediction)};
};

template <>
struct json_fields<cluster_search_details> {
    static constexpr auto fields = std::tuple{required("fastest_training_time_s", &cluster_search_details::fastest_training_time_s)};
};

template <>
struct json_fields<cluster_plan> {
    static constexpr auto fields = std::tuple{required("counts", &cluster_plan::counts), required("prediction", &cluster_plan::prediction)};
};

template <>
struct json_fields<cluster_space> {
    static constexpr auto fields = std::tuple{
        required("lower", &cluster_space::lower),
        required("upper", &cluster_space::upper),
        optional("min_workers", &cluster_space::min_workers),
        unbounded("max_workers", &cluster_space::max_workers),
    };
};

template <>
struct json_fields<cluster_goals> {
    static constexpr auto fields = std::tuple{
        required("target_loss", &cluster_goals::target_loss),
        unbounded("deadline_s", &cluster_goals::deadline_s),
        optional("objective", &cluster_goals::objective),
    };
};

template <>
struct json_fields<exact_options> {
    static constexpr auto fields = std::tuple{optional("budget", &exact_options::budget),
                                              optional("relative_gap", &exact_options::relative_gap)};
};

template <>
struct json_fields<sliding_window_options> {
    static constexpr auto fields = std::tuple{
        optional("paper_bounds", &sliding_window_options::paper_bounds),
        optional("n_upper", &sliding_window_options::n_upper),
        optional("wrap_around", &sliding_window_options::wrap_around),
    };
};

template <>
struct json_fields<affine_in_batch> {
    static constexpr auto fields = std::tuple{required("intercept", &affine_in_batch::intercept),
                                              required("slope", &affine_in_batch::slope)};
};

template <>
struct json_fields<ps_network> {
    static constexpr auto fields = std::tuple{
        required("parameter_bytes", &ps_network::parameter_bytes),
        required("required_bandwidth_bytes_per_s", &ps_network::required_bandwidth_bytes_per_s),
        required("ps_bandwidth_bytes_per_s", &ps_network::ps_bandwidth_bytes_per_s),
        required("pcie_bandwidth_bytes_per_s", &ps_network::pcie_bandwidth_bytes_per_s),
        required("contention", &ps_network::contention),
    };
};

template <>
struct json_fields<ps_worker_type> {
    static constexpr auto fields = std::tuple{required("gpus", &ps_worker_type::gpus),
                                              required("worker_batch", &ps_worker_type::worker_batch),
                                              required("compute_s", &ps_worker_type::compute_s)};
};

template <>
struct json_fields<measured_worker_type> {
    static constexpr auto fields = std::tuple{
        required("name", &measured_worker_type::name), required("gpus", &measured_worker_type::gpus),
        required("worker_batch", &measured_worker_type::worker_batch),
        required("samples_per_s", &measured_worker_type::samples_per_s)};
};

template <>
struct json_fields<batch_memory_fit> {
    static constexpr auto fields = std::tuple{required("alpha2_samples_per_byte", &batch_memory_fit::alpha2_samples_per_byte),
                                              required("beta2_samples", &batch_memory_fit::beta2_samples)};
};

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

/// Reads a problem file. Malformed JSON: parse_error("byte N", ...); anything else wrong:
/// invalid_input naming the field.
[[nodiscard]] inline spot_request parse_spot_request(std::istream& in) { return parse_json<spot_request>(in); }
[[nodiscard]] inline spot_request parse_spot_request(std::string_view text) { return parse_json<spot_request>(text); }

/// Reads a result written by to_json_text().
[[nodiscard]] inline spot_result parse_spot_result(std::istream& in) { return parse_json<spot_result>(in); }
[[nodiscard]] inline spot_result parse_spot_result(std::string_view text) { return parse_json<spot_result>(text); }

}  // namespace dnnplan
