#pragma once
// The PipeDream profiles of tests/fixtures/pipedream (graph.txt files) as text or as a layer graph,
// a node line of that format, PipeDream's recorded flags as options, and field-by-field equality of layers and graphs (the reader's tests,
// the partitioners' tests and the JSON tests of partition/ share them).

#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/partition/pipedream_types.hpp>
#include <dnnplan/workload/layer_graph.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan_test {

inline std::string pipedream_fixture_path(std::string_view model) {
    return std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/pipedream/" + std::string(model) + ".txt";
}

/// The text of tests/fixtures/pipedream/<model>.txt; fails the test when it cannot be read.
inline std::string pipedream_fixture_text(std::string_view model) {
    std::ifstream in(pipedream_fixture_path(model), std::ios::binary);
    REQUIRE(in.good());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// tests/fixtures/pipedream/<model>.txt read by parse_pipedream_graph.
inline dnnplan::layer_graph pipedream_fixture(std::string_view model) {
    std::ifstream in(pipedream_fixture_path(model));
    REQUIRE(in);
    return dnnplan::parse_pipedream_graph(in);
}

/// PipeDream's command-line flags (as recorded in reference_runs.json) to pipedream_options;
/// an unknown flag fails the test.
inline dnnplan::pipedream_options pipedream_options_from_args(const std::vector<std::string>& args) {
    dnnplan::pipedream_options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const auto values = [&](auto&& push) {
            while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0 && !(args[i + 1].size() == 2 && args[i + 1][0] == '-'))
                push(args[++i]);
        };
        if (a == "-n") {
            values([&](const std::string& v) { o.machines.push_back(std::stoi(v)); });
        } else if (a == "-b") {
            values([&](const std::string& v) { o.bandwidths_bytes_per_s.push_back(std::stod(v)); });
        } else if (a == "-s") {
            o.memory_bytes = std::stod(args.at(++i));
        } else if (a == "--activation_compression_ratio") {
            o.activation_compression_ratio = std::stod(args.at(++i));
        } else if (a == "--straight_pipeline") {
            o.straight_pipeline = true;
        } else if (a == "--use_memory_constraint") {
            o.use_memory_constraint = true;
        } else if (a == "--use_fewer_machines") {
            o.use_fewer_machines = true;
        } else {
            FAIL("unknown flag in reference_runs.json: " << a);
        }
    }
    return o;
}

/// A valid PipeDream graph.txt node line with the given id and attributes.
inline std::string pipedream_node(std::string_view id, std::string_view attributes =
                                                           "forward_compute_time=1.0, backward_compute_time=2.0, "
                                                           "activation_size=100.0, parameter_size=10.0") {
    std::string line(id);
    line += " -- Linear(in_features=4, out_features=4) -- ";
    line += attributes;
    line += '\n';
    return line;
}

inline bool same(const dnnplan::layer& a, const dnnplan::layer& b) {
    return a.id == b.id && a.description == b.description && a.forward_s == b.forward_s && a.backward_s == b.backward_s &&
           a.activation_bytes == b.activation_bytes && a.parameter_bytes == b.parameter_bytes &&
           a.optimizer_state_bytes == b.optimizer_state_bytes;
}

inline bool same(const dnnplan::layer_graph& a, const dnnplan::layer_graph& b) {
    if (a.size() != b.size() || a.edges() != b.edges()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!same(a.at(i), b.at(i))) return false;
    return true;
}

}  // namespace dnnplan_test
