#pragma once
// PipeDream's objective on graphs too wide for its states (docs/design/pipedream-wide-graphs.md,
// the first slice of section 3): one level of a single-source graph, answered on the implicit
// ideal lattice of its kept layers with no state enumerated. An upper bound is a real partition
// priced exactly as PipeDream's recurrence prices it (UB1: greedy lattice packing at a threshold,
// bisected; partition/pipedream_lattice_pack.hpp); the lower bound is the largest of LB0, LB1
// (machine counting) and the forbidden-window bound
// (partition/pipedream_lattice_bounds.hpp). The status is optimal when they meet within 1e-9
// (relative), feasible with the bound otherwise (section 3.3).

#include <dnnplan/core/detail/format.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/partition/ideal_lattice.hpp>
#include <dnnplan/partition/pipedream_lattice_bounds.hpp>
#include <dnnplan/partition/pipedream_lattice_local.hpp>
#include <dnnplan/partition/pipedream_lattice_memory.hpp>
#include <dnnplan/partition/pipedream_lattice_pack.hpp>
#include <dnnplan/partition/pipedream_lattice_sync.hpp>
#include <dnnplan/partition/pipedream_types.hpp>
#include <dnnplan/workload/layer_graph.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace dnnplan::detail {

/// The wide path's optimality tolerance (relative), as the chain solver's chain_tolerance.
inline constexpr double wide_relative_gap = 1e-9;

/// The fill search's retries for a stage that leaves work (section 3.2: "greedy largest-first
/// followed by a bounded DFS"); the last stage needs none (everything fits or not).
inline constexpr std::int64_t wide_fill_retries = 1024;

/// A state of UB1's DP over machines: the cut reached (compute_s < 0: none) and the stage that
/// reached it, from the state of `from` machines on `replicas`.
struct pack_step {
    double compute_s = -1.0;
    layer_bits cut{};
    std::size_t from = 0;
    std::int32_t replicas = 0;
};

/// UB1 (section 3.2): at a threshold T, stages are filled one after the other from the empty
/// cut, each on the replica count whose fill does the most compute per machine; the last one
/// takes what is left on the fewest machines that hold it. Then, unless fewer machines may be
/// used, the plan is padded to exactly M machines. T is bisected between the lower bound and
/// the best plan's price; each plan found is priced exactly and the best kept.
class lattice_packer {
public:
    /// `first_stages`: first stages found apart (the first stages of most compute within the
    /// memory caps), which each packing starts from too.
    lattice_packer(const ideal_lattice& lattice, const wide_setting& setting, const search_budget& budget,
                   std::chrono::steady_clock::time_point start, const std::vector<first_stage>& first_stages = {})
        : lattice_(lattice), s_(setting), budget_(budget), start_(start), frontier_(lattice) {
        const layer_figures& f = lattice.figures();
        for (const first_stage& stage : first_stages) {
            seeded& seed = seeds_.emplace_back(seeded{.stage = stage});
            for_each_layer(stage.cut, [&](std::size_t l) {
                seed.compute_s += f.compute[l], seed.parameter_bytes += f.parameter[l], seed.activation_bytes += f.activation[l];
            });
        }
    }

    /// Bisects T in [lower, the best price]; false when a budget stopped it (limit() says which).
    bool run(double lower) {
        const double total = lattice_.total_compute_s();
        double grown = total * (1.0 + 1e-9);
        attempt(grown);  // one stage holding everything (then padded)
        // With a memory limit, or an all-reduce slower than the compute, a plan may need more time
        // than all of the compute (without a straight pipeline one stage on all M replicas always
        // fits: nothing is kept for later stages); T doubles until one is found.
        for (int i = 0; i < 64 && !best_ && !stopped(); ++i) attempt(grown *= 2.0);
        double lo = std::max(lower, total / static_cast<double>(s_.machines) * wide_bound_rounding);
        double hi = best_time_;
        for (int i = 0; i < 64 && std::isfinite(hi) && hi > lo * (1.0 + wide_relative_gap); ++i) {
            if (stopped()) return false;
            const double t = std::sqrt(lo * hi);
            if (!(t > lo && t < hi)) break;
            (attempt(t) ? hi : lo) = t;
            hi = std::min(hi, best_time_);
        }
        return !stopped();
    }

    [[nodiscard]] const std::optional<lattice_plan>& best() const noexcept { return best_; }
    /// Every plan priced, with its price.
    [[nodiscard]] const std::vector<std::pair<double, lattice_plan>>& plans() const noexcept { return plans_; }
    [[nodiscard]] double best_time_s() const noexcept { return best_time_; }
    [[nodiscard]] std::int64_t threshold_tests() const noexcept { return tests_; }
    [[nodiscard]] std::int64_t fills() const noexcept { return fills_; }
    [[nodiscard]] std::int64_t plans_priced() const noexcept { return priced_; }
    [[nodiscard]] search_limit limit() const noexcept { return limit_; }

private:
    // The plan packed at t, padded and priced; true when one was found.
    bool attempt(double t) {
        ++tests_;
        std::optional<lattice_plan> plan = pack(t);
        if (!plan) return false;
        if (s_.fewer || plan->machines() == s_.machines) keep(*plan);
        if (plan->machines() < s_.machines) {
            if (!(s_.straight ? split_to_machines(*plan) : pad_replicas(*plan))) return s_.fewer;
            keep(*plan);
        }
        return true;
    }

    void keep(const lattice_plan& plan) {
        ++priced_;
        const double time = lattice_pricer(lattice_, s_, plan).time_s(plan.replicas);
        plans_.emplace_back(time, plan);
        if (time < best_time_) {
            best_time_ = time;
            best_ = plan;
        }
    }

    [[nodiscard]] bool stopped() {
        if (limit_ != search_limit::none) return true;
        if (budget_.max_nodes > 0 && fills_ >= budget_.max_nodes) limit_ = search_limit::nodes;
        if (budget_.max_time_s > 0.0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() > budget_.max_time_s)
            limit_ = search_limit::time;
        return limit_ != search_limit::none;
    }

    // One more fill, unless the node budget is spent (then limit nodes).
    [[nodiscard]] bool count_fill() {
        if (budget_.max_nodes > 0 && fills_ >= budget_.max_nodes) {
            limit_ = search_limit::nodes;
            return false;
        }
        ++fills_;
        return true;
    }

    // A fill (none past the node budget: an empty one).
    [[nodiscard]] stage_fill fill(std::int32_t r, double t, std::int32_t used, std::int64_t retries = 0) {
        if (!count_fill()) return {};
        return frontier_.fill(s_, {.replicas = r, .time_s = t, .after = s_.machines - used - r}, nullptr, retries);
    }

    // The stages at threshold t; none when they need more than M machines. A dynamic program
    // over the machines used, keeping for each count u the cut with the most compute done that
    // u machines reach (more compute done is taken as better: ideals are not totally ordered,
    // so this is a heuristic, as the greedy fill is): from each, one stage on each candidate
    // replica count; the first cut from which one stage finishes on the machines left ends it.
    // A count that does no more than fewer machines did is skipped, but under the memory check:
    // there the stages after more machines have fewer machines after them, so fewer copies to
    // hold (alexnet -n 32 -s 6.8e8: its fully connected stages, 151 and 84 MB of parameters, fit
    // only with at most 3 machines after them; skipping, the packing found only the plan of one
    // stage, 6.7 times PipeDream's time).
    [[nodiscard]] std::optional<lattice_plan> pack(double t) {
        const auto m_count = static_cast<std::size_t>(s_.machines);
        std::vector<pack_step> reach(m_count + 1);  // by machines used; a step back to its parent
        reach[0] = {.compute_s = 0.0, .cut = lattice_.empty_ideal()};
        for (const seeded& seed : seeds_)  // on the fewest replicas, from its own, that hold it within t
            for (std::int32_t r = seed.stage.replicas; r <= (s_.straight ? 1 : s_.machines - 1); ++r)
                if (lattice_frontier::fits(s_, {.replicas = r, .time_s = t, .after = s_.machines - r}, seed.compute_s, seed.parameter_bytes,
                                           seed.activation_bytes)) {
                    pack_step& to = reach[static_cast<std::size_t>(r)];
                    if (to.compute_s < seed.compute_s) to = {.compute_s = seed.compute_s, .cut = seed.stage.cut, .from = 0, .replicas = r};
                    break;
                }
        std::optional<pack_step> done;  // the last stage: from `from` machines on `replicas`
        double farthest = -1.0;         // the most compute done on fewer machines than u
        const auto finish = [&](std::size_t u, std::int32_t r) {
            if (!done || u + static_cast<std::size_t>(r) < done->from + static_cast<std::size_t>(done->replicas))
                done = pack_step{.compute_s = lattice_.total_compute_s(), .cut = lattice_.full_ideal(), .from = u, .replicas = r};
        };
        for (std::size_t u = 0; u < m_count; ++u) {
            // Not reached, or dominated: fewer machines already did as much (the DP's order of merit).
            if (reach[u].compute_s < 0.0 || (reach[u].compute_s <= farthest && !s_.memory_bytes) || stopped()) continue;
            farthest = reach[u].compute_s;
            const auto used = static_cast<std::int32_t>(u);
            frontier_.reset(reach[u].cut);
            if (const auto last = last_stage(t, used)) {
                finish(u, *last);
                continue;
            }
            if (done && done->from + static_cast<std::size_t>(done->replicas) <= u + 1) continue;  // none ends on fewer
            for (const std::int32_t r : replica_candidates(t, used)) {
                // The search's retries where a layer's granularity is felt: a stage on many
                // replicas loses a small share to its last gap.
                const stage_fill f = fill(r, t, used, r <= 2 ? wide_fill_retries : 0);
                if (f.added.empty()) continue;
                if (f.added.size() == frontier_.remaining()) {  // a last stage after all
                    finish(u, r);
                    continue;
                }
                pack_step& to = reach[u + static_cast<std::size_t>(r)];
                const double compute = reach[u].compute_s + f.compute_s;
                if (to.compute_s >= compute) continue;
                to = {.compute_s = compute, .cut = frontier_.cut(), .from = u, .replicas = r};
                for (const std::size_t l : f.added) add_layer(to.cut, l);
            }
        }
        if (!done) return std::nullopt;
        // Back from the last stage: a step's parent is final once the DP passed it.
        lattice_plan plan;
        for (const pack_step* step = &*done;; step = &reach[step->from]) {
            plan.cuts.push_back(step->cut);
            plan.replicas.push_back(step->replicas);
            if (step->from == 0) break;
        }
        std::reverse(plan.cuts.begin(), plan.cuts.end());
        std::reverse(plan.replicas.begin(), plan.replicas.end());
        return plan;
    }

    // The fewest replicas on which one stage finishes the graph, if the machines left can hold
    // it. The fills' tests rise with the stage's sums, so a fill takes every layer left iff
    // their sums fit: no fill is run; the count is bisected (more replicas hold more).
    [[nodiscard]] std::optional<std::int32_t> last_stage(double t, std::int32_t used) {
        const std::int32_t top = s_.straight ? 1 : s_.machines - used;
        const stage_fill all = frontier_.rest();
        if (all.added.empty()) return std::nullopt;
        const auto holds = [&](std::int32_t r) {
            return lattice_frontier::fits(s_, {.replicas = r, .time_s = t, .after = s_.machines - used - r}, all.compute_s,
                                          all.parameter_bytes, all.activation_bytes);
        };
        if (!holds(top)) return std::nullopt;
        std::int32_t no = 0, yes = top;
        while (yes - no > 1) {
            const std::int32_t mid = no + (yes - no) / 2;
            (holds(mid) ? yes : no) = mid;
        }
        return yes;
    }

    // The replica counts tried for a stage that leaves work and at least one machine: 1 to 4,
    // rho_l(t) .. rho_l(t) + 2 of every available layer too slow for one machine (section 3.2),
    // and a geometric ladder (x 1.5) for stages that hold much of the graph.
    [[nodiscard]] std::vector<std::int32_t> replica_candidates(double t, std::int32_t used) const {
        const std::int32_t cap = s_.straight ? std::min(1, s_.machines - used - 1) : s_.machines - used - 1;
        std::set<std::int32_t> counts;
        for (std::int32_t r = 1; r <= std::min(cap, 4); ++r) counts.insert(r);
        if (!s_.straight) {
            const layer_figures& f = lattice_.figures();
            for (const std::size_t l : frontier_.available())
                if (f.compute[l] > t) {
                    const std::int32_t rho = fewest_replicas(s_, f.compute[l], f.parameter[l], t, cap);
                    for (std::int32_t d = 0; d <= 2 && rho + d <= cap; ++d) counts.insert(rho + d);
                }
            if (used == 0)
                for (double r = 6.0; r <= cap; r *= 1.5) counts.insert(static_cast<std::int32_t>(r));
            // Under the memory check a stage's bytes count ceil(after / r) times: the fewest
            // replicas with at most c copies, ceil((M - used) / (c + 1)), for c = 1 .. 8.
            if (s_.memory_bytes)
                for (std::int32_t c = 1; c <= 8; ++c)
                    if (const std::int32_t r = (s_.machines - used + c) / (c + 1); r <= cap) counts.insert(r);
        }
        return {counts.begin(), counts.end()};
    }

    // Gives the machines still unused, one at a time, to the stage where one more replica
    // leaves the slowest stage fastest (the stages after it only gain: fewer machines follow
    // them, so their memory checks get easier). False when the plan cannot take them.
    bool pad_replicas(lattice_plan& plan) const {
        const lattice_pricer pricer(lattice_, s_, plan);
        for (std::int32_t extra = s_.machines - plan.machines(); extra > 0; --extra) {
            const std::vector<double> times = pricer.stage_times_s(plan.replicas);
            // The slowest stage and the slowest of the others, for "every stage but i".
            const std::size_t top = static_cast<std::size_t>(std::max_element(times.begin(), times.end()) - times.begin());
            double second = 0.0;
            for (std::size_t k = 0; k < times.size(); ++k)
                if (k != top) second = std::max(second, times[k]);
            std::size_t best = times.size();
            double best_time = std::numeric_limits<double>::infinity();
            std::int32_t before = 0;
            for (std::size_t i = 0; i < times.size(); ++i) {
                const double others = i == top ? second : times[top];
                const double mine = pricer.stage_time_s(i, plan.replicas[i] + 1, before);
                if (std::max(others, mine) < best_time) {
                    best_time = std::max(others, mine);
                    best = i;
                }
                before += plan.replicas[i];
            }
            if (best == times.size()) best = times.size() - 1;  // every choice is +inf: the last stage
            ++plan.replicas[best];
        }
        return true;
    }

    // A straight pipeline on exactly M machines has M stages: the stage with the most compute
    // (and two layers or more) is split, by a fill of its own layers to half its compute, until
    // there are M. False when the layers run out.
    bool split_to_machines(lattice_plan& plan) {
        const layer_figures& f = lattice_.figures();
        while (plan.machines() < s_.machines) {
            std::size_t widest = plan.cuts.size();
            double widest_c = -1.0;
            layer_bits layers;
            for (std::size_t i = 0; i < plan.cuts.size(); ++i) {
                layer_bits own = stage_layers(plan, i);
                std::size_t count = 0;
                double c = 0.0;
                for_each_layer(own, [&](std::size_t l) {
                    ++count;
                    c += f.compute[l];
                });
                if (count >= 2 && c > widest_c) {
                    widest = i;
                    widest_c = c;
                    layers = std::move(own);
                }
            }
            if (widest == plan.cuts.size() || !count_fill()) return false;
            split_stage(plan, widest, layers, widest_c);
        }
        return true;
    }

    [[nodiscard]] layer_bits stage_layers(const lattice_plan& plan, std::size_t i) const {
        layer_bits own = plan.cuts[i];
        if (i > 0)
            for (std::size_t w = 0; w < own.size(); ++w) own[w] &= ~plan.cuts[i - 1][w];
        return own;
    }

    // Stage i becomes two: its layers up to about half its compute (a fill within them; at least
    // one layer, never all), then the rest.
    void split_stage(lattice_plan& plan, std::size_t i, const layer_bits& layers, double compute) {
        frontier_.reset(i == 0 ? lattice_.empty_ideal() : plan.cuts[i - 1]);
        const wide_setting unlimited{.machines = s_.machines, .bandwidth_bytes_per_s = s_.bandwidth_bytes_per_s};
        stage_fill half = frontier_.fill(unlimited, {.replicas = 1, .time_s = compute / 2.0, .after = 0}, &layers);
        std::size_t count = 0;
        for_each_layer(layers, [&](std::size_t) { ++count; });
        if (half.added.size() == count) half.added.pop_back();  // the last added has no successor among them
        if (half.added.empty()) {
            for (const std::size_t l : frontier_.available())
                if (has_layer(layers, l)) {
                    half.added.push_back(l);
                    break;
                }
        }
        frontier_.commit(half.added);
        plan.cuts.insert(plan.cuts.begin() + static_cast<std::ptrdiff_t>(i), frontier_.cut());
        plan.replicas.insert(plan.replicas.begin() + static_cast<std::ptrdiff_t>(i), 1);
    }

    struct seeded {  // a first stage found apart, with its sums
        first_stage stage;
        double compute_s = 0.0, parameter_bytes = 0.0, activation_bytes = 0.0;
    };

    const ideal_lattice& lattice_;
    wide_setting s_;
    search_budget budget_;
    std::chrono::steady_clock::time_point start_;
    lattice_frontier frontier_;
    std::vector<seeded> seeds_;
    std::optional<lattice_plan> best_;
    std::vector<std::pair<double, lattice_plan>> plans_;
    double best_time_ = std::numeric_limits<double>::infinity();
    std::int64_t tests_ = 0, fills_ = 0, priced_ = 0;
    search_limit limit_ = search_limit::none;
};

/// A lattice plan as PipeDream's plan: stage i runs from cut i to cut i + 1 (see pipedream_stage),
/// compute as PipeDream prints it (the difference of the prefix sums), layers in layer order.
[[nodiscard]] inline pipedream_plan lattice_plan_description(const ideal_lattice& lattice, const wide_setting& s,
                                                             const lattice_plan& plan) {
    const lattice_pricer pricer(lattice, s, plan);
    const auto& states = pricer.path().states;
    pipedream_plan out;
    out.time_per_minibatch_s = pricer.time_s(plan.replicas);
    for (std::size_t i = 0; i < plan.cuts.size(); ++i) {
        pipedream_stage stage{.first_state = i, .end_state = i + 1, .replicas = plan.replicas[i]};
        stage.compute_s = states[i].compute_s - (i > 0 ? states[i - 1].compute_s : 0.0);
        for_each_layer(plan.cuts[i], [&](std::size_t l) {
            if (i == 0 || !has_layer(plan.cuts[i - 1], l)) stage.layers.push_back(l);
        });
        out.stages.push_back(std::move(stage));
    }
    return out;
}

/// UB3's family: at most this many ideals (their predecessor rows take |F|^2 / 8 bytes), and
/// the local search's rounds.
inline constexpr std::size_t wide_family_cap = 1500;
inline constexpr int wide_local_rounds = 6;
/// With transfers, UB3's family starts with this many cheap cuts (principal ideals of least
/// output, one per equal range of compute; lattice_local_search::add_low_output_ideals). 512
/// rather than 128: plans 0.04-1.9 % faster on 13 of the wide benchmark's 36 rows with
/// transfers (nasnetalarge at ratio 4 on 16 machines: gap 1.8 -> 0.46 %), one 0.004 % slower,
/// no time added; 1,024 crowded the family's cap and lost (nasnetalarge at ratio 4 on 64
/// machines: 31 -> 88 %).
inline constexpr std::size_t wide_low_output_bins = 512;
/// Under the memory check, the retries of the search for first stages of most compute within
/// each first stage's cap (stash_capped_first_stages), in all, where there are no exact points.
inline constexpr std::int64_t wide_first_stage_retries = 65'536;
/// The row solver's state pairs for UB3 in all (each about a microsecond; with a memory limit
/// the banded search prunes less: nasnetalarge on 64 machines at half its bytes took 6.1 million
/// pairs, 5.7 s, for no gain), or budget.max_evaluations when lower. 400,000 since the cheap cuts
/// with transfers: nasnetalarge on 64 machines with ratio 1 then took 1,000,000 pairs, 0.91 s,
/// for a plan 0.3 % faster than at 400,000 (0.62 s); no benchmark row without transfers takes more
/// than 391,208 (nasnetalarge, 64 machines, no flags).
inline constexpr std::int64_t wide_local_pairs = 400'000;

/// UB3 (section 3.2) from the packer's plans, best first: the local search's best plan and price.
[[nodiscard]] inline std::pair<lattice_plan, double> improve_locally(const ideal_lattice& lattice, const wide_setting& s,
                                                                      const lattice_packer& packer, const search_budget& budget,
                                                                      const std::vector<first_stage>& first_stages, pipedream_lattice_details& d) {
    std::vector<const std::pair<double, lattice_plan>*> plans;
    for (const auto& p : packer.plans()) plans.push_back(&p);
    std::stable_sort(plans.begin(), plans.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    const std::int64_t pairs = budget.max_evaluations > 0 ? std::min(budget.max_evaluations, wide_local_pairs) : wide_local_pairs;
    lattice_local_search local(lattice, s, wide_family_cap, pairs);
    if (s.activation_compression_ratio) local.add_low_output_ideals(wide_low_output_bins);
    local.add_first_stages(first_stages);
    for (const auto* p : plans) local.add_cuts(p->second);
    auto improved = local.improve(*packer.best(), packer.best_time_s(), wide_local_rounds);
    d.family_states = local.family_size();
    d.state_pairs = local.work().state_pairs;
    return improved;
}

/// The lower bounds (section 3.1) below `upper` (the best price; +inf: none). Returns the
/// nonempty ideals the window bound enumerated (PipeDream's state count), 0 when too many.
[[nodiscard]] inline std::size_t lattice_lower_bounds(const layer_graph& graph, const ideal_lattice& lattice, const wide_setting& s,
                                                      window_relaxation& windows, double upper, pipedream_lattice_details& d) {
    d.compute_bound_s = lattice_compute_bound(graph, lattice, s);
    const double hi = std::isfinite(upper) ? upper : lattice.total_compute_s();
    d.machine_bound_s = largest_failing_threshold(
                            d.compute_bound_s, hi, [&](double t) { return machine_count_admits(lattice, s, t); }, d.threshold_tests) *
                        wide_bound_rounding;
    if (s.activation_compression_ratio && !s.straight) {  // LB1x: the stages' synchronisation in aggregate
        const aggregate_sync_bound sync(lattice, s, windows.cut_output_steps());
        d.machine_bound_s = std::max(d.machine_bound_s, largest_failing_threshold(
                                                            d.compute_bound_s, hi, [&](double t) { return sync.admits(t); }, d.threshold_tests) *
                                                            wide_bound_rounding);
    }
    d.window_bound_s = largest_failing_threshold(d.compute_bound_s, hi, [&](double t) { return windows.admits(t); }, d.threshold_tests) *
                       wide_bound_rounding;
    if (s.memory_bytes) {  // LBm: the stages before each cut within their memory together
        const prefix_memory_bound memory(lattice, s, windows);
        d.memory_bound_s = largest_failing_threshold(d.compute_bound_s, hi, [&](double t) { return memory.admits(t); }, d.threshold_tests) *
                           wide_bound_rounding;
    }
    d.lower_bound_s = std::max({d.compute_bound_s, d.machine_bound_s, d.window_bound_s, d.memory_bound_s});
    return windows.ideal_count();
}

/// The result of the wide path once its bounds are known.
[[nodiscard]] inline pipedream_result lattice_result(const ideal_lattice& lattice, const wide_setting& s,
                                                     const std::optional<lattice_plan>& best, search_limit limit,
                                                     pipedream_lattice_details d) {
    pipedream_result result;
    result.details.states_enumerated = false;
    // nodes: fills (budget.max_nodes); evaluations: UB3's state pairs (budget.max_evaluations),
    // as the exact path counts its own.
    result.counters.nodes = d.fills;
    result.counters.evaluations = d.state_pairs;
    const double lower = d.lower_bound_s;
    if (!best) {
        result.status = solve_status::no_plan_found;
        result.limit = limit;
        result.bound = lower;
        result.reason = limit != search_limit::none
                            ? "the wide path stopped at its budget (options.budget) before it found a partition"
                            : "the wide path's packing found no partition within the memory constraint (memory_bytes); "
                              "none is proven impossible";
        result.details.lattice = d;
        return result;
    }
    pipedream_plan plan = lattice_plan_description(lattice, s, *best);
    const double upper = plan.time_per_minibatch_s;
    d.gap_ratio = lower > 0.0 ? (upper - lower) / lower : 0.0;
    result.objective_value = upper;
    result.plan = std::move(plan);
    if (upper <= lower * (1.0 + wide_relative_gap)) {
        result.status = solve_status::optimal;
        result.bound = upper;
    } else {
        result.status = solve_status::feasible;
        result.limit = limit;
        result.bound = lower;
        result.reason = "a partition within " + format_number(100.0 * d.gap_ratio) +
                        " % of the proven lower bound; the graph has more than options.max_states antichain states, so "
                        "PipeDream's recurrence was not run and optimality is not proven";
    }
    result.details.lattice = d;
    return result;
}

/// A result of the wide path without a plan: `status`, `limit`, the compute bound (when `bound`)
/// and why.
[[nodiscard]] inline pipedream_result wide_without_plan(solve_status status, search_limit limit, std::optional<double> bound,
                                                        std::string reason, const pipedream_lattice_details& d) {
    pipedream_result none;
    none.status = status;
    none.limit = limit;
    none.bound = bound;
    none.reason = std::move(reason);
    none.details.states_enumerated = false;
    none.details.lattice = d;
    return none;
}

/// The most layers the wide path takes: its fill search and its enumeration of ideals recurse once
/// per layer, and keep a frontier per level (O(layers^2) memory on a star).
inline constexpr std::size_t wide_max_kept_layers = 5000;

/// PipeDream's partitioning of one level of a single-source graph without its states (the caller,
/// pipedream_partition, routes here; partition/pipedream.hpp). `local_search` false: no UB3 (its
/// state pairs are evaluations, and the caller has none left).
[[nodiscard]] inline pipedream_result pipedream_partition_wide(const layer_graph& graph, const pipedream_options& options,
                                                               bool local_search = true) {
    const auto start = std::chrono::steady_clock::now();
    const ideal_lattice lattice(graph);
    const wide_setting s = wide_setting::of(options);
    pipedream_lattice_details d{.kept_layers = lattice.kept_count()};
    if (s.straight && !s.fewer && lattice.kept_count() < static_cast<std::size_t>(s.machines))  // PipeDream's None
        return wide_without_plan(solve_status::infeasible, search_limit::none, std::nullopt,
                                 "a straight pipeline on " + std::to_string(s.machines) + " machines needs as many stages, and the graph has " +
                                     std::to_string(lattice.kept_count()) + " layers",
                                 d);
    if (lattice.kept_count() > wide_max_kept_layers) {
        d.compute_bound_s = d.lower_bound_s = lattice_compute_bound(graph, lattice, s);
        return wide_without_plan(solve_status::no_plan_found, search_limit::none, d.lower_bound_s,
                                 "the graph has " + std::to_string(lattice.kept_count()) + " layers and more than options.max_states states; the wide path takes at most " +
                                     std::to_string(wide_max_kept_layers) + " layers",
                                 d);
    }
    // The window bound's DP over machines takes O(M^2) steps per test: as the exact path does
    // with its tables, a run over budget.max_nodes in this measure is not started.
    const double work = static_cast<double>(s.machines) * static_cast<double>(s.machines);
    if (options.budget.max_nodes > 0 && work > static_cast<double>(options.budget.max_nodes)) {
        d.compute_bound_s = d.lower_bound_s = lattice_compute_bound(graph, lattice, s);
        return wide_without_plan(solve_status::no_plan_found, search_limit::nodes, d.lower_bound_s,
                                 "the wide path on " + std::to_string(s.machines) + " machines needs M^2 = " + format_number(work) +
                                     " nodes, over the budget of " + std::to_string(options.budget.max_nodes) + " (options.budget.max_nodes)",
                                 d);
    }
    // The window bound's relaxation first: with exact points it knows the first stages of most
    // compute within the memory caps, which the packing and UB3 start from (else the fill's search).
    window_relaxation windows(lattice, s);
    const std::vector<first_stage> first_stages =
        windows.has_exact_points() ? windows.first_stages() : stash_capped_first_stages(lattice, s, wide_first_stage_retries);
    lattice_packer packer(lattice, s, options.budget, start, first_stages);
    const bool finished = packer.run(lattice_compute_bound(graph, lattice, s));
    std::optional<lattice_plan> best = packer.best();
    double best_time = packer.best_time_s();
    if (best && finished && local_search) std::tie(best, best_time) = improve_locally(lattice, s, packer, options.budget, first_stages, d);
    const std::size_t ideals = lattice_lower_bounds(graph, lattice, s, windows, best_time, d);
    d.threshold_tests += packer.threshold_tests();
    d.fills = packer.fills();
    search_limit limit = packer.limit();
    // UB3 stopped by the caller's evaluation budget (not by its own cap, wide_local_pairs).
    if (limit == search_limit::none && options.budget.max_evaluations > 0 && options.budget.max_evaluations < wide_local_pairs &&
        d.state_pairs >= options.budget.max_evaluations)
        limit = search_limit::evaluations;
    pipedream_result result = lattice_result(lattice, s, best, limit, d);
    result.details.num_states = ideals;  // counted, not enumerated as states
    return result;
}

}  // namespace dnnplan::detail
