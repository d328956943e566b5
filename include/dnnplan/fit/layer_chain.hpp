#pragma once
// Builds a layer_chain (workload/layer_chain.hpp) from profiles of a layer graph: per-layer times
// fitted linear in the batch (fit/linear_time.hpp) from profiles at several batch sizes, or
// proportional to the batch from one profile.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/linear_time.hpp>
#include <dnnplan/workload/layer_chain.hpp>
#include <dnnplan/workload/layer_graph.hpp>

#include <cstddef>
#include <functional>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// A profile of the whole graph measured at one batch size (times and activations are for
/// `batch_size` samples; parameters do not depend on it).
struct batch_profile {
    double batch_size = 0.0;
    layer_graph graph{};  ///< validated when it is built

    void validate(std::string_view path = "profile") const {
        detail::require_positive(detail::field_prefix(path) + "batch_size", batch_size);
    }
};

struct layer_chain_options {
    /// Optimizer state (including the gradient buffer) per parameter byte, for layers without a
    /// profiled optimizer_state_bytes: 2 for SGD with momentum (gradient + momentum buffer),
    /// 3 for Adam (gradient + two moment estimates; Kingma and Ba, ICLR 2015, Algorithm 1).
    double optimizer_state_ratio = 2.0;

    void validate(std::string_view path = "options") const {
        detail::require_non_negative(detail::field_prefix(path) + "optimizer_state_ratio", optimizer_state_ratio);
    }
};

/// The chain of `profiles` (the first is the reference: its edges, activations and parameters
/// are used). Every profile must have the same layer ids in the same order, and the batch sizes
/// must differ. Times: one profile -> proportional_time(); two or more -> fit_linear_time() per
/// layer over the profiles. The order is Kahn's topological order taking the smallest layer
/// index first (deterministic; the file order wherever the edges allow it). Throws invalid_input
/// naming "profiles[k]...." or "options....".
[[nodiscard]] inline layer_chain build_layer_chain(std::span<const batch_profile> profiles,
                                                   const layer_chain_options& options = {}) {
    options.validate();
    if (profiles.empty()) throw invalid_input("profiles", "[]", "at least one profile");
    for (std::size_t k = 0; k < profiles.size(); ++k) {
        const std::string at = "profiles[" + std::to_string(k) + "]";
        detail::require_positive(at + ".batch_size", profiles[k].batch_size);
        for (std::size_t q = 0; q < k; ++q)
            if (profiles[q].batch_size == profiles[k].batch_size)
                throw invalid_input(at + ".batch_size", detail::format_number(profiles[k].batch_size),
                                    "a batch size no other profile has");
        const auto& g = profiles[k].graph;
        const auto& ref = profiles.front().graph;
        if (g.size() != ref.size())
            throw invalid_input(at + ".graph.layers", std::to_string(g.size()) + " layers",
                                std::to_string(ref.size()) + " layers, as profiles[0]");
        for (std::size_t i = 0; i < g.size(); ++i)
            if (g.at(i).id != ref.at(i).id)
                throw invalid_input(at + ".graph.layers[" + std::to_string(i) + "].id", '"' + g.at(i).id + '"',
                                    '"' + ref.at(i).id + "\", as profiles[0]");
    }
    const batch_profile& reference = profiles.front();
    const layer_graph& graph = reference.graph;
    const std::vector<bool> removed = detail::pipedream_removed_layers(graph);
    layer_chain chain;
    for (std::size_t i = 0; i < graph.size(); ++i)
        if (removed[i]) chain.removed_layers.push_back(i);

    std::vector<std::size_t> in_degree(graph.size(), 0);
    for (const auto& e : graph.edges())
        if (!removed[e.from] && !removed[e.to]) ++in_degree[e.to];
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < graph.size(); ++i)
        if (!removed[i] && in_degree[i] == 0) ready.push(i);
    std::vector<std::size_t> position(graph.size(), 0);
    while (!ready.empty()) {
        const std::size_t i = ready.top();
        ready.pop();
        position[i] = chain.layers.size();
        const layer& l = graph.at(i);
        chain_layer c{.layer = i,
                      .activation_bytes_per_sample = l.activation_bytes / reference.batch_size,
                      .parameter_bytes = l.parameter_bytes,
                      .optimizer_state_bytes = l.optimizer_state_bytes.value_or(options.optimizer_state_ratio * l.parameter_bytes)};
        const std::string at = "profiles[0].graph.layers[" + std::to_string(i) + "]";
        if (profiles.size() == 1) {
            c.forward = proportional_time(reference.batch_size, l.forward_s, at);
            c.backward = proportional_time(reference.batch_size, l.backward_s, at);
        } else {
            std::vector<batch_time_sample> fwd, bwd;
            for (const auto& p : profiles) {
                fwd.push_back({.batch = p.batch_size, .time_s = p.graph.at(i).forward_s});
                bwd.push_back({.batch = p.batch_size, .time_s = p.graph.at(i).backward_s});
            }
            c.forward = fit_linear_time(fwd, "profiles");
            c.backward = fit_linear_time(bwd, "profiles");
        }
        chain.layers.push_back(c);
        for (const std::size_t j : graph.successors(i))
            if (!removed[j] && --in_degree[j] == 0) ready.push(j);
    }
    if (chain.layers.empty())
        throw invalid_input("profiles[0].graph", "no layers after removing Input and __getitem__ layers",
                            "at least one layer to partition");

    // A layer's output crosses every cut from its own position to its last kept reader's
    // (summed per cut, not as a running difference, so a cut nothing crosses is exactly 0).
    const std::size_t n = chain.layers.size();
    chain.cut_bytes_per_sample.assign(n, 0.0);
    for (std::size_t p = 0; p < n; ++p) {
        std::size_t last = p;
        for (const std::size_t j : graph.successors(chain.layers[p].layer))
            if (!removed[j] && position[j] > last) last = position[j];
        for (std::size_t s = p; s < last; ++s) chain.cut_bytes_per_sample[s] += chain.layers[p].activation_bytes_per_sample;
    }
    return chain;
}

/// The chain of one profile measured at `batch_size` samples (times proportional to the batch).
[[nodiscard]] inline layer_chain build_layer_chain(const layer_graph& graph, double batch_size,
                                                   const layer_chain_options& options = {}) {
    const batch_profile profile{.batch_size = batch_size, .graph = graph};
    return build_layer_chain(std::span<const batch_profile>(&profile, 1), options);
}

}  // namespace dnnplan
