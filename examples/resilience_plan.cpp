// resilience_plan: training on preemptible instances (docs/solvers/resilience_plan.md).
//
//   resilience_plan simulate --trace FILE --workload NAME [--target-steps N] [--duration-h H] [--json]
//   resilience_plan simulate --removal-probability P --seeds A-B --workload NAME [--target-steps N]
//                            [--duration-h H] [--json]
//   resilience_plan checkpoint --work-h W --interval-h TAU --checkpoint-h DELTA --restart-h R
//                              --preemptions-per-h LAMBDA --deadline-h D [--json]
//   resilience_plan plan [PROBLEM.json] [--json] [--svg FILE]
//
// simulate: Bamboo's simulation of redundant computation (preemption/bamboo_simulator.hpp) on a
// trace (Bamboo's CSV) or in Bamboo's random mode over a range of seeds (means, 95% intervals of
// the means, and every seed's run), with Bamboo's defaults (12 h, 0.91 USD/h spot and 3.06 USD/h
// on-demand per instance), up to --target-steps and --duration-h when given. --model NAME is the
// deprecated spelling of --workload NAME (dnnplan 0.1; still read). checkpoint: checkpoint-restart
// at a given interval (solve/resilience_plan/checkpoint.hpp, Poisson preemptions): E[T],
// P(T <= D), Young's and Daly's intervals. plan: the
// resilience planner on a problem file (io/resilience_plan_json.hpp; an offer's preemption may be
// {"trace_csv": FILE}, a Bamboo trace read relative to the problem file) or on the bundled one
// (GPT-2 on Bamboo's p3 trace, q = 0.9); --svg draws each strategy's expected cost against its
// P(T <= D). Malformed input: one line on stderr, exit 2, nothing on stdout.

#include <dnnplan/io/bamboo_run_json.hpp>
#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/io/resilience_plan_json.hpp>
#include <dnnplan/preemption/bamboo_seeds.hpp>
#include <dnnplan/preemption/bamboo_simulator.hpp>
#include <dnnplan/solve/resilience_plan/checkpoint.hpp>
#include <dnnplan/solve/resilience_plan/solve.hpp>

#include <dnnplan_examples/bundled_data.hpp>

#include "cli_support.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace dnnplan_examples;

/// On an error: one line. --help prints every form (forms below).
constexpr std::string_view usage = "usage: resilience_plan simulate|checkpoint|plan ... (resilience_plan --help: every form)";

constexpr std::string_view forms =
    "usage: resilience_plan simulate --trace FILE --workload gpt2|bert|resnet|gnmt|vgg|alexnet [--target-steps N]\n"
    "                                [--duration-h H] [--json]\n"
    "       resilience_plan simulate --removal-probability P --seeds A-B --workload NAME [--target-steps N]\n"
    "                                [--duration-h H] [--json]\n"
    "       resilience_plan checkpoint --work-h W --interval-h TAU --checkpoint-h DELTA --restart-h R\n"
    "                                  --preemptions-per-h LAMBDA --deadline-h D [--json]\n"
    "       resilience_plan plan [PROBLEM.json] [--json] [--svg FILE]";

dnnplan::bamboo_workload workload_named(std::string_view flag, std::string_view name) {
    try {
        return dnnplan::parse_enum<dnnplan::bamboo_workload>(name, flag);
    } catch (const dnnplan::invalid_input& e) {
        throw command_line_error{std::string(flag) + " " + std::string(name) + ": expected " + e.expected()};
    }
}

// ---- simulate ------------------------------------------------------------------------------------

void print_run(const dnnplan::bamboo_run& r) {
    std::cout << "status: " << to_string(r.status) << (r.reason.empty() ? "" : " (" + r.reason + ")") << '\n'
              << "preemptions:       " << r.preemptions << '\n'
              << "fatal failures:    " << r.fatal_failures << '\n'
              << "steps:             " << r.steps << '\n'
              << "average instances: " << format(r.average_instances) << '\n'
              << "samples/s:         " << format(r.samples_per_s) << "  (on-demand " << format(r.on_demand_samples_per_s) << ")\n"
              << "USD/h:             " << format(r.usd_per_h) << "  (on-demand " << format(r.on_demand_usd_per_h) << ")\n"
              << "value (samples/s per USD/h): " << format(r.value) << "  (on-demand " << format(r.on_demand_value) << ")\n";
}

std::pair<std::uint64_t, std::uint64_t> seed_range(std::string_view text) {
    const auto dash = text.find('-');
    if (dash == std::string_view::npos) throw command_line_error{"--seeds expects A-B, found \"" + std::string(text) + "\""};
    const auto a = parse_number<std::uint64_t>("--seeds", text.substr(0, dash));
    const auto b = parse_number<std::uint64_t>("--seeds", text.substr(dash + 1));
    if (b < a) throw command_line_error{"--seeds " + std::string(text) + ": expected A <= B"};
    if (b - a >= 1'000'000) throw command_line_error{"--seeds " + std::string(text) + ": expected at most 1,000,000 seeds"};
    return {a, b};
}

/// The simulation's options: the workload named by --workload (or its deprecated spelling --model),
/// with Bamboo's defaults unless --target-steps or --duration-h say otherwise.
dnnplan::bamboo_options simulation_options(const std::optional<std::string>& workload, const std::optional<std::string>& old_flag,
                                           const std::optional<std::int64_t>& target_steps, const std::optional<double>& duration_h) {
    if (workload && old_flag) throw command_line_error{"--model is the deprecated spelling of --workload: give one of them"};
    if (!workload && !old_flag) throw command_line_error{"simulate needs --workload"};
    dnnplan::bamboo_options options;
    options.workload = workload ? dnnplan::bamboo_workload_preset(workload_named("--workload", *workload))
                                : dnnplan::bamboo_workload_preset(workload_named("--model", *old_flag));
    if (target_steps) {
        if (*target_steps < 1) throw command_line_error{"--target-steps " + std::to_string(*target_steps) + ": expected an integer >= 1"};
        options.target_steps = *target_steps;
    }
    if (duration_h) {
        if (!(*duration_h >= 0.0 && *duration_h <= 1e9))
            throw command_line_error{"--duration-h " + format(*duration_h) + ": expected a number of hours in [0, 1e9]"};
        options.duration_ms = std::llround(*duration_h * 3.6e6);
    }
    return options;
}

int simulate(int argc, char** argv) {
    std::optional<std::string> trace_file, workload, old_flag, seeds;
    std::optional<double> removal, duration_h;
    std::optional<std::int64_t> target_steps;
    bool json = false;
    (void)parse_command_line({text_flag("--trace", trace_file), text_flag("--workload", workload), text_flag("--model", old_flag),
                              text_flag("--seeds", seeds), number_flag("--removal-probability", removal),
                              number_flag("--target-steps", target_steps), number_flag("--duration-h", duration_h),
                              switch_flag("--json", json)},
                             argc, argv, 2);
    const dnnplan::bamboo_options options = simulation_options(workload, old_flag, target_steps, duration_h);
    if (trace_file) {
        if (removal || seeds) throw command_line_error{"--trace does not go with --removal-probability or --seeds"};
        const auto trace = read_input(*trace_file, [](std::istream& in) { return dnnplan::parse_instance_trace(in); });
        const dnnplan::bamboo_run r = dnnplan::simulate_bamboo(trace, options);
        if (json) std::cout << dnnplan::bamboo_run_json(r).dump(2) << '\n';
        else print_run(r);
        return 0;
    }
    if (!removal || !seeds) throw command_line_error{"simulate needs --trace FILE, or --removal-probability P and --seeds A-B"};
    if (!(*removal >= 0.0 && *removal <= 1.0))
        throw command_line_error{"--removal-probability " + format(*removal) + ": expected a probability in [0, 1]"};
    const auto [first, last] = seed_range(*seeds);
    const dnnplan::bamboo_random_options random{.capacity = options.workload.random_capacity, .removal_probability = *removal};
    std::optional<stderr_progress> progress(std::in_place, "resilience_plan", "seeds simulated");  // on a terminal only
    const dnnplan::bamboo_seed_summary summary = dnnplan::simulate_bamboo_seeds(random, first, last, options, 0.95, progress->callback());
    progress.reset();  // its line ends before the output
    if (json) {
        std::cout << dnnplan::bamboo_seeds_json(summary, options.workload.name, *removal, first, last).dump(2) << '\n';
        return 0;
    }
    std::cout << options.workload.name << ", removal probability " << format(*removal) << " per hour, seeds " << first << "-" << last
              << ": " << summary.completed << " of " << summary.runs.size() << " runs completed\n";
    if (summary.completed == 0) return 0;
    std::cout << "figure                    mean        95% interval of the mean\n";
    for (std::size_t f = 0; f < dnnplan::bamboo_figures.size(); ++f) {
        const auto& s = summary.figures[f];
        std::printf("%-24s  %-10s", std::string(dnnplan::bamboo_figures[f].name).c_str(), format(*s.mean).c_str());
        if (s.lower) std::printf("  [%s, %s]", format(*s.lower).c_str(), format(*s.upper).c_str());
        std::printf("\n");
    }
    return 0;
}

// ---- checkpoint ----------------------------------------------------------------------------------

int checkpoint(int argc, char** argv) {
    std::optional<double> work, interval, delta, restart, rate, deadline;
    bool json = false;
    (void)parse_command_line({number_flag("--work-h", work), number_flag("--interval-h", interval),
                              number_flag("--checkpoint-h", delta), number_flag("--restart-h", restart),
                              number_flag("--preemptions-per-h", rate), number_flag("--deadline-h", deadline),
                              switch_flag("--json", json)},
                             argc, argv, 2);
    const std::pair<std::string_view, const std::optional<double>*> required[] = {
        {"--work-h", &work},       {"--interval-h", &interval},         {"--checkpoint-h", &delta},
        {"--restart-h", &restart}, {"--preemptions-per-h", &rate}, {"--deadline-h", &deadline}};
    for (const auto& [flag_name, value] : required)
        if (!*value) throw command_line_error{"checkpoint needs " + std::string(flag_name)};
    // One instance preempted as a Poisson process at LAMBDA per hour: the job's rate.
    const dnnplan::checkpoint_request request{.work_h = *work, .checkpoint_h = *delta, .restart_h = *restart,
                                              .preemption = dnnplan::poisson_preemption{.rate_per_instance_h = *rate},
                                              .deadline_h = *deadline, .interval_h = *interval};
    dnnplan::checkpoint_result r;
    try {
        r = dnnplan::solve(request);
    } catch (const dnnplan::invalid_input& e) {
        // The library names the request's member; the user typed the flag.
        std::string flag_name = e.field() == "preemption.rate_per_instance_h" ? "--preemptions-per-h" : "--" + e.field();
        std::replace(flag_name.begin(), flag_name.end(), '_', '-');
        throw command_line_error{flag_name + " " + e.value() + ": expected " + e.expected()};
    }
    if (json) {
        std::cout << dnnplan::checkpoint_json(r).dump(2) << '\n';
        return 0;
    }
    if (!r.plan) {
        std::cout << "status: " << to_string(r.status) << ": " << r.reason << '\n';
        return 0;
    }
    std::cout << "segments:            " << r.plan->segments << " of " << format(r.plan->interval_h) << " h (last "
              << format(r.plan->last_segment_h) << " h)\n"
              << "no-failure time:     " << format(r.plan->no_failure_h) << " h\n"
              << "expected time E[T]:  " << (std::isfinite(r.plan->expected_h) ? format(r.plan->expected_h) + " h" : "beyond a double")
              << '\n'
              << "P(T <= " << format(*deadline) << " h):     " << format(r.plan->p_meet_deadline) << " (error <= "
              << format(r.plan->p_error_bound, 2) << ")\n"
              << "Young's interval:    "
              << (r.details.young_interval_h ? format(*r.details.young_interval_h) + " h" : "none (no preemptions)") << '\n'
              << "Daly's interval:     "
              << (r.details.daly_interval_h ? format(*r.details.daly_interval_h) + " h" : "none (no preemptions)") << '\n';
    return 0;
}

// ---- plan ----------------------------------------------------------------------------------------

/// The problem document with every {"trace_csv": FILE} replaced by the trace it names (read
/// relative to `folder`; the bundled problem's p3-trace.csv is compiled in).
template <class Json>
void resolve_traces(Json& document, const std::optional<std::filesystem::path>& folder, const std::string& what) {
    if (!document.is_object() || !document.contains("offers") || !document["offers"].is_array()) return;
    for (std::size_t i = 0; i < document["offers"].size(); ++i) {
        auto& offer = document["offers"][i];
        if (!offer.is_object() || !offer.contains("preemption")) continue;
        auto& preemption = offer["preemption"];
        if (!preemption.is_object() || !preemption.contains("trace_csv")) continue;
        const std::string field = "offers[" + std::to_string(i) + "].preemption.trace_csv";
        if (preemption.size() != 1 || !preemption["trace_csv"].is_string())
            throw input_error{what + ": " + field + ": expected {\"trace_csv\": FILE} alone"};
        const std::string file = preemption["trace_csv"].template get<std::string>();
        dnnplan::instance_trace trace;
        if (!folder) {
            if (file != "p3-trace.csv") throw input_error{what + ": " + field + " = " + file + ": the bundled problem has p3-trace.csv only"};
            trace = dnnplan::parse_instance_trace(dnnplan_examples::p3_trace_csv);
        } else {
            const std::filesystem::path path = std::filesystem::path(file).is_absolute() ? std::filesystem::path(file) : *folder / file;
            std::ifstream in(path);
            if (!in) throw input_error{what + ": " + field + ": cannot open " + path.string()};
            try {
                trace = dnnplan::parse_instance_trace(in);
            } catch (const dnnplan::error& e) {
                throw input_error{path.string() + ": " + e.what()};
            }
        }
        preemption = Json{{"trace", Json{{"events", Json(trace.events)}}}};  // io's instance_event layout
    }
}

std::string svg_of(const dnnplan::resilience_result& r, double q) {
    // Expected cost (log scale) against P(T <= D): one point per strategy, the threshold q dashed.
    // The axis spans at most four decades above the cheapest point; a costlier point (checkpoint-
    // restart on many spot instances can expect 1e50 USD) sits on the top edge, its cost written.
    const double width = 640, height = 400, left = 70, right = 190, top = 50, bottom = 50;
    double lo = 1e300, hi = 0.0;
    for (const auto& c : r.details.strategies)
        if (c.expected_usd && *c.expected_usd > 0) lo = std::min(lo, *c.expected_usd);
    if (lo == 1e300) lo = 1.0;
    for (const auto& c : r.details.strategies)
        if (c.expected_usd && *c.expected_usd > 0 && *c.expected_usd <= lo * 1e4) hi = std::max(hi, *c.expected_usd);
    const double y_lo = std::pow(10.0, std::floor(std::log10(lo)));
    const double y_hi = std::max(y_lo * 10.0, std::pow(10.0, std::ceil(std::log10(std::max(hi, lo)) + 1e-12)));
    const auto x_of = [&](double p) { return left + p * (width - left - right); };
    const auto y_of = [&](double usd) {
        return top + (std::log10(y_hi) - std::log10(usd)) / (std::log10(y_hi) - std::log10(y_lo)) * (height - top - bottom);
    };
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"22\" font-size=\"15\">Expected cost against P(finish by the deadline)</text>\n"
      << "<text x=\"" << left << "\" y=\"38\" fill=\"#555\">" << (r.plan ? "plan: " + std::string(to_string(r.plan->strategy)) : std::string("no plan meets q"))
      << ", q = " << format(q) << "</text>\n";
    // Axes with ticks.
    s << "<line x1=\"" << left << "\" y1=\"" << height - bottom << "\" x2=\"" << width - right << "\" y2=\"" << height - bottom
      << "\" stroke=\"black\"/>\n<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << height - bottom
      << "\" stroke=\"black\"/>\n";
    for (int i = 0; i <= 4; ++i) {
        const double p = i / 4.0;
        s << "<text x=\"" << x_of(p) << "\" y=\"" << height - bottom + 16 << "\" text-anchor=\"middle\">" << format(p) << "</text>\n";
    }
    for (double v = y_lo; v <= y_hi * 1.0001; v *= 10.0)
        s << "<text x=\"" << left - 6 << "\" y=\"" << y_of(v) + 4 << "\" text-anchor=\"end\">" << format(v) << "</text>\n";
    s << "<text x=\"" << (left + width - right) / 2 << "\" y=\"" << height - 12 << "\" text-anchor=\"middle\">P(T &lt;= D)</text>\n"
      << "<text x=\"16\" y=\"" << (top + height - bottom) / 2 << "\" transform=\"rotate(-90 16 " << (top + height - bottom) / 2
      << ")\" text-anchor=\"middle\">expected cost (USD)</text>\n"
      << "<line x1=\"" << x_of(q) << "\" y1=\"" << top << "\" x2=\"" << x_of(q) << "\" y2=\"" << height - bottom
      << "\" stroke=\"#999\" stroke-dasharray=\"4 4\"/>\n";
    const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
    std::size_t k = 0;
    for (const auto& c : r.details.strategies) {
        const char* colour = colours[k % 4];
        const double ly = top + 16.0 * static_cast<double>(k);
        ++k;
        s << "<circle cx=\"" << width - right + 16 << "\" cy=\"" << ly << "\" r=\"5\" fill=\"" << colour << "\"/>\n"
          << "<text x=\"" << width - right + 26 << "\" y=\"" << ly + 4 << "\">" << to_string(c.strategy) << "</text>\n";
        if (!c.expected_usd || *c.expected_usd <= 0.0) continue;  // beyond the horizon: not drawn
        const bool chosen = r.plan && r.plan->strategy == c.strategy && r.plan->offer == c.offer;
        const bool off_scale = *c.expected_usd > y_hi;
        const double cx = x_of(c.p_meet_deadline), cy = y_of(off_scale ? y_hi : *c.expected_usd);
        s << "<circle cx=\"" << cx << "\" cy=\"" << cy << "\" r=\"" << (chosen ? 8 : 5) << "\" fill=\"" << colour << "\""
          << (chosen ? " stroke=\"black\" stroke-width=\"2\"" : "") << "/>\n";
        if (off_scale)
            s << "<text x=\"" << cx + 8 << "\" y=\"" << cy + 14 << "\" fill=\"" << colour << "\">off scale: " << format(*c.expected_usd, 3)
              << " USD</text>\n";
    }
    s << "</svg>\n";
    return s.str();
}

void print_candidate(const dnnplan::resilience_candidate& c) {
    const auto interval = [](const dnnplan::estimate_interval& i) {
        return "[" + (i.lower ? format(*i.lower, 4) : std::string("beyond")) + ", " + (i.upper ? format(*i.upper, 4) : std::string("beyond")) + "]";
    };
    std::printf("%-22s %-12s %4d %4d  %-7s +-%-7s %-9s %-20s %-9s %-22s\n", std::string(to_string(c.strategy)).c_str(),
                c.offer.c_str(), c.instances, c.pipelines, format(c.p_meet_deadline, 4).c_str(), format(c.p_error, 2).c_str(),
                c.expected_h ? format(*c.expected_h, 4).c_str() : "beyond", interval(c.time_h).c_str(),
                c.expected_usd ? format(*c.expected_usd, 5).c_str() : "beyond", interval(c.usd).c_str());
    std::printf("    %s\n", c.note.c_str());
}

int plan(int argc, char** argv) {
    bool json = false;
    std::optional<std::string> svg;
    const auto positional = parse_command_line({switch_flag("--json", json), text_flag("--svg", svg)}, argc, argv, 2, 1);
    const bool bundled = positional.empty();
    const std::string what = bundled ? std::string("the bundled problem") : positional[0];
    std::string text;
    std::optional<std::filesystem::path> folder;
    if (bundled) {
        text = std::string(dnnplan_examples::resilience_gpt2_p3_json);
    } else {
        std::ifstream in = open_input(positional[0]);
        std::ostringstream buffer;
        buffer << in.rdbuf();
        text = buffer.str();
        folder = std::filesystem::path(positional[0]).parent_path();
    }
    const dnnplan::resilience_request request = on_input(what, [&] {
        nlohmann::ordered_json document = dnnplan::detail::json_io::parse_text(text);
        resolve_traces(document, folder, what);
        return document.get<dnnplan::resilience_request>();
    });
    std::optional<stderr_progress> progress(std::in_place, "resilience_plan", "simulated runs");
    const dnnplan::resilience_result r = on_input(what, [&] { return dnnplan::solve(request, progress->callback()); });
    progress.reset();  // ends its line before the table
    if (svg) {
        std::ofstream out(*svg);
        if (!out) throw command_line_error{"cannot write " + *svg};
        out << svg_of(r, request.job.probability);
    }
    if (json) {
        std::cout << dnnplan::to_json_text(r) << '\n';
        return 0;
    }
    std::cout << "job: " << request.job.workload.name << ", " << format(request.job.work_samples) << " samples by "
              << format(request.job.deadline_h) << " h with probability >= " << format(request.job.probability) << "\n"
              << "status: " << to_string(r.status) << ": " << r.reason << "\n\n";
    std::printf("%-22s %-12s %4s %4s  %-17s %-9s %-20s %-9s %-22s\n", "strategy", "offer", "inst", "pipe", "P(T <= D)",
                "E[T] h", "95% T h", "E[USD]", "95% USD");
    for (const auto& c : r.details.strategies) print_candidate(c);
    if (r.plan) {
        std::cout << "\nplan: " << to_string(r.plan->strategy) << " on " << r.plan->offer << ", " << r.plan->instances
                  << " instances";
        if (r.plan->pipelines > 0) std::cout << " (" << r.plan->pipelines << (r.plan->pipelines == 1 ? " pipeline)" : " pipelines)");
        if (r.plan->checkpoint_interval_h) std::cout << ", checkpoint every " << format(*r.plan->checkpoint_interval_h) << " h";
        std::cout << ": expected " << format(*r.plan->expected_usd, 5) << " USD, " << format(*r.plan->expected_h, 4)
                  << " h, P(T <= D) = " << format(r.plan->p_meet_deadline, 4);
        if (r.plan->samples_per_usd) std::cout << ", " << format(*r.plan->samples_per_usd, 5) << " samples per USD";
        std::cout << '\n';
    } else {
        std::cout << "\nno plan: the best probability reached is " << format(r.details.best_probability, 4) << '\n';
        if (r.best_effort)
            std::cout << "best effort: " << to_string(r.best_effort->strategy) << " on " << r.best_effort->offer << ", "
                      << r.best_effort->instances << " instances, P(T <= D) = " << format(r.best_effort->p_meet_deadline, 4) << '\n';
    }
    std::cout << r.details.simulations << " simulations, " << format(r.counters.elapsed_s, 3) << " s\n";
    return 0;
}

int run(int argc, char** argv) {
    static constexpr std::array<subcommand, 3> commands{{{"simulate", simulate}, {"checkpoint", checkpoint}, {"plan", plan}}};
    return run_subcommand(commands, forms, argc, argv);
}

}  // namespace

int main(int argc, char** argv) { return guarded_main("resilience_plan", usage, argc, argv, run); }
