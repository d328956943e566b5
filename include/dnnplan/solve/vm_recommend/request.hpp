#pragma once
// A whole VM-recommendation request: the problem of solve/vm_recommend/problem.hpp, the synchronous workload
// that builds the default throughput model (Pollux compute parameters per GPU type, the instance
// types' GPU types, the shared synchronisation parameters, the batch and how it is split) and the
// options. This is what a problem file holds (io/vm_recommend_json.hpp: parse_vm_request;
// examples/vm_recommend.cpp); solve(request) in solve/vm_recommend/solve.hpp solves it.
// The model is model/sync_data_parallel.hpp's sync_cluster_throughput (Pollux: Qiao et al., OSDI
// 2021, section 3.2; docs/models/sync-data-parallel.md); nothing here adds a formula.

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/sync_data_parallel.hpp>
#include <dnnplan/solve/vm_recommend/problem.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// The synchronisation side of Pollux's model (Qiao et al., OSDI 2021, section 3.2) for a VM
/// request: each GPU type brings its own compute time, so only these of pollux_params are given.
struct sync_network {
    double alpha_n_s = 0.0;  ///< fixed part of the inter-node synchronisation time
    double beta_n_s = 0.0;   ///< inter-node synchronisation time per replica beyond 2
    double alpha_r_s = 0.0;  ///< fixed part of the intra-node synchronisation time
    double beta_r_s = 0.0;   ///< intra-node synchronisation time per replica beyond 2
    double gamma = 1.0;      ///< overlap exponent in [1, 10]
    double delta_n_s = 0.0;  ///< the node-term variant's coefficient (0 = Pollux)

    /// The pollux_params these are part of (compute parts 0: the model takes them per GPU type).
    [[nodiscard]] pollux_params params() const noexcept {
        return {.alpha_c_s = 0.0, .beta_c_s = 0.0, .alpha_n_s = alpha_n_s, .beta_n_s = beta_n_s, .alpha_r_s = alpha_r_s,
                .beta_r_s = beta_r_s, .gamma = gamma, .delta_n_s = delta_n_s, .batch_exponent = 1.0};
    }
    void validate(std::string_view path = "network") const { params().validate(path); }
    friend bool operator==(const sync_network&, const sync_network&) = default;
};

/// The synchronous workload of a VM request, by name: `gpu_types` gives the compute speed
/// T_grad(m) = fixed_s + per_sample_s m (Pollux's alpha_c + beta_c m) of each GPU type, `instance_gpu_types` the GPU type of every
/// catalog instance type (each instance is one node with catalog gpus replicas of that type).
/// `network` holds the shared synchronisation parameters and gamma (its alpha_c_s and beta_c_s
/// are not used: each GPU type brings its own); with `ring`, T_sync is the ring all-reduce's.
/// `batch`, `policy`, `basis` and `accumulation_steps` are those of sync_cluster_spec.
struct sync_vm_workload {
    std::map<std::string, affine_time, std::less<>> gpu_types{};
    std::map<std::string, std::string, std::less<>> instance_gpu_types{};
    sync_network network{};
    std::optional<ring_allreduce> ring{};
    batch_policy policy = batch_policy::equal;
    batch_basis basis = batch_basis::per_replica;
    double batch = 0.0;
    std::int32_t accumulation_steps = 0;

    /// Checks the fields and that every catalog instance type has a GPU type listed in
    /// gpu_types, and no instance type outside the catalog is named. Throws invalid_input.
    /// What can be checked without a catalog: the fields' ranges, and that every instance type's
    /// GPU type is listed in gpu_types.
    void validate(std::string_view path = "workload") const {
        const std::string p = detail::field_prefix(path);
        if (gpu_types.empty()) throw invalid_input(p + "gpu_types", "{}", "at least one GPU type");
        for (const auto& [name, compute] : gpu_types) {
            if (name.empty()) throw invalid_input(p + "gpu_types", "\"\"", "non-empty GPU type names");
            validate_gpu_compute(compute, p + "gpu_types." + name);
        }
        for (const auto& [instance, gpu] : instance_gpu_types)
            if (!gpu_types.contains(gpu)) {
                std::string expected = "a GPU type listed in ";  // appends: GCC 12 -O3 -Wrestrict
                expected += p;
                expected += "gpu_types";
                throw invalid_input(p + "instance_gpu_types." + instance, '"' + gpu + '"', std::move(expected));
            }
        network.validate(p + "network");
        if (ring) ring->validate(p + "ring");
        detail::require_positive(p + "batch", batch);
        detail::require_at_least(p + "accumulation_steps", accumulation_steps, 0);
    }

    void validate(const instance_catalog& catalog, std::string_view path = "workload") const {
        const std::string p = detail::field_prefix(path);
        if (gpu_types.empty()) throw invalid_input(p + "gpu_types", "{}", "at least one GPU type");
        for (const auto& [name, compute] : gpu_types) {
            if (name.empty()) throw invalid_input(p + "gpu_types", "\"\"", "non-empty GPU type names");
            validate_gpu_compute(compute, p + "gpu_types." + name);
        }
        for (const auto& [instance, gpu] : instance_gpu_types) {
            if (!catalog.find(instance))
                throw invalid_input(p + "instance_gpu_types." + instance, '"' + gpu + '"',
                                    "an instance type of the catalog as the key");
            if (!gpu_types.contains(gpu)) {
                std::string expected = "a GPU type listed in ";  // appends: GCC 12 -O3 -Wrestrict
                expected += p;
                expected += "gpu_types";
                throw invalid_input(p + "instance_gpu_types." + instance, '"' + gpu + '"', std::move(expected));
            }
        }
        for (const auto& t : catalog.instances)
            if (!instance_gpu_types.contains(t.name))
                throw invalid_input(p + "instance_gpu_types." + t.name, "missing",
                                    "the GPU type of every catalog instance type");
        network.validate(p + "network");
        if (ring) ring->validate(p + "ring");
        detail::require_positive(p + "batch", batch);
        detail::require_at_least(p + "accumulation_steps", accumulation_steps, 0);
    }

    /// The cluster model over `catalog`'s types (type k = catalog.instances[k]). Validates first.
    [[nodiscard]] sync_cluster_throughput model(const instance_catalog& catalog) const {
        validate(catalog);
        std::vector<affine_time> compute;
        compute.reserve(catalog.instances.size());
        for (const auto& t : catalog.instances) compute.push_back(gpu_types.find(instance_gpu_types.find(t.name)->second)->second);
        sync_cluster_spec spec{.types = {}, .network = network.params(), .ring = ring, .policy = policy, .basis = basis,
                               .batch = batch, .accumulation_steps = accumulation_steps};
        return sync_cluster_throughput::from_catalog(catalog, compute, std::move(spec));
    }
};

/// A problem file's content: the problem, the synchronous workload and the options.
struct vm_request {
    vm_problem problem{};
    sync_vm_workload workload{};
    vm_options options{};

    /// Fields named from `path` ("" at a document root: "catalog.instances[0].quota",
    /// "workload.batch", "options.relative_gap").
    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        problem.validate(path);
        workload.validate(problem.catalog, p + "workload");
        options.validate(p + "options");
    }
};

}  // namespace dnnplan
