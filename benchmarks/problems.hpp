#pragma once
// Benchmark inputs. Sources: the ResNet-110 profile of the spotDNN artifact and Table III of
// Shang et al. (IWQoS 2023), as summarised in the reference note; the synthetic catalog is
// generated here from a seed.

#include <dnnplan/solve/spot_provision/solve.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

namespace dnnplan_bench {

/// ResNet-110 communication and loss coefficients of the artifact (CIFAR-100).
inline dnnplan::workload_profile resnet110_profile_base() {
    dnnplan::workload_profile p;
    p.parameter_bytes = 11.5e6;
    p.required_bandwidth_bytes_per_s = 142e6;
    p.ps_bandwidth_bytes_per_s = 1200e6;
    p.pcie_bandwidth_bytes_per_s = 1e10;
    p.contention = {.alpha1 = 0.8, .beta1 = -1.92};
    p.loss = {.gamma1 = 876.5, .gamma2 = -0.2, .gamma3 = 2507.6, .gamma4 = std::nullopt, .gamma5 = 0.5};
    return p;
}

inline void add_type(dnnplan::spot_problem& p, const std::string& name, std::int32_t gpus, std::int32_t quota,
                     double spot, double on_demand, std::int64_t per_gpu_batch, double samples_per_s) {
    p.catalog.instances.push_back(
        {.name = name, .gpus = gpus, .quota = quota, .spot_usd_per_h = spot, .on_demand_usd_per_h = on_demand});
    p.profile.per_instance[name] = {.per_gpu_batch = per_gpu_batch, .samples_per_s = samples_per_s};
}

/// (a) The artifact's ResNet-110 problem: 5 types, 25 instances, 5,832 clusters.
inline dnnplan::spot_problem resnet110_problem(double target_loss = 0.8, double deadline_s = 2400.0) {
    dnnplan::spot_problem p;
    p.profile = resnet110_profile_base();
    add_type(p, "p2.xlarge", 1, 2, 0.918, 0.90, 1024, 1885);
    add_type(p, "g4dn.4xlarge", 1, 5, 0.3612, 1.204, 1024, 750);
    add_type(p, "g3.8xlarge", 2, 5, 0.684, 2.28, 512, 1018);
    add_type(p, "g3.16xlarge", 4, 8, 1.5676, 4.56, 512, 1995);
    add_type(p, "p2.8xlarge", 8, 5, 2.16, 7.20, 1024, 2115);
    p.goals = {.target_loss = target_loss, .deadline_s = deadline_s};
    return p;
}

/// (b) Shaped like Table III: its 7 types, GPU counts, quota 10 and prices; speeds scaled from
/// the artifact's per-GPU measurements (V100 taken as 2x K80, T4 and M60 as measured).
/// 11^7 = 19,487,171 clusters.
inline dnnplan::spot_problem table3_problem(double target_loss = 0.8, double deadline_s = 1200.0) {
    dnnplan::spot_problem p;
    p.profile = resnet110_profile_base();
    add_type(p, "p3.2xlarge", 1, 10, 1.25, 3.06, 1024, 3770);
    add_type(p, "p2.8xlarge", 8, 10, 2.16, 7.20, 1024, 2115);
    add_type(p, "g4dn.12xlarge", 4, 10, 1.22, 3.91, 1024, 2800);
    add_type(p, "g4dn.4xlarge", 1, 10, 0.36, 1.20, 1024, 750);
    add_type(p, "g3.16xlarge", 4, 10, 1.37, 4.56, 512, 1995);
    add_type(p, "g3.8xlarge", 2, 10, 0.69, 2.28, 512, 1018);
    add_type(p, "g3.4xlarge", 1, 10, 0.34, 1.14, 512, 520);
    p.goals = {.target_loss = target_loss, .deadline_s = deadline_s};
    return p;
}

/// (c) A synthetic catalog of `types` types with quota `quota`: GPU families and sizes like
/// EC2's, per-GPU speeds and prices drawn around family means from a fixed seed.
inline dnnplan::spot_problem synthetic_problem(std::int32_t types = 30, std::int32_t quota = 32,
                                               std::uint64_t seed = 7, double target_loss = 0.8,
                                               double deadline_s = 600.0) {
    struct family { const char* name; double samples_per_gpu_s; double usd_per_gpu_h; std::int64_t batch; };
    constexpr family families[] = {{"v100", 3770, 0.92, 1024}, {"k80", 1885, 0.27, 1024}, {"t4", 750, 0.16, 1024},
                                   {"m60", 509, 0.17, 512},    {"a10g", 2600, 0.45, 1024}, {"a100", 4500, 1.6, 1024}};
    std::mt19937_64 engine(seed);
    const auto unit = [&] { return static_cast<double>(engine() >> 11) * 0x1.0p-53; };
    dnnplan::spot_problem p;
    p.profile = resnet110_profile_base();
    for (std::int32_t k = 0; k < types; ++k) {
        const family& f = families[static_cast<std::size_t>(k) % std::size(families)];
        const std::int32_t gpus = std::int32_t{1} << ((k / static_cast<std::int32_t>(std::size(families))) % 4);
        // Multi-GPU workers scale sub-linearly (PCIe), prices vary +-20% around the family mean.
        const double speed = f.samples_per_gpu_s * gpus * std::pow(0.9, std::log2(gpus)) * (0.85 + 0.3 * unit());
        const double spot = f.usd_per_gpu_h * gpus * (0.8 + 0.4 * unit());
        add_type(p, std::string(f.name) + "x" + std::to_string(gpus) + "-" + std::to_string(k), gpus, quota, spot,
                 spot * 3.0, f.batch, speed);
    }
    p.goals = {.target_loss = target_loss, .deadline_s = deadline_s};
    return p;
}

}  // namespace dnnplan_bench
