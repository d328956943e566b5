#pragma once
// The VM recommender's exhaustive oracle (Srifty: Luo et al., MLSys 2022): every configuration of
// the offer space of solve/vm_recommend/offer_space.hpp, each price kind of each type counted on
// its own. The search of a model without a linear bound, and what the branch and bound
// (solve/vm_recommend/branch_and_bound.hpp) is tested against.

#include <dnnplan/core/status.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/solve/vm_recommend/offer_space.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace dnnplan::detail {

/// Every configuration of the offer space: an odometer over the allowed offers' counts that never
/// leaves the space (a type's offers share its quota, at most max_instances in all), so the work
/// is the number of configurations, whatever the quotas. O(prod (quota_k + 1)^2) configurations;
/// the budget bounds the configurations visited (nodes) and evaluated.
template <cluster_throughput_model M>
[[nodiscard]] vm_search_outcome vm_exhaustive(const M& model, const vm_space& s, bool pareto,
                                              const search_budget& budget) {
    vm_search_outcome out;
    std::vector<std::size_t> offers;  // offer indices 2k + kind that are allowed
    for (std::size_t k = 0; k < s.k_count; ++k) {
        if (s.quota[k] <= 0) continue;
        if (std::isfinite(s.spot_usd_per_h[k])) offers.push_back(2 * k);
        if (std::isfinite(s.on_demand_usd_per_h[k])) offers.push_back(2 * k + 1);
    }
    std::vector<std::int32_t> x(2 * s.k_count, 0), types(s.k_count, 0);
    if (offers.empty()) return out;
    budget_guard guard(budget);
    std::int64_t total = 0, distinct = 0;
    while (true) {
        if (guard.exhausted(out.counters)) {
            out.limit = guard.limit();
            out.unexplored_key_lb = -std::numeric_limits<double>::infinity();
            break;
        }
        // Next configuration: the first offer that can take one more instance (its type's quota
        // and max_instances allow it) goes up by one; the offers before it go back to 0.
        std::size_t i = 0;
        for (; i < offers.size(); ++i) {
            const std::size_t o = offers[i], k = o / 2;
            if (types[k] < s.quota[k] && total < s.max_instances) {
                if (types[k] == 0) ++distinct;
                ++x[o];
                ++types[k];
                ++total;
                break;
            }
            const bool had = types[k] > 0;
            total -= x[o];
            types[k] -= x[o];
            x[o] = 0;
            if (had && types[k] == 0) --distinct;
        }
        if (i == offers.size()) break;  // wrapped around to all zeros: done
        ++out.counters.nodes;
        if (distinct > s.max_distinct) continue;
        ++out.counters.evaluations;
        const double r = model.samples_per_s(std::span<const std::int32_t>(types));
        vm_offer(out, s, pareto, x, types, vm_make_figures(s, types, r, vm_price(s, x)));
    }
    out.counters.elapsed_s = guard.elapsed_s();
    return out;
}

}  // namespace dnnplan::detail
