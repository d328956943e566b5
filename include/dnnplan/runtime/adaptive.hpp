#pragma once
// The library's own deadline policy ("default"). It learns the lengths of spot runs and outages
// from the availability observed so far (history.hpp) and decides with two rules, under the same
// safety net as Uniform Progress (policies.hpp: on-demand once the work and its changeovers fill
// the ticks left), so that it never misses a deadline on-demand from the start could meet:
//
// 1. Wait or pay, in an outage (ski rental with a learned threshold; Karlin et al., "Competitive
//    randomized algorithms for nonuniform problems", Algorithmica 1994, for the rental view). The
//    policy waits for spot up to tau ticks of an outage, then runs on-demand until spot returns.
//    tau minimises the expected cost of the rest of the job in a renewal model of cycles (a spot
//    run, then an outage waited up to tau and covered on-demand after it; Ross, "Applied
//    Probability Models with Optimization Applications", 1970, ch. 3, the renewal-reward theorem)
//    with the empirical run and outage lengths: n = W / w(tau) cycles are left, each using s(tau)
//    slack and m(tau) USD, and the slack they use beyond the slack left, its total taken as normal
//    (mean n s, variance n var s), costs on-demand instead of spot:
//        cost(tau) = n m(tau) + k (Q - p) E[(U - slack)^+],   U ~ N(n s, n var s).
// 2. Back to spot from on-demand (optimal stopping over the run's age): a switch pays a changeover
//    at the spot price, and one back to on-demand when the run ends, and uses 2d of slack, whose
//    value is (Q - p) times the probability that the slack runs out (rule 1's model); the policy
//    switches once the run has lasted a* ticks, a* the age that maximises the expected benefit of
//    switching then over the empirical run lengths (never, when no age pays).
// With several regions, spot is taken in the checkpoint's region when it has spot (no egress),
// else in the region of cheapest spot; on-demand runs in the checkpoint's region.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/runtime/history.hpp>
#include <dnnplan/runtime/policies.hpp>
#include <dnnplan/runtime/deadline_problem.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

struct adaptive_deadline_options {
    /// Slack (seconds) kept out of rule 1's budget, for the end of the job.
    double reserve_s = 2000.0;
    /// k: how much more a second of slack used beyond the slack left costs than the spot it
    /// replaces (the job's end then runs on-demand, spot or not).
    double overrun_weight = 3.0;
    /// Slack (in changeovers) a switch back to spot needs.
    double switch_slack_changeovers = 2.0;

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "reserve_s", reserve_s);
        detail::require_non_negative(p + "overrun_weight", overrun_weight);
        detail::require_non_negative(p + "switch_slack_changeovers", switch_slack_changeovers);
    }
};

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

/// At most `most` candidate thresholds: `first` and the distinct lengths (every k-th when there
/// are more), and one past the longest (waiting every period out).
[[nodiscard]] inline std::vector<double> threshold_candidates(const length_histogram& h, std::size_t most, double first) {
    std::vector<double> out{first};
    const auto& bins = h.bins();
    const std::size_t step = std::max<std::size_t>(1, bins.size() / most);
    for (std::size_t i = 0; i < bins.size(); i += step) out.push_back(static_cast<double>(bins[i].first));
    if (!bins.empty()) out.push_back(static_cast<double>(bins.back().first) + 1.0);
    return out;
}

}  // namespace detail::deadline

class adaptive_deadline_policy {
public:
    explicit adaptive_deadline_policy(adaptive_deadline_options options = {}) : options_(options) {}

    [[nodiscard]] deadline_decision decide(const deadline_view& v) {
        const deadline_state& s = v.state();
        if (s.work_left_s <= deadline_work_tolerance_s) return {deadline_action::wait, std::max(s.region, 0), "done"};
        history_.update(v);
        const std::int32_t od_region = on_demand_region(v);
        const std::int32_t spot_region = best_spot_region(v);
        deadline_decision ask = choose(v, spot_region, od_region);
        const std::int32_t region = ask.action == deadline_action::spot ? spot_region : od_region;
        return detail::deadline::safety_net(v, ask, spot_region == region && spot_region >= 0, region);
    }

private:
    [[nodiscard]] deadline_decision choose(const deadline_view& v, std::int32_t spot_region, std::int32_t od_region) {
        const deadline_state& s = v.state();
        if (spot_region >= 0) {
            if (s.mode != deadline_action::on_demand) return {deadline_action::spot, spot_region, "spot is available"};
            if (switch_pays(v, spot_region)) return {deadline_action::spot, spot_region, "back to spot: the run has lasted long enough to pay its changeovers"};
            return {deadline_action::on_demand, od_region, "on-demand until the spot run has lasted long enough"};
        }
        if (s.mode == deadline_action::on_demand) return {deadline_action::on_demand, od_region, "on-demand until spot returns"};
        if (static_cast<double>(history_.age()) > thresholds(v).wait_ticks)
            return {deadline_action::on_demand, od_region, "the outage outlasted the wait threshold: on-demand"};
        return {deadline_action::wait, od_region, "waiting for spot, within the wait threshold"};
    }

    /// The checkpoint's region, or before the first run the region of cheapest on-demand.
    [[nodiscard]] static std::int32_t on_demand_region(const deadline_view& v) {
        if (v.state().region >= 0) return v.state().region;
        std::size_t best = 0;
        for (std::size_t r = 1; r < v.regions(); ++r)
            if (v.on_demand_usd_per_h(r) < v.on_demand_usd_per_h(best)) best = r;
        return static_cast<std::int32_t>(best);
    }

    /// The checkpoint's region when it has spot now, else the region of cheapest spot now; -1: none.
    [[nodiscard]] static std::int32_t best_spot_region(const deadline_view& v) {
        const std::int32_t home = v.state().region;
        if (home >= 0 && v.spot_now(static_cast<std::size_t>(home))) return home;
        std::int32_t best = -1;
        for (std::size_t r = 0; r < v.regions(); ++r)
            if (v.spot_now(r) && (best < 0 || v.spot_usd_per_h(r, v.now()) < v.spot_usd_per_h(static_cast<std::size_t>(best), v.now())))
                best = static_cast<std::int32_t>(r);
        return best;
    }

    [[nodiscard]] detail::deadline::unit_prices prices(const deadline_view& v, std::int32_t spot_region) const {
        const auto od = static_cast<std::size_t>(on_demand_region(v));
        const double per_s = v.job().instances / 3600.0;
        const double spot_usd_per_h = spot_region >= 0 ? v.spot_usd_per_h(static_cast<std::size_t>(spot_region), v.now()) : v.spot_usd_per_h(od, v.now());
        return {spot_usd_per_h * per_s, v.on_demand_usd_per_h(od) * per_s};
    }

    /// The slack rule 1 may spend: the time left minus the work, one changeover and the reserve.
    [[nodiscard]] double spendable_slack_s(const deadline_view& v) const {
        const deadline_job& job = v.job();
        return job.deadline_s - v.elapsed_s() - v.state().work_left_s - job.changeover_s - options_.reserve_s;
    }

    /// Rule 1, computed once per period (at its first tick, or at the first view of it).
    [[nodiscard]] const detail::deadline::thresholds& thresholds(const deadline_view& v) {
        const std::size_t period_start = v.now() + 1 - static_cast<std::size_t>(history_.age());
        if (thresholds_for_ != period_start || !thresholds_valid_) {
            thresholds_ = compute_thresholds(v, prices(v, -1));
            thresholds_for_ = period_start;
            thresholds_valid_ = true;
        }
        return thresholds_;
    }

    [[nodiscard]] detail::deadline::thresholds compute_thresholds(const deadline_view& v, detail::deadline::unit_prices u) const;
    [[nodiscard]] detail::deadline::cycle_part run_part(const deadline_view& v, double spot_usd_per_s) const;
    [[nodiscard]] std::vector<std::pair<double, detail::deadline::cycle_part>> outage_parts(const deadline_view& v, double on_demand_usd_per_s) const;
    [[nodiscard]] bool switch_pays(const deadline_view& v, std::int32_t spot_region);
    [[nodiscard]] double best_switch_age(const deadline_view& v, double slack_value_usd_per_s, double spot_usd_per_s) const;

    adaptive_deadline_options options_;
    detail::deadline::availability_history history_;
    detail::deadline::thresholds thresholds_{};
    std::size_t thresholds_for_ = 0;
    bool thresholds_valid_ = false;
    double switch_age_ = 0.0;
    std::size_t switch_age_for_ = 0;
    bool switch_age_valid_ = false;
};

/// A run's part of a cycle: taken at once, a changeover, then work.
inline detail::deadline::cycle_part adaptive_deadline_policy::run_part(const deadline_view& v, double spot_usd_per_s) const {
    const double g = v.gap_s(), d = v.job().changeover_s;
    const auto n = static_cast<double>(history_.runs().count());
    detail::deadline::cycle_part part;
    for (const auto& [length, count] : history_.runs().bins()) {
        const double taken = static_cast<double>(length) * g, c = static_cast<double>(count) / n, x = std::min(taken, d);
        part.work_s += c * std::max(taken - d, 0.0), part.slack_s += c * x, part.slack2_s2 += c * x * x, part.usd += c * spot_usd_per_s * taken;
    }
    return part;
}

/// An outage's part of a cycle for each wait threshold tau: waited up to tau, on-demand after it.
inline std::vector<std::pair<double, detail::deadline::cycle_part>> adaptive_deadline_policy::outage_parts(const deadline_view& v,
                                                                                                           double on_demand_usd_per_s) const {
    const double g = v.gap_s(), d = v.job().changeover_s;
    const auto n = static_cast<double>(history_.outages().count());
    std::vector<std::pair<double, detail::deadline::cycle_part>> out;
    for (const double tau : detail::deadline::threshold_candidates(history_.outages(), 24, 0.0)) {
        detail::deadline::cycle_part part;
        for (const auto& [length, count] : history_.outages().bins()) {
            const double l = static_cast<double>(length), c = static_cast<double>(count) / n;
            const double paid = std::max(l - tau, 0.0) * g, x = std::min(l, tau) * g + std::min(paid, d);
            part.work_s += c * std::max(paid - d, 0.0), part.slack_s += c * x, part.slack2_s2 += c * x * x, part.usd += c * on_demand_usd_per_s * paid;
        }
        out.emplace_back(tau, part);
    }
    return out;
}

/// Rule 1 (top of this header): the wait threshold of least expected cost.
inline detail::deadline::thresholds adaptive_deadline_policy::compute_thresholds(const deadline_view& v,
                                                                                   detail::deadline::unit_prices u) const {
    const double work = v.state().work_left_s, slack = spendable_slack_s(v);
    if (history_.runs().empty() || history_.outages().empty()) return {std::numeric_limits<double>::infinity(), 0.0};
    const detail::deadline::cycle_part r = run_part(v, u.spot_usd_per_s);
    detail::deadline::thresholds best{0.0, 1.0};
    double best_cost = std::numeric_limits<double>::infinity();
    for (const auto& [tau, o] : outage_parts(v, u.on_demand_usd_per_s)) {
        const double w = r.work_s + o.work_s;
        if (!(w > 0.0)) continue;
        const double cycles = work / w;
        const double var = std::max(r.slack2_s2 - r.slack_s * r.slack_s, 0.0) + std::max(o.slack2_s2 - o.slack_s * o.slack_s, 0.0);
        const auto [over, p_over] = detail::deadline::normal_overrun(cycles * (r.slack_s + o.slack_s), std::sqrt(cycles * var), slack);
        const double cost = cycles * (r.usd + o.usd) + options_.overrun_weight * (u.on_demand_usd_per_s - u.spot_usd_per_s) * over;
        if (cost < best_cost) best_cost = cost, best = {tau, p_over};
    }
    return best;
}

/// Rule 2 (top of this header): the age at which a switch back to spot pays best, over the
/// empirical run lengths; +inf when no age pays. B(X) for X seconds of the run left: the spot work
/// after the changeover saves Q - p a second; the changeover is billed at p, the one back at Q, and
/// the 2d of slack are worth `slack_value_usd_per_s` a second.
inline double adaptive_deadline_policy::best_switch_age(const deadline_view& v, double slack_value_usd_per_s, double spot_usd_per_s) const {
    const double g = v.gap_s(), d = v.job().changeover_s;
    const double od = v.on_demand_usd_per_h(static_cast<std::size_t>(on_demand_region(v))) * v.job().instances / 3600.0;
    const auto& runs = history_.runs().bins();
    if (runs.empty()) return 1.0;  // nothing learnt: switch
    const auto benefit = [&](double left_s) {
        return (od - spot_usd_per_s) * std::max(left_s - d, 0.0) - spot_usd_per_s * std::min(left_s, d) - od * d - slack_value_usd_per_s * 2.0 * d;
    };
    double best_age = std::numeric_limits<double>::infinity(), best = 0.0;
    std::vector<double> ages{1.0};
    const std::size_t step = std::max<std::size_t>(1, runs.size() / 64);
    for (std::size_t i = 0; i < runs.size(); i += step) ages.push_back(static_cast<double>(runs[i].first));
    for (const double age : ages) {
        double total = 0.0;
        for (const auto& [length, count] : runs)
            if (static_cast<double>(length) >= age) total += static_cast<double>(count) * benefit((static_cast<double>(length) - age + 1.0) * g);
        if (total > best) best = total, best_age = age;
    }
    return best_age;
}

/// Rule 2 for the run in progress (computed at its first view), and the slack it needs.
inline bool adaptive_deadline_policy::switch_pays(const deadline_view& v, std::int32_t spot_region) {
    const double d = v.job().changeover_s;
    if (spendable_slack_s(v) + options_.reserve_s < options_.switch_slack_changeovers * d) return false;
    const std::size_t run_start = v.now() + 1 - static_cast<std::size_t>(history_.age());
    if (switch_age_for_ != run_start || !switch_age_valid_) {
        const detail::deadline::unit_prices u = prices(v, spot_region);
        const double p_over = compute_thresholds(v, u).p_overrun;
        switch_age_ = best_switch_age(v, (u.on_demand_usd_per_s - u.spot_usd_per_s) * p_over, u.spot_usd_per_s);
        switch_age_for_ = run_start;
        switch_age_valid_ = true;
    }
    return static_cast<double>(history_.age()) >= switch_age_;
}

static_assert(deadline_policy<adaptive_deadline_policy>);

}  // namespace dnnplan
