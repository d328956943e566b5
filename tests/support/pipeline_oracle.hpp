#pragma once
// Seeded random layer chains and the brute-force oracle of pipeline partitioning: every split of
// the states into contiguous stages, every replica count per stage with a total of at most D,
// each priced by the model with its true stage_index, stage_count, devices_before and
// devices_total. Small inputs only (n <= 7 states, D <= 7 devices).

#include "random_problems.hpp"

#include <dnnplan/fit/layer_chain.hpp>
#include <dnnplan/model/concepts.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace dnnplan_test {

/// A chain of `n` layers with random linear times, activations and parameters; some layers
/// have no parameters (like ReLU and pooling layers).
inline dnnplan::layer_chain random_chain(rng& r, std::size_t n) {
    dnnplan::layer_chain chain;
    for (std::size_t i = 0; i < n; ++i) {
        dnnplan::chain_layer l;
        l.layer = i;
        l.forward = {.fixed_s = r.chance(0.5) ? r.uniform(0.0, 2e-3) : 0.0, .per_sample_s = r.uniform(1e-5, 1e-3)};
        l.backward = {.fixed_s = r.chance(0.5) ? r.uniform(0.0, 4e-3) : 0.0, .per_sample_s = r.uniform(2e-5, 2e-3)};
        l.activation_bytes_per_sample = r.uniform(1e4, 4e6);
        l.parameter_bytes = r.chance(0.6) ? r.uniform(1e5, 4e8) : 0.0;
        l.optimizer_state_bytes = 2.0 * l.parameter_bytes;
        chain.layers.push_back(l);
        chain.cut_bytes_per_sample.push_back(i + 1 < n ? l.activation_bytes_per_sample : 0.0);
    }
    return chain;
}

/// best[d - 1] = the smallest model.pipeline_time_s(slowest, S) over every pipeline on at most
/// d devices (+inf: none), d = 1..max_devices.
template <dnnplan::stage_cost_model Model>
std::vector<double> brute_force_pipeline(const Model& model, std::int32_t max_devices, std::int32_t max_stages = 0) {
    const double infinity = std::numeric_limits<double>::infinity();
    const std::size_t n = model.num_states();
    std::vector<double> best(static_cast<std::size_t>(max_devices), infinity);
    std::vector<std::size_t> ends;          // stage k covers [ends[k-1] or 0, ends[k])
    std::vector<std::int32_t> replicas;
    const std::function<void()> price = [&]() {
        const auto stages = static_cast<std::int32_t>(ends.size());
        std::int32_t total = 0;
        for (const auto r : replicas) total += r;
        double slowest = 0.0;
        std::int32_t before = 0;
        for (std::size_t k = 0; k < ends.size(); ++k) {
            const dnnplan::stage_candidate c{.first_state = k == 0 ? 0 : ends[k - 1], .end_state = ends[k],
                                             .replicas = replicas[k], .devices_before = before, .devices_total = total,
                                             .stage_index = static_cast<std::int32_t>(k), .stage_count = stages};
            slowest = std::max(slowest, static_cast<double>(model.stage_time_s(c)));
            before += replicas[k];
        }
        if (slowest == infinity) return;
        const double t = model.pipeline_time_s(slowest, stages);
        for (std::int32_t d = total; d <= max_devices; ++d)
            best[static_cast<std::size_t>(d - 1)] = std::min(best[static_cast<std::size_t>(d - 1)], t);
    };
    // Replicas for every stage of a fixed split, total <= max_devices.
    const std::function<void(std::size_t, std::int32_t)> assign = [&](std::size_t k, std::int32_t left) {
        if (k == ends.size()) {
            price();
            return;
        }
        const auto later = static_cast<std::int32_t>(ends.size() - k - 1);
        for (std::int32_t r = 1; r + later <= left; ++r) {
            replicas[k] = r;
            assign(k + 1, left - r);
        }
    };
    // Every split of [0, n) into contiguous stages: the set of inner cut points.
    for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << (n - 1)); ++mask) {
        ends.clear();
        for (std::size_t s = 1; s < n; ++s)
            if ((mask >> (s - 1)) & 1U) ends.push_back(s);
        ends.push_back(n);
        if (static_cast<std::int32_t>(ends.size()) > max_devices) continue;
        if (max_stages > 0 && static_cast<std::int32_t>(ends.size()) > max_stages) continue;
        replicas.assign(ends.size(), 1);
        assign(0, max_devices);
    }
    return best;
}

}  // namespace dnnplan_test
