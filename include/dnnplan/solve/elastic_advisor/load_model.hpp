#pragma once
// The elastic advisor's default throughput model (an elastic_throughput_model,
// solve/elastic_advisor/concepts.hpp): the asynchronous PS model with load-driven contention,
// fit_ps_async with contention_model load (fit/ps_async.hpp: spotDNN's eqs. (6)-(7), Shang et al.,
// IWQoS 2023, with the closed queueing network of model/ps_load_contention.hpp), fitted online to
// one mean speed per measured configuration, with its prediction intervals; and the PS load it
// implies. docs/solvers/elastic_advisor.md, "The model", states the rules and why.
//
// PS load at configuration c (P PS, n workers) running at X steps/s, for parameter exchanges of
// 2 S bytes per step:
//   utilisation  U = X 2 S / (P B_ps)   (the utilisation law U = X D with demand D = 2 S / B_ps per
//                                         step over P servers; Lazowska et al., "Quantitative System
//                                         Performance", 1984, sec. 3.2)
//   bottleneck   P B_ps / (2 S) < n / (Z + 2 S / B_req)   (the PS's capacity is below what the
//                                         workers alone would ask of it: the asymptotic bound of the
//                                         closed network, ibid., sec. 5.2)

#include <dnnplan/core/error.hpp>
#include <dnnplan/fit/ps_async.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/solve/elastic_advisor/concepts.hpp>
#include <dnnplan/solve/elastic_advisor/problem.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dnnplan {

namespace detail::elastic {

/// The share of the PS's fitted capacity in use at `steps_per_s`: X 2 S / (P B_ps) (top of this header).
[[nodiscard]] inline double ps_utilisation(double steps_per_s, std::int32_t ps, const ps_network& fitted) noexcept {
    return steps_per_s * 2.0 * fitted.parameter_bytes / (ps * fitted.ps_bandwidth_bytes_per_s);
}

/// The load-contention fit on one mean speed per configuration (records of the same configuration
/// are not independent measurements: their mean is one). Speeds per worker within `speed_noise` of
/// each other are read as no contention (ps_async_fit_options::no_contention_spread: B_ps pinned at
/// 1e6 B_req, the optimistic guess; with one configuration this always holds, dof 0); otherwise a
/// gap within the noise would be extrapolated into a saturated PS. Throws invalid_input
/// ("measured") when nothing is measured.
[[nodiscard]] inline ps_async_fit_result fit_load_contention(const measured_speeds& mean, const ps_async_fit_options& fit_options,
                                                            double speed_noise = 0.0) {
    if (mean.empty()) throw invalid_input("measured", "{}", "at least one measured configuration");
    std::vector<ps_cluster_sample> samples;
    for (const auto& [c, speed] : mean)
        samples.push_back({.counts = {c.workers}, .iterations_per_s = speed, .parameter_servers = c.ps});
    ps_async_fit_options options = fit_options;
    options.contention_model = ps_contention_model::load;
    options.no_contention_spread = speed_noise;
    return fit_ps_async({ps_async_worker_type{.name = "worker", .gpus = 1, .worker_batch = 1.0}}, samples, options);
}

}  // namespace detail::elastic

/// The load-contention model fitted to one job's speeds (ps_load_contention_model::fit).
class ps_load_contention_fit {
public:
    /// `ps_bandwidth_given`: B_ps was pinned by the options, not by the fitter's rule.
    ps_load_contention_fit(ps_async_fit_result fit, measured_speeds measured, bool ps_bandwidth_given)
        : fit_(std::move(fit)), measured_(std::move(measured)) {
        contention_unseen_ = !ps_bandwidth_given && std::any_of(fit_.pinned.begin(), fit_.pinned.end(), [](const pinned_parameter& p) {
                                 return p.name == "ps_bandwidth_bytes_per_s";
                             });
    }

    /// The fit's prediction interval of c's speed (fit/quality.hpp, delta method). A fit that has
    /// seen no contention (B_ps pinned at its optimistic guess, not given) says nothing of a PS
    /// loaded beyond every measured one, with more workers per PS: no lower end there (0).
    [[nodiscard]] interval predict(const ps_configuration& c, double confidence) const {
        const std::array<std::int32_t, 1> counts{c.workers};
        interval i = predict_ps_async(fit_, counts, c.ps, confidence);
        if (!std::isfinite(i.lower) || beyond_seen_load(c)) i.lower = 0.0;
        return i;
    }

    /// The PS's utilisation and bottleneck at c (top of this header).
    [[nodiscard]] ps_load_state ps_load_at(const ps_configuration& c, double steps_per_s) const noexcept {
        const double two_s = 2.0 * fit_.network.parameter_bytes;
        const double capacity = c.ps * fit_.network.ps_bandwidth_bytes_per_s / two_s;
        const double demand = c.workers / (compute_s() + two_s / fit_.network.required_bandwidth_bytes_per_s);
        return {.utilisation = detail::elastic::ps_utilisation(steps_per_s, c.ps, fit_.network), .bottleneck = capacity < demand};
    }

    /// Z (the compute time with the PCIe transfers), B_ps, B_req and the parameters pinned by a
    /// rule (alpha1 and beta1 of eq. (9) are not part of the load model and not listed).
    [[nodiscard]] ps_fit_parameters parameters() const {
        ps_fit_parameters out{.compute_s = compute_s(),
                              .ps_bandwidth_bytes_per_s = fit_.network.ps_bandwidth_bytes_per_s,
                              .required_bandwidth_bytes_per_s = fit_.network.required_bandwidth_bytes_per_s};
        for (const auto& p : fit_.pinned)
            if (p.name != "alpha1" && p.name != "beta1") out.pinned.push_back(p.name + ": " + p.reason);
        return out;
    }

    [[nodiscard]] const ps_async_fit_result& result() const noexcept { return fit_; }

private:
    [[nodiscard]] double compute_s() const noexcept {
        return fit_.compute_s.front() + 2.0 * fit_.network.parameter_bytes / fit_.network.pcie_bandwidth_bytes_per_s;
    }
    /// More workers per PS than every measured configuration, while the fit has seen no contention.
    [[nodiscard]] bool beyond_seen_load(const ps_configuration& c) const {
        return contention_unseen_ && std::all_of(measured_.begin(), measured_.end(), [&](const auto& m) {
                   return std::int64_t{c.workers} * m.first.ps > std::int64_t{m.first.workers} * c.ps;
               });
    }

    ps_async_fit_result fit_;
    measured_speeds measured_;
    bool contention_unseen_ = false;
};

/// The default model of the elastic advisor: fits the load-contention model with the request's
/// options.fit, reading speeds per worker within options.speed_noise as no contention.
struct ps_load_contention_model {
    [[nodiscard]] ps_load_contention_fit fit(const measured_speeds& measured, const elastic_options& options) const {
        return {detail::elastic::fit_load_contention(measured, options.fit, options.speed_noise), measured,
                options.fit.ps_bandwidth_bytes_per_s.has_value()};
    }
};

static_assert(elastic_throughput_model<ps_load_contention_model>);
static_assert(ps_parameter_fit<ps_load_contention_fit>);

}  // namespace dnnplan
