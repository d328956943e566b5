#pragma once
// Spot provisioning with a deadline and a target loss (spotDNN, Shang et al., IWQoS 2023):
// the cheapest (or fastest) set of heterogeneous workers for asynchronous PS training.

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/prediction.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/workload.hpp>
#include <dnnplan/detail/validate.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dnnplan {

enum class spot_method {
    exact,           ///< branch and bound with proven bounds (docs/solvers/exact.md)
    exhaustive,      ///< every cluster in the space: the oracle
    sliding_window,  ///< the paper's Algorithm 1 (docs/solvers/sliding-window.md)
};

enum class search_objective { minimize_cost, minimize_time };

struct spot_options {
    price_kind pricing = price_kind::spot;
    /// Billing granularity: the billed time is the training time rounded up to a multiple of
    /// this (1 s: per-second billing; 0: continuous).
    double billing_increment_s = 1.0;
    search_objective objective = search_objective::minimize_cost;
    spot_method method = spot_method::exact;
    /// Restrict cluster sizes to n <= n_upper of eq. (15), as the paper does. Off by default:
    /// the cap is a heuristic of the paper, not a constraint of the problem.
    bool cap_at_n_upper = false;
    /// Sliding window only: take n in [n_lower, n_upper] of eqs. (15)-(16) as the paper does
    /// (otherwise every n from 1 to the number of available instances, as the artifact does).
    bool sliding_window_paper_bounds = true;
    /// Sliding window only: windows wrap around the end of the sorted list (the artifact).
    bool sliding_window_wrap_around = false;
    std::int64_t node_budget = 0;  ///< exact only: most nodes to open (0: unlimited)
    double time_budget_s = 0.0;    ///< exact only: wall-clock budget (0: unlimited)
    /// exact only: a subtree is cut when its bound >= incumbent * (1 - relative_gap).
    double relative_gap = 1e-9;

    void validate(std::string_view path = "options") const {
        const std::string base(path);
        detail::require_non_negative(base + ".billing_increment_s", billing_increment_s);
        detail::require_at_least(base + ".node_budget", node_budget, 0);
        detail::require_non_negative(base + ".time_budget_s", time_budget_s);
        if (!(relative_gap >= 0.0 && relative_gap < 1.0))
            throw invalid_input(base + ".relative_gap", detail::format_number(relative_gap), "a number in [0, 1)");
    }
};

struct spot_problem {
    instance_catalog catalog;
    workload_profile profile;
    training_goals goals;
    /// Instances already running that the plan must keep (the re-plan after a revocation):
    /// name -> count. They count against the quota and are billed.
    std::map<std::string, std::int32_t, std::less<>> existing;

    void validate(std::string_view path = "") const {
        const std::string p = path.empty() ? std::string() : std::string(path) + ".";
        catalog.validate(p + "catalog");
        profile.validate(catalog, p + "profile");
        goals.validate(p + "goals");
        for (const auto& [name, count] : existing) {
            const std::string at = p + "existing." + name;
            const auto index = catalog.find(name);
            if (!index) throw invalid_input(at, '"' + name + '"', "the name of an instance type in the catalog");
            if (!profile.per_instance.contains(name))
                throw invalid_input(at, '"' + name + '"', "an instance type with a profile.per_instance entry");
            detail::require_at_least(at, count, 0);
            if (count > catalog.instances[*index].quota)
                throw invalid_input(at, std::to_string(count),
                                    "at most the quota of " + name + " (" +
                                        std::to_string(catalog.instances[*index].quota) + ")");
        }
    }
};

/// A problem file: the problem and the options it asks for.
struct spot_request {
    spot_problem problem;
    spot_options options;
};

struct spot_result {
    solve_status status = solve_status::infeasible;
    std::string reason;  ///< why, for every status but optimal
    /// Counts for every catalog type, catalog order (empty when there is no plan).
    std::vector<type_count> counts;
    std::optional<cluster_prediction> prediction;  ///< figures of the plan, if there is one
    /// Proven lower bound on the objective (cost in USD, or time in s) over all plans; equals
    /// the plan's value when optimal, +inf when infeasible. Heuristics report 0 (no proof).
    double lower_bound = 0.0;
    /// When infeasible because of the deadline: the shortest training time any plan reaches.
    std::optional<double> fastest_training_time_s;
    search_counters counters;
};

}  // namespace dnnplan
