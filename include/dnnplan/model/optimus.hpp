#pragma once
// Optimus's parameter-server speed models and loss curve: Y. Peng, Y. Bao, Y. Chen, C. Wu,
// C. Guo, "Optimus: An Efficient Dynamic Resource Scheduler for Deep Learning Clusters",
// EuroSys 2018, Section 4 (eqs. (3)-(4) for speed, eq. (1) for the loss curve). Fitted by
// fit/optimus.hpp.

#include <dnnplan/core/detail/validate.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace dnnplan {

/// Synchronous training, p parameter servers, w workers, global batch M (Optimus eq. (3)):
/// f(p, w) = 1 / (theta0 * M / w + theta1 + theta2 * w / p + theta3 * w + theta4 * p) steps/s.
/// theta0: compute time per sample; theta1: fixed overhead; theta2: PS transfer per worker
/// per PS; theta3, theta4: per-worker and per-PS overheads. All >= 0.
struct optimus_sync_speed {
    double theta0 = 0.0, theta1 = 0.0, theta2 = 0.0, theta3 = 0.0, theta4 = 0.0;
    double global_batch = 0.0;  ///< M, samples per step

    void validate(std::string_view path = "optimus_sync") const {
        const std::string b = detail::field_prefix(path);
        detail::require_non_negative(b + "theta0", theta0);
        detail::require_non_negative(b + "theta1", theta1);
        detail::require_non_negative(b + "theta2", theta2);
        detail::require_non_negative(b + "theta3", theta3);
        detail::require_non_negative(b + "theta4", theta4);
        detail::require_positive(b + "global_batch", global_batch);
    }
    /// Steps per second; requires p, w >= 1 (+inf when every theta is 0).
    [[nodiscard]] double steps_per_s(std::int64_t p, std::int64_t w) const noexcept {
        const double pp = static_cast<double>(p), ww = static_cast<double>(w);
        return 1.0 / (theta0 * global_batch / ww + theta1 + theta2 * ww / pp + theta3 * ww + theta4 * pp);
    }
};

/// Asynchronous training (Optimus eq. (4)): f(p, w) = w / (theta0 + theta1 * w / p + theta2 * w
/// + theta3 * p) steps/s summed over the w workers. All theta >= 0.
struct optimus_async_speed {
    double theta0 = 0.0, theta1 = 0.0, theta2 = 0.0, theta3 = 0.0;

    void validate(std::string_view path = "optimus_async") const {
        const std::string b = detail::field_prefix(path);
        detail::require_non_negative(b + "theta0", theta0);
        detail::require_non_negative(b + "theta1", theta1);
        detail::require_non_negative(b + "theta2", theta2);
        detail::require_non_negative(b + "theta3", theta3);
    }
    [[nodiscard]] double steps_per_s(std::int64_t p, std::int64_t w) const noexcept {
        const double pp = static_cast<double>(p), ww = static_cast<double>(w);
        return ww / (theta0 + theta1 * ww / pp + theta2 * ww + theta3 * pp);
    }
};

/// Training loss after k steps (Optimus eq. (1)): l(k) = 1 / (beta0 * k + beta1) + beta2,
/// beta >= 0 (and beta0 * k + beta1 > 0).
struct optimus_loss_curve {
    double beta0 = 0.0, beta1 = 0.0, beta2 = 0.0;

    void validate(std::string_view path = "optimus_loss") const {
        const std::string b = detail::field_prefix(path);
        detail::require_non_negative(b + "beta0", beta0);
        detail::require_positive(b + "beta1", beta1);
        detail::require_non_negative(b + "beta2", beta2);
    }
    [[nodiscard]] double loss(double k) const noexcept { return 1.0 / (beta0 * k + beta1) + beta2; }
    /// Steps until the loss is at most `target`: 0 if it already is, +inf if target <= beta2
    /// or the curve is flat (beta0 = 0) above the target.
    [[nodiscard]] double steps_to_reach(double target) const noexcept {
        if (loss(0.0) <= target) return 0.0;
        if (!(target > beta2) || !(beta0 > 0.0)) return std::numeric_limits<double>::infinity();
        return (1.0 / (target - beta2) - beta1) / beta0;
    }
};

}  // namespace dnnplan
