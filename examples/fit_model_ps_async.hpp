#pragma once
// The ps-async pieces of examples/fit_model.cpp (included, not built on its own):
//
//   fit_model fit      --model ps-async --clusters TRAIN.json [--contention spotdnn|load] [--json]
//   fit_model predict  --model ps-async --params PARAMS.json --clusters TEST.json [--confidence 0.95] [--json]
//   fit_model fidelity --model ps-async --clusters TRAIN.json [--contention spotdnn|load] [--json]
//
// --contention picks the PS contention of the fit (fit/ps_async.hpp ps_contention_model):
// load (the default, model/ps_load_contention.hpp) or spotdnn (the paper's eqs. (8)-(9)); the params JSON records
// it as "contention_model" and predict uses it. fidelity is leave-one-cluster-out: each sample is
// predicted by a fit on all the others.
//
// A clusters file is {"per_worker_batch": 128, "parameter_bytes"?: S, "samples": [{"counts":
// {"v100": 2, "k80": 1}, "iterations_per_s"?: 36.6, "parameter_servers"?: 1}, ...]} (io/json.hpp,
// ps_cluster_set). `fit --json` prints the ps_async_fit_result that `predict --params` reads back;
// predict prints {"predictions": [{"iterations_per_s", "lower", "upper"}]} in input order (with
// "observed" and "ape_ratio" for samples that carry a measured speed). The readers throw
// dnnplan::error for malformed input; fit_model turns that into one line naming the file and
// field, exit code 2.

#include <dnnplan/fit/fidelity.hpp>
#include <dnnplan/fit/ps_async.hpp>
#include <dnnplan/io/fit_json.hpp>
#include <dnnplan/io/fit_report_json.hpp>

#include "cli_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace dnnplan_examples::ps_async_cli {

[[nodiscard]] inline dnnplan::ps_cluster_set read_clusters(std::istream& in) { return dnnplan::parse_ps_cluster_set(in); }

[[nodiscard]] inline dnnplan::ps_async_fit_result read_params(std::istream& in) {
    return dnnplan::parse_ps_async_fit_result(in);
}

/// Fits the clusters (their per_worker_batch and, when given, parameter_bytes). Throws
/// dnnplan::invalid_input naming the field ("samples[2].iterations_per_s", "samples": too few).
[[nodiscard]] inline dnnplan::ps_async_fit_result fit(const dnnplan::ps_cluster_set& clusters,
                                                      dnnplan::ps_contention_model contention) {
    return dnnplan::fit_ps_async(clusters, {.contention_model = contention});
}

inline void print_fit(const dnnplan::ps_async_fit_result& r, bool json, std::ostream& out) {
    if (json) {
        out << dnnplan::to_json_text(r) << '\n';
        return;
    }
    char line[200];
    out << (r.contention_model == dnnplan::ps_contention_model::spotdnn
                ? "ps-async fit (spotDNN eqs. (6)-(9)) on "
                : "ps-async fit (spotDNN eqs. (6)-(7), load contention) on ")
        << r.quality.samples << " clusters, " << r.iterations
        << " iterations, " << dnnplan::to_string(r.status) << '\n';
    for (std::size_t k = 0; k < r.types.size(); ++k) {
        std::snprintf(line, sizeof line, "  compute_s[%s] = %.6g s\n", r.types[k].name.c_str(), r.compute_s[k]);
        out << line;
    }
    if (r.contention_model == dnnplan::ps_contention_model::spotdnn)
        std::snprintf(line, sizeof line,
                      "  alpha1 = %.4g, beta1 = %.4g, B_ps = %.4g B/s per PS, B_req = %.4g B/s (S = %.4g B)\n",
                      r.network.contention.alpha1, r.network.contention.beta1, r.network.ps_bandwidth_bytes_per_s,
                      r.network.required_bandwidth_bytes_per_s, r.network.parameter_bytes);
    else
        std::snprintf(line, sizeof line, "  B_ps = %.4g B/s per PS, B_req = %.4g B/s (S = %.4g B)\n",
                      r.network.ps_bandwidth_bytes_per_s, r.network.required_bandwidth_bytes_per_s,
                      r.network.parameter_bytes);
    out << line;
    for (const auto& p : r.pinned) out << "  pinned " << p.name << " = " << p.value << ": " << p.reason << '\n';
    std::snprintf(line, sizeof line, "  median APE %.2f%%, p90 APE %.2f%%, RMSE %.4g steps/s\n",
                  100.0 * r.quality.median_ape_ratio, 100.0 * r.quality.p90_ape_ratio, r.quality.rmse);
    out << line;
}

/// One prediction per sample, in input order (io/fit_report_json.hpp). Throws invalid_input for
/// a sample naming a type the fit does not know ("samples[i].counts.<name>").
inline void print_predictions(const dnnplan::ps_async_fit_result& r, const dnnplan::ps_cluster_set& clusters,
                              double confidence, bool json, std::ostream& out) {
    const std::vector<dnnplan::interval> predictions = dnnplan::ps_predictions(r, clusters, confidence);
    if (json) {
        out << dnnplan::ps_predictions_json(clusters, predictions).dump(2) << '\n';
        return;
    }
    std::vector<double> errors;
    out << "iterations per second (" << 100.0 * confidence << "% prediction intervals)\n"
        << "cluster                          predicted  [lower, upper]        observed   error\n";
    for (std::size_t i = 0; i < clusters.samples.size(); ++i) {
        const auto& s = clusters.samples[i];
        const dnnplan::interval& iv = predictions[i];
        std::string name;
        for (const auto& [type, count] : s.counts) {
            if (!name.empty()) name += " ";
            name += std::to_string(count);
            name += "x";
            name += type;
        }
        if (s.parameter_servers != 1) {
            name += " ";
            name += std::to_string(s.parameter_servers);
            name += "PS";
        }
        char line[200];
        if (s.iterations_per_s) {
            errors.push_back(dnnplan::ape_ratio(iv.value, *s.iterations_per_s));
            std::snprintf(line, sizeof line, "%-32s %9.3f  [%7.3f, %7.3f]  %9.3f  %5.1f%%\n", name.c_str(), iv.value,
                          iv.lower, iv.upper, *s.iterations_per_s, 100.0 * errors.back());
        } else {
            std::snprintf(line, sizeof line, "%-32s %9.3f  [%7.3f, %7.3f]\n", name.c_str(), iv.value, iv.lower,
                          iv.upper);
        }
        out << line;
    }
    if (!errors.empty()) {
        std::sort(errors.begin(), errors.end());
        const std::size_t n = errors.size();
        const double median = n % 2 == 1 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
        char line[120];
        std::snprintf(line, sizeof line, "median APE %.2f%%, max APE %.2f%% over %zu clusters\n", 100.0 * median,
                      100.0 * errors.back(), n);
        out << line;
    }
}

/// Leave-one-cluster-out: sample i predicted by a fit on every other sample (same options as
/// fit()). Prints each prediction and the median / p90 / max APE.
inline void print_leave_one_out(const dnnplan::ps_cluster_set& clusters, dnnplan::ps_contention_model contention,
                                bool json, std::ostream& out) {
    std::optional<stderr_progress> progress(std::in_place, "fit_model", "clusters left out");  // on a terminal only
    const dnnplan::ps_leave_one_out_result r = dnnplan::ps_leave_one_out(clusters, {.contention_model = contention}, progress->callback());
    progress.reset();  // its line ends before the output
    if (json) {
        out << dnnplan::ps_leave_one_out_json(r, contention).dump(2) << '\n';
        return;
    }
    const dnnplan::fit_quality& q = r.quality;
    char line[160];
    std::snprintf(line, sizeof line,
                  "leave-one-cluster-out, contention %s, %zu clusters: median APE %.2f%%, p90 APE %.2f%%, max APE "
                  "%.2f%%\n",
                  std::string(dnnplan::to_string(contention)).c_str(), r.observed.size(), 100.0 * q.median_ape_ratio,
                  100.0 * q.p90_ape_ratio, 100.0 * r.max_ape_ratio);
    out << line;
}

}  // namespace dnnplan_examples::ps_async_cli
