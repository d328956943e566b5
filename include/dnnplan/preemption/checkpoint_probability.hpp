#pragma once
// P(T <= D) for checkpoint-restart under Poisson preemptions (the model of
// preemption/checkpoint_restart.hpp), by Fourier inversion with a rigorous error bound
// (docs/models/checkpoint-restart.md, "P(T <= D), with a proven error bound").

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/checkpoint_restart.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>

namespace dnnplan {

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

}  // namespace dnnplan
