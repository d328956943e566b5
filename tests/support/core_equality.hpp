#pragma once
// Field-by-field equality of core/ input types, which have no operator== on purpose (the JSON
// round-trip tests of core/ and of the spot planner's types compare with it).

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/status.hpp>

#include <cstddef>
#include <tuple>

namespace dnnplan_test {

inline bool same(const dnnplan::instance_type& a, const dnnplan::instance_type& b) {
    return std::tie(a.name, a.gpus, a.quota, a.spot_usd_per_h, a.on_demand_usd_per_h, a.gpu_memory_bytes) ==
           std::tie(b.name, b.gpus, b.quota, b.spot_usd_per_h, b.on_demand_usd_per_h, b.gpu_memory_bytes);
}

inline bool same(const dnnplan::instance_catalog& a, const dnnplan::instance_catalog& b) {
    if (a.instances.size() != b.instances.size()) return false;
    for (std::size_t i = 0; i < a.instances.size(); ++i)
        if (!same(a.instances[i], b.instances[i])) return false;
    return a.parameter_server_usd_per_h == b.parameter_server_usd_per_h;
}

inline bool same(const dnnplan::search_budget& a, const dnnplan::search_budget& b) {
    return std::tie(a.max_nodes, a.max_evaluations, a.max_time_s) == std::tie(b.max_nodes, b.max_evaluations, b.max_time_s);
}

}  // namespace dnnplan_test
