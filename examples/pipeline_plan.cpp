// pipeline_plan --pipedream-graph FILE -n M [M2 ...] [-b BYTES_PER_S [B2 ...]]
//               [--activation-compression-ratio R] [--straight-pipeline] [--use-memory-constraint]
//               [-s MEMORY_BYTES] [--use-fewer-machines] [--max-states N] [--json]
//
// A drop-in for PipeDream's optimizer command line (optimizer_graph_hierarchical.py): the same
// flags and defaults (-b 1e9, -s 16e9), the same partition. Prints the stages and the predicted
// time per minibatch (without a partition, why: none exists, or the limit that stopped the search);
// with --json only a JSON object. A malformed file or command line: one line on stderr naming the
// problem, exit 2.

#include <dnnplan/io/pipeline_plan_json.hpp>
#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/solve/pipeline_plan/solve.hpp>

#include "cli_support.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view usage =
    "usage: pipeline_plan --pipedream-graph FILE -n M [M2 ...] [-b BYTES_PER_S [B2 ...]] "
    "[--activation-compression-ratio R] [--straight-pipeline] [--use-memory-constraint] [-s MEMORY_BYTES] "
    "[--use-fewer-machines] [--max-states N] [--json]";

using dnnplan_examples::command_line_error;

int run(int argc, char** argv) {
    namespace cli = dnnplan_examples;
    std::string graph_file;
    dnnplan::pipedream_options options;
    bool json = false;
    std::optional<double> ratio;
    (void)cli::parse_command_line({cli::text_flag("--pipedream-graph", graph_file),
                                   cli::numbers_flag("-n", options.machines),
                                   cli::numbers_flag("-b", options.bandwidths_bytes_per_s),
                                   cli::number_flag("--activation-compression-ratio", ratio),
                                   cli::switch_flag("--straight-pipeline", options.straight_pipeline),
                                   cli::switch_flag("--use-memory-constraint", options.use_memory_constraint),
                                   cli::number_flag("-s", options.memory_bytes),
                                   cli::switch_flag("--use-fewer-machines", options.use_fewer_machines),
                                   cli::number_flag("--max-states", options.max_states),
                                   cli::switch_flag("--json", json)},
                                  argc, argv);
    options.activation_compression_ratio = ratio;
    if (graph_file.empty()) throw command_line_error{"--pipedream-graph FILE is required"};
    if (options.machines.empty()) throw command_line_error{"-n M is required"};
    // PipeDream's default bandwidth, 1e9 bytes/s, for every level not given.
    if (options.bandwidths_bytes_per_s.empty()) options.bandwidths_bytes_per_s.assign(options.machines.size(), 1e9);
    try {
        options.validate();
    } catch (const dnnplan::invalid_input& e) {
        throw command_line_error{e.what()};
    }
    const dnnplan::pipedream_request request{
        .graph = cli::read_input(graph_file, [](std::istream& in) { return dnnplan::parse_pipedream_graph(in); }),
        .options = options};
    // A graph with nothing to partition (an empty file, only inputs) is the file's fault too.
    const dnnplan::pipedream_result r = cli::on_input(graph_file, [&] { return dnnplan::solve(request); });
    if (json) {
        std::cout << dnnplan::to_json_text(r) << '\n';
        return 0;
    }
    if (r.details.states_enumerated)
        std::cout << "Total number of states: " << r.details.num_states << '\n';
    else {  // the wide path (docs/solvers/pipeline_plan.md, "Wide graphs"): stages run between cuts
        std::cout << "Total number of states: ";
        const std::string limit = options.max_states > 0 ? "over --max-states " + std::to_string(options.max_states) : "--max-states 0";
        const bool after_budget = options.max_states > 0 && r.details.num_states > 0 && r.details.num_states <= options.max_states;
        if (after_budget) std::cout << r.details.num_states << " (the recurrence stopped at its budget; the wide path's answer: ";
        else if (r.details.num_states > 0) std::cout << r.details.num_states << " (counted, not enumerated: " << limit << "; ";
        else if (options.max_states > 0) std::cout << "more than " << options.max_states << " (not enumerated; ";
        else std::cout << "not enumerated (--max-states 0; ";
        std::cout << r.details.lattice.kept_layers << " layers, stages between cuts)\n";
    }
    if (!r.plan) {
        if (r.limit != dnnplan::search_limit::none)  // a budget stopped it: nothing is proven
            std::cout << "No partition found, limit: " << to_string(r.limit) << " (" << r.reason << ").\n";
        else if (r.status == dnnplan::solve_status::no_plan_found)
            std::cout << "No partition found (" << r.reason << ").\n";
        else
            std::cout << "No partition satisfies the constraints.\n";
        return 0;
    }
    std::cout << (r.details.states_enumerated ? "(Split start, split end)" : "(Cut start, cut end)")
              << " / compute time taken per stage / replication factor per stage:\n";
    for (const auto& s : r.plan->stages)
        std::cout << "(" << s.first_state << ", " << s.end_state << ") " << s.compute_s << " " << s.replicas << "  ["
                  << s.layers.size() << " layers: " << request.graph.at(s.layers.front()).id << " .. "
                  << request.graph.at(s.layers.back()).id << "]\n";
    std::cout << std::setprecision(10) << "Time per stage in pipeline: " << r.plan->time_per_minibatch_s << '\n';
    if (r.status == dnnplan::solve_status::feasible)  // not proven optimal: the bound it is proven against
        std::cout << "Proven lower bound: " << *r.bound << " (gap " << std::setprecision(3) << 100.0 * r.details.lattice.gap_ratio
                  << " %)\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return dnnplan_examples::guarded_main("pipeline_plan", usage, argc, argv, run); }
