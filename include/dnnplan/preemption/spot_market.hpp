#pragma once
// Spot availability probed at a fixed gap, with the prices: at each tick, how many instances of
// one type could be launched in one region or zone, and the spot price; and the on-demand price.
// What the runtime deadline policy decides on (solve/deadline_policy/). No I/O: the readers are
// io/spot_market_csv.hpp (SkyNomad's CSV) and io/deadline_policy_json.hpp (Can't Be Late's JSON).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

struct spot_market_trace {
    std::string name{};                     ///< the region or zone, for reports
    double gap_s = 0.0;                     ///< seconds between ticks, > 0
    std::vector<std::int32_t> available{};  ///< instances that could be launched at each tick, >= 0
    /// The spot price (USD per instance-hour) at each tick, > 0; empty: none given (a price must
    /// then come from elsewhere before planning).
    std::vector<double> spot_usd_per_h{};
    std::optional<double> on_demand_usd_per_h{};  ///< > 0; none: not given

    [[nodiscard]] std::size_t size() const noexcept { return available.size(); }
    [[nodiscard]] bool has_prices() const noexcept { return !spot_usd_per_h.empty() && on_demand_usd_per_h.has_value(); }

    void validate(std::string_view path = "trace") const {
        const std::string p = detail::field_prefix(path);
        detail::require_utf8(p + "name", name);
        detail::require_positive(p + "gap_s", gap_s);
        if (available.empty()) throw invalid_input(p + "available", "[]", "at least one tick");
        for (std::size_t i = 0; i < available.size(); ++i)  // the path only when it is needed: 10^5 ticks are common
            if (available[i] < 0) detail::require_at_least(p + "available[" + std::to_string(i) + "]", available[i], 0);
        if (!spot_usd_per_h.empty() && spot_usd_per_h.size() != available.size())
            throw invalid_input(p + "spot_usd_per_h", std::to_string(spot_usd_per_h.size()) + " prices",
                                "one price per tick (" + std::to_string(available.size()) + ") or none");
        for (std::size_t i = 0; i < spot_usd_per_h.size(); ++i)
            if (!(std::isnormal(spot_usd_per_h[i]) && spot_usd_per_h[i] > 0.0))
                detail::require_positive(p + "spot_usd_per_h[" + std::to_string(i) + "]", spot_usd_per_h[i]);
        if (on_demand_usd_per_h) detail::require_positive(p + "on_demand_usd_per_h", *on_demand_usd_per_h);
    }
};

}  // namespace dnnplan
