// vm_recommend [PROBLEM.json] [--pareto] [--json] [--svg OUT.svg]
//
// Srifty-style VM recommendation (solve/vm_recommend/solve.hpp) for a synchronous data-parallel job
// (model/sync_data_parallel.hpp). Without PROBLEM it solves the bundled problem
// (examples/data/vm_problem.json: ResNet-50 on ImageNet, 90 epochs within 12 hours, on the EC2 GPU
// types of spotDNN's Table III; figures and sources in examples/data/README.md). The file format
// is docs/problem-format.md ("The VM problem file"). Prints the recommended instances (type,
// spot or on-demand, count) with samples/s, USD/h, samples per USD and, when the problem gives the
// work, the time and cost; the status (with the limit that stopped the search, if any) and, when
// not optimal, the reason and the proven bound.
// --pareto also computes the exact cost-vs-time Pareto frontier and prints it as a table;
// --svg writes it as a plot (implies --pareto); --json prints only the result JSON. A malformed
// file or command line: one line on stderr, exit 2.

#include <dnnplan/io/vm_recommend_json.hpp>
#include <dnnplan/solve/vm_recommend/solve.hpp>
#include <dnnplan/solve/vm_recommend/request.hpp>

#include <dnnplan_examples/bundled_data.hpp>

#include "cli_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using dnnplan_examples::fixed;

constexpr std::string_view usage = "usage: vm_recommend [PROBLEM.json] [--pareto] [--json] [--svg OUT.svg]";

struct arguments {
    std::optional<std::string> problem_file;  // none: the bundled problem
    bool pareto = false;
    bool json = false;
    std::optional<std::string> svg_file;
};

arguments parse_arguments(int argc, char** argv) {
    namespace cli = dnnplan_examples;
    arguments args;
    const std::vector<std::string> positional = cli::parse_command_line(
        {cli::switch_flag("--pareto", args.pareto), cli::switch_flag("--json", args.json), cli::text_flag("--svg", args.svg_file)},
        argc, argv, 1, 1);
    if (!positional.empty()) args.problem_file = positional.front();
    if (args.svg_file) args.pareto = true;
    return args;
}

/// "4 x g4dn.12xlarge (spot) + 1 x g4dn.4xlarge (on_demand)".
std::string describe_offers(const dnnplan::vm_configuration& c) {
    std::string out;
    for (const auto& o : c.offers) {
        if (!out.empty()) out += " + ";
        out += std::to_string(o.count);
        out += " x ";
        out += o.type;
        out += " (";
        out += to_string(o.kind);
        out += ')';
    }
    return out;
}

std::string hours(double seconds) { return fixed(seconds / 3600.0, 2) + " h"; }

/// The objective's value with its unit.
std::string objective_text(dnnplan::objective_kind objective, bool work_given, double value) {
    switch (objective) {
        case dnnplan::objective_kind::max_throughput: return fixed(value, 1) + " samples/s";
        case dnnplan::objective_kind::max_samples_per_usd: return fixed(value, 0) + " samples/USD";
        case dnnplan::objective_kind::min_cost:
        case dnnplan::objective_kind::min_time: break;
    }
    return fixed(value, 2) + (work_given ? " USD" : " USD/h");
}

void print_recommendation(const arguments& args, const dnnplan::vm_request& request, const dnnplan::vm_result& r) {
    const auto& problem = request.problem;
    const bool work_given = problem.work.given();
    std::printf("problem: %s; %zu instance types; objective %s\n",
                args.problem_file ? args.problem_file->c_str() : "bundled (ResNet-50 on ImageNet, examples/data/vm_problem.json)",
                problem.catalog.instances.size(), std::string(to_string(problem.objective)).c_str());
    const auto& c = problem.constraints;
    std::string constraints;
    const auto add = [&](const std::string& text) {
        if (!constraints.empty()) constraints += ", ";
        constraints += text;
    };
    if (work_given) add("work " + fixed(problem.work.total_samples(), 0) + " samples");
    if (std::isfinite(c.deadline_s)) add("deadline " + hours(c.deadline_s));
    if (std::isfinite(c.max_usd_per_h)) add("at most " + fixed(c.max_usd_per_h, 2) + " USD/h");
    if (c.min_samples_per_s > 0) add("at least " + fixed(c.min_samples_per_s, 1) + " samples/s");
    if (c.max_instances > 0) add("at most " + std::to_string(c.max_instances) + " instances");
    if (c.max_distinct_types > 0) add("at most " + std::to_string(c.max_distinct_types) + " types");
    std::printf("constraints: %s\n\n", constraints.empty() ? "none" : constraints.c_str());

    std::string limit;  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "..." + string
    if (r.limit != dnnplan::search_limit::none) {
        limit = ", limit: ";
        limit += to_string(r.limit);
    }
    std::printf("status: %s%s (%s, %lld nodes, %lld model evaluations)\n", std::string(to_string(r.status)).c_str(),
                limit.c_str(), std::string(to_string(r.details.method)).c_str(), static_cast<long long>(r.counters.nodes),
                static_cast<long long>(r.counters.evaluations));
    if (r.status != dnnplan::solve_status::optimal) std::printf("reason: %s\n", r.reason.c_str());
    if (!r.plan) return;
    const auto& f = r.plan->figures;
    std::printf("\nrecommended: %s\n", describe_offers(*r.plan).c_str());
    std::printf("  %-18s %lld instances, %lld GPUs\n", "size", static_cast<long long>(f.instances),
                static_cast<long long>(f.gpus));
    std::printf("  %-18s %s samples/s\n", "throughput", fixed(f.samples_per_s, 1).c_str());
    std::printf("  %-18s %s USD/h\n", "price", fixed(f.usd_per_h, 2).c_str());
    std::printf("  %-18s %s\n", "samples per USD", fixed(f.samples_per_usd, 0).c_str());
    if (f.time_s) std::printf("  %-18s %s (%s s)\n", "training time", hours(*f.time_s).c_str(), fixed(*f.time_s, 0).c_str());
    if (f.cost_usd) std::printf("  %-18s %s USD\n", "cost", fixed(*f.cost_usd, 2).c_str());
    const double value = r.objective_value.value_or(0.0);
    std::printf("  %-18s %s\n", "objective", objective_text(problem.objective, work_given, value).c_str());
    if (r.status != dnnplan::solve_status::optimal) {
        const bool maximise = dnnplan::maximises(problem.objective);
        if (r.bound) {
            std::printf("  %-18s the optimum is %s %s", "gap", maximise ? "at most" : "at least",
                        objective_text(problem.objective, work_given, *r.bound).c_str());
            if (value != 0.0)
                std::printf(" (%s%% from this plan)", fixed(100.0 * std::abs(value - *r.bound) / std::abs(value), 2).c_str());
            std::printf("\n");
        } else {
            std::printf("  %-18s no bound on the optimum is proven\n", "gap");
        }
    }
}

void print_frontier(const dnnplan::vm_request& request, const dnnplan::vm_result& r) {
    const bool work_given = request.problem.work.given();
    std::string status = r.details.frontier_status ? std::string(to_string(*r.details.frontier_status)) : "not computed";
    if (r.details.frontier_limit != dnnplan::search_limit::none) {
        status += ", limit: ";
        status += to_string(r.details.frontier_limit);
    }
    std::printf("\nPareto frontier (%s): %zu configurations, fastest first\n", status.c_str(), r.details.frontier.size());
    if (work_given)
        std::printf("  %-4s %10s %10s %12s %8s %12s  %s\n", "#", "time h", "cost USD", "samples/s", "USD/h", "samples/USD",
                    "instances");
    else
        std::printf("  %-4s %12s %8s %12s  %s\n", "#", "samples/s", "USD/h", "samples/USD", "instances");
    for (std::size_t i = 0; i < r.details.frontier.size(); ++i) {
        const auto& f = r.details.frontier[i].figures;
        if (work_given)
            std::printf("  %-4zu %10s %10s %12s %8s %12s  %s\n", i + 1, fixed(*f.time_s / 3600.0, 2).c_str(),
                        fixed(*f.cost_usd, 2).c_str(), fixed(f.samples_per_s, 1).c_str(), fixed(f.usd_per_h, 2).c_str(),
                        fixed(f.samples_per_usd, 0).c_str(), describe_offers(r.details.frontier[i]).c_str());
        else
            std::printf("  %-4zu %12s %8s %12s  %s\n", i + 1, fixed(f.samples_per_s, 1).c_str(), fixed(f.usd_per_h, 2).c_str(),
                        fixed(f.samples_per_usd, 0).c_str(), describe_offers(r.details.frontier[i]).c_str());
    }
}

// ---- the frontier plot -----------------------------------------------------------------------

/// Round tick spacing giving about five ticks over [lo, hi].
double tick_step(double lo, double hi) {
    const double span = hi > lo ? hi - lo : std::max(std::abs(hi), 1.0);
    const double step = std::pow(10.0, std::floor(std::log10(span / 5.0)));
    const double ratio = span / step;
    return ratio > 25 ? step * 5 : ratio > 10 ? step * 2 : step;
}

/// The plot's frame: data ranges rounded out to whole ticks, and the area they map to.
struct svg_frame {
    double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1, x_step = 1, y_step = 1;
    double left = 90, top = 60, width = 720, height = 420;
    [[nodiscard]] double sx(double v) const { return left + width * (v - x_lo) / (x_hi - x_lo); }
    [[nodiscard]] double sy(double v) const { return top + height * (1.0 - (v - y_lo) / (y_hi - y_lo)); }
};

struct svg_point {
    double x, y;
    std::string label;
};

[[nodiscard]] svg_frame frame_of(const std::vector<svg_point>& points) {
    svg_frame f;
    if (!points.empty()) {
        f.x_lo = f.x_hi = points.front().x;
        f.y_lo = f.y_hi = points.front().y;
        for (const auto& p : points) {
            f.x_lo = std::min(f.x_lo, p.x), f.x_hi = std::max(f.x_hi, p.x);
            f.y_lo = std::min(f.y_lo, p.y), f.y_hi = std::max(f.y_hi, p.y);
        }
    }
    f.x_step = tick_step(f.x_lo, f.x_hi), f.y_step = tick_step(f.y_lo, f.y_hi);
    f.x_lo = std::floor(f.x_lo / f.x_step) * f.x_step;
    f.x_hi = std::max(std::ceil(f.x_hi / f.x_step) * f.x_step, f.x_lo + f.x_step);
    f.y_lo = std::floor(f.y_lo / f.y_step) * f.y_step;
    f.y_hi = std::max(std::ceil(f.y_hi / f.y_step) * f.y_step, f.y_lo + f.y_step);
    return f;
}

/// Axes, ticks and labels.
void draw_axes(std::ostream& svg, const svg_frame& f, const std::string& x_label, const std::string& y_label) {
    const double bottom = f.top + f.height;
    svg << R"(<line x1=")" << f.left << R"(" y1=")" << bottom << R"(" x2=")" << f.left + f.width << R"(" y2=")" << bottom
        << R"(" stroke="black"/>)" << '\n';
    svg << R"(<line x1=")" << f.left << R"(" y1=")" << f.top << R"(" x2=")" << f.left << R"(" y2=")" << bottom
        << R"(" stroke="black"/>)" << '\n';
    const int x_digits = f.x_step < 1 ? static_cast<int>(std::ceil(-std::log10(f.x_step))) : 0;
    const int y_digits = f.y_step < 1 ? static_cast<int>(std::ceil(-std::log10(f.y_step))) : 0;
    for (double v = f.x_lo; v <= f.x_hi + f.x_step * 1e-6; v += f.x_step) {
        svg << R"(<line x1=")" << f.sx(v) << R"(" y1=")" << bottom << R"(" x2=")" << f.sx(v) << R"(" y2=")" << bottom + 5
            << R"(" stroke="black"/>)" << '\n';
        svg << R"(<text x=")" << f.sx(v) << R"(" y=")" << bottom + 18 << R"(" text-anchor="middle">)" << fixed(v, x_digits)
            << "</text>\n";
    }
    for (double v = f.y_lo; v <= f.y_hi + f.y_step * 1e-6; v += f.y_step) {
        svg << R"(<line x1=")" << f.left - 5 << R"(" y1=")" << f.sy(v) << R"(" x2=")" << f.left << R"(" y2=")" << f.sy(v)
            << R"(" stroke="black"/>)" << '\n';
        svg << R"(<text x=")" << f.left - 8 << R"(" y=")" << f.sy(v) + 4 << R"(" text-anchor="end">)" << fixed(v, y_digits)
            << "</text>\n";
    }
    svg << R"(<text x=")" << f.left + f.width / 2 << R"(" y=")" << bottom + 40 << R"(" text-anchor="middle">)" << x_label
        << "</text>\n";
    svg << R"(<text transform="translate(20 )" << f.top + f.height / 2 << R"svg() rotate(-90)" text-anchor="middle">)svg" << y_label
        << "</text>\n";
}

/// Cost (or price) against time (or speed): the frontier's points, the staircase between them
/// (every point above and to the right of it is dominated), and the recommendation ringed.
std::string frontier_svg(const dnnplan::vm_request& request, const dnnplan::vm_result& r) {
    const bool work_given = request.problem.work.given();
    std::vector<svg_point> points;
    for (const auto& c : r.details.frontier) {
        const auto& f = c.figures;
        points.push_back({work_given ? *f.time_s / 3600.0 : f.samples_per_s, work_given ? *f.cost_usd : f.usd_per_h,
                          describe_offers(c)});
    }
    const svg_frame f = frame_of(points);
    std::ostringstream svg;
    svg << R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" << f.left + f.width + 40 << R"(" height=")" << f.top + f.height + 80
        << R"(" font-family="sans-serif" font-size="11">)" << '\n';
    svg << R"(<rect width="100%" height="100%" fill="white"/>)" << '\n';
    svg << R"(<text x=")" << f.left << R"(" y="22" font-size="14">Pareto frontier: )" << points.size()
        << " configurations (" << (r.details.frontier_status ? to_string(*r.details.frontier_status) : "not computed")
        << ")</text>\n";
    svg << R"(<text x=")" << f.left << R"(" y="40" fill="#555">every configuration above and )"
        << (work_given ? "right" : "left") << " of the staircase is dominated; ringed: the recommendation (" << to_string(request.problem.objective) << ")</text>\n";
    draw_axes(svg, f, work_given ? "training time (h)" : "throughput (samples/s)",
              work_given ? "cost to finish the work (USD)" : "price (USD/h)");
    // The staircase through the points in the frontier's order (y descending): the boundary of
    // the dominated region turns at (x_i, y_(i-1)) between consecutive points, with or without work.
    if (points.size() > 1) {
        svg << R"(<path fill="none" stroke="#7fb3e6" stroke-width="1.5" d="M)" << f.sx(points.front().x) << ' '
            << f.sy(points.front().y);
        for (std::size_t i = 1; i < points.size(); ++i)
            svg << " L" << f.sx(points[i].x) << ' ' << f.sy(points[i - 1].y) << " L" << f.sx(points[i].x) << ' ' << f.sy(points[i].y);
        svg << R"("/>)" << '\n';
    }
    for (const auto& p : points)
        svg << R"(<circle cx=")" << f.sx(p.x) << R"(" cy=")" << f.sy(p.y) << R"(" r="3.5" fill="#1f5f9f"><title>)" << p.label
            << ": " << fixed(p.x, 2) << ", " << fixed(p.y, 2) << "</title></circle>\n";
    if (r.plan) {
        const auto& pf = r.plan->figures;
        const double bx = f.sx(work_given ? *pf.time_s / 3600.0 : pf.samples_per_s);
        const double by = f.sy(work_given ? *pf.cost_usd : pf.usd_per_h);
        svg << R"(<circle cx=")" << bx << R"(" cy=")" << by << R"(" r="8" fill="none" stroke="#d62728" stroke-width="2"/>)" << '\n';
        const bool right_half = bx > f.left + f.width / 2;
        svg << R"(<text x=")" << (right_half ? bx - 12 : bx + 12) << R"(" y=")" << by - 12 << R"(" fill="#d62728" )"
            << (right_half ? R"(text-anchor="end">)" : ">") << describe_offers(*r.plan) << "</text>\n";
    }
    svg << "</svg>\n";
    return svg.str();
}

int run(int argc, char** argv) {
    namespace cli = dnnplan_examples;
    const arguments args = parse_arguments(argc, argv);
    dnnplan::vm_request request =
        args.problem_file ? cli::read_input(*args.problem_file, [](std::istream& in) { return dnnplan::parse_vm_request(in); })
                          : dnnplan::parse_vm_request(dnnplan_examples::vm_problem_json);
    if (args.pareto) request.options.pareto = true;
    const dnnplan::vm_result result =
        cli::on_input(args.problem_file.value_or("the bundled problem"), [&] { return dnnplan::solve(request); });

    if (args.svg_file) {
        std::ofstream out(*args.svg_file);
        out << frontier_svg(request, result);
        if (!out) throw cli::input_error{"cannot write " + *args.svg_file};
    }
    if (args.json) {
        std::cout << dnnplan::to_json_text(result) << '\n';
        return 0;
    }
    print_recommendation(args, request, result);
    if (request.options.pareto) print_frontier(request, result);
    if (args.svg_file) std::printf("\nfrontier plot written to %s\n", args.svg_file->c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return dnnplan_examples::guarded_main("vm_recommend", usage, argc, argv, run); }
