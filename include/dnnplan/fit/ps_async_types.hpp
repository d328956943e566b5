#pragma once
// What the fitter of spotDNN's asynchronous parameter-server model (fit/ps_async.hpp; Shang et al.,
// IWQoS 2023, eqs. (6)-(9)) is given and returns: the measured clusters, the worker types, the
// options, the fitted model with its pinned parameters, and a clusters file with types by name.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/least_squares.hpp>
#include <dnnplan/fit/nonlinear.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>

#include <Eigen/Core>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
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

}  // namespace dnnplan
