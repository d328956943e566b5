#pragma once
// Loss after j normalized iterations of asynchronous training: spotDNN (Shang et al.,
// IWQoS 2023), eq. (3), with the convergence coefficient of eq. (5).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace dnnplan {

/// Loss model, eq. (3): f = (gamma2*b_w + gamma3) * sqrt((R + gamma4) * n) / (j + gamma1) + gamma5.
/// Without gamma4 the convergence-coefficient term is absent: sqrt(n) (the artifact's form).
struct loss_coefficients {
    double gamma1 = 0.0;  ///< iteration offset, >= 0
    double gamma2 = 0.0;
    double gamma3 = 0.0;
    std::optional<double> gamma4{};  ///< >= 0 when present
    double gamma5 = 0.0;  ///< asymptotic loss
};

/// f_loss = (gamma2*b_w + gamma3) * sqrt((R + gamma4) * n) / (j + gamma1) + gamma5, eq. (3).
/// Without gamma4 the convergence-coefficient term is off: sqrt(n) (the released artifact's
/// form). The constructor checks gamma1 >= 0 and gamma4 >= 0 (the minorant's proof needs
/// them) and that the others are finite, naming "loss.<field>".
class spotdnn_loss_model {
public:
    explicit spotdnn_loss_model(const loss_coefficients& c) : c_(c) {
        detail::require_non_negative("loss.gamma1", c.gamma1);
        detail::require_finite("loss.gamma2", c.gamma2);
        detail::require_finite("loss.gamma3", c.gamma3);
        if (c.gamma4) detail::require_non_negative("loss.gamma4", *c.gamma4);
        detail::require_finite("loss.gamma5", c.gamma5);
    }

    /// Eq. (3) describes a loss that decays towards gamma5 only while gamma2*b + gamma3 > 0;
    /// for a larger (gamma2 < 0) batch the fitted curve says the loss is at or below its
    /// asymptote before any iteration, which is outside the range it was fitted on. Since b_w is
    /// a weighted average of the worker batches, checking every worker batch covers every
    /// cluster. Throws invalid_input naming `field` with `value` (the input that set the batch).
    void require_batch_in_range(double worker_batch, const std::string& field, const std::string& value) const {
        const double numerator = c_.gamma2 * worker_batch + c_.gamma3;
        if (!(numerator > 0.0))
            throw invalid_input(field, value,
                                "a batch whose worker batch b (here " + detail::format_number(worker_batch) +
                                    ") has gamma2 * b + gamma3 > 0 (here " + detail::format_number(numerator) +
                                    "): eq. (3) is outside its fitted range, the loss would start at or below gamma5");
    }

    [[nodiscard]] const loss_coefficients& coefficients() const noexcept { return c_; }
    [[nodiscard]] bool uses_convergence_coefficient() const noexcept { return c_.gamma4.has_value(); }
    [[nodiscard]] double loss_floor() const noexcept { return c_.gamma5; }

    /// The factor sqrt((R + gamma4) * n), or sqrt(n) without gamma4.
    [[nodiscard]] double spread_factor(std::int64_t n, double r) const noexcept {
        const double nn = static_cast<double>(n);
        return c_.gamma4 ? std::sqrt((r + *c_.gamma4) * nn) : std::sqrt(nn);
    }

    /// Eq. (3): the loss after j normalized iterations.
    [[nodiscard]] double loss(std::int64_t n, double wa_batch, double r, double j) const noexcept {
        return (c_.gamma2 * wa_batch + c_.gamma3) * spread_factor(n, r) / (j + c_.gamma1) + c_.gamma5;
    }

    /// Eq. (3) solved for j: the iterations after which the loss is at most `target`;
    /// 0 when the loss at j = 0 already is. +inf when target <= gamma5 (unreachable).
    [[nodiscard]] double iterations_to_reach(double target, std::int64_t n, double wa_batch, double r) const noexcept {
        if (!(target > c_.gamma5)) return std::numeric_limits<double>::infinity();
        const double j = (c_.gamma2 * wa_batch + c_.gamma3) * spread_factor(n, r) / (target - c_.gamma5) - c_.gamma1;
        return std::max(j, 0.0);
    }

    /// For every R >= r_lower: iterations_to_reach >= max(0, intercept + slope * b_w).
    /// Proof (docs/models/convergence.md): with A = gamma2*b_w + gamma3 and
    /// G(R) = spread_factor(n, R) / (target - gamma5), j = max(0, A*G(R) - gamma1). G grows with
    /// R, so for A >= 0, A*G(R) >= A*G(r_lower); for A < 0 both sides are <= -gamma1 <= 0.
    [[nodiscard]] affine_in_batch iterations_minorant(double target, std::int64_t n, double r_lower) const noexcept {
        if (!(target > c_.gamma5)) {
            const double inf = std::numeric_limits<double>::infinity();
            return {.intercept = inf, .slope = 0.0};
        }
        const double g = spread_factor(n, r_lower) / (target - c_.gamma5);
        return {.intercept = c_.gamma3 * g - c_.gamma1, .slope = c_.gamma2 * g};
    }

private:
    loss_coefficients c_;
};

static_assert(convergence_model<spotdnn_loss_model>);

}  // namespace dnnplan
