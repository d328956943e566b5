// PipeDream's states (partition/antichain.hpp): the linear form of path-shaped state DAGs, the
// accessors that read both forms, and the state limit for branching graphs.

#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/partition/antichain.hpp>

#include <catch2/catch.hpp>

#include "../support/pipedream_fixtures.hpp"

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

namespace {

using dnnplan_test::pipedream_fixture;

dnnplan::layer make_layer(std::size_t i, const char* description = "Conv2d") {
    std::string id = "l";
    id += std::to_string(i);
    return {.id = id, .description = description, .forward_s = 0.001 * static_cast<double>(i + 1), .backward_s = 0.002,
            .activation_bytes = 1e6, .parameter_bytes = 1e3 * static_cast<double>(i)};
}

// The figures of a state recomputed from its layers (state_layers) must be the stored ones.
void check_figures(const dnnplan::layer_graph& g, const dnnplan::antichain_states& s) {
    for (std::size_t j = 0; j < s.states.size(); ++j) {
        double compute = 0.0, parameters = 0.0;
        for (const std::size_t l : dnnplan::state_layers(s, j)) {
            compute += g.at(l).forward_s + g.at(l).backward_s;
            parameters += g.at(l).parameter_bytes;
        }
        CHECK(std::abs(compute - s.states[j].compute_s) <= 1e-12 * compute);
        CHECK(std::abs(parameters - s.states[j].parameter_bytes) <= 1e-9 * std::max(1.0, parameters));
    }
}

}  // namespace

TEST_CASE("path-shaped state DAGs are kept in linear form; the accessors read both forms", "[partition][antichain]") {
    // vgg16 has a branch (Size feeds View) but its 40 states form a path.
    const auto vgg = pipedream_fixture("vgg16");
    const auto v = dnnplan::build_antichain_states(vgg);
    REQUIRE(v.states.size() == 40);
    CHECK(v.chain);
    CHECK(v.chain_layer_counts.size() == 40);
    CHECK(v.chain_layers.size() == v.chain_layer_counts.back());
    CHECK(v.chain_layers.size() + v.removed_layers.size() == vgg.size());
    CHECK(v.layer_sets.empty());
    CHECK(v.predecessor_sets.empty());
    CHECK(dnnplan::state_precedes(v, 3, 7));
    CHECK_FALSE(dnnplan::state_precedes(v, 7, 3));
    CHECK_FALSE(dnnplan::state_precedes(v, 5, 5));
    std::vector<std::size_t> preds;
    dnnplan::for_each_state_predecessor(v, 4, [&](std::size_t k) { preds.push_back(k); });
    CHECK(preds == std::vector<std::size_t>{0, 1, 2, 3});
    check_figures(vgg, v);

    // resnet50 branches: listed form, predecessors ascending, the accessors agree with each other
    // and with the definition (k precedes j exactly when D_k is a proper subset of D_j).
    const auto resnet = pipedream_fixture("resnet50");
    const auto r = dnnplan::build_antichain_states(resnet);
    REQUIRE(r.states.size() == 240);
    CHECK_FALSE(r.chain);
    std::size_t listed = 0;
    std::vector<std::vector<std::size_t>> layers(r.states.size());
    for (std::size_t j = 0; j < r.states.size(); ++j) {
        layers[j] = dnnplan::state_layers(r, j);
        CHECK(std::is_sorted(layers[j].begin(), layers[j].end()));
    }
    for (std::size_t j = 0; j < r.states.size(); ++j) {
        std::vector<std::size_t> p;
        dnnplan::for_each_state_predecessor(r, j, [&](std::size_t k) { p.push_back(k); });
        CHECK(std::is_sorted(p.begin(), p.end()));
        CHECK(p.size() == dnnplan::state_predecessor_count(r, j));
        listed += p.size();
        for (std::size_t k = 0; k < r.states.size(); ++k) {
            const bool subset = layers[k].size() < layers[j].size() &&
                                std::includes(layers[j].begin(), layers[j].end(), layers[k].begin(), layers[k].end());
            CHECK(dnnplan::state_precedes(r, k, j) == subset);
            CHECK(std::binary_search(p.begin(), p.end(), k) == subset);
        }
    }
    CHECK(listed == 28248);
    check_figures(resnet, r);
}

TEST_CASE("a chain of layers is built directly, without a state limit", "[partition][antichain]") {
    std::vector<dnnplan::layer> layers = {make_layer(0, "Input0")};
    std::vector<dnnplan::layer_edge> edges;
    for (std::size_t i = 1; i <= 30000; ++i) {
        layers.push_back(make_layer(i));
        edges.push_back({i - 1, i});
    }
    const dnnplan::layer_graph g(layers, edges);
    const auto s = dnnplan::build_antichain_states(g, 100);  // the limit is for branching graphs
    REQUIRE(s.states.size() == 30000);  // the Input layer is removed
    CHECK(s.chain);
    CHECK(s.removed_layers == std::vector<std::size_t>{0});
    CHECK(s.states[29999].antichain == std::vector<std::size_t>{30000});
    CHECK(s.states[0].output_activation_bytes == 1e6);
    CHECK(dnnplan::state_layers(s, 2) == std::vector<std::size_t>{1, 2, 3});
    check_figures(g, s);
}

TEST_CASE("a branching graph with too many states is refused by name", "[partition][antichain][errors]") {
    // A source, four parallel branches of 15 layers, a sink: (15 + 1)^4 = 65,536 antichains.
    std::vector<dnnplan::layer> layers = {make_layer(0)};
    std::vector<dnnplan::layer_edge> edges;
    for (std::size_t b = 0; b < 4; ++b)
        for (std::size_t d = 0; d < 15; ++d) {
            const std::size_t id = layers.size();
            layers.push_back(make_layer(id));
            edges.push_back({d == 0 ? 0 : id - 1, id});
        }
    const std::size_t sink = layers.size();
    layers.push_back(make_layer(sink));
    for (std::size_t b = 0; b < 4; ++b) edges.push_back({15 * b + 15, sink});
    const dnnplan::layer_graph wide(layers, edges);
    try {
        (void)dnnplan::build_antichain_states(wide);
        FAIL("accepted 65,536 states");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == "graph");
        CHECK(e.value() == "more than 20000 antichain states");
    }
    CHECK_THROWS_AS(dnnplan::build_antichain_states(pipedream_fixture("resnet50"), 100), dnnplan::invalid_input);
    CHECK(dnnplan::build_antichain_states(pipedream_fixture("resnet50"), 240).states.size() == 240);
}
