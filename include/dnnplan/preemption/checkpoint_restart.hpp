#pragma once
// Checkpoint-restart under Poisson preemptions (issue 12, section 3; docs/models/checkpoint-restart.md).
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
//   - daly_expected_completion_h: the formula, W / tau taken literally;
//     expected_completion_h: the exact mean with the last partial segment (the same number when
//     W / tau is an integer);
//   - completion_probability: P(T <= D), by Fourier inversion with a rigorous error bound;
//   - solve(checkpoint_request): the best interval (min E[T], proven; or max P(T <= D) over the
//     equal splits) in the one solver shape;
//   - replay_checkpoint_restart: the same job on a recorded instance_trace, deterministic.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/events.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <deque>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// The formula (Daly 2006's complete cost function T_w(tau) = M e^{R/M} (e^{(tau+delta)/M} - 1) T_s / tau
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

// ---- P(T <= D) -----------------------------------------------------------------------------------
//
// T = t0 + Z, t0 = W + n delta, Z the lost time: per segment of length s (work + checkpoint),
// K ~ Geometric failures (P(K = k) = p (1 - p)^k, p = e^{-lambda s}), each costing U + A: U the
// time into the attempt (density lambda e^{-lambda u} / (1 - p) on [0, s)) and A the restart (R plus
// the same kind of geometric sum over interrupted restarts). The parts are independent, so
//   E[e^{-theta Z}] = prod over segments of p / (1 - g),  g = u a / (1 - h),
//   u = lambda (1 - e^{-(lambda+theta) s}) / (lambda + theta),  a = e^{-(lambda+theta) R},  h = u with s -> R,
// u and h being the sub-probability transforms of "a preemption x hours into the window".
//
// Z has an atom p0 = e^{-lambda t0} at 0 and a density. Expanding in u and h, the paths with one
// preemption (and an uninterrupted restart: mu1) or two (two preemptions of segments, or one and
// one of its restart: mu2) have densities lambda^k e^{-lambda (t0 + z)} times piecewise-constant
// (k = 1) or piecewise-linear (k = 2) volumes: closed forms. The rest, mu3, is a convolution of
// three or more bounded densities: C^1, so its transform decays like 1 / w^3. Then
//   P(T <= D) = p0 + mu1([0, y]) + mu2([0, y]) + mu3([0, y]),  y = D - t0,
// and mu3 comes from the Fourier series of its periodisation on [0, P):
//   mu3_per([0, y]) = m3 y / P + sum_{k >= 1} Im[mu3^(w_k) (e^{i w_k y} - 1)] / (pi k),  w_k = 2 pi k / P
// (the derivative of the right side is the Fourier series of the density; both sides are 0 at 0),
// mu3^ = p0 [e^L - 1 - S1 - S2], L = -(n-1) log(1 - g) - log(1 - g_last), S1 = a ((n-1) u + u_last)
// (1 + h), S2 = n (n-1) / 2 (a u)^2 + (n-1) a^2 u u_last + (a u_last)^2. Errors, bounded rigorously:
//   - aliasing: mu3_per - mu3 = the mass of mu3 wrapped from [P, inf) <= P(Z >= P) <= eps_a, P chosen
//     by Chernoff's bound inf_theta E[e^{theta Z}] e^{-theta P} (the MGF in closed form);
//   - truncation after N terms: |mu3^(w)| <= B(w), a decreasing envelope from |u| <= min(1 - p,
//     lambda (1 + p) / |lambda + i w|), |h| <= eta likewise, |a / (1 - h)| <= min(1, e^{-lambda R} / (1 - eta)),
//     and the non-negative coefficients of (1 - g)^{-(n-1)} (1 - g_last)^{-1}: B = O(1 / w^3); the
//     terms beyond N are bounded by doubling blocks and an O(1 / w^3) tail.
// The result's error_bound is eps_a / 2 + the truncation bound + a floating-point allowance
// (1e-12 + 1e-15 N, not a proof: the terms are computed with complex exp, log and sincos).

/// P(T <= deadline) and how far it can be from the exact value.
struct deadline_probability {
    double p = 0.0;                ///< the estimate, in [0, 1]
    double error_bound = 0.0;      ///< |p - P(T <= D)| <= error_bound (0: closed form)
    std::int64_t terms = 0;        ///< Fourier terms summed (0: a closed form or a tail bound answered)
};

namespace detail {

struct lost_time_law {
    double lambda = 0.0, s = 0.0, s_last = 0.0, restart = 0.0;
    double n_full = 0.0;  ///< n - 1
    double t0 = 0.0, p_s = 1.0, p_last = 1.0, p_r = 1.0, log_p0 = 0.0, p0 = 1.0;
    double mass3 = 0.0;   ///< of mu3

    explicit lost_time_law(const checkpoint_restart_model& m) {
        const auto seg = split_work(m.work_h, m.interval_h);
        lambda = m.preemptions_per_h;
        s = m.interval_h + m.checkpoint_h;
        s_last = seg.last_work_h + m.checkpoint_h;
        restart = m.restart_h;
        n_full = static_cast<double>(seg.count - 1);
        t0 = m.work_h + static_cast<double>(seg.count) * m.checkpoint_h;  // = n_full s + s_last, rounded once
        p_s = std::exp(-lambda * s);
        p_last = std::exp(-lambda * s_last);
        p_r = std::exp(-lambda * restart);
        log_p0 = -lambda * t0;
        p0 = std::exp(log_p0);
        mass3 = std::max(0.0, -std::expm1(-lambda * t0) - low_cdf(std::numeric_limits<double>::infinity()));
    }

    /// log E[e^{theta Z}] for real theta (theta < 0: the Laplace transform); +inf past the MGF's pole.
    [[nodiscard]] double log_mgf(double theta) const noexcept {
        constexpr double inf = std::numeric_limits<double>::infinity();
        const double eps = lambda - theta;
        double m_a = 1.0;
        if (restart > 0.0) {
            const double x = eps * restart;
            const double den = std::abs(x) < 0.5 ? std::exp(x) - lambda * restart * expm1_over(x)
                                                 : std::exp(x) * (1.0 - lambda / eps) + lambda / eps;
            if (!(den > 0.0)) return inf;
            m_a = 1.0 / den;
        }
        const auto segment = [&](double len) {
            const double um = lambda * len * expm1_over(-eps * len) * m_a;
            return um < 1.0 ? -lambda * len - std::log1p(-um) : inf;
        };
        double v = segment(s_last);
        if (n_full > 0.0) v += n_full * segment(s);
        return std::isnan(v) ? inf : v;
    }

    /// A theta > 0 below the pole of the MGF (0 when none is found: the MGF then exists only for
    /// theta too small for a double, and Chernoff's upper bounds are not used).
    [[nodiscard]] double mgf_pole() const noexcept {
        double hi = std::max(lambda, 1.0 / (s + restart));
        for (int i = 0; i < 2000 && std::isfinite(log_mgf(hi)); ++i) hi *= 2.0;
        double lo = 0.0;
        for (int i = 0; i < 200; ++i) {
            const double mid = 0.5 * (lo + hi);
            (std::isfinite(log_mgf(mid)) ? lo : hi) = mid;
        }
        return lo;
    }

    /// P(Z >= y) <= inf_theta E[e^{theta Z}] e^{-theta y} (Chernoff; the exponent is convex in theta).
    [[nodiscard]] double upper_tail_bound(double y, double pole) const noexcept {
        if (!(pole > 0.0)) return 1.0;
        return std::min(1.0, std::exp(golden_min([&](double t) { return log_mgf(t) - t * y; }, 0.0, pole)));
    }

    /// A length P with P(Z >= P) <= e^{log_eps}: any theta gives one, (log_mgf(theta) - log_eps) / theta;
    /// the golden-section search on this unimodal function only tightens it.
    [[nodiscard]] double upper_tail_length(double log_eps, double pole) const noexcept {
        if (!(pole > 0.0)) return std::numeric_limits<double>::infinity();
        return golden_min([&](double t) { return t > 0.0 ? (log_mgf(t) - log_eps) / t : std::numeric_limits<double>::infinity(); },
                          0.0, pole);
    }

    /// An upper bound on P(Z <= y) (atom included): inf_theta E[e^{-theta Z}] e^{theta y}.
    [[nodiscard]] double lower_tail_bound(double y) const noexcept {
        const double hi = (lambda * t0 + 1.0) / y;  // E[e^{-theta Z}] >= p0: the exponent is > 0 past it
        return std::min(1.0, std::exp(golden_min([&](double t) { return log_mgf(-t) + t * y; }, 0.0, hi)));
    }

    template <class F>
    [[nodiscard]] static double golden_min(const F& f, double a, double b) noexcept {
        constexpr double r = 0.6180339887498949;
        double best = std::min(f(a), f(b));
        double c = b - r * (b - a), d = a + r * (b - a), fc = f(c), fd = f(d);
        for (int i = 0; i < 120; ++i) {
            best = std::min({best, fc, fd});
            if (fc < fd) b = d, d = c, fd = fc, c = b - r * (b - a), fc = f(c);
            else a = c, c = d, fc = fd, d = a + r * (b - a), fd = f(d);
        }
        return std::min({best, fc, fd});
    }

    /// (mu1 + mu2)([0, y]). With one preemption z = R + x, x in [0, s_i): the integral of
    /// lambda e^{-lambda (t0 + z)}. With two, z = c + x1 + x2 (c = 2R for two segment preemptions,
    /// R for one and one of its restart, x2 in [0, R) then): lambda^2 e^{-lambda (t0 + z)} times the
    /// trapezoid vol(x) = r(x) - r(x - a) - r(x - b) + r(x - a - b), r the ramp, whose integral
    /// against e^{-lambda z} from c' on is e^{-lambda c'} psi(lambda (y - c')) / lambda^2,
    /// psi(x) = 1 - e^{-x} (1 + x).
    [[nodiscard]] double low_cdf(double y) const noexcept {
        if (!(y > restart)) return 0.0;
        const double m = n_full;
        const auto one = [&](double len) { return -std::expm1(-lambda * std::min(len, y - restart)); };
        double total = p0 * p_r * (m * one(s) + one(s_last));
        const auto psi = [&](double c) {
            if (!(y > c)) return 0.0;
            const double x = lambda * (y - c);
            if (x > 700.0) return std::exp(-lambda * c);
            const double v = x < 1e-3 ? x * x * (0.5 - x / 3.0 + x * x / 8.0) : -std::expm1(-x) - x * std::exp(-x);
            return std::exp(-lambda * c) * v;
        };
        const auto pair = [&](double c, double a, double b) { return psi(c) - psi(c + a) - psi(c + b) + psi(c + a + b); };
        const double c2 = 2.0 * restart;
        double two = 0.5 * m * (m + 1.0) * pair(c2, s, s) + m * pair(c2, s, s_last) + pair(c2, s_last, s_last);
        if (restart > 0.0) two += m * pair(restart, s, restart) + pair(restart, s_last, restart);
        return total + p0 * two;
    }

    using cplx = std::complex<double>;
    [[nodiscard]] static cplx cexpm1(cplx z) noexcept {
        const double sh = std::sin(0.5 * z.imag());
        return {std::expm1(z.real()) * std::cos(z.imag()) - 2.0 * sh * sh, std::exp(z.real()) * std::sin(z.imag())};
    }
    [[nodiscard]] static cplx clog1p(cplx z) noexcept {
        return {0.5 * std::log1p(2.0 * z.real() + std::norm(z)), std::atan2(z.imag(), 1.0 + z.real())};
    }
    /// lambda int_0^len e^{-(lambda + i w) x} dx
    [[nodiscard]] cplx window(double len, double w) const noexcept {
        const cplx z(lambda * len, w * len);
        return lambda * len * (-cexpm1(-z)) / z;
    }

    /// mu3^(w) = E[e^{-i w Z}; three or more preemptions, restarts' included].
    [[nodiscard]] cplx mu3_hat(double w) const noexcept {
        const cplx u = window(s, w), u_last = window(s_last, w);
        cplx a(1.0, 0.0), h(0.0, 0.0);
        if (restart > 0.0) a = std::polar(p_r, -w * restart), h = window(restart, w);
        const cplx g_over_u = a / (1.0 - h);
        const cplx l = -n_full * clog1p(-u * g_over_u) - clog1p(-u_last * g_over_u);
        const cplx au = a * u, al = a * u_last;
        const cplx low = (n_full * au + al) * (1.0 + h) + 0.5 * n_full * (n_full + 1.0) * au * au + n_full * au * al + al * al;
        if (lambda * t0 < 600.0) return p0 * (cexpm1(l) - low);
        return std::exp(l - lambda * t0) - p0 * (1.0 + low);
    }

    // -- the envelope of |mu3^(w)| --
    [[nodiscard]] static double nl(double x) noexcept { return -std::log1p(-x); }  // -log(1 - x)
    [[nodiscard]] static double nl3(double x) noexcept {                           // -log(1 - x) - x - x^2 / 2 >= 0
        if (x < 1e-3) return x * x * x * (1.0 / 3.0 + x / (4.0 * (1.0 - x)));
        return nl(x) - x - 0.5 * x * x;
    }
    /// Bounds p0 [F(G) - 1 - F1(G) - F2(G)], F = (1 - G)^{-(n-1)} (1 - G_last)^{-1} = e^E and F1, F2
    /// its parts of degree 1 and 2: e^E - 1 - E - E^2/2 + E_{>=3} + (E - E1)(E + E1) / 2, all >= 0.
    [[nodiscard]] double third_order(double g, double g_last) const noexcept {
        if (!(g < 1.0 && g_last < 1.0)) return std::numeric_limits<double>::infinity();
        const double m = n_full;
        const double e1 = m * g + g_last;
        const double e = m * nl(g) + nl(g_last);
        const double e3 = m * nl3(g) + nl3(g_last);
        const double rest = e3 + 0.5 * (e - e1) * (e + e1);
        if (e > 30.0) return std::exp(log_p0 + e) + p0 * rest;
        const double em = e < 1e-3 ? e * e * e / 6.0 * std::exp(e) : std::expm1(e) - e - 0.5 * e * e;
        return p0 * (em + rest);
    }
    /// The parts of mu3^ left by the expansion in h: S2's (1 - h)^{-2} - 1 and S1's h^2 / (1 - h).
    [[nodiscard]] double restart_terms(double gu, double gu_last, double twice_eta_over, double eta2_over) const noexcept {
        const double m = n_full;
        return p0 * ((0.5 * m * (m + 1.0) * gu * gu + m * gu * gu_last + gu_last * gu_last) * p_r * p_r * twice_eta_over +
                     (m * gu + gu_last) * p_r * eta2_over);
    }
    [[nodiscard]] double envelope(double w) const noexcept {
        const double mod = std::hypot(lambda, w);
        // |u| <= its mass 1 - p, and <= lambda (1 + p) / |lambda + i w|: both < 1, so eta < 1 too.
        const auto gamma = [&](double p) { return std::min(1.0 - p, lambda * (1.0 + p) / mod); };
        const double gu = gamma(p_s), gu_last = gamma(p_last);
        const double eta = restart > 0.0 ? gamma(p_r) : 0.0;
        const double shrink = std::min(1.0, p_r / (1.0 - eta));  // >= |a / (1 - h)|
        const double b = third_order(gu * shrink, gu_last * shrink) +
                         restart_terms(gu, gu_last, eta * (2.0 - eta) / ((1.0 - eta) * (1.0 - eta)), eta * eta / (1.0 - eta));
        return std::min(mass3, b * (1.0 + 1e-12));
    }
    /// sum_{k >= K} 2 |mu3^(w_k)| / (pi k): for w >= w_K, |u| <= lambda (1 + p) / w, eta likewise,
    /// and every part of the envelope scales at least like (w_K / w)^3 (third order in G; G^2 eta;
    /// G eta^2), so the sum is at most (2 / pi) B_K K^3 sum_{k >= K} k^-4 <= (2 / pi) B_K (1 / K + 1 / 3).
    [[nodiscard]] double analytic_tail(double k, double period) const noexcept {
        const double w = 2.0 * std::numbers::pi * k / period;
        const double a_eta = restart > 0.0 ? lambda * (1.0 + p_r) / w : 0.0;  // eta at w, and w_K / w times it after
        const double c_eta = 1.0 - a_eta;
        if (!(c_eta > 0.0)) return std::numeric_limits<double>::infinity();
        const double shrink = std::min(1.0, p_r / c_eta);
        const double gu = lambda * (1.0 + p_s) / w, gu_last = lambda * (1.0 + p_last) / w;
        const double b = third_order(shrink * gu, shrink * gu_last) +
                         restart_terms(gu, gu_last, 2.0 * a_eta / (c_eta * c_eta), a_eta * a_eta / c_eta);
        if (!(b >= 0.0)) return std::numeric_limits<double>::infinity();
        return 2.0 / std::numbers::pi * b * (1.0 / k + 1.0 / 3.0) * (1.0 + 1e-12);
    }
    /// A bound on sum_{k > n} 2 |mu3^(w_k)| / (pi k): blocks [k, 2k) bounded by their first term
    /// (the envelope decreases), then the analytic tail; the best split is kept.
    [[nodiscard]] double truncation_bound(double n, double period) const noexcept {
        double k = n + 1.0;
        double best = analytic_tail(k, period), blocks = 0.0;
        for (int j = 0; j < 60 && blocks < best; ++j) {
            blocks += 2.0 / std::numbers::pi * envelope(2.0 * std::numbers::pi * k / period);
            k *= 2.0;
            best = std::min(best, blocks + analytic_tail(k, period));
        }
        return best;
    }
};

inline constexpr std::int64_t max_fourier_terms = std::int64_t{1} << 20;

}  // namespace detail

/// P(T <= deadline_h) with |p - exact| <= error_bound <= `tolerance` (unless 1,048,576 Fourier
/// terms do not reach it; error_bound then says how far they got). Exact cases: D < t0 gives 0;
/// t0 <= D <= t0 + R gives e^{-lambda t0} (any preemption costs at least R); lambda = 0 gives 1.
[[nodiscard]] inline deadline_probability completion_probability(const checkpoint_restart_model& m, double deadline_h,
                                                                  double tolerance = 1e-6) {
    m.validate();
    detail::require_finite("deadline_h", deadline_h);
    if (!(tolerance >= 1e-10 && tolerance <= 0.005))
        throw invalid_input("tolerance", detail::format_number(tolerance), "a number in [1e-10, 0.005]");
    const detail::lost_time_law law(m);
    if (deadline_h < law.t0) return {0.0, 0.0, 0};
    if (law.lambda == 0.0) return {1.0, 0.0, 0};
    const double y = deadline_h - law.t0;
    if (y <= law.restart) return {law.p0, 0.0, 0};

    // Chernoff's bounds settle the far tails: P(T <= D) in [1 - above, below].
    const double eps_a = tolerance / 4.0;
    const double pole = law.mgf_pole();
    const double above = law.upper_tail_bound(y, pole);
    if (above <= eps_a) return {1.0 - above / 2.0, above / 2.0, 0};
    const double below = law.lower_tail_bound(y);
    if (below <= eps_a) return {below / 2.0, below / 2.0, 0};
    const double period = law.upper_tail_length(std::log(eps_a), pole);
    if (!(y < period && std::isfinite(period))) {  // no usable period (Z beyond the double range)
        const double lo = std::max(0.0, 1.0 - above);
        return {0.5 * (lo + below), 0.5 * (below - lo), 0};
    }

    // Terms: the smallest N (doubling, then bisection) whose truncation bound is within tolerance / 2.
    const auto allowance = [](double n) { return 1e-12 + 1e-15 * n; };
    const double target = tolerance / 2.0;
    double n_hi = 8.0;
    while (n_hi < static_cast<double>(detail::max_fourier_terms) &&
           law.truncation_bound(n_hi, period) + allowance(n_hi) > target)
        n_hi *= 2.0;
    double n_lo = n_hi / 2.0;
    while (n_hi - n_lo > std::max(1.0, n_hi / 64.0)) {
        const double mid = std::floor(0.5 * (n_lo + n_hi));
        (law.truncation_bound(mid, period) + allowance(mid) > target ? n_lo : n_hi) = mid;
    }
    const auto terms = static_cast<std::int64_t>(n_hi);

    double sum = 0.0, carry = 0.0;  // Neumaier summation
    for (std::int64_t k = 1; k <= terms; ++k) {
        const double kd = static_cast<double>(k);
        const double w = 2.0 * std::numbers::pi * kd / period;
        const double half = std::sin(0.5 * w * y);
        const std::complex<double> turn(-2.0 * half * half, std::sin(w * y));  // e^{i w y} - 1
        const double term = (law.mu3_hat(w) * turn).imag() / (std::numbers::pi * kd);
        const double t = sum + term;
        carry += std::abs(sum) >= std::abs(term) ? (sum - t) + term : (term - t) + sum;
        sum = t;
    }
    const double mu3 = law.mass3 * y / period + sum + carry;
    const double error = eps_a / 2.0 + law.truncation_bound(n_hi, period) + allowance(n_hi);
    const double p = law.p0 + law.low_cdf(y) + mu3 - eps_a / 2.0;
    return {std::clamp(p, 0.0, 1.0), error, terms};
}

// ---- the best interval: request and result -------------------------------------------------------

/// What solve() optimises when the interval is not given.
enum class checkpoint_objective {
    min_expected_time,         ///< the exact E[T] over every tau > 0 (proven: see solve())
    max_deadline_probability,  ///< P(T <= D) over the equal splits tau = W / n, ties to the smaller E[T]
};

template <>
struct enum_text<checkpoint_objective> {
    static constexpr std::array<enum_name<checkpoint_objective>, 2> names{{
        {checkpoint_objective::min_expected_time, "min_expected_time"},
        {checkpoint_objective::max_deadline_probability, "max_deadline_probability"},
    }};
};

struct checkpoint_options {
    checkpoint_objective objective = checkpoint_objective::min_expected_time;
    /// The error bound asked of every P(T <= D), in [1e-10, 0.005].
    double probability_tolerance = 1e-6;
    /// max_deadline_probability: segment counts compared at most (>= 1). All of 1..n_max when
    /// n_max (the last n with W + n delta <= D) is within it (status optimal); otherwise this many
    /// around the E[T]-optimal count (status feasible).
    std::int64_t max_candidates = 64;

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        if (to_string(objective) == "unknown")
            throw invalid_input(p + "objective", "unknown", enum_expected<checkpoint_objective>());
        if (!(probability_tolerance >= 1e-10 && probability_tolerance <= 0.005))
            throw invalid_input(p + "probability_tolerance", detail::format_number(probability_tolerance),
                                "a number in [1e-10, 0.005]");
        detail::require_at_least(p + "max_candidates", max_candidates, 1);
    }
};

struct checkpoint_request {
    double work_h = 1.0;             ///< W, > 0
    double checkpoint_h = 0.0;       ///< delta, >= 0 (> 0 when the interval is chosen)
    double restart_h = 0.0;          ///< R, >= 0
    double preemptions_per_h = 0.0;  ///< lambda, >= 0
    double deadline_h = 1.0;         ///< D, > 0
    std::optional<double> interval_h{};  ///< tau; none: solve() chooses it (options.objective)
    checkpoint_options options{};

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        detail::require_positive(p + "work_h", work_h);
        detail::require_non_negative(p + "checkpoint_h", checkpoint_h);
        if (!interval_h && !(checkpoint_h > 0.0))
            throw invalid_input(p + "checkpoint_h", detail::format_number(checkpoint_h),
                                "a number > 0 when interval_h is chosen (free checkpoints make the best interval 0)");
        detail::require_non_negative(p + "restart_h", restart_h);
        detail::require_non_negative(p + "preemptions_per_h", preemptions_per_h);
        detail::require_positive(p + "deadline_h", deadline_h);
        if (interval_h) model(*interval_h).validate(path);
        options.validate(p + "options");
    }

    [[nodiscard]] checkpoint_restart_model model(double tau) const noexcept {
        return {.work_h = work_h, .interval_h = tau, .checkpoint_h = checkpoint_h, .restart_h = restart_h,
                .preemptions_per_h = preemptions_per_h};
    }
};

struct checkpoint_plan {
    double interval_h = 0.0;        ///< tau used
    std::int64_t segments = 0;      ///< ceil(W / tau)
    double last_segment_h = 0.0;    ///< work in the last segment
    double no_failure_h = 0.0;      ///< W + n delta
    double expected_h = 0.0;        ///< exact E[T]
    double p_meet_deadline = 0.0;   ///< P(T <= D)
    double p_error_bound = 0.0;     ///< |p_meet_deadline - exact| <= this
    friend bool operator==(const checkpoint_plan&, const checkpoint_plan&) = default;
};

struct checkpoint_details {
    std::optional<double> young_interval_h{};  ///< none when preemptions_per_h = 0 (or 1 / it overflows)
    std::optional<double> daly_interval_h{};
    std::optional<double> continuous_optimal_interval_h{};  ///< the exact minimiser of Daly's E[T]
    double daly_expected_h = 0.0;              ///< the issue's formula at the interval used
    friend bool operator==(const checkpoint_details&, const checkpoint_details&) = default;
};

using checkpoint_result = solve_result<checkpoint_plan, checkpoint_details>;

namespace detail {

[[nodiscard]] inline checkpoint_plan evaluate_checkpoint_plan(const checkpoint_request& r, double tau) {
    const auto m = r.model(tau);
    const auto seg = split_work(r.work_h, tau);
    const auto p = completion_probability(m, r.deadline_h, r.options.probability_tolerance);
    return {.interval_h = tau, .segments = seg.count, .last_segment_h = seg.last_work_h, .no_failure_h = no_failure_time_h(m),
            .expected_h = expected_completion_h(m), .p_meet_deadline = p.p, .p_error_bound = p.error_bound};
}

/// The segment count minimising the exact E[T] over every tau > 0. Proof: for a fixed count n the
/// lengths s_i sum to W + n delta and E[T] = sum_i e^{lambda R} (e^{lambda s_i} - 1) / lambda is
/// convex in them, so the equal split tau = W / n is best (it is in the range of n); and
/// g(n) = n (e^{lambda (W / n + delta)} - 1) has g'' = (lambda W)^2 / n^3 e^{...} > 0, so the best
/// integer is the floor or the ceiling of the real minimiser n* = lambda W / v (v of
/// continuous_optimal_interval_h).
[[nodiscard]] inline std::int64_t best_mean_segments(const checkpoint_request& r) {
    if (!std::isnormal(r.preemptions_per_h)) return 1;  // 0 or subnormal: tau* = v / lambda > 1e300 W
    const double v = r.preemptions_per_h * continuous_optimal_interval_h(r.checkpoint_h, r.preemptions_per_h);
    const double real_n = std::min(r.preemptions_per_h * r.work_h / v, 1e15);
    const auto lo = static_cast<std::int64_t>(std::max(1.0, std::floor(real_n)));
    const std::int64_t hi = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(real_n)));
    const double w = r.work_h;
    const auto mean = [&](std::int64_t n) { return expected_completion_h(r.model(w / static_cast<double>(n))); };
    return mean(hi) < mean(lo) ? hi : lo;
}

}  // namespace detail

/// The interval and its figures. Statuses:
///   - interval given: optimal (nothing to search; objective_value = bound = the objective's figure);
///   - min_expected_time: optimal over every tau > 0 (detail::best_mean_segments), objective_value =
///     bound = E[T];
///   - max_deadline_probability: every equal split W / n with W + n delta <= D compared (when there
///     are at most options.max_candidates; optimal over those candidates, bound = max(p + its error
///     bound)), or a window of them around the E[T]-optimal count (feasible, no bound). No n with
///     W + n delta <= D: every P is 0; the E[T]-optimal interval, optimal, reason says so.
///   - infeasible, no plan: E[T] beyond the double range (lambda (tau + delta) or lambda R > ~700).
/// With lambda = 0 one segment (tau = W) is best for both objectives.
[[nodiscard]] inline checkpoint_result solve(const checkpoint_request& request) {
    const auto start = std::chrono::steady_clock::now();
    request.validate();
    checkpoint_result result;
    const double lambda = request.preemptions_per_h;
    if (lambda > 0.0 && std::isfinite(1.0 / lambda)) {
        result.details.young_interval_h = young_interval_h(request.checkpoint_h, 1.0 / lambda);
        result.details.daly_interval_h = daly_interval_h(request.checkpoint_h, 1.0 / lambda);
        if (request.checkpoint_h > 0.0 && std::isnormal(lambda))
            result.details.continuous_optimal_interval_h = continuous_optimal_interval_h(request.checkpoint_h, lambda);
    }
    const bool by_mean = request.options.objective == checkpoint_objective::min_expected_time;
    const auto objective_of = [&](const checkpoint_plan& p) { return by_mean ? p.expected_h : p.p_meet_deadline; };
    const auto finish = [&](checkpoint_plan plan, solve_status status, std::optional<double> bound, std::string reason) {
        result.details.daly_expected_h = daly_expected_completion_h(request.model(plan.interval_h));
        if (!std::isfinite(plan.expected_h)) {
            result.status = solve_status::infeasible;
            result.reason = "the expected completion time exceeds the double range (lambda (tau + delta) = " +
                            detail::format_number(lambda * (plan.interval_h + request.checkpoint_h)) +
                            ", lambda R = " + detail::format_number(lambda * request.restart_h) + "): the job practically never finishes";
            result.details.daly_expected_h = 0.0;
        } else {
            result.status = status;
            result.reason = std::move(reason);
            if (plan.p_error_bound > request.options.probability_tolerance)
                result.reason += std::string(result.reason.empty() ? "" : "; ") + "P(T <= D) only reached an error bound of " +
                                 detail::format_number(plan.p_error_bound) + " (1,048,576 Fourier terms), above options.probability_tolerance";
            result.objective_value = objective_of(plan);
            result.bound = bound ? bound : std::optional<double>(objective_of(plan));
            if (status == solve_status::feasible) result.bound.reset();
            result.plan = plan;
        }
        result.counters.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result;
    };
    const double w = request.work_h;
    const auto tau_of = [&](std::int64_t n) { return w / static_cast<double>(n); };

    if (request.interval_h) {
        result.counters.evaluations = 1;
        return finish(detail::evaluate_checkpoint_plan(request, *request.interval_h), solve_status::optimal, std::nullopt,
                      "interval_h was given: evaluated, not searched");
    }
    const std::int64_t n_mean = detail::best_mean_segments(request);
    if (by_mean || lambda == 0.0) {
        result.counters.evaluations = 1;
        return finish(detail::evaluate_checkpoint_plan(request, tau_of(n_mean)), solve_status::optimal, std::nullopt, "");
    }
    // max_deadline_probability: P = 0 exactly once W + n delta > D.
    const double n_max_real = std::floor((request.deadline_h - w) / request.checkpoint_h);
    if (!(n_max_real >= 1.0)) {
        result.counters.evaluations = 1;
        return finish(detail::evaluate_checkpoint_plan(request, tau_of(n_mean)), solve_status::optimal, 0.0,
                      "the deadline is below W + delta: every interval has P(T <= D) = 0; the interval of least E[T]");
    }
    const auto n_max = static_cast<std::int64_t>(std::min(n_max_real, 1e15));
    const std::int64_t budget = request.options.max_candidates;
    std::vector<std::pair<std::int64_t, checkpoint_plan>> seen;
    const auto p_at = [&](std::int64_t n) {
        for (const auto& [m, plan] : seen)
            if (m == n) return plan.p_meet_deadline;
        seen.emplace_back(n, detail::evaluate_checkpoint_plan(request, tau_of(n)));
        return seen.back().second.p_meet_deadline;
    };
    const bool all = n_max <= budget;
    if (all) {
        for (std::int64_t n = 1; n <= n_max; ++n) (void)p_at(n);
    } else {
        // A local search (P over n is not known to be unimodal): from the E[T]-optimal count, steps
        // doubling uphill until P falls, then the bracket halved around the best point.
        std::int64_t b = std::min(n_mean, n_max), a = std::max<std::int64_t>(1, b - 1), c = std::min(n_max, b + 1);
        const std::int64_t dir = c > b && p_at(c) > p_at(b) ? 1 : (a < b && p_at(a) > p_at(b) ? -1 : 0);
        for (std::int64_t step = 1, prev = b; dir != 0 && static_cast<std::int64_t>(seen.size()) < budget; step *= 2) {
            const std::int64_t next = std::clamp<std::int64_t>(b + dir * step, 1, n_max);
            if (next == b) break;
            if (p_at(next) > p_at(b)) {
                prev = b;
                b = next;
                (dir > 0 ? a : c) = prev;
                (dir > 0 ? c : a) = std::clamp<std::int64_t>(b + dir, 1, n_max);
            } else {
                (dir > 0 ? c : a) = next;
                break;
            }
        }
        while (c - a > 2 && static_cast<std::int64_t>(seen.size()) < budget) {
            const bool go_left = b - a > c - b;
            const std::int64_t x = go_left ? b - (b - a) / 2 : b + (c - b) / 2;
            if (p_at(x) > p_at(b)) (go_left ? c : a) = b, b = x;
            else (go_left ? a : c) = x;
        }
    }
    result.counters.evaluations = static_cast<std::int64_t>(seen.size());
    std::size_t best = 0;
    double bound = 0.0;
    for (std::size_t i = 0; i < seen.size(); ++i) {
        if (seen[i].second.p_meet_deadline > seen[best].second.p_meet_deadline) best = i;
        bound = std::max(bound, std::min(1.0, seen[i].second.p_meet_deadline + seen[i].second.p_error_bound));
    }
    std::size_t chosen = best;  // ties within the error bounds: the smaller E[T]
    const auto& top = seen[best].second;
    for (std::size_t i = 0; i < seen.size(); ++i)
        if (seen[i].second.p_meet_deadline >= top.p_meet_deadline - top.p_error_bound - seen[i].second.p_error_bound &&
            seen[i].second.expected_h < seen[chosen].second.expected_h)
            chosen = i;
    if (all) return finish(seen[chosen].second, solve_status::optimal, bound, "optimal over the equal splits tau = W / n, n = 1.." +
                                                                                   std::to_string(n_max) + ", within the error bounds of P");
    return finish(seen[chosen].second, solve_status::feasible, std::nullopt,
                  "a local search over n = 1.." + std::to_string(n_max) + " from the E[T]-optimal count (" +
                      std::to_string(seen.size()) + " evaluated, options.max_candidates = " + std::to_string(budget) +
                      "): not proven optimal");
}

// ---- trace replay --------------------------------------------------------------------------------

struct checkpoint_replay_options {
    double work_h = 1.0;               ///< W, > 0
    double interval_h = 1.0;           ///< tau, > 0
    double checkpoint_h = 0.0;         ///< delta, >= 0
    double restart_h = 0.0;            ///< R, >= 0: after every interruption, once the instances are there
    double replacement_delay_h = 0.0;  ///< a replacement is usable this long after it is taken, >= 0
    std::optional<double> horizon_h{}; ///< the end of the replay (>= 0); none: the last event's time

    void validate(std::string_view path = "options") const {
        checkpoint_restart_model{.work_h = work_h, .interval_h = interval_h, .checkpoint_h = checkpoint_h, .restart_h = restart_h}
            .validate(path);
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "replacement_delay_h", replacement_delay_h);
        if (horizon_h) detail::require_non_negative(p + "horizon_h", *horizon_h);
    }
};

enum class replay_outcome { finished, trace_ended };

template <>
struct enum_text<replay_outcome> {
    static constexpr std::array<enum_name<replay_outcome>, 2> names{
        {{replay_outcome::finished, "finished"}, {replay_outcome::trace_ended, "trace_ended"}}};
};

struct checkpoint_replay {
    replay_outcome outcome = replay_outcome::trace_ended;
    double end_h = 0.0;                ///< the completion time when finished; the horizon otherwise
    std::int64_t interruptions = 0;    ///< removals of a held instance while the job worked or restarted
    std::int64_t held_losses = 0;      ///< every removal of a held instance (waiting ones included)
    std::int64_t segments_done = 0;    ///< checkpoints written
    double work_done_h = 0.0;          ///< work saved by those checkpoints (W when finished)
    double lost_h = 0.0;               ///< time of the interrupted segment attempts (work and checkpoint redone)
    double restart_time_h = 0.0;       ///< time spent restarting, interrupted restarts included
    double waiting_h = 0.0;            ///< time without `instances` usable instances
    friend bool operator==(const checkpoint_replay&, const checkpoint_replay&) = default;
};

/// The job on a recorded trace (time 0 = the trace's 0 ms = the job's arrival). It holds
/// `instances` instances: the first live ones in the order they were added; a lost one is replaced
/// by the live instance not held that was added first, else by the next one added; a replacement
/// is usable replacement_delay_h after it is taken (the instances taken before the job first
/// starts are usable at once). The job starts when all are usable (the first start costs nothing),
/// then writes a checkpoint after every segment; a removal of a held instance while it works or
/// restarts interrupts it: the segment in progress is lost and a restart of R begins once the
/// instances are usable again. Events at one time apply in the trace's order, after the job has
/// advanced to that time (a segment ending at the event's time is saved). Deterministic.
[[nodiscard]] inline checkpoint_replay replay_checkpoint_restart(const instance_trace& trace, std::int32_t instances,
                                                                 const checkpoint_replay_options& options) {
    trace.validate("trace");
    detail::require_at_least("instances", instances, 1);
    options.validate("options");
    constexpr double ms_per_h = 3'600'000.0;
    const auto seg = split_work(options.work_h, options.interval_h);
    const double s = options.interval_h + options.checkpoint_h, s_last = seg.last_work_h + options.checkpoint_h;
    const double horizon = options.horizon_h.value_or(
        trace.events.empty() ? 0.0 : static_cast<double>(trace.events.back().time_ms) / ms_per_h);
    const auto wanted = static_cast<std::size_t>(instances);

    struct held_instance {
        std::string_view node;
        double usable_h;
    };
    std::vector<held_instance> held;
    std::deque<std::string_view> spares;  // live, not held, in the order they were added
    enum class phase { waiting, restarting, working, done };
    phase now = phase::waiting;
    double phase_start = 0.0, waiting_since = 0.0;
    bool started = false;
    checkpoint_replay out;

    const auto advance = [&](double to) {
        while (true) {
            if (now == phase::waiting) {
                if (held.size() < wanted) return;
                double ready = waiting_since;
                for (const auto& h : held) ready = std::max(ready, h.usable_h);
                if (ready > to) return;
                out.waiting_h += ready - waiting_since;
                now = started ? phase::restarting : phase::working;
                started = true;
                phase_start = ready;
            } else if (now == phase::restarting) {
                if (phase_start + options.restart_h > to) return;
                out.restart_time_h += options.restart_h;
                phase_start += options.restart_h;
                now = phase::working;
            } else if (now == phase::working) {
                const std::int64_t full_left = seg.count - 1 - out.segments_done;
                if (full_left > 0) {
                    auto k = static_cast<std::int64_t>(std::max(0.0, std::floor((to - phase_start) / s)));
                    k = std::min(k, full_left);
                    while (k > 0 && phase_start + static_cast<double>(k) * s > to) --k;
                    while (k < full_left && phase_start + static_cast<double>(k + 1) * s <= to) ++k;
                    phase_start += static_cast<double>(k) * s;
                    out.segments_done += k;
                    out.work_done_h += static_cast<double>(k) * options.interval_h;
                    if (k < full_left) return;
                }
                if (phase_start + s_last > to) return;
                out.segments_done += 1;
                out.work_done_h += seg.last_work_h;
                out.end_h = phase_start + s_last;
                out.outcome = replay_outcome::finished;
                now = phase::done;
                return;
            } else {
                return;
            }
        }
    };
    const auto fill = [&](double at) {
        while (held.size() < wanted && !spares.empty()) {
            held.push_back({spares.front(), started ? at + options.replacement_delay_h : at});
            spares.pop_front();
        }
    };

    for (const auto& e : trace.events) {
        const double t = static_cast<double>(e.time_ms) / ms_per_h;
        if (t > horizon) break;
        advance(t);
        if (now == phase::done) break;
        if (e.kind == instance_event_kind::add) {
            spares.push_back(e.node);
        } else {
            const auto h = std::find_if(held.begin(), held.end(), [&](const held_instance& x) { return x.node == e.node; });
            if (h != held.end()) {
                held.erase(h);
                ++out.held_losses;
                if (now == phase::working || now == phase::restarting) {
                    ++out.interruptions;
                    (now == phase::working ? out.lost_h : out.restart_time_h) += t - phase_start;
                    now = phase::waiting;
                    waiting_since = t;
                }
            } else {
                spares.erase(std::find(spares.begin(), spares.end(), e.node));
            }
        }
        fill(t);
    }
    if (now != phase::done) {
        advance(horizon);
        if (now != phase::done) {
            out.end_h = horizon;
            if (now == phase::waiting) out.waiting_h += std::max(0.0, horizon - waiting_since);
        }
    }
    return out;
}

}  // namespace dnnplan
