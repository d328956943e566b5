// hybrid_plan [PROFILE] [--profile-batch N] [--containers FILE] [--max-workers N]
//             [--batch-sizes B1,B2,...] [--objective samples-per-s|samples-per-usd|usd-per-h]
//             [--budget USD_PER_H] [--target SAMPLES_PER_S] [--json] [--svg OUT.svg]
//
// Hydrozoa-style hybrid-parallel planning (solve/hybrid_parallel.hpp) of a PipeDream graph.txt
// profile on serverless GPU containers. Without PROFILE it plans the bundled vgg16 profile
// (examples/data/vgg16.txt, 128 samples); without --containers the bundled V100 catalog
// (examples/data/containers.json, prices and their sources in examples/data/README.md). Prints
// the chosen configuration and its throughput, price and samples per dollar next to pure data
// parallelism on the same containers; --json prints only a JSON object; --svg draws the 1F1B
// schedule of one minibatch. A malformed file or command line: one line on stderr, exit 2.

#include <dnnplan/io/json.hpp>
#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/solve/hybrid_parallel.hpp>

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
using dnnplan_examples::open_input;
using dnnplan_examples::parse_number;

struct arguments {
    std::string profile_file;  // empty: the bundled vgg16
    double profile_batch = 128;
    std::string containers_file;
    std::int32_t max_workers = 16;
    std::vector<std::int32_t> batch_sizes{128, 256, 512};
    dnnplan::hybrid_options options{.objective = dnnplan::hybrid_objective::max_samples_per_s};
    bool json = false;
    std::string svg_file;
};

arguments parse_arguments(int argc, char** argv) {
    arguments args;
    const std::vector<std::string_view> a(argv + 1, argv + argc);
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string_view flag = a[i];
        const auto value = [&]() -> std::string_view {
            if (i + 1 >= a.size() || a[i + 1].starts_with("--")) throw command_line_error{std::string(flag) + " expects a value"};
            return a[++i];
        };
        if (flag == "--profile-batch") {
            args.profile_batch = parse_number<double>(flag, value());
        } else if (flag == "--containers") {
            args.containers_file = std::string(value());
        } else if (flag == "--max-workers") {
            args.max_workers = parse_number<std::int32_t>(flag, value());
        } else if (flag == "--batch-sizes") {
            args.batch_sizes.clear();
            std::string_view list = value();
            while (true) {
                const auto comma = list.find(',');
                args.batch_sizes.push_back(parse_number<std::int32_t>(flag, list.substr(0, comma)));
                if (comma == std::string_view::npos) break;
                list.remove_prefix(comma + 1);
            }
        } else if (flag == "--objective") {
            const std::string_view name = value();
            if (name == "samples-per-s") args.options.objective = dnnplan::hybrid_objective::max_samples_per_s;
            else if (name == "samples-per-usd") args.options.objective = dnnplan::hybrid_objective::max_samples_per_usd;
            else if (name == "usd-per-h") args.options.objective = dnnplan::hybrid_objective::min_usd_per_h;
            else throw command_line_error{"--objective expects samples-per-s, samples-per-usd or usd-per-h, found \"" + std::string(name) + "\""};
        } else if (flag == "--budget") {
            args.options.budget_usd_per_h = parse_number<double>(flag, value());
        } else if (flag == "--target") {
            args.options.target_samples_per_s = parse_number<double>(flag, value());
        } else if (flag == "--json") {
            args.json = true;
        } else if (flag == "--svg") {
            args.svg_file = std::string(value());
        } else if (flag == "-h" || flag == "--help") {
            std::cout << usage << '\n';
            std::exit(0);
        } else if (!flag.starts_with("-") && args.profile_file.empty()) {
            args.profile_file = std::string(flag);
        } else {
            throw command_line_error{"unknown argument " + std::string(flag)};
        }
    }
    if (args.options.objective == dnnplan::hybrid_objective::min_usd_per_h && !(args.options.target_samples_per_s > 0))
        throw command_line_error{"--objective usd-per-h needs --target SAMPLES_PER_S"};
    return args;
}

std::string fixed(double value, int digits) {
    std::ostringstream out;
    out.setf(std::ios::fixed);
    out.precision(digits);
    out << value;
    return out.str();
}

// ---- the schedule picture --------------------------------------------------------------------

struct box {
    std::size_t stage = 0;
    double start_s = 0, end_s = 0;
    int micro_batch = -1;  // -1: the all-reduce
    bool forward = true;
};

// One minibatch of synchronous 1F1B: stage s runs min(S - s - 1, M) forward passes, then
// alternates one forward and one backward, then the remaining backward passes, then its
// exposed all-reduce. A forward waits for the previous stage's forward of the same
// micro-batch, a backward for the next stage's backward. Per-micro-batch times are the model's
// max(compute, transfer), split between forward and backward as the compute is.
std::vector<box> schedule_1f1b(const dnnplan::hybrid_plan& plan) {
    const std::size_t stages = plan.stages.size();
    const auto m = static_cast<std::size_t>(plan.micro_batches);
    std::vector<std::vector<std::pair<bool, std::size_t>>> order(stages);  // (forward?, micro-batch)
    std::vector<double> fwd(stages), bwd(stages);
    for (std::size_t s = 0; s < stages; ++s) {
        const auto& f = plan.stages[s].figures;
        const double busy = std::max(f.compute_s, f.transfer_s);
        const double share = f.compute_s > 0 ? f.forward_s / f.compute_s : 0.5;
        fwd[s] = busy * share;
        bwd[s] = busy - fwd[s];
        const std::size_t warmup = std::min(stages - s - 1, m);
        std::size_t next_f = 0, next_b = 0;
        for (; next_f < warmup; ++next_f) order[s].emplace_back(true, next_f);
        while (next_b < m) {
            if (next_f < m) order[s].emplace_back(true, next_f++);
            order[s].emplace_back(false, next_b++);
        }
    }
    const double unset = -1;
    std::vector<std::vector<double>> f_end(stages, std::vector<double>(m, unset)), b_end = f_end;
    std::vector<std::size_t> position(stages, 0);
    std::vector<double> free_at(stages, 0);
    std::vector<box> boxes;
    for (bool progress = true; progress;) {
        progress = false;
        for (std::size_t s = 0; s < stages; ++s) {
            while (position[s] < order[s].size()) {
                const auto [forward, mb] = order[s][position[s]];
                double ready = free_at[s];
                if (forward && s > 0) {
                    if (f_end[s - 1][mb] == unset) break;
                    ready = std::max(ready, f_end[s - 1][mb]);
                }
                if (!forward && s + 1 < stages) {
                    if (b_end[s + 1][mb] == unset) break;
                    ready = std::max(ready, b_end[s + 1][mb]);
                }
                const double end = ready + (forward ? fwd[s] : bwd[s]);
                (forward ? f_end : b_end)[s][mb] = end;
                free_at[s] = end;
                boxes.push_back({.stage = s, .start_s = ready, .end_s = end, .micro_batch = static_cast<int>(mb), .forward = forward});
                ++position[s];
                progress = true;
            }
        }
    }
    for (std::size_t s = 0; s < stages; ++s) {
        const double sync = plan.stages[s].figures.exposed_sync_s;
        if (sync > 0) boxes.push_back({.stage = s, .start_s = free_at[s], .end_s = free_at[s] + sync, .micro_batch = -1});
    }
    return boxes;
}

std::string schedule_svg(const dnnplan::hybrid_plan& plan, const dnnplan::layer_graph& graph) {
    const std::vector<box> boxes = schedule_1f1b(plan);
    double span = 0;
    for (const auto& b : boxes) span = std::max(span, b.end_s);
    const double left = 150, top = 60, row = 44, width = 900;
    const double height = top + row * static_cast<double>(plan.stages.size()) + 70;
    const auto x = [&](double t) { return left + width * t / span; };
    std::ostringstream svg;
    svg << R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" << left + width + 30 << R"(" height=")" << height
        << R"(" font-family="sans-serif" font-size="11">)" << '\n';
    svg << R"(<rect width="100%" height="100%" fill="white"/>)" << '\n';
    svg << R"(<text x=")" << left << R"(" y="22" font-size="14">1F1B schedule of one minibatch: )" << plan.stages.size()
        << " stages, " << plan.micro_batches << " micro-batches of " << plan.micro_batch_size << ", " << plan.workers << " x "
        << plan.container << " GPUs</text>\n";
    svg << R"(<text x=")" << left << R"(" y="40" fill="#555">one minibatch on its own, from the model's per-micro-batch )"
        << "stage times; in training, later stages' all-reduce overlaps the next minibatch's fill. Model: (M + S - 1) x slowest = "
        << fixed(plan.time_per_minibatch_s * 1000, 1) << " ms</text>\n";
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const auto& st = plan.stages[s];
        const double y = top + row * static_cast<double>(s);
        svg << R"(<text x="8" y=")" << y + 17 << R"(">stage )" << s << " (x" << st.replicas << ")</text>\n";
        svg << R"(<text x="8" y=")" << y + 31 << R"(" fill="#555">)" << graph.at(st.layers.front()).id << ".."
            << graph.at(st.layers.back()).id << "</text>\n";
    }
    for (const auto& b : boxes) {
        const double y = top + row * static_cast<double>(b.stage) + 4;
        const char* fill = b.micro_batch < 0 ? "#bbbbbb" : b.forward ? "#7fb3e6" : "#8fd19e";
        svg << R"(<rect x=")" << x(b.start_s) << R"(" y=")" << y << R"(" width=")" << std::max(0.5, x(b.end_s) - x(b.start_s))
            << R"(" height=")" << row - 10 << R"(" fill=")" << fill << R"(" stroke="#333" stroke-width="0.5"/>)" << '\n';
        if (x(b.end_s) - x(b.start_s) > 14)
            svg << R"(<text x=")" << (x(b.start_s) + x(b.end_s)) / 2 << R"(" y=")" << y + (row - 10) / 2 + 4
                << R"(" text-anchor="middle">)" << (b.micro_batch < 0 ? std::string("sync") : std::to_string(b.micro_batch))
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

void print_table(const arguments& args, const dnnplan::layer_graph& graph, std::size_t states,
                 const dnnplan::hybrid_result& hybrid, const dnnplan::hybrid_result& data_parallel) {
    std::printf("profile: %s, %zu layers (%zu states), profiled at %g samples\n",
                args.profile_file.empty() ? "vgg16 (bundled)" : args.profile_file.c_str(), graph.size(), states, args.profile_batch);
    std::printf("containers: %s; at most %d workers; objective %s", args.containers_file.empty() ? "bundled V100 catalog" : args.containers_file.c_str(),
                args.max_workers, std::string(to_string(args.options.objective)).c_str());
    if (args.options.objective == dnnplan::hybrid_objective::max_samples_per_s && std::isfinite(args.options.budget_usd_per_h))
        std::printf(" within %g USD/h", args.options.budget_usd_per_h);
    if (args.options.objective == dnnplan::hybrid_objective::min_usd_per_h)
        std::printf(" for %g samples/s", args.options.target_samples_per_s);
    std::printf("\n\n");
    print_column_pair("", "hybrid (pipeline + DP)", "pure data parallelism");
    print_column_pair("status", std::string(to_string(hybrid.status)), std::string(to_string(data_parallel.status)));
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
        std::printf("\nno hybrid plan: %s\n", hybrid.reason.c_str());
        return;
    }
    if (data_parallel.plan)
        std::printf("\nhybrid / data parallel: %.2fx the throughput, %.2fx the samples per USD\n",
                    hybrid.plan->samples_per_s / data_parallel.plan->samples_per_s,
                    hybrid.plan->samples_per_usd / data_parallel.plan->samples_per_usd);
    else
        std::printf("\nno data-parallel plan: %s\n", data_parallel.reason.c_str());
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
    arguments args;
    dnnplan::hybrid_problem problem;
    try {
        args = parse_arguments(argc, argv);
        if (args.profile_file.empty()) {
            problem.profiles.push_back({.batch_size = args.profile_batch, .graph = dnnplan::parse_pipedream_graph(dnnplan_examples::vgg16_txt)});
        } else {
            std::ifstream in = open_input(args.profile_file);
            try {
                problem.profiles.push_back({.batch_size = args.profile_batch, .graph = dnnplan::parse_pipedream_graph(in)});
            } catch (const dnnplan::error& e) {
                throw command_line_error{args.profile_file + ": " + e.what()};
            }
        }
        if (args.containers_file.empty()) {
            problem.catalog = dnnplan::parse_container_catalog(dnnplan_examples::containers_json);
        } else {
            std::ifstream in = open_input(args.containers_file);
            try {
                problem.catalog = dnnplan::parse_container_catalog(in);
            } catch (const dnnplan::error& e) {
                throw command_line_error{args.containers_file + ": " + e.what()};
            }
        }
        problem.max_workers = args.max_workers;
        problem.global_batch_sizes = args.batch_sizes;
        problem.validate();
        args.options.validate();
        static_cast<void>(dnnplan::build_layer_chain(problem.profiles));  // profile errors before planning
    } catch (const command_line_error& e) {
        std::cerr << "hybrid_plan: " << e.message << '\n';
        return 2;
    } catch (const dnnplan::error& e) {
        std::cerr << "hybrid_plan: " << e.what() << '\n';
        return 2;
    }
    const dnnplan::hybrid_result hybrid = dnnplan::solve(problem, args.options);
    auto dp_options = args.options;
    dp_options.max_stages = 1;
    const dnnplan::hybrid_result data_parallel = dnnplan::solve(problem, dp_options);
    const auto& graph = problem.profiles.front().graph;

    if (!args.svg_file.empty() && hybrid.plan) {
        std::ofstream out(args.svg_file);
        out << schedule_svg(*hybrid.plan, graph);
        if (!out) {
            std::cerr << "hybrid_plan: cannot write " << args.svg_file << '\n';
            return 2;
        }
    }
    if (args.json) {
        nlohmann::ordered_json j;
        j["hybrid"] = hybrid;
        j["data_parallel"] = data_parallel;
        std::cout << j.dump(2) << '\n';
        return 0;
    }
    print_table(args, graph, dnnplan::build_layer_chain(problem.profiles).size(), hybrid, data_parallel);
    if (!args.svg_file.empty() && hybrid.plan) std::printf("\nschedule written to %s\n", args.svg_file.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return dnnplan_examples::guarded_main("hybrid_plan", argc, argv, run); }
