#pragma once
// Seeded random spot-provisioning problems for property tests. The mapping from the generator's
// raw 64-bit output to numbers is written out here (not std::uniform_*_distribution, whose
// results differ between standard libraries), so a seed names the same problem everywhere.

#include <dnnplan/solve/spot_provision/solve.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

namespace dnnplan_test {

class rng {
public:
    explicit rng(std::uint64_t seed) : engine_(seed) {}
    double uniform(double lo, double hi) {
        const double unit = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
        return lo + (hi - lo) * unit;
    }
    std::int32_t integer(std::int32_t lo, std::int32_t hi) {  // inclusive
        const auto span = static_cast<std::uint64_t>(hi - lo + 1);
        return lo + static_cast<std::int32_t>(engine_() % span);
    }
    bool chance(double p) { return uniform(0.0, 1.0) < p; }

private:
    std::mt19937_64 engine_;
};

struct random_problem_shape {
    std::int32_t max_types = 6;
    std::int32_t max_quota = 6;
};

/// A problem whose deadline is drawn around the time of a random cluster, so that some
/// problems are feasible, some tight and some infeasible.
inline dnnplan::spot_request random_spot_request(std::uint64_t seed, random_problem_shape shape = {}) {
    rng r(seed);
    dnnplan::spot_request req;
    auto& p = req.problem;
    // Half the problems at the largest shapes, where pruning has the most to get wrong.
    const std::int32_t types = r.chance(0.5) ? r.integer(std::max(1, shape.max_types - 1), shape.max_types)
                                             : r.integer(1, shape.max_types);
    p.profile.parameter_bytes = r.uniform(1e6, 5e8);
    p.profile.required_bandwidth_bytes_per_s = r.uniform(1e8, 1e9);
    p.profile.ps_bandwidth_bytes_per_s = r.uniform(3e8, 5e9);
    p.profile.pcie_bandwidth_bytes_per_s = r.uniform(5e9, 2e10);
    p.profile.contention = {.alpha1 = r.uniform(0.05, 1.5), .beta1 = r.uniform(-3.0, 0.0)};
    p.profile.loss = {.gamma1 = r.uniform(0.0, 2000.0),
                      .gamma2 = r.uniform(-0.3, 0.1),
                      .gamma3 = r.uniform(300.0, 5000.0),
                      .gamma4 = std::nullopt,
                      .gamma5 = r.uniform(0.0, 1.0)};
    if (r.chance(0.5)) p.profile.loss.gamma4 = r.uniform(0.0, 1.0);
    const dnnplan::ps_network net{.parameter_bytes = p.profile.parameter_bytes,
                                  .required_bandwidth_bytes_per_s = p.profile.required_bandwidth_bytes_per_s,
                                  .ps_bandwidth_bytes_per_s = p.profile.ps_bandwidth_bytes_per_s,
                                  .pcie_bandwidth_bytes_per_s = p.profile.pcie_bandwidth_bytes_per_s,
                                  .contention = p.profile.contention};
    for (std::int32_t k = 0; k < types; ++k) {
        dnnplan::instance_type t;
        t.name = "type" + std::to_string(k);
        t.gpus = std::int32_t{1} << r.integer(0, 3);
        t.quota = r.chance(0.8) ? r.integer(std::max(0, shape.max_quota - 3), shape.max_quota)
                                : r.integer(0, shape.max_quota);
        t.spot_usd_per_h = r.uniform(0.1, 5.0);
        t.on_demand_usd_per_h = t.spot_usd_per_h * r.uniform(1.5, 4.0);
        const std::int64_t per_gpu_batch = std::int64_t{1} << r.integer(5, 10);
        // Measured time = communication alone at n = 1 + a positive compute time.
        const double compute_s = r.uniform(0.05, 3.0);
        const double measured_s = dnnplan::heterogeneous_ps_model::communication_time_s(net, t.gpus, 1) + compute_s;
        const double batch = static_cast<double>(per_gpu_batch) * t.gpus;
        if (k == 0 || r.chance(0.9))  // now and then a type without a profile: not a candidate
            p.profile.per_instance[t.name] = {.per_gpu_batch = per_gpu_batch, .samples_per_s = batch / measured_s};
        if (p.profile.per_instance.contains(t.name) && t.quota > 0 && r.chance(0.25))
            p.existing[t.name] = r.integer(0, std::min(t.quota, 2));
        p.catalog.instances.push_back(t);
    }
    // Keep eq. (3) inside its fitted range for every worker batch (gamma2 * b + gamma3 > 0).
    double largest_batch = 0.0;
    for (const auto& t : p.catalog.instances)
        if (const auto it = p.profile.per_instance.find(t.name); it != p.profile.per_instance.end())
            largest_batch = std::max(largest_batch, static_cast<double>(it->second.per_gpu_batch) * t.gpus);
    p.profile.loss.gamma3 = std::max(p.profile.loss.gamma3, -p.profile.loss.gamma2 * largest_batch + r.uniform(50.0, 500.0));
    if (r.chance(0.3)) p.catalog.parameter_server_usd_per_h = r.uniform(0.05, 0.5);
    p.goals.target_loss = p.profile.loss.gamma5 + r.uniform(0.05, 1.0);
    p.goals.deadline_s = 1.0;  // replaced below
    auto& o = req.options;
    o.pricing = r.chance(0.7) ? dnnplan::price_kind::spot : dnnplan::price_kind::on_demand;
    const double increments[] = {0.0, 1.0, 60.0};
    o.billing_increment_s = increments[r.integer(0, 2)];
    o.objective = r.chance(0.8) ? dnnplan::objective_kind::min_cost : dnnplan::objective_kind::min_time;
    o.cap_at_n_upper = r.chance(0.15);
    // Deadline around the time of one random cluster of the space.
    const dnnplan::spotdnn_setup setup = dnnplan::make_spotdnn_setup(dnnplan::spot_request{.problem = p, .options = {}});
    dnnplan::cluster_counts counts(setup.provisioner.space.lower);
    for (std::size_t k = 0; k < counts.size(); ++k)
        counts[k] = r.integer(counts[k], setup.provisioner.space.upper[k]);
    std::int64_t n = 0;
    for (const auto c : counts) n += c;
    if (n == 0 && !counts.empty() && setup.provisioner.space.upper[0] > 0) counts[0] = 1, n = 1;
    const double t = n > 0 ? setup.provisioner.predict(counts, p.goals.target_loss).training_time_s : 1000.0;
    p.goals.deadline_s = std::max(1.0, t * r.uniform(0.4, 2.0));
    return req;
}

}  // namespace dnnplan_test
