#pragma once
// A layer graph as a chain of cut points for pipeline models that price stages per sample: the
// kept layers in a topological order, state s standing for "layers[0..s] done" (the states of
// model/concepts.hpp). Stages are contiguous ranges of that order. Preprocessing as
// PipeDream's optimizer (and build_antichain_states): "Input..." sources and "__getitem__..."
// sinks are dropped. Per-layer times scale with the batch (affine_time); fit/layer_chain.hpp builds
// a chain from profiles.

#include <dnnplan/core/affine_time.hpp>

#include <cstddef>
#include <vector>

namespace dnnplan {

/// One layer of a chain, per sample where it scales with the batch.
struct chain_layer {
    std::size_t layer = 0;                     ///< index into the profile's layer_graph
    affine_time forward{};                     ///< seconds for a batch of b samples on the profiled device
    affine_time backward{};
    double activation_bytes_per_sample = 0.0;  ///< output activations (stashed for the backward pass)
    double parameter_bytes = 0.0;
    double optimizer_state_bytes = 0.0;        ///< profiled, or optimizer_state_ratio * parameter_bytes
};

/// The chain of cut points of a graph. State s = layers[0..s] done; a stage [first, end) holds
/// layers[first..end-1].
struct layer_chain {
    std::vector<chain_layer> layers{};
    /// [s]: activation bytes per sample produced by layers[0..s] and read by a later layer (what
    /// crosses the cut after state s); 0 for the last state.
    std::vector<double> cut_bytes_per_sample{};
    std::vector<std::size_t> removed_layers{};  ///< "Input" sources and "__getitem__" sinks (graph indices)

    [[nodiscard]] std::size_t size() const noexcept { return layers.size(); }
};

}  // namespace dnnplan
