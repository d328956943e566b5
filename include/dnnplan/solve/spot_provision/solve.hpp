#pragma once
// Spot provisioning with a deadline and a target loss (spotDNN, Shang et al., IWQoS 2023):
// the cheapest (or fastest) set of heterogeneous workers for asynchronous PS training.
//
//   solve(request)          the published models (eqs. (3), (6)-(9), (11)) built from the request's
//                           profile, over the catalog types that have a profile entry;
//   solve(request, models)  models of the host's own (any asynchronous_throughput_model,
//                           convergence_model and linear_cost_model), type k = catalog type k; the
//                           profile is not read.
// The problem types are in solve/spot_provision/problem.hpp; docs/solvers/spot_provision.md.

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/convergence.hpp>
#include <dnnplan/model/cost.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>
#include <dnnplan/solve/spot_provision/cluster_space.hpp>
#include <dnnplan/solve/spot_provision/exact.hpp>
#include <dnnplan/solve/spot_provision/exhaustive.hpp>
#include <dnnplan/solve/spot_provision/outcome.hpp>
#include <dnnplan/solve/spot_provision/sliding_window.hpp>
#include <dnnplan/solve/spot_provision/problem.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace dnnplan {

/// The three models a spot plan is computed with. `spotdnn_models` is the published configuration.
template <asynchronous_throughput_model Throughput, convergence_model Convergence, linear_cost_model Cost>
struct spot_models {
    Throughput throughput;
    Convergence convergence;
    Cost cost;
};

using spotdnn_models = spot_models<heterogeneous_ps_model, spotdnn_loss_model, instance_cost_model>;

/// Any asynchronous throughput model, convergence model and cost model, over a cluster space.
/// The search is the same whatever the models.
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

    /// The plan for `goals` with the method and budget of `options`. Expected outcomes are
    /// statuses; when no plan meets the deadline, the reason gives the fastest plan's time, and
    /// best_effort holds that plan (it misses the deadline).
    [[nodiscard]] search_outcome solve(const cluster_goals& goals, const spot_options& options) const {
        search_outcome out;
        if (!(goals.target_loss > convergence.loss_floor())) {
            out.status = solve_status::infeasible;
            out.reason = "target_loss " + detail::format_number(goals.target_loss) +
                         " is at or below the loss floor (gamma5 = " + detail::format_number(convergence.loss_floor()) +
                         "): no number of iterations reaches it";
            return out;
        }
        if (space.smallest_size() > space.largest_size()) {
            out.status = solve_status::infeasible;
            out.reason = "no cluster size is allowed: at least " + std::to_string(space.smallest_size()) +
                         " workers (existing instances, or one) but at most " + std::to_string(space.largest_size()) +
                         " (quotas and the size cap)";
            return out;
        }
        const exact_options exact{.budget = options.budget, .relative_gap = options.relative_gap};
        switch (options.method) {
            case search_method::exact: out = exact_search(throughput, convergence, cost, space, goals, exact); break;
            case search_method::exhaustive:
                out = exhaustive_search(throughput, convergence, cost, space, goals, options.budget);
                break;
            case search_method::sliding_window:
                out = sliding_window_search(throughput, convergence, cost, space, goals,
                                            {.paper_bounds = options.sliding_window.paper_bounds,
                                             .n_upper = options.sliding_window.paper_bounds ? n_upper : std::nullopt,
                                             .wrap_around = options.sliding_window.wrap_around},
                                            options.budget);
                break;
        }
        const bool no_plan = out.status == solve_status::infeasible || out.status == solve_status::no_plan_found;
        if (no_plan && out.limit == search_limit::none && std::isfinite(goals.deadline_s)) {
            const cluster_goals fastest_goals{.target_loss = goals.target_loss,
                                              .deadline_s = std::numeric_limits<double>::infinity(),
                                              .objective = objective_kind::min_time};
            const search_outcome fastest = exact_search(throughput, convergence, cost, space, fastest_goals, exact);
            if (fastest.status == solve_status::optimal && fastest.plan) {
                const double t = fastest.plan->prediction.training_time_s;
                out.reason += "; the fastest plan reaches target_loss " + detail::format_number(goals.target_loss) +
                              " in " + detail::format_number(t) + " s, " +
                              (t > goals.deadline_s ? "over" : "within") + " the deadline of " +
                              detail::format_number(goals.deadline_s) + " s";
                out.details.fastest_training_time_s = t;
                // The best one can do: it misses the deadline. Not when its cost overflows (a
                // billing increment near 1e308): a result holds finite figures or none.
                if (t > goals.deadline_s && std::isfinite(fastest.plan->prediction.cost_usd)) out.best_effort = fastest.plan;
                else if (t > goals.deadline_s) out.reason += " (its cost is too large for a double: no best_effort)";
            }
        }
        return out;
    }
};

/// The published configuration: eqs. (6)-(9) throughput, eq. (3) loss, eq. (11) cost.
using spotdnn_provisioner = async_provisioner<heterogeneous_ps_model, spotdnn_loss_model, instance_cost_model>;

/// The provisioner of a validated-on-entry request, and the catalog index of each model type
/// (the catalog types that have a profile.per_instance entry, in catalog order).
struct spotdnn_setup {
    spotdnn_provisioner provisioner;
    std::vector<std::size_t> catalog_index{};
    cluster_goals goals{};
};

/// Builds the published models from a request. Throws invalid_input for bad input, including a
/// measured speed faster than the communication time it must include.
[[nodiscard]] inline spotdnn_setup make_spotdnn_setup(const spot_request& request) {
    request.validate();
    const spot_problem& problem = request.problem;
    const spot_options& options = request.options;
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

namespace detail {

[[nodiscard]] inline spot_result to_spot_result(search_outcome&& outcome, const instance_catalog& catalog,
                                                const std::vector<std::size_t>& catalog_index) {
    return map_plans<spot_plan>(std::move(outcome), [&](cluster_plan&& p) {
        return spot_plan{.counts = to_catalog_counts(catalog, catalog_index, p.counts), .prediction = p.prediction};
    });
}

}  // namespace detail

/// The spot-provisioning planner with the published models: the cheapest (objective min_cost)
/// or fastest (min_time) set of workers that reaches the target loss within the deadline.
/// Throws invalid_input for bad input; every expected outcome is a status.
[[nodiscard]] inline spot_result solve(const spot_request& request) {
    const spotdnn_setup setup = make_spotdnn_setup(request);
    return detail::to_spot_result(setup.provisioner.solve(setup.goals, request.options), request.problem.catalog,
                                  setup.catalog_index);
}

/// The spot-provisioning planner with models of the host's own: model type k is catalog type k
/// (every catalog type is a candidate, up to its quota; existing instances are kept), the
/// request's profile is not read. options.cap_at_n_upper needs a throughput model with n_upper()
/// (capped_throughput_model). Throws invalid_input when a model's type_count() differs from the
/// catalog's ("models.throughput.type_count()").
template <asynchronous_throughput_model Throughput, convergence_model Convergence, linear_cost_model Cost>
[[nodiscard]] spot_result solve(const spot_request& request, const spot_models<Throughput, Convergence, Cost>& models) {
    request.problem.validate_without_profile();
    request.options.validate();
    const instance_catalog& catalog = request.problem.catalog;
    const std::size_t types = catalog.instances.size();
    if (static_cast<std::size_t>(models.throughput.type_count()) != types)
        throw invalid_input("models.throughput.type_count()",
                            std::to_string(static_cast<std::size_t>(models.throughput.type_count())),
                            "the number of catalog instance types (" + std::to_string(types) + ")");
    async_provisioner<Throughput, Convergence, Cost> provisioner{
        .throughput = models.throughput, .convergence = models.convergence, .cost = models.cost, .space = {}, .n_upper = {}};
    std::vector<std::size_t> index(types);
    for (std::size_t k = 0; k < types; ++k) {
        index[k] = k;
        const auto e = request.problem.existing.find(catalog.instances[k].name);
        provisioner.space.lower.push_back(e == request.problem.existing.end() ? 0 : e->second);
        provisioner.space.upper.push_back(catalog.instances[k].quota);
    }
    if constexpr (capped_throughput_model<Throughput>) provisioner.n_upper = models.throughput.n_upper();
    if (request.options.cap_at_n_upper) {
        if (!provisioner.n_upper)
            throw invalid_input("options.cap_at_n_upper", "true",
                                "false, or a throughput model whose n_upper() gives a cap (capped_throughput_model)");
        provisioner.space.max_workers = *provisioner.n_upper;
    }
    const cluster_goals goals{.target_loss = request.problem.goals.target_loss,
                              .deadline_s = request.problem.goals.deadline_s,
                              .objective = request.options.objective};
    return detail::to_spot_result(provisioner.solve(goals, request.options), catalog, index);
}

}  // namespace dnnplan
