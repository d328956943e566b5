#pragma once
// The one affine time of the library: t(b) = fixed_s + per_sample_s * b seconds for a batch of b
// samples. It is a layer's (or a stage's) time in the pipeline models and a GPU's compute time in
// the synchronous model (Pollux, Qiao et al., OSDI 2021: T_grad(m) = alpha_c + beta_c * m). Both
// coefficients >= 0, so a time never decreases with the batch and is never negative. (The
// convergence models' affine_in_batch, model/concepts.hpp, is a number of iterations, not a time.)

#include <dnnplan/core/detail/validate.hpp>

#include <string>
#include <string_view>

namespace dnnplan {

struct affine_time {
    double fixed_s = 0.0;
    double per_sample_s = 0.0;

    [[nodiscard]] constexpr double at(double batch) const noexcept { return fixed_s + per_sample_s * batch; }

    void validate(std::string_view path = "time") const {
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "fixed_s", fixed_s);
        detail::require_non_negative(p + "per_sample_s", per_sample_s);
    }

    friend bool operator==(const affine_time&, const affine_time&) = default;
};

}  // namespace dnnplan
