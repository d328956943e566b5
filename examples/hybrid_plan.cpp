// hybrid_plan [PROFILE] [--profile-batch N] [--containers FILE] [--max-workers N]
//             [--batch-sizes B1,B2,...] [--objective samples-per-s|samples-per-usd|usd-per-h]
//             [--budget USD_PER_H] [--target SAMPLES_PER_S] [--json] [--svg OUT.svg]
//
// Hydrozoa-style hybrid-parallel planning (solve/hybrid_plan/solve.hpp) of a PipeDream graph.txt
// profile on serverless GPU containers. Without PROFILE it plans the bundled vgg16 profile
// (examples/data/vgg16.txt, 128 samples); without --containers the bundled V100 catalog
// (examples/data/containers.json, prices and their sources in examples/data/README.md). Prints
// the chosen configuration and its throughput, price and samples per dollar next to pure data
// parallelism on the same containers (without a plan: the reason, and the best-effort plan that
// misses the goal when there is one); --json prints only a JSON object; --svg draws the 1F1B
// schedule of one minibatch. A malformed file or command line: one line on stderr, exit 2.

#include <dnnplan/io/hybrid_plan_json.hpp>
#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/model/pipeline_1f1b_timeline.hpp>
#include <dnnplan/solve/hybrid_plan/solve.hpp>

#include <dnnplan_examples/bundled_data.hpp>

#include "cli_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view usage =
    "usage: hybrid_plan [PROFILE] [--profile-batch N] [--containers FILE] [--max-workers N] [--batch-sizes B1,B2,...] "
    "[--objective samples-per-s|samples-per-usd|usd-per-h] [--budget USD_PER_H] [--target SAMPLES_PER_S] [--json] "
    "[--svg OUT.svg]";

using dnnplan_examples::command_line_error;
using dnnplan_examples::fixed;

struct arguments {
    std::optional<std::string> profile_file;  // none: the bundled vgg16
    double profile_batch = 128;
    std::optional<std::string> containers_file;
    std::int32_t max_workers = 16;
    std::vector<std::int32_t> batch_sizes{128, 256, 512};
    dnnplan::hybrid_options options{.objective = dnnplan::objective_kind::max_throughput};
    bool json = false;
    std::optional<std::string> svg_file;
};

arguments parse_arguments(int argc, char** argv) {
    namespace cli = dnnplan_examples;
    arguments args;
    const auto batch_list = [&args](std::string_view flag, std::string_view list) {
        args.batch_sizes.clear();
        while (true) {
            const auto comma = list.find(',');
            args.batch_sizes.push_back(cli::parse_number<std::int32_t>(flag, list.substr(0, comma)));
            if (comma == std::string_view::npos) break;
            list.remove_prefix(comma + 1);
        }
    };
    const auto objective = [&args](std::string_view, std::string_view name) {
        if (name == "samples-per-s") args.options.objective = dnnplan::objective_kind::max_throughput;
        else if (name == "samples-per-usd") args.options.objective = dnnplan::objective_kind::max_samples_per_usd;
        else if (name == "usd-per-h") args.options.objective = dnnplan::objective_kind::min_cost;
        else throw command_line_error{"--objective expects samples-per-s, samples-per-usd or usd-per-h, found \"" + std::string(name) + "\""};
    };
    const std::vector<std::string> positional = cli::parse_command_line(
        {cli::number_flag("--profile-batch", args.profile_batch), cli::text_flag("--containers", args.containers_file),
         cli::number_flag("--max-workers", args.max_workers), {"--batch-sizes", cli::takes::one, batch_list},
         {"--objective", cli::takes::one, objective}, cli::number_flag("--budget", args.options.budget_usd_per_h),
         cli::number_flag("--target", args.options.target_samples_per_s), cli::switch_flag("--json", args.json),
         cli::text_flag("--svg", args.svg_file)},
        argc, argv, 1, 1);
    if (!positional.empty()) args.profile_file = positional.front();
    if (args.options.objective == dnnplan::objective_kind::min_cost && !(args.options.target_samples_per_s > 0))
        throw command_line_error{"--objective usd-per-h needs --target SAMPLES_PER_S"};
    return args;
}

// ---- the schedule picture --------------------------------------------------------------------

/// The width of `text` at font-size 11 sans-serif, from a generous average glyph width (6.2 px:
/// wider than the measured average of DejaVu Sans and Liberation Sans at that size), so that a
/// line never runs past the picture's edge.
double text_width_px(std::string_view text) { return 6.2 * static_cast<double>(text.size()); }

std::string schedule_svg(const dnnplan::hybrid_plan& plan, const dnnplan::layer_graph& graph) {
    std::vector<dnnplan::stage_breakdown> figures;
    for (const auto& st : plan.stages) figures.push_back(st.figures);
    const std::vector<dnnplan::pipeline_event> events = dnnplan::timeline_1f1b(figures, plan.micro_batches);
    double span = 0;
    for (const auto& e : events) span = std::max(span, e.end_s);
    const std::string title = "1F1B schedule of one minibatch: " + std::to_string(plan.stages.size()) + " stages, " +
                              std::to_string(plan.micro_batches) + " micro-batches of " + std::to_string(plan.micro_batch_size) +
                              ", " + std::to_string(plan.workers) + " x " + plan.container + " GPUs";
    const std::vector<std::string> subtitle{
        "One minibatch on its own, from the model's per-micro-batch stage times; in training, later stages'",
        "all-reduce overlaps the next minibatch's fill. Model: (M + S - 1) x slowest = " +
            fixed(plan.time_per_minibatch_s * 1000, 1) + " ms"};
    const double left = 150, top = 74, row = 44;
    double width = 900;  // the time axis; the picture widens when a text line needs more
    for (const auto& line : subtitle) width = std::max(width, text_width_px(line));
    width = std::max(width, text_width_px(title) * 14.0 / 11.0);
    const double height = top + row * static_cast<double>(plan.stages.size()) + 70;
    const auto x = [&](double t) { return left + width * t / span; };
    std::ostringstream svg;
    svg << R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" << std::ceil(left + width + 30) << R"(" height=")" << height
        << R"(" font-family="sans-serif" font-size="11">)" << '\n';
    svg << R"(<rect width="100%" height="100%" fill="white"/>)" << '\n';
    svg << R"(<text x=")" << left << R"(" y="22" font-size="14">)" << title << "</text>\n";
    for (std::size_t i = 0; i < subtitle.size(); ++i)
        svg << R"(<text x=")" << left << R"(" y=")" << 40 + 14 * static_cast<double>(i) << R"(" fill="#555">)"
            << subtitle[i] << "</text>\n";
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const auto& st = plan.stages[s];
        const double y = top + row * static_cast<double>(s);
        svg << R"(<text x="8" y=")" << y + 17 << R"(">stage )" << s << " (x" << st.replicas << ")</text>\n";
        svg << R"(<text x="8" y=")" << y + 31 << R"(" fill="#555">)" << graph.at(st.layers.front()).id << ".."
            << graph.at(st.layers.back()).id << "</text>\n";
    }
    for (const auto& e : events) {
        const double y = top + row * static_cast<double>(e.stage) + 4;
        const char* fill = e.pass == dnnplan::pipeline_pass::sync      ? "#bbbbbb"
                           : e.pass == dnnplan::pipeline_pass::forward ? "#7fb3e6"
                                                                        : "#8fd19e";
        svg << R"(<rect x=")" << x(e.start_s) << R"(" y=")" << y << R"(" width=")" << std::max(0.5, x(e.end_s) - x(e.start_s))
            << R"(" height=")" << row - 10 << R"(" fill=")" << fill << R"(" stroke="#333" stroke-width="0.5"/>)" << '\n';
        if (x(e.end_s) - x(e.start_s) > 14)
            svg << R"(<text x=")" << (x(e.start_s) + x(e.end_s)) / 2 << R"(" y=")" << y + (row - 10) / 2 + 4
                << R"(" text-anchor="middle">)" << (e.micro_batch ? std::to_string(*e.micro_batch) : std::string("sync"))
                << "</text>\n";
    }
    const double axis = top + row * static_cast<double>(plan.stages.size()) + 6;
    svg << R"(<line x1=")" << left << R"(" y1=")" << axis << R"(" x2=")" << left + width << R"(" y2=")" << axis
        << R"(" stroke="black"/>)" << '\n';
    const double step = std::pow(10.0, std::floor(std::log10(span * 1000 / 5)));
    const double tick_ms = span * 1000 / step > 25 ? step * 5 : span * 1000 / step > 10 ? step * 2 : step;
    for (double t = 0; t <= span * 1000 + 1e-9; t += tick_ms) {
        svg << R"(<line x1=")" << x(t / 1000) << R"(" y1=")" << axis << R"(" x2=")" << x(t / 1000) << R"(" y2=")" << axis + 5
            << R"(" stroke="black"/>)" << '\n';
        svg << R"(<text x=")" << x(t / 1000) << R"(" y=")" << axis + 17 << R"(" text-anchor="middle">)" << fixed(t, 0)
            << "</text>\n";
    }
    svg << R"(<text x=")" << left + width << R"(" y=")" << axis + 32 << R"(" text-anchor="end">time (ms)</text>)" << '\n';
    const double ly = axis + 32;
    const auto legend = [&](double lx, const char* fill, const char* text) {
        svg << R"(<rect x=")" << lx << R"(" y=")" << ly - 9 << R"(" width="12" height="10" fill=")" << fill
            << R"(" stroke="#333" stroke-width="0.5"/><text x=")" << lx + 16 << R"(" y=")" << ly << R"(">)" << text << "</text>\n";
    };
    legend(left, "#7fb3e6", "forward (micro-batch number)");
    legend(left + 190, "#8fd19e", "backward");
    legend(left + 280, "#bbbbbb", "exposed all-reduce");
    svg << "</svg>\n";
    return svg.str();
}

// ---- the table -------------------------------------------------------------------------------

void print_column_pair(const char* label, const std::string& a, const std::string& b) {
    std::printf("  %-22s %-26s %s\n", label, a.c_str(), b.c_str());
}

std::string describe(const dnnplan::hybrid_result& r, const std::function<std::string(const dnnplan::hybrid_plan&)>& f) {
    return r.plan ? f(*r.plan) : std::string("-");
}

/// "no hybrid plan: <reason>", and the plan it would run anyway (best_effort) when it has one.
void print_no_plan(const char* what, const dnnplan::hybrid_result& r) {
    std::printf("\nno %s plan: %s\n", what, r.reason.c_str());
    if (!r.best_effort) return;
    const dnnplan::hybrid_plan& p = *r.best_effort;
    std::printf("  best effort (misses the goal): %d x %s, workers %d, stages %zu, %s samples/s, %s USD/h\n", p.containers,
                p.container.c_str(), p.workers, p.stages.size(), fixed(p.samples_per_s, 1).c_str(), fixed(p.usd_per_h, 2).c_str());
}

void print_table(const arguments& args, const dnnplan::layer_graph& graph, std::size_t states,
                 const dnnplan::hybrid_result& hybrid, const dnnplan::hybrid_result& data_parallel) {
    std::printf("profile: %s, %zu layers (%zu states), profiled at %g samples\n",
                args.profile_file ? args.profile_file->c_str() : "vgg16 (bundled)", graph.size(), states, args.profile_batch);
    std::printf("containers: %s; at most %d workers; objective %s", args.containers_file ? args.containers_file->c_str() : "bundled V100 catalog",
                args.max_workers, std::string(to_string(args.options.objective)).c_str());
    if (args.options.objective == dnnplan::objective_kind::max_throughput && std::isfinite(args.options.budget_usd_per_h))
        std::printf(" within %g USD/h", args.options.budget_usd_per_h);
    if (args.options.objective == dnnplan::objective_kind::min_cost)
        std::printf(" for %g samples/s", args.options.target_samples_per_s);
    std::printf("\n\n");
    print_column_pair("", "hybrid (pipeline + DP)", "pure data parallelism");
    print_column_pair("status", std::string(to_string(hybrid.status)), std::string(to_string(data_parallel.status)));
    if (hybrid.limit != dnnplan::search_limit::none || data_parallel.limit != dnnplan::search_limit::none)
        print_column_pair("limit", std::string(to_string(hybrid.limit)), std::string(to_string(data_parallel.limit)));
    using plan = dnnplan::hybrid_plan;
    const auto row = [&](const char* label, const std::function<std::string(const plan&)>& f) {
        print_column_pair(label, describe(hybrid, f), describe(data_parallel, f));
    };
    row("containers", [](const plan& p) { return std::to_string(p.containers) + " x " + p.container; });
    row("workers (GPUs)", [](const plan& p) { return std::to_string(p.workers); });
    row("stages", [](const plan& p) { return std::to_string(p.stages.size()); });
    row("replicas per stage", [](const plan& p) {
        std::string out;
        for (const auto& s : p.stages) {
            if (!out.empty()) out += ',';
            out += std::to_string(s.replicas);  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "," + string
        }
        return out;
    });
    row("global batch", [](const plan& p) {
        return std::to_string(p.global_batch_size) + " = " + std::to_string(p.micro_batches) + " x " + std::to_string(p.micro_batch_size);
    });
    row("time per minibatch", [](const plan& p) { return fixed(p.time_per_minibatch_s, 4) + " s"; });
    row("throughput", [](const plan& p) { return fixed(p.samples_per_s, 1) + " samples/s"; });
    row("price", [](const plan& p) { return fixed(p.usd_per_h, 2) + " USD/h"; });
    row("samples per USD", [](const plan& p) { return fixed(p.samples_per_usd, 0); });
    if (!hybrid.plan) {
        print_no_plan("hybrid", hybrid);
        return;
    }
    if (data_parallel.plan)
        std::printf("\nhybrid / data parallel: %.2fx the throughput, %.2fx the samples per USD\n",
                    hybrid.plan->samples_per_s / data_parallel.plan->samples_per_s,
                    hybrid.plan->samples_per_usd / data_parallel.plan->samples_per_usd);
    else
        print_no_plan("data-parallel", data_parallel);
    std::printf("\nstages of the hybrid plan (per micro-batch and replica; memory per GPU):\n");
    std::printf("  %-5s %-10s %-16s %8s %11s %11s %12s %11s %9s\n", "stage", "states", "layers", "replicas", "compute ms",
                "transfer ms", "allreduce ms", "stage ms", "memory GB");
    for (std::size_t s = 0; s < hybrid.plan->stages.size(); ++s) {
        const auto& st = hybrid.plan->stages[s];
        const auto& f = st.figures;
        std::string states_text = "[";
        states_text += std::to_string(st.first_state);
        states_text += ", ";
        states_text += std::to_string(st.end_state);
        states_text += ")";
        const std::string layers = graph.at(st.layers.front()).id + ".." + graph.at(st.layers.back()).id;
        std::printf("  %-5zu %-10s %-16s %8d %11.2f %11.2f %12.2f %11.2f %9.2f\n", s, states_text.c_str(), layers.c_str(),
                    st.replicas, f.compute_s * 1e3, f.transfer_s * 1e3, f.allreduce_s * 1e3, f.stage_time_s * 1e3,
                    f.memory_bytes / 1e9);
    }
}

int run(int argc, char** argv) {
    namespace cli = dnnplan_examples;
    const arguments args = parse_arguments(argc, argv);
    dnnplan::hybrid_request request{.problem = {}, .options = args.options};
    dnnplan::hybrid_problem& problem = request.problem;
    const auto parse_graph = [](std::istream& in) { return dnnplan::parse_pipedream_graph(in); };
    problem.profiles.push_back(
        {.batch_size = args.profile_batch,
         .graph = args.profile_file ? cli::read_input(*args.profile_file, parse_graph)
                                    : dnnplan::parse_pipedream_graph(dnnplan_examples::vgg16_txt)});
    problem.catalog = args.containers_file
                          ? cli::read_input(*args.containers_file, [](std::istream& in) { return dnnplan::parse_container_catalog(in); })
                          : dnnplan::parse_container_catalog(dnnplan_examples::containers_json);
    problem.max_workers = args.max_workers;
    problem.global_batch_sizes = args.batch_sizes;
    const std::string input = args.profile_file.value_or("the bundled profile");
    try {
        request.validate();
    } catch (const dnnplan::invalid_input& e) {
        throw command_line_error{e.what()};
    }
    // Profile errors (a layer the chain cannot order, ...) before planning.
    const std::size_t states = cli::on_input(input, [&] { return dnnplan::build_layer_chain(problem.profiles).size(); });
    const dnnplan::hybrid_result hybrid = dnnplan::solve(request);
    dnnplan::hybrid_request data_parallel_request = request;
    data_parallel_request.options.max_stages = 1;
    const dnnplan::hybrid_result data_parallel = dnnplan::solve(data_parallel_request);
    const auto& graph = problem.profiles.front().graph;

    if (args.svg_file && hybrid.plan) {
        std::ofstream out(*args.svg_file);
        out << schedule_svg(*hybrid.plan, graph);
        if (!out) throw cli::input_error{"cannot write " + *args.svg_file};
    }
    if (args.json) {
        nlohmann::ordered_json j;
        j["hybrid"] = hybrid;
        j["data_parallel"] = data_parallel;
        std::cout << j.dump(2) << '\n';
        return 0;
    }
    print_table(args, graph, states, hybrid, data_parallel);
    if (args.svg_file && hybrid.plan) std::printf("\nschedule written to %s\n", args.svg_file->c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return dnnplan_examples::guarded_main("hybrid_plan", usage, argc, argv, run); }
