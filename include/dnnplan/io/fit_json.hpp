#pragma once
// JSON of the fitted models (fit/): what `fit_model fit` writes and `fit_model predict` reads
// back, and the clusters file of the asynchronous fit. The rules of every JSON header are in
// io/detail/json_core.hpp; "?": optional (absent: the struct's default).
//   pollux_params:       {"alpha_c_s", "beta_c_s", "alpha_n_s", "beta_n_s", "alpha_r_s", "beta_r_s",
//                         "gamma", "delta_n_s"? (0), "batch_exponent"? (1)}               then validate
//   fit_quality:         {"samples", "rmse", "median_ape_ratio", "p90_ape_ratio", "r_squared" (null:
//                         undefined, every observation equal)}
//   sync_fit_result:     {"model"?: "sync-data-parallel", "variant"? ("pollux" | "node-term" |
//                         "batch-power" | "node-term+batch-power"), "params", "pinned": [name],
//                         "quality", "covariance": [[P numbers] x P] (P = 7, 8 or 9 by variant),
//                         "residual_variance" (null: +inf), "degrees_of_freedom" (an integer, may
//                         be negative), "status": "converged" | "max_iterations", "iterations"}
//                                                                                        then validate
//   ps_cluster_set:      {"per_worker_batch", "parameter_bytes"?, "samples": [{"counts": {NAME:
//                         count}, "iterations_per_s"?, "parameter_servers"? (1)}]}         then validate
//   ps_async_fit_result: {"model"?: "ps-async", "contention_model"? ("spotdnn" | "load"), "types":
//                         [{"name", "gpus", "worker_batch"}], "network": ps_network (B_ps per PS),
//                         "compute_s": [s per type], "pinned": [{"name", "value", "reason"}],
//                         "free_names": [name], "covariance": [[p numbers] x p], "residual_variance"
//                         (null: +inf), "degrees_of_freedom", "quality", "status", "iterations"}
//                                                                                        then validate
// A fit's statistics are checked when read (fit/quality.hpp, validate_fit_statistics): a finite
// symmetric covariance, degrees of freedom at most the samples.

#include <dnnplan/fit/ps_async.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/fit/sync_data_parallel.hpp>
#include <dnnplan/io/detail/json_core.hpp>
#include <dnnplan/io/spot_provision_json.hpp>

#include <Eigen/Core>

#include <istream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace dnnplan::detail::json_io {

/// A matrix as an array of rows; the rows must all have the row count's length (a square matrix:
/// the fit's own validate() then checks the size against its parameters).
template <>
struct json_value_io<Eigen::MatrixXd> {
    template <class Json>
    static void read(const Json& j, const std::string& path, Eigen::MatrixXd& out) {
        std::vector<std::vector<double>> rows;
        read_value(tag{}, j, path, rows);
        const std::size_t n = rows.size();
        out = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
        for (std::size_t r = 0; r < n; ++r) {
            if (rows[r].size() != n)
                fail(element_path(path, r), std::to_string(rows[r].size()) + " numbers",
                     std::to_string(n) + " numbers (a square matrix: as many as rows)");
            for (std::size_t c = 0; c < n; ++c) out(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = rows[r][c];
        }
    }
    template <class Json>
    static Json write(const Eigen::MatrixXd& m, std::string_view path) {
        Json rows = Json::array();
        for (Eigen::Index r = 0; r < m.rows(); ++r) {
            Json values = Json::array();
            for (Eigen::Index c = 0; c < m.cols(); ++c)
                values.push_back(write_value<Json>(m(r, c), element_path(element_path(path, static_cast<std::size_t>(r)),
                                                                          static_cast<std::size_t>(c))));
            rows.push_back(std::move(values));
        }
        return rows;
    }
};

template <>
struct json_fields<pollux_params> {
    static constexpr auto fields = std::tuple{
        required("alpha_c_s", &pollux_params::alpha_c_s), required("beta_c_s", &pollux_params::beta_c_s),
        required("alpha_n_s", &pollux_params::alpha_n_s), required("beta_n_s", &pollux_params::beta_n_s),
        required("alpha_r_s", &pollux_params::alpha_r_s), required("beta_r_s", &pollux_params::beta_r_s),
        required("gamma", &pollux_params::gamma),         optional("delta_n_s", &pollux_params::delta_n_s),
        optional("batch_exponent", &pollux_params::batch_exponent),
    };
};

template <>
struct json_fields<fit_quality> {
    static constexpr auto fields = std::tuple{
        required("samples", &fit_quality::samples), required("rmse", &fit_quality::rmse),
        required("median_ape_ratio", &fit_quality::median_ape_ratio), required("p90_ape_ratio", &fit_quality::p90_ape_ratio),
        required("r_squared", &fit_quality::r_squared),
    };
};

template <>
struct json_fields<sync_fit_result> {
    static constexpr auto fields = std::tuple{
        constant("model", "sync-data-parallel"),
        optional("variant", &sync_fit_result::variant),
        required("params", &sync_fit_result::params),
        required("pinned", &sync_fit_result::pinned),
        required("quality", &sync_fit_result::quality),
        required("covariance", &sync_fit_result::covariance),
        unbounded("residual_variance", &sync_fit_result::residual_variance),
        signed_required("degrees_of_freedom", &sync_fit_result::degrees_of_freedom),
        required("status", &sync_fit_result::status),
        required("iterations", &sync_fit_result::iterations),
    };
};

template <>
struct json_fields<named_cluster_sample> {
    static constexpr auto fields = std::tuple{
        required("counts", &named_cluster_sample::counts),
        optional("iterations_per_s", &named_cluster_sample::iterations_per_s),
        optional("parameter_servers", &named_cluster_sample::parameter_servers),
    };
};

template <>
struct json_fields<ps_cluster_set> {
    static constexpr auto fields = std::tuple{
        required("per_worker_batch", &ps_cluster_set::per_worker_batch),
        optional("parameter_bytes", &ps_cluster_set::parameter_bytes),
        required("samples", &ps_cluster_set::samples),
    };
};

template <>
struct json_fields<ps_async_worker_type> {
    static constexpr auto fields = std::tuple{required("name", &ps_async_worker_type::name), required("gpus", &ps_async_worker_type::gpus),
                                              required("worker_batch", &ps_async_worker_type::worker_batch)};
};

template <>
struct json_fields<pinned_parameter> {
    static constexpr auto fields = std::tuple{required("name", &pinned_parameter::name), required("value", &pinned_parameter::value),
                                              required("reason", &pinned_parameter::reason)};
};

template <>
struct json_fields<ps_async_fit_result> {
    static constexpr auto fields = std::tuple{
        constant("model", "ps-async"),
        optional("contention_model", &ps_async_fit_result::contention_model),
        required("types", &ps_async_fit_result::types),
        required("network", &ps_async_fit_result::network),
        required("compute_s", &ps_async_fit_result::compute_s),
        required("pinned", &ps_async_fit_result::pinned),
        required("free_names", &ps_async_fit_result::free_names),
        required("covariance", &ps_async_fit_result::covariance),
        unbounded("residual_variance", &ps_async_fit_result::residual_variance),
        signed_required("degrees_of_freedom", &ps_async_fit_result::degrees_of_freedom),
        required("quality", &ps_async_fit_result::quality),
        required("status", &ps_async_fit_result::status),
        required("iterations", &ps_async_fit_result::iterations),
    };
};

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

/// Reads a fit written by to_json_text (the params JSON of `fit_model predict`). Malformed JSON:
/// parse_error("byte N", ...); anything else wrong: invalid_input naming the field.
[[nodiscard]] inline sync_fit_result parse_sync_fit_result(std::istream& in) { return parse_json<sync_fit_result>(in); }
[[nodiscard]] inline sync_fit_result parse_sync_fit_result(std::string_view text) { return parse_json<sync_fit_result>(text); }

[[nodiscard]] inline ps_async_fit_result parse_ps_async_fit_result(std::istream& in) {
    return parse_json<ps_async_fit_result>(in);
}
[[nodiscard]] inline ps_async_fit_result parse_ps_async_fit_result(std::string_view text) {
    return parse_json<ps_async_fit_result>(text);
}

/// A clusters file ("samples[2].counts.v100" names a bad count).
[[nodiscard]] inline ps_cluster_set parse_ps_cluster_set(std::istream& in) { return parse_json<ps_cluster_set>(in); }
[[nodiscard]] inline ps_cluster_set parse_ps_cluster_set(std::string_view text) { return parse_json<ps_cluster_set>(text); }

}  // namespace dnnplan
