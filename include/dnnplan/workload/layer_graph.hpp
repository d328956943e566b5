#pragma once
// A DNN as a DAG of layers with per-layer profile figures: the input of pipeline partitioning
// (partition/). Read PipeDream's graph.txt with io/pipedream_graph.hpp.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dnnplan {

/// One layer (a node of the graph) as profiled on one device for one minibatch.
struct layer {
    std::string id{};           ///< unique, e.g. "node11"
    std::string description{};  ///< e.g. "Conv2d(128, 256, kernel_size=(3, 3), ...)"
    double forward_s = 0.0;
    double backward_s = 0.0;
    double activation_bytes = 0.0;  ///< output activations for the profiled minibatch
    double parameter_bytes = 0.0;
    std::optional<double> optimizer_state_bytes{};  ///< absent: not profiled
};

/// A data dependency: layer `from` feeds layer `to` (indices into layer_graph::layers()).
struct layer_edge {
    std::size_t from = 0;
    std::size_t to = 0;
    friend bool operator==(const layer_edge&, const layer_edge&) = default;
};

/// An immutable, validated DAG of layers. Layer order is the order given (for a graph.txt, the
/// file's order), which PipeDream-compatible partitioning depends on.
class layer_graph {
public:
    layer_graph() = default;

    /// Throws invalid_input naming the field ("layers[3].forward_s", "edges[2].to") or the
    /// layer id: ids must be non-empty and unique; times and sizes finite and >= 0; edge ends
    /// in range, no self-loops, no duplicate edges; the graph acyclic (the error names a layer
    /// on a cycle).
    layer_graph(std::vector<layer> layers, std::vector<layer_edge> edges)
        : layers_(std::move(layers)), edges_(std::move(edges)) {
        validate();
        successors_.resize(layers_.size());
        predecessors_.resize(layers_.size());
        for (const auto& e : edges_) {
            successors_[e.from].push_back(e.to);
            predecessors_[e.to].push_back(e.from);
        }
        check_acyclic();
    }

    [[nodiscard]] std::size_t size() const noexcept { return layers_.size(); }
    [[nodiscard]] const std::vector<layer>& layers() const noexcept { return layers_; }
    [[nodiscard]] const std::vector<layer_edge>& edges() const noexcept { return edges_; }
    [[nodiscard]] const layer& at(std::size_t i) const noexcept { return layers_[i]; }
    /// Direct successors / predecessors of layer i, in edge order.
    [[nodiscard]] const std::vector<std::size_t>& successors(std::size_t i) const noexcept { return successors_[i]; }
    [[nodiscard]] const std::vector<std::size_t>& predecessors(std::size_t i) const noexcept { return predecessors_[i]; }

    [[nodiscard]] std::optional<std::size_t> find(std::string_view id) const noexcept {
        for (std::size_t i = 0; i < layers_.size(); ++i)
            if (layers_[i].id == id) return i;
        return std::nullopt;
    }

private:
    void validate() const {
        std::unordered_map<std::string_view, std::size_t> seen;
        for (std::size_t i = 0; i < layers_.size(); ++i) {
            const auto& l = layers_[i];
            const std::string at = "layers[" + std::to_string(i) + "]";
            if (l.id.empty()) throw invalid_input(at + ".id", "\"\"", "a non-empty layer id");
            if (!seen.emplace(l.id, i).second)
                throw invalid_input(at + ".id", '"' + l.id + '"', "an id not used by another layer");
            detail::require_non_negative(at + ".forward_s", l.forward_s);
            detail::require_non_negative(at + ".backward_s", l.backward_s);
            detail::require_non_negative(at + ".activation_bytes", l.activation_bytes);
            detail::require_non_negative(at + ".parameter_bytes", l.parameter_bytes);
            if (l.optimizer_state_bytes)
                detail::require_non_negative(at + ".optimizer_state_bytes", *l.optimizer_state_bytes);
        }
        std::vector<std::pair<std::size_t, std::size_t>> pairs;
        for (std::size_t k = 0; k < edges_.size(); ++k) {
            const auto& e = edges_[k];
            const std::string at = "edges[" + std::to_string(k) + "]";
            const std::string range = "a layer index below " + std::to_string(layers_.size());
            if (e.from >= layers_.size()) throw invalid_input(at + ".from", std::to_string(e.from), range);
            if (e.to >= layers_.size()) throw invalid_input(at + ".to", std::to_string(e.to), range);
            if (e.from == e.to)
                throw invalid_input(at + ".to", std::to_string(e.to),
                                    "a layer other than its source " + layers_[e.from].id + " (no self-loops)");
            pairs.emplace_back(e.from, e.to);
        }
        std::sort(pairs.begin(), pairs.end());
        for (std::size_t k = 1; k < pairs.size(); ++k)
            if (pairs[k] == pairs[k - 1])
                throw invalid_input("edges", layers_[pairs[k].first].id + " -> " + layers_[pairs[k].second].id,
                                    "each edge once");
    }

    // Kahn's algorithm; a layer left with unmet inputs lies on or behind a cycle.
    void check_acyclic() const {
        std::vector<std::size_t> in_degree(layers_.size(), 0), ready;
        for (const auto& e : edges_) ++in_degree[e.to];
        for (std::size_t i = 0; i < layers_.size(); ++i)
            if (in_degree[i] == 0) ready.push_back(i);
        std::size_t done = 0;
        while (!ready.empty()) {
            const std::size_t i = ready.back();
            ready.pop_back();
            ++done;
            for (const std::size_t j : successors_[i])
                if (--in_degree[j] == 0) ready.push_back(j);
        }
        if (done == layers_.size()) return;
        // Walk back along unmet inputs until a layer repeats: it is on a cycle.
        std::size_t i = 0;
        while (in_degree[i] == 0) ++i;
        std::vector<bool> visited(layers_.size(), false);
        while (!visited[i]) {
            visited[i] = true;
            for (const std::size_t p : predecessors_[i])
                if (in_degree[p] > 0) {
                    i = p;
                    break;
                }
        }
        throw invalid_input("edges", "a cycle through " + layers_[i].id, "an acyclic graph");
    }

    std::vector<layer> layers_;
    std::vector<layer_edge> edges_;
    std::vector<std::vector<std::size_t>> successors_;
    std::vector<std::vector<std::size_t>> predecessors_;
};

namespace detail {

/// PipeDream's preprocessing (reference note, section 1): [i] is whether layer i is dropped
/// before partitioning. First every source whose description starts with "Input", then every
/// sink (of the whole graph) among the remaining layers whose description starts with
/// "__getitem__". build_antichain_states and build_layer_chain (fit/layer_chain.hpp) both
/// apply it.
[[nodiscard]] inline std::vector<bool> pipedream_removed_layers(const layer_graph& graph) {
    const std::size_t n = graph.size();
    std::vector<bool> removed(n, false);
    for (std::size_t i = 0; i < n; ++i)
        if (graph.predecessors(i).empty() && std::string_view(graph.at(i).description).starts_with("Input")) removed[i] = true;
    // Sinks after the Input removal (an Input source is never a sink of interest here).
    for (std::size_t i = 0; i < n; ++i) {
        if (removed[i]) continue;
        const bool sink = graph.successors(i).empty();
        if (sink && std::string_view(graph.at(i).description).starts_with("__getitem__")) removed[i] = true;
    }
    return removed;
}

}  // namespace detail

}  // namespace dnnplan
