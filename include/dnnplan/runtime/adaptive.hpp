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
//    (mean n s, variance kappa n var s), costs on-demand instead of spot:
//        cost(tau) = n m(tau) + k (Q - p) E[(U - slack)^+],   U ~ N(n s, kappa n var s).
//    kappa > 1 widens the model's own variance (cycles independent, the learnt lengths taken as
//    exact), which left the policy too sure of its slack early in a job: a measured choice, tuned
//    on the shared traces (docs/solvers/deadline_policy.md). Through P it also prices the slack
//    of rules 2 to 4 and of the moves.
//    Once the outage in progress has outlasted tau, the same cost is weighed again with the outage
//    in progress conditioned on the age it has reached (its first part: only the outages at least
//    that long, its variance not widened; the cycles after it keep tau and kappa): the policy
//    waits on while some later threshold T costs less than paying now, and re-weighs at T.
// 2. Back to spot from on-demand (optimal stopping over the run's age): a switch pays its
//    changeover at the spot price and loses its work, and the changeover's slack is worth
//    lambda = (Q - p) P a second (P: the probability that the slack runs out, from rule 1's
//    model). The policy switches once the run has lasted a* ticks, a* the age that maximises the
//    expected benefit of switching then over the empirical run lengths (never, when no age pays).
//    What follows the run's end (waiting, or on-demand after another changeover) is not charged
//    to the switch: a measured choice, not a derivation (charging the changeover back, Q d P, and
//    the rest of 2d of slack made no difference on the shared traces and cost more on the
//    held-out ones; docs).
//    While the on-demand run is still in its own changeover (o > 0 of it pending: on-demand taken
//    for an outage that ended within its changeover), staying does max(x - o, 0) work in the next
//    x seconds and a switch max(x - d, 0): the switch saves Q - p a second of the x and loses the
//    difference, made up on on-demand at Q plus lambda a second; when the run ends, the job
//    restarts on-demand (probability P) with d to pay where staying had max(o - x, 0) left. The
//    policy switches at once, without a* and the budget below, when that is positive in
//    expectation over the runs at least as old as this one (without the restart it switched
//    back and forth on spot that flaps, d >> g).
// 3. A budget of switches (a threshold that depends on the capacity and time left, as in
//    Kleywegt and Papastavrou, "The dynamic and stochastic knapsack problem", Operations
//    Research 46(1), 1998): the slack S = R - t - W - d affords S / 2d switches to spot and back;
//    about (R - t) / (mean run + mean outage) runs start before the deadline, and a switch at age
//    a is taken on those at least a long. Rule 2 switches only at ages a where
//    (R - t) / (mean run + mean outage) x P(run >= a) <= S / 2d, so that the slack is not spent
//    on early short runs and then missing for the long ones.
// A period that has lasted longer than any observed one is taken to last as long again (the
// Lindy effect of heavy-tailed lengths; Eliazar, "Lindy's Law", Physica A 486, 2017): a run that
// long switches back when the benefit of a run as long again is positive, an outage that long is
// weighed as one of twice its age. Until it has seen a run and an outage end, the policy has
// nothing to learn from and decides as Uniform Progress does.
//
// With several regions, the rules read the checkpoint's region's own runs and outages (spot in
// another region costs a move). Spot is taken in the checkpoint's region when it has spot (no
// egress); else in the region of cheapest spot, by rule 2's optimal stopping over that region's
// own run lengths with the egress there and back (2E) and the changeover back to on-demand (at Q
// with probability P, and the rest of 2d of slack) taken from the benefit: the job moves once
// that region's run has lasted long enough that B'(x) - 2E pays. B is a benefit over on-demand, so
// a waiting job weighs a move only once rule 1 (at home) would pay for on-demand, or once the
// outage at home has outlasted the mean of its outages; until then it waits for spot at home.
// When the move does not pay, the job keeps what it does: on-demand, or
// waiting (under the safety net) while spot is up elsewhere, which cost less on the shared traces
// than going on-demand then. On-demand runs in the checkpoint's region. Until some history (spot
// anywhere, or one region's) has seen a run and an outage end, the job decides as Uniform Progress.
// 4. From spot at home to cheaper spot (several regions): while the job runs on spot at home past
//    its changeover and another region has spot at a lower price, the job moves there by rule 2's
//    optimal stopping over that region's runs, with the benefit B4 of adaptive_rules.hpp (the
//    price difference over the run, less the work its changeover loses, made up at home's price,
//    the changeover back and the egress both ways), once the slack holds the move and the way
//    back (2d). Without it a job that started on dear spot stayed there while cheaper spot ran
//    for days elsewhere. Both prices are the regions' means over the last hour observed
//    (recent_spot_usd_per_h): a price that holds is its own mean, and one that jumps from tick to
//    tick does not send the job back and forth.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/runtime/detail/adaptive_rules.hpp>
#include <dnnplan/runtime/history.hpp>
#include <dnnplan/runtime/policies.hpp>
#include <dnnplan/runtime/deadline_problem.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

struct adaptive_deadline_options {
    /// Slack (seconds) kept out of rule 1's budget, for the end of the job.
    double reserve_s = 4000.0;
    /// k: how much more a second of slack used beyond the slack left costs than the spot it
    /// replaces (the job's end then runs on-demand, spot or not).
    double overrun_weight = 2.0;
    /// Slack (in changeovers) a switch back to spot needs.
    double switch_slack_changeovers = 1.0;
    /// kappa: rule 1 takes the variance of the slack its cycles to come use as the renewal model's
    /// times this factor (and so P, which prices the slack of rules 2 to 4 and of the moves).
    double slack_variance_factor = 8.0;

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "reserve_s", reserve_s);
        detail::require_non_negative(p + "overrun_weight", overrun_weight);
        detail::require_non_negative(p + "switch_slack_changeovers", switch_slack_changeovers);
        detail::require_non_negative(p + "slack_variance_factor", slack_variance_factor);
    }
};


class adaptive_deadline_policy {
public:
    explicit adaptive_deadline_policy(adaptive_deadline_options options = {}) : options_(options) {}

    [[nodiscard]] deadline_decision decide(const deadline_view& v) {
        const deadline_state& s = v.state();
        if (s.work_left_s <= deadline_work_tolerance_s) return {deadline_action::wait, std::max(s.region, 0), "done"};
        history_.update(v);
        if (v.regions() > 1) update_region_histories(v);
        const std::int32_t od_region = on_demand_region(v);
        const std::int32_t spot_region = best_spot_region(v);
        if (!learnt_anything()) {
            const std::int32_t region = s.region >= 0 ? s.region : (spot_region >= 0 ? spot_region : od_region);
            return detail::deadline::uniform_progress(v, region, true);  // nothing learnt yet
        }
        if (const std::int32_t cheaper = cheaper_spot_region(v); cheaper >= 0 && price_move_pays(v, cheaper))
            return detail::deadline::safety_net(v, {deadline_action::spot, cheaper, "a cheaper region's spot run has lasted long enough to repay the move"},
                                                cheaper, od_region);
        if (spot_region >= 0 && spot_region != s.region && s.region >= 0 && s.mode != deadline_action::on_demand && &home_history(v) != &history_ &&
            !outlasted_mean_outage(v)) {
            deadline_decision at_home = choose(v, -1, od_region);  // a move is weighed against on-demand only
            if (at_home.action == deadline_action::wait) return detail::deadline::safety_net(v, at_home, -1, od_region);
        }
        if (spot_region >= 0 && !move_pays(v, spot_region)) {
            const deadline_action keep = s.mode == deadline_action::on_demand ? deadline_action::on_demand : deadline_action::wait;
            return detail::deadline::safety_net(v, {keep, od_region, "spot only in another region, whose run has not lasted long enough to repay the egress"},
                                                -1, od_region);
        }
        deadline_decision ask = choose(v, spot_region, od_region);
        const bool spot_here = ask.action == deadline_action::spot || spot_region == od_region;
        return detail::deadline::safety_net(v, ask, spot_here ? spot_region : -1, od_region);
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
        const auto age = static_cast<double>(home_history(v).age());
        if (age <= thresholds(v).wait_ticks)
            return {deadline_action::wait, od_region, "waiting for spot, within the wait threshold"};
        if (age <= wait_on_ticks(v))
            return {deadline_action::wait, od_region, "the outage outlasted the wait threshold, but at its age waiting on costs less"};
        return {deadline_action::on_demand, od_region, "the outage outlasted the wait threshold: on-demand"};
    }

    /// Whether the checkpoint's region's outage in progress has lasted longer than its outages do
    /// on average (never, before one has ended): a waiting job then weighs a move even while rule 1
    /// would wait on at home.
    [[nodiscard]] bool outlasted_mean_outage(const deadline_view& v) const noexcept {
        const auto& home = home_history(v);
        return !home.outages().empty() && static_cast<double>(home.age()) > home.outages().mean();
    }

    /// Rule 4's candidate: while the job runs on spot at home past its changeover, the region of
    /// cheapest spot now if it is cheaper than home's; -1: none.
    [[nodiscard]] static std::int32_t cheaper_spot_region(const deadline_view& v) {
        const deadline_state& s = v.state();
        if (v.regions() < 2 || s.mode != deadline_action::spot || s.region < 0 || s.changeover_left_s > 1e-3) return -1;
        const auto home = static_cast<std::size_t>(s.region);
        double best_usd_per_h = v.spot_usd_per_h(home, v.now());
        std::int32_t best = -1;
        for (std::size_t r = 0; r < v.regions(); ++r)
            if (r != home && v.spot_now(r) && v.spot_usd_per_h(r, v.now()) < best_usd_per_h)
                best = static_cast<std::int32_t>(r), best_usd_per_h = v.spot_usd_per_h(r, v.now());
        return best;
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

    /// The first tick of the period in progress.
    [[nodiscard]] std::size_t period_start(const deadline_view& v) const noexcept { return v.now() + 1 - static_cast<std::size_t>(home_history(v).age()); }

    /// What rules 1 to 3 learn from: with several regions, the runs and outages of one region
    /// (once it has seen both); else, and before the first run, of spot anywhere.
    [[nodiscard]] const detail::deadline::availability_history& history_of(const deadline_view& v, std::int32_t region) const noexcept {
        if (v.regions() > 1 && region >= 0 && learnt(region_histories_[static_cast<std::size_t>(region)]))
            return region_histories_[static_cast<std::size_t>(region)];
        return history_;
    }
    [[nodiscard]] static bool learnt(const detail::deadline::availability_history& h) noexcept { return !h.runs().empty() && !h.outages().empty(); }
    /// Whether some history has seen a run and an outage end: spot anywhere, or one region's
    /// (with several regions spot may be up somewhere at every tick).
    [[nodiscard]] bool learnt_anything() const noexcept {
        return learnt(history_) || std::any_of(region_histories_.begin(), region_histories_.end(), [](const auto& h) { return learnt(h); });
    }
    /// The checkpoint's region's history: rule 1 waits for spot there.
    [[nodiscard]] const detail::deadline::availability_history& home_history(const deadline_view& v) const noexcept {
        return history_of(v, v.state().region);
    }

    void update_region_histories(const deadline_view& v) {
        if (region_histories_.size() != v.regions()) {
            region_histories_.clear();
            for (std::size_t r = 0; r < v.regions(); ++r) region_histories_.emplace_back(static_cast<std::int32_t>(r));
        }
        for (auto& h : region_histories_) h.update(v);
    }

    /// Rule 1, computed once per period (at its first tick, or at the first view of it).
    [[nodiscard]] const detail::deadline::thresholds& thresholds(const deadline_view& v) {
        if (thresholds_for_ != period_start(v) || thresholds_region_ != v.state().region || !thresholds_valid_) {
            thresholds_ = compute_thresholds(v, home_history(v), prices(v, -1));
            thresholds_for_ = period_start(v);
            thresholds_region_ = v.state().region;
            thresholds_valid_ = true;
            wait_on_ticks_ = -1.0;
        }
        return thresholds_;
    }

    /// Rule 1 past tau: the age up to which waiting on costs less, re-weighed when it is reached.
    [[nodiscard]] double wait_on_ticks(const deadline_view& v) {
        if (static_cast<double>(home_history(v).age()) > wait_on_ticks_)
            wait_on_ticks_ = compute_wait_on(v, home_history(v), prices(v, -1), thresholds_.wait_ticks);
        return wait_on_ticks_;
    }

    using history = detail::deadline::availability_history;
    [[nodiscard]] detail::deadline::thresholds compute_thresholds(const deadline_view& v, const history& h, detail::deadline::unit_prices u) const;
    [[nodiscard]] double compute_wait_on(const deadline_view& v, const history& h, detail::deadline::unit_prices u, double tau) const;
    [[nodiscard]] static detail::deadline::cycle_part run_part(const deadline_view& v, const history& h, double spot_usd_per_s);
    [[nodiscard]] bool switch_pays(const deadline_view& v, std::int32_t spot_region);
    [[nodiscard]] bool pending_switch_pays(const deadline_view& v, std::int32_t spot_region, double pending_s) const;
    [[nodiscard]] double budget_age(const deadline_view& v, const history& h) const;
    [[nodiscard]] bool move_pays(const deadline_view& v, std::int32_t spot_region);
    [[nodiscard]] bool price_move_pays(const deadline_view& v, std::int32_t region);
    [[nodiscard]] bool start_pays(detail::deadline::start_rule& rule, const deadline_view& v, std::int32_t region,
                                  const detail::deadline::availability_history& h, detail::deadline::start_charges charges,
                                  std::optional<detail::deadline::unit_prices> at = std::nullopt) const;

    adaptive_deadline_options options_;
    detail::deadline::availability_history history_;
    std::vector<detail::deadline::availability_history> region_histories_;
    detail::deadline::thresholds thresholds_{};
    std::size_t thresholds_for_ = 0;
    std::int32_t thresholds_region_ = -1;
    bool thresholds_valid_ = false;
    double wait_on_ticks_ = -1.0;
    detail::deadline::start_rule switch_{}, move_{}, price_move_{};
    double budget_age_ = 1.0;
    std::size_t budget_for_ = 0;
    std::int32_t budget_region_ = -1;
    bool budget_valid_ = false;
};

/// A run's part of a cycle: taken at once, a changeover, then work.
inline detail::deadline::cycle_part adaptive_deadline_policy::run_part(const deadline_view& v, const history& h, double spot_usd_per_s) {
    const double g = v.gap_s(), d = v.job().changeover_s;
    const auto n = static_cast<double>(h.runs().count());
    detail::deadline::cycle_part part;
    for (const auto& [length, count] : h.runs().bins()) {
        const double taken = static_cast<double>(length) * g, c = static_cast<double>(count) / n, x = std::min(taken, d);
        part.add(c, std::max(taken - d, 0.0), x, spot_usd_per_s * taken);
    }
    return part;
}

/// Rule 1 (top of this header): the wait threshold of least expected cost.
inline detail::deadline::thresholds adaptive_deadline_policy::compute_thresholds(const deadline_view& v, const history& h,
                                                                                   detail::deadline::unit_prices u) const {
    using namespace detail::deadline;
    if (!learnt(h)) return {std::numeric_limits<double>::infinity(), 0.0};
    const double g = v.gap_s(), d = v.job().changeover_s, k_usd_per_s = options_.overrun_weight * (u.on_demand_usd_per_s - u.spot_usd_per_s);
    const cycle_part r = run_part(v, h, u.spot_usd_per_s);
    const auto lengths = lengths_at_least(h.outages(), 1.0);
    detail::deadline::thresholds best{0.0, 1.0};
    double best_cost = std::numeric_limits<double>::infinity();
    for (const double tau : threshold_candidates(h.outages(), 24, 0.0)) {
        const auto [cycle, var] = renewal_cycle(r, outage_part(lengths, tau, 1.0, g, d, u.on_demand_usd_per_s));
        if (!(cycle.work_s > 0.0)) continue;
        const auto [cost, p_over] =
            rest_of_job_cost({}, cycle, options_.slack_variance_factor * var, v.state().work_left_s, spendable_slack_s(v), k_usd_per_s);
        if (cost < best_cost) best_cost = cost, best = {tau, p_over};
    }
    return best;
}

/// Rule 1 past tau (top of this header): the outage in progress, `age` ticks old, conditioned on
/// its age; the threshold T >= age - 1 of least expected cost (age - 1: on-demand now).
inline double adaptive_deadline_policy::compute_wait_on(const deadline_view& v, const history& h, detail::deadline::unit_prices u,
                                                       double tau) const {
    using namespace detail::deadline;
    const double g = v.gap_s(), d = v.job().changeover_s, age = static_cast<double>(h.age());
    const double k_usd_per_s = options_.overrun_weight * (u.on_demand_usd_per_s - u.spot_usd_per_s);
    const auto [cycle, var] = renewal_cycle(run_part(v, h, u.spot_usd_per_s),
                                            outage_part(lengths_at_least(h.outages(), 1.0), tau, 1.0, g, d, u.on_demand_usd_per_s));
    const auto now = lengths_at_least(h.outages(), age);
    double best_t = age - 1.0, best_cost = std::numeric_limits<double>::infinity();
    std::vector<double> candidates = threshold_candidates(h.outages(), 24, age - 1.0, age);
    if (h.outages().bins().back().first < h.age()) candidates.push_back(now.front().first);  // the Lindy length
    for (const double t : candidates) {
        const cycle_part first = outage_part(now, t, age, g, d, u.on_demand_usd_per_s);
        const double cost =
            rest_of_job_cost(first, cycle, options_.slack_variance_factor * var, v.state().work_left_s, spendable_slack_s(v), k_usd_per_s).first;
        if (cost < best_cost) best_cost = cost, best_t = t;
    }
    return best_t;
}

/// Rule 2 and the move rules for the spot run in progress of history `h` (its figures computed at
/// its first view, at the prices `at`, by default now's): start once the run has lasted a* ticks,
/// or once it has outlasted every observed run when a run as long again pays.
inline bool adaptive_deadline_policy::start_pays(detail::deadline::start_rule& rule, const deadline_view& v, std::int32_t region,
                                                 const detail::deadline::availability_history& h, detail::deadline::start_charges charges,
                                                 std::optional<detail::deadline::unit_prices> at) const {
    const std::size_t run_start = v.now() + 1 - static_cast<std::size_t>(h.age());
    const double g = v.gap_s(), d = v.job().changeover_s, age = static_cast<double>(h.age());
    const auto benefit = [&](double left_s) { return detail::deadline::start_benefit_usd(rule.prices, rule.p_overrun, d, charges, left_s); };
    if (!rule.valid || rule.run_start != run_start || rule.region != region) {
        rule.prices = at.value_or(prices(v, region));
        rule.p_overrun = compute_thresholds(v, home_history(v), rule.prices).p_overrun;
        rule.start_age = detail::deadline::best_start_age(h.runs(), g, benefit);
        rule.run_start = run_start, rule.region = region, rule.valid = true;
    }
    const auto& runs = h.runs().bins();
    if (!runs.empty() && age > static_cast<double>(runs.back().first) && benefit((detail::deadline::unseen_length_factor - 1.0) * age * g) > 0.0)
        return true;
    return age >= rule.start_age;
}

/// Rule 2 (top of this header), with the slack it needs.
inline bool adaptive_deadline_policy::switch_pays(const deadline_view& v, std::int32_t spot_region) {
    const deadline_state& s = v.state();
    if (s.mode == deadline_action::on_demand && s.changeover_left_s > 1e-3 && spot_region == s.region &&
        pending_switch_pays(v, spot_region, s.changeover_left_s))
        return true;
    if (spendable_slack_s(v) + options_.reserve_s < options_.switch_slack_changeovers * v.job().changeover_s) return false;
    const history& h = history_of(v, spot_region);
    if (!start_pays(switch_, v, spot_region, h, {})) return false;
    if (budget_for_ != switch_.run_start || budget_region_ != switch_.region || !budget_valid_) {
        budget_age_ = budget_age(v, h);
        budget_for_ = switch_.run_start;
        budget_region_ = switch_.region;
        budget_valid_ = true;
    }
    return static_cast<double>(h.age()) >= budget_age_;
}

/// Rule 2 while the on-demand run is still in its changeover (o = pending_s > 0; top of this
/// header): over the next x seconds staying does max(x - o, 0) of work and a switch max(x - d, 0),
/// so a switch saves (Q - p) x and loses the difference, made up on on-demand at Q plus lambda a
/// second; when the run ends the job restarts on-demand (probability P) with d to pay where staying
/// had max(o - x, 0) left. Whether the sum is positive on average over the runs at least as old as
/// this one (a run older than every observed one taken to last as long again).
inline bool adaptive_deadline_policy::pending_switch_pays(const deadline_view& v, std::int32_t spot_region, double pending_s) const {
    const history& h = history_of(v, spot_region);
    if (h.runs().empty()) return false;
    const detail::deadline::unit_prices u = prices(v, spot_region);
    const double p_over = compute_thresholds(v, home_history(v), u).p_overrun;
    const double q = u.on_demand_usd_per_s, p = u.spot_usd_per_s, d = v.job().changeover_s, g = v.gap_s();
    const double lambda = (q - p) * p_over, age = static_cast<double>(h.age()), o = pending_s;
    double total = 0.0;
    for (const auto& [l, c] : detail::deadline::lengths_at_least(h.runs(), age)) {
        const double x = (l - age + 1.0) * g;
        const double lost_s = std::max(x - o, 0.0) - std::max(x - d, 0.0), restart_s = d - std::max(o - x, 0.0);
        total += c * ((q - p) * x - (q + lambda) * (lost_s + p_over * restart_s));
    }
    return total > 0.0;
}

/// Rule 3 (top of this header): the least age at which the runs expected before the deadline
/// that reach it need no more switches than the slack affords (1 when nothing is learnt or d = 0).
inline double adaptive_deadline_policy::budget_age(const deadline_view& v, const history& h) const {
    const auto& runs = h.runs().bins();
    const auto& outages = h.outages().bins();
    const double d = v.job().changeover_s;
    if (runs.empty() || outages.empty() || !(d > 0.0)) return 1.0;
    const double runs_left = (v.job().deadline_s - v.elapsed_s()) / ((h.runs().mean() + h.outages().mean()) * v.gap_s());
    const double switches = std::max(spendable_slack_s(v) + options_.reserve_s, 0.0) / (2.0 * d);
    const auto n = static_cast<double>(h.runs().count());
    double at_least = n, age = 1.0;  // runs at least `age` long
    for (const auto& [length, count] : runs) {
        if (runs_left * at_least / n <= switches) return age;
        at_least -= static_cast<double>(count);
        age = static_cast<double>(length) + 1.0;
    }
    return age;  // one past the longest run: none of the runs observed reaches it
}

/// A move to `spot_region`, away from the checkpoint (top of this header): rule 2 over that
/// region's runs, the egress there and back taken from the benefit.
inline bool adaptive_deadline_policy::move_pays(const deadline_view& v, std::int32_t spot_region) {
    const std::int32_t home = v.state().region;
    if (home < 0 || spot_region == home) return true;
    return start_pays(move_, v, spot_region, region_histories_[static_cast<std::size_t>(spot_region)], {2.0 * v.job().egress_usd, true});
}

/// Rule 4 (top of this header): a move from spot at home to `region`'s cheaper spot, by rule 2's
/// optimal stopping over that region's runs with B4 at both regions' recent spot prices, once the
/// slack holds the move and the way back.
inline bool adaptive_deadline_policy::price_move_pays(const deadline_view& v, std::int32_t region) {
    const history& h = region_histories_[static_cast<std::size_t>(region)];
    if (!learnt(h) || spendable_slack_s(v) + options_.reserve_s < 2.0 * v.job().changeover_s) return false;
    const double per_s = v.job().instances / 3600.0;
    const double home_usd_per_s = detail::deadline::recent_spot_usd_per_h(v, static_cast<std::size_t>(v.state().region)) * per_s;
    const detail::deadline::unit_prices there{detail::deadline::recent_spot_usd_per_h(v, static_cast<std::size_t>(region)) * per_s,
                                              prices(v, region).on_demand_usd_per_s};
    return start_pays(price_move_, v, region, h, {.extra_usd = 2.0 * v.job().egress_usd, .from_spot_usd_per_s = home_usd_per_s}, there);
}

static_assert(deadline_policy<adaptive_deadline_policy>);

}  // namespace dnnplan
