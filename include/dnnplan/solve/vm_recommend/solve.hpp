#pragma once
// VM recommendation (Srifty: Luo et al., "SRIFTY: Swift and Thrifty Distributed Neural Network
// Training on the Cloud", MLSys 2022): given a throughput model of a training job on any mix of
// instance types, a catalog with spot and on-demand prices and quotas, constraints and an
// objective, the best set of VMs with a proof, or the exact cost-vs-time Pareto frontier.
//
//   solve(request)               the synchronous data-parallel model (Pollux form) the request's
//                                workload describes (solve/vm_recommend/request.hpp), catalog prices;
//   solve(request, model)        a cluster_throughput_model of the host's own, type k = catalog
//                                type k (the workload is not read), catalog prices;
//   solve(request, model, cost)  and an offer_cost_model of its own.
// A model without a linear bound (linearly_bounded_throughput_model) is searched exhaustively and
// the result says so (details.method). The types are in solve/vm_recommend/problem.hpp, the space
// the searches share in solve/vm_recommend/offer_space.hpp, the searches in
// solve/vm_recommend/branch_and_bound.hpp and solve/vm_recommend/exhaustive.hpp;
// docs/solvers/vm_recommend.md.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/cost.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/solve/vm_recommend/branch_and_bound.hpp>
#include <dnnplan/solve/vm_recommend/offer_space.hpp>
#include <dnnplan/solve/vm_recommend/problem.hpp>
#include <dnnplan/solve/vm_recommend/request.hpp>

#include <cstddef>
#include <string>
#include <utility>

namespace dnnplan {

/// The planner with a model and prices of the host's own. Throws invalid_input for bad input
/// (including a model or cost whose type_count() differs from the catalog's:
/// "models.throughput.type_count()", "models.cost.type_count()"); every expected outcome
/// (infeasible, budget exhausted) is a status. request.workload is not read.
template <cluster_throughput_model Model, offer_cost_model Cost>
[[nodiscard]] vm_result solve(const vm_request& request, const Model& model, const Cost& cost) {
    const vm_problem& problem = request.problem;
    const vm_options& options = request.options;
    problem.validate();
    options.validate();
    const std::size_t types = problem.catalog.instances.size();
    if (static_cast<std::size_t>(model.type_count()) != types)
        throw invalid_input("models.throughput.type_count()", std::to_string(static_cast<std::size_t>(model.type_count())),
                            "the number of catalog instance types (" + std::to_string(types) + ")");
    if (static_cast<std::size_t>(cost.type_count()) != types)
        throw invalid_input("models.cost.type_count()", std::to_string(static_cast<std::size_t>(cost.type_count())),
                            "the number of catalog instance types (" + std::to_string(types) + ")");
    const detail::vm_space s = detail::make_vm_space(problem, cost);
    vm_result result;
    result.details.method = linearly_bounded_throughput_model<Model> ? options.method : search_method::exhaustive;
    const bool maximised = maximises(s.objective);

    detail::vm_search_outcome best =
        detail::vm_run(model, s, false, options.budget, options.relative_gap, result.details.method);
    result.counters = best.counters;
    const bool has_plan = best.best.has_plan();
    if (has_plan) {
        const detail::vm_point& p = *best.best.payload();
        result.plan = detail::vm_make_configuration(problem.catalog, p.offer_counts, p.figures);
    }
    std::string infeasible = s.max_instances == 0 ? "no instance type is allowed with a positive quota"
                                                  : "no configuration in the search space meets the constraints";
    if (best.non_finite > 0)
        infeasible += " (" + std::to_string(best.non_finite) +
                      " configurations meet them with figures too large for a double: prices or speeds out of scale)";
    std::string stopped = budget_guard::describe_limit(best.limit, options.budget) + " after " +
                          std::to_string(best.counters.nodes) + " nodes and " + std::to_string(best.counters.evaluations) +
                          " evaluations";
    conclude_search(result, {.limit = best.limit, .unexplored_key_lb = best.unexplored_key_lb}, has_plan, best.best.key(),
                    maximised, std::move(infeasible), std::move(stopped));
    if (result.limit != search_limit::none && result.bound)
        result.reason += std::string("; the objective is ") + (maximised ? "at most " : "at least ") +
                         detail::format_number(*result.bound);

    if (options.pareto) {
        detail::vm_search_outcome front =
            detail::vm_run(model, s, true, options.budget, options.relative_gap, result.details.method);
        result.details.frontier_counters = front.counters;
        result.details.frontier_status = front.limit == search_limit::none ? solve_status::optimal : solve_status::feasible;
        result.details.frontier_limit = front.limit;
        for (const auto& p : front.frontier.points())
            result.details.frontier.push_back(
                detail::vm_make_configuration(problem.catalog, p.payload.offer_counts, p.payload.figures));
    }
    return result;
}

/// The planner with a model of the host's own and the catalog's prices.
template <cluster_throughput_model Model>
[[nodiscard]] vm_result solve(const vm_request& request, const Model& model) {
    request.problem.validate();
    return solve(request, model, catalog_offer_cost(request.problem.catalog));
}

/// The planner with the synchronous data-parallel model of the request's workload and the
/// catalog's prices.
[[nodiscard]] inline vm_result solve(const vm_request& request) {
    request.validate();
    return solve(request, request.workload.model(request.problem.catalog), catalog_offer_cost(request.problem.catalog));
}

}  // namespace dnnplan
