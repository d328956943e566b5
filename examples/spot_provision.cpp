// spot_provision [PROBLEM.json] [--json]
//
// Plans the cheapest set of spot workers that trains to the target loss within the deadline
// (spotDNN's problem) and compares it with the paper's sliding-window heuristic. Without a file
// it plans the bundled ResNet-110 problem (examples/data/resnet110.json). Each result's status
// line names the limit that stopped its search, if any; without a plan, the best-effort plan (the
// fastest, which misses the deadline) follows when there is one. With --json it prints only the
// result as JSON. A malformed problem: one line on stderr naming the field, exit 2.

#include <dnnplan/io/spot_provision_json.hpp>
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

std::string money(double usd) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(4) << usd;
    return out.str();
}

void print_plan(const char* title, const dnnplan::spot_problem& problem, const dnnplan::spot_result& r) {
    std::cout << title << ": " << to_string(r.status);
    if (r.limit != dnnplan::search_limit::none) std::cout << ", limit: " << to_string(r.limit);
    if (!r.reason.empty()) std::cout << " (" << r.reason << ")";
    std::cout << '\n';
    if (r.best_effort) {  // no plan meets the goals: the one to run anyway, which misses the deadline
        std::string counts;
        for (const auto& c : r.best_effort->counts) {
            if (c.count == 0) continue;
            if (!counts.empty()) counts += ", ";
            counts += std::to_string(c.count);  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "..." + string
            counts += " x ";
            counts += c.name;
        }
        std::cout << std::fixed << std::setprecision(1) << "  best effort (misses the deadline): " << counts
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
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return dnnplan_examples::guarded_main("spot_provision", usage, argc, argv, run); }
