#pragma once
// The spot-provisioning planner's vocabulary (spotDNN: Shang et al., IWQoS 2023): what was
// measured about the job (workload_profile: the inputs of the models of
// docs/models/heterogeneous-ps.md and docs/models/convergence.md), the goals, the problem, the
// options, the request and the result. The planner itself is solve/spot_provision/solve.hpp.

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/convergence.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>
#include <dnnplan/solve/spot_provision/outcome.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// A measurement of one instance type training alone against the parameter server.
struct instance_profile {
    std::int64_t per_gpu_batch = 0;  ///< samples per GPU per iteration (b_k)
    double samples_per_s = 0.0;      ///< measured speed of one worker of this type, alone
};

/// Profile of an asynchronous parameter-server training job (one PS, heterogeneous workers).
struct workload_profile {
    double parameter_bytes = 0.0;                  ///< S_parm
    double required_bandwidth_bytes_per_s = 0.0;   ///< B_req: what one worker uses alone
    double ps_bandwidth_bytes_per_s = 0.0;         ///< B_ps
    double pcie_bandwidth_bytes_per_s = 0.0;       ///< B_pcie inside a worker
    /// Measurements keyed by instance type name. Types without an entry are not candidates.
    std::map<std::string, instance_profile, std::less<>> per_instance{};
    contention_coefficients contention{};
    loss_coefficients loss{};

    /// Throws invalid_input naming the first bad field; does not check the per_instance names
    /// (that needs a catalog: the overload below).
    void validate(std::string_view path = "profile") const {
        const std::string base = detail::field_prefix(path);
        detail::require_positive(base + "parameter_bytes", parameter_bytes);
        detail::require_positive(base + "required_bandwidth_bytes_per_s", required_bandwidth_bytes_per_s);
        detail::require_positive(base + "ps_bandwidth_bytes_per_s", ps_bandwidth_bytes_per_s);
        detail::require_positive(base + "pcie_bandwidth_bytes_per_s", pcie_bandwidth_bytes_per_s);
        if (per_instance.empty())
            throw invalid_input(base + "per_instance", "{}", "a measurement for at least one instance type");
        for (const auto& [name, p] : per_instance) {
            const std::string at = base + "per_instance." + name;
            detail::require_at_least(at + ".per_gpu_batch", p.per_gpu_batch, 1);
            detail::require_positive(at + ".samples_per_s", p.samples_per_s);
        }
        detail::require_finite(base + "contention.alpha1", contention.alpha1);
        detail::require_finite(base + "contention.beta1", contention.beta1);
        detail::require_non_negative(base + "loss.gamma1", loss.gamma1);
        detail::require_finite(base + "loss.gamma2", loss.gamma2);
        detail::require_finite(base + "loss.gamma3", loss.gamma3);
        if (loss.gamma4) detail::require_non_negative(base + "loss.gamma4", *loss.gamma4);
        detail::require_finite(base + "loss.gamma5", loss.gamma5);
    }

    /// As above, and every per_instance key must name a type of `catalog`.
    void validate(const instance_catalog& catalog, std::string_view path = "profile") const {
        const std::string base = detail::field_prefix(path);
        for (const auto& [name, p] : per_instance)
            if (!catalog.find(name))
                throw invalid_input(base + "per_instance." + name, '"' + name + '"',
                                    "the name of an instance type in the catalog");
        validate(path);
    }
};

/// What the user wants: reach `target_loss` within `deadline_s` seconds of training.
struct training_goals {
    double target_loss = 0.0;
    double deadline_s = 0.0;

    void validate(std::string_view path = "goals") const {
        const std::string base = detail::field_prefix(path);
        detail::require_finite(base + "target_loss", target_loss);
        detail::require_positive(base + "deadline_s", deadline_s);
    }
};

/// The settings of the sliding-window heuristic (search_method::sliding_window).
struct spot_sliding_window {
    /// Sizes n in [n_lower, n_upper] of eqs. (15)-(16), as the paper does (otherwise every n from
    /// 1 to the number of available instances, as the artifact does).
    bool paper_bounds = true;
    /// Windows wrap around the end of the sorted list (the artifact).
    bool wrap_around = false;
};

struct spot_options {
    price_kind pricing = price_kind::spot;
    /// Billing granularity: the billed time is the training time rounded up to a multiple of
    /// this (1 s: per-second billing; 0: continuous).
    double billing_increment_s = 1.0;
    objective_kind objective = objective_kind::min_cost;  ///< min_cost or min_time
    search_method method = search_method::exact;          ///< exact, exhaustive or sliding_window
    /// Restrict cluster sizes to n <= n_upper of eq. (15), as the paper does. Off by default:
    /// the cap is a heuristic of the paper, not a constraint of the problem.
    bool cap_at_n_upper = false;
    spot_sliding_window sliding_window{};
    /// Every method's limits (core/status.hpp); the fastest-plan search of an infeasible answer
    /// has the same.
    search_budget budget{};
    /// exact only: a subtree is cut when its bound >= incumbent * (1 - relative_gap).
    double relative_gap = 1e-9;

    void validate(std::string_view path = "options") const {
        const std::string base = detail::field_prefix(path);
        detail::require_non_negative(base + "billing_increment_s", billing_increment_s);
        if (objective != objective_kind::min_cost && objective != objective_kind::min_time)
            throw invalid_input(base + "objective", '"' + std::string(to_string(objective)) + '"',
                                "\"min_cost\" or \"min_time\"");
        budget.validate(base + "budget");
        if (!(relative_gap >= 0.0 && relative_gap < 1.0))
            throw invalid_input(base + "relative_gap", detail::format_number(relative_gap), "a number in [0, 1)");
    }
};

struct spot_problem {
    instance_catalog catalog{};
    workload_profile profile{};
    training_goals goals{};
    /// Instances already running that the plan must keep (the re-plan after a revocation):
    /// name -> count. They count against the quota and are billed.
    std::map<std::string, std::int32_t, std::less<>> existing{};

    /// Everything but the profile, which only the published models read (a planner given models
    /// of its own does not need one).
    void validate_without_profile(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        catalog.validate(p + "catalog");
        goals.validate(p + "goals");
        for (const auto& [name, count] : existing) {
            const std::string at = p + "existing." + name;
            const auto index = catalog.find(name);
            if (!index) throw invalid_input(at, '"' + name + '"', "the name of an instance type in the catalog");
            detail::require_at_least(at, count, 0);
            if (count > catalog.instances[*index].quota)
                throw invalid_input(at, std::to_string(count),
                                    "at most the quota of " + name + " (" +
                                        std::to_string(catalog.instances[*index].quota) + ")");
        }
    }

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        validate_without_profile(path);
        profile.validate(catalog, p + "profile");
        for (const auto& [name, count] : existing)
            if (!profile.per_instance.contains(name))
                throw invalid_input(p + "existing." + name, '"' + name + '"',
                                    "an instance type with a profile.per_instance entry");
    }
};

/// What the planner is asked: the problem and the options (a problem file holds both).
struct spot_request {
    spot_problem problem{};
    spot_options options{};

    /// Fields named from `path` ("" at a document root: "catalog.instances[0].quota",
    /// "options.relative_gap").
    void validate(std::string_view path = "") const {
        problem.validate(path);
        options.validate(detail::field_prefix(path) + "options");
    }
};

/// A named count, as reported in plans.
struct type_count {
    std::string name{};
    std::int32_t count = 0;
    friend bool operator==(const type_count&, const type_count&) = default;
};

/// A spot plan: the count of every catalog type (catalog order) and the models' figures.
struct spot_plan {
    std::vector<type_count> counts{};
    cluster_prediction prediction{};
    friend bool operator==(const spot_plan&, const spot_plan&) = default;
};

/// objective_value: the plan's cost_usd (min_cost) or training_time_s (min_time); bound: a
/// proven lower bound on it over every plan (none for the sliding window, or when infeasible).
/// details.fastest_training_time_s: when no plan meets the goals (infeasible, or the heuristic's
/// no_plan_found without a limit) and the deadline is finite, the shortest training time any plan
/// reaches, proven by an exact search (above the deadline for infeasible); best_effort is then
/// that fastest plan when it misses the deadline.
using spot_result = solve_result<spot_plan, cluster_search_details>;

}  // namespace dnnplan
