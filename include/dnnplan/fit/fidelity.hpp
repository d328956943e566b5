#pragma once
// How well a fitted model predicts what it was not fitted on: the measurements docs/fidelity.md
// reports, as functions a host can call.
//   - sync_holdout_fidelity: the synchronous data-parallel model fitted on a seeded share of the
//     samples (the form chosen on those rows only, when asked to choose) and scored on the rest;
//   - ps_leave_one_out: the asynchronous PS model fitted on every cluster but one and scored on that
//     one, for each cluster in turn.
// Nothing here looks at the held-out rows before scoring them.

#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/ps_async.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/fit/sync_data_parallel.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// A split of n rows into a training set and a held-out set, each in increasing row order.
struct row_split {
    std::vector<std::size_t> train{};
    std::vector<std::size_t> held_out{};
};

/// A Fisher-Yates shuffle of the row indices by std::mt19937_64(seed) (its output is fixed by the
/// standard; the modulo reduction is portable), the first round(train_fraction * n) for training,
/// the rest held out. Throws invalid_input unless 0 < train_fraction < 1.
[[nodiscard]] inline row_split seeded_split(std::size_t n, double train_fraction, std::uint64_t seed) {
    if (!(train_fraction > 0.0 && train_fraction < 1.0))
        throw invalid_input("train_fraction", detail::format_number(train_fraction), "a number in (0, 1)");
    std::vector<std::size_t> index(n);
    for (std::size_t i = 0; i < n; ++i) index[i] = i;
    std::mt19937_64 engine(seed);
    for (std::size_t i = n; i > 1; --i) std::swap(index[i - 1], index[static_cast<std::size_t>(engine() % i)]);
    const auto train = static_cast<std::size_t>(std::llround(train_fraction * static_cast<double>(n)));
    row_split out{.train = {index.begin(), index.begin() + static_cast<std::ptrdiff_t>(train)},
                  .held_out = {index.begin() + static_cast<std::ptrdiff_t>(train), index.end()}};
    std::sort(out.train.begin(), out.train.end());
    std::sort(out.held_out.begin(), out.held_out.end());
    return out;
}

struct sync_holdout_options {
    double train_fraction = 0.3;  ///< in (0, 1)
    std::uint64_t seed = 1;       ///< of the split
    /// The model form; none: chosen by cross-validation on the training rows (select_sync_variant),
    /// Pollux's form under sync_fit_options::auto_variant_min_samples training rows.
    std::optional<sync_variant> variant{};
    sync_selection_options selection{};  ///< when the form is chosen
    sync_fit_options fit{};              ///< fit.variant is replaced by the form used
};

struct sync_holdout_result {
    row_split split{};
    std::optional<sync_variant_selection> selection{};  ///< when the form was chosen
    sync_fit_result fit{};                              ///< on the training rows
    fit_quality held_out{};                             ///< step time predicted on the held-out rows
};

/// Fits the synchronous model on a seeded share of `samples` and scores it on the others. Throws
/// invalid_input for bad options, too few training rows for the fit (or the selection's folds), or
/// no row left to hold out ("samples").
[[nodiscard]] inline sync_holdout_result sync_holdout_fidelity(std::span<const sync_step_sample> samples,
                                                               const sync_holdout_options& options = {}) {
    sync_holdout_result out;
    out.split = seeded_split(samples.size(), options.train_fraction, options.seed);
    if (out.split.held_out.empty())
        throw invalid_input("samples", std::to_string(samples.size()) + " samples", "enough samples to hold some out");
    std::vector<sync_step_sample> train;
    train.reserve(out.split.train.size());
    for (const std::size_t i : out.split.train) train.push_back(samples[i]);
    sync_fit_options fit_options = options.fit;
    if (options.variant) {
        fit_options.variant = *options.variant;
    } else if (train.size() >= sync_fit_options::auto_variant_min_samples) {
        out.selection = select_sync_variant(train, options.selection);
        fit_options.variant = out.selection->chosen;
    } else {
        fit_options.variant = sync_variant::pollux;  // too few rows to cross-validate (fit_sync_data_parallel's rule)
    }
    out.fit = fit_sync_data_parallel(train, fit_options);
    std::vector<double> observed, predicted;
    for (const std::size_t i : out.split.held_out) {
        observed.push_back(samples[i].step_time_s);
        predicted.push_back(pollux_step_time_s(out.fit.params, samples[i].shape));
    }
    out.held_out = assess_fit(observed, predicted, "held_out");
    return out;
}

struct ps_leave_one_out_result {
    std::vector<double> observed{};   ///< iterations/s of each cluster
    std::vector<double> predicted{};  ///< by the fit on all the others
    fit_quality quality{};            ///< of the predictions
    double max_ape_ratio = 0.0;
};

/// A caller's progress callback: (done, total), on the calling thread; empty: none.
using fit_progress = std::function<void(std::int64_t, std::int64_t)>;

/// Leave-one-cluster-out: cluster i predicted by fit_ps_async on every other cluster (same types
/// and options). progress, when given, hears (clusters done, clusters) after each fit. Throws
/// invalid_input as fit_ps_async does (too few clusters left, ...).
[[nodiscard]] inline ps_leave_one_out_result ps_leave_one_out(const std::vector<ps_async_worker_type>& types,
                                                              std::span<const ps_cluster_sample> samples,
                                                              const ps_async_fit_options& options = {},
                                                              const fit_progress& progress = {}) {
    ps_leave_one_out_result out;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        std::vector<ps_cluster_sample> train;
        train.reserve(samples.size() - 1);
        for (std::size_t j = 0; j < samples.size(); ++j)
            if (j != i) train.push_back(samples[j]);
        const ps_async_fit_result f = fit_ps_async(types, train, options);
        out.observed.push_back(samples[i].iterations_per_s);
        out.predicted.push_back(predict_ps_async(f, samples[i].counts, samples[i].parameter_servers).value);
        if (progress) progress(static_cast<std::int64_t>(i + 1), static_cast<std::int64_t>(samples.size()));
    }
    out.quality = assess_fit(out.observed, out.predicted, "samples");
    for (std::size_t i = 0; i < out.observed.size(); ++i)
        out.max_ape_ratio = std::max(out.max_ape_ratio, std::abs(out.predicted[i] - out.observed[i]) / out.observed[i]);
    return out;
}

/// ps_leave_one_out on a clusters file (its types, samples and parameter_bytes).
[[nodiscard]] inline ps_leave_one_out_result ps_leave_one_out(const ps_cluster_set& clusters,
                                                              const ps_async_fit_options& options = {},
                                                              const fit_progress& progress = {}) {
    const auto types = clusters.worker_types();
    const auto samples = clusters.fit_samples(types);
    return ps_leave_one_out(types, samples, clusters.fit_options(options), progress);
}

}  // namespace dnnplan
