#pragma once
// The set of clusters a search ranges over: a count per instance type between a lower bound
// (instances that must be kept) and an upper bound (the quota), and a range of cluster sizes.

#include <dnnplan/core/error.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace dnnplan {

struct cluster_space {
    std::vector<std::int32_t> lower{};  ///< per type: at least this many (existing instances)
    std::vector<std::int32_t> upper{};  ///< per type: at most this many (quota)
    std::int64_t min_workers = 1;     ///< smallest cluster size n
    std::int64_t max_workers = std::numeric_limits<std::int64_t>::max();  ///< largest n

    void validate(std::string_view path = "space") const {
        const std::string base = detail::field_prefix(path);
        if (lower.size() != upper.size())
            throw invalid_input(base + "lower", std::to_string(lower.size()) + " entries",
                                "as many entries as upper (" + std::to_string(upper.size()) + ")");
        for (std::size_t k = 0; k < lower.size(); ++k) {
            detail::require_at_least(base + "lower[" + std::to_string(k) + "]", lower[k], 0);
            detail::require_at_least(base + "upper[" + std::to_string(k) + "]", upper[k], lower[k]);
        }
        detail::require_at_least(base + "min_workers", min_workers, 1);
    }

    [[nodiscard]] std::size_t type_count() const noexcept { return lower.size(); }

    /// Cluster sizes that the bounds allow: [max(min_workers, sum lower), min(max_workers, sum upper)].
    [[nodiscard]] std::int64_t smallest_size() const noexcept {
        std::int64_t sum = 0;
        for (const auto v : lower) sum += v;
        return std::max(min_workers, sum);
    }
    [[nodiscard]] std::int64_t largest_size() const noexcept {
        std::int64_t sum = 0;
        for (const auto v : upper) sum += v;
        return std::min(max_workers, sum);
    }

    [[nodiscard]] bool contains(std::span<const std::int32_t> counts) const noexcept {
        if (counts.size() != lower.size()) return false;
        std::int64_t n = 0;
        for (std::size_t k = 0; k < counts.size(); ++k) {
            if (counts[k] < lower[k] || counts[k] > upper[k]) return false;
            n += counts[k];
        }
        return n >= min_workers && n <= max_workers;
    }

    /// Number of count vectors in the box (all sizes), as a double: it can exceed 2^64.
    [[nodiscard]] double box_size() const noexcept {
        double size = 1.0;
        for (std::size_t k = 0; k < lower.size(); ++k) size *= static_cast<double>(upper[k] - lower[k] + 1);
        return size;
    }

    /// Calls f(std::span<const std::int32_t> counts, std::int64_t n) for every cluster of the
    /// space, in odometer order (type 0 fastest). One vector is allocated for the whole walk.
    template <class F>
    void for_each(F&& f) const {
        for_each_until([&](std::span<const std::int32_t> counts, std::int64_t n) {
            if (n >= min_workers && n <= max_workers) f(counts, n);
            return true;
        });
    }

    /// Calls `visit(counts, n)` for every count vector of the box (every size, in odometer order,
    /// type 0 fastest) until it returns false; returns whether the walk completed. For searches
    /// that count the vectors they visit against a budget.
    template <class Visit>
    bool for_each_until(Visit&& visit) const {
        const std::size_t k_count = lower.size();
        if (k_count == 0) return true;
        cluster_counts counts(lower);
        std::int64_t n = 0;
        for (const auto v : counts) n += v;
        while (true) {
            if (!visit(std::span<const std::int32_t>(counts), n)) return false;
            std::size_t k = 0;
            while (k < k_count && counts[k] == upper[k]) {
                n -= counts[k] - lower[k];
                counts[k] = lower[k];
                ++k;
            }
            if (k == k_count) return true;
            ++counts[k];
            ++n;
        }
    }
};

}  // namespace dnnplan
