// The layers of include/dnnplan/, derived from the headers' includes: a layer is a top-level
// folder (core, workload, model, fit, preemption, search, partition, io), and each planner's folder
// under solve/ is a layer of its own. A lower layer never includes a higher one: the include graph
// between layers has no cycle, and every include goes down the order docs/architecture.md states
// ("Layers"). A failure names the include that climbs.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path source_root = fs::path(DNNPLAN_TEST_FIXTURES_DIR) / ".." / "..";

/// The layer of a header path relative to include/dnnplan ("solve/spot_provision/exact.hpp" ->
/// "solve/spot_provision"); empty for the umbrella headers at the top.
std::string layer_of(const std::string& relative) {
    const auto slash = relative.find('/');
    if (slash == std::string::npos) return {};
    const std::string top = relative.substr(0, slash);
    if (top != "solve") return top;
    const auto second = relative.find('/', slash + 1);
    return second == std::string::npos ? top : relative.substr(0, second);
}

struct include_edge {
    std::string from_header;
    std::string to_header;
};

/// layer -> layer it includes -> the includes that make the edge.
using layer_graph_t = std::map<std::string, std::map<std::string, std::vector<include_edge>>>;

layer_graph_t include_graph() {
    const fs::path root = source_root / "include" / "dnnplan";
    const std::regex include_line(R"(#include\s*<dnnplan/([^>]+)>)");
    layer_graph_t graph;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (!entry.is_regular_file() || entry.path().extension() != ".hpp") continue;
        const std::string from = fs::relative(entry.path(), root).generic_string();
        const std::string from_layer = layer_of(from);
        if (from_layer.empty()) continue;
        graph[from_layer];
        std::ifstream in(entry.path());
        std::string line;
        while (std::getline(in, line)) {
            std::smatch m;
            if (!std::regex_search(line, m, include_line)) continue;
            const std::string to_layer = layer_of(m[1].str());
            if (to_layer.empty() || to_layer == from_layer) continue;
            graph[from_layer][to_layer].push_back({from, m[1].str()});
        }
    }
    return graph;
}

bool reaches(const layer_graph_t& graph, const std::string& from, const std::string& target) {
    std::set<std::string> seen;
    std::vector<std::string> todo{from};
    while (!todo.empty()) {
        const std::string at = todo.back();
        todo.pop_back();
        if (at == target) return true;
        const auto it = graph.find(at);
        if (it == graph.end()) continue;
        for (const auto& [next, _] : it->second)
            if (seen.insert(next).second) todo.push_back(next);
    }
    return false;
}

/// The order docs/architecture.md states, lowest first: the line "Layers, lowest first: core <
/// workload < ...", where "solve/*" stands for every planner's folder.
std::vector<std::string> documented_order() {
    std::ifstream in(source_root / "docs" / "architecture.md");
    std::string line;
    const std::string marker = "Layers, lowest first: ";
    while (std::getline(in, line)) {
        const auto at = line.find(marker);
        if (at == std::string::npos) continue;
        std::vector<std::string> order;
        std::istringstream words(line.substr(at + marker.size()));
        std::string word;
        while (words >> word) {
            word.erase(std::remove(word.begin(), word.end(), '`'), word.end());
            while (!word.empty() && (word.back() == '.' || word.back() == ',')) word.pop_back();
            if (word != "<" && !word.empty()) order.push_back(word);
        }
        return order;
    }
    return {};
}

std::size_t rank_in(const std::vector<std::string>& order, const std::string& layer) {
    const std::string key = layer.starts_with("solve/") ? "solve/*" : layer;
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), key) - order.begin());
}

}  // namespace

TEST_CASE("layers: no include climbs, and the order is the one docs/architecture.md states", "[architecture][layers]") {
    const layer_graph_t graph = include_graph();
    REQUIRE(graph.size() >= 8);
    REQUIRE(graph.contains("solve/spot_provision"));

    // Derived: no cycle between layers. An edge a -> b with b reaching a back is an include that climbs.
    for (const auto& [from, targets] : graph)
        for (const auto& [to, edges] : targets) {
            INFO(edges.front().from_header << " includes <dnnplan/" << edges.front().to_header << ">, but layer " << to
                                           << " reaches " << from << " back: a lower layer includes a higher one");
            CHECK_FALSE(reaches(graph, to, from));
        }

    // Stated: every include goes down the documented order, and every layer is in it.
    const std::vector<std::string> order = documented_order();
    REQUIRE_FALSE(order.empty());
    for (const auto& [from, targets] : graph) {
        INFO("layer " << from << " is missing from docs/architecture.md's \"Layers, lowest first\" line");
        REQUIRE(rank_in(order, from) < order.size());
        for (const auto& [to, edges] : targets) {
            INFO(edges.front().from_header << " includes <dnnplan/" << edges.front().to_header << ">: " << from
                                           << " is not above " << to << " in the documented order");
            CHECK(rank_in(order, to) <= rank_in(order, from));
        }
    }
}

TEST_CASE("layers: the check sees a climbing include", "[architecture][layers]") {
    // The derivation on a small graph of its own: model -> core is fine, core -> model closes a cycle.
    layer_graph_t graph;
    graph["model"]["core"].push_back({"model/a.hpp", "core/b.hpp"});
    CHECK_FALSE(reaches(graph, "core", "model"));
    graph["core"]["model"].push_back({"core/b.hpp", "model/a.hpp"});
    CHECK(reaches(graph, "core", "model"));
    CHECK(layer_of("solve/spot_provision/exact.hpp") == "solve/spot_provision");
    CHECK(layer_of("core/detail/validate.hpp") == "core");
    CHECK(layer_of("dnnplan.hpp").empty());
}
