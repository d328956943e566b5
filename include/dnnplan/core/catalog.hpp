#pragma once
// Cloud instance types and the catalog a planner chooses from (the spot, VM and resilience
// planners share it).

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// Which price of an instance type applies.
enum class price_kind { spot, on_demand };

template <>
struct enum_text<price_kind> {
    static constexpr std::array<enum_name<price_kind>, 2> names{{
        {price_kind::spot, "spot"},
        {price_kind::on_demand, "on_demand"},
    }};
};

struct instance_type {
    std::string name{};
    std::int32_t gpus = 1;            ///< GPUs per instance (each runs one model replica's share)
    std::int32_t quota = 0;           ///< most instances of this type the account may run at once
    double spot_usd_per_h = 0.0;
    double on_demand_usd_per_h = 0.0;
    std::optional<double> gpu_memory_bytes{};  ///< per GPU; only needed for eq. (10) (model/memory.hpp)

    [[nodiscard]] double usd_per_h(price_kind p) const noexcept {
        return p == price_kind::spot ? spot_usd_per_h : on_demand_usd_per_h;
    }
};

struct instance_catalog {
    std::vector<instance_type> instances{};
    /// Price of the parameter-server instance, paid for the whole training time (0: not billed).
    double parameter_server_usd_per_h = 0.0;

    /// Index of the type called `name`, if any.
    [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const noexcept {
        for (std::size_t i = 0; i < instances.size(); ++i)
            if (instances[i].name == name) return i;
        return std::nullopt;
    }

    /// Throws invalid_input naming a bad field: each type's fields in order, then the names'
    /// uniqueness (the first repetition in list order). `path` prefixes field names.
    void validate(std::string_view path = "catalog") const {
        const std::string base = detail::field_prefix(path);
        if (instances.empty())
            throw invalid_input(base + "instances", "[]", "at least one instance type");
        for (std::size_t i = 0; i < instances.size(); ++i) {
            const auto& t = instances[i];
            // The path is built only when a check fails (path_builder).
            const auto at = [&](std::string_view leaf) {
                return [&base, i, leaf] { return base + "instances[" + std::to_string(i) + "]" + std::string(leaf); };
            };
            if (t.name.empty()) throw invalid_input(at(".name")(), "\"\"", "a non-empty name");
            detail::require_at_least(at(".gpus"), t.gpus, 1);
            detail::require_at_least(at(".quota"), t.quota, 0);
            detail::require_positive(at(".spot_usd_per_h"), t.spot_usd_per_h);
            detail::require_positive(at(".on_demand_usd_per_h"), t.on_demand_usd_per_h);
            if (t.gpu_memory_bytes) detail::require_positive(at(".gpu_memory_bytes"), *t.gpu_memory_bytes);
        }
        // Names are unique: sorted (name, index) pairs, one allocation; the error names the first
        // repetition in file order.
        std::vector<std::pair<std::string_view, std::size_t>> names;
        names.reserve(instances.size());
        for (std::size_t i = 0; i < instances.size(); ++i) names.emplace_back(instances[i].name, i);
        std::sort(names.begin(), names.end());
        std::optional<std::size_t> repeated;
        for (std::size_t k = 1; k < names.size(); ++k)
            if (names[k].first == names[k - 1].first && (!repeated || names[k].second < *repeated)) repeated = names[k].second;
        if (repeated)
            throw invalid_input(base + "instances[" + std::to_string(*repeated) + "].name", '"' + instances[*repeated].name + '"',
                                "a name not used by another instance type");
        detail::require_non_negative(base + "parameter_server_usd_per_h", parameter_server_usd_per_h);
    }
};

}  // namespace dnnplan
