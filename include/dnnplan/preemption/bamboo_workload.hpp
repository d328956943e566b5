#pragma once
// The workloads of Bamboo's simulator (Thorpe et al., "Bamboo: Making Preemptible Instances
// Resilient for Affordable Training of Large DNNs", NSDI 2023; simulator uclasystem/bamboo,
// project_pactum/simulation/simulator.py): a network as the simulator sees it (its pipeline's
// stages, the step time by number of pipelines, the samples of a step, the local rendezvous time
// and the on-demand layout it is compared with), and the six networks of the final simulator.
// docs/models/bamboo.md, "The six workloads".

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// The networks of Bamboo's final simulator.
enum class bamboo_workload { gpt2, bert, resnet, gnmt, vgg, alexnet };

template <>
struct enum_text<bamboo_workload> {
    static constexpr std::array<enum_name<bamboo_workload>, 6> names{{
        {bamboo_workload::gpt2, "gpt2"},
        {bamboo_workload::bert, "bert"},
        {bamboo_workload::resnet, "resnet"},
        {bamboo_workload::gnmt, "gnmt"},
        {bamboo_workload::vgg, "vgg"},
        {bamboo_workload::alexnet, "alexnet"},
    }};
};

/// A workload as Bamboo's simulator sees it: S stages per pipeline, a measured step time for P
/// pipelines (P = 1, 2, ...), the samples of one step, the local rendezvous time, and the
/// on-demand baseline it is compared with (instances x step time).
struct bamboo_workload_spec {
    std::string name{};
    std::int32_t samples_per_step = 0;
    std::int32_t stages = 0;                          ///< S: one instance per stage
    std::int64_t local_rendezvous_ms = 0;
    std::vector<std::int64_t> step_ms{};              ///< [P - 1]: the step time with P pipelines
    std::int32_t on_demand_instances = 0;
    double on_demand_step_s = 0.0;
    std::int32_t random_capacity = 0;                 ///< Bamboo's desired capacity in random mode

    void validate(std::string_view path = "workload") const {
        const std::string p = detail::field_prefix(path);
        if (name.empty()) throw invalid_input(p + "name", "\"\"", "a non-empty name");
        detail::require_at_least(p + "samples_per_step", samples_per_step, 1);
        detail::require_at_least(p + "stages", stages, 1);
        detail::require_at_least(p + "local_rendezvous_ms", local_rendezvous_ms, 0);
        if (step_ms.empty()) throw invalid_input(p + "step_ms", "[]", "a step time for P = 1 at least");
        for (std::size_t i = 0; i < step_ms.size(); ++i)
            detail::require_at_least([&] { return p + "step_ms[" + std::to_string(i) + "]"; }, step_ms[i], 1);
        detail::require_at_least(p + "on_demand_instances", on_demand_instances, 1);
        detail::require_positive(p + "on_demand_step_s", on_demand_step_s);
        detail::require_at_least(p + "random_capacity", random_capacity, 0);
    }

    friend bool operator==(const bamboo_workload_spec&, const bamboo_workload_spec&) = default;
};

/// The constants of Bamboo's final simulator for `w` (simulator.py: its model blocks and the
/// <model>_simulate_step_delta tables; docs/models/bamboo.md lists them).
[[nodiscard]] inline bamboo_workload_spec bamboo_workload_preset(bamboo_workload w) {
    switch (w) {
        case bamboo_workload::gpt2: return {"gpt2", 32, 12, 20'000, {1200, 1085, 1046, 1008}, 32, 3.37, 48};
        case bamboo_workload::bert: return {"bert", 264, 12, 20'000, {4310, 2390, 1805, 1450}, 20, 2.51, 48};
        case bamboo_workload::resnet: return {"resnet", 384, 8, 10'000, {6100, 3200, 2400, 1600}, 20, 1.3, 32};
        case bamboo_workload::gnmt: return {"gnmt", 288, 6, 10'000, {3100, 1660, 1185, 950}, 16, 0.9, 24};
        case bamboo_workload::vgg: return {"vgg", 384, 6, 5'000, {9300, 4900, 3440, 2750}, 16, 2.2, 24};
        case bamboo_workload::alexnet: return {"alexnet", 384, 6, 5'000, {6180, 3100, 2000, 1550}, 16, 1.6, 24};
    }
    throw invalid_input("workload", "unknown", enum_expected<bamboo_workload>());
}

}  // namespace dnnplan
