#pragma once
// Fits spotDNN's asynchronous parameter-server model (Shang et al., IWQoS 2023, eqs. (6)-(9),
// model/heterogeneous_ps.hpp) to measured cluster speeds: the contention coefficients alpha1,
// beta1 of eq. (9), the PS bandwidth B_ps and the required bandwidth B_req of eq. (8), and the
// per-type compute times T_comp_k of eq. (6), each where the data identifies it; the rest is
// pinned by the rules of docs/models/fitting-async.md and reported by name.
// By default (ps_async_fit_options::contention_model = load, the best-validated choice:
// docs/fidelity.md) the PS contention of eqs. (8)-(9) is replaced by the load-driven queueing
// model of model/ps_load_contention.hpp (same T_comp_k, B_req, B_ps; no alpha1, beta1); the
// paper's form is contention_model = spotdnn.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/least_squares.hpp>
#include <dnnplan/fit/nonlinear.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>
#include <dnnplan/model/ps_load_contention.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// How the PS slows workers down. spotdnn: eqs. (8)-(9), contention by worker count (the paper's
/// model). load (the fitter's default, docs/fidelity.md): model/ps_load_contention.hpp, the PS is
/// a processor-sharing server and a worker is slowed by the workers communicating at the same
/// moment, so faster workers load it more (docs/models/fitting-async.md, "The load contention model").
enum class ps_contention_model { spotdnn, load };

template <>
struct enum_text<ps_contention_model> {
    static constexpr std::array<enum_name<ps_contention_model>, 2> names{
        {{ps_contention_model::spotdnn, "spotdnn"}, {ps_contention_model::load, "load"}}};
};

/// One measured cluster: counts[k] workers of type k against `parameter_servers` PS.
struct ps_cluster_sample {
    std::vector<std::int32_t> counts{};
    double iterations_per_s = 0.0;        ///< cluster steps per second, 1 / T_exp of eq. (2)
    std::int32_t parameter_servers = 1;   ///< B_ps of eq. (8) is multiplied by this (see the docs)

    void validate(std::size_t type_count, std::string_view path = "sample") const {
        const std::string base = detail::field_prefix(path);
        if (counts.size() != type_count)
            throw invalid_input(base + "counts", std::to_string(counts.size()) + " entries",
                                std::to_string(type_count) + " entries (one per worker type)");
        std::int64_t n = 0;
        for (std::size_t k = 0; k < counts.size(); ++k) {
            std::string at = base + "counts[";
            at += std::to_string(k);
            at += "]";
            detail::require_at_least(at, counts[k], 0);
            n += counts[k];
        }
        if (n < 1) throw invalid_input(base + "counts", "0 workers", "at least one worker");
        detail::require_positive(base + "iterations_per_s", iterations_per_s);
        detail::require_at_least(base + "parameter_servers", parameter_servers, 1);
    }
    [[nodiscard]] std::int64_t workers() const noexcept {
        std::int64_t n = 0;
        for (const std::int32_t c : counts) n += c;
        return n;
    }
};

/// A worker type of the fit: name, GPUs and worker batch (the batch only scales samples/s).
struct ps_async_worker_type {
    std::string name{};
    std::int32_t gpus = 1;
    double worker_batch = 128.0;
};

/// What the fitter is given besides the samples. Only S / B ratios enter eq. (7), so
/// `parameter_bytes` sets the scale of the fitted bandwidths (the 1 MB default is a reference
/// size when the model's size is unknown); B_pcie is pinned (spotDNN's 10 GB/s).
struct ps_async_fit_options {
    double parameter_bytes = 1.0e6;
    double pcie_bandwidth_bytes_per_s = 10.0e9;
    std::optional<double> required_bandwidth_bytes_per_s{};  ///< pins B_req when set
    std::optional<double> ps_bandwidth_bytes_per_s{};        ///< pins B_ps (per PS) when set
    std::optional<contention_coefficients> contention{};     ///< pins alpha1, beta1 when set (spotdnn only)
    /// load (the default): contention from the workers exchanging at once (model/ps_load_contention.hpp),
    /// chosen on leave-one-cluster-out over the training runs (docs/fidelity.md); spotdnn: the
    /// paper's eqs. (8)-(9).
    ps_contention_model contention_model = ps_contention_model::load;
    /// One worker type only. When set, the run-to-run spread of a measured speed (relative, in
    /// [0, 1)): samples whose speeds per worker (iterations_per_s / workers) all lie within it of
    /// each other show no contention beyond that noise, and B_ps is pinned as when no sample has
    /// 2+ workers. None: every difference is read as the model's.
    std::optional<double> no_contention_spread{};
    levenberg_marquardt_options solver{.max_iterations = 2000, .tolerance = 1e-12, .starts = 24, .seed = 1};

    void validate(std::string_view path = "options") const {
        const std::string base = detail::field_prefix(path);
        detail::require_positive(base + "parameter_bytes", parameter_bytes);
        detail::require_positive(base + "pcie_bandwidth_bytes_per_s", pcie_bandwidth_bytes_per_s);
        if (required_bandwidth_bytes_per_s)
            detail::require_positive(base + "required_bandwidth_bytes_per_s", *required_bandwidth_bytes_per_s);
        if (ps_bandwidth_bytes_per_s) detail::require_positive(base + "ps_bandwidth_bytes_per_s", *ps_bandwidth_bytes_per_s);
        if (contention && contention_model != ps_contention_model::spotdnn)
            throw invalid_input(base + "contention", "given",
                                "absent with contention_model load (alpha1, beta1 of eq. (9) are not used)");
        if (contention) {
            detail::require_finite(base + "contention.alpha1", contention->alpha1);
            detail::require_finite(base + "contention.beta1", contention->beta1);
        }
        if (no_contention_spread && !(*no_contention_spread >= 0.0 && *no_contention_spread < 1.0))
            throw invalid_input(base + "no_contention_spread", detail::format_number(*no_contention_spread), "a number in [0, 1)");
        solver.validate(base + "solver");
    }
};

/// A parameter held at a value by a rule instead of being fitted.
struct pinned_parameter {
    std::string name{};
    double value = 0.0;
    std::string reason{};
};

/// The fitted model with what a prediction interval needs. `free_names` label the rows of
/// `covariance`, in the fitter's internal coordinates: "log compute_s[<type>]", "alpha1",
/// "beta1", "log ps_bandwidth_bytes_per_s", "log required_bandwidth_bytes_per_s" (log of the
/// positive parameters). residual_variance and covariance are in log(iterations_per_s) units.
struct ps_async_fit_result {
    std::vector<ps_async_worker_type> types{};
    ps_contention_model contention_model = ps_contention_model::spotdnn;
    ps_network network{};                       ///< per-PS B_ps; contention = alpha1, beta1 (spotdnn)
    std::vector<double> compute_s{};            ///< T_comp_k per type
    std::vector<pinned_parameter> pinned{};
    std::vector<std::string> free_names{};
    Eigen::MatrixXd covariance{};
    double residual_variance = 0.0;            ///< +inf when degrees_of_freedom <= 0
    std::int64_t degrees_of_freedom = 0;
    fit_quality quality{};                      ///< of iterations_per_s on the training samples
    fit_status status = fit_status::converged;
    std::int32_t iterations = 0;

    void validate(std::string_view path = "fit") const {
        const std::string base = detail::field_prefix(path);
        if (types.empty()) throw invalid_input(base + "types", "[]", "at least one worker type");
        if (compute_s.size() != types.size())
            throw invalid_input(base + "compute_s", std::to_string(compute_s.size()) + " entries",
                                "one entry per worker type");
        network.validate(base + "network");
        for (std::size_t k = 0; k < types.size(); ++k) {
            std::string at = base + "types[";
            at += std::to_string(k);
            at += "]";
            detail::require_at_least(at + ".gpus", types[k].gpus, 1);
            detail::require_positive(at + ".worker_batch", types[k].worker_batch);
            std::string c = base + "compute_s[";
            c += std::to_string(k);
            c += "]";
            detail::require_positive(c, compute_s[k]);
        }
        detail::validate_fit_statistics(path, covariance, static_cast<Eigen::Index>(free_names.size()), residual_variance,
                                        degrees_of_freedom, quality);
    }

    /// The model of model/heterogeneous_ps.hpp for clusters with `parameter_servers` PS. Only for
    /// contention_model spotdnn: a load fit is an invalid_input naming "fit.contention_model"
    /// (use predict_ps_async).
    [[nodiscard]] heterogeneous_ps_model model(std::int32_t parameter_servers = 1) const {
        if (contention_model != ps_contention_model::spotdnn)
            throw invalid_input("fit.contention_model", "\"load\"",
                                "\"spotdnn\" (heterogeneous_ps_model implements eqs. (8)-(9) only)");
        ps_network net = network;
        net.ps_bandwidth_bytes_per_s *= static_cast<double>(parameter_servers);
        std::vector<ps_worker_type> t;
        for (std::size_t k = 0; k < types.size(); ++k)
            t.push_back({.gpus = types[k].gpus, .worker_batch = types[k].worker_batch, .compute_s = compute_s[k]});
        return heterogeneous_ps_model(net, std::move(t));
    }
};

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
            throw invalid_input(pa::indexed_name("types", types[k].name), "no sample with a worker of this type",
                                "every worker type in at least one sample (its compute time is fitted)");
    }

    const pa::layout l{types.size()};
    std::set<std::pair<std::int64_t, std::int32_t>> configurations;
    double shortest_worker_s = std::numeric_limits<double>::infinity();
    for (const auto& s : samples) {
        if (s.workers() >= 2) configurations.insert({s.workers(), s.parameter_servers});
        shortest_worker_s = std::min(shortest_worker_s, static_cast<double>(s.workers()) / s.iterations_per_s);
    }
    const std::size_t c = configurations.size();
    bool within_spread = false;  // options.no_contention_spread
    if (options.no_contention_spread) {
        if (types.size() != 1)
            throw invalid_input("options.no_contention_spread", detail::format_number(*options.no_contention_spread),
                                "absent with " + std::to_string(types.size()) + " worker types (one type only)");
        double slowest = std::numeric_limits<double>::infinity(), fastest = 0.0;
        for (const auto& s : samples) {
            slowest = std::min(slowest, s.iterations_per_s / static_cast<double>(s.workers()));
            fastest = std::max(fastest, s.iterations_per_s / static_cast<double>(s.workers()));
        }
        within_spread = fastest <= slowest * (1.0 + *options.no_contention_spread);
    }
    std::string config_text = std::to_string(c);
    config_text += " distinct (workers, parameter servers) configurations with 2+ workers";

    ps_async_fit_result result;
    result.types = types;
    result.contention_model = options.contention_model;
    const bool load = options.contention_model == ps_contention_model::load;
    const double s_bytes = options.parameter_bytes;
    Eigen::VectorXd full = Eigen::VectorXd::Zero(l.size());
    std::vector<bool> is_free(static_cast<std::size_t>(l.size()), true);
    const auto pin = [&](Eigen::Index j, double internal, std::string name, double value, std::string reason) {
        full(j) = internal;
        is_free[static_cast<std::size_t>(j)] = false;
        result.pinned.push_back({.name = std::move(name), .value = value, .reason = std::move(reason)});
    };

    // B_req first: the other rules refer to it.
    double b_req = 2.0 * s_bytes / (0.3 * shortest_worker_s);
    if (options.required_bandwidth_bytes_per_s) {
        b_req = *options.required_bandwidth_bytes_per_s;
        pin(l.req(), std::log(b_req), "required_bandwidth_bytes_per_s", b_req, "given in the options");
    } else if (c < 5) {
        pin(l.req(), std::log(b_req), "required_bandwidth_bytes_per_s", b_req,
            config_text + " (< 5): 2 S / B_req = 0.3 x the shortest per-worker iteration time");
    } else {
        full(l.req()) = std::log(b_req);
    }
    if (load) {
        pin(l.alpha(), 0.0, "alpha1", 0.0, "contention_model load: eq. (9) is not part of the model");
        pin(l.beta(), 1.0, "beta1", 1.0, "contention_model load: eq. (9) is not part of the model");
    } else if (options.contention) {
        pin(l.alpha(), options.contention->alpha1, "alpha1", options.contention->alpha1, "given in the options");
        pin(l.beta(), options.contention->beta1, "beta1", options.contention->beta1, "given in the options");
    } else if (c < 4) {
        pin(l.alpha(), 0.0, "alpha1", 0.0, config_text + " (< 4): P = 1, the workers split B_ps evenly");
        pin(l.beta(), 1.0, "beta1", 1.0, config_text + " (< 4): P = 1, the workers split B_ps evenly");
    } else {
        full(l.alpha()) = 0.2;
        full(l.beta()) = 0.2;
    }
    if (options.ps_bandwidth_bytes_per_s) {
        pin(l.ps(), std::log(*options.ps_bandwidth_bytes_per_s), "ps_bandwidth_bytes_per_s",
            *options.ps_bandwidth_bytes_per_s, "given in the options");
    } else if (c == 0 || within_spread) {
        const std::string why = c == 0 ? "no sample with 2+ workers"
                                       : "speeds per worker within no_contention_spread " +
                                             detail::format_number(*options.no_contention_spread) + " of each other";
        pin(l.ps(), std::log(1.0e6 * b_req), "ps_bandwidth_bytes_per_s", 1.0e6 * b_req,
            why + ": contention unobservable, the PS never saturates (1e6 x B_req)");
    } else {
        full(l.ps()) = std::log(2.0 * b_req);
    }
    // Compute times start from the fastest speed seen per type, less the communication alone.
    for (std::size_t k = 0; k < types.size(); ++k) {
        double best = std::numeric_limits<double>::infinity();
        for (const auto& s : samples)
            if (s.counts[k] > 0) best = std::min(best, static_cast<double>(s.workers()) / s.iterations_per_s);
        const double comm = 2.0 * s_bytes / b_req + 2.0 * types[k].gpus * s_bytes / options.pcie_bandwidth_bytes_per_s;
        full(static_cast<Eigen::Index>(k)) = std::log(std::max(best - comm, 0.1 * best));
    }

    std::vector<Eigen::Index> free;
    for (Eigen::Index j = 0; j < l.size(); ++j)
        if (is_free[static_cast<std::size_t>(j)]) free.push_back(j);
    const auto names = [&](Eigen::Index j) -> std::string {
        if (j < l.alpha()) return pa::indexed_name("log compute_s", types[static_cast<std::size_t>(j)].name);
        if (j == l.alpha()) return "alpha1";
        if (j == l.beta()) return "beta1";
        if (j == l.ps()) return "log ps_bandwidth_bytes_per_s";
        return "log required_bandwidth_bytes_per_s";
    };
    std::string what = load ? "the ps-async (load contention) model's " : "the ps-async model's ";
    what += std::to_string(free.size());
    what += " free parameters (";
    for (std::size_t i = 0; i < free.size(); ++i) {
        if (i > 0) what += ", ";
        what += names(free[i]);
    }
    what += ")";
    require_samples("samples", samples.size(), free.size(), what);

    const auto p = static_cast<Eigen::Index>(free.size());
    Eigen::VectorXd initial(p);
    parameter_bounds bounds{Eigen::VectorXd(p), Eigen::VectorXd(p)};
    for (Eigen::Index i = 0; i < p; ++i) {
        const Eigen::Index j = free[static_cast<std::size_t>(i)];
        initial(i) = full(j);
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
    const auto expand = [&](const Eigen::VectorXd& y) {
        Eigen::VectorXd x = full;
        for (Eigen::Index i = 0; i < p; ++i) x(free[static_cast<std::size_t>(i)]) = y(i);
        return x;
    };
    const auto predict = [&](const Eigen::VectorXd& y, std::size_t i) {
        return pa::iterations_per_s(expand(y), l, samples[i].counts, samples[i].parameter_servers, types, s_bytes,
                                    options.pcie_bandwidth_bytes_per_s, options.contention_model);
    };
    std::vector<double> observed;
    for (const auto& s : samples) observed.push_back(s.iterations_per_s);
    const nonlinear_fit fit = curve_fit(predict, observed, initial, bounds, residual_space::log, options.solver);

    full = expand(fit.parameters);
    result.network.parameter_bytes = s_bytes;
    result.network.pcie_bandwidth_bytes_per_s = options.pcie_bandwidth_bytes_per_s;
    result.network.ps_bandwidth_bytes_per_s = std::exp(full(l.ps()));
    result.network.required_bandwidth_bytes_per_s = std::exp(full(l.req()));
    result.network.contention = {.alpha1 = full(l.alpha()), .beta1 = full(l.beta())};
    for (std::size_t k = 0; k < types.size(); ++k) result.compute_s.push_back(std::exp(full(static_cast<Eigen::Index>(k))));
    for (const Eigen::Index j : free) result.free_names.push_back(names(j));
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
        for (Eigen::Index q = 0; q < l.size() && j < 0; ++q) {
            std::string candidate;
            if (q < l.alpha()) candidate = pa::indexed_name("log compute_s", fit.types[static_cast<std::size_t>(q)].name);
            else if (q == l.alpha()) candidate = "alpha1";
            else if (q == l.beta()) candidate = "beta1";
            else if (q == l.ps()) candidate = "log ps_bandwidth_bytes_per_s";
            else candidate = "log required_bandwidth_bytes_per_s";
            if (candidate == name) j = q;
        }
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

/// A clusters file (`fit_model --model ps-async --clusters`): worker types by name.
struct named_cluster_sample {
    std::map<std::string, std::int32_t, std::less<>> counts{};
    std::optional<double> iterations_per_s{};  ///< absent in a file that is only predicted
    std::int32_t parameter_servers = 1;
};

struct ps_cluster_set {
    double per_worker_batch = 0.0;              ///< b_i of every worker (one GPU each unless gpus says)
    std::optional<double> parameter_bytes{};    ///< S_parm when known
    std::vector<named_cluster_sample> samples{};

    void validate(std::string_view path = "") const {
        const std::string base = detail::field_prefix(path);
        detail::require_positive(base + "per_worker_batch", per_worker_batch);
        if (parameter_bytes) detail::require_positive(base + "parameter_bytes", *parameter_bytes);
        if (samples.empty()) throw invalid_input(base + "samples", "[]", "at least one sample");
        for (std::size_t i = 0; i < samples.size(); ++i) {
            std::string at = base + "samples[";
            at += std::to_string(i);
            at += "]";
            std::int64_t n = 0;
            for (const auto& [name, count] : samples[i].counts) {
                detail::require_at_least(at + ".counts." + name, count, 0);
                n += count;
            }
            if (n < 1) throw invalid_input(at + ".counts", "0 workers", "at least one worker");
            if (samples[i].iterations_per_s) detail::require_positive(at + ".iterations_per_s", *samples[i].iterations_per_s);
            detail::require_at_least(at + ".parameter_servers", samples[i].parameter_servers, 1);
        }
    }

    /// Every type named in some sample, in name order, with this set's worker batch.
    [[nodiscard]] std::vector<ps_async_worker_type> worker_types() const {
        std::set<std::string, std::less<>> names;
        for (const auto& s : samples)
            for (const auto& [name, count] : s.counts) names.insert(name);
        std::vector<ps_async_worker_type> out;
        for (const auto& name : names) out.push_back({.name = name, .gpus = 1, .worker_batch = per_worker_batch});
        return out;
    }

    /// Sample i's counts in the order of `types`; a type not in `types` is an invalid_input
    /// naming "samples[i].counts.<name>".
    [[nodiscard]] std::vector<std::int32_t> counts(std::size_t i, const std::vector<ps_async_worker_type>& types) const {
        std::vector<std::int32_t> out(types.size(), 0);
        for (const auto& [name, count] : samples[i].counts) {
            std::size_t k = 0;
            while (k < types.size() && types[k].name != name) ++k;
            if (k == types.size()) {
                std::string at = "samples[";
                at += std::to_string(i);
                at += "].counts.";
                at += name;
                throw invalid_input(at, std::to_string(count), "a worker type of the fitted model");
            }
            out[k] = count;
        }
        return out;
    }

    /// The samples for fit_ps_async (every sample needs iterations_per_s: "samples[i].iterations_per_s").
    [[nodiscard]] std::vector<ps_cluster_sample> fit_samples(const std::vector<ps_async_worker_type>& types) const {
        std::vector<ps_cluster_sample> out;
        for (std::size_t i = 0; i < samples.size(); ++i) {
            if (!samples[i].iterations_per_s) {
                std::string at = "samples[";
                at += std::to_string(i);
                at += "].iterations_per_s";
                throw invalid_input(at, "absent", "a measured speed for every sample of a fit");
            }
            out.push_back({.counts = counts(i, types), .iterations_per_s = *samples[i].iterations_per_s,
                           .parameter_servers = samples[i].parameter_servers});
        }
        return out;
    }

    /// `options` with this file's parameter_bytes when it gives one (B_req and B_ps are fitted in
    /// bytes/s of a model of that size).
    [[nodiscard]] ps_async_fit_options fit_options(ps_async_fit_options options = {}) const {
        if (parameter_bytes) options.parameter_bytes = *parameter_bytes;
        return options;
    }
};

/// fit_ps_async on a clusters file: its worker types, its samples (each with a measured speed),
/// its parameter_bytes (when given) in place of options.parameter_bytes.
[[nodiscard]] inline ps_async_fit_result fit_ps_async(const ps_cluster_set& clusters, const ps_async_fit_options& options = {}) {
    const auto types = clusters.worker_types();
    return fit_ps_async(types, clusters.fit_samples(types), clusters.fit_options(options));
}

}  // namespace dnnplan
