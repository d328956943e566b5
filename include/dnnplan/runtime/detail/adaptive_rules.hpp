#pragma once
// The figures the library's deadline policy (runtime/adaptive.hpp, whose header comment states
// its rules) decides with: rule 1's renewal model of runs and outages (a cycle's parts, the normal
// overrun of the slack, the expected cost of the rest of the job) and rule 2's benefit of starting
// on a spot run with its optimal stopping age. Free functions over the learnt lengths
// (runtime/history.hpp); the policy object keeps what it computed per period.

#include <dnnplan/runtime/deadline_problem.hpp>
#include <dnnplan/runtime/history.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <utility>
#include <vector>

namespace dnnplan {

namespace detail::deadline {

/// The prices a decision weighs, in USD per second of one gang.
struct unit_prices {
    double spot_usd_per_s = 0.0;
    double on_demand_usd_per_s = 0.0;
};

/// Rule 1's outcome: how long a waiting job waits in an outage before on-demand, and how likely
/// the slack is to run out with it.
struct thresholds {
    double wait_ticks = 0.0;
    double p_overrun = 0.0;
};

/// The share of a cycle's figures that one part (a run, or an outage) brings, averaged over the
/// empirical lengths: work done, slack used (and its square, for the variance) and money.
struct cycle_part {
    double work_s = 0.0, slack_s = 0.0, slack2_s2 = 0.0, usd = 0.0;
    /// Adds one length's figures with its weight (its share of the lengths).
    void add(double weight, double work, double slack, double money) noexcept {
        work_s += weight * work, slack_s += weight * slack, slack2_s2 += weight * slack * slack, usd += weight * money;
    }
};

/// E[(U - s)^+] and P(U > s) for U ~ N(mean, sd^2): with z = (mean - s) / sd,
/// E[(U - s)^+] = (mean - s) Phi(z) + sd phi(z) (the normal loss function; Porteus, "Foundations
/// of Stochastic Inventory Theory", 2002, sec. 1.3).
[[nodiscard]] inline std::pair<double, double> normal_overrun(double mean, double sd, double s) noexcept {
    if (!(sd > 0.0)) return {std::max(mean - s, 0.0), mean > s ? 1.0 : 0.0};
    const double z = (mean - s) / sd;
    const double density = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
    const double tail = 0.5 * std::erfc(-z / std::sqrt(2.0));
    return {(mean - s) * tail + sd * density, tail};
}

/// At most `most` candidate thresholds: `first`, the distinct lengths at least `from` (every k-th
/// when there are more), and one past the longest (waiting every period out).
[[nodiscard]] inline std::vector<double> threshold_candidates(const length_histogram& h, std::size_t most, double first, double from = 0.0) {
    std::vector<double> out{first};
    const auto& bins = h.bins();
    const auto begin = std::find_if(bins.begin(), bins.end(), [&](const auto& b) { return static_cast<double>(b.first) >= from; });
    const auto size = static_cast<std::size_t>(bins.end() - begin);
    const std::size_t step = std::max<std::size_t>(1, size / most);
    for (std::size_t i = 0; i < size; i += step) out.push_back(static_cast<double>(begin[static_cast<std::ptrdiff_t>(i)].first));
    if (!bins.empty()) out.push_back(std::max(static_cast<double>(bins.back().first), from) + 1.0);
    return out;
}

/// How much longer than its age a period is taken to last when it has outlasted every observed
/// one: as long again (top of adaptive.hpp).
inline constexpr double unseen_length_factor = 2.0;

/// The lengths (ticks, weight) of the periods at least `age` ticks long, weights summing to 1; a
/// period older than every observed one is taken to last unseen_length_factor x its age.
[[nodiscard]] inline std::vector<std::pair<double, double>> lengths_at_least(const length_histogram& h, double age) {
    std::vector<std::pair<double, double>> out;
    double n = 0.0;
    for (const auto& [length, count] : h.bins())
        if (static_cast<double>(length) >= age) out.emplace_back(static_cast<double>(length), static_cast<double>(count)), n += static_cast<double>(count);
    if (out.empty()) return {{unseen_length_factor * age, 1.0}};
    for (auto& [length, weight] : out) weight /= n;
    return out;
}

/// An outage's part of a cycle when the job waits while the outage's age is at most tau and runs
/// on-demand after it, over `lengths` (those of an outage that has lasted `age` ticks, this one
/// included: from now, max(min(l, tau) - age + 1, 0) ticks waited, l - max(tau, age - 1) paid).
[[nodiscard]] inline cycle_part outage_part(const std::vector<std::pair<double, double>>& lengths, double tau, double age, double gap_s,
                                            double changeover_s, double on_demand_usd_per_s) noexcept {
    cycle_part part;
    for (const auto& [l, c] : lengths) {
        const double paid = std::max(l - std::max(tau, age - 1.0), 0.0) * gap_s;
        const double x = std::max(std::min(l, tau) - age + 1.0, 0.0) * gap_s + std::min(paid, changeover_s);
        part.add(c, std::max(paid - changeover_s, 0.0), x, on_demand_usd_per_s * paid);
    }
    return part;
}

/// A renewal cycle of rule 1: a run's part then an outage's, and the variance of its slack (the
/// two parts taken as independent).
[[nodiscard]] inline std::pair<cycle_part, double> renewal_cycle(const cycle_part& run, const cycle_part& outage) noexcept {
    const double var = std::max(run.slack2_s2 - run.slack_s * run.slack_s, 0.0) + std::max(outage.slack2_s2 - outage.slack_s * outage.slack_s, 0.0);
    return {{run.work_s + outage.work_s, run.slack_s + outage.slack_s, 0.0, run.usd + outage.usd}, var};
}

/// Rule 1's cost of the rest of the job (top of adaptive.hpp): a first part (the outage in
/// progress; empty at a period's start), then n = (work - its work) / w renewal cycles of `cycle`,
/// the slack used beyond `slack_s` weighted by k (Q - p). Returns the cost and P(overrun).
[[nodiscard]] inline std::pair<double, double> rest_of_job_cost(const cycle_part& first, const cycle_part& cycle, double cycle_var_s2,
                                                                double work_s, double slack_s, double overrun_usd_per_s) noexcept {
    const double cycles = cycle.work_s > 0.0 ? std::max(work_s - first.work_s, 0.0) / cycle.work_s : 0.0;
    const double var = std::max(first.slack2_s2 - first.slack_s * first.slack_s, 0.0) + cycles * cycle_var_s2;
    const auto [over, p_over] = normal_overrun(first.slack_s + cycles * cycle.slack_s, std::sqrt(var), slack_s);
    return {first.usd + cycles * cycle.usd + overrun_usd_per_s * over, p_over};
}

/// What a start on a spot run pays besides its own changeover (rule 2, top of adaptive.hpp).
struct start_charges {
    /// Egress there and back (a move to another region); 0 for a switch at home.
    double extra_usd = 0.0;
    /// Whether the changeover back to on-demand when the run ends is charged too (moves).
    bool changeover_back = false;
    /// The price (USD/s) of the spot run at home that a move to cheaper spot leaves; 0 for a start
    /// from on-demand. B4 (below) charges its own changeover back, home, whatever changeover_back says.
    double from_spot_usd_per_s = 0.0;
};

/// B(x), the benefit of starting on a spot run from on-demand with x seconds of the run left
/// (rule 2, top of adaptive.hpp): the spot work after the changeover saves Q - p a second; the
/// changeover is billed at p and its min(x, d) of slack is worth (Q - p) P a second. A move also
/// pays the changeover back at Q with probability P, the rest of 2d of slack (2d - min(x, d)) and
/// its egress. A move from spot at home, at h a second, to cheaper spot (rule 4, top of
/// adaptive.hpp) saves h - p a second of the x (its changeover billed at p); the work its
/// changeover loses is made up at h, its min(x, d) of slack is worth lambda = (Q - p) P a second,
/// and it pays the changeover back home (h d and d of slack) and its egress:
///     B4(x) = (h - p) x - h d - lambda min(x, d) - (h + lambda) d - 2E.
[[nodiscard]] inline double start_benefit_usd(unit_prices u, double p_overrun, double changeover_s, start_charges charges, double left_s) noexcept {
    const double p = u.spot_usd_per_s, q = u.on_demand_usd_per_s, d = changeover_s;
    if (charges.from_spot_usd_per_s > 0.0) {
        const double h = charges.from_spot_usd_per_s, lambda = (q - p) * p_overrun;
        return (h - p) * left_s - h * d - lambda * std::min(left_s, d) - (h + lambda) * d - charges.extra_usd;
    }
    const double own = (q - p) * std::max(left_s - d, 0.0) - p * std::min(left_s, d) - (q - p) * p_overrun * std::min(left_s, d);
    const double back = charges.changeover_back ? q * d * p_overrun + (q - p) * p_overrun * (2.0 * d - std::min(left_s, d)) : 0.0;
    return own - back - charges.extra_usd;
}

/// The age (ticks) at which starting on a spot run pays best, over the empirical run lengths, for
/// `benefit(x)` the benefit with x seconds of the run left (optimal stopping over the run's age:
/// the sum over the runs at least that long); +inf when no age pays, 1 when nothing is learnt.
template <class Benefit>
[[nodiscard]] double best_start_age(const length_histogram& h, double gap_s, Benefit benefit) {
    const auto& runs = h.bins();
    if (runs.empty()) return 1.0;  // nothing learnt: start
    double best_age = std::numeric_limits<double>::infinity(), best = 0.0;
    std::vector<double> ages{1.0};
    const std::size_t step = std::max<std::size_t>(1, runs.size() / 64);
    for (std::size_t i = 0; i < runs.size(); i += step) ages.push_back(static_cast<double>(runs[i].first));
    for (const double age : ages) {
        double total = 0.0;
        for (const auto& [length, count] : runs)
            if (static_cast<double>(length) >= age) total += static_cast<double>(count) * benefit((static_cast<double>(length) - age + 1.0) * gap_s);
        if (total > best) best = total, best_age = age;
    }
    return best_age;
}

/// How far back (seconds) rule 4 (top of adaptive.hpp) averages a region's spot price.
inline constexpr double recent_price_window_s = 3600.0;

/// Region r's mean spot price (USD/h) over the ticks of the last recent_price_window_s observed (at
/// least this one). On random markets whose prices are drawn afresh at every tick, rule 4 with
/// this tick's prices cost 1.5 % more than without the rule (2,602 moves against 1,918); with
/// these means, as much as without it; on the shared and held-out traces the figures are the same
/// either way (docs/solvers/deadline_policy.md).
[[nodiscard]] inline double recent_spot_usd_per_h(const deadline_view& v, std::size_t r) {
    const auto window = static_cast<std::size_t>(std::max(1.0, std::ceil(recent_price_window_s / v.gap_s())));
    const std::size_t now = v.now(), first = now + 1 >= window ? now + 1 - window : 0;
    double sum_usd_per_h = 0.0;
    for (std::size_t k = first; k <= now; ++k) sum_usd_per_h += v.spot_usd_per_h(r, k);
    return sum_usd_per_h / static_cast<double>(now + 1 - first);
}

/// Rule 2's figures for one spot run, computed at its first view: the prices, P, and the age a* at
/// which starting on it pays.
struct start_rule {
    unit_prices prices{};
    double p_overrun = 0.0;
    double start_age = 0.0;
    std::size_t run_start = 0;
    std::int32_t region = -1;
    bool valid = false;
};

}  // namespace detail::deadline

}  // namespace dnnplan
