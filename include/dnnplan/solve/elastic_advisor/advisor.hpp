#pragma once
// A model-based elastic advisor for asynchronous parameter-server training (issue 13, section 2):
// given the configurations (PS count, worker count) tried so far and their measured speeds, it fits
// the asynchronous PS throughput model with load-driven contention (fit/ps_async.hpp: spotDNN's
// eqs. (6)-(7) with the closed queueing network of model/ps_load_contention.hpp) and its prediction
// intervals, and either commits to the configuration that finishes the remaining steps by the
// deadline at the least cost, or proposes one more configuration to try where the intervals leave
// that decision open. docs/solvers/elastic_advisor.md states the rules and why.
//
// Cost of finishing with configuration c (ps PS, n workers) at speed X_c steps/s:
//   time_c = R / X_c,  cost_c = time_c (n p_worker + ps p_ps) / 3600        [R remaining steps]
// Without a deadline the least cost to finish is the most steps per USD, X_c / price_c.
// Decision (docs/solvers/elastic_advisor.md, "The decision rule"): a tried configuration's speed is its
// measured mean; an untried one has the fit's interval [lo, hi], cut to the bounds the model implies
// from the measured ones (below, in solve). The commitment k is the least
// pessimistic cost (R / lo) among the configurations that meet the deadline pessimistically. An
// untried configuration is a contender when even its optimistic cost (R / hi) is below cost_k
// (1 - min_gain) and it can meet the deadline optimistically; a contender is tried (the one of
// least optimistic cost, or when none is predicted to meet the deadline the one of highest lo; with
// a PS bottleneck the one with a PS more) when trials are left and the deadline still holds if the
// trial made no more progress than lo (a trial with lo = 0 may spend only an even share of the
// commitment's slack among the trials left); otherwise the advisor commits. The first trial (nothing
// measured) is the smallest cluster with 2+ workers, or with a deadline the largest.
// PS bottleneck (the fitted PS term dominates): the PS's capacity ps B_ps / (2 S) is below what
// the workers alone would ask of it, n / (Z + 2 S / B_req) (the asymptotic bound of the closed
// network, Lazowska et al., "Quantitative System Performance", 1984, sec. 5.2).

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/ps_async.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace dnnplan {

/// A PS training cluster: `ps` parameter servers and `workers` workers of the job's one type.
struct ps_configuration {
    std::int32_t ps = 1;
    std::int32_t workers = 1;
    friend auto operator<=>(const ps_configuration&, const ps_configuration&) = default;

    void validate(std::string_view path = "configuration") const {
        const std::string p = detail::field_prefix(path);
        detail::require_at_least(p + "ps", ps, 1);
        detail::require_at_least(p + "workers", workers, 1);
    }
};

/// "(ps 1, workers 4)": how messages and errors name a configuration.
[[nodiscard]] inline std::string to_string(const ps_configuration& c) {
    return "(ps " + std::to_string(c.ps) + ", workers " + std::to_string(c.workers) + ")";
}

/// A measured speed of a configuration.
struct configuration_speed {
    std::int32_t ps = 1;
    std::int32_t workers = 1;
    double steps_per_s = 0.0;
    [[nodiscard]] ps_configuration configuration() const noexcept { return {ps, workers}; }
    friend bool operator==(const configuration_speed&, const configuration_speed&) = default;

    void validate(std::string_view path = "measurement") const {
        configuration().validate(path);
        detail::require_positive(detail::field_prefix(path) + "steps_per_s", steps_per_s);
    }
};

namespace detail::elastic {

/// Every configuration of `list` (named `path[i]`, read through `config`) at most once.
template <class T, class Config>
void require_distinct(const std::vector<T>& list, const std::string& path, Config config) {
    std::map<ps_configuration, std::size_t> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = path + "[" + std::to_string(i) + "]";
        if (const auto [it, fresh] = seen.emplace(config(list[i]), i); !fresh)
            throw invalid_input(at, to_string(config(list[i])),
                                "a configuration listed once (also " + path + "[" + std::to_string(it->second) + "])");
    }
}

/// The share of the PS's fitted capacity in use at `steps_per_s`: X 2 S / (P B_ps), the utilisation
/// law U = X D with demand D = 2 S / B_ps per step over P servers (Lazowska et al., "Quantitative
/// System Performance", 1984, sec. 3.2).
[[nodiscard]] inline double ps_utilisation(double steps_per_s, std::int32_t ps, const ps_network& fitted) noexcept {
    return steps_per_s * 2.0 * fitted.parameter_bytes / (ps * fitted.ps_bandwidth_bytes_per_s);
}

/// USD per second of running c at these prices.
[[nodiscard]] inline double usd_per_s(const ps_configuration& c, double worker_usd_per_h, double ps_usd_per_h) noexcept {
    return (c.workers * worker_usd_per_h + c.ps * ps_usd_per_h) / 3600.0;
}

}  // namespace detail::elastic

/// What the job has left to do and what it may use.
struct elastic_job {
    std::string gpu = "worker";                   ///< the worker type's name (reports only)
    double remaining_steps = 0.0;                 ///< > 0
    std::optional<double> deadline_s{};           ///< time left from now; none: most steps per USD
    double worker_usd_per_h = 0.0;
    double ps_usd_per_h = 0.0;
    std::vector<ps_configuration> configurations{};  ///< every configuration allowed, each once

    void validate(std::string_view path = "job") const {
        const std::string p = detail::field_prefix(path);
        detail::require_utf8(p + "gpu", gpu);
        detail::require_positive(p + "remaining_steps", remaining_steps);
        if (deadline_s) detail::require_positive(p + "deadline_s", *deadline_s);
        detail::require_positive(p + "worker_usd_per_h", worker_usd_per_h);
        detail::require_non_negative(p + "ps_usd_per_h", ps_usd_per_h);
        if (configurations.empty()) throw invalid_input(p + "configurations", "[]", "at least one configuration");
        for (std::size_t i = 0; i < configurations.size(); ++i)
            configurations[i].validate(p + "configurations[" + std::to_string(i) + "]");
        detail::elastic::require_distinct(configurations, p + "configurations", [](const ps_configuration& c) { return c; });
    }

    /// USD per second of running configuration c.
    [[nodiscard]] double usd_per_s(const ps_configuration& c) const noexcept {
        return detail::elastic::usd_per_s(c, worker_usd_per_h, ps_usd_per_h);
    }
    [[nodiscard]] bool allows(const ps_configuration& c) const {
        return std::find(configurations.begin(), configurations.end(), c) != configurations.end();
    }
};

struct elastic_options {
    double trial_s = 120.0;         ///< how long a trial runs before the next decision (> 0)
    std::int32_t max_trials = 5;    ///< distinct configurations tried, at most, before committing (>= 1)
    double confidence = 0.95;       ///< of the prediction intervals, in (0, 1)
    /// A trial is worth it only if it may cut the cost of finishing by at least this fraction, in [0, 1).
    double min_gain = 0.02;
    /// The run-to-run spread of a measured speed, relative, in [0, 1): speeds per worker that agree
    /// within it are read as no contention (detail::elastic::fit_speeds), no fitted interval is
    /// narrower than the point +- it, and bounds from the per-worker rules are loosened by it.
    double speed_noise = 0.05;
    /// The fitter's options; fewer starts than the fitter's default keep a decision under 1 ms
    /// (benchmarks/elastic.cpp).
    ps_async_fit_options fit{.solver = {.max_iterations = 200, .tolerance = 1e-10, .starts = 3, .seed = 1}};

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        detail::require_positive(p + "trial_s", trial_s);
        detail::require_at_least(p + "max_trials", max_trials, 1);
        if (!(confidence > 0.0 && confidence < 1.0))
            throw invalid_input(p + "confidence", detail::format_number(confidence), "a number in (0, 1)");
        if (!(min_gain >= 0.0 && min_gain < 1.0))
            throw invalid_input(p + "min_gain", detail::format_number(min_gain), "a number in [0, 1)");
        if (!(speed_noise >= 0.0 && speed_noise < 1.0))
            throw invalid_input(p + "speed_noise", detail::format_number(speed_noise), "a number in [0, 1)");
        fit.validate(p + "fit");
    }
};

/// The advisor's input: the job, every speed measured so far (a configuration measured more than
/// once counts with its mean), the configuration running now (if any), the options.
struct elastic_request {
    elastic_job job{};
    std::vector<configuration_speed> observations{};
    std::optional<ps_configuration> current{};
    elastic_options options{};

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        job.validate(p + "job");
        for (std::size_t i = 0; i < observations.size(); ++i) {
            const std::string at = p + "observations[" + std::to_string(i) + "]";
            observations[i].validate(at);
            if (!job.allows(observations[i].configuration()))
                throw invalid_input(at, to_string(observations[i].configuration()), "a configuration of job.configurations");
        }
        if (current) {
            current->validate(p + "current");
            if (!job.allows(*current)) throw invalid_input(p + "current", to_string(*current), "a configuration of job.configurations");
        }
        options.validate(p + "options");
    }
};

enum class elastic_action { trial, commit };

template <>
struct enum_text<elastic_action> {
    static constexpr std::array<enum_name<elastic_action>, 2> names{
        {{elastic_action::trial, "trial"}, {elastic_action::commit, "commit"}}};
};

/// What to run next: try a configuration for a trial, or commit to one until the work is done.
struct elastic_plan {
    std::int32_t ps = 1;
    std::int32_t workers = 1;
    elastic_action action = elastic_action::commit;
    std::string why{};
    [[nodiscard]] ps_configuration configuration() const noexcept { return {ps, workers}; }
    friend bool operator==(const elastic_plan&, const elastic_plan&) = default;
};

/// One configuration as the advisor sees it.
struct elastic_candidate {
    std::int32_t ps = 1;
    std::int32_t workers = 1;
    bool tried = false;
    double steps_per_s = 0.0;  ///< measured mean (tried) or the fit's prediction
    double lower = 0.0;        ///< interval of the speed; = steps_per_s when tried
    double upper = 0.0;        ///< +inf when the fit cannot bound it yet
    double time_s = 0.0;       ///< remaining steps / steps_per_s
    double cost_usd = 0.0;     ///< time_s x the configuration's price
    friend bool operator==(const elastic_candidate&, const elastic_candidate&) = default;
};

struct elastic_details {
    std::vector<elastic_candidate> candidates{};  ///< every configuration of the job, in its order
    std::int32_t trials = 0;                      ///< distinct configurations measured
    bool model_fitted = false;                    ///< false before the first measurement
    double compute_s = 0.0;                       ///< fitted Z (work between exchanges), 0 unfitted
    double ps_bandwidth_bytes_per_s = 0.0;        ///< fitted B_ps per PS (for parameter_bytes S)
    double required_bandwidth_bytes_per_s = 0.0;  ///< fitted B_req
    std::vector<std::string> pinned{};            ///< parameters held by a rule, with the rule
    /// At the reference configuration (the one running, else the plan's): the PS's share of its
    /// capacity in use, X 2 S / (ps B_ps), and whether its capacity is below the workers' demand.
    double ps_utilisation = 0.0;
    bool ps_bottleneck = false;
    friend bool operator==(const elastic_details&, const elastic_details&) = default;
};

/// status feasible: a plan (a trial or a commitment); objective_value = the predicted cost (USD)
/// of finishing with the plan's configuration, or, while nothing measured predicts it (the first
/// trial), the cost of the trial itself (trial_s at its price; details.model_fitted is then false);
/// bound none (nothing is proven). infeasible: no
/// configuration is predicted to meet the deadline even at the upper end of its interval; the plan
/// then commits to the fastest configuration (to finish as early as possible) and the reason says so.
using elastic_result = solve_result<elastic_plan, elastic_details>;

namespace detail::elastic {

/// The load-contention fit on one mean speed per configuration (records of the same configuration
/// are not independent measurements: their mean is one). Speeds per worker within `speed_noise` of
/// each other are read as no contention (ps_async_fit_options::no_contention_spread: B_ps pinned at
/// 1e6 B_req, the optimistic guess; with one configuration this always holds, dof 0); otherwise a
/// gap within the noise would be extrapolated into a saturated PS. None: nothing measured.
[[nodiscard]] inline std::optional<ps_async_fit_result> fit_speeds(const std::map<ps_configuration, double>& mean,
                                                                   const ps_async_fit_options& fit_options,
                                                                   double speed_noise = 0.0) {
    if (mean.empty()) return std::nullopt;
    std::vector<ps_cluster_sample> samples;
    for (const auto& [c, speed] : mean)
        samples.push_back({.counts = {c.workers}, .iterations_per_s = speed, .parameter_servers = c.ps});
    ps_async_fit_options options = fit_options;
    options.contention_model = ps_contention_model::load;
    options.no_contention_spread = speed_noise;
    return fit_ps_async({ps_async_worker_type{.name = "worker", .gpus = 1, .worker_batch = 1.0}}, samples, options);
}

[[nodiscard]] inline double cost_of(const elastic_job& job, const ps_configuration& c, double speed) {
    if (!(speed > 0.0)) return std::numeric_limits<double>::infinity();
    return job.remaining_steps / speed * job.usd_per_s(c);
}

/// `time_s` is within `deadline_s`, to a relative 1e-12: times and remaining work are differences,
/// and rounding must not turn a tie into a miss. The advisor and the replay harness share it.
[[nodiscard]] inline bool within_deadline(double time_s, double deadline_s) noexcept {
    return time_s <= deadline_s * (1.0 + 1e-12);
}

/// Finishing the remaining steps at `speed` meets the deadline (if any).
[[nodiscard]] inline bool meets(const elastic_job& job, double speed) {
    if (!job.deadline_s) return true;
    return speed > 0.0 && within_deadline(job.remaining_steps / speed, *job.deadline_s);
}

}  // namespace detail::elastic

/// The advisor (the rules at the top of this header). Pure: the same request gives the same plan.
/// Throws invalid_input for a bad request (its field named).
[[nodiscard]] inline elastic_result solve(const elastic_request& request) {
    namespace de = detail::elastic;
    const auto started = std::chrono::steady_clock::now();
    request.validate();
    const elastic_job& job = request.job;
    const elastic_options& o = request.options;

    std::map<ps_configuration, std::pair<double, std::int32_t>> sums;
    for (const auto& ob : request.observations) {
        auto& [sum, count] = sums[ob.configuration()];
        sum += ob.steps_per_s;
        ++count;
    }
    std::map<ps_configuration, double> mean;
    for (const auto& [c, s] : sums) mean[c] = s.first / s.second;

    elastic_result result;
    auto& d = result.details;
    d.trials = static_cast<std::int32_t>(mean.size());
    const std::optional<ps_async_fit_result> model = de::fit_speeds(mean, o.fit, o.speed_noise);
    const double two_s = 2.0 * o.fit.parameter_bytes;
    if (model) {
        const ps_async_fit_result& f = *model;
        d.model_fitted = true;
        d.compute_s = f.compute_s.front() + two_s / f.network.pcie_bandwidth_bytes_per_s;
        d.ps_bandwidth_bytes_per_s = f.network.ps_bandwidth_bytes_per_s;
        d.required_bandwidth_bytes_per_s = f.network.required_bandwidth_bytes_per_s;
        for (const auto& p : f.pinned)
            if (p.name != "alpha1" && p.name != "beta1") d.pinned.push_back(p.name + ": " + p.reason);
    }

    // A fit that has seen no contention (B_ps pinned at its optimistic guess, not given) says nothing
    // of a PS loaded beyond every measured one, with more workers per PS: no lower bound from the fit there.
    const bool contention_unseen =
        model && !o.fit.ps_bandwidth_bytes_per_s &&
        std::any_of(model->pinned.begin(), model->pinned.end(),
                    [](const pinned_parameter& p) { return p.name == "ps_bandwidth_bytes_per_s"; });
    const auto beyond_seen_load = [&](const ps_configuration& c) {
        return contention_unseen && std::all_of(mean.begin(), mean.end(), [&](const auto& measured) {
                   const ps_configuration& m = measured.first;
                   return std::int64_t{c.workers} * m.ps > std::int64_t{m.workers} * c.ps;
               });
    };
    for (const ps_configuration& c : job.configurations) {
        elastic_candidate e{.ps = c.ps, .workers = c.workers};
        if (const auto it = mean.find(c); it != mean.end()) {
            e.tried = true;
            e.steps_per_s = e.lower = e.upper = it->second;
        } else if (model) {
            const std::array<std::int32_t, 1> counts{c.workers};
            const interval i = predict_ps_async(*model, counts, c.ps, o.confidence);
            e.steps_per_s = i.value;
            // No prediction is surer than a measurement: the interval spans the point +- speed_noise at least.
            e.lower = std::isfinite(i.lower) && !beyond_seen_load(c) ? std::min(i.lower, i.value * (1.0 - o.speed_noise)) : 0.0;
            e.upper = std::max(i.upper, i.value * (1.0 + o.speed_noise));
        } else {
            e.upper = std::numeric_limits<double>::infinity();  // nothing known yet
        }
        // Bounds the model implies (model/ps_load_contention.hpp, each tested there) from a measured
        // configuration m, with x = X / n a worker's rate: a worker or a PS more never lowers the
        // cluster's rate; a worker more never raises a worker's rate; and a worker's rate never falls
        // when workers are added with at least as many PS per worker (the PS pooled). So
        //   X_c >= X_m            when P_c >= P_m and n_c >= n_m,
        //   X_c >= n_c x_m        when n_c >= n_m and P_c / n_c >= P_m / n_m, or n_c <= n_m and P_c >= P_m,
        //   X_c <= X_m            when P_c <= P_m and n_c <= n_m,
        //   X_c <= n_c x_m        when P_c <= P_m and n_c >= n_m, or n_c <= n_m and P_c / n_c <= P_m / n_m.
        // The interval is cut to them and the point prediction moved inside. Measured tables break the
        // per-worker rules by a few percent (K80, tests/fixtures/elastic: 7 workers run faster each
        // than 2), so a bound from a per-worker rule is loosened by speed_noise, up or down (a lower
        // bound must stay pessimistic: the commitment may rest on it).
        if (!e.tried) {
            for (const auto& [m, speed] : mean) {
                const double scaled = speed * c.workers / m.workers;
                const std::int64_t c_ratio = std::int64_t{c.ps} * m.workers, m_ratio = std::int64_t{m.ps} * c.workers;
                if (m.ps <= c.ps && m.workers <= c.workers) e.lower = std::max(e.lower, speed);
                if ((m.workers <= c.workers && c_ratio >= m_ratio) || (c.workers <= m.workers && c.ps >= m.ps))
                    e.lower = std::max(e.lower, scaled * (1.0 - o.speed_noise));
                if (c.ps <= m.ps && c.workers <= m.workers) e.upper = std::min(e.upper, speed * (1.0 + o.speed_noise));
                if ((c.ps <= m.ps && c.workers >= m.workers) || (c.workers <= m.workers && c_ratio <= m_ratio))
                    e.upper = std::min(e.upper, scaled * (1.0 + o.speed_noise));
            }
            if (model) e.steps_per_s = std::clamp(e.steps_per_s, e.lower, std::max(e.lower, e.upper));
        }
        e.upper = std::max(e.upper, e.lower);
        e.time_s = e.steps_per_s > 0.0 ? job.remaining_steps / e.steps_per_s : std::numeric_limits<double>::infinity();
        e.cost_usd = de::cost_of(job, c, e.steps_per_s);
        d.candidates.push_back(e);
    }
    const auto& cands = d.candidates;
    const auto config = [](const elastic_candidate& e) { return ps_configuration{e.ps, e.workers}; };
    const auto pessimistic = [&](const elastic_candidate& e) { return de::cost_of(job, config(e), e.lower); };
    const auto optimistic = [&](const elastic_candidate& e) { return de::cost_of(job, config(e), e.upper); };

    // The commitment: least pessimistic cost among those that meet the deadline pessimistically.
    const elastic_candidate* commit = nullptr;
    for (const auto& e : cands)
        if (de::meets(job, e.lower) && (commit == nullptr || pessimistic(e) < pessimistic(*commit))) commit = &e;

    // The PS bottleneck at the reference configuration.
    const auto bottleneck_at = [&](const ps_configuration& c, double speed) {
        if (!model) return std::pair{0.0, false};
        const double capacity = c.ps * d.ps_bandwidth_bytes_per_s / two_s;
        const double demand = c.workers / (d.compute_s + two_s / d.required_bandwidth_bytes_per_s);
        return std::pair{de::ps_utilisation(speed, c.ps, model->network), capacity < demand};
    };

    const auto finish = [&](const elastic_candidate& e, elastic_action action, std::string why) {
        result.status = solve_status::feasible;
        result.plan = elastic_plan{.ps = e.ps, .workers = e.workers, .action = action, .why = std::move(why)};
        result.objective_value = std::isfinite(e.cost_usd) ? e.cost_usd : o.trial_s * job.usd_per_s(config(e));
        const ps_configuration reference = request.current.value_or(config(e));
        double speed = e.steps_per_s;
        for (const auto& c : cands)
            if (config(c) == reference) speed = c.steps_per_s;
        std::tie(d.ps_utilisation, d.ps_bottleneck) = bottleneck_at(reference, speed);
        result.counters.evaluations = static_cast<std::int64_t>(cands.size());
        result.counters.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return result;
    };
    const auto money = [](double usd) { return detail::format_number(std::round(usd * 100.0) / 100.0) + " USD"; };

    if (mean.empty()) {
        const elastic_candidate* first = nullptr;
        if (job.deadline_s) {
            // With a deadline: the largest cluster, the one that dominates (as many PS and workers or
            // more) the most others -- by the model's rule that a PS or a worker more never lowers the
            // cluster's rate, no configuration it dominates is faster (when it dominates every other, it
            // is the fastest). A first trial anywhere else can spend the deadline's slack before anything
            // is known; from this one, every later trial has a measured commitment to fall back on.
            const auto dominated = [&](const elastic_candidate& e) {
                return std::count_if(cands.begin(), cands.end(),
                                     [&](const elastic_candidate& other) { return other.ps <= e.ps && other.workers <= e.workers; });
            };
            std::tuple<std::ptrdiff_t, std::int32_t, std::int32_t> best{-1, 0, 0};
            for (const auto& e : cands)
                if (const std::tuple key{dominated(e), e.workers, e.ps}; key > best) {
                    best = key;
                    first = &e;
                }
            return finish(*first, elastic_action::trial, "nothing measured yet, a deadline to meet: a first trial on the largest cluster");
        }
        // Without one: the fewest PS with the fewest workers (2 or more when there are) -- cheap, and
        // the smallest cluster where the PS can be contended.
        const auto key = [](const elastic_candidate& e) { return std::tuple{e.ps, e.workers < 2, e.workers}; };
        for (const auto& e : cands)
            if (first == nullptr || key(e) < key(*first)) first = &e;
        return finish(*first, elastic_action::trial, "nothing measured yet: a first trial on the smallest cluster with 2+ workers");
    }

    // Contenders: untried, optimistically able to meet the deadline and to beat the commitment.
    const double bar = commit != nullptr ? pessimistic(*commit) * (1.0 - o.min_gain) : std::numeric_limits<double>::infinity();
    // Trials stay near what was measured (the model extrapolates badly from one or two points):
    // a PS count at most one from a measured one, and a worker count within a factor of 2 of it.
    const auto near_measured = [&](const elastic_candidate& e) {
        for (const auto& [c, speed] : mean)
            if (std::abs(e.ps - c.ps) <= 1 && e.workers <= 2 * c.workers && 2 * e.workers >= c.workers) return true;
        return false;
    };
    std::vector<const elastic_candidate*> contenders;
    for (const auto& e : cands) {
        if (e.tried || !de::meets(job, e.upper) || !(optimistic(e) < bar) || !near_measured(e)) continue;
        // Safe: if the trial made no more progress than `lower`, the commitment still meets the
        // deadline. A blind trial (nothing bounds its speed below: it may make no progress at all)
        // spends at most an even share of the commitment's slack among the trials left, so that it
        // cannot use up what the others need.
        if (commit != nullptr && job.deadline_s) {
            const double slack_s = *job.deadline_s - job.remaining_steps / commit->lower;
            const double spend_s = o.trial_s * (1.0 - e.lower / commit->lower);
            const double share = e.lower > 0.0 ? 1.0 : 1.0 / std::max(1, o.max_trials - d.trials);
            if (spend_s > share * slack_s) continue;
        }
        contenders.push_back(&e);
    }

    if (!contenders.empty() && d.trials < o.max_trials) {
        // With a PS bottleneck at the reference, a PS more (same workers) comes first.
        const elastic_candidate* reference = commit;
        if (request.current)
            for (const auto& e : cands)
                if (config(e) == *request.current) reference = &e;
        if (reference != nullptr && reference->tried) {
            if (const auto [u, bottleneck] = bottleneck_at(config(*reference), reference->steps_per_s); bottleneck)
                for (const auto* e : contenders)
                    if (e->ps == reference->ps + 1 && e->workers == reference->workers)
                        return finish(*e, elastic_action::trial,
                                      "PS bottleneck at " + to_string(config(*reference)) + " (PS at " +
                                          detail::format_number(std::round(u * 100.0)) +
                                          "% of its fitted capacity, below the workers' demand): try a PS more");
        }
        const elastic_candidate* pick = nullptr;
        const auto better = [&](const elastic_candidate* a, const elastic_candidate* b) {
            const bool ma = de::meets(job, a->steps_per_s), mb = de::meets(job, b->steps_per_s);
            if (ma != mb) return ma;
            // Neither is predicted to meet the deadline: the one surest to come near it.
            if (!ma) return std::pair{a->lower, a->steps_per_s} > std::pair{b->lower, b->steps_per_s};
            // Optimism in the face of uncertainty (Auer, Cesa-Bianchi and Fischer, "Finite-time Analysis
            // of the Multiarmed Bandit Problem", Machine Learning 47, 2002: UCB1): the least optimistic
            // cost, so that a wide interval is tried before a narrow one of the same point cost (one not
            // bounded above yet has an optimistic cost of 0 and comes first, as an untried arm in UCB1).
            if (optimistic(*a) != optimistic(*b)) return optimistic(*a) < optimistic(*b);
            if (a->cost_usd != b->cost_usd) return a->cost_usd < b->cost_usd;
            return a->upper / std::max(a->lower, 1e-300) > b->upper / std::max(b->lower, 1e-300);
        };
        for (const auto* e : contenders)
            if (pick == nullptr || better(e, pick)) pick = e;
        std::string why = "the intervals leave the choice open: " + to_string(config(*pick)) +
                          (std::isfinite(pick->upper) ? " may finish for " + money(optimistic(*pick))
                                                      : " (its speed not bounded above yet) may be the cheapest");
        why += commit != nullptr ? " against " + money(pessimistic(*commit)) + " committed to " + to_string(config(*commit))
                                 : " and nothing measured meets the deadline yet";
        return finish(*pick, elastic_action::trial, why);
    }

    if (commit != nullptr) {
        std::string why = d.trials >= o.max_trials && !contenders.empty()
                              ? "trials used up (" + std::to_string(d.trials) + "): the least cost measured or certain"
                              : "no configuration left that may cut the cost by " + detail::format_number(o.min_gain * 100.0) + "%";
        why += ": " + money(pessimistic(*commit)) + " to finish";
        return finish(*commit, elastic_action::commit, why);
    }
    // Nothing meets the deadline pessimistically: the cheapest that meets it by the point
    // prediction, else the fastest.
    const elastic_candidate* best = nullptr;
    for (const auto& e : cands)
        if (de::meets(job, e.steps_per_s) && (best == nullptr || e.cost_usd < best->cost_usd)) best = &e;
    if (best != nullptr) return finish(*best, elastic_action::commit, "meets the deadline by its predicted speed only");
    const elastic_candidate* fastest = &cands.front();
    for (const auto& e : cands)
        if (e.steps_per_s > fastest->steps_per_s) fastest = &e;
    bool any_upper = false;
    for (const auto& e : cands) any_upper = any_upper || de::meets(job, e.upper);
    finish(*fastest, elastic_action::commit, "no configuration is predicted to meet the deadline: the fastest");
    if (!any_upper) {
        result.status = solve_status::infeasible;
        result.reason = "no configuration meets the deadline even at the upper end of its interval; the plan is the fastest";
    }
    return result;
}

}  // namespace dnnplan
