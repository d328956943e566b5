#pragma once
// Cost of a cluster for a training time: spotDNN (Shang et al., IWQoS 2023), eq. (11),
// C = T * sum_m n_m * p_m, with the time rounded up to the billing increment.

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace dnnplan {

/// Per-instance hourly prices (spot or on-demand), an optional fixed part (the parameter
/// server) and a billing increment (1 s: per-second billing; 0: continuous).
class instance_cost_model {
public:
    instance_cost_model(std::vector<double> type_usd_per_h, double fixed_usd_per_h, double billing_increment_s)
        : prices_(std::move(type_usd_per_h)), fixed_(fixed_usd_per_h), increment_(billing_increment_s) {
        for (std::size_t k = 0; k < prices_.size(); ++k)
            detail::require_non_negative("type_usd_per_h[" + std::to_string(k) + "]", prices_[k]);
        detail::require_non_negative("fixed_usd_per_h", fixed_);
        detail::require_non_negative("billing_increment_s", increment_);
    }

    /// Prices of the catalog types `indices` (in that order) under `pricing`.
    [[nodiscard]] static instance_cost_model from_catalog(const instance_catalog& catalog,
                                                          const std::vector<std::size_t>& indices,
                                                          price_kind pricing, double billing_increment_s) {
        std::vector<double> prices;
        prices.reserve(indices.size());
        for (const std::size_t i : indices) prices.push_back(catalog.instances[i].usd_per_h(pricing));
        return instance_cost_model(std::move(prices), catalog.parameter_server_usd_per_h, billing_increment_s);
    }

    [[nodiscard]] std::size_t type_count() const noexcept { return prices_.size(); }
    [[nodiscard]] double type_usd_per_h(std::size_t k) const noexcept { return prices_[k]; }
    [[nodiscard]] double fixed_usd_per_h() const noexcept { return fixed_; }
    [[nodiscard]] double billing_increment_s() const noexcept { return increment_; }

    /// The time that is billed: `seconds` rounded up to a multiple of the increment. When the
    /// number of increments is too large for a double (an increment far below the time's last
    /// digit), rounding up changes nothing: `seconds` is billed.
    [[nodiscard]] double billed_s(double seconds) const noexcept {
        if (increment_ <= 0.0) return seconds;
        const double increments = std::ceil(seconds / increment_);
        if (!std::isfinite(increments)) return seconds;
        return std::max(seconds, increments * increment_);
    }

    /// The price per hour of a cluster: fixed + sum_m n_m * p_m.
    [[nodiscard]] double usd_per_h(std::span<const std::int32_t> counts) const noexcept {
        double total = fixed_;
        for (std::size_t k = 0; k < counts.size(); ++k) total += static_cast<double>(counts[k]) * prices_[k];
        return total;
    }

    /// Eq. (11) on the billed time.
    [[nodiscard]] double cost_usd(std::span<const std::int32_t> counts, double seconds) const noexcept {
        return billed_s(seconds) * usd_per_h(counts) / 3600.0;
    }

private:
    std::vector<double> prices_;
    double fixed_;
    double increment_;
};

static_assert(linear_cost_model<instance_cost_model>);

/// The catalog's prices per offer (instance type k at a price kind), what the VM recommender pays
/// by default: an offer_cost_model.
class catalog_offer_cost {
public:
    explicit catalog_offer_cost(const instance_catalog& catalog) {
        catalog.validate();
        for (const auto& t : catalog.instances) {
            spot_.push_back(t.spot_usd_per_h);
            on_demand_.push_back(t.on_demand_usd_per_h);
        }
    }

    [[nodiscard]] std::size_t type_count() const noexcept { return spot_.size(); }
    [[nodiscard]] double usd_per_h(std::size_t k, price_kind kind) const noexcept {
        return kind == price_kind::spot ? spot_[k] : on_demand_[k];
    }

private:
    std::vector<double> spot_, on_demand_;
};

static_assert(offer_cost_model<catalog_offer_cost>);

}  // namespace dnnplan
