// pipeline_plan --pipedream-graph FILE -n M [M2 ...] [-b BYTES_PER_S [B2 ...]]
//               [--activation-compression-ratio R] [--straight-pipeline] [--use-memory-constraint]
//               [-s MEMORY_BYTES] [--use-fewer-machines] [--json]
//
// A drop-in for PipeDream's optimizer command line (optimizer_graph_hierarchical.py): the same
// flags and defaults (-b 1e9, -s 16e9), the same partition. Prints the stages and the predicted
// time per minibatch; with --json only a JSON object. A malformed file or command line: one line
// on stderr naming the problem, exit 2.

#include <dnnplan/io/json.hpp>
#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/partition/pipedream.hpp>

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
    "[--use-fewer-machines] [--json]";

using dnnplan_examples::command_line_error;
using dnnplan_examples::open_input;
using dnnplan_examples::parse_number;

struct arguments {
    std::string graph_file;
    dnnplan::pipedream_options options;
    bool json = false;
};

arguments parse_arguments(int argc, char** argv) {
    arguments args;
    std::vector<std::string_view> a(argv + 1, argv + argc);
    const auto is_value = [](std::string_view s) { return !s.starts_with("--") && !(s.size() == 2 && s[0] == '-' && std::isalpha(static_cast<unsigned char>(s[1]))); };
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string_view flag = a[i];
        const auto value = [&]() -> std::string_view {
            if (i + 1 >= a.size() || !is_value(a[i + 1])) throw command_line_error{std::string(flag) + " expects a value"};
            return a[++i];
        };
        if (flag == "--pipedream-graph") {
            args.graph_file = std::string(value());
        } else if (flag == "-n" || flag == "-b") {
            const std::size_t before = i;
            while (i + 1 < a.size() && is_value(a[i + 1])) {
                ++i;
                if (flag == "-n") args.options.machines.push_back(parse_number<std::int32_t>(flag, a[i]));
                else args.options.bandwidths_bytes_per_s.push_back(parse_number<double>(flag, a[i]));
            }
            if (i == before) throw command_line_error{std::string(flag) + " expects at least one value"};
        } else if (flag == "--activation-compression-ratio") {
            args.options.activation_compression_ratio = parse_number<double>(flag, value());
        } else if (flag == "-s") {
            args.options.memory_bytes = parse_number<double>(flag, value());
        } else if (flag == "--straight-pipeline") {
            args.options.straight_pipeline = true;
        } else if (flag == "--use-memory-constraint") {
            args.options.use_memory_constraint = true;
        } else if (flag == "--use-fewer-machines") {
            args.options.use_fewer_machines = true;
        } else if (flag == "--json") {
            args.json = true;
        } else if (flag == "-h" || flag == "--help") {
            std::cout << usage << '\n';
            std::exit(0);
        } else {
            throw command_line_error{"unknown argument " + std::string(flag)};
        }
    }
    if (args.graph_file.empty()) throw command_line_error{"--pipedream-graph FILE is required"};
    if (args.options.machines.empty()) throw command_line_error{"-n M is required"};
    // PipeDream's default bandwidth, 1e9 bytes/s, for every level not given.
    if (args.options.bandwidths_bytes_per_s.empty())
        args.options.bandwidths_bytes_per_s.assign(args.options.machines.size(), 1e9);
    return args;
}

int run(int argc, char** argv) {
    arguments args;
    dnnplan::layer_graph graph;
    try {
        args = parse_arguments(argc, argv);
        args.options.validate();
        std::ifstream in = open_input(args.graph_file);
        graph = dnnplan::parse_pipedream_graph(in);
    } catch (const command_line_error& e) {
        std::cerr << "pipeline_plan: " << e.message << "; " << usage << '\n';
        return 2;
    } catch (const dnnplan::error& e) {
        std::cerr << "pipeline_plan: " << args.graph_file << ": " << e.what() << '\n';
        return 2;
    }
    const dnnplan::pipedream_result r = dnnplan::pipedream_partition(graph, args.options);
    if (args.json) {
        std::cout << nlohmann::ordered_json(r).dump(2) << '\n';
        return 0;
    }
    std::cout << "Total number of states: " << r.num_states << '\n';
    if (!std::isfinite(r.time_per_minibatch_s)) {
        std::cout << "No partition satisfies the constraints.\n";
        return 0;
    }
    std::cout << "(Split start, split end) / compute time taken per stage / replication factor per stage:\n";
    for (const auto& s : r.stages)
        std::cout << "(" << s.first_state << ", " << s.end_state << ") " << s.compute_s << " " << s.replicas << "  ["
                  << s.layers.size() << " layers: " << graph.at(s.layers.front()).id << " .. "
                  << graph.at(s.layers.back()).id << "]\n";
    std::cout << std::setprecision(10) << "Time per stage in pipeline: " << r.time_per_minibatch_s << '\n';
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return dnnplan_examples::guarded_main("pipeline_plan", argc, argv, run); }
