// The chain of cut points of fit/layer_chain.hpp: PipeDream's preprocessing, the order,
// the activations crossing each cut, and the per-layer time fits.

#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/fit/layer_chain.hpp>

#include <catch2/catch.hpp>

#include "../support/pipedream_fixtures.hpp"

#include <fstream>
#include <string>
#include <vector>

namespace {

using dnnplan_test::pipedream_fixture;

dnnplan::layer make_layer(std::string id, std::string description, double fwd, double bwd, double act, double par) {
    return {.id = std::move(id), .description = std::move(description), .forward_s = fwd, .backward_s = bwd,
            .activation_bytes = act, .parameter_bytes = par};
}

// input -> a -> b -> d, a -> c -> d (a diamond), d -> out (a __getitem__ sink). Activations for
// a batch of 10: a 100, b 200, c 300, d 400.
dnnplan::layer_graph diamond(double scale = 1.0) {
    return dnnplan::layer_graph({make_layer("input", "Input0", 0, 0, 50, 0), make_layer("a", "Conv", 0.1 * scale, 0.2 * scale, 100, 40),
                                 make_layer("b", "Conv", 0.3 * scale, 0.6 * scale, 200, 80), make_layer("c", "ReLU", 0.05 * scale, 0.05 * scale, 300, 0),
                                 make_layer("d", "Add", 0.01 * scale, 0.01 * scale, 400, 0), make_layer("out", "__getitem__", 0, 0, 1, 0)},
                                {{0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 4}, {4, 5}});
}

}  // namespace

TEST_CASE("vgg16's chain has PipeDream's 40 states and removes what PipeDream removes", "[partition][layer_chain]") {
    const auto graph = pipedream_fixture("vgg16");
    const auto chain = dnnplan::build_layer_chain(graph, 128);
    CHECK(chain.size() == 40);
    CHECK(chain.removed_layers == dnnplan::build_antichain_states(graph).removed_layers);
    // Almost a chain: each cut carries the activations of the layer before it, except the cut
    // after Size(0) (node33, 4 bytes), which node34 (View) reads together with the pooled output
    // (node32) before it: both cross. Nothing crosses after the last state.
    for (std::size_t s = 0; s + 1 < chain.size(); ++s) {
        const auto& id = graph.at(chain.layers[s].layer).id;
        INFO("cut after " << id);
        if (id == "node33") {
            REQUIRE(graph.at(chain.layers[s - 1].layer).id == "node32");
            CHECK(chain.cut_bytes_per_sample[s] == (4.0 + graph.at(chain.layers[s - 1].layer).activation_bytes) / 128);
        } else {
            CHECK(chain.cut_bytes_per_sample[s] == chain.layers[s].activation_bytes_per_sample);
        }
    }
    CHECK(chain.cut_bytes_per_sample.back() == 0.0);
    // Times per sample: the profile's total over 128 samples is PipeDream's one-machine time.
    double total = 0;
    for (const auto& l : chain.layers) total += l.forward.at(128) + l.backward.at(128);
    CHECK(total == Approx(0.672535).epsilon(1e-9));
}

TEST_CASE("a branching graph's cuts carry every live activation", "[partition][layer_chain]") {
    const auto chain = dnnplan::build_layer_chain(diamond(), 10, {.optimizer_state_ratio = 3.0});
    REQUIRE(chain.size() == 4);
    // Kahn's order, smallest index first: a, b, c, d.
    CHECK(chain.layers[0].layer == 1);
    CHECK(chain.layers[1].layer == 2);
    CHECK(chain.layers[2].layer == 3);
    CHECK(chain.layers[3].layer == 4);
    CHECK(chain.removed_layers == std::vector<std::size_t>{0, 5});
    // Per sample (batch 10): a 10, b 20, c 30. After a: a's output (read by b and c) = 10. After
    // b: a's (still read by c) + b's = 10 + 20 = 30. After c: b's + c's = 20 + 30 = 50. Last: 0.
    CHECK(chain.cut_bytes_per_sample == std::vector<double>{10, 30, 50, 0});
    CHECK(chain.layers[0].optimizer_state_bytes == 120.0);  // 3 x 40
    CHECK(chain.layers[1].forward.per_sample_s == Approx(0.03));
}

TEST_CASE("profiles at several batch sizes give a fitted linear time per layer", "[partition][layer_chain]") {
    // Layer times t(b) = 0.1 * scale: at batch 10 scale 1, at batch 30 scale 2 -> a's forward
    // goes 0.1 -> 0.2: per sample 0.005, fixed 0.05. A profiled optimizer state wins over the ratio.
    auto g10 = diamond(1.0);
    std::vector<dnnplan::layer> layers = diamond(2.0).layers();
    layers[2].optimizer_state_bytes = 7.0;
    const dnnplan::layer_graph g30(layers, diamond().edges());
    const std::vector<dnnplan::batch_profile> profiles{{.batch_size = 10, .graph = g10}, {.batch_size = 30, .graph = g30}};
    const auto chain = dnnplan::build_layer_chain(profiles);
    CHECK(chain.layers[0].forward.fixed_s == Approx(0.05));
    CHECK(chain.layers[0].forward.per_sample_s == Approx(0.005));
    CHECK(chain.layers[1].backward.fixed_s == Approx(0.3));
    CHECK(chain.layers[1].backward.per_sample_s == Approx(0.03));
    // The reference (first) profile's sizes: b's optimizer state is 2 x 80 there.
    CHECK(chain.layers[1].optimizer_state_bytes == 160.0);
    const std::vector<dnnplan::batch_profile> swapped{{.batch_size = 30, .graph = g30}, {.batch_size = 10, .graph = g10}};
    CHECK(dnnplan::build_layer_chain(swapped).layers[1].optimizer_state_bytes == 7.0);
}

TEST_CASE("bad profiles are rejected naming the field", "[partition][layer_chain][errors]") {
    using Catch::Matchers::Contains;
    const auto g = diamond();
    CHECK_THROWS_WITH(dnnplan::build_layer_chain(std::vector<dnnplan::batch_profile>{}), Contains("profiles = []"));
    CHECK_THROWS_WITH(dnnplan::build_layer_chain(g, 0), Contains("profiles[0].batch_size = 0"));
    CHECK_THROWS_WITH(dnnplan::build_layer_chain(g, 10, {.optimizer_state_ratio = -1}), Contains("options.optimizer_state_ratio = -1"));
    const std::vector<dnnplan::batch_profile> same{{.batch_size = 10, .graph = g}, {.batch_size = 10, .graph = g}};
    CHECK_THROWS_WITH(dnnplan::build_layer_chain(same), Contains("profiles[1].batch_size = 10") && Contains("no other profile"));
    std::vector<dnnplan::layer> renamed = g.layers();
    renamed[3].id = "z";
    const std::vector<dnnplan::batch_profile> mismatch{{.batch_size = 10, .graph = g},
                                                       {.batch_size = 20, .graph = dnnplan::layer_graph(renamed, g.edges())}};
    CHECK_THROWS_WITH(dnnplan::build_layer_chain(mismatch), Contains("profiles[1].graph.layers[3].id = \"z\""));
    const std::vector<dnnplan::batch_profile> shorter{{.batch_size = 10, .graph = g},
                                                      {.batch_size = 20, .graph = dnnplan::layer_graph({g.layers()[0]}, {})}};
    CHECK_THROWS_WITH(dnnplan::build_layer_chain(shorter), Contains("profiles[1].graph.layers = 1 layers"));
    const dnnplan::layer_graph only_input({make_layer("x", "Input0", 0, 0, 1, 0)}, {});
    CHECK_THROWS_WITH(dnnplan::build_layer_chain(only_input, 4), Contains("profiles[0].graph"));
}
