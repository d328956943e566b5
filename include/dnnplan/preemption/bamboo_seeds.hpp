#pragma once
// Bamboo's random mode over a range of seeds: every seed's run, and over the completed runs the
// mean of each of Bamboo's figures with a Student-t interval of the mean,
// mean +- t_{(1 + c) / 2, n - 1} s / sqrt(n) (s the sample standard deviation; the runs are
// independent: one seed each). The runs of
// different seeds are what Bamboo's Python simulator gives for them (bamboo_simulator.hpp).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/numeric_kernels.hpp>
#include <dnnplan/preemption/bamboo_simulator.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// A figure's mean over the completed runs and the interval of the mean; none: no completed run
/// (mean), fewer than two (interval).
struct run_figure_summary {
    std::optional<double> mean{};
    std::optional<double> lower{}, upper{};
    friend bool operator==(const run_figure_summary&, const run_figure_summary&) = default;
};

/// Bamboo's figures by name, in its output's order, with how each is read off a run.
struct bamboo_figure {
    std::string_view name;
    double (*of)(const bamboo_run&);
};

inline constexpr std::array<bamboo_figure, 10> bamboo_figures{{
    {"preemptions", [](const bamboo_run& r) { return static_cast<double>(r.preemptions); }},
    {"fatal_failures", [](const bamboo_run& r) { return static_cast<double>(r.fatal_failures); }},
    {"steps", [](const bamboo_run& r) { return static_cast<double>(r.steps); }},
    {"average_instances", [](const bamboo_run& r) { return r.average_instances; }},
    {"samples_per_s", [](const bamboo_run& r) { return r.samples_per_s; }},
    {"usd_per_h", [](const bamboo_run& r) { return r.usd_per_h; }},
    {"value", [](const bamboo_run& r) { return r.value; }},
    {"on_demand_samples_per_s", [](const bamboo_run& r) { return r.on_demand_samples_per_s; }},
    {"on_demand_usd_per_h", [](const bamboo_run& r) { return r.on_demand_usd_per_h; }},
    {"on_demand_value", [](const bamboo_run& r) { return r.on_demand_value; }},
}};

struct bamboo_seed_summary {
    std::uint64_t first_seed = 1, last_seed = 1;
    double confidence = 0.95;
    std::vector<bamboo_run> runs{};          ///< seed first_seed + i at [i]
    std::int64_t completed = 0;              ///< runs with status completed: the summaries are over them
    std::array<run_figure_summary, 10> figures{};  ///< in the order of bamboo_figures

    [[nodiscard]] const run_figure_summary& figure(std::string_view name) const {
        for (std::size_t i = 0; i < bamboo_figures.size(); ++i)
            if (bamboo_figures[i].name == name) return figures[i];
        throw invalid_input("name", std::string(name), "one of Bamboo's figures (bamboo_figures)");
    }
};

/// The most seeds one call runs (each is a whole simulation; 2,000 take about 0.1 s).
inline constexpr std::uint64_t max_bamboo_seeds = 10'000'000;

/// Bamboo's random mode for seeds first_seed..last_seed (inclusive). progress(done, seeds), when
/// given, is called after each run (on this thread). Throws invalid_input for bad options or
/// "last_seed" (before first_seed, or more than max_bamboo_seeds seeds) or "confidence" (in (0, 1)).
[[nodiscard]] inline bamboo_seed_summary simulate_bamboo_seeds(const bamboo_random_options& random, std::uint64_t first_seed,
                                                               std::uint64_t last_seed, const bamboo_options& options = {},
                                                               double confidence = 0.95,
                                                               const std::function<void(std::int64_t, std::int64_t)>& progress = {}) {
    if (last_seed < first_seed)
        throw invalid_input("last_seed", std::to_string(last_seed), "a seed >= first_seed (" + std::to_string(first_seed) + ")");
    if (last_seed - first_seed >= max_bamboo_seeds)
        throw invalid_input("last_seed", std::to_string(last_seed), "at most " + std::to_string(max_bamboo_seeds) + " seeds");
    if (!(confidence > 0.0 && confidence < 1.0))
        throw invalid_input("confidence", detail::format_number(confidence), "a probability in (0, 1)");
    random.validate();
    options.validate();
    bamboo_seed_summary out{.first_seed = first_seed, .last_seed = last_seed, .confidence = confidence};
    out.runs.reserve(static_cast<std::size_t>(last_seed - first_seed + 1));
    const auto seeds = static_cast<std::int64_t>(last_seed - first_seed + 1);
    for (std::uint64_t seed = first_seed;; ++seed) {
        out.runs.push_back(simulate_bamboo(random, seed, options));
        if (out.runs.back().status == bamboo_status::completed) ++out.completed;
        if (progress) progress(static_cast<std::int64_t>(out.runs.size()), seeds);
        if (seed == last_seed) break;
    }
    if (out.completed == 0) return out;
    const auto n = static_cast<double>(out.completed);
    const double t = out.completed >= 2 ? detail::student_t_quantile(n - 1.0, 0.5 + 0.5 * confidence) : 0.0;
    for (std::size_t f = 0; f < bamboo_figures.size(); ++f) {
        double sum = 0.0;
        for (const bamboo_run& r : out.runs)
            if (r.status == bamboo_status::completed) sum += bamboo_figures[f].of(r);
        const double mean = sum / n;
        out.figures[f].mean = mean;
        if (out.completed < 2) continue;
        double squares = 0.0;
        for (const bamboo_run& r : out.runs)
            if (r.status == bamboo_status::completed) squares += (bamboo_figures[f].of(r) - mean) * (bamboo_figures[f].of(r) - mean);
        const double half = t * std::sqrt(squares / (n - 1.0) / n);
        out.figures[f].lower = mean - half;
        out.figures[f].upper = mean + half;
    }
    return out;
}

}  // namespace dnnplan
