#pragma once
// Preemption rates fitted from instance lifetimes:
//   - fit_exponential_hazard: a constant hazard (exponential lifetimes) with right-censoring, its
//     maximum-likelihood rate and an exact chi-square (Garwood) interval;
//   - fit_hour_of_day_hazard: a rate that is constant within groups of hours of the day, and the
//     likelihood-ratio test of it against the constant rate (does the data support it?).
// The processes that generate preemptions are preemption/poisson_preemption.hpp (a fitted rate's
// process), preemption/trace_replay.hpp and preemption/bamboo_random.hpp. Formulas and sources
// are in docs/models/preemption.md and in the comments below.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/numeric_kernels.hpp>
#include <dnnplan/preemption/events.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace dnnplan {

// ---- the constant hazard ------------------------------------------------------------------------

struct hazard_fit_options {
    double confidence = 0.95;  ///< of the rate interval, in (0, 1)

    void validate(std::string_view path = "options") const {
        if (!(confidence > 0.0 && confidence < 1.0))
            throw invalid_input(detail::field_prefix(path) + "confidence", detail::format_number(confidence),
                                "a number in (0, 1)");
    }
};

/// A constant preemption rate lambda (lifetimes exponential with mean 1 / lambda), fitted from
/// lifetimes with right-censoring.
struct exponential_hazard {
    double rate_per_h = 0.0;    ///< lambda-hat = preemptions / exposure_h (maximum likelihood)
    double lower_per_h = 0.0;   ///< exact interval at `confidence` (0 when there is no preemption)
    double upper_per_h = 0.0;
    double confidence = 0.95;
    std::int64_t preemptions = 0;   ///< d: observations that ended in a preemption
    std::int64_t censored = 0;      ///< observations still running when observed last
    double exposure_h = 0.0;        ///< T: the sum of every observation's duration

    /// 1 / rate_per_h (+inf without preemptions).
    [[nodiscard]] double mean_lifetime_h() const noexcept {
        return rate_per_h > 0.0 ? 1.0 / rate_per_h : std::numeric_limits<double>::infinity();
    }
};

namespace detail {

/// The exact two-sided interval for a rate from d events over a fixed exposure T (Garwood 1936,
/// "Fiducial limits for the Poisson distribution", Biometrika 28: d ~ Poisson(lambda T)):
///   lower = chi2_{alpha/2}(2d) / (2T)  (0 for d = 0),   upper = chi2_{1-alpha/2}(2d + 2) / (2T),
/// with chi2_p(k) the p-quantile of the chi-square distribution with k degrees of freedom and
/// alpha = 1 - confidence. For exponential lifetimes it is the interval of Cox and Oakes
/// ("Analysis of Survival Data", 1984, ch. 3), exact when the observation stops at the d-th
/// preemption (2 lambda T ~ chi2(2d)) and close to its level under other censoring (the test
/// tests/preemption/hazard.cpp measures its coverage).
[[nodiscard]] inline std::pair<double, double> poisson_rate_interval(std::int64_t events, double exposure,
                                                                     double confidence) {
    const double alpha = 1.0 - confidence;
    const double d = static_cast<double>(events);
    const double lower = events == 0 ? 0.0 : chi_squared_quantile(alpha / 2.0, 2.0 * d) / (2.0 * exposure);
    const double upper = chi_squared_quantile(1.0 - alpha / 2.0, 2.0 * d + 2.0) / (2.0 * exposure);
    return {lower, upper};
}

/// Throws invalid_input naming observations[i] for a bad observation, and `observations` for an
/// empty list or one without exposure (every duration 0): no rate can be fitted from it.
inline void check_lifetimes(std::span<const lifetime_observation> observations, bool need_hour) {
    if (observations.empty())
        throw invalid_input("observations", "0 observations", "at least one lifetime observation");
    double exposure = 0.0;
    for (std::size_t i = 0; i < observations.size(); ++i) {
        const lifetime_observation& o = observations[i];
        const std::string at = "observations[" + std::to_string(i) + "]";
        o.validate(at);
        if (need_hour && !o.start_hour_of_day) throw invalid_input(at + ".start_hour_of_day", "none", "a number in [0, 24)");
        exposure += o.duration_h;
    }
    if (!(exposure > 0.0) || !std::isfinite(exposure))
        throw invalid_input("observations", "a total exposure of " + format_number(exposure) + " h",
                            "a finite total duration > 0 h (at least one observation with duration_h > 0)");
}

}  // namespace detail

/// The constant hazard fitted from lifetimes. With d preemptions among the observations and T the
/// sum of all durations (censored ones included), the log-likelihood of exponential lifetimes is
/// d ln(lambda) - lambda T (each preempted observation contributes its density lambda e^{-lambda t},
/// each censored one its survival e^{-lambda t}; Cox and Oakes 1984, ch. 3), maximised at
/// lambda = d / T; the interval is detail::poisson_rate_interval's.
/// Throws invalid_input naming "observations[i].duration_h", "options.confidence" or
/// "observations" (none, or no exposure).
[[nodiscard]] inline exponential_hazard fit_exponential_hazard(std::span<const lifetime_observation> observations,
                                                               const hazard_fit_options& options = {}) {
    options.validate();
    detail::check_lifetimes(observations, false);
    exponential_hazard h;
    h.confidence = options.confidence;
    for (const lifetime_observation& o : observations) {
        h.exposure_h += o.duration_h;
        if (o.preempted) ++h.preemptions;
        else ++h.censored;
    }
    h.rate_per_h = static_cast<double>(h.preemptions) / h.exposure_h;
    std::tie(h.lower_per_h, h.upper_per_h) = detail::poisson_rate_interval(h.preemptions, h.exposure_h, options.confidence);
    return h;
}

// ---- the hour-of-day hazard ---------------------------------------------------------------------

struct hour_of_day_options {
    std::int32_t bins = 24;        ///< groups of 24 / bins hours each: a divisor of 24, >= 2
    double confidence = 0.95;      ///< of each rate interval, in (0, 1)
    double significance = 0.05;    ///< of the likelihood-ratio test, in (0, 1)

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        if (bins < 2 || bins > 24 || 24 % bins != 0)
            throw invalid_input(p + "bins", std::to_string(bins), "a divisor of 24 that is >= 2 (2, 3, 4, 6, 8, 12 or 24)");
        if (!(confidence > 0.0 && confidence < 1.0))
            throw invalid_input(p + "confidence", detail::format_number(confidence), "a number in (0, 1)");
        if (!(significance > 0.0 && significance < 1.0))
            throw invalid_input(p + "significance", detail::format_number(significance), "a number in (0, 1)");
    }
};

/// The hours [begin_hour, end_hour) of the day and the rate fitted within them.
struct hour_of_day_bin {
    std::int32_t begin_hour = 0;
    std::int32_t end_hour = 24;
    std::int64_t preemptions = 0;   ///< d_b: preemptions at an hour of this bin
    double exposure_h = 0.0;        ///< T_b: time the instances lived through these hours
    double rate_per_h = 0.0;        ///< d_b / T_b (0 when T_b = 0)
    double lower_per_h = 0.0;       ///< Garwood interval from d_b and T_b
    double upper_per_h = 0.0;       ///< +inf when T_b = 0 (no instance lived through these hours)
};

/// A rate that is constant within each group of hours of the day, and whether the data support it
/// over a constant rate.
struct hour_of_day_hazard {
    exponential_hazard constant{};            ///< the constant-rate fit of the same data
    std::vector<hour_of_day_bin> bins{};
    double likelihood_ratio = 0.0;            ///< 2 (l_hour - l_constant) >= 0
    std::int32_t degrees_of_freedom = 0;      ///< bins with exposure - 1
    double p_value = 1.0;                     ///< P(chi2(dof) > likelihood_ratio)
    double significance = 0.05;
    bool supported = false;                   ///< p_value < significance: the constant rate is rejected

    /// The rate at an hour of the day in [0, 24): the bin's when supported, the constant one otherwise.
    [[nodiscard]] double rate_per_h(double hour_of_day) const noexcept {
        if (!supported || bins.empty()) return constant.rate_per_h;
        const double width = 24.0 / static_cast<double>(bins.size());
        auto b = static_cast<std::size_t>(std::floor(hour_of_day / width));
        if (b >= bins.size()) b = bins.size() - 1;
        return bins[b].rate_per_h;
    }
};

/// A hazard that is constant within each of `bins` groups of hours of the day (a piecewise
/// exponential model, Friedman 1982, "Piecewise exponential models for survival data with
/// covariates", Ann. Statist. 10, with the pieces in clock time instead of age): an observation
/// starting at hour s that lives t hours is exposed to each bin for the hours of [s, s + t) that
/// fall in it (whole days included), and its preemption, if any, belongs to the bin holding the
/// last instant it lived (of s for t = 0). With d_b preemptions over an exposure T_b in bin b
/// (D, T in all), the log-likelihood sum_b (d_b ln lambda_b - lambda_b T_b) (the Poisson form of
/// Laird and Olivier 1981, JASA 76) is maximised at lambda_b = d_b / T_b, and the likelihood-ratio
/// statistic against the constant rate D / T is
///   LR = 2 sum_b d_b ln((d_b / T_b) / (D / T))      (0 ln 0 = 0),
/// asymptotically chi-square with (bins with T_b > 0) - 1 degrees of freedom under the constant
/// rate (Wilks 1938, Ann. Math. Statist. 9); `supported` when its p-value < significance.
/// Every observation needs start_hour_of_day. A preemption in a bin without exposure (only
/// possible from observations of duration 0 starting where nothing else lived) makes that bin's
/// rate infinite: LR = +inf, p_value = 0.
/// Throws invalid_input naming "options.<field>", "observations[i].<field>" or "observations".
[[nodiscard]] inline hour_of_day_hazard fit_hour_of_day_hazard(std::span<const lifetime_observation> observations,
                                                               const hour_of_day_options& options = {}) {
    options.validate();
    detail::check_lifetimes(observations, true);
    hour_of_day_hazard out;
    out.constant = fit_exponential_hazard(observations, {.confidence = options.confidence});
    out.significance = options.significance;
    const std::int32_t n = options.bins;
    const double width = 24.0 / n;  // an integer: bins divides 24, so bin edges are exact
    const auto bin_of = [&](double hour) {  // the bin holding [hour, hour + epsilon)
        auto b = static_cast<std::int32_t>(hour / width);
        if (b * width > hour) --b;
        if ((b + 1) * width <= hour) ++b;
        return b < 0 ? 0 : (b >= n ? n - 1 : b);
    };
    const auto bin_before = [&](double hour) {  // the bin holding (hour - epsilon, hour]
        const std::int32_t b = bin_of(hour);
        return b * width == hour ? (b + n - 1) % n : b;
    };
    std::vector<double> exposure(static_cast<std::size_t>(n), 0.0);
    std::vector<std::int64_t> events(static_cast<std::size_t>(n), 0);
    for (const lifetime_observation& o : observations) {
        const double start = *o.start_hour_of_day;
        const double days = std::floor(o.duration_h / 24.0);
        double rest = o.duration_h - 24.0 * days;
        if (!(rest > 0.0 && rest < 24.0)) rest = 0.0;  // past 2^53 h the remainder is rounding noise
        std::int32_t last = bin_of(start);  // the bin of the observation's last instant
        if (days > 0.0) {
            for (double& e : exposure) e += days * width;
            last = bin_before(start);  // whole days end just before the start hour
        }
        double position = start;
        while (rest > 0.0) {
            const std::int32_t b = bin_of(position);
            const double take = std::min(rest, (b + 1) * width - position);
            exposure[static_cast<std::size_t>(b)] += take;
            rest -= take;
            last = b;
            position = b + 1 == n ? 0.0 : (b + 1) * width;
        }
        if (o.preempted) ++events[static_cast<std::size_t>(last)];
    }
    const double overall = out.constant.rate_per_h;
    double lr = 0.0;
    std::int32_t exposed_bins = 0;
    for (std::int32_t b = 0; b < n; ++b) {
        const auto k = static_cast<std::size_t>(b);
        hour_of_day_bin bin{.begin_hour = static_cast<std::int32_t>(b * width),
                            .end_hour = static_cast<std::int32_t>((b + 1) * width),
                            .preemptions = events[k],
                            .exposure_h = exposure[k]};
        if (exposure[k] > 0.0) {
            ++exposed_bins;
            bin.rate_per_h = static_cast<double>(events[k]) / exposure[k];
            std::tie(bin.lower_per_h, bin.upper_per_h) =
                detail::poisson_rate_interval(events[k], exposure[k], options.confidence);
            if (events[k] > 0) lr += 2.0 * static_cast<double>(events[k]) * std::log(bin.rate_per_h / overall);
        } else {
            bin.upper_per_h = std::numeric_limits<double>::infinity();
            if (events[k] > 0) {
                bin.rate_per_h = std::numeric_limits<double>::infinity();
                bin.lower_per_h = std::numeric_limits<double>::infinity();
                lr = std::numeric_limits<double>::infinity();
            }
        }
        out.bins.push_back(bin);
    }
    out.degrees_of_freedom = exposed_bins - 1;
    // sum_b d_b ln(r_b / r) >= 0 (Gibbs' inequality); rounding can leave -1e-15. With one exposed
    // bin (dof 0) or no preemption it is 0: nothing to test, p = 1.
    out.likelihood_ratio = lr > 0.0 ? lr : 0.0;
    if (std::isinf(lr)) out.p_value = 0.0;
    else if (out.degrees_of_freedom <= 0 || out.likelihood_ratio == 0.0) out.p_value = 1.0;
    else out.p_value = detail::chi_squared_upper_tail(out.likelihood_ratio, out.degrees_of_freedom);
    out.supported = out.p_value < options.significance;
    return out;
}

}  // namespace dnnplan
