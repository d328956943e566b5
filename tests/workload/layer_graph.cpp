// layer_graph: construction, adjacency, find, and every validation path naming its field (or,
// for a cycle, a layer on it).

#include <dnnplan/workload/layer_graph.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using dnnplan::layer;
using dnnplan::layer_edge;
using dnnplan::layer_graph;

layer make_layer(std::string id, double forward_s = 1e-3) {
    return {.id = std::move(id),
            .description = "Linear",
            .forward_s = forward_s,
            .backward_s = 2e-3,
            .activation_bytes = 1024.0,
            .parameter_bytes = 4096.0,
            .optimizer_state_bytes = std::nullopt};
}

// a -> b, a -> c, b -> d, c -> d: a diamond.
std::vector<layer> diamond_layers() { return {make_layer("a"), make_layer("b"), make_layer("c"), make_layer("d")}; }
std::vector<layer_edge> diamond_edges() { return {{0, 1}, {0, 2}, {1, 3}, {2, 3}}; }

// The invalid_input thrown by constructing the graph, or nothing.
std::optional<dnnplan::invalid_input> rejection_of(std::vector<layer> layers, std::vector<layer_edge> edges) {
    try {
        (void)layer_graph(std::move(layers), std::move(edges));
    } catch (const dnnplan::invalid_input& e) {
        return e;
    }
    return std::nullopt;
}

dnnplan::invalid_input expect_rejected(std::vector<layer> layers, std::vector<layer_edge> edges,
                                       const std::string& field) {
    const auto e = rejection_of(std::move(layers), std::move(edges));
    REQUIRE(e.has_value());
    CHECK(e->field() == field);
    CHECK_FALSE(e->expected().empty());
    return *e;
}

}  // namespace

TEST_CASE("layer_graph: the empty graph", "[layer_graph]") {
    const layer_graph g;
    CHECK(g.size() == 0);
    CHECK(g.layers().empty());
    CHECK(g.edges().empty());
    CHECK_FALSE(g.find("a").has_value());
    const layer_graph also_empty({}, {});
    CHECK(also_empty.size() == 0);
}

TEST_CASE("layer_graph: construction keeps the order given; adjacency in edge order", "[layer_graph]") {
    auto layers = diamond_layers();
    layers[2].optimizer_state_bytes = 8192.0;
    const layer_graph g(layers, diamond_edges());
    REQUIRE(g.size() == 4);
    CHECK(g.at(0).id == "a");
    CHECK(g.at(3).id == "d");
    CHECK(g.at(2).optimizer_state_bytes == 8192.0);
    CHECK(g.layers()[1].id == "b");
    CHECK(g.edges() == diamond_edges());

    CHECK(g.successors(0) == std::vector<std::size_t>{1, 2});
    CHECK(g.successors(1) == std::vector<std::size_t>{3});
    CHECK(g.successors(3).empty());
    CHECK(g.predecessors(0).empty());
    CHECK(g.predecessors(3) == std::vector<std::size_t>{1, 2});

    // Edges given in another order: adjacency lists follow that order.
    const layer_graph h(diamond_layers(), {{2, 3}, {0, 2}, {1, 3}, {0, 1}});
    CHECK(h.predecessors(3) == std::vector<std::size_t>{2, 1});
    CHECK(h.successors(0) == std::vector<std::size_t>{2, 1});
}

TEST_CASE("layer_graph: find by id", "[layer_graph]") {
    const layer_graph g(diamond_layers(), diamond_edges());
    CHECK(g.find("a") == std::optional<std::size_t>(0));
    CHECK(g.find("d") == std::optional<std::size_t>(3));
    CHECK_FALSE(g.find("e").has_value());
    CHECK_FALSE(g.find("").has_value());
}

TEST_CASE("layer_graph: zero figures are allowed; an isolated layer is allowed", "[layer_graph]") {
    auto layers = diamond_layers();
    layers.push_back({.id = "input", .description = "", .forward_s = 0.0, .backward_s = 0.0,
                      .activation_bytes = 0.0, .parameter_bytes = 0.0, .optimizer_state_bytes = 0.0});
    const layer_graph g(layers, diamond_edges());
    CHECK(g.size() == 5);
    CHECK(g.successors(4).empty());
    CHECK(g.predecessors(4).empty());
}

TEST_CASE("layer_graph: ids must be non-empty and unique", "[layer_graph]") {
    auto layers = diamond_layers();
    layers[2].id = "";
    auto e = expect_rejected(layers, diamond_edges(), "layers[2].id");
    CHECK(e.value() == "\"\"");

    layers = diamond_layers();
    layers[3].id = "b";
    e = expect_rejected(layers, diamond_edges(), "layers[3].id");
    CHECK(e.value() == "\"b\"");
}

TEST_CASE("layer_graph: times and sizes must be finite and >= 0, named by field", "[layer_graph]") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    struct bad_case {
        double layer::*member;
        const char* field;
    };
    const bad_case cases[] = {
        {&layer::forward_s, "forward_s"},
        {&layer::backward_s, "backward_s"},
        {&layer::activation_bytes, "activation_bytes"},
        {&layer::parameter_bytes, "parameter_bytes"},
    };
    for (const auto& c : cases) {
        for (const double bad : {-1.0, nan, inf}) {
            auto layers = diamond_layers();
            layers[1].*c.member = bad;
            INFO(c.field << " = " << bad);
            const auto e = expect_rejected(layers, diamond_edges(), std::string("layers[1].") + c.field);
            CHECK(e.expected() == "a finite number >= 0");
        }
    }
    for (const double bad : {-1.0, nan, inf}) {
        auto layers = diamond_layers();
        layers[0].optimizer_state_bytes = bad;
        expect_rejected(layers, diamond_edges(), "layers[0].optimizer_state_bytes");
    }
    auto layers = diamond_layers();
    layers[0].forward_s = -0.5;
    CHECK(expect_rejected(layers, diamond_edges(), "layers[0].forward_s").value() == "-0.5");
}

TEST_CASE("layer_graph: edge ends must be in range", "[layer_graph]") {
    auto e = expect_rejected(diamond_layers(), {{0, 1}, {4, 1}}, "edges[1].from");
    CHECK(e.value() == "4");
    CHECK(e.expected() == "a layer index below 4");
    e = expect_rejected(diamond_layers(), {{0, 1}, {1, 2}, {2, 7}}, "edges[2].to");
    CHECK(e.value() == "7");
    expect_rejected({}, {{0, 0}}, "edges[0].from");
}

TEST_CASE("layer_graph: no self-loops, no duplicate edges", "[layer_graph]") {
    auto e = expect_rejected(diamond_layers(), {{0, 1}, {2, 2}}, "edges[1].to");
    CHECK(e.expected().find("no self-loops") != std::string::npos);

    e = expect_rejected(diamond_layers(), {{0, 1}, {1, 3}, {0, 1}}, "edges");
    CHECK(e.value() == "a -> b");
    CHECK(e.expected() == "each edge once");
}

TEST_CASE("layer_graph: a cycle is rejected naming a layer on it", "[layer_graph]") {
    // b -> c -> d -> b, reached from a; e hangs off d (behind the cycle, not on it).
    auto layers = diamond_layers();
    layers.push_back(make_layer("e"));
    const auto e = expect_rejected(layers, {{0, 1}, {1, 2}, {2, 3}, {3, 1}, {3, 4}}, "edges");
    CHECK(e.expected() == "an acyclic graph");
    const bool on_cycle = e.value() == "a cycle through b" || e.value() == "a cycle through c" ||
                          e.value() == "a cycle through d";
    CHECK(on_cycle);

    // Two layers feeding each other; the smallest cycle.
    const auto two = expect_rejected({make_layer("x"), make_layer("y")}, {{0, 1}, {1, 0}}, "edges");
    CHECK((two.value() == "a cycle through x" || two.value() == "a cycle through y"));

    // A layer behind the cycle, listed first: the walk back still lands on the cycle.
    const auto behind = expect_rejected({make_layer("tail"), make_layer("p"), make_layer("q")},
                                        {{1, 2}, {2, 1}, {2, 0}}, "edges");
    CHECK((behind.value() == "a cycle through p" || behind.value() == "a cycle through q"));
}

TEST_CASE("layer_graph: the error message carries field, value and expectation", "[layer_graph]") {
    auto layers = diamond_layers();
    layers[1].backward_s = -2.0;
    const auto e = rejection_of(layers, diamond_edges());
    REQUIRE(e.has_value());
    CHECK(std::string(e->what()) == "invalid input: layers[1].backward_s = -2: expected a finite number >= 0");
}
