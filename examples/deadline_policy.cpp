// deadline_policy: the runtime deadline policy (docs/solvers/deadline_policy.md).
//
//   deadline_policy simulate --trace FILE [--trace FILE ...] --work-h C --deadline-h R --changeover-h D
//           [--egress-usd E] [--spot-usd-per-h P] [--on-demand-usd-per-h Q] [--instances N]
//           [--prices FILE] [--counts available|preempted]
//           [--policy on-demand|greedy|uniform-progress|optimal|default] --start-ticks A,B,... [--json]
//   deadline_policy compare (the same inputs, without --policy) [--threads T] [--svg FILE] [--json]
//   deadline_policy decide STATE.json
//
// A trace is Can't Be Late's JSON (FILE.json) or SkyNomad's CSV (any other name), one region each,
// on one clock, named after the file (its stem); --counts preempted reads files that count preempted
// probes (1 = unavailable). Prices: the trace's own, a side file {"<name>": [USD/h per row]}
// (--prices), or the flags, which override both; a trace without prices needs both flags. Start
// ticks: A,B,... with ranges FIRST:LAST:STEP. simulate prints one window per start tick (--json:
// {"policy", "windows": [...]}); compare runs every policy on every window against the hindsight
// optimum (mean cost, cost / optimum mean and p90, deadlines missed, spot hours; --svg: the
// distribution of cost / optimum per policy); decide reads what a scheduler has observed (a JSON
// document, "-" for stdin) and prints one decision as a JSON line. Malformed input: one line on
// stderr naming the field or line, exit 2.

#include <dnnplan/io/deadline_policy_json.hpp>
#include <dnnplan/io/spot_market_csv.hpp>
#include <dnnplan/solve/deadline_policy/solve.hpp>

#include "cli_support.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace dnnplan_examples;

constexpr std::string_view usage = "usage: deadline_policy simulate|compare|decide ... (deadline_policy --help: every form)";

constexpr std::string_view forms =
    "usage: deadline_policy simulate --trace FILE [--trace FILE ...] --work-h C --deadline-h R --changeover-h D\n"
    "               [--egress-usd E] [--spot-usd-per-h P] [--on-demand-usd-per-h Q] [--instances N] [--prices FILE]\n"
    "               [--counts available|preempted] [--policy on-demand|greedy|uniform-progress|optimal|default]\n"
    "               --start-ticks A,B,...|FIRST:LAST:STEP [--json]\n"
    "       deadline_policy compare (the inputs of simulate, without --policy) [--threads T] [--svg FILE] [--json]\n"
    "       deadline_policy decide STATE.json";

/// What simulate and compare read from the command line.
struct run_arguments {
    std::vector<std::string> traces;
    std::optional<double> work_h, deadline_h, changeover_h, spot_usd_per_h, on_demand_usd_per_h;
    double egress_usd = 0.0;
    std::int32_t instances = 1;
    std::optional<std::string> prices, svg;
    std::string counts = "available", policy = "default", start_ticks;
    std::int32_t threads = 0;  // 0: the machine's cores
    bool json = false;
};

/// The value of an enum flag ("-" read as "_": --policy uniform-progress).
template <class Enum>
Enum enum_flag(std::string_view flag, std::string text) {
    std::replace(text.begin(), text.end(), '-', '_');
    try {
        return dnnplan::parse_enum<Enum>(text, flag);
    } catch (const dnnplan::invalid_input& e) {
        throw command_line_error{std::string(flag) + " " + text + ": expected " + e.expected()};
    }
}

/// "A,B,FIRST:LAST:STEP,..." as start ticks.
std::vector<std::size_t> start_ticks_of(const std::string& text) {
    std::vector<std::size_t> out;
    std::stringstream items(text);
    std::string item;
    while (std::getline(items, item, ',')) {
        std::vector<std::size_t> parts;
        std::stringstream fields(item);
        std::string field;
        while (std::getline(fields, field, ':')) parts.push_back(parse_number<std::size_t>("--start-ticks", field));
        if (parts.size() == 1) out.push_back(parts[0]);
        else if (parts.size() == 3 && parts[2] > 0 && parts[0] <= parts[1])
            for (std::size_t k = parts[0];; k += parts[2]) {
                out.push_back(k);
                if (parts[1] - k < parts[2]) break;  // the next would pass LAST (or wrap)
            }
        else throw command_line_error{"--start-ticks " + item + ": expected a tick or FIRST:LAST:STEP with FIRST <= LAST, STEP > 0"};
    }
    if (out.empty()) throw command_line_error{"--start-ticks: at least one start tick"};
    return out;
}

/// A trace file, read as Can't Be Late's JSON (.json) or SkyNomad's CSV.
dnnplan::spot_market_trace read_trace(const std::string& file, dnnplan::availability_polarity polarity) {
    const std::string name = std::filesystem::path(file).stem().string();
    if (std::filesystem::path(file).extension() == ".json")
        return read_input(file, [&](std::istream& in) { return dnnplan::parse_spot_market_json(in, name, polarity); });
    const auto csv = read_input(file, [&](std::istream& in) { return dnnplan::parse_spot_market_csv(in, name, polarity); });
    // Every row is one tick of the median gap: say so when the probing was irregular enough to matter.
    if (static_cast<double>(csv.max_gap_s) > 1.5 * csv.median_gap_s)
        std::cerr << file << ": rows " << csv.min_gap_s << " to " << csv.max_gap_s << " s apart; each row is read as one tick of the median gap, "
                  << csv.median_gap_s << " s\n";
    return csv.trace;
}

/// Every trace's prices: the flags', else the side file's (by name), else the trace's own.
void set_prices(dnnplan::spot_market_trace& t, const run_arguments& a, const std::map<std::string, std::vector<double>>& side) {
    if (a.spot_usd_per_h) t.spot_usd_per_h.assign(t.size(), *a.spot_usd_per_h);
    else if (const auto it = side.find(t.name); it != side.end()) t.spot_usd_per_h = it->second;
    if (a.on_demand_usd_per_h) t.on_demand_usd_per_h = a.on_demand_usd_per_h;
    if (t.spot_usd_per_h.empty())
        throw command_line_error{"trace " + t.name + " has no spot prices: give --spot-usd-per-h or --prices"};
    if (!t.on_demand_usd_per_h) throw command_line_error{"trace " + t.name + " has no on-demand price: give --on-demand-usd-per-h"};
}

dnnplan::deadline_simulation read_simulation(const run_arguments& a) {
    if (a.traces.empty()) throw command_line_error{"--trace is required"};
    for (const auto* flag : {&a.work_h, &a.deadline_h, &a.changeover_h})
        if (!*flag) throw command_line_error{"--work-h, --deadline-h and --changeover-h are required"};
    const auto polarity = enum_flag<dnnplan::availability_polarity>("--counts", a.counts);
    const std::map<std::string, std::vector<double>> side =
        a.prices ? read_input(*a.prices, [](std::istream& in) { return dnnplan::parse_spot_price_table(in); })
                 : std::map<std::string, std::vector<double>>{};
    dnnplan::deadline_simulation r;
    for (const std::string& file : a.traces) {
        r.market.regions.push_back(read_trace(file, polarity));
        set_prices(r.market.regions.back(), a, side);
    }
    r.job = {.work_s = *a.work_h * 3600.0, .deadline_s = *a.deadline_h * 3600.0, .changeover_s = *a.changeover_h * 3600.0,
             .instances = a.instances, .egress_usd = a.egress_usd};
    r.start_ticks = start_ticks_of(a.start_ticks);
    r.policy = enum_flag<dnnplan::deadline_policy_kind>("--policy", a.policy);
    r.threads = a.threads > 0 ? a.threads : static_cast<std::int32_t>(std::max(1U, std::thread::hardware_concurrency()));
    on_input("the command line and the traces", [&] {
        r.validate();
        return 0;
    });
    return r;
}

run_arguments parse_run(int argc, char** argv, bool compare) {
    run_arguments a;
    std::vector<flag> flags{texts_flag("--trace", a.traces), number_flag("--work-h", a.work_h),
                            number_flag("--deadline-h", a.deadline_h), number_flag("--changeover-h", a.changeover_h),
                            number_flag("--egress-usd", a.egress_usd), number_flag("--spot-usd-per-h", a.spot_usd_per_h),
                            number_flag("--on-demand-usd-per-h", a.on_demand_usd_per_h), number_flag("--instances", a.instances),
                            text_flag("--prices", a.prices), text_flag("--counts", a.counts),
                            text_flag("--start-ticks", a.start_ticks), switch_flag("--json", a.json)};
    if (compare) {
        flags.push_back(number_flag("--threads", a.threads));
        flags.push_back(text_flag("--svg", a.svg));
    } else {
        flags.push_back(text_flag("--policy", a.policy));
    }
    (void)parse_command_line(flags, argc, argv, 2);
    if (a.start_ticks.empty()) throw command_line_error{"--start-ticks is required"};
    return a;
}

// ---- simulate ------------------------------------------------------------------------------------

int simulate(int argc, char** argv) {
    const run_arguments a = parse_run(argc, argv, false);
    const dnnplan::deadline_simulation r = read_simulation(a);
    const std::vector<dnnplan::deadline_outcome> windows = dnnplan::simulate(r);
    if (a.json) {
        std::cout << dnnplan::simulation_json(r, windows).dump() << '\n';
        return 0;
    }
    std::cout << "Policy " << to_string(r.policy) << "; work " << format(*a.work_h) << " h, deadline " << format(*a.deadline_h)
              << " h, changeover " << format(*a.changeover_h) << " h, " << r.job.instances << " instance(s), "
              << r.market.regions.size() << " region(s)\n\n";
    std::printf("  %10s %12s %9s %4s %8s %8s %6s %6s\n", "start", "cost USD", "finish h", "met", "spot h", "od h", "runs", "moves");
    for (const auto& w : windows)
        std::printf("  %10zu %12.6f %9.3f %4s %8.3f %8.3f %6lld %6lld\n", w.start_tick, w.cost_usd, w.finish_s / 3600.0,
                    w.met ? "yes" : "NO", w.spot_s / 3600.0, w.on_demand_s / 3600.0, static_cast<long long>(w.changeovers),
                    static_cast<long long>(w.region_moves));
    return 0;
}

// ---- compare -------------------------------------------------------------------------------------

/// The distribution of cost / optimum per policy: a box (quartiles), whiskers (5% and 95%) and the
/// mean, on a common axis.
std::string ratio_svg(const dnnplan::deadline_comparison& c) {
    const double width = 640, row = 56, left = 150, right = 30, top = 40;
    double hi = 1.0;
    for (const auto& p : c.policies)
        for (const double x : p.ratios) hi = std::max(hi, x);
    hi = std::min(hi, 4.0);
    const auto sx = [&](double x) { return left + (std::min(x, hi) - 1.0) / (hi - 1.0 + 1e-12) * (width - left - right); };
    std::ostringstream svg;
    const double height = top + row * static_cast<double>(c.policies.size()) + 40;
    svg << R"(<svg xmlns="http://www.w3.org/2000/svg" width=")" << width << R"(" height=")" << height
        << R"(" font-family="sans-serif" font-size="12">)" << '\n'
        << R"(<text x="10" y="20">cost / hindsight optimum, per policy, over )" << c.windows - c.infeasible_windows
        << " windows (box: quartiles; whiskers: 5% and 95%; dot: mean)</text>\n";
    for (double t = 1.0; t <= hi + 1e-9; t += (hi - 1.0) / 6.0)
        svg << R"(<line x1=")" << sx(t) << R"(" y1=")" << top - 8 << R"(" x2=")" << sx(t) << R"(" y2=")" << height - 30
            << R"(" stroke="#ddd"/><text x=")" << sx(t) << R"(" y=")" << height - 14 << R"(" text-anchor="middle">)"
            << fixed(t, 2) << "</text>\n";
    for (std::size_t i = 0; i < c.policies.size(); ++i) {
        std::vector<double> r = c.policies[i].ratios;
        if (r.empty()) continue;
        std::sort(r.begin(), r.end());
        const auto q = [&](double f) { return r[std::min(r.size() - 1, static_cast<std::size_t>(f * static_cast<double>(r.size())))]; };
        const double y = top + row * static_cast<double>(i) + row / 2;
        svg << R"(<text x=")" << left - 10 << R"(" y=")" << y + 4 << R"(" text-anchor="end">)" << to_string(c.policies[i].policy) << "</text>\n"
            << R"(<line x1=")" << sx(q(0.05)) << R"(" y1=")" << y << R"(" x2=")" << sx(q(0.95)) << R"(" y2=")" << y << R"(" stroke="#333"/>)" << '\n'
            << R"(<rect x=")" << sx(q(0.25)) << R"(" y=")" << y - 12 << R"(" width=")" << std::max(1.0, sx(q(0.75)) - sx(q(0.25)))
            << R"(" height="24" fill="#9ecae1" stroke="#333"/>)" << '\n'
            << R"(<line x1=")" << sx(q(0.5)) << R"(" y1=")" << y - 12 << R"(" x2=")" << sx(q(0.5)) << R"(" y2=")" << y + 12 << R"(" stroke="#333" stroke-width="2"/>)" << '\n'
            << R"(<circle cx=")" << sx(c.policies[i].mean_ratio) << R"(" cy=")" << y << R"(" r="4" fill="#e6550d"/>)" << '\n';
    }
    svg << "</svg>\n";
    return svg.str();
}

int compare(int argc, char** argv) {
    const run_arguments a = parse_run(argc, argv, true);
    const dnnplan::deadline_simulation r = read_simulation(a);
    std::optional<stderr_progress> progress(std::in_place, "deadline_policy", "windows compared");  // on a terminal only
    const dnnplan::deadline_comparison c = dnnplan::compare(r, progress->callback());
    progress.reset();  // its line ends before the table
    if (a.svg) {
        std::ofstream out(*a.svg);
        out << ratio_svg(c);
        if (!out) throw input_error{"cannot write " + *a.svg};
    }
    if (a.json) {
        std::cout << nlohmann::ordered_json(c).dump() << '\n';
        return 0;
    }
    std::cout << c.windows << " windows (" << c.infeasible_windows << " that not even on-demand meets, left out); work "
              << format(*a.work_h) << " h, deadline " << format(*a.deadline_h) << " h, changeover " << format(*a.changeover_h) << " h\n\n";
    std::printf("  %-18s %14s %14s %10s %8s %10s\n", "policy", "mean cost USD", "cost/opt mean", "p90", "missed", "spot h");
    for (const auto& p : c.policies)
        std::printf("  %-18s %14.4f %14.4f %10.4f %8lld %10.2f\n", std::string(to_string(p.policy)).c_str(), p.mean_cost_usd,
                    p.mean_ratio, p.p90_ratio, static_cast<long long>(p.missed), p.mean_spot_h);
    return 0;
}

// ---- decide --------------------------------------------------------------------------------------

int decide(int argc, char** argv) {
    const std::vector<std::string> positional = parse_command_line({}, argc, argv, 2, 1);
    if (positional.empty()) throw command_line_error{"decide needs STATE.json (or - for stdin)"};
    const dnnplan::deadline_observation o =
        read_input(positional[0], [](std::istream& in) { return dnnplan::parse_deadline_observation(in); });
    const dnnplan::deadline_result r = on_input(positional[0], [&] { return dnnplan::solve(o); });
    std::cout << dnnplan::decision_json(o, r).dump() << std::endl;
    return 0;
}

int run(int argc, char** argv) {
    static constexpr std::array<subcommand, 3> commands{{{"simulate", simulate}, {"compare", compare}, {"decide", decide}}};
    return run_subcommand(commands, forms, argc, argv);
}

}  // namespace

int main(int argc, char** argv) { return guarded_main("deadline_policy", usage, argc, argv, run); }
