// elastic_advisor: elastic auto-configuration of a parameter-server job (docs/solvers/elastic_advisor.md).
//
//   elastic_advisor replay [--measurements FILE.json] --work-steps N [--deadline-s D] [--trial-s S]
//                          [--policy model|dlrover] [--json]
//   elastic_advisor advise --work-steps N [--deadline-s D] --max-ps P --max-workers W
//                          --worker-usd-per-h X --ps-usd-per-h Y [--trial-s S] [--policy model|dlrover]
//   elastic_advisor compare [--measurements FILE.json] --work-steps N [--trial-s S]
//
// replay: the replay harness (solve/elastic_advisor/replay.hpp) with a policy
// (solve/elastic_advisor/policies.hpp) on a table of measured speeds per configuration
// (io/elastic_advisor_json.hpp; without --measurements the bundled ICAC'19 V100 table,
// examples/data/elastic_icac19_v100.json): the trials, the final configuration, the time, the cost
// and whether the deadline was met; the text form also gives the best configuration chosen with
// hindsight. advise: reads runtime records as JSON lines on stdin and prints, after each, one plan
// as a JSON line (flushed): the model advisor's (solve/elastic_advisor/advisor.hpp) over the
// configurations 1..P PS x 1..W workers, with its status (the plan, else the best effort it would
// run: result.plan_to_run()), or DLRover's running-stage plan (solve/elastic_advisor/dlrover_local.hpp;
// the records need their nodes). Malformed input: one line on stderr naming the field, exit 2
// (advise stops at the first malformed line; the plans of the lines before it have been printed).
// compare: both policies replayed side by side against the best configuration with hindsight,
// without a deadline and with deadlines of 1.1, 1.25, 1.5, 2, 3 and 5 x the fastest
// configuration's time (the table of docs/solvers/elastic_advisor.md).

#include <dnnplan/io/elastic_advisor_json.hpp>
#include <dnnplan/solve/elastic_advisor/policies.hpp>

#include <dnnplan_examples/bundled_data.hpp>

#include "cli_support.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace dnnplan_examples;

constexpr std::string_view usage = "usage: elastic_advisor replay|advise|compare ... (elastic_advisor --help: every form)";

constexpr std::string_view forms =
    "usage: elastic_advisor replay [--measurements FILE.json] --work-steps N [--deadline-s D] [--trial-s S]\n"
    "                              [--policy model|dlrover] [--json]\n"
    "       elastic_advisor advise --work-steps N [--deadline-s D] --max-ps P --max-workers W\n"
    "                              --worker-usd-per-h X --ps-usd-per-h Y [--trial-s S] [--policy model|dlrover]\n"
    "       elastic_advisor compare [--measurements FILE.json] --work-steps N [--trial-s S]";

enum class policy_kind { model, dlrover };

policy_kind policy_named(const std::string& name) {
    if (name == "model") return policy_kind::model;
    if (name == "dlrover") return policy_kind::dlrover;
    throw command_line_error{"--policy " + name + ": expected model or dlrover"};
}

template <class Number>
void require_flag(const std::optional<Number>& value, std::string_view flag) {
    if (!value) throw command_line_error{std::string(flag) + " is required"};
}

// ---- replay --------------------------------------------------------------------------------------

dnnplan::measurement_table read_table(const std::optional<std::string>& file) {
    return file ? read_input(*file, [](std::istream& in) { return dnnplan::parse_measurement_table(in); })
                : on_input("the bundled table", [] { return dnnplan::parse_measurement_table(dnnplan_examples::elastic_icac19_v100_json); });
}


int replay(int argc, char** argv) {
    std::optional<std::string> file;
    std::optional<double> work, deadline;
    double trial_s = 120.0;
    std::string policy = "model";
    bool json = false;
    (void)parse_command_line({text_flag("--measurements", file), number_flag("--work-steps", work),
                              number_flag("--deadline-s", deadline), number_flag("--trial-s", trial_s),
                              text_flag("--policy", policy), switch_flag("--json", json)},
                             argc, argv, 2);
    require_flag(work, "--work-steps");
    const policy_kind kind = policy_named(policy);
    const dnnplan::measurement_table table = read_table(file);
    const dnnplan::replay_options options{.work_steps = *work, .deadline_s = deadline, .trial_s = trial_s};
    on_input("the command line", [&] {
        options.validate("options");
        return 0;
    });
    const dnnplan::replay_report report = kind == policy_kind::model ? dnnplan::replay(table, options, dnnplan::model_policy{})
                                                                     : dnnplan::replay(table, options, dnnplan::dlrover_policy{});
    if (json) {
        std::cout << dnnplan::to_json_text(report) << '\n';
        return 0;
    }
    std::cout << "Table: " << file.value_or("bundled ICAC'19 V100 (examples/data/elastic_icac19_v100.json)") << ", "
              << table.measured.size() << " configurations of " << table.gpu << "; work " << format(*work) << " steps, "
              << (deadline ? "deadline " + format(*deadline) + " s" : std::string("no deadline (most steps per USD)"))
              << "; policy " << policy << ", trials of " << format(trial_s) << " s\n\n";
    for (const auto& s : report.segments)
        std::cout << "  " << (s.final ? "final " : "trial ") << dnnplan::to_string(s.run.configuration()) << "  "
                  << format(s.run.steps_per_s, 4) << " steps/s  " << format(s.duration_s, 5) << " s  "
                  << format(s.cost_usd, 4) << " USD  (" << s.why << ")\n";
    std::cout << "\nFinal " << dnnplan::to_string(report.final) << " after " << report.trials.size() << " trials: "
              << format(report.time_s, 6) << " s, " << format(report.cost_usd, 5) << " USD, deadline "
              << (report.met_deadline ? "met" : "MISSED") << (report.decisions_exhausted ? " (max_decisions reached)" : "") << '\n';
    if (const auto best = dnnplan::best_with_hindsight(table, options))
        std::cout << "Best with hindsight: " << dnnplan::to_string(best->configuration) << ", " << format(best->cost_usd, 5)
                  << " USD (the policy: " << format(report.cost_usd / best->cost_usd, 4) << "x)\n";
    else
        std::cout << "Best with hindsight: no configuration of the table meets the deadline\n";
    return 0;
}

// ---- advise --------------------------------------------------------------------------------------

int advise(int argc, char** argv) {
    std::optional<double> work, deadline, worker_usd, ps_usd;
    std::optional<std::int32_t> max_ps, max_workers;
    double trial_s = 120.0;
    std::string policy = "model";
    (void)parse_command_line({number_flag("--work-steps", work), number_flag("--deadline-s", deadline),
                              number_flag("--max-ps", max_ps), number_flag("--max-workers", max_workers),
                              number_flag("--worker-usd-per-h", worker_usd), number_flag("--ps-usd-per-h", ps_usd),
                              number_flag("--trial-s", trial_s), text_flag("--policy", policy)},
                             argc, argv, 2);
    require_flag(work, "--work-steps");
    require_flag(max_ps, "--max-ps");
    require_flag(max_workers, "--max-workers");
    require_flag(worker_usd, "--worker-usd-per-h");
    require_flag(ps_usd, "--ps-usd-per-h");
    const policy_kind kind = policy_named(policy);
    if (*max_ps < 1 || *max_workers < 1) throw command_line_error{"--max-ps and --max-workers must be >= 1"};
    if (deadline && !(*deadline > 0.0)) throw command_line_error{"--deadline-s must be > 0 (from the job's start)"};
    dnnplan::advise_setup setup{.job = {.gpu = "worker", .remaining_steps = *work, .deadline_s = deadline,
                                        .worker_usd_per_h = *worker_usd, .ps_usd_per_h = *ps_usd,
                                        .configurations = dnnplan::configuration_grid(*max_ps, *max_workers)}};
    setup.options.trial_s = trial_s;
    on_input("the command line", [&] {
        setup.job.validate("job");
        setup.options.validate("options");
        return 0;
    });

    std::vector<dnnplan::elastic_record> records;
    std::string line;
    for (std::int64_t number = 1; std::getline(std::cin, line); ++number) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string where = "stdin line " + std::to_string(number);
        records.push_back(on_input(where, [&] { return dnnplan::parse_elastic_record(line); }));
        const nlohmann::ordered_json plan = on_input(where, [&] {
            return kind == policy_kind::model ? dnnplan::advice_json(dnnplan::advise(records, setup))
                                              : dnnplan::dlrover_plan_json(dnnplan::dlrover_advise(
                                                    records, dnnplan::dlrover_limits(records, *max_ps, *max_workers)));
        });
        std::cout << plan.dump() << std::endl;  // one line per record, flushed
    }
    return 0;
}

// ---- compare -------------------------------------------------------------------------------------

int compare(int argc, char** argv) {
    std::optional<std::string> file;
    std::optional<double> work;
    double trial_s = 120.0;
    (void)parse_command_line({text_flag("--measurements", file), number_flag("--work-steps", work), number_flag("--trial-s", trial_s)},
                             argc, argv, 2);
    require_flag(work, "--work-steps");
    const dnnplan::measurement_table table = read_table(file);
    double fastest = 0.0;
    for (const auto& m : table.measured) fastest = std::max(fastest, m.steps_per_s);
    std::cout << "Table: " << file.value_or("bundled ICAC'19 V100") << " (" << table.gpu << "); work " << format(*work)
              << " steps; trials of " << format(trial_s) << " s; cost in USD, x: over the best with hindsight\n\n"
              << "deadline      best with hindsight      model: cost     x  trials met  | DLRover: cost     x  trials met\n";
    for (const double slack : {0.0, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0}) {
        dnnplan::replay_options o{.work_steps = *work, .trial_s = trial_s};
        if (slack > 0.0) o.deadline_s = *work / fastest * slack;
        on_input("the command line", [&] {
            o.validate("options");
            return 0;
        });
        const auto best = dnnplan::best_with_hindsight(table, o);
        const auto model = dnnplan::replay(table, o, dnnplan::model_policy{});
        const auto dlrover = dnnplan::replay(table, o, dnnplan::dlrover_policy{});
        char line[256];
        const std::string deadline = slack > 0.0 ? format(*o.deadline_s, 5) + " s" : std::string("none");
        const std::string best_text = best ? dnnplan::to_string(best->configuration) + " " + format(best->cost_usd, 4) : "none";
        const auto ratio = [&](double cost) { return best ? format(cost / best->cost_usd, 4) : std::string("-"); };
        std::snprintf(line, sizeof line, "%-10s  %-26s  %9s  %6s  %4zu  %-3s  |  %9s  %6s  %4zu  %-3s\n", deadline.c_str(),
                      best_text.c_str(), format(model.cost_usd, 4).c_str(), ratio(model.cost_usd).c_str(), model.trials.size(),
                      model.met_deadline ? "yes" : "NO", format(dlrover.cost_usd, 4).c_str(), ratio(dlrover.cost_usd).c_str(),
                      dlrover.trials.size(), dlrover.met_deadline ? "yes" : "NO");
        std::cout << line;
    }
    return 0;
}

int run(int argc, char** argv) {
    static constexpr std::array<subcommand, 3> commands{{{"replay", replay}, {"advise", advise}, {"compare", compare}}};
    return run_subcommand(commands, forms, argc, argv);
}

}  // namespace

int main(int argc, char** argv) { return guarded_main("elastic_advisor", usage, argc, argv, run); }
