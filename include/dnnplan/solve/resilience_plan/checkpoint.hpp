#pragma once
// The checkpoint-restart planner: for a job that checkpoints and a preemption process of its
// instances, the interval of least E[T] or of greatest P(T <= D), and its figures, in the one
// solver shape (docs/models/checkpoint-restart.md, "The best interval").
//
// The process is a preemption_process (preemption/process.hpp) held in the request like the
// resilience planner's offers hold theirs (preemption_process_variant; a type of one's own goes in
// through any_preemption_process):
//   - poisson_preemption: the exact model of preemption/checkpoint_restart.hpp (Young's and Daly's
//     intervals, the exact E[T], P(T <= D) with a proven error bound), with lambda = instances x
//     its rate (the first loss among independent exponential lifetimes) and a restart of R plus
//     its replacement delay and an instance's readiness;
//   - any other process: the interval the exact model chooses at the process's mean rate, and its
//     E[T] and P(T <= D) estimated by replaying `options.samples` realisations of the process
//     (preemption/checkpoint_replay.hpp; seeded, deterministic).

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/format.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/checkpoint_probability.hpp>
#include <dnnplan/preemption/checkpoint_replay.hpp>
#include <dnnplan/preemption/checkpoint_restart.hpp>
#include <dnnplan/preemption/sampling.hpp>
#include <dnnplan/search/search_core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace dnnplan {

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
    /// A process other than poisson_preemption: the realisations replayed (seeds 1..samples, or
    /// that many start times of a trace), >= 1. The estimates' error shrinks as 1 / sqrt(samples).
    std::int32_t samples = 200;
    /// A process other than poisson_preemption: the replayed horizon, as a multiple of the
    /// deadline (finite, >= 1); a run not finished by then has no completion time.
    double horizon_deadlines = 3.0;

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        if (to_string(objective) == "unknown")
            throw invalid_input(p + "objective", "unknown", enum_expected<checkpoint_objective>());
        if (!(probability_tolerance >= 1e-10 && probability_tolerance <= 0.005))
            throw invalid_input(p + "probability_tolerance", detail::format_number(probability_tolerance),
                                "a number in [1e-10, 0.005]");
        detail::require_at_least(p + "max_candidates", max_candidates, 1);
        detail::require_at_least(p + "samples", samples, 1);
        if (!(horizon_deadlines >= 1.0) || !std::isfinite(horizon_deadlines))
            throw invalid_input(p + "horizon_deadlines", detail::format_number(horizon_deadlines), "a finite number >= 1");
    }
};

struct checkpoint_request {
    double work_h = 1.0;        ///< W, > 0
    double checkpoint_h = 0.0;  ///< delta, >= 0 (> 0 when the interval is chosen)
    double restart_h = 0.0;     ///< R, >= 0: after every interruption, once the instances are usable
    /// How the job's instances are preempted (default: a Poisson process at rate 0: never).
    preemption_process_variant preemption = poisson_preemption{};
    std::int32_t instances = 1;          ///< the instances the job holds (>= 1): the loss of any one interrupts it
    std::int64_t instance_ready_ms = 0;  ///< an added instance is usable after it (>= 0)
    double deadline_h = 1.0;             ///< D, > 0
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
        detail::sampling::validate(preemption, p + "preemption");
        detail::require_at_least(p + "instances", instances, 1);
        detail::require_at_least(p + "instance_ready_ms", instance_ready_ms, 0);
        detail::require_positive(p + "deadline_h", deadline_h);
        if (interval_h)
            checkpoint_restart_model{.work_h = work_h, .interval_h = *interval_h, .checkpoint_h = checkpoint_h, .restart_h = restart_h}
                .validate(path);
        options.validate(p + "options");
    }

    /// Whether the figures are the exact model's (a Poisson process) or estimated by replay.
    [[nodiscard]] bool exact() const noexcept { return std::holds_alternative<poisson_preemption>(preemption); }

    /// lambda: the job's preemptions per hour, instances x the process's mean rate per
    /// instance-hour (for a Poisson process the rate of the first loss among the instances).
    [[nodiscard]] double preemptions_per_h() const {
        return detail::sampling::rate_of(preemption) * static_cast<double>(instances);
    }

    /// R': the model's restart, R plus the time until a replacement is usable (a Poisson process's
    /// replacement delay and instance_ready_ms; another process's delays are in its events).
    [[nodiscard]] double model_restart_h() const {
        return restart_h + static_cast<double>(detail::sampling::replacement_delay_ms(preemption) + instance_ready_ms) / 3.6e6;
    }

    /// The model of preemption/checkpoint_restart.hpp at interval `tau` (lambda, R' above).
    [[nodiscard]] checkpoint_restart_model model(double tau) const {
        return {.work_h = work_h, .interval_h = tau, .checkpoint_h = checkpoint_h, .restart_h = model_restart_h(),
                .preemptions_per_h = preemptions_per_h()};
    }
};

struct checkpoint_plan {
    double interval_h = 0.0;       ///< tau used
    std::int64_t segments = 0;     ///< ceil(W / tau)
    double last_segment_h = 0.0;   ///< work in the last segment
    double no_failure_h = 0.0;     ///< W + n delta
    double expected_h = 0.0;       ///< E[T]: exact (a Poisson process) or the mean of the replayed runs
    double p_meet_deadline = 0.0;  ///< P(T <= D)
    /// |p_meet_deadline - exact| <= this (a Poisson process: a proven bound); the 95% half width
    /// of the estimate (another process).
    double p_error_bound = 0.0;
    friend bool operator==(const checkpoint_plan&, const checkpoint_plan&) = default;
};

struct checkpoint_details {
    double preemptions_per_h = 0.0;            ///< lambda used (request.preemptions_per_h())
    std::optional<double> young_interval_h{};  ///< none when lambda = 0 (or 1 / it overflows)
    std::optional<double> daly_interval_h{};
    std::optional<double> continuous_optimal_interval_h{};  ///< the exact minimiser of Daly's E[T]
    double daly_expected_h = 0.0;              ///< Daly's formula at the interval used
    std::string note{};                        ///< how the answer was reached, when it is optimal
    friend bool operator==(const checkpoint_details&, const checkpoint_details&) = default;
};

using checkpoint_result = solve_result<checkpoint_plan, checkpoint_details>;

namespace detail::checkpoint {

/// The exact model's figures of the interval tau.
[[nodiscard]] inline checkpoint_plan evaluate_plan(const checkpoint_request& r, double tau) {
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
    const double lambda = r.preemptions_per_h();
    if (!std::isnormal(lambda)) return 1;  // 0 or subnormal: tau* = v / lambda > 1e300 W
    const double v = lambda * continuous_optimal_interval_h(r.checkpoint_h, lambda);
    const double real_n = std::min(lambda * r.work_h / v, 1e15);
    const auto lo = static_cast<std::int64_t>(std::max(1.0, std::floor(real_n)));
    const std::int64_t hi = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(real_n)));
    const double w = r.work_h;
    const auto mean = [&](std::int64_t n) { return expected_completion_h(r.model(w / static_cast<double>(n))); };
    return mean(hi) < mean(lo) ? hi : lo;
}

/// Young's, Daly's and the continuous optimal interval at lambda (none without preemptions).
inline void reference_intervals(checkpoint_details& d, double checkpoint_h, double lambda) {
    d.preemptions_per_h = lambda;
    if (!(lambda > 0.0 && std::isfinite(lambda) && std::isfinite(1.0 / lambda))) return;
    d.young_interval_h = young_interval_h(checkpoint_h, 1.0 / lambda);
    d.daly_interval_h = daly_interval_h(checkpoint_h, 1.0 / lambda);
    if (checkpoint_h > 0.0 && std::isnormal(lambda)) d.continuous_optimal_interval_h = continuous_optimal_interval_h(checkpoint_h, lambda);
}

/// The interval the exact model chooses, and whether the choice is proven.
struct interval_choice {
    checkpoint_plan plan{};
    bool proven = true;                      ///< best within the options' tolerance; else a local search
    std::string how{};                       ///< a note when proven, the reason when not
    std::optional<double> probability_bound{};  ///< max over the candidates of P + its error bound (every candidate compared)
    std::int64_t evaluations = 0;
};

/// The equal splits tau = W / n compared by P(T <= D), each evaluated once.
class split_candidates {
public:
    explicit split_candidates(const checkpoint_request& r) : r_(r) {}

    [[nodiscard]] double p_at(std::int64_t n) {
        for (const auto& [m, plan] : seen_)
            if (m == n) return plan.p_meet_deadline;
        seen_.emplace_back(n, evaluate_plan(r_, r_.work_h / static_cast<double>(n)));
        return seen_.back().second.p_meet_deadline;
    }
    [[nodiscard]] std::int64_t count() const noexcept { return static_cast<std::int64_t>(seen_.size()); }

    /// The greatest P, ties within the error bounds to the smaller E[T]; and max(P + its bound).
    [[nodiscard]] std::pair<checkpoint_plan, double> best() const {
        std::size_t top = 0;
        double bound = 0.0;
        for (std::size_t i = 0; i < seen_.size(); ++i) {
            if (seen_[i].second.p_meet_deadline > seen_[top].second.p_meet_deadline) top = i;
            bound = std::max(bound, std::min(1.0, seen_[i].second.p_meet_deadline + seen_[i].second.p_error_bound));
        }
        std::size_t chosen = top;
        const checkpoint_plan& t = seen_[top].second;
        for (std::size_t i = 0; i < seen_.size(); ++i)
            if (seen_[i].second.p_meet_deadline >= t.p_meet_deadline - t.p_error_bound - seen_[i].second.p_error_bound &&
                seen_[i].second.expected_h < seen_[chosen].second.expected_h)
                chosen = i;
        return {seen_[chosen].second, bound};
    }

private:
    const checkpoint_request& r_;
    std::vector<std::pair<std::int64_t, checkpoint_plan>> seen_;
};

/// A local search over n = 1..n_max (P over n is not known to be unimodal): from the
/// E[T]-optimal count, steps doubling uphill until P falls, then the bracket halved around the
/// best point, within `budget` evaluations.
inline void local_probability_search(split_candidates& c, std::int64_t n_mean, std::int64_t n_max, std::int64_t budget) {
    std::int64_t b = std::min(n_mean, n_max), a = std::max<std::int64_t>(1, b - 1), top = std::min(n_max, b + 1);
    const std::int64_t dir = top > b && c.p_at(top) > c.p_at(b) ? 1 : (a < b && c.p_at(a) > c.p_at(b) ? -1 : 0);
    for (std::int64_t step = 1; dir != 0 && c.count() < budget; step *= 2) {
        const std::int64_t next = std::clamp<std::int64_t>(b + dir * step, 1, n_max);
        if (next == b) break;
        if (c.p_at(next) > c.p_at(b)) {
            (dir > 0 ? a : top) = b;
            b = next;
            (dir > 0 ? top : a) = std::clamp<std::int64_t>(b + dir, 1, n_max);
        } else {
            (dir > 0 ? top : a) = next;
            break;
        }
    }
    while (top - a > 2 && c.count() < budget) {
        const bool go_left = b - a > top - b;
        const std::int64_t x = go_left ? b - (b - a) / 2 : b + (top - b) / 2;
        if (c.p_at(x) > c.p_at(b)) (go_left ? top : a) = b, b = x;
        else (go_left ? a : top) = x;
    }
}

/// max_deadline_probability: every equal split with W + n delta <= D when there are at most
/// options.max_candidates (proven), else the local search (not proven).
[[nodiscard]] inline interval_choice greatest_probability(const checkpoint_request& r) {
    const std::int64_t n_mean = best_mean_segments(r);
    // P = 0 exactly once W + n delta > D.
    const double n_max_real = std::floor((r.deadline_h - r.work_h) / r.checkpoint_h);
    if (!(n_max_real >= 1.0))
        return {.plan = evaluate_plan(r, r.work_h / static_cast<double>(n_mean)),
                .how = "the deadline is below W + delta: every interval has P(T <= D) = 0; the interval of least E[T]",
                .probability_bound = 0.0, .evaluations = 1};
    const auto n_max = static_cast<std::int64_t>(std::min(n_max_real, 1e15));
    const std::int64_t budget = r.options.max_candidates;
    split_candidates c(r);
    const bool all = n_max <= budget;
    if (all) {
        for (std::int64_t n = 1; n <= n_max; ++n) (void)c.p_at(n);
    } else {
        local_probability_search(c, n_mean, n_max, budget);
    }
    const auto [plan, bound] = c.best();
    if (all)
        return {.plan = plan,
                .how = "the best of the equal splits tau = W / n, n = 1.." + std::to_string(n_max) +
                       ", within the error bounds of P (none reaches more than " + detail::format_significant(bound, 6) + ")",
                .probability_bound = bound, .evaluations = c.count()};
    return {.plan = plan, .proven = false,
            .how = "a local search over n = 1.." + std::to_string(n_max) + " from the E[T]-optimal count (" +
                   std::to_string(c.count()) + " evaluated, options.max_candidates = " + std::to_string(budget) +
                   "): not proven optimal",
            .evaluations = c.count()};
}

/// The exact model's choice: the given interval, the E[T]-optimal one (also the best P without
/// preemptions: one segment), or the search over the equal splits by P.
[[nodiscard]] inline interval_choice choose_interval(const checkpoint_request& r) {
    if (r.interval_h) return {.plan = evaluate_plan(r, *r.interval_h), .how = "interval_h was given: evaluated, not searched", .evaluations = 1};
    if (r.options.objective == checkpoint_objective::min_expected_time || r.preemptions_per_h() == 0.0)
        return {.plan = evaluate_plan(r, r.work_h / static_cast<double>(best_mean_segments(r))), .evaluations = 1};
    return greatest_probability(r);
}

[[nodiscard]] inline double objective_of(const checkpoint_request& r, const checkpoint_plan& p) {
    return r.options.objective == checkpoint_objective::min_expected_time ? p.expected_h : p.p_meet_deadline;
}

/// The exact model's answer (a Poisson process): the choice's status, or infeasible when E[T]
/// leaves the double range. A P(T <= D) whose error bound stayed above the tolerance leaves a
/// choice by P unproven (a note otherwise).
[[nodiscard]] inline checkpoint_result solve_exact(const checkpoint_request& r, checkpoint_result result) {
    interval_choice choice = choose_interval(r);
    result.counters.evaluations = choice.evaluations;
    const checkpoint_plan& plan = choice.plan;
    const double lambda = r.preemptions_per_h();
    if (!std::isfinite(plan.expected_h)) {
        result.status = solve_status::infeasible;
        result.reason = "the expected completion time exceeds the double range (lambda (tau + delta) = " +
                        detail::format_number(lambda * (plan.interval_h + r.checkpoint_h)) +
                        ", lambda R = " + detail::format_number(lambda * r.model_restart_h()) + "): the job practically never finishes";
        return result;
    }
    result.details.daly_expected_h = daly_expected_completion_h(r.model(plan.interval_h));
    if (plan.p_error_bound > r.options.probability_tolerance) {
        const std::string short_of = "P(T <= D) only reached an error bound of " + detail::format_number(plan.p_error_bound) +
                                     " (1,048,576 Fourier terms), above options.probability_tolerance";
        if (r.options.objective == checkpoint_objective::max_deadline_probability) choice.proven = false;
        choice.how += std::string(choice.how.empty() ? "" : "; ") + short_of;
    }
    result.plan = plan;
    result.objective_value = objective_of(r, plan);
    if (choice.proven) {
        result.status = solve_status::optimal;
        result.bound = result.objective_value;
        result.details.note = std::move(choice.how);
    } else {
        result.status = solve_status::feasible;
        result.bound = choice.probability_bound;
        result.reason = std::move(choice.how);
    }
    return result;
}

/// The completion times of options.samples realisations of the process replayed at interval tau
/// (+inf: not finished within the horizon).
[[nodiscard]] inline std::vector<double> replayed_times(const checkpoint_request& r, double tau) {
    const double horizon_h = r.deadline_h * r.options.horizon_deadlines;
    const auto horizon_ms = static_cast<std::int64_t>(std::ceil(horizon_h * 3.6e6));
    const auto deadline_ms = static_cast<std::int64_t>(std::ceil(r.deadline_h * 3.6e6));
    const checkpoint_replay_options o{.work_h = r.work_h, .interval_h = tau, .checkpoint_h = r.checkpoint_h, .restart_h = r.restart_h,
                                      .replacement_delay_h = static_cast<double>(r.instance_ready_ms) / 3.6e6,
                                      .horizon_h = static_cast<double>(horizon_ms) / 3.6e6};
    std::vector<double> times;
    times.reserve(static_cast<std::size_t>(r.options.samples));
    for (std::int32_t k = 0; k < r.options.samples; ++k) {
        const instance_trace events = sampling::realisation(r.preemption, r.instances, horizon_ms, deadline_ms, k, r.options.samples);
        const checkpoint_replay run = replay_checkpoint_restart(events, r.instances, o);
        times.push_back(run.outcome == replay_outcome::finished ? run.end_h : std::numeric_limits<double>::infinity());
    }
    return times;
}

/// Another process: the exact model's interval at the process's mean rate, its figures estimated
/// by replay. An E[T] objective whose runs do not all finish within the horizon has no value: no
/// plan found, the interval as best_effort.
[[nodiscard]] inline checkpoint_result solve_by_replay(const checkpoint_request& r, checkpoint_result result) {
    const double lambda = r.preemptions_per_h();
    if (!r.interval_h && !std::isfinite(lambda)) {
        result.status = solve_status::no_plan_found;
        result.reason = "the process's mean rate is not finite (removals without instance-hours): no interval can be chosen; give interval_h";
        return result;
    }
    const interval_choice choice = choose_interval(r);
    result.counters.evaluations = choice.evaluations;
    checkpoint_plan plan = choice.plan;
    if (std::isfinite(lambda)) result.details.daly_expected_h = daly_expected_completion_h(r.model(plan.interval_h));
    const std::vector<double> times = replayed_times(r, plan.interval_h);
    std::tie(plan.p_meet_deadline, plan.p_error_bound) = sampling::fraction_met(times, r.deadline_h);
    const bool all_finished = std::all_of(times.begin(), times.end(), [](double t) { return std::isfinite(t); });
    double sum = 0.0;
    for (const double t : times) sum += t;
    plan.expected_h = sum / static_cast<double>(times.size());
    const std::string how = "E[T] and P(T <= D) estimated over " + std::to_string(times.size()) +
                            " replayed realisations of the process, at the interval " +
                            (r.interval_h ? std::string("given") : "the exact model chooses at its mean rate (" +
                                                                     detail::format_significant(lambda) + " preemptions per hour for the job)");
    const bool by_mean = r.options.objective == checkpoint_objective::min_expected_time;
    if (by_mean && !all_finished) {
        result.status = solve_status::no_plan_found;
        result.best_effort = plan;
        result.reason = "some replayed runs do not finish within the horizon (options.horizon_deadlines = " +
                        detail::format_number(r.options.horizon_deadlines) + " deadlines): E[T] is unknown; " + how;
        return result;
    }
    const auto n = static_cast<std::int64_t>(times.size());
    result.status = solve_status::feasible;
    result.figures = figure_kind::estimated;
    result.estimate = by_mean ? sampling::mean_estimate(times, plan.expected_h)
                              : figure_estimate{.lower = std::max(0.0, plan.p_meet_deadline - plan.p_error_bound),
                                                .upper = std::min(1.0, plan.p_meet_deadline + plan.p_error_bound), .samples = n};
    result.objective_value = objective_of(r, plan);
    result.plan = plan;
    result.reason = how;
    return result;
}

}  // namespace detail::checkpoint

/// The interval and its figures. With a poisson_preemption process (the exact model):
///   - interval given: optimal (nothing to search; objective_value = bound = the objective's figure);
///   - min_expected_time: optimal over every tau > 0 (detail::checkpoint::best_mean_segments),
///     objective_value = bound = E[T];
///   - max_deadline_probability: every equal split W / n with W + n delta <= D compared when there
///     are at most options.max_candidates (optimal over them within the error bounds of P; the note
///     gives max(P + its error bound)), or a window of them around the E[T]-optimal count
///     (feasible, no bound). No n with W + n delta <= D: every P is 0; the E[T]-optimal interval,
///     optimal. A P whose error bound stayed above the tolerance makes a choice by P feasible.
///   - infeasible, no plan: E[T] beyond the double range (lambda (tau + delta) or lambda R > ~700).
/// With lambda = 0 one segment (tau = W) is best for both objectives. An optimal result's note
/// (details.note) says how it was reached. With any other process: feasible with estimated figures
/// (the objective's 95% interval and the runs in `estimate`); no_plan_found when E[T] is the
/// objective and some runs do not finish within the horizon, or when the mean rate is infinite
/// and no interval is given.
[[nodiscard]] inline checkpoint_result solve(const checkpoint_request& request) {
    const stopwatch clock;
    request.validate();
    checkpoint_result result;
    detail::checkpoint::reference_intervals(result.details, request.checkpoint_h, request.preemptions_per_h());
    result = request.exact() ? detail::checkpoint::solve_exact(request, std::move(result))
                             : detail::checkpoint::solve_by_replay(request, std::move(result));
    result.counters.elapsed_s = clock.elapsed_s();
    return result;
}

}  // namespace dnnplan
