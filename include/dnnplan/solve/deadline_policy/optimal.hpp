#pragma once
// The hindsight optimum of the tick model: the least cost of finishing the job by its deadline over
// every sequence of choices, knowing the whole trace (what no runtime policy can know; the measure
// a policy's cost is stated against, as in Can't Be Late, Wu et al., NSDI '24, section 5).
//
// A dynamic program forward over the ticks. The state at a tick is what runs (wait, spot or
// on-demand), in which region (or, waiting, where the checkpoint is), how many ticks the run has
// billed (its age, up to ceil(d / g): o = max(d - age g, 0) is the changeover still pending), and
// the work done P. For each of the first three, the DP keeps the Pareto frontier of (work done,
// cost so far): a state with more work and less cost dominates (whatever happens next can happen to
// both). Exact: no state is merged or rounded. Pruned only by what cannot change the optimum:
//   - a state that cannot finish by R even running on from now without a break (the fastest any
//     continuation can be: a relaxation);
//   - a state whose cost so far plus a lower bound on the rest (each working tick costs at least the
//     cheapest price it can have: the cheapest spot price ahead for as many ticks as spot is
//     available somewhere ahead, the cheapest on-demand price for the others) is above the best
//     cost found.
// Each frontier is kept sorted by work done, so that a tick's frontiers are merged, not sorted.

#include <dnnplan/core/error.hpp>
#include <dnnplan/runtime/policies.hpp>
#include <dnnplan/runtime/deadline_problem.hpp>
#include <dnnplan/runtime/simulate.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace dnnplan {

/// The optimum of one window: its schedule (a decision per tick until the work is done) and what
/// that schedule costs, replayed through the simulator.
struct deadline_optimum {
    std::vector<deadline_decision> schedule{};
    deadline_outcome outcome{};
    std::int64_t states = 0;  ///< frontier entries expanded
};

namespace detail::deadline {

/// One entry of a frontier: work done, cost so far, and how it was reached (the entry of the tick
/// before it came from, and the decision taken there).
struct dp_entry {
    double work_s = 0.0;
    double cost_usd = 0.0;
    std::uint32_t parent = 0;
    std::int16_t region = 0;
    deadline_action action = deadline_action::wait;
};

/// A key of the DP: what runs, where, and the run's age. Numbered densely: 0 is "waiting, no run
/// yet"; then per region r: waiting with the checkpoint in r, spot ages 1..A, on-demand ages 1..A.
struct dp_keys {
    std::size_t regions = 1;
    std::int32_t ages = 1;  ///< A = max(1, ceil(d / g))

    [[nodiscard]] std::size_t count() const noexcept { return 1 + regions * (1 + 2 * static_cast<std::size_t>(ages)); }
    [[nodiscard]] std::size_t wait(std::int32_t region) const noexcept {
        return region < 0 ? 0 : 1 + static_cast<std::size_t>(region) * (1 + 2 * static_cast<std::size_t>(ages));
    }
    [[nodiscard]] std::size_t run(deadline_action mode, std::int32_t region, std::int32_t age) const noexcept {
        const std::size_t base = wait(region) + 1 + (mode == deadline_action::on_demand ? static_cast<std::size_t>(ages) : 0);
        return base + static_cast<std::size_t>(std::min(age, ages) - 1);
    }
    struct decoded {
        deadline_action mode;
        std::int32_t region;
        std::int32_t age;
    };
    [[nodiscard]] decoded decode(std::size_t key) const noexcept {
        if (key == 0) return {deadline_action::wait, -1, 0};
        const std::size_t per = 1 + 2 * static_cast<std::size_t>(ages);
        const auto region = static_cast<std::int32_t>((key - 1) / per);
        const std::size_t at = (key - 1) % per;
        if (at == 0) return {deadline_action::wait, region, 0};
        const bool on_demand = at > static_cast<std::size_t>(ages);
        const auto age = static_cast<std::int32_t>(on_demand ? at - static_cast<std::size_t>(ages) : at);
        return {on_demand ? deadline_action::on_demand : deadline_action::spot, region, age};
    }
};

/// The DP of one window (top of this header).
class hindsight_dp {
public:
    /// `bounds` false: no pruning by the lower bound, nor by dominance across keys (the same answer,
    /// slower: what tests and the benchmark compare the pruned DP with).
    hindsight_dp(const deadline_market& market, const deadline_job& job, std::size_t start_tick, bool bounds = true);
    [[nodiscard]] std::optional<deadline_optimum> solve();

private:
    struct layer {
        std::vector<dp_entry> entries;
        std::vector<std::uint32_t> first, last;  ///< entries of key k: [first[k], last[k])
    };
    /// (work done, cost) of the entries kept so far by keys that dominate the next ones: more work
    /// first, each cheaper than the one before (a Pareto frontier).
    using frontier = std::vector<std::pair<double, double>>;
    struct stream {  ///< entries of one key of the layer, shifted by one decision
        std::uint32_t first = 0, last = 0;
        double work_s = 0.0;  ///< the decision's progress (added, capped at C)
        double cost_usd = 0.0;
        deadline_action action = deadline_action::wait;
        std::int32_t region = 0;
    };

    [[nodiscard]] double progress_of(std::int32_t age) const noexcept;
    struct lower_bound;
    [[nodiscard]] lower_bound lower_bound_at(std::int64_t tick) const noexcept;
    void precompute_bounds();
    void seed_upper_bound();
    void record_finished(std::int64_t tick);
    void plan_streams(std::int64_t tick);
    void add_runs(std::size_t source, deadline_action mode, std::int32_t region, std::int32_t age, std::int64_t tick);
    void build_layer(std::int64_t tick);
    void build_region(std::int32_t region, std::int64_t tick, layer& next);
    void merge_key(std::size_t key, std::int64_t tick, layer& next, const frontier* a, const frontier* b);
    void absorb(frontier& into, const layer& next, std::size_t key);
    [[nodiscard]] deadline_optimum trace_back() const;

    const deadline_market& market_;
    const deadline_job& job_;
    std::size_t start_;
    double g_ = 0.0;
    std::int64_t last_tick_ = 0;  ///< J = floor(R / g): the last tick the job can be done at
    dp_keys keys_{};
    std::vector<double> progress_;           ///< [age]: the work a tick of a run of that age does
    std::vector<std::int64_t> spot_ticks_;   ///< [i]: ticks in [i, J) with spot somewhere
    std::vector<double> cheapest_spot_;      ///< [i]: the cheapest spot price in [i, J) where available
    double cheapest_on_demand_ = 0.0;
    std::vector<layer> layers_;
    std::vector<std::vector<stream>> streams_;  ///< per key of the next layer
    std::array<frontier, 2> unions_{};          ///< build_region's on-demand and spot frontiers
    frontier scratch_;                          ///< absorb's merge
    struct head {
        double work_s, cost_usd;
    };
    std::vector<head> heads_;  ///< merge_key's streams' heads
    double best_usd_ = std::numeric_limits<double>::infinity();
    std::optional<std::pair<std::int64_t, std::uint32_t>> best_at_;  ///< (tick, entry) of the cheapest finish
    std::int64_t expanded_ = 0;
    bool bounds_ = true;
};

inline hindsight_dp::hindsight_dp(const deadline_market& market, const deadline_job& job, std::size_t start_tick, bool bounds)
    : market_(market), job_(job), start_(start_tick), g_(market.gap_s()), bounds_(bounds) {
    last_tick_ = static_cast<std::int64_t>(window_ticks(market, job, start_tick, "start_tick"));
    // ceil(d / g) ages; hindsight_optimum calls this only with d <= R, so they fit the window.
    keys_ = {.regions = market.regions.size(),
             .ages = std::max<std::int32_t>(1, static_cast<std::int32_t>(std::ceil(job.changeover_s / g_)))};
    for (std::int32_t age = 0; age <= keys_.ages; ++age)
        progress_.push_back(std::max(g_ - std::max(job.changeover_s - age * g_, 0.0), 0.0));
    precompute_bounds();
}

inline double hindsight_dp::progress_of(std::int32_t age) const noexcept {
    return progress_[static_cast<std::size_t>(std::min(age, keys_.ages))];
}

/// Suffix counts of the ticks with spot somewhere and the cheapest spot price among them, and the
/// cheapest on-demand price: what the lower bound on the rest of a state's cost reads.
inline void hindsight_dp::precompute_bounds() {
    const auto ticks = static_cast<std::size_t>(last_tick_);
    spot_ticks_.assign(ticks + 1, 0);
    cheapest_spot_.assign(ticks + 1, std::numeric_limits<double>::infinity());
    cheapest_on_demand_ = std::numeric_limits<double>::infinity();
    for (const auto& r : market_.regions) cheapest_on_demand_ = std::min(cheapest_on_demand_, *r.on_demand_usd_per_h);
    for (std::size_t i = ticks; i-- > 0;) {
        double cheapest = std::numeric_limits<double>::infinity();
        for (const auto& r : market_.regions)
            if (r.available[start_ + i] >= job_.instances) cheapest = std::min(cheapest, r.spot_usd_per_h[start_ + i]);
        spot_ticks_[i] = spot_ticks_[i + 1] + (std::isfinite(cheapest) ? 1 : 0);
        cheapest_spot_[i] = std::min(cheapest_spot_[i + 1], cheapest);
    }
}

/// Each working tick does at most g of work and costs at least the cheapest price it can have (in
/// fractions of a tick: still a bound, and no rounding on the hot path): the cheapest spot price
/// ahead for as many ticks as spot is available somewhere ahead, the cheapest on-demand price for
/// the others. Its constants at one tick, so that a bound is a few multiplications.
struct hindsight_dp::lower_bound {
    double work_s = 0.0, per_work_s = 0.0;  ///< the job's work; 1 / g
    double spot_ticks = 0.0;                ///< ticks with spot somewhere ahead
    double spot_usd = 0.0, on_demand_usd = 0.0;  ///< a tick at the cheapest price of each

    [[nodiscard]] double usd(double work_done_s) const noexcept {
        const double needed = std::max(work_s - deadline_work_tolerance_s - work_done_s, 0.0) * per_work_s;
        return needed <= spot_ticks ? needed * spot_usd : spot_ticks * spot_usd + (needed - spot_ticks) * on_demand_usd;
    }
};

inline hindsight_dp::lower_bound hindsight_dp::lower_bound_at(std::int64_t tick) const noexcept {
    const auto i = static_cast<std::size_t>(std::min(tick, last_tick_));
    const double per_tick = g_ / 3600.0 * job_.instances;
    return {.work_s = job_.work_s, .per_work_s = 1.0 / g_, .spot_ticks = static_cast<double>(spot_ticks_[i]),
            .spot_usd = spot_ticks_[i] > 0 ? cheapest_spot_[i] * per_tick : 0.0, .on_demand_usd = cheapest_on_demand_ * per_tick};
}

/// The best cost is at most that of on-demand throughout, greedy and Uniform Progress (each in the
/// region of the cheapest on-demand) when they meet the deadline: a bound for pruning from the
/// start (the DP's own finishes lower it as they come; the margin lets the DP find the policy's
/// own schedule when it is the optimum).
inline void hindsight_dp::seed_upper_bound() {
    std::int32_t region = 0;
    for (std::size_t r = 0; r < market_.regions.size(); ++r)
        if (*market_.regions[r].on_demand_usd_per_h < *market_.regions[static_cast<std::size_t>(region)].on_demand_usd_per_h)
            region = static_cast<std::int32_t>(r);
    const auto consider = [&](auto policy) {
        const deadline_outcome o = simulate_window(market_, job_, start_, policy);
        if (o.met) best_usd_ = std::min(best_usd_, o.cost_usd * (1.0 + 1e-9));
    };
    consider(on_demand_policy{.region = region});
    consider(greedy_policy{.region = region});
    consider(uniform_progress_policy{.region = region});
}

/// The entries of the layer of `tick` that are done: the cheapest one that meets the deadline.
inline void hindsight_dp::record_finished(std::int64_t tick) {
    if (static_cast<double>(tick) * g_ > job_.deadline_s) return;
    const layer& l = layers_[static_cast<std::size_t>(tick)];
    for (std::uint32_t e = 0; e < l.entries.size(); ++e) {
        const dp_entry& x = l.entries[e];
        if (job_.work_s - x.work_s <= deadline_work_tolerance_s && x.cost_usd < best_usd_) {
            best_usd_ = x.cost_usd;
            best_at_ = {tick, e};
        }
    }
}

/// The decisions of every key of the layer of `tick`, as streams into the keys of the next layer
/// (step 3 first: a spot run whose spot is gone at this tick is waiting).
inline void hindsight_dp::plan_streams(std::int64_t tick) {
    const layer& l = layers_[static_cast<std::size_t>(tick)];
    const std::size_t k_now = start_ + static_cast<std::size_t>(tick);
    for (auto& s : streams_) s.clear();
    for (std::size_t key = 0; key < keys_.count(); ++key) {
        if (l.first[key] == l.last[key]) continue;
        auto [mode, region, age] = keys_.decode(key);
        if (mode == deadline_action::spot && market_.regions[static_cast<std::size_t>(region)].available[k_now] < job_.instances)
            mode = deadline_action::wait;
        streams_[keys_.wait(region)].push_back({l.first[key], l.last[key], 0.0, 0.0, deadline_action::wait, region});
        add_runs(key, mode, region, age, tick);
    }
}

/// Spot (where available) and on-demand in every region from `source` (mode, checkpoint region and
/// age after preemption): the same run continued, or a new run with its changeover and egress.
inline void hindsight_dp::add_runs(std::size_t source, deadline_action mode, std::int32_t region, std::int32_t age,
                                   std::int64_t tick) {
    const layer& l = layers_[static_cast<std::size_t>(tick)];
    const std::size_t k_now = start_ + static_cast<std::size_t>(tick);
    const double per_h = g_ / 3600.0 * job_.instances;
    for (std::size_t q = 0; q < market_.regions.size(); ++q) {
        const spot_market_trace& t = market_.regions[q];
        const auto rq = static_cast<std::int32_t>(q);
        for (const deadline_action run : {deadline_action::spot, deadline_action::on_demand}) {
            if (run == deadline_action::spot && t.available[k_now] < job_.instances) continue;
            const bool same = mode == run && region == rq;
            const std::int32_t used_age = same ? age : 0;
            const double egress = !same && region >= 0 && region != rq ? job_.egress_usd : 0.0;
            const double usd_per_h = run == deadline_action::spot ? t.spot_usd_per_h[k_now] : *t.on_demand_usd_per_h;
            streams_[keys_.run(run, rq, used_age + 1)].push_back(
                {l.first[source], l.last[source], progress_of(used_age), usd_per_h * per_h + egress, run, rq});
        }
    }
}

/// The next layer: every key's streams merged into its frontier.
inline void hindsight_dp::build_layer(std::int64_t tick) {
    plan_streams(tick);
    layer next;
    next.entries.reserve(layers_.back().entries.size() * 2 + 16);
    next.first.assign(keys_.count(), 0);
    next.last.assign(keys_.count(), 0);
    merge_key(0, tick, next, nullptr, nullptr);
    for (std::size_t r = 0; r < market_.regions.size(); ++r) build_region(static_cast<std::int32_t>(r), tick, next);
    layers_.push_back(std::move(next));
}

/// A region's keys, in the order of dominance: a run of an age offers all a younger run of the same
/// kind offers (the same choices, less changeover pending), and any run in the region all that
/// waiting with the checkpoint there offers (waiting, or a new run, are open to it too). An entry
/// with no more work and no less cost than one of a key that dominates its own is dropped.
inline void hindsight_dp::build_region(std::int32_t region, std::int64_t tick, layer& next) {
    frontier& on_demand = unions_[0];
    frontier& spot = unions_[1];
    on_demand.clear();
    spot.clear();
    for (std::int32_t age = keys_.ages; age >= 1; --age) {
        const std::size_t key = keys_.run(deadline_action::on_demand, region, age);
        merge_key(key, tick, next, &on_demand, nullptr);
        absorb(on_demand, next, key);
    }
    for (std::int32_t age = keys_.ages; age >= 1; --age) {
        const std::size_t key = keys_.run(deadline_action::spot, region, age);
        merge_key(key, tick, next, &spot, nullptr);
        absorb(spot, next, key);
    }
    merge_key(keys_.wait(region), tick, next, &on_demand, &spot);
}

/// `into` with the entries `key` just kept in `next`, as one frontier.
inline void hindsight_dp::absorb(frontier& into, const layer& next, std::size_t key) {
    frontier& merged = scratch_;  // reused: no allocation per key and tick
    merged.clear();
    std::size_t a = 0;
    std::uint32_t b = next.first[key];
    double cheapest = std::numeric_limits<double>::infinity();
    while (a < into.size() || b < next.last[key]) {
        const bool take_a = b == next.last[key] ||
                            (a < into.size() && (into[a].first > next.entries[b].work_s ||
                                                 (into[a].first == next.entries[b].work_s && into[a].second <= next.entries[b].cost_usd)));
        const std::pair<double, double> x = take_a ? into[a++] : std::pair{next.entries[b].work_s, next.entries[b].cost_usd};
        if (!take_a) ++b;
        if (x.second < cheapest) {
            merged.push_back(x);
            cheapest = x.second;
        }
    }
    into.swap(merged);
}

/// Merges the streams into `key`'s frontier at tick + 1, sorted by work done (more first), keeping
/// an entry only when it is cheaper than every entry with more work, it can still finish by R, and
/// its cost and the bound on the rest stay within the best cost found.
inline void hindsight_dp::merge_key(std::size_t key, std::int64_t tick, layer& next, const frontier* a, const frontier* b) {
    const layer& l = layers_[static_cast<std::size_t>(tick)];
    std::vector<stream>& in = streams_[key];
    const auto [mode, region, age] = keys_.decode(key);
    const std::int64_t ticks_left = last_tick_ - (tick + 1);
    const double pending = mode == deadline_action::wait ? job_.changeover_s : std::max(job_.changeover_s - age * g_, 0.0);
    const double reachable = std::max(static_cast<double>(ticks_left) * g_ - pending, 0.0);
    const double least_work = job_.work_s - deadline_work_tolerance_s - reachable;
    const auto work_of = [&](const stream& s, std::uint32_t e) { return std::min(job_.work_s, l.entries[e].work_s + s.work_s); };
    double cheapest = std::numeric_limits<double>::infinity();
    const lower_bound rest = lower_bound_at(tick + 1);
    next.first[key] = static_cast<std::uint32_t>(next.entries.size());
    // The cheapest entry of the dominating keys with at least the work of the entry at hand (their
    // frontiers are sorted by work, more first).
    std::size_t at_a = 0, at_b = 0;
    double prefix_cost = std::numeric_limits<double>::infinity();
    const auto dominated = [&](double work, double cost) {
        for (auto [f, i] : {std::pair{a, &at_a}, std::pair{b, &at_b}}) {
            if (f == nullptr) continue;
            for (; *i < f->size() && (*f)[*i].first >= work; ++*i) prefix_cost = std::min(prefix_cost, (*f)[*i].second);
        }
        return prefix_cost <= cost;
    };
    // A k-way merge by work done (ties: the cheaper first) over the streams' heads; k is small (the
    // keys of a region, times the regions for a new run). An exhausted stream's head is -1.
    heads_.resize(in.size());
    for (std::size_t j = 0; j < in.size(); ++j) {
        stream& st = in[j];
        heads_[j] = st.first < st.last ? head{work_of(st, st.first), l.entries[st.first].cost_usd + st.cost_usd} : head{-1.0, 0.0};
    }
    while (true) {
        std::size_t pick = 0;
        for (std::size_t j = 1; j < in.size(); ++j)
            if (heads_[j].work_s > heads_[pick].work_s ||
                (heads_[j].work_s == heads_[pick].work_s && heads_[j].cost_usd < heads_[pick].cost_usd))
                pick = j;
        if (in.empty() || heads_[pick].work_s < 0.0 || heads_[pick].work_s < least_work) break;
        const double pick_work = heads_[pick].work_s, pick_cost = heads_[pick].cost_usd;
        stream& st = in[pick];
        ++expanded_;
        if (!(pick_cost < cheapest)) {
            // Dominated: more work for less was kept already, and so is the stream's run of entries
            // down to the first cheaper than that (a stream's costs fall as its work does): skip it.
            const auto cheaper = std::partition_point(l.entries.begin() + st.first, l.entries.begin() + st.last,
                                                      [&](const dp_entry& e) { return !(e.cost_usd + st.cost_usd < cheapest); });
            st.first = static_cast<std::uint32_t>(cheaper - l.entries.begin());
            heads_[pick] = st.first < st.last ? head{work_of(st, st.first), l.entries[st.first].cost_usd + st.cost_usd} : head{-1.0, 0.0};
            continue;
        }
        const std::uint32_t parent = st.first++;
        heads_[pick] = st.first < st.last ? head{work_of(st, st.first), l.entries[st.first].cost_usd + st.cost_usd} : head{-1.0, 0.0};
        cheapest = pick_cost;
        if (bounds_ && pick_cost + rest.usd(pick_work) > best_usd_) continue;
        if (bounds_ && dominated(pick_work, pick_cost)) continue;
        next.entries.push_back({pick_work, pick_cost, parent, static_cast<std::int16_t>(st.region), st.action});
    }
    next.last[key] = static_cast<std::uint32_t>(next.entries.size());
}

/// The schedule of the cheapest finish: the decisions back from it to the start.
inline deadline_optimum hindsight_dp::trace_back() const {
    deadline_optimum out;
    auto [tick, e] = *best_at_;
    out.schedule.resize(static_cast<std::size_t>(tick));
    for (std::int64_t i = tick; i > 0; --i) {
        const dp_entry& x = layers_[static_cast<std::size_t>(i)].entries[e];
        out.schedule[static_cast<std::size_t>(i - 1)] = {x.action, x.region, "the hindsight optimum"};
        e = x.parent;
    }
    out.states = expanded_;
    return out;
}

/// Replays a schedule: the optimum's decisions, tick by tick.
struct schedule_policy {
    const std::vector<deadline_decision>* schedule = nullptr;
    [[nodiscard]] deadline_decision decide(const deadline_view& v) const {
        const auto i = static_cast<std::size_t>(v.tick());
        return i < schedule->size() ? (*schedule)[i] : deadline_decision{deadline_action::wait, 0, "done"};
    }
};

inline std::optional<deadline_optimum> hindsight_dp::solve() {
    if (bounds_) seed_upper_bound();
    streams_.assign(keys_.count(), {});
    layers_.reserve(static_cast<std::size_t>(last_tick_) + 1);
    layer first;
    first.entries.push_back({});
    first.first.assign(keys_.count(), 0);
    first.last.assign(keys_.count(), 0);
    first.last[0] = 1;
    layers_.push_back(std::move(first));
    for (std::int64_t tick = 0;; ++tick) {
        record_finished(tick);
        if (tick + 1 > last_tick_) break;
        build_layer(tick);
    }
    if (!best_at_) return std::nullopt;
    deadline_optimum out = trace_back();
    schedule_policy replay{&out.schedule};
    out.outcome = simulate_window(market_, job_, start_, replay);
    if (!out.outcome.met || std::abs(out.outcome.cost_usd - best_usd_) > 1e-9 * std::max(1.0, best_usd_))
        throw error("hindsight optimum: the schedule replays at " + detail::format_number(out.outcome.cost_usd) +
                    " USD, the DP found " + detail::format_number(best_usd_) + " USD");
    return out;
}

}  // namespace detail::deadline

/// The hindsight optimum of `job` started at trace tick `start_tick` of `market`: infeasible (none)
/// when on-demand from the start cannot finish by the deadline. The deadline must lie within the
/// trace (start_tick + floor(R / g) < the trace's ticks). Throws invalid_input for a bad job,
/// market or start tick. `bounds` false turns the DP's pruning off (the same answer, slower).
[[nodiscard]] inline std::optional<deadline_optimum> hindsight_optimum(const deadline_market& market, const deadline_job& job,
                                                                       std::size_t start_tick, bool bounds = true) {
    market.validate("market");
    job.validate("job");
    (void)window_ticks(market, job, start_tick, "start_tick");
    // No run can finish in time (the first run pays d; done within 1e-3 s of work, step 2).
    if (job.changeover_s + job.work_s - deadline_work_tolerance_s > job.deadline_s) return std::nullopt;
    detail::deadline::hindsight_dp dp(market, job, start_tick, bounds);
    return dp.solve();
}

}  // namespace dnnplan
