#pragma once
// Checkpoint-restart under Poisson preemptions: the model and its expected completion time
// (docs/models/checkpoint-restart.md).
//
// The model: work W in segments of tau hours, each followed by a checkpoint of delta hours; a
// segment and its checkpoint need tau + delta hours without a preemption; preemptions come at
// rate lambda per hour (a Poisson process) at any time; a preemption loses the segment in progress
// and costs a restart of R hours, which a preemption can interrupt too (the restart then starts
// again). W / tau need not be an integer: n = ceil(W / tau) segments, the first n - 1 of tau hours
// of work and the last of r = W - (n - 1) tau (a ratio within 1e-9 relative of an integer counts
// as that integer); every segment, the last one included, ends with a checkpoint.
//
//   - young_interval_h, daly_interval_h: the classical intervals (Young 1974; Daly 2006), and
//     continuous_optimal_interval_h, the exact minimiser of Daly's expected time;
//   - daly_expected_completion_h: Daly's formula, W / tau taken literally;
//     expected_completion_h: the exact mean with the last partial segment (the same number when
//     W / tau is an integer).
// P(T <= D) is preemption/checkpoint_probability.hpp; the same job replayed on a recorded trace,
// preemption/checkpoint_replay.hpp; the planner that chooses the interval,
// solve/resilience_plan/checkpoint.hpp.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace dnnplan {

// ---- the classical intervals ---------------------------------------------------------------------

/// Young's first-order interval sqrt(2 delta M) (J. W. Young, "A first order approximation to the
/// optimum checkpoint interval", CACM 17(9), 1974). M = 1 / lambda, the mean time between failures.
[[nodiscard]] inline double young_interval_h(double checkpoint_h, double mtbf_h) {
    detail::require_non_negative("checkpoint_h", checkpoint_h);
    detail::require_positive("mtbf_h", mtbf_h);
    return std::sqrt(2.0 * checkpoint_h * mtbf_h);
}

/// Daly's higher-order estimate (J. T. Daly, "A higher order estimate of the optimum checkpoint
/// interval for restart dumps", Future Generation Computer Systems 22(3):303-312, 2006, the
/// perturbation solution of his complete cost function):
///   tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / (2M)) + (1/9) (delta / (2M))] - delta   if delta < 2M,
///   tau = M                                                                          otherwise.
/// The paper's figures 3-5 give tau_opt = 117, 57 and 9.1 min for delta = 5 min and M = 24 h, 6 h,
/// 15 min (tests/preemption/checkpoint_restart.cpp checks them).
[[nodiscard]] inline double daly_interval_h(double checkpoint_h, double mtbf_h) {
    detail::require_non_negative("checkpoint_h", checkpoint_h);
    detail::require_positive("mtbf_h", mtbf_h);
    if (checkpoint_h >= 2.0 * mtbf_h) return mtbf_h;
    const double x = checkpoint_h / (2.0 * mtbf_h);
    return std::sqrt(2.0 * checkpoint_h * mtbf_h) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - checkpoint_h;
}

/// The exact minimiser over real tau of Daly's expected time (daly_expected_completion_h, W / tau
/// continuous): d/dtau [(e^{lambda (tau + delta)} - 1) / tau] = 0 gives (1 - v) e^v = e^{-lambda delta}
/// with v = lambda tau, i.e. v = 1 + W_0(-e^{-1 - lambda delta}) (Lambert's W, principal branch).
/// It depends neither on W nor on R; Young's and Daly's intervals are its expansions for small
/// lambda delta (v ~ sqrt(2 lambda delta)). Solved by bisection on log(1 - v) + v + lambda delta = 0.
[[nodiscard]] inline double continuous_optimal_interval_h(double checkpoint_h, double preemptions_per_h) {
    detail::require_positive("checkpoint_h", checkpoint_h);
    detail::require_positive("preemptions_per_h", preemptions_per_h);
    const double b = preemptions_per_h * checkpoint_h;
    const auto f = [b](double v) {  // log(1 - v) + v + b, decreasing on (0, 1) from b to -inf
        if (v < 1e-3) {             // -(v^2/2 + v^3/3 + ...): no cancellation
            double term = v * v, sum = 0.0;
            for (int k = 2; k <= 9; ++k, term *= v) sum += term / k;
            return b - sum;
        }
        return std::log1p(-v) + v + b;
    };
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < 200 && hi - lo > 0.0; ++i) {
        const double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        (f(mid) > 0.0 ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi) / preemptions_per_h;
}

// ---- the model -----------------------------------------------------------------------------------

/// One job under checkpoint-restart: what every figure of this header is a function of.
struct checkpoint_restart_model {
    double work_h = 1.0;             ///< W, > 0
    double interval_h = 1.0;         ///< tau, work between two checkpoints, > 0 (W / tau <= 1e15)
    double checkpoint_h = 0.0;       ///< delta, >= 0
    double restart_h = 0.0;          ///< R, >= 0
    double preemptions_per_h = 0.0;  ///< lambda, >= 0

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        detail::require_positive(p + "work_h", work_h);
        detail::require_positive(p + "interval_h", interval_h);
        if (!(work_h / interval_h <= 1e15))
            throw invalid_input(p + "interval_h", detail::format_number(interval_h),
                                "an interval giving at most 1e15 segments of work_h = " + detail::format_number(work_h));
        detail::require_non_negative(p + "checkpoint_h", checkpoint_h);
        detail::require_non_negative(p + "restart_h", restart_h);
        detail::require_non_negative(p + "preemptions_per_h", preemptions_per_h);
    }
};

/// How the work splits: `count` segments, the first count - 1 of interval_h hours of work, the
/// last of last_work_h (in (0, interval_h], or a hair above it when W / tau is within 1e-9 of an
/// integer).
struct checkpoint_segments {
    std::int64_t count = 1;
    double last_work_h = 0.0;
};

[[nodiscard]] inline checkpoint_segments split_work(double work_h, double interval_h) noexcept {
    const double ratio = work_h / interval_h;
    const double nearest = std::round(ratio);
    double n = std::ceil(ratio);
    if (nearest >= 1.0 && std::abs(ratio - nearest) <= 1e-9 * ratio) n = nearest;
    n = std::max(n, 1.0);
    const double last = work_h - (n - 1.0) * interval_h;
    return {static_cast<std::int64_t>(n), last > 0.0 ? last : interval_h};
}

/// W + n delta: the completion time without preemptions.
[[nodiscard]] inline double no_failure_time_h(const checkpoint_restart_model& m) {
    m.validate();
    return m.work_h + static_cast<double>(split_work(m.work_h, m.interval_h).count) * m.checkpoint_h;
}

namespace detail {

/// expm1(x) / x, 1 at 0, without cancellation.
[[nodiscard]] inline double expm1_over(double x) noexcept {
    if (std::abs(x) < 1e-5) return 1.0 + x * (0.5 + x / 6.0);
    return std::expm1(x) / x;
}

/// E[time to get one segment of s hours (work + checkpoint) done] = e^{lambda R} (e^{lambda s} - 1) / lambda.
/// Renewal argument: an attempt ends at min(X, s), X ~ Exp(lambda); with probability
/// q = 1 - e^{-lambda s} it failed, and then a restart A and a new attempt follow. A is the same
/// renewal with no cost: E[A] = E[min(X, R)] + (1 - e^{-lambda R}) E[A], so E[A] = (e^{lambda R} - 1) / lambda.
/// E[S] = (1 - e^{-lambda s}) / lambda + q (E[A] + E[S]), so E[S] e^{-lambda s} = q e^{lambda R} / lambda.
[[nodiscard]] inline double expected_segment_h(double s, double restart_h, double lambda) noexcept {
    if (lambda == 0.0) return s;
    return std::exp(lambda * restart_h) * s * expm1_over(lambda * s);
}

}  // namespace detail

/// Daly's formula (Daly 2006's complete cost function T_w(tau) = M e^{R/M} (e^{(tau+delta)/M} - 1) T_s / tau
/// with M = 1 / lambda, T_s = W): E[T] = e^{lambda R} / lambda (e^{lambda (tau + delta)} - 1) W / tau,
/// W / tau taken literally (a real number of segments). Exact when W / tau is an integer
/// (expected_completion_h is then the same number); (tau + delta) W / tau when lambda = 0.
[[nodiscard]] inline double daly_expected_completion_h(const checkpoint_restart_model& m) {
    m.validate();
    return detail::expected_segment_h(m.interval_h + m.checkpoint_h, m.restart_h, m.preemptions_per_h) * m.work_h /
           m.interval_h;
}

/// The exact E[T] of the model: (n - 1) E[S(tau + delta)] + E[S(r + delta)] (detail::expected_segment_h),
/// the segments being independent renewals (the Poisson process is memoryless at every checkpoint).
/// +inf when the number exceeds the double range.
[[nodiscard]] inline double expected_completion_h(const checkpoint_restart_model& m) {
    m.validate();
    const auto seg = split_work(m.work_h, m.interval_h);
    const double lambda = m.preemptions_per_h;
    return static_cast<double>(seg.count - 1) * detail::expected_segment_h(m.interval_h + m.checkpoint_h, m.restart_h, lambda) +
           detail::expected_segment_h(seg.last_work_h + m.checkpoint_h, m.restart_h, lambda);
}

}  // namespace dnnplan
