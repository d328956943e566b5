// spot_provision [PROBLEM.json] [--json]
//
// Plans the cheapest set of spot workers that trains to the target loss within the deadline
// (spotDNN's problem) and compares it with the paper's sliding-window heuristic. Without a file
// it plans the bundled ResNet-110 problem (examples/data/resnet110.json). Each result's status
// line names the limit that stopped its search, if any; without a plan, the best-effort plan (the
// fastest, which misses the deadline) follows when there is one. The table ends with what the
// plan does under preemptions: every instance type lost and replaced as in Bamboo's p3 spot trace
// (bundled), a replacement training 45 s after it is added (Bamboo's), on 200 windows of the trace;
// and the cheapest plan that meets the deadline with probability 0.9 there (solve/spot_provision/
// preemptions.hpp). With --json it prints only the result as JSON. A malformed problem: one line on
// stderr naming the field, exit 2.

#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/io/spot_provision_json.hpp>
#include <dnnplan/preemption/trace_replay.hpp>
#include <dnnplan/solve/spot_provision/preemptions.hpp>
#include <dnnplan/solve/spot_provision/solve.hpp>

#include <dnnplan_examples/bundled_data.hpp>

#include "cli_support.hpp"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view usage = "usage: spot_provision [PROBLEM.json] [--json]";

std::string fixed(double value, int digits) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(digits) << value;
    return out.str();
}

std::string money(double usd) { return fixed(usd, 4); }

/// "2 x p2.xlarge, 5 x g3.8xlarge": the types a plan rents.
std::string mix(const dnnplan::spot_plan& plan) {
    std::string out;
    for (const auto& c : plan.counts) {
        if (c.count == 0) continue;
        if (!out.empty()) out += ", ";
        out += std::to_string(c.count);  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "..." + string
        out += " x ";
        out += c.name;
    }
    return out;
}

void print_plan(const char* title, const dnnplan::spot_problem& problem, const dnnplan::spot_result& r) {
    std::cout << title << ": " << to_string(r.status);
    if (r.limit != dnnplan::search_limit::none) std::cout << ", limit: " << to_string(r.limit);
    if (!r.reason.empty()) std::cout << " (" << r.reason << ")";
    std::cout << '\n';
    if (r.best_effort) {  // no plan meets the goals: the one to run anyway, which misses the deadline
        std::cout << std::fixed << std::setprecision(1) << "  best effort (misses the deadline): " << mix(*r.best_effort)
                  << "; training time " << r.best_effort->prediction.training_time_s << " s, cost "
                  << money(r.best_effort->prediction.cost_usd) << " USD\n";
    }
    if (!r.plan) return;
    std::cout << "  " << std::left << std::setw(18) << "instance type" << std::right << std::setw(7) << "count"
              << std::setw(7) << "GPUs" << '\n';
    for (const auto& c : r.plan->counts) {
        if (c.count == 0) continue;
        const auto& type = problem.catalog.instances[*problem.catalog.find(c.name)];
        std::cout << "  " << std::left << std::setw(18) << c.name << std::right << std::setw(7) << c.count
                  << std::setw(7) << c.count * type.gpus << '\n';
    }
    const auto& p = r.plan->prediction;
    std::cout << std::fixed << std::setprecision(1) << "  workers " << p.workers << ", training time "
              << p.training_time_s << " s (deadline " << problem.goals.deadline_s << " s), cost "
              << money(p.cost_usd) << " USD at " << money(p.usd_per_h) << " USD/h\n"
              << "  normalized iterations " << p.normalized_iterations << ", weighted-average batch " << p.wa_batch
              << std::setprecision(3) << ", convergence coefficient " << p.convergence_coefficient
              << ", cluster speed " << std::setprecision(1) << p.samples_per_s << " samples/s\n"
              << "  search: " << r.counters.nodes << " nodes, " << r.counters.evaluations << " clusters evaluated\n";
}

/// The plan under preemptions (the header comment): the planner's plan simulated (one planner
/// run), then the search for the cheapest plan with P(T <= deadline) >= 0.9.
void print_under_preemptions(const dnnplan::spot_request& request) {
    dnnplan::spot_resilience_request r{.spot = request, .preemption = {.probability = 0.9, .samples = 200, .instance_ready_ms = 45'000}};
    const dnnplan::trace_replay p3(dnnplan::parse_instance_trace(dnnplan_examples::p3_trace_csv));
    for (const auto& type : request.problem.catalog.instances) r.preemption.per_type.emplace(type.name, p3);
    r.preemption.max_tightenings = 0;
    const dnnplan::spot_resilience_result as_planned = dnnplan::solve(r);
    r.preemption.max_tightenings = 12;
    const dnnplan::spot_resilience_result robust = dnnplan::solve(r);
    const auto& d = as_planned.details;
    std::cout << "\nUnder preemptions (every type lost and replaced as in Bamboo's p3 spot trace, ready 45 s after it is added; "
              << "200 windows): the plan finishes by the deadline with P = " << fixed(d.p_meet_deadline, 2) << " (E[T] ";
    if (d.expected_training_time_s) std::cout << fixed(*d.expected_training_time_s, 1) << " s, E[cost] ";
    else std::cout << "beyond 3 deadlines, E[cost] ";
    if (d.expected_cost_usd) std::cout << money(*d.expected_cost_usd) << " USD); ";
    else std::cout << "unbounded); ";
    if (robust.plan && robust.details.expected_cost_usd)
        std::cout << "the cheapest plan found with P >= 0.9: " << mix(*robust.plan) << ", E[cost] " << money(*robust.details.expected_cost_usd)
                  << " USD (P = " << fixed(robust.details.p_meet_deadline, 2) << ", planned for " << fixed(robust.details.planned_deadline_s, 1)
                  << " s)\n";
    else
        std::cout << "no plan found with P >= 0.9 (" << robust.reason << ")\n";
    r.preemption.on_demand_fallback = true;
    const dnnplan::spot_resilience_result fallback = dnnplan::solve(r);
    std::cout << "\nWith the runtime policy (on spot; the whole mix on-demand at the last moment it still meets the deadline, "
              << "the deadline policy's safety net): ";
    if (fallback.plan && fallback.details.expected_cost_usd)
        std::cout << "the cheapest plan found: " << mix(*fallback.plan) << ", E[cost] " << money(*fallback.details.expected_cost_usd)
                  << " USD (P = " << fixed(fallback.details.p_meet_deadline, 2) << ", planned for "
                  << fixed(fallback.details.planned_deadline_s, 1) << " s)\n";
    else
        std::cout << "no plan found with P >= 0.9 (" << fallback.reason << ")\n";
}

int run(int argc, char** argv) {
    bool json = false;
    const std::vector<std::string> files =
        dnnplan_examples::parse_command_line({dnnplan_examples::switch_flag("--json", json)}, argc, argv, 1, 1);
    const std::optional<std::string> file = files.empty() ? std::nullopt : std::optional<std::string>(files.front());
    const dnnplan::spot_request request =
        file ? dnnplan_examples::read_input(*file, [](std::istream& in) { return dnnplan::parse_spot_request(in); })
             : dnnplan_examples::on_input("the bundled problem",
                                          [] { return dnnplan::parse_spot_request(dnnplan_examples::resnet110_json); });
    // Model-level checks (a speed faster than its own communication) are input errors too.
    dnnplan_examples::on_input(file.value_or("the bundled problem"), [&] { return dnnplan::make_spotdnn_setup(request); });

    const dnnplan::spot_result result = dnnplan::solve(request);
    if (json) {
        std::cout << dnnplan::to_json_text(result) << '\n';
        return 0;
    }
    std::cout << "Problem: " << file.value_or("bundled ResNet-110 (spotDNN artifact)") << "; target loss "
              << request.problem.goals.target_loss << " within " << request.problem.goals.deadline_s << " s, "
              << to_string(request.options.pricing) << " prices\n\n";
    print_plan("Plan", request.problem, result);

    if (request.options.method != dnnplan::search_method::sliding_window) {
        dnnplan::spot_request baseline_request = request;
        baseline_request.options.method = dnnplan::search_method::sliding_window;
        const dnnplan::spot_result baseline = dnnplan::solve(baseline_request);
        std::cout << '\n';
        print_plan("Sliding-window baseline (spotDNN Algorithm 1)", request.problem, baseline);
        if (result.plan && baseline.plan && request.options.objective == dnnplan::objective_kind::min_cost) {
            const double saving = baseline.plan->prediction.cost_usd - result.plan->prediction.cost_usd;
            std::cout << "\nSaving over the baseline: " << money(saving) << " USD (" << std::setprecision(1)
                      << 100.0 * saving / baseline.plan->prediction.cost_usd << "%)\n";
        }
    }
    // Spot prices only: on-demand instances are not preempted.
    if (result.plan && request.options.objective == dnnplan::objective_kind::min_cost && request.options.pricing == dnnplan::price_kind::spot)
        print_under_preemptions(request);
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return dnnplan_examples::guarded_main("spot_provision", usage, argc, argv, run); }
