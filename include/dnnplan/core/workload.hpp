#pragma once
// What was measured about one training job: the inputs of the spotDNN models
// (Shang et al., IWQoS 2023; see docs/models/heterogeneous-ps.md and docs/models/convergence.md).

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/detail/validate.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace dnnplan {

/// A measurement of one instance type training alone against the parameter server.
struct instance_profile {
    std::int64_t per_gpu_batch = 0;  ///< samples per GPU per iteration (b_k)
    double samples_per_s = 0.0;      ///< measured speed of one worker of this type, alone
};

/// PS-bandwidth contention, eq. (9): P = min(alpha1 * sqrt(n) + beta1, 1), clamped at 0.
struct contention_coefficients {
    double alpha1 = 0.0;
    double beta1 = 0.0;
};

/// Loss model, eq. (3): f = (gamma2*b_w + gamma3) * sqrt((R + gamma4) * n) / (j + gamma1) + gamma5.
/// Without gamma4 the convergence-coefficient term is absent: sqrt(n) (the artifact's form).
struct loss_coefficients {
    double gamma1 = 0.0;  ///< iteration offset, >= 0
    double gamma2 = 0.0;
    double gamma3 = 0.0;
    std::optional<double> gamma4{};  ///< >= 0 when present
    double gamma5 = 0.0;  ///< asymptotic loss
};

/// Profile of an asynchronous parameter-server training job (one PS, heterogeneous workers).
struct workload_profile {
    double parameter_bytes = 0.0;                  ///< S_parm
    double required_bandwidth_bytes_per_s = 0.0;   ///< B_req: what one worker uses alone
    double ps_bandwidth_bytes_per_s = 0.0;         ///< B_ps
    double pcie_bandwidth_bytes_per_s = 0.0;       ///< B_pcie inside a worker
    /// Measurements keyed by instance type name. Types without an entry are not candidates.
    std::map<std::string, instance_profile, std::less<>> per_instance{};
    contention_coefficients contention{};
    loss_coefficients loss{};

    /// Throws invalid_input naming the first bad field; does not check the per_instance names
    /// (that needs a catalog: the overload below).
    void validate(std::string_view path = "profile") const {
        const std::string base = detail::field_prefix(path);
        detail::require_positive(base + "parameter_bytes", parameter_bytes);
        detail::require_positive(base + "required_bandwidth_bytes_per_s", required_bandwidth_bytes_per_s);
        detail::require_positive(base + "ps_bandwidth_bytes_per_s", ps_bandwidth_bytes_per_s);
        detail::require_positive(base + "pcie_bandwidth_bytes_per_s", pcie_bandwidth_bytes_per_s);
        if (per_instance.empty())
            throw invalid_input(base + "per_instance", "{}", "a measurement for at least one instance type");
        for (const auto& [name, p] : per_instance) {
            const std::string at = base + "per_instance." + name;
            detail::require_at_least(at + ".per_gpu_batch", p.per_gpu_batch, 1);
            detail::require_positive(at + ".samples_per_s", p.samples_per_s);
        }
        detail::require_finite(base + "contention.alpha1", contention.alpha1);
        detail::require_finite(base + "contention.beta1", contention.beta1);
        detail::require_non_negative(base + "loss.gamma1", loss.gamma1);
        detail::require_finite(base + "loss.gamma2", loss.gamma2);
        detail::require_finite(base + "loss.gamma3", loss.gamma3);
        if (loss.gamma4) detail::require_non_negative(base + "loss.gamma4", *loss.gamma4);
        detail::require_finite(base + "loss.gamma5", loss.gamma5);
    }

    /// As above, and every per_instance key must name a type of `catalog`.
    void validate(const instance_catalog& catalog, std::string_view path = "profile") const {
        const std::string base = detail::field_prefix(path);
        for (const auto& [name, p] : per_instance)
            if (!catalog.find(name))
                throw invalid_input(base + "per_instance." + name, '"' + name + '"',
                                    "the name of an instance type in the catalog");
        validate(path);
    }
};

/// What the user wants: reach `target_loss` within `deadline_s` seconds of training.
struct training_goals {
    double target_loss = 0.0;
    double deadline_s = 0.0;

    void validate(std::string_view path = "goals") const {
        const std::string base = detail::field_prefix(path);
        detail::require_finite(base + "target_loss", target_loss);
        detail::require_positive(base + "deadline_s", deadline_s);
    }
};

}  // namespace dnnplan
