#pragma once
// Largest per-GPU batch that fits a GPU's memory: spotDNN (Shang et al., IWQoS 2023), eq. (10).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace dnnplan {

/// Linear fit of the largest batch that fits against GPU memory: batch ~ alpha2 * mem + beta2.
struct batch_memory_fit {
    double alpha2_samples_per_byte = 0.0;
    double beta2_samples = 0.0;
};

/// Eq. (10): b_k = 2^floor(log2(alpha2 * mem_k + beta2)), the largest power of two not above
/// the fitted batch. Throws invalid_input when the fit gives fewer than one sample.
[[nodiscard]] inline std::int64_t batch_from_memory(const batch_memory_fit& fit, double gpu_memory_bytes) {
    detail::require_positive("gpu_memory_bytes", gpu_memory_bytes);
    detail::require_finite("alpha2_samples_per_byte", fit.alpha2_samples_per_byte);
    detail::require_finite("beta2_samples", fit.beta2_samples);
    const double fitted = fit.alpha2_samples_per_byte * gpu_memory_bytes + fit.beta2_samples;
    if (!(fitted >= 1.0) || fitted > 9.0e18)
        throw invalid_input("gpu_memory_bytes", detail::format_number(gpu_memory_bytes),
                            "a memory for which alpha2 * mem + beta2 (" + detail::format_number(fitted) +
                                ") is a batch in [1, 9e18]");
    // frexp is exact where log2 can round up at powers of two: fitted = f * 2^e, f in [0.5, 1).
    int exponent = 0;
    (void)std::frexp(fitted, &exponent);
    return std::int64_t{1} << (exponent - 1);
}

}  // namespace dnnplan
