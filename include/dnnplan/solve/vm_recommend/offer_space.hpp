#pragma once
// The offer space the VM recommender searches (Srifty: Luo et al., MLSys 2022), as both of its
// searches read it (solve/vm_recommend/branch_and_bound.hpp, solve/vm_recommend/exhaustive.hpp):
// the space after validation, a configuration's figures and feasibility, the objective as a key,
// and what a search hands back (the shared incumbent of search/search_core.hpp, or the exact
// Pareto frontier of search/pareto.hpp).
//
// The search space: a count x[k][kind] >= 0 per offer (an allowed instance type k, an allowed
// price kind) with
//   x[k][spot] + x[k][on_demand] <= quota[k]          (the quota is shared by both price kinds)
//   sum of all counts <= max_instances                 (when max_instances > 0)
//   number of types with a positive count <= max_distinct_types   (when > 0)
//   sum of all counts >= 1.
// A configuration is feasible when its predicted speed r = samples_per_s(counts per type) is > 0
// and >= min_samples_per_s, its price P <= max_usd_per_h, with a deadline work / r <= deadline_s,
// and its figures are finite.

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/search/pareto.hpp>
#include <dnnplan/solve/vm_recommend/problem.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace dnnplan::detail {

/// The inputs of a search, after validation: what both methods read.
struct vm_space {
    std::size_t k_count = 0;
    std::vector<std::int32_t> quota;       ///< 0 for a type not allowed (or with no allowed kind)
    std::vector<double> spot_usd_per_h;    ///< +inf when spot is not allowed
    std::vector<double> on_demand_usd_per_h;
    std::vector<double> gpus;
    std::int64_t max_instances = 0;        ///< effective cap (sum of quotas without one)
    std::int64_t max_distinct = 0;         ///< effective cap (k_count without one)
    double work = 0.0;
    double min_samples_per_s = 0.0;
    double deadline_s = std::numeric_limits<double>::infinity();
    double max_usd_per_h = std::numeric_limits<double>::infinity();
    objective_kind objective = objective_kind::min_cost;

    [[nodiscard]] double cheapest(std::size_t k) const noexcept {
        return std::min(spot_usd_per_h[k], on_demand_usd_per_h[k]);
    }
    [[nodiscard]] price_kind cheapest_kind(std::size_t k) const noexcept {
        return spot_usd_per_h[k] <= on_demand_usd_per_h[k] ? price_kind::spot : price_kind::on_demand;
    }
};

/// The space of `problem` priced by `cost` (an offer_cost_model: +inf for an offer it does not
/// sell); the constraints' allowed types and price kinds remove offers.
template <offer_cost_model Cost>
[[nodiscard]] vm_space make_vm_space(const vm_problem& problem, const Cost& cost) {
    vm_space s;
    const auto& types = problem.catalog.instances;
    const auto& c = problem.constraints;
    s.k_count = types.size();
    const double inf = std::numeric_limits<double>::infinity();
    std::int64_t quota_sum = 0;
    for (std::size_t k = 0; k < types.size(); ++k) {
        const auto& t = types[k];
        const double spot = c.allows(price_kind::spot) ? cost.usd_per_h(k, price_kind::spot) : inf;
        const double on_demand = c.allows(price_kind::on_demand) ? cost.usd_per_h(k, price_kind::on_demand) : inf;
        const bool type_ok = c.allows(t.name) && (std::isfinite(spot) || std::isfinite(on_demand));
        s.quota.push_back(type_ok ? t.quota : 0);
        s.spot_usd_per_h.push_back(spot);
        s.on_demand_usd_per_h.push_back(on_demand);
        s.gpus.push_back(static_cast<double>(t.gpus));
        quota_sum += s.quota.back();
    }
    s.max_instances = c.max_instances > 0 ? std::min<std::int64_t>(c.max_instances, quota_sum) : quota_sum;
    s.max_distinct = c.max_distinct_types > 0 ? std::min<std::int64_t>(c.max_distinct_types, static_cast<std::int64_t>(s.k_count))
                                              : static_cast<std::int64_t>(s.k_count);
    s.work = problem.work.total_samples();
    s.min_samples_per_s = c.min_samples_per_s;
    s.deadline_s = c.deadline_s;
    s.max_usd_per_h = c.max_usd_per_h;
    s.objective = problem.objective;
    return s;
}

/// Price of a configuration given as counts per offer (2k: spot, 2k + 1: on demand), summed in
/// type order: the branch and bound (all of a type at one kind) and the oracle get the same bits
/// for the same configuration.
[[nodiscard]] inline double vm_price(const vm_space& s, std::span<const std::int32_t> offer_counts) noexcept {
    double price = 0.0;
    for (std::size_t k = 0; k < s.k_count; ++k) {
        const std::int32_t spot = offer_counts[2 * k], on_demand = offer_counts[2 * k + 1];
        double type_price = 0.0;
        if (spot > 0) type_price += static_cast<double>(spot) * s.spot_usd_per_h[k];
        if (on_demand > 0) type_price += static_cast<double>(on_demand) * s.on_demand_usd_per_h[k];
        price += type_price;
    }
    return price;
}

[[nodiscard]] inline vm_figures vm_make_figures(const vm_space& s, std::span<const std::int32_t> type_counts,
                                                double samples_per_s, double usd_per_h) noexcept {
    vm_figures f;
    for (std::size_t k = 0; k < s.k_count; ++k) {
        f.instances += type_counts[k];
        f.gpus += static_cast<std::int64_t>(type_counts[k]) * static_cast<std::int64_t>(s.gpus[k]);
    }
    f.samples_per_s = samples_per_s;
    f.usd_per_h = usd_per_h;
    f.samples_per_usd = 3600.0 * samples_per_s / usd_per_h;
    if (s.work > 0.0) {
        f.time_s = s.work / samples_per_s;
        f.cost_usd = *f.time_s * usd_per_h / 3600.0;
    }
    return f;
}

/// Every figure finite: a configuration whose figures overflow a double (a price too small for
/// its speed, say) is not a plan.
[[nodiscard]] inline bool vm_finite(const vm_figures& f) noexcept {
    return std::isfinite(f.samples_per_s) && std::isfinite(f.usd_per_h) && std::isfinite(f.samples_per_usd) &&
           (!f.time_s || std::isfinite(*f.time_s)) && (!f.cost_usd || std::isfinite(*f.cost_usd));
}

[[nodiscard]] inline bool vm_feasible(const vm_space& s, const vm_figures& f) noexcept {
    if (!(f.samples_per_s > 0.0) || !std::isfinite(f.samples_per_s)) return false;
    if (f.samples_per_s < s.min_samples_per_s) return false;
    if (f.usd_per_h > s.max_usd_per_h) return false;
    if (f.time_s && *f.time_s > s.deadline_s) return false;
    return true;
}

/// The objective as a key to minimise: min_cost as is, the max_ objectives negated.
[[nodiscard]] inline double vm_key(const vm_space& s, const vm_figures& f) noexcept {
    switch (s.objective) {
        case objective_kind::max_throughput: return -f.samples_per_s;
        case objective_kind::max_samples_per_usd: return -f.samples_per_usd;
        case objective_kind::min_cost:
        case objective_kind::min_time: break;  // min_time is rejected by vm_problem::validate
    }
    return f.cost_usd ? *f.cost_usd : f.usd_per_h;
}

/// Frontier coordinates, both minimised: (time_s, cost_usd) with work, (-samples_per_s, usd_per_h) without.
[[nodiscard]] inline std::pair<double, double> vm_frontier_point(const vm_figures& f) noexcept {
    if (f.time_s) return {*f.time_s, *f.cost_usd};
    return {-f.samples_per_s, f.usd_per_h};
}

/// A configuration as the searches hold it: counts per offer (2k: spot, 2k + 1: on demand), per
/// type, and its figures.
struct vm_point {
    std::vector<std::int32_t> offer_counts;
    std::vector<std::int32_t> type_counts;
    vm_figures figures;
};

struct vm_frontier_payload {
    std::vector<std::int32_t> offer_counts;
    vm_figures figures;
};

[[nodiscard]] inline vm_configuration vm_make_configuration(const instance_catalog& catalog,
                                                            std::span<const std::int32_t> offer_counts,
                                                            const vm_figures& figures) {
    vm_configuration c;
    for (std::size_t k = 0; k < catalog.instances.size(); ++k) {
        if (offer_counts[2 * k] > 0)
            c.offers.push_back({.type = catalog.instances[k].name, .kind = price_kind::spot, .count = offer_counts[2 * k]});
        if (offer_counts[2 * k + 1] > 0)
            c.offers.push_back(
                {.type = catalog.instances[k].name, .kind = price_kind::on_demand, .count = offer_counts[2 * k + 1]});
    }
    c.figures = figures;
    return c;
}

/// What a search hands back to the planner.
struct vm_search_outcome {
    search_limit limit = search_limit::none;  ///< the budget that stopped the search; none: it ran to its end
    double unexplored_key_lb = std::numeric_limits<double>::infinity();  ///< bound of subtrees not searched
    incumbent<vm_point> best;
    pareto_frontier<vm_frontier_payload> frontier;
    search_counters counters;
    std::int64_t non_finite = 0;  ///< configurations whose figures overflowed (not plans)
};

/// Offers a feasible configuration to the outcome (the incumbent, or the frontier).
inline void vm_offer(vm_search_outcome& out, const vm_space& s, bool pareto, std::span<const std::int32_t> offers,
                     std::span<const std::int32_t> types, const vm_figures& f) {
    if (!vm_feasible(s, f)) return;
    if (!vm_finite(f)) {
        ++out.non_finite;
        return;
    }
    if (pareto) {
        const auto [a, b] = vm_frontier_point(f);
        out.frontier.offer(a, b, vm_frontier_payload{.offer_counts = {offers.begin(), offers.end()}, .figures = f});
    } else {
        out.best.offer(vm_key(s, f), [&](vm_point& p) {
            p.offer_counts.assign(offers.begin(), offers.end());
            p.type_counts.assign(types.begin(), types.end());
            p.figures = f;
        });
    }
}

}  // namespace dnnplan::detail
