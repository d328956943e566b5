#pragma once
// The VM recommender's vocabulary (Srifty: Luo et al., MLSys 2022): the work, the constraints,
// the problem, the options and the result. The search is solve/vm_recommend/branch_and_bound.hpp, the
// planner solve/vm_recommend/solve.hpp; docs/solvers/vm_recommend.md.

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// The work to finish: `samples`, or `epochs` passes over `dataset_samples` (at most one form).
struct vm_work {
    double samples = 0.0;          ///< 0: not given this way
    double epochs = 0.0;           ///< 0: not given this way
    double dataset_samples = 0.0;  ///< samples per epoch; needed with epochs

    [[nodiscard]] double total_samples() const noexcept { return samples > 0.0 ? samples : epochs * dataset_samples; }
    [[nodiscard]] bool given() const noexcept { return total_samples() > 0.0; }

    void validate(std::string_view path = "work") const {
        const std::string base = detail::field_prefix(path);
        detail::require_non_negative(base + "samples", samples);
        detail::require_non_negative(base + "epochs", epochs);
        detail::require_non_negative(base + "dataset_samples", dataset_samples);
        if (samples > 0.0 && epochs > 0.0)
            throw invalid_input(base + "epochs", detail::format_number(epochs),
                                "0 when work.samples is given (one form of the work)");
        if (epochs > 0.0 && !(dataset_samples > 0.0))
            throw invalid_input(base + "dataset_samples", detail::format_number(dataset_samples),
                                "a number > 0 when work.epochs is given");
        if (!std::isfinite(total_samples()))
            throw invalid_input(base + "epochs", detail::format_number(epochs),
                                "epochs * dataset_samples finite");
    }
};

struct vm_constraints {
    double max_usd_per_h = std::numeric_limits<double>::infinity();  ///< +inf: no budget
    double min_samples_per_s = 0.0;
    double deadline_s = std::numeric_limits<double>::infinity();  ///< +inf: none; needs work
    std::int32_t max_instances = 0;       ///< 0: quotas only
    std::int32_t max_distinct_types = 0;  ///< 0: no limit
    std::vector<std::string> allowed_types{};  ///< empty: every catalog type
    std::vector<price_kind> allowed_price_kinds{price_kind::spot, price_kind::on_demand};

    /// What can be checked without the catalog and the work: the ranges, and no name or price kind
    /// listed twice.
    void validate(std::string_view path = "constraints") const { validate(instance_catalog{}, true, path, false); }

    void validate(const instance_catalog& catalog, bool work_given, std::string_view path = "constraints",
                  bool check_names = true) const {
        const std::string base = detail::field_prefix(path);
        if (!(max_usd_per_h > 0.0) || std::isnan(max_usd_per_h))
            throw invalid_input(base + "max_usd_per_h", detail::format_number(max_usd_per_h), "a number > 0 (or +inf)");
        detail::require_non_negative(base + "min_samples_per_s", min_samples_per_s);
        if (!(deadline_s > 0.0) || std::isnan(deadline_s))
            throw invalid_input(base + "deadline_s", detail::format_number(deadline_s), "a number > 0 (or +inf)");
        if (std::isfinite(deadline_s) && !work_given)
            throw invalid_input(base + "deadline_s", detail::format_number(deadline_s),
                                "+inf (no deadline) unless work is given (work.samples or work.epochs)");
        detail::require_at_least(base + "max_instances", max_instances, 0);
        detail::require_at_least(base + "max_distinct_types", max_distinct_types, 0);
        for (std::size_t i = 0; i < allowed_types.size(); ++i) {
            const std::string at = base + "allowed_types[" + std::to_string(i) + "]";
            if (check_names && !catalog.find(allowed_types[i]))
                throw invalid_input(at, '"' + allowed_types[i] + '"', "the name of an instance type in the catalog");
            for (std::size_t j = 0; j < i; ++j)
                if (allowed_types[j] == allowed_types[i])
                    throw invalid_input(at, '"' + allowed_types[i] + '"', "a name not listed twice");
        }
        if (allowed_price_kinds.empty())
            throw invalid_input(base + "allowed_price_kinds", "[]", "at least one of \"spot\", \"on_demand\"");
        for (std::size_t i = 0; i < allowed_price_kinds.size(); ++i) {
            const auto kind = allowed_price_kinds[i];
            if (kind != price_kind::spot && kind != price_kind::on_demand)
                throw invalid_input(base + "allowed_price_kinds[" + std::to_string(i) + "]", "?", "\"spot\" or \"on_demand\"");
            for (std::size_t j = 0; j < i; ++j)
                if (allowed_price_kinds[j] == kind)
                    throw invalid_input(base + "allowed_price_kinds[" + std::to_string(i) + "]",
                                        '"' + std::string(to_string(kind)) + '"', "a price kind not listed twice");
        }
    }

    [[nodiscard]] bool allows(std::string_view type) const noexcept {
        return allowed_types.empty() || std::find(allowed_types.begin(), allowed_types.end(), type) != allowed_types.end();
    }
    [[nodiscard]] bool allows(price_kind kind) const noexcept {
        return std::find(allowed_price_kinds.begin(), allowed_price_kinds.end(), kind) != allowed_price_kinds.end();
    }
};

/// Everything but the throughput model (which is a template argument of recommend_vms): the
/// model's type k is catalog.instances[k].
struct vm_problem {
    instance_catalog catalog{};
    vm_work work{};
    vm_constraints constraints{};
    /// min_cost (USD for the work when work is given, else USD/h), max_throughput (samples/s) or
    /// max_samples_per_usd (3600 r / P).
    objective_kind objective = objective_kind::min_cost;

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        catalog.validate(p + "catalog");
        work.validate(p + "work");
        constraints.validate(catalog, work.given(), p + "constraints");
        if (objective == objective_kind::min_time)
            throw invalid_input(p + "objective", "\"min_time\"",
                                "\"min_cost\", \"max_throughput\" or \"max_samples_per_usd\" (with work, min_time is "
                                "max_throughput)");
    }
};

struct vm_options {
    search_method method = search_method::exact;  ///< exact (branch and bound) or exhaustive (the oracle)
    bool pareto = false;                          ///< also compute the exact Pareto frontier
    search_budget budget{};                       ///< per search (the frontier's has its own)
    double relative_gap = 1e-9;                   ///< cut a subtree whose bound is within this of the incumbent

    void validate(std::string_view path = "options") const {
        const std::string base = detail::field_prefix(path);
        if (method != search_method::exact && method != search_method::exhaustive)
            throw invalid_input(base + "method", '"' + std::string(to_string(method)) + '"',
                                "\"exact\" or \"exhaustive\"");
        budget.validate(base + "budget");
        if (!(relative_gap >= 0.0 && relative_gap < 1.0))
            throw invalid_input(base + "relative_gap", detail::format_number(relative_gap), "a number in [0, 1)");
    }
};

/// Instances of one offer in a configuration.
struct vm_offer_count {
    std::string type{};
    price_kind kind = price_kind::spot;
    std::int32_t count = 0;
    friend bool operator==(const vm_offer_count&, const vm_offer_count&) = default;
};

/// Predicted figures of one configuration.
struct vm_figures {
    std::int64_t instances = 0;
    std::int64_t gpus = 0;
    double samples_per_s = 0.0;
    double usd_per_h = 0.0;
    double samples_per_usd = 0.0;            ///< 3600 r / P
    std::optional<double> time_s{};          ///< work / r, when work is given
    std::optional<double> cost_usd{};        ///< time_s * P / 3600, when work is given
    friend bool operator==(const vm_figures&, const vm_figures&) = default;
};

struct vm_configuration {
    std::vector<vm_offer_count> offers{};  ///< positive counts only, catalog order, spot first
    vm_figures figures{};
    friend bool operator==(const vm_configuration&, const vm_configuration&) = default;
};

struct vm_details {
    search_method method = search_method::exact;  ///< the method that ran (exhaustive for a model without a bound)
    /// With options.pareto: the exact frontier, fastest first. With work: time_s ascending,
    /// cost_usd descending; without: samples_per_s descending, usd_per_h descending.
    std::vector<vm_configuration> frontier{};
    /// optimal: the exact frontier; feasible: a limit stopped its search (frontier_limit), the
    /// points found so far; none: not asked.
    std::optional<solve_status> frontier_status{};
    search_limit frontier_limit = search_limit::none;
    search_counters frontier_counters{};
    friend bool operator==(const vm_details&, const vm_details&) = default;
};

/// objective_value in the objective's unit (USD or USD/h for min_cost, samples/s, samples/USD);
/// bound: a lower bound for min_cost, an upper bound for the max_ objectives (when optimal, equal
/// to objective_value: proven within options.relative_gap, the cut tolerance; none when
/// infeasible).
using vm_result = solve_result<vm_configuration, vm_details>;

}  // namespace dnnplan
