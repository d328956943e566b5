#pragma once
// The documents `fit_model predict` and `fit_model fidelity` print with --json (the fit itself is
// io/fit_json.hpp's sync_fit_result / ps_async_fit_result), built here so that the command line
// and the Python module (dnnplan.fit_model) print the same ones:
//   sync predictions:  {"predictions": [{"step_time_s", "lower_s", "upper_s" (null: unbounded)}]}
//   sync fidelity:     {"model": "sync-data-parallel", "variant", "selection"? ({"chosen", "folds",
//                       "scores": [{"variant", "cv_median_ape_ratio", "cv_p90_ape_ratio"}]}),
//                       "train_fraction", "seed", "train_samples", "test_samples",
//                       "median_ape_ratio", "p90_ape_ratio", "rmse_s", "train_median_ape_ratio",
//                       "params", "pinned"}
//   ps predictions:    {"predictions": [{"iterations_per_s", "lower", "upper" (null: unbounded),
//                       "observed"?, "ape_ratio"? (a sample with a measured speed)}]}
//   ps leave-one-out:  {"contention_model", "samples", "median_ape_ratio", "p90_ape_ratio",
//                       "max_ape_ratio", "predictions": [{"observed", "iterations_per_s", "ape_ratio"}]}

#include <dnnplan/fit/fidelity.hpp>
#include <dnnplan/fit/ps_async.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/fit/sync_data_parallel.hpp>
#include <dnnplan/io/fit_json.hpp>

#include <dnnplan/io/detail/json_core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dnnplan {

namespace detail::json_io {

/// An interval's upper end: null when unbounded (too few degrees of freedom).
[[nodiscard]] inline nlohmann::ordered_json upper_or_null(double upper) {
    return std::isfinite(upper) ? nlohmann::ordered_json(upper) : nlohmann::ordered_json(nullptr);
}

}  // namespace detail::json_io

/// The step times `fit_model predict --model sync-data-parallel` predicts, one per row.
[[nodiscard]] inline nlohmann::ordered_json sync_predictions_json(std::span<const interval> predictions) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const interval& p : predictions)
        list.push_back({{"step_time_s", p.value}, {"lower_s", p.lower}, {"upper_s", detail::json_io::upper_or_null(p.upper)}});
    return {{"predictions", std::move(list)}};
}

/// The cross-validated choice of the synchronous model's form (select_sync_variant).
[[nodiscard]] inline nlohmann::ordered_json sync_selection_json(const sync_variant_selection& s, std::int32_t folds) {
    nlohmann::ordered_json scores = nlohmann::ordered_json::array();
    for (const auto& score : s.scores)
        scores.push_back({{"variant", std::string(to_string(score.variant))},
                          {"cv_median_ape_ratio", score.cv_median_ape_ratio},
                          {"cv_p90_ape_ratio", score.cv_p90_ape_ratio}});
    return {{"chosen", std::string(to_string(s.chosen))}, {"folds", folds}, {"scores", std::move(scores)}};
}

/// `fit_model fidelity --model sync-data-parallel`: the hold-out split's scores and its fit.
[[nodiscard]] inline nlohmann::ordered_json sync_fidelity_json(const sync_holdout_result& result, const sync_holdout_options& options) {
    nlohmann::ordered_json out;
    out["model"] = "sync-data-parallel";
    out["variant"] = std::string(to_string(result.fit.variant));
    if (result.selection) out["selection"] = sync_selection_json(*result.selection, options.selection.folds);
    out["train_fraction"] = options.train_fraction;
    out["seed"] = options.seed;
    out["train_samples"] = result.split.train.size();
    out["test_samples"] = result.split.held_out.size();
    out["median_ape_ratio"] = result.held_out.median_ape_ratio;
    out["p90_ape_ratio"] = result.held_out.p90_ape_ratio;
    out["rmse_s"] = result.held_out.rmse;
    out["train_median_ape_ratio"] = result.fit.quality.median_ape_ratio;
    out["params"] = result.fit.params;
    out["pinned"] = result.fit.pinned;
    return out;
}

/// The speeds of the asynchronous fit for every cluster of `clusters`, in order. Throws
/// invalid_input for a cluster naming a type the fit does not know ("samples[i].counts.<name>").
[[nodiscard]] inline std::vector<interval> ps_predictions(const ps_async_fit_result& fit, const ps_cluster_set& clusters,
                                                          double confidence) {
    std::vector<interval> out;
    out.reserve(clusters.samples.size());
    for (std::size_t i = 0; i < clusters.samples.size(); ++i)
        out.push_back(predict_ps_async(fit, clusters.counts(i, fit.types), clusters.samples[i].parameter_servers, confidence));
    return out;
}

/// The absolute percentage error of a prediction: |predicted - observed| / observed.
[[nodiscard]] inline double ape_ratio(double predicted, double observed) noexcept { return std::abs(predicted - observed) / observed; }

/// `fit_model predict --model ps-async`: ps_predictions beside the speeds the clusters measured.
[[nodiscard]] inline nlohmann::ordered_json ps_predictions_json(const ps_cluster_set& clusters, std::span<const interval> predictions) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        const interval& iv = predictions[i];
        nlohmann::ordered_json e{{"iterations_per_s", iv.value}, {"lower", iv.lower}, {"upper", detail::json_io::upper_or_null(iv.upper)}};
        if (const auto& observed = clusters.samples[i].iterations_per_s) {
            e["observed"] = *observed;
            e["ape_ratio"] = ape_ratio(iv.value, *observed);
        }
        list.push_back(std::move(e));
    }
    return {{"predictions", std::move(list)}};
}

/// `fit_model fidelity --model ps-async`: leave-one-cluster-out (ps_leave_one_out).
[[nodiscard]] inline nlohmann::ordered_json ps_leave_one_out_json(const ps_leave_one_out_result& r, ps_contention_model contention) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < r.observed.size(); ++i)
        list.push_back({{"observed", r.observed[i]}, {"iterations_per_s", r.predicted[i]}, {"ape_ratio", ape_ratio(r.predicted[i], r.observed[i])}});
    nlohmann::ordered_json out;
    out["contention_model"] = std::string(to_string(contention));
    out["samples"] = r.observed.size();
    out["median_ape_ratio"] = r.quality.median_ape_ratio;
    out["p90_ape_ratio"] = r.quality.p90_ape_ratio;
    out["max_ape_ratio"] = r.max_ape_ratio;
    out["predictions"] = std::move(list);
    return out;
}

}  // namespace dnnplan
