#pragma once
// Fits spotDNN's asynchronous parameter-server model (Shang et al., IWQoS 2023, eqs. (6)-(9),
// model/heterogeneous_ps.hpp) to measured cluster speeds: the contention coefficients alpha1,
// beta1 of eq. (9), the PS bandwidth B_ps and the required bandwidth B_req of eq. (8), and the
// per-type compute times T_comp_k of eq. (6), each where the data identifies it; the rest is
// pinned by the rules of docs/models/fitting-async.md and reported by name.
// By default (ps_async_fit_options::contention_model = load, the best-validated choice:
// docs/fidelity.md) the PS contention of eqs. (8)-(9) is replaced by the load-driven queueing
// model of model/ps_load_contention.hpp (same T_comp_k, B_req, B_ps; no alpha1, beta1); the
// paper's form is contention_model = spotdnn. The types it reads and returns are in
// fit/ps_async_types.hpp.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/least_squares.hpp>
#include <dnnplan/fit/nonlinear.hpp>
#include <dnnplan/fit/ps_async_types.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>
#include <dnnplan/model/ps_load_contention.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

namespace detail::ps_async {

inline std::string indexed_name(std::string_view prefix, const std::string& name) {
    std::string s(prefix);
    s += "[";
    s += name;
    s += "]";
    return s;
}

/// Full internal vector: [log T_comp_k..., alpha1, beta1, log B_ps, log B_req].
struct layout {
    std::size_t types = 0;
    [[nodiscard]] Eigen::Index alpha() const noexcept { return static_cast<Eigen::Index>(types); }
    [[nodiscard]] Eigen::Index beta() const noexcept { return alpha() + 1; }
    [[nodiscard]] Eigen::Index ps() const noexcept { return alpha() + 2; }
    [[nodiscard]] Eigen::Index req() const noexcept { return alpha() + 3; }
    [[nodiscard]] Eigen::Index size() const noexcept { return alpha() + 4; }
};

/// The name of entry j of the full internal vector (ps_async_fit_result::free_names).
inline std::string parameter_name(const layout& l, const std::vector<ps_async_worker_type>& types, Eigen::Index j) {
    if (j < l.alpha()) return indexed_name("log compute_s", types[static_cast<std::size_t>(j)].name);
    if (j == l.alpha()) return "alpha1";
    if (j == l.beta()) return "beta1";
    if (j == l.ps()) return "log ps_bandwidth_bytes_per_s";
    return "log required_bandwidth_bytes_per_s";
}

/// Eqs. (2), (6)-(9) for one cluster, from the full internal vector (contention_model load:
/// eqs. (2), (6), (7) with model/ps_load_contention.hpp instead of (8), (9)). Also used for
/// prediction.
inline double iterations_per_s(const Eigen::VectorXd& full, const layout& l, std::span<const std::int32_t> counts,
                               std::int32_t parameter_servers, const std::vector<ps_async_worker_type>& types,
                               double parameter_bytes, double pcie_bytes_per_s,
                               ps_contention_model contention_model = ps_contention_model::spotdnn) {
    if (contention_model == ps_contention_model::load) {
        std::vector<double> work_s(counts.size(), 1.0);
        for (std::size_t k = 0; k < counts.size(); ++k)
            work_s[k] = std::exp(full(static_cast<Eigen::Index>(k))) +
                        2.0 * static_cast<double>(types[k].gpus) * parameter_bytes / pcie_bytes_per_s;
        return ps_load_iterations_per_s(work_s, counts, 2.0 * parameter_bytes, std::exp(full(l.req())),
                                        std::exp(full(l.ps())) * static_cast<double>(parameter_servers));
    }
    ps_network net;
    net.parameter_bytes = parameter_bytes;
    net.pcie_bandwidth_bytes_per_s = pcie_bytes_per_s;
    net.ps_bandwidth_bytes_per_s = std::exp(full(l.ps())) * static_cast<double>(parameter_servers);
    net.required_bandwidth_bytes_per_s = std::exp(full(l.req()));
    net.contention = {.alpha1 = full(l.alpha()), .beta1 = full(l.beta())};
    std::int64_t n = 0;
    for (const std::int32_t c : counts) n += c;
    double rate = 0.0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
        if (counts[k] <= 0) continue;
        const double t = std::exp(full(static_cast<Eigen::Index>(k))) +
                         heterogeneous_ps_model::communication_time_s(net, types[k].gpus, n);
        rate += static_cast<double>(counts[k]) / t;
    }
    return rate;
}

/// The checks of fit_ps_async's inputs, each error naming its field.
inline void validate_fit_inputs(const std::vector<ps_async_worker_type>& types, std::span<const ps_cluster_sample> samples,
                                const ps_async_fit_options& options) {
    options.validate("options");
    if (types.empty()) throw invalid_input("types", "[]", "at least one worker type");
    for (std::size_t k = 0; k < types.size(); ++k) {
        std::string at = "types[";
        at += std::to_string(k);
        at += "]";
        detail::require_at_least(at + ".gpus", types[k].gpus, 1);
        detail::require_positive(at + ".worker_batch", types[k].worker_batch);
    }
    for (std::size_t i = 0; i < samples.size(); ++i) {
        std::string at = "samples[";
        at += std::to_string(i);
        at += "]";
        samples[i].validate(types.size(), at);
    }
    for (std::size_t k = 0; k < types.size(); ++k) {
        bool seen = false;
        for (const auto& s : samples) seen = seen || s.counts[k] > 0;
        if (!seen)
            throw invalid_input(indexed_name("types", types[k].name), "no sample with a worker of this type",
                                "every worker type in at least one sample (its compute time is fitted)");
    }
}

/// What the pinning rules read from the samples.
struct sample_summary {
    std::size_t configurations = 0;  ///< c: distinct (workers, parameter servers) with 2+ workers
    double shortest_worker_s = std::numeric_limits<double>::infinity();  ///< min n / iterations_per_s
    bool within_spread = false;      ///< speeds per worker within options.no_contention_spread

    [[nodiscard]] std::string configurations_text() const {
        std::string text = std::to_string(configurations);
        text += " distinct (workers, parameter servers) configurations with 2+ workers";
        return text;
    }
};

/// Throws invalid_input ("options.no_contention_spread") when that option is given with more
/// than one worker type.
inline sample_summary summarize_samples(const std::vector<ps_async_worker_type>& types,
                                        std::span<const ps_cluster_sample> samples, const ps_async_fit_options& options) {
    sample_summary out;
    std::set<std::pair<std::int64_t, std::int32_t>> configurations;
    for (const auto& s : samples) {
        if (s.workers() >= 2) configurations.insert({s.workers(), s.parameter_servers});
        out.shortest_worker_s = std::min(out.shortest_worker_s, static_cast<double>(s.workers()) / s.iterations_per_s);
    }
    out.configurations = configurations.size();
    if (options.no_contention_spread) {
        if (types.size() != 1)
            throw invalid_input("options.no_contention_spread", detail::format_number(*options.no_contention_spread),
                                "absent with " + std::to_string(types.size()) + " worker types (one type only)");
        double slowest = std::numeric_limits<double>::infinity(), fastest = 0.0;
        for (const auto& s : samples) {
            slowest = std::min(slowest, s.iterations_per_s / static_cast<double>(s.workers()));
            fastest = std::max(fastest, s.iterations_per_s / static_cast<double>(s.workers()));
        }
        out.within_spread = fastest <= slowest * (1.0 + *options.no_contention_spread);
    }
    return out;
}

/// The full internal vector as the pinning rules leave it: pinned entries at their value, free
/// entries at their start.
struct start_point {
    Eigen::VectorXd full;
    std::vector<bool> is_free;
    std::vector<pinned_parameter> pinned;

    explicit start_point(const layout& l)
        : full(Eigen::VectorXd::Zero(l.size())), is_free(static_cast<std::size_t>(l.size()), true) {}

    void pin(Eigen::Index j, double internal, std::string name, double value, std::string reason) {
        full(j) = internal;
        is_free[static_cast<std::size_t>(j)] = false;
        pinned.push_back({.name = std::move(name), .value = value, .reason = std::move(reason)});
    }

    [[nodiscard]] std::vector<Eigen::Index> free_indices() const {
        std::vector<Eigen::Index> free;
        for (Eigen::Index j = 0; j < full.size(); ++j)
            if (is_free[static_cast<std::size_t>(j)]) free.push_back(j);
        return free;
    }
};

/// B_req (pinned, or its start); returns it. The other rules refer to it.
inline double pin_required_bandwidth(start_point& start, const layout& l, const ps_async_fit_options& options,
                                     const sample_summary& summary) {
    double b_req = 2.0 * options.parameter_bytes / (0.3 * summary.shortest_worker_s);
    if (options.required_bandwidth_bytes_per_s) {
        b_req = *options.required_bandwidth_bytes_per_s;
        start.pin(l.req(), std::log(b_req), "required_bandwidth_bytes_per_s", b_req, "given in the options");
    } else if (summary.configurations < 5) {
        start.pin(l.req(), std::log(b_req), "required_bandwidth_bytes_per_s", b_req,
                  summary.configurations_text() + " (< 5): 2 S / B_req = 0.3 x the shortest per-worker iteration time");
    } else {
        start.full(l.req()) = std::log(b_req);
    }
    return b_req;
}

/// alpha1, beta1 of eq. (9) (pinned, or their start).
inline void pin_contention(start_point& start, const layout& l, const ps_async_fit_options& options,
                           const sample_summary& summary) {
    if (options.contention_model == ps_contention_model::load) {
        start.pin(l.alpha(), 0.0, "alpha1", 0.0, "contention_model load: eq. (9) is not part of the model");
        start.pin(l.beta(), 1.0, "beta1", 1.0, "contention_model load: eq. (9) is not part of the model");
    } else if (options.contention) {
        start.pin(l.alpha(), options.contention->alpha1, "alpha1", options.contention->alpha1, "given in the options");
        start.pin(l.beta(), options.contention->beta1, "beta1", options.contention->beta1, "given in the options");
    } else if (summary.configurations < 4) {
        const std::string why = summary.configurations_text() + " (< 4): P = 1, the workers split B_ps evenly";
        start.pin(l.alpha(), 0.0, "alpha1", 0.0, why);
        start.pin(l.beta(), 1.0, "beta1", 1.0, why);
    } else {
        start.full(l.alpha()) = 0.2;
        start.full(l.beta()) = 0.2;
    }
}

/// B_ps of eq. (8) (pinned, or its start).
inline void pin_ps_bandwidth(start_point& start, const layout& l, const ps_async_fit_options& options,
                             const sample_summary& summary, double b_req) {
    if (options.ps_bandwidth_bytes_per_s) {
        start.pin(l.ps(), std::log(*options.ps_bandwidth_bytes_per_s), "ps_bandwidth_bytes_per_s",
                  *options.ps_bandwidth_bytes_per_s, "given in the options");
    } else if (summary.configurations == 0 || summary.within_spread) {
        const std::string why = summary.configurations == 0
                                    ? "no sample with 2+ workers"
                                    : "speeds per worker within no_contention_spread " +
                                          detail::format_number(*options.no_contention_spread) + " of each other";
        start.pin(l.ps(), std::log(1.0e6 * b_req), "ps_bandwidth_bytes_per_s", 1.0e6 * b_req,
                  why + ": contention unobservable, the PS never saturates (1e6 x B_req)");
    } else {
        start.full(l.ps()) = std::log(2.0 * b_req);
    }
}

/// Compute times start from the fastest speed seen per type, less the communication alone.
inline void seed_compute_times(start_point& start, const std::vector<ps_async_worker_type>& types,
                               std::span<const ps_cluster_sample> samples, const ps_async_fit_options& options,
                               double b_req) {
    const double s_bytes = options.parameter_bytes;
    for (std::size_t k = 0; k < types.size(); ++k) {
        double best = std::numeric_limits<double>::infinity();
        for (const auto& s : samples)
            if (s.counts[k] > 0) best = std::min(best, static_cast<double>(s.workers()) / s.iterations_per_s);
        const double comm = 2.0 * s_bytes / b_req + 2.0 * types[k].gpus * s_bytes / options.pcie_bandwidth_bytes_per_s;
        start.full(static_cast<Eigen::Index>(k)) = std::log(std::max(best - comm, 0.1 * best));
    }
}

/// "the ps-async model's <p> free parameters (<names>)", for the too-few-samples error.
inline std::string free_parameters_text(const layout& l, const std::vector<ps_async_worker_type>& types,
                                        const std::vector<Eigen::Index>& free, ps_contention_model contention_model) {
    std::string what = contention_model == ps_contention_model::load ? "the ps-async (load contention) model's "
                                                                     : "the ps-async model's ";
    what += std::to_string(free.size());
    what += " free parameters (";
    for (std::size_t i = 0; i < free.size(); ++i) {
        if (i > 0) what += ", ";
        what += parameter_name(l, types, free[i]);
    }
    what += ")";
    return what;
}

/// The search box of the free parameters: alpha1, beta1 in [-5, 5], each log T_comp_k within
/// e^12 of its start, the log bandwidths within e^14 of B_req.
inline parameter_bounds search_bounds(const Eigen::VectorXd& full, const layout& l, const std::vector<Eigen::Index>& free,
                                      double b_req) {
    const auto p = static_cast<Eigen::Index>(free.size());
    parameter_bounds bounds{Eigen::VectorXd(p), Eigen::VectorXd(p)};
    for (Eigen::Index i = 0; i < p; ++i) {
        const Eigen::Index j = free[static_cast<std::size_t>(i)];
        if (j == l.alpha() || j == l.beta()) {
            bounds.lower(i) = -5.0;
            bounds.upper(i) = 5.0;
        } else if (j < l.alpha()) {
            bounds.lower(i) = full(j) - 12.0;  // 1e-5 .. 1e5 x the starting compute time
            bounds.upper(i) = full(j) + 12.0;
        } else {
            bounds.lower(i) = std::log(b_req) - 14.0;
            bounds.upper(i) = std::log(b_req) + 14.0;
        }
    }
    return bounds;
}

/// The network and compute times of the full internal vector `fitted`.
inline void store_parameters(ps_async_fit_result& result, const Eigen::VectorXd& fitted, const layout& l,
                             const ps_async_fit_options& options) {
    result.network.parameter_bytes = options.parameter_bytes;
    result.network.pcie_bandwidth_bytes_per_s = options.pcie_bandwidth_bytes_per_s;
    result.network.ps_bandwidth_bytes_per_s = std::exp(fitted(l.ps()));
    result.network.required_bandwidth_bytes_per_s = std::exp(fitted(l.req()));
    result.network.contention = {.alpha1 = fitted(l.alpha()), .beta1 = fitted(l.beta())};
    for (std::size_t k = 0; k < l.types; ++k) result.compute_s.push_back(std::exp(fitted(static_cast<Eigen::Index>(k))));
}

}  // namespace detail::ps_async

/// Fits the model to `samples` (log residuals of iterations_per_s; seeded multi-start, since the
/// min(., 1) of eq. (9) and the branch of eq. (8) make the objective non-convex). Pinning rules
/// (c = number of distinct (workers, parameter servers) configurations with 2+ workers):
///  - T_comp_k: always fitted; every type must appear in some sample.
///  - B_ps: pinned (options) or, when c = 0, to 1e6 * B_req (contention unobservable: the PS
///    never saturates).
///  - alpha1, beta1: with contention_model load always pinned to 0 and 1 (not in that model);
///    otherwise pinned (options) or, when c < 4, to 0 and 1 (P = 1: the workers split B_ps
///    evenly, eq. (8) with P = 1).
///  - B_req: pinned (options) or, when c < 5, so that 2 S / B_req is 30% of the shortest
///    per-worker iteration time seen (n / iterations_per_s), the share of communication in
///    spotDNN's ResNet-110 profile (2 * 11.5 MB / 142 MB/s = 0.16 s of 0.54 s).
/// Throws invalid_input for a bad sample ("samples[i]...") or type, and when there are fewer
/// samples than free parameters ("samples": "<have> samples", "at least <need> samples ...").
[[nodiscard]] inline ps_async_fit_result fit_ps_async(const std::vector<ps_async_worker_type>& types,
                                                      std::span<const ps_cluster_sample> samples,
                                                      const ps_async_fit_options& options = {}) {
    namespace pa = detail::ps_async;
    pa::validate_fit_inputs(types, samples, options);
    const pa::layout l{types.size()};
    const pa::sample_summary summary = pa::summarize_samples(types, samples, options);
    pa::start_point start(l);
    const double b_req = pa::pin_required_bandwidth(start, l, options, summary);
    pa::pin_contention(start, l, options, summary);
    pa::pin_ps_bandwidth(start, l, options, summary, b_req);
    pa::seed_compute_times(start, types, samples, options, b_req);
    const std::vector<Eigen::Index> free = start.free_indices();
    require_samples("samples", samples.size(), free.size(), pa::free_parameters_text(l, types, free, options.contention_model));

    const auto p = static_cast<Eigen::Index>(free.size());
    Eigen::VectorXd initial(p);
    for (Eigen::Index i = 0; i < p; ++i) initial(i) = start.full(free[static_cast<std::size_t>(i)]);
    const parameter_bounds bounds = pa::search_bounds(start.full, l, free, b_req);
    const auto expand = [&](const Eigen::VectorXd& y) {
        Eigen::VectorXd x = start.full;
        for (Eigen::Index i = 0; i < p; ++i) x(free[static_cast<std::size_t>(i)]) = y(i);
        return x;
    };
    const auto predict = [&](const Eigen::VectorXd& y, std::size_t i) {
        return pa::iterations_per_s(expand(y), l, samples[i].counts, samples[i].parameter_servers, types,
                                    options.parameter_bytes, options.pcie_bandwidth_bytes_per_s, options.contention_model);
    };
    std::vector<double> observed;
    for (const auto& s : samples) observed.push_back(s.iterations_per_s);
    const nonlinear_fit fit = curve_fit(predict, observed, initial, bounds, residual_space::log, options.solver);

    ps_async_fit_result result;
    result.types = types;
    result.contention_model = options.contention_model;
    result.pinned = std::move(start.pinned);
    pa::store_parameters(result, expand(fit.parameters), l, options);
    for (const Eigen::Index j : free) result.free_names.push_back(pa::parameter_name(l, types, j));
    result.covariance = parameter_covariance(fit, bounds);
    result.residual_variance = residual_variance(fit, bounds);
    result.degrees_of_freedom = degrees_of_freedom(fit, bounds);
    std::vector<double> predicted;
    for (std::size_t i = 0; i < samples.size(); ++i) predicted.push_back(predict(fit.parameters, i));
    result.quality = assess_fit(observed, predicted, "samples");
    result.status = fit.status;
    result.iterations = fit.iterations;
    return result;
}

/// Iterations per second of a cluster (counts[k] workers of type k, `parameter_servers` PS)
/// with a `confidence` prediction interval of a new measurement (delta method on the log-space
/// fit, fit/quality.hpp). Throws invalid_input for a bad cluster ("cluster...").
[[nodiscard]] inline interval predict_ps_async(const ps_async_fit_result& fit, std::span<const std::int32_t> counts,
                                               std::int32_t parameter_servers = 1, double confidence = 0.95) {
    namespace pa = detail::ps_async;
    ps_cluster_sample probe{.counts = {counts.begin(), counts.end()}, .iterations_per_s = 1.0,
                            .parameter_servers = parameter_servers};
    probe.validate(fit.types.size(), "cluster");
    const pa::layout l{fit.types.size()};
    Eigen::VectorXd full(l.size());
    for (std::size_t k = 0; k < fit.types.size(); ++k) full(static_cast<Eigen::Index>(k)) = std::log(fit.compute_s[k]);
    full(l.alpha()) = fit.network.contention.alpha1;
    full(l.beta()) = fit.network.contention.beta1;
    full(l.ps()) = std::log(fit.network.ps_bandwidth_bytes_per_s);
    full(l.req()) = std::log(fit.network.required_bandwidth_bytes_per_s);
    std::vector<Eigen::Index> free;
    for (const std::string& name : fit.free_names) {
        Eigen::Index j = -1;
        for (Eigen::Index q = 0; q < l.size() && j < 0; ++q)
            if (pa::parameter_name(l, fit.types, q) == name) j = q;
        if (j < 0) throw invalid_input("fit.free_names", '"' + name + '"', "the name of a parameter of the model");
        free.push_back(j);
    }
    Eigen::VectorXd y(static_cast<Eigen::Index>(free.size()));
    for (std::size_t i = 0; i < free.size(); ++i) y(static_cast<Eigen::Index>(i)) = full(free[i]);
    const auto f = [&](const Eigen::VectorXd& v) {
        Eigen::VectorXd x = full;
        for (std::size_t i = 0; i < free.size(); ++i) x(free[i]) = v(static_cast<Eigen::Index>(i));
        return pa::iterations_per_s(x, l, counts, parameter_servers, fit.types, fit.network.parameter_bytes,
                                    fit.network.pcie_bandwidth_bytes_per_s, fit.contention_model);
    };
    const double value = f(y);
    if (y.size() == 0)
        return prediction_interval(value, Eigen::VectorXd(0), Eigen::MatrixXd(0, 0), fit.residual_variance,
                                   fit.degrees_of_freedom, confidence, residual_space::log);
    const Eigen::VectorXd gradient = finite_difference_gradient(f, y);
    return prediction_interval(value, gradient, fit.covariance, fit.residual_variance, fit.degrees_of_freedom,
                               confidence, residual_space::log);
}

/// fit_ps_async on a clusters file: its worker types, its samples (each with a measured speed),
/// its parameter_bytes (when given) in place of options.parameter_bytes.
[[nodiscard]] inline ps_async_fit_result fit_ps_async(const ps_cluster_set& clusters, const ps_async_fit_options& options = {}) {
    const auto types = clusters.worker_types();
    return fit_ps_async(types, clusters.fit_samples(types), clusters.fit_options(options));
}

}  // namespace dnnplan
