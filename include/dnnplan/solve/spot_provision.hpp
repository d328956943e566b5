#pragma once
// Spot provisioning with a deadline and a target loss (spotDNN, Shang et al., IWQoS 2023):
// the cheapest (or fastest) set of heterogeneous workers for asynchronous PS training.

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/prediction.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/workload.hpp>
#include <dnnplan/detail/validate.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/convergence.hpp>
#include <dnnplan/model/cost.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>
#include <dnnplan/search/cluster_space.hpp>
#include <dnnplan/search/exact.hpp>
#include <dnnplan/search/exhaustive.hpp>
#include <dnnplan/search/outcome.hpp>
#include <dnnplan/search/sliding_window.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dnnplan {

enum class spot_method {
    exact,           ///< branch and bound with proven bounds (docs/solvers/exact.md)
    exhaustive,      ///< every cluster in the space: the oracle
    sliding_window,  ///< the paper's Algorithm 1 (docs/solvers/sliding-window.md)
};

[[nodiscard]] constexpr std::string_view to_string(spot_method m) noexcept {
    switch (m) {
        case spot_method::exact: return "exact";
        case spot_method::exhaustive: return "exhaustive";
        case spot_method::sliding_window: return "sliding_window";
    }
    return "unknown";
}

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
        const std::string base = detail::field_prefix(path);
        detail::require_non_negative(base + "billing_increment_s", billing_increment_s);
        detail::require_at_least(base + "node_budget", node_budget, 0);
        detail::require_non_negative(base + "time_budget_s", time_budget_s);
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

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
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
    spot_problem problem{};
    spot_options options{};
};

struct spot_result {
    solve_status status = solve_status::infeasible;
    std::string reason{};  ///< why, for every status but optimal
    /// Counts for every catalog type, catalog order (empty when there is no plan).
    std::vector<type_count> counts{};
    std::optional<cluster_prediction> prediction{};  ///< figures of the plan, if there is one
    /// Proven lower bound on the objective (cost in USD, or time in s) over all plans; equals
    /// the plan's value when optimal, +inf when infeasible. Heuristics report 0 (no proof).
    double lower_bound = 0.0;
    /// When no plan was found (infeasible, or the heuristic's not_found): the shortest training
    /// time any plan reaches, proven by an exact search. Above the deadline for infeasible.
    std::optional<double> fastest_training_time_s{};
    search_counters counters{};
};

/// Any asynchronous throughput model, convergence model and cost model, over a cluster space.
/// The search is the same whatever the models; `spotdnn_provisioner` is the published
/// configuration.
template <asynchronous_throughput_model Throughput, convergence_model Convergence, linear_cost_model Cost>
struct async_provisioner {
    Throughput throughput;
    Convergence convergence;
    Cost cost;
    cluster_space space{};
    std::optional<std::int64_t> n_upper{};  ///< eq. (15) when the throughput model defines it

    /// Figures of one cluster (counts in model type order). Allocation-free.
    [[nodiscard]] cluster_prediction predict(std::span<const std::int32_t> counts, double target_loss) const noexcept {
        return predict_cluster(throughput, convergence, cost, counts, target_loss);
    }

    /// The plan for `goals` with the method and objective of `options`. Expected outcomes are
    /// statuses; when no plan meets the deadline, the reason gives the fastest plan's time.
    [[nodiscard]] search_outcome solve(const cluster_goals& goals, const spot_options& options) const {
        search_outcome out;
        if (!(goals.target_loss > convergence.loss_floor())) {
            out.status = solve_status::infeasible;
            out.lower_bound = std::numeric_limits<double>::infinity();
            out.reason = "target_loss " + detail::format_number(goals.target_loss) +
                         " is at or below the loss floor (gamma5 = " + detail::format_number(convergence.loss_floor()) +
                         "): no number of iterations reaches it";
            return out;
        }
        if (space.smallest_size() > space.largest_size()) {
            out.status = solve_status::infeasible;
            out.lower_bound = std::numeric_limits<double>::infinity();
            out.reason = "no cluster size is allowed: at least " + std::to_string(space.smallest_size()) +
                         " workers (existing instances, or one) but at most " + std::to_string(space.largest_size()) +
                         " (quotas and the size cap)";
            return out;
        }
        const exact_options exact{.node_budget = options.node_budget,
                                  .time_budget_s = options.time_budget_s,
                                  .relative_gap = options.relative_gap};
        switch (options.method) {
            case spot_method::exact: out = exact_search(throughput, convergence, cost, space, goals, exact); break;
            case spot_method::exhaustive: out = exhaustive_search(throughput, convergence, cost, space, goals); break;
            case spot_method::sliding_window:
                out = sliding_window_search(throughput, convergence, cost, space, goals,
                                            {.paper_bounds = options.sliding_window_paper_bounds,
                                             .n_upper = options.sliding_window_paper_bounds ? n_upper : std::nullopt,
                                             .wrap_around = options.sliding_window_wrap_around});
                break;
        }
        if ((out.status == solve_status::infeasible || out.status == solve_status::not_found) &&
            std::isfinite(goals.deadline_s)) {
            const cluster_goals fastest_goals{.target_loss = goals.target_loss,
                                              .deadline_s = std::numeric_limits<double>::infinity(),
                                              .objective = search_objective::minimize_time};
            const search_outcome fastest = exact_search(throughput, convergence, cost, space, fastest_goals, exact);
            if (fastest.status == solve_status::optimal && fastest.prediction) {
                const double t = fastest.prediction->training_time_s;
                out.reason += "; the fastest plan reaches target_loss " + detail::format_number(goals.target_loss) +
                              " in " + detail::format_number(t) + " s, " +
                              (t > goals.deadline_s ? "over" : "within") + " the deadline of " +
                              detail::format_number(goals.deadline_s) + " s";
                out.fastest_training_time_s = t;
            }
        }
        return out;
    }
};

/// The published configuration: eqs. (6)-(9) throughput, eq. (3) loss, eq. (11) cost.
using spotdnn_provisioner = async_provisioner<heterogeneous_ps_model, spotdnn_loss_model, instance_cost_model>;

/// The provisioner of a validated-on-entry problem, and the catalog index of each model type
/// (the catalog types that have a profile.per_instance entry, in catalog order).
struct spotdnn_setup {
    spotdnn_provisioner provisioner;
    std::vector<std::size_t> catalog_index{};
    cluster_goals goals{};
};

/// Builds the published models from a problem. Throws invalid_input for bad input, including a
/// measured speed faster than the communication time it must include.
[[nodiscard]] inline spotdnn_setup make_spotdnn_setup(const spot_problem& problem, const spot_options& options) {
    problem.validate();
    options.validate();
    const spotdnn_loss_model convergence(problem.profile.loss);
    std::vector<std::size_t> index;
    std::vector<measured_worker_type> measured;
    for (std::size_t i = 0; i < problem.catalog.instances.size(); ++i) {
        const auto& type = problem.catalog.instances[i];
        const auto it = problem.profile.per_instance.find(type.name);
        if (it == problem.profile.per_instance.end()) continue;
        index.push_back(i);
        const double worker_batch = static_cast<double>(type.gpus) * static_cast<double>(it->second.per_gpu_batch);
        convergence.require_batch_in_range(worker_batch, "profile.per_instance." + type.name + ".per_gpu_batch",
                                           std::to_string(it->second.per_gpu_batch));
        measured.push_back({.name = type.name,
                            .gpus = type.gpus,
                            .worker_batch = worker_batch,
                            .samples_per_s = it->second.samples_per_s});
    }
    const auto& pr = problem.profile;
    heterogeneous_ps_model throughput = heterogeneous_ps_model::from_measurements(
        {.parameter_bytes = pr.parameter_bytes,
         .required_bandwidth_bytes_per_s = pr.required_bandwidth_bytes_per_s,
         .ps_bandwidth_bytes_per_s = pr.ps_bandwidth_bytes_per_s,
         .pcie_bandwidth_bytes_per_s = pr.pcie_bandwidth_bytes_per_s,
         .contention = pr.contention},
        measured);
    cluster_space space;
    for (const std::size_t i : index) {
        const auto& type = problem.catalog.instances[i];
        const auto e = problem.existing.find(type.name);
        space.lower.push_back(e == problem.existing.end() ? 0 : e->second);
        space.upper.push_back(type.quota);
    }
    const std::optional<std::int64_t> n_upper = throughput.n_upper();
    if (options.cap_at_n_upper) {
        if (!n_upper)
            throw invalid_input("options.cap_at_n_upper", "true",
                                "false, or profile.contention.alpha1 > 0 (eq. (15) defines n_upper only then)");
        space.max_workers = *n_upper;
    }
    instance_cost_model cost =
        instance_cost_model::from_catalog(problem.catalog, index, options.pricing, options.billing_increment_s);
    return {.provisioner = {.throughput = std::move(throughput),
                            .convergence = convergence,
                            .cost = std::move(cost),
                            .space = std::move(space),
                            .n_upper = n_upper},
            .catalog_index = std::move(index),
            .goals = {.target_loss = problem.goals.target_loss,
                      .deadline_s = problem.goals.deadline_s,
                      .objective = options.objective}};
}

/// Counts in model type order -> counts for every catalog type, by name.
[[nodiscard]] inline std::vector<type_count> to_catalog_counts(const instance_catalog& catalog,
                                                               const std::vector<std::size_t>& catalog_index,
                                                               std::span<const std::int32_t> counts) {
    std::vector<type_count> out;
    out.reserve(catalog.instances.size());
    for (const auto& type : catalog.instances) out.push_back({.name = type.name, .count = 0});
    for (std::size_t k = 0; k < counts.size() && k < catalog_index.size(); ++k) out[catalog_index[k]].count = counts[k];
    return out;
}

/// The spot-provisioning planner: the cheapest (or, with search_objective::minimize_time, the
/// fastest) set of workers that reaches the target loss within the deadline.
[[nodiscard]] inline spot_result solve(const spot_problem& problem, const spot_options& options) {
    const spotdnn_setup setup = make_spotdnn_setup(problem, options);
    search_outcome outcome = setup.provisioner.solve(setup.goals, options);
    spot_result result;
    result.status = outcome.status;
    result.reason = std::move(outcome.reason);
    if (!outcome.counts.empty()) result.counts = to_catalog_counts(problem.catalog, setup.catalog_index, outcome.counts);
    result.prediction = outcome.prediction;
    result.lower_bound = outcome.lower_bound;
    result.fastest_training_time_s = outcome.fastest_training_time_s;
    result.counters = outcome.counters;
    return result;
}

}  // namespace dnnplan
