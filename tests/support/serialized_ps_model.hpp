#pragma once
// A throughput model of the host's own (docs/architecture.md, "Swapping in a model"): one
// parameter server that serialises the workers' transfers, so an iteration takes the worker's
// compute time plus n transfer times. The spot planner's tests and its budget tests plug it in.

#include <array>
#include <cstddef>
#include <cstdint>

namespace dnnplan_test {

struct serialized_ps_model {
    std::array<double, 3> compute_s{0.38, 0.84, 1.20};
    std::array<double, 3> batch{1024, 1024, 1024};
    double transfer_s = 2 * 11.5e6 / 1.2e9;

    [[nodiscard]] std::size_t type_count() const noexcept { return compute_s.size(); }
    [[nodiscard]] double iteration_time_s(std::size_t k, std::int64_t n) const noexcept {
        return compute_s[k] + static_cast<double>(n) * transfer_s;
    }
    [[nodiscard]] double worker_batch(std::size_t k) const noexcept { return batch[k]; }
};

}  // namespace dnnplan_test
