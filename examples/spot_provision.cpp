// spot_provision [PROBLEM.json] [--json]
//
// Plans the cheapest set of spot workers that trains to the target loss within the deadline
// (spotDNN's problem) and compares it with the paper's sliding-window heuristic. Without a file
// it plans the bundled ResNet-110 problem (examples/data/resnet110.json). With --json it prints
// only the result as JSON. A malformed problem: one line on stderr naming the field, exit 2.

#include <dnnplan/dnnplan.hpp>
#include <dnnplan/io/json.hpp>

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

namespace {

constexpr std::string_view usage = "usage: spot_provision [PROBLEM.json] [--json]";

struct arguments {
    std::optional<std::string> file;
    bool json = false;
};

// Returns nothing (after printing one line) when the command line is malformed.
std::optional<arguments> parse_arguments(int argc, char** argv) {
    arguments args;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--json") {
            args.json = true;
        } else if (arg == "-h" || arg == "--help") {
            std::cout << usage << '\n';
            std::exit(0);
        } else if (arg.starts_with("-") && arg != "-") {
            std::cerr << "spot_provision: unknown option " << arg << "; " << usage << '\n';
            return std::nullopt;
        } else if (args.file) {
            std::cerr << "spot_provision: more than one problem file; " << usage << '\n';
            return std::nullopt;
        } else {
            args.file = std::string(arg);
        }
    }
    return args;
}

std::string money(double usd) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(4) << usd;
    return out.str();
}

void print_plan(const char* title, const dnnplan::spot_problem& problem, const dnnplan::spot_result& r) {
    std::cout << title << ": " << to_string(r.status);
    if (!r.reason.empty()) std::cout << " (" << r.reason << ")";
    std::cout << '\n';
    if (!r.prediction) return;
    std::cout << "  " << std::left << std::setw(18) << "instance type" << std::right << std::setw(7) << "count"
              << std::setw(7) << "GPUs" << '\n';
    for (const auto& c : r.counts) {
        if (c.count == 0) continue;
        const auto& type = problem.catalog.instances[*problem.catalog.find(c.name)];
        std::cout << "  " << std::left << std::setw(18) << c.name << std::right << std::setw(7) << c.count
                  << std::setw(7) << c.count * type.gpus << '\n';
    }
    const auto& p = *r.prediction;
    std::cout << std::fixed << std::setprecision(1) << "  workers " << p.workers << ", training time "
              << p.training_time_s << " s (deadline " << problem.goals.deadline_s << " s), cost "
              << money(p.cost_usd) << " USD at " << money(p.usd_per_h) << " USD/h\n"
              << "  normalized iterations " << p.normalized_iterations << ", weighted-average batch " << p.wa_batch
              << std::setprecision(3) << ", convergence coefficient " << p.convergence_coefficient
              << ", cluster speed " << std::setprecision(1) << p.samples_per_s << " samples/s\n"
              << "  search: " << r.counters.nodes << " nodes, " << r.counters.clusters_evaluated
              << " clusters evaluated\n";
}

int run(int argc, char** argv) {
    const auto args = parse_arguments(argc, argv);
    if (!args) return 2;
    dnnplan::spot_request request;
    try {
        if (args->file && *args->file != "-") {
            std::ifstream in(*args->file);
            if (!in) {
                std::cerr << "spot_provision: cannot open " << *args->file << '\n';
                return 2;
            }
            request = dnnplan::parse_spot_request(in);
        } else if (args->file) {
            request = dnnplan::parse_spot_request(std::cin);
        } else {
            request = dnnplan::parse_spot_request(dnnplan_examples::resnet110_json);
        }
        // Model-level checks (a speed faster than its own communication) are input errors too.
        (void)dnnplan::make_spotdnn_setup(request.problem, request.options);
    } catch (const dnnplan::error& e) {
        std::cerr << "spot_provision: " << e.what() << '\n';
        return 2;
    }

    const dnnplan::spot_result result = dnnplan::solve(request.problem, request.options);
    if (args->json) {
        std::cout << dnnplan::to_json_text(result) << '\n';
        return 0;
    }
    std::cout << "Problem: " << (args->file ? *args->file : std::string("bundled ResNet-110 (spotDNN artifact)"))
              << "; target loss " << request.problem.goals.target_loss << " within "
              << request.problem.goals.deadline_s << " s, " << to_string(request.options.pricing) << " prices\n\n";
    print_plan("Plan", request.problem, result);

    if (request.options.method != dnnplan::spot_method::sliding_window) {
        auto baseline_options = request.options;
        baseline_options.method = dnnplan::spot_method::sliding_window;
        const dnnplan::spot_result baseline = dnnplan::solve(request.problem, baseline_options);
        std::cout << '\n';
        print_plan("Sliding-window baseline (spotDNN Algorithm 1)", request.problem, baseline);
        if (result.prediction && baseline.prediction &&
            request.options.objective == dnnplan::search_objective::minimize_cost) {
            const double saving = baseline.prediction->cost_usd - result.prediction->cost_usd;
            std::cout << "\nSaving over the baseline: " << money(saving) << " USD (" << std::setprecision(1)
                      << 100.0 * saving / baseline.prediction->cost_usd << "%)\n";
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return dnnplan_examples::guarded_main("spot_provision", argc, argv, run); }
