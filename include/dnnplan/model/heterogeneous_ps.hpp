#pragma once
// Iteration time of heterogeneous workers sharing one parameter server, with PS-bandwidth and
// PCIe contention: spotDNN (Shang et al., IWQoS 2023), eqs. (6)-(9) and (15).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dnnplan {

/// PS-bandwidth contention, eq. (9): P = min(alpha1 * sqrt(n) + beta1, 1), clamped at 0.
struct contention_coefficients {
    double alpha1 = 0.0;
    double beta1 = 0.0;
};

/// The communication side of a PS job: what every worker shares.
struct ps_network {
    double parameter_bytes = 0.0;                 ///< S_parm
    double required_bandwidth_bytes_per_s = 0.0;  ///< B_req
    double ps_bandwidth_bytes_per_s = 0.0;        ///< B_ps
    double pcie_bandwidth_bytes_per_s = 0.0;      ///< B_pcie
    contention_coefficients contention{};           ///< alpha1, beta1 of eq. (9)

    void validate(std::string_view path = "network") const {
        const std::string base = detail::field_prefix(path);
        detail::require_positive(base + "parameter_bytes", parameter_bytes);
        detail::require_positive(base + "required_bandwidth_bytes_per_s", required_bandwidth_bytes_per_s);
        detail::require_positive(base + "ps_bandwidth_bytes_per_s", ps_bandwidth_bytes_per_s);
        detail::require_positive(base + "pcie_bandwidth_bytes_per_s", pcie_bandwidth_bytes_per_s);
        detail::require_finite(base + "contention.alpha1", contention.alpha1);
        detail::require_finite(base + "contention.beta1", contention.beta1);
    }
};

/// One worker type as the model sees it.
struct ps_worker_type {
    std::int32_t gpus = 1;       ///< g_i
    double worker_batch = 0.0;   ///< b_i = g_i * per-GPU batch (samples per iteration)
    double compute_s = 0.0;      ///< T_comp_i, the part of an iteration that is not communication
};

/// A worker type described by a measurement: one worker of this type training alone.
struct measured_worker_type {
    std::string name{};            ///< for error messages
    std::int32_t gpus = 1;
    double worker_batch = 0.0;
    double samples_per_s = 0.0;  ///< measured speed of one worker alone (n = 1)
};

/// spotDNN's heterogeneous PS throughput model. Immutable; evaluation is const noexcept and
/// allocation-free.
class heterogeneous_ps_model {
public:
    heterogeneous_ps_model(ps_network network, std::vector<ps_worker_type> types)
        : network_(network), types_(std::move(types)) {
        network_.validate();
        for (std::size_t k = 0; k < types_.size(); ++k) {
            const std::string at = "types[" + std::to_string(k) + "]";
            detail::require_at_least(at + ".gpus", types_[k].gpus, 1);
            detail::require_positive(at + ".worker_batch", types_[k].worker_batch);
            detail::require_positive(at + ".compute_s", types_[k].compute_s);
        }
    }

    /// Derives T_comp from a measured single-worker speed: T_comp = b / speed - T_comm(n = 1),
    /// removing eq. (7) at n = 1 from the measured iteration time. A measurement faster than
    /// its own communication time is an invalid_input naming
    /// `<path>.<name>.samples_per_s`.
    [[nodiscard]] static heterogeneous_ps_model from_measurements(ps_network network,
                                                                   const std::vector<measured_worker_type>& measured,
                                                                   std::string_view path = "profile.per_instance") {
        network.validate();
        std::vector<ps_worker_type> types;
        types.reserve(measured.size());
        for (const auto& m : measured) {
            const std::string at = detail::field_prefix(path) + m.name;
            detail::require_at_least(at + ".gpus", m.gpus, 1);
            detail::require_positive(at + ".worker_batch", m.worker_batch);
            detail::require_positive(at + ".samples_per_s", m.samples_per_s);
            const double measured_s = m.worker_batch / m.samples_per_s;
            const double comm_s = communication_time_s(network, m.gpus, 1);
            const double compute_s = measured_s - comm_s;
            if (!(compute_s > 0.0))
                throw invalid_input(at + ".samples_per_s", detail::format_number(m.samples_per_s),
                                    "a speed whose iteration time (" + detail::format_number(measured_s) +
                                        " s) exceeds the communication time of eq. (7) at n = 1 (" +
                                        detail::format_number(comm_s) + " s) for instance type " + m.name);
            types.push_back({.gpus = m.gpus, .worker_batch = m.worker_batch, .compute_s = compute_s});
        }
        return heterogeneous_ps_model(network, std::move(types));
    }

    [[nodiscard]] std::size_t type_count() const noexcept { return types_.size(); }
    [[nodiscard]] const ps_network& network() const noexcept { return network_; }
    [[nodiscard]] const ps_worker_type& type(std::size_t k) const noexcept { return types_[k]; }
    [[nodiscard]] double worker_batch(std::size_t k) const noexcept { return types_[k].worker_batch; }

    /// Eq. (9): P = min(alpha1 * sqrt(n) + beta1, 1), also clamped at 0 (a negative share of
    /// the PS bandwidth has no meaning).
    [[nodiscard]] static double contention_ratio(const ps_network& net, std::int64_t n) noexcept {
        const double p = net.contention.alpha1 * std::sqrt(static_cast<double>(n)) + net.contention.beta1;
        return std::clamp(p, 0.0, 1.0);
    }
    [[nodiscard]] double contention_ratio(std::int64_t n) const noexcept { return contention_ratio(network_, n); }

    /// Eq. (8): the bandwidth one worker gets when n workers share the PS.
    [[nodiscard]] static double worker_bandwidth_bytes_per_s(const ps_network& net, std::int64_t n) noexcept {
        const double share = net.ps_bandwidth_bytes_per_s / static_cast<double>(n);
        if (net.required_bandwidth_bytes_per_s <= share) return net.required_bandwidth_bytes_per_s;
        const double p = contention_ratio(net, n);
        return p * share + (1.0 - p) * net.required_bandwidth_bytes_per_s;
    }
    [[nodiscard]] double worker_bandwidth_bytes_per_s(std::int64_t n) const noexcept {
        return worker_bandwidth_bytes_per_s(network_, n);
    }

    /// Eq. (7): T_comm = 2 S / B_wk + 2 g S / B_pcie (push and pull through the PS, and the
    /// gradient aggregation over PCIe inside a g-GPU worker).
    [[nodiscard]] static double communication_time_s(const ps_network& net, std::int32_t gpus, std::int64_t n) noexcept {
        return 2.0 * net.parameter_bytes / worker_bandwidth_bytes_per_s(net, n) +
               2.0 * static_cast<double>(gpus) * net.parameter_bytes / net.pcie_bandwidth_bytes_per_s;
    }
    [[nodiscard]] double communication_time_s(std::size_t k, std::int64_t n) const noexcept {
        return communication_time_s(network_, types_[k].gpus, n);
    }

    /// Eq. (6): T_i = T_comp_i + T_comm_i for a worker of type k in a cluster of n workers.
    [[nodiscard]] double iteration_time_s(std::size_t k, std::int64_t n) const noexcept {
        return types_[k].compute_s + communication_time_s(k, n);
    }

    /// Eq. (15): floor(((1 - beta1) / alpha1)^2), the paper's cap, below which P < 1 (at an
    /// integer square P reaches 1 exactly at n_upper); none when alpha1 <= 0 (P never reaches 1).
    [[nodiscard]] std::optional<std::int64_t> n_upper() const noexcept {
        const auto& c = network_.contention;
        if (!(c.alpha1 > 0.0)) return std::nullopt;
        const double root = (1.0 - c.beta1) / c.alpha1;
        if (root <= 0.0) return std::int64_t{0};
        const double value = std::floor(root * root);
        if (value > 9.0e18) return std::nullopt;
        return static_cast<std::int64_t>(value);
    }

private:
    ps_network network_;
    std::vector<ps_worker_type> types_;
};

static_assert(asynchronous_throughput_model<heterogeneous_ps_model>);

}  // namespace dnnplan
