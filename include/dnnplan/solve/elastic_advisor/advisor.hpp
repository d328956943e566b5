#pragma once
// A model-based elastic advisor for asynchronous parameter-server training: given the
// configurations (PS count, worker count) tried so far and their measured speeds, it fits a
// throughput model with prediction intervals (an elastic_throughput_model,
// solve/elastic_advisor/concepts.hpp; by default the load-contention PS model of
// solve/elastic_advisor/load_model.hpp), and either commits to the configuration that finishes the
// remaining steps by the deadline at the least cost, or proposes one more configuration to try
// where the intervals leave that decision open. docs/solvers/elastic_advisor.md states the rules
// and why.
//
// Cost of finishing with configuration c (ps PS, n workers) at speed X_c steps/s:
//   time_c = R / X_c,  cost_c = time_c (n p_worker + ps p_ps) / 3600        [R remaining steps]
// Without a deadline the least cost to finish is the most steps per USD, X_c / price_c.
// Decision (docs/solvers/elastic_advisor.md, "The decision rule"): a tried configuration's speed is its
// measured mean; an untried one has the fit's interval [lo, hi], cut to the bounds the model implies
// from the measured ones (cut_to_model_bounds). When no configuration can meet the deadline, even at
// hi (or the deadline has passed), the advisor says so at once: infeasible, best_effort the fastest.
// Otherwise the commitment k is the least pessimistic cost (R / lo) among the configurations that
// meet the deadline pessimistically. An untried configuration is a contender when even its
// optimistic cost (R / hi) is below cost_k (1 - min_gain) and it can meet the deadline
// optimistically; a contender is tried (the one of least optimistic cost, or when none is predicted
// to meet the deadline the one of highest lo; with a PS bottleneck the one with a PS more) when
// trials are left and the deadline still holds if the trial made no more progress than lo (a trial
// with lo = 0 may spend only an even share of the commitment's slack among the trials left);
// otherwise the advisor commits. The first trial (nothing measured) is the smallest cluster with
// 2+ workers, or with a deadline the largest.

#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/format.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/solve/elastic_advisor/concepts.hpp>
#include <dnnplan/solve/elastic_advisor/load_model.hpp>
#include <dnnplan/solve/elastic_advisor/problem.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace dnnplan {

namespace detail::elastic {

/// One mean speed per measured configuration.
[[nodiscard]] inline measured_speeds mean_speeds(const std::vector<configuration_speed>& observations) {
    std::map<ps_configuration, std::pair<double, std::int32_t>> sums;
    for (const auto& ob : observations) {
        auto& [sum, count] = sums[ob.configuration()];
        sum += ob.steps_per_s;
        ++count;
    }
    measured_speeds mean;
    for (const auto& [c, s] : sums) mean[c] = s.first / s.second;
    return mean;
}

/// Cuts the interval of the untried `e` to the bounds the model's rules imply (the rules of
/// model/ps_load_contention.hpp, each tested there; a model of one's own keeps them:
/// solve/elastic_advisor/concepts.hpp) from each measured configuration m, with x = X / n a
/// worker's rate: a worker or a PS more never lowers the cluster's rate; a worker more never raises
/// a worker's rate; and a worker's rate never falls when workers are added with at least as many PS
/// per worker (the PS pooled). So
///   X_c >= X_m            when P_c >= P_m and n_c >= n_m,
///   X_c >= n_c x_m        when n_c >= n_m and P_c / n_c >= P_m / n_m, or n_c <= n_m and P_c >= P_m,
///   X_c <= X_m            when P_c <= P_m and n_c <= n_m,
///   X_c <= n_c x_m        when P_c <= P_m and n_c >= n_m, or n_c <= n_m and P_c / n_c <= P_m / n_m.
/// Measured tables break the per-worker rules by a few percent (K80, tests/fixtures/elastic: 7
/// workers run faster each than 2), so a bound from a per-worker rule is loosened by speed_noise,
/// up or down (a lower bound must stay pessimistic: the commitment may rest on it).
inline void cut_to_model_bounds(elastic_candidate& e, const measured_speeds& mean, double speed_noise) {
    for (const auto& [m, speed] : mean) {
        const double scaled = speed * e.workers / m.workers;
        const std::int64_t c_ratio = std::int64_t{e.ps} * m.workers, m_ratio = std::int64_t{m.ps} * e.workers;
        if (m.ps <= e.ps && m.workers <= e.workers) e.lower = std::max(e.lower, speed);
        if ((m.workers <= e.workers && c_ratio >= m_ratio) || (e.workers <= m.workers && e.ps >= m.ps))
            e.lower = std::max(e.lower, scaled * (1.0 - speed_noise));
        if (e.ps <= m.ps && e.workers <= m.workers) e.upper = std::min(e.upper, speed * (1.0 + speed_noise));
        if ((e.ps <= m.ps && e.workers >= m.workers) || (e.workers <= m.workers && c_ratio <= m_ratio))
            e.upper = std::min(e.upper, scaled * (1.0 + speed_noise));
    }
}

/// Every configuration of the job as the advisor sees it: a tried one at its measured mean; an
/// untried one at the fit's prediction, its interval spanning at least the point +- speed_noise (no
/// prediction is surer than a measurement) and cut to the model's bounds, the point moved inside.
template <fitted_elastic_throughput Fit>
[[nodiscard]] std::vector<elastic_candidate> evaluate_candidates(const elastic_request& request, const measured_speeds& mean,
                                                                 const Fit& fit) {
    const elastic_options& o = request.options;
    std::vector<elastic_candidate> out;
    for (const ps_configuration& c : request.job.configurations) {
        elastic_candidate e{.ps = c.ps, .workers = c.workers};
        if (const auto it = mean.find(c); it != mean.end()) {
            e.tried = true;
            e.steps_per_s = e.lower = e.upper = it->second;
        } else {
            const interval i = fit.predict(c, o.confidence);
            e.steps_per_s = i.value;
            e.lower = std::isfinite(i.lower) ? std::max(0.0, std::min(i.lower, i.value * (1.0 - o.speed_noise))) : 0.0;
            e.upper = std::max(i.upper, i.value * (1.0 + o.speed_noise));
            cut_to_model_bounds(e, mean, o.speed_noise);
            e.steps_per_s = std::clamp(e.steps_per_s, e.lower, std::max(e.lower, e.upper));
        }
        e.upper = std::max(e.upper, e.lower);
        e.time_s = e.steps_per_s > 0.0 ? request.job.remaining_steps / e.steps_per_s : std::numeric_limits<double>::infinity();
        e.cost_usd = request.job.cost_usd(c, e.steps_per_s);
        out.push_back(e);
    }
    return out;
}

/// Every configuration of the job before anything is measured: nothing bounds its speed.
[[nodiscard]] inline std::vector<elastic_candidate> unmeasured_candidates(const elastic_job& job) {
    std::vector<elastic_candidate> out;
    for (const ps_configuration& c : job.configurations)
        out.push_back({.ps = c.ps, .workers = c.workers, .upper = std::numeric_limits<double>::infinity(),
                       .time_s = std::numeric_limits<double>::infinity(), .cost_usd = std::numeric_limits<double>::infinity()});
    return out;
}

/// The largest cluster: the one that dominates (as many PS and workers or more) the most others,
/// then the most workers, then the most PS. By the model's rule that a PS or a worker more never
/// lowers the cluster's rate, no configuration it dominates is faster (when it dominates every
/// other, it is the fastest).
[[nodiscard]] inline const elastic_candidate& largest_cluster(const std::vector<elastic_candidate>& cands) {
    const auto dominated = [&](const elastic_candidate& e) {
        return std::count_if(cands.begin(), cands.end(),
                             [&](const elastic_candidate& other) { return other.ps <= e.ps && other.workers <= e.workers; });
    };
    const elastic_candidate* first = &cands.front();
    std::tuple<std::ptrdiff_t, std::int32_t, std::int32_t> best{-1, 0, 0};
    for (const auto& e : cands)
        if (const std::tuple key{dominated(e), e.workers, e.ps}; key > best) {
            best = key;
            first = &e;
        }
    return *first;
}

/// The fewest PS with the fewest workers, 2 or more when there are: cheap, and the smallest
/// cluster where the PS can be contended.
[[nodiscard]] inline const elastic_candidate& smallest_contended_cluster(const std::vector<elastic_candidate>& cands) {
    const auto key = [](const elastic_candidate& e) { return std::tuple{e.ps, e.workers < 2, e.workers}; };
    const elastic_candidate* first = &cands.front();
    for (const auto& e : cands)
        if (key(e) < key(*first)) first = &e;
    return *first;
}

/// The fastest configuration the advisor can count on: the highest lower end of its speed
/// interval, then the highest point, then the job's order (the measured speed wins a tie with an
/// untried configuration predicted as fast).
[[nodiscard]] inline const elastic_candidate& surest_fastest(const std::vector<elastic_candidate>& cands) {
    const elastic_candidate* fastest = &cands.front();
    for (const auto& e : cands)
        if (std::pair{e.lower, e.steps_per_s} > std::pair{fastest->lower, fastest->steps_per_s}) fastest = &e;
    return *fastest;
}

/// The cost of finishing at the lower end of the speed interval (+inf at 0) and at its upper end.
[[nodiscard]] inline double pessimistic_cost(const elastic_job& job, const elastic_candidate& e) noexcept {
    return job.cost_usd(e.configuration(), e.lower);
}
[[nodiscard]] inline double optimistic_cost(const elastic_job& job, const elastic_candidate& e) noexcept {
    return job.cost_usd(e.configuration(), e.upper);
}

/// The commitment: the least pessimistic cost among the configurations that meet the deadline
/// pessimistically; none when no configuration does.
[[nodiscard]] inline const elastic_candidate* commitment(const elastic_job& job, const std::vector<elastic_candidate>& cands) {
    const elastic_candidate* commit = nullptr;
    for (const auto& e : cands)
        if (job.meets_deadline(e.lower) && (commit == nullptr || pessimistic_cost(job, e) < pessimistic_cost(job, *commit)))
            commit = &e;
    return commit;
}

/// Trials stay near what was measured (the model extrapolates badly from one or two points): a PS
/// count at most one from a measured one, and a worker count within a factor of 2 of it.
[[nodiscard]] inline bool near_measured(const elastic_candidate& e, const measured_speeds& mean) {
    for (const auto& [c, speed] : mean)
        if (std::abs(e.ps - c.ps) <= 1 && e.workers <= 2 * c.workers && 2 * e.workers >= c.workers) return true;
    return false;
}

/// The contenders: untried, near a measured configuration, optimistically able to meet the
/// deadline and to beat the commitment by min_gain, and safe: if the trial made no more progress
/// than `lower`, the commitment still meets the deadline. A blind trial (nothing bounds its speed
/// below: it may make no progress at all) spends at most an even share of the commitment's slack
/// among the trials left, so that it cannot use up what the others need.
[[nodiscard]] inline std::vector<const elastic_candidate*> contenders(const elastic_request& request,
                                                                      const std::vector<elastic_candidate>& cands,
                                                                      const elastic_candidate* commit, const measured_speeds& mean) {
    const elastic_job& job = request.job;
    const elastic_options& o = request.options;
    const double bar = commit != nullptr ? pessimistic_cost(job, *commit) * (1.0 - o.min_gain) : std::numeric_limits<double>::infinity();
    std::vector<const elastic_candidate*> out;
    for (const auto& e : cands) {
        if (e.tried || !job.meets_deadline(e.upper) || !(optimistic_cost(job, e) < bar) || !near_measured(e, mean)) continue;
        if (commit != nullptr && job.deadline_s) {
            const double slack_s = *job.deadline_s - job.remaining_steps / commit->lower;
            const double spend_s = o.trial_s * (1.0 - e.lower / commit->lower);
            const double share = e.lower > 0.0 ? 1.0 : 1.0 / std::max(1, o.max_trials - static_cast<std::int32_t>(mean.size()));
            if (spend_s > share * slack_s) continue;
        }
        out.push_back(&e);
    }
    return out;
}

/// Whether contender a is tried before b: one predicted to meet the deadline first; among those
/// that are not, the surest to come near it (highest lower end, then point); among those that are,
/// optimism in the face of uncertainty (Auer, Cesa-Bianchi and Fischer, "Finite-time Analysis of
/// the Multiarmed Bandit Problem", Machine Learning 47, 2002: UCB1): the least optimistic cost, so
/// that a wide interval is tried before a narrow one of the same point cost (one not bounded above
/// yet has an optimistic cost of 0 and comes first, as an untried arm in UCB1); then the point
/// cost, then the wider interval.
[[nodiscard]] inline bool tried_before(const elastic_job& job, const elastic_candidate& a, const elastic_candidate& b) {
    const bool ma = job.meets_deadline(a.steps_per_s), mb = job.meets_deadline(b.steps_per_s);
    if (ma != mb) return ma;
    if (!ma) return std::pair{a.lower, a.steps_per_s} > std::pair{b.lower, b.steps_per_s};
    if (optimistic_cost(job, a) != optimistic_cost(job, b)) return optimistic_cost(job, a) < optimistic_cost(job, b);
    if (a.cost_usd != b.cost_usd) return a.cost_usd < b.cost_usd;
    return a.upper / std::max(a.lower, 1e-300) > b.upper / std::max(b.lower, 1e-300);
}

[[nodiscard]] inline std::string usd_text(double usd) { return detail::format_usd(usd) + " USD"; }

[[nodiscard]] inline const elastic_candidate& candidate_at(const std::vector<elastic_candidate>& cands, const ps_configuration& c) {
    return *std::find_if(cands.begin(), cands.end(), [&](const elastic_candidate& e) { return e.configuration() == c; });
}

/// The trial among the (non-empty) contenders, and why: with a PS bottleneck at the reference (the
/// running configuration, else the commitment) a PS more with the same workers, else the first by
/// tried_before.
template <fitted_elastic_throughput Fit>
[[nodiscard]] std::pair<const elastic_candidate*, std::string> choose_trial(const elastic_request& request,
                                                                            const std::vector<elastic_candidate>& cands,
                                                                            const std::vector<const elastic_candidate*>& open,
                                                                            const elastic_candidate* commit, const Fit& fit) {
    const elastic_job& job = request.job;
    const elastic_candidate* reference = request.current ? &candidate_at(cands, *request.current) : commit;
    if (reference != nullptr && reference->tried)
        if (const ps_load_state load = fit.ps_load_at(reference->configuration(), reference->steps_per_s); load.bottleneck)
            for (const auto* e : open)
                if (e->ps == reference->ps + 1 && e->workers == reference->workers)
                    return {e, "PS bottleneck at " + to_string(reference->configuration()) + " (PS at " +
                                   detail::format_number(std::round(load.utilisation * 100.0)) +
                                   "% of its fitted capacity, below the workers' demand): try a PS more"};
    const elastic_candidate* pick = open.front();
    for (const auto* e : open)
        if (tried_before(job, *e, *pick)) pick = e;
    std::string why = "the intervals leave the choice open: " + to_string(pick->configuration()) +
                      (std::isfinite(pick->upper) ? " may finish for " + usd_text(optimistic_cost(job, *pick))
                                                  : " (its speed not bounded above yet) may be the cheapest");
    why += commit != nullptr ? " against " + usd_text(pessimistic_cost(job, *commit)) + " committed to " + to_string(commit->configuration())
                             : " and nothing measured meets the deadline yet";
    return {pick, why};
}

/// Records a decision: status feasible, the plan, its predicted cost of finishing and that cost's
/// interval, estimated from the model fitted to `samples` measured configurations.
inline void decide(elastic_result& result, const elastic_request& request, const elastic_candidate& e, elastic_action action,
                   std::string why, std::int64_t samples) {
    const elastic_job& job = request.job;
    result.status = solve_status::feasible;
    result.plan = elastic_plan{.ps = e.ps, .workers = e.workers, .action = action, .why = std::move(why)};
    result.objective_value = e.cost_usd;
    result.figures = figure_kind::estimated;
    result.estimate = figure_estimate{.lower = optimistic_cost(job, e), .upper = pessimistic_cost(job, e),
                                      .confidence_prob = request.options.confidence, .samples = samples};
    result.reason = std::string(action == elastic_action::trial ? "a trial; the" : "the") +
                    " cost of finishing with it is estimated from the model fitted to " + std::to_string(samples) +
                    (samples == 1 ? " measured configuration" : " measured configurations") + ", not proven the least";
}

/// Records that no plan meets the deadline: the status (infeasible or no_plan_found), why, and
/// best_effort, a commitment to `e`.
inline void give_up(elastic_result& result, solve_status status, const elastic_candidate& e, std::string why, std::string reason) {
    result.status = status;
    result.best_effort = elastic_plan{.ps = e.ps, .workers = e.workers, .action = elastic_action::commit, .why = std::move(why)};
    result.reason = std::move(reason);
}

/// Why no configuration can meet the deadline `deadline_s` (s left), and what best_effort is.
[[nodiscard]] inline std::string unmeetable_reason(double deadline_s, std::string_view best_effort) {
    std::string reason = deadline_s > 0.0 ? "no configuration meets the deadline of " + detail::format_number(deadline_s) +
                                                " s even at the upper end of its speed interval"
                                          : "the deadline has passed (" + detail::format_number(deadline_s) +
                                                " s left): no configuration can meet it";
    return reason + "; best_effort commits to " + std::string(best_effort);
}

/// The decision before anything is measured: with a deadline, a first trial on the largest cluster
/// (a first trial anywhere else can spend the deadline's slack before anything is known; from this
/// one, every later trial has a measured commitment to fall back on); without one, on the smallest
/// with 2+ workers. Nothing predicts the cost of finishing: the objective is the trial's own cost,
/// exact. A deadline that has passed is infeasible, best_effort the largest cluster.
inline void decide_unmeasured(elastic_result& result, const elastic_request& request) {
    const elastic_job& job = request.job;
    const auto& cands = result.details.candidates;
    if (job.deadline_s && *job.deadline_s <= 0.0)
        return give_up(result, solve_status::infeasible, largest_cluster(cands),
                       "the deadline has passed: the largest cluster, the fastest by the model's rules",
                       unmeetable_reason(*job.deadline_s, "the largest cluster"));
    const elastic_candidate& first = job.deadline_s ? largest_cluster(cands) : smallest_contended_cluster(cands);
    result.status = solve_status::feasible;
    result.plan = elastic_plan{.ps = first.ps, .workers = first.workers, .action = elastic_action::trial,
                               .why = job.deadline_s ? "nothing measured yet, a deadline to meet: a first trial on the largest cluster"
                                                     : "nothing measured yet: a first trial on the smallest cluster with 2+ workers"};
    result.objective_value = request.options.trial_s * job.usd_per_s(first.configuration());
    result.reason = "nothing measured yet: nothing predicts the cost of finishing, the objective is the first trial's own cost";
}

/// The decision once something is measured (the rules at the top of this header), in order: no
/// configuration can meet the deadline (infeasible, at once); a trial where the intervals leave the
/// choice open; the commitment; one that meets the deadline by its point prediction only; else
/// none predicted to (no_plan_found). The last two give up the pessimistic guarantee.
template <fitted_elastic_throughput Fit>
void decide_measured(elastic_result& result, const elastic_request& request, const measured_speeds& mean, const Fit& fit) {
    const elastic_job& job = request.job;
    const elastic_options& o = request.options;
    const auto& cands = result.details.candidates;
    const auto samples = static_cast<std::int64_t>(mean.size());
    if (job.deadline_s && std::none_of(cands.begin(), cands.end(), [&](const auto& e) { return job.meets_deadline(e.upper); }))
        return give_up(result, solve_status::infeasible, surest_fastest(cands),
                       "no configuration can meet the deadline: the fastest, to finish as early as possible",
                       unmeetable_reason(*job.deadline_s, "the fastest"));
    const elastic_candidate* commit = commitment(job, cands);
    const std::vector<const elastic_candidate*> open = contenders(request, cands, commit, mean);
    if (!open.empty() && samples < o.max_trials) {
        auto [pick, why] = choose_trial(request, cands, open, commit, fit);
        return decide(result, request, *pick, elastic_action::trial, std::move(why), samples);
    }
    if (commit != nullptr) {
        std::string why = samples >= o.max_trials && !open.empty()
                              ? "trials used up (" + std::to_string(samples) + "): the least cost measured or certain"
                              : "no configuration left that may cut the cost by " + detail::format_number(o.min_gain * 100.0) + "%";
        why += ": " + usd_text(pessimistic_cost(job, *commit)) + " to finish";
        return decide(result, request, *commit, elastic_action::commit, std::move(why), samples);
    }
    const elastic_candidate* best = nullptr;
    for (const auto& e : cands)
        if (job.meets_deadline(e.steps_per_s) && (best == nullptr || e.cost_usd < best->cost_usd)) best = &e;
    if (best != nullptr) return decide(result, request, *best, elastic_action::commit, "meets the deadline by its predicted speed only", samples);
    give_up(result, solve_status::no_plan_found, surest_fastest(cands), "no configuration is predicted to meet the deadline: the fastest",
            "no configuration is predicted to meet the deadline of " + detail::format_number(*job.deadline_s) +
                " s, though some may at the upper end of its speed interval; best_effort commits to the fastest");
}

/// The PS's load at the reference configuration (the one running, else the decision's).
template <fitted_elastic_throughput Fit>
void record_ps_load(elastic_result& result, const elastic_request& request, const Fit& fit) {
    const ps_configuration reference = request.current.value_or(result.plan_to_run()->configuration());
    const elastic_candidate& at = candidate_at(result.details.candidates, reference);
    const ps_load_state load = fit.ps_load_at(reference, at.steps_per_s);
    result.details.ps_utilisation = load.utilisation;
    result.details.ps_bottleneck = load.bottleneck;
}

}  // namespace detail::elastic

/// The advisor with a throughput model of one's own (the rules at the top of this header). Pure:
/// the same request and model give the same decision. Throws invalid_input for a bad request (its
/// field named). The statuses: elastic_result (solve/elastic_advisor/problem.hpp).
template <elastic_throughput_model Model>
[[nodiscard]] elastic_result solve(const elastic_request& request, const Model& model) {
    namespace de = detail::elastic;
    const stopwatch clock;
    request.validate();
    const measured_speeds mean = de::mean_speeds(request.observations);
    elastic_result result;
    elastic_details& d = result.details;
    d.trials = static_cast<std::int32_t>(mean.size());
    if (mean.empty()) {
        d.candidates = de::unmeasured_candidates(request.job);
        de::decide_unmeasured(result, request);
    } else {
        const auto fit = model.fit(mean, request.options);
        d.model_fitted = true;
        if constexpr (ps_parameter_fit<std::remove_cvref_t<decltype(fit)>>) {
            ps_fit_parameters p = fit.parameters();
            d.compute_s = p.compute_s;
            d.ps_bandwidth_bytes_per_s = p.ps_bandwidth_bytes_per_s;
            d.required_bandwidth_bytes_per_s = p.required_bandwidth_bytes_per_s;
            d.pinned = std::move(p.pinned);
        }
        d.candidates = de::evaluate_candidates(request, mean, fit);
        de::decide_measured(result, request, mean, fit);
        de::record_ps_load(result, request, fit);
    }
    result.counters.evaluations = static_cast<std::int64_t>(d.candidates.size());
    result.counters.elapsed_s = clock.elapsed_s();
    return result;
}

/// The advisor with the load-contention PS model (ps_load_contention_model, fitted with
/// request.options.fit).
[[nodiscard]] inline elastic_result solve(const elastic_request& request) { return solve(request, ps_load_contention_model{}); }

}  // namespace dnnplan
