#pragma once
// A layer's (or a stage's) time as a linear function of the batch size, t(b) = fixed + per_sample * b,
// and its closed-form fit from profiles at two or more batch sizes. The linear form is the usual
// one for the compute time of a step at a given batch size (Pollux, Qiao et al., OSDI 2021,
// T_grad(m) = alpha_c + beta_c * m; the project's reference note on synchronous models).

#include <dnnplan/core/affine_time.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace dnnplan {

/// One measurement: `time_s` seconds for a batch of `batch` samples.
struct batch_time_sample {
    double batch = 0.0;
    double time_s = 0.0;
};

/// The default when a single profile exists: the time is proportional to the batch
/// (fixed_s = 0, per_sample_s = time_s / batch). With no second batch size the fixed part cannot
/// be told apart from the per-sample part; proportional scaling is the assumption PipeDream's
/// profiles carry (one batch size per profile). Throws invalid_input unless batch > 0 and
/// time_s >= 0.
[[nodiscard]] inline affine_time proportional_time(double batch, double time_s, std::string_view path = "sample") {
    const std::string p = detail::field_prefix(path);
    detail::require_positive(p + "batch", batch);
    detail::require_non_negative(p + "time_s", time_s);
    return {.fixed_s = 0.0, .per_sample_s = time_s / batch};
}

/// Closed-form least squares of t = fixed + per_sample * b over the samples, constrained to
/// fixed >= 0 and per_sample >= 0 (non-negative least squares in two unknowns: the unconstrained
/// solution when it is feasible; otherwise the better of the two faces, the line through the
/// origin per_sample = sum(b t) / sum(b^2), and the constant fixed = mean(t); the problem is
/// convex, so that is the constrained optimum). Throws invalid_input, naming `path`, when fewer
/// than two distinct batch sizes are given, or a sample has batch <= 0 or time_s < 0.
[[nodiscard]] inline affine_time fit_linear_time(std::span<const batch_time_sample> samples,
                                                       std::string_view path = "samples") {
    for (std::size_t k = 0; k < samples.size(); ++k) {
        const std::string at = std::string(path) + "[" + std::to_string(k) + "].";
        detail::require_positive(at + "batch", samples[k].batch);
        detail::require_non_negative(at + "time_s", samples[k].time_s);
    }
    bool distinct = false;
    for (const auto& s : samples)
        if (s.batch != samples.front().batch) distinct = true;
    if (!distinct)
        throw invalid_input(std::string(path), std::to_string(samples.size()) + " samples",
                            "samples at two or more distinct batch sizes (use proportional_time() for one)");
    const double n = static_cast<double>(samples.size());
    double mean_b = 0.0, mean_t = 0.0;
    for (const auto& s : samples) {
        mean_b += s.batch / n;
        mean_t += s.time_s / n;
    }
    double sbb = 0.0, sbt = 0.0, b2 = 0.0, bt = 0.0;  // centred and raw second moments
    for (const auto& s : samples) {
        sbb += (s.batch - mean_b) * (s.batch - mean_b);
        sbt += (s.batch - mean_b) * (s.time_s - mean_t);
        b2 += s.batch * s.batch;
        bt += s.batch * s.time_s;
    }
    const double slope = sbt / sbb;
    const double intercept = mean_t - slope * mean_b;
    if (slope >= 0.0 && intercept >= 0.0) return {.fixed_s = intercept, .per_sample_s = slope};
    const auto sse = [&](const affine_time& m) {
        double e = 0.0;
        for (const auto& s : samples) e += (m.at(s.batch) - s.time_s) * (m.at(s.batch) - s.time_s);
        return e;
    };
    const affine_time through_origin{.fixed_s = 0.0, .per_sample_s = bt / b2};
    const affine_time constant{.fixed_s = mean_t, .per_sample_s = 0.0};
    return sse(through_origin) <= sse(constant) ? through_origin : constant;
}

}  // namespace dnnplan
