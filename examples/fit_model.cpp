// fit_model: fits a performance model to measured steps, predicts with intervals, and measures
// the fidelity of a fit on held-out rows.
//
//   fit_model fit      --model sync-data-parallel --pollux-placements TRAIN.csv [--gpus-per-node 4]
//                      [--variant V] [--json]
//   fit_model predict  --model sync-data-parallel --params PARAMS.json --pollux-placements TEST.csv
//                      [--gpus-per-node 4] [--confidence 0.95] [--variant V] [--json]
//   fit_model fidelity --model sync-data-parallel --pollux-placements ALL.csv [--gpus-per-node 4]
//                      [--train-fraction 0.3] [--seed 1] [--variant V] [--json]
// --variant: pollux, node-term, batch-power, node-term+batch-power (fit/sync_data_parallel.hpp
// sync_variant), or auto (the default): chosen by 5-fold cross-validation inside the rows being
// fitted (the training rows of fidelity; select_sync_variant), Pollux's form under 25 rows.
// predict takes the variant from PARAMS.json; --variant there only checks that it matches.
//   fit_model fit      --model ps-async --clusters TRAIN.json [--contention spotdnn|load] [--json]
//   fit_model fidelity --model ps-async --clusters TRAIN.json [--contention spotdnn|load] [--json]
//   fit_model predict  --model ps-async --params PARAMS.json --clusters TEST.json [--confidence 0.95] [--json]
//                      (examples/fit_model_ps_async.hpp)
//
// The CSV files are the Pollux traces' placements format (io/pollux_trace.hpp). `fit --json`
// prints the fit (io/json.hpp, sync_fit_result) that `predict --params` reads back. Malformed
// command lines and inputs: one line on stderr naming the flag, field or line, exit code 2.
//
// Models are dispatched on --model: each has a fit, predict and fidelity function taking the
// parsed flags (see `model_commands` below); adding a model is one entry there.

#include <dnnplan/fit/fidelity.hpp>
#include <dnnplan/fit/sync_data_parallel.hpp>
#include <dnnplan/io/fit_json.hpp>
#include <dnnplan/io/fit_report_json.hpp>
#include <dnnplan/io/pollux_trace.hpp>

#include "cli_support.hpp"
#include "fit_model_ps_async.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using dnnplan_examples::command_line_error;

constexpr std::string_view usage =
    "usage: fit_model fit|predict|fidelity --model sync-data-parallel|ps-async "
    "[--pollux-placements FILE.csv | --clusters FILE.json] [--params PARAMS.json] [--gpus-per-node N] "
    "[--confidence C] [--train-fraction F] [--seed S] "
    "[--variant pollux|node-term|batch-power|node-term+batch-power|auto] [--contention spotdnn|load] [--json]";

/// The parsed command line: the command, --model, the valued flags and --json.
struct arguments {
    std::string command;
    std::string model;
    std::map<std::string, std::string, std::less<>> flags;  ///< "--flag" -> value
    bool json = false;

    [[nodiscard]] const std::string* find(std::string_view flag) const {
        const auto it = flags.find(flag);
        return it == flags.end() ? nullptr : &it->second;
    }
    [[nodiscard]] const std::string& required(std::string_view flag) const {
        const std::string* value = find(flag);
        if (value == nullptr) {
            std::string message = command;
            message += " --model ";
            message += model;
            message += " needs ";
            message += flag;
            throw command_line_error{message};
        }
        return *value;
    }
    /// Rejects any flag not in `allowed` (per model and command).
    void only(std::initializer_list<std::string_view> allowed) const {
        for (const auto& [flag, value] : flags)
            if (std::find(allowed.begin(), allowed.end(), flag) == allowed.end()) {
                std::string message = "option ";
                message += flag;
                message += " does not apply to ";
                message += command;
                message += " --model ";
                message += model;
                throw command_line_error{message};
            }
    }
};

[[nodiscard]] arguments parse_arguments(int argc, char** argv) {
    namespace cli = dnnplan_examples;
    arguments args;
    if (argc < 2) throw command_line_error{"missing command (fit, predict or fidelity)"};
    args.command = argv[1];
    if (args.command == "-h" || args.command == "--help") throw cli::help_requested{};
    if (args.command != "fit" && args.command != "predict" && args.command != "fidelity")
        throw command_line_error{"unknown command " + args.command + " (expected fit, predict or fidelity)"};
    std::vector<cli::flag> flags{cli::switch_flag("--json", args.json)};
    for (const std::string_view name : {"--model", "--pollux-placements", "--params", "--gpus-per-node", "--confidence",
                                        "--train-fraction", "--seed", "--clusters", "--variant", "--contention"})
        flags.push_back({name, cli::takes::one,
                         [&args](std::string_view flag, std::string_view value) { args.flags.emplace(flag, value); }});
    (void)cli::parse_command_line(flags, argc, argv, 2);
    const std::string* model = args.find("--model");
    if (model == nullptr) throw command_line_error{"missing --model"};
    args.model = *model;
    args.flags.erase("--model");
    return args;
}

using dnnplan_examples::input_error;

template <class Read>
auto read_file(const std::string& file, Read&& read) {
    return dnnplan_examples::read_input(file, std::forward<Read>(read));
}

// ---- sync-data-parallel ---------------------------------------------------------------------

[[nodiscard]] std::int32_t gpus_per_node(const arguments& args) {
    const std::string* text = args.find("--gpus-per-node");
    if (text == nullptr) return 9;  // any digit: one digit per node is the format's own limit
    const auto value = dnnplan_examples::parse_number<std::int32_t>("--gpus-per-node", *text);
    if (value < 1 || value > 9) throw command_line_error{"--gpus-per-node expects an integer in [1, 9]"};
    return value;
}

[[nodiscard]] std::vector<dnnplan::pollux_placement_row> read_placements(const arguments& args) {
    const std::int32_t limit = gpus_per_node(args);
    return read_file(args.required("--pollux-placements"),
                     [&](std::istream& in) { return dnnplan::read_pollux_placements(in, limit); });
}

[[nodiscard]] std::vector<dnnplan::sync_step_sample> samples_of(const std::vector<dnnplan::pollux_placement_row>& rows) {
    std::vector<dnnplan::sync_step_sample> out;
    out.reserve(rows.size());
    for (const auto& r : rows) out.push_back(r.sample());
    return out;
}

/// A dnnplan::error from fitting or predicting: the input file's fault (too few rows, ...).
template <class F>
auto on_file(const std::string& file, F&& f) {
    return dnnplan_examples::on_input(file, std::forward<F>(f));
}

std::string percent(double ratio) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f%%", 100.0 * ratio);
    return buffer;
}

void print_fit_text(const dnnplan::sync_fit_result& fit) {
    const auto x = dnnplan::to_vector(fit.params, fit.variant);
    const auto names = dnnplan::sync_param_names(fit.variant);
    std::cout << "Synchronous data-parallel model (";
    if (fit.variant == dnnplan::sync_variant::pollux) std::cout << "Pollux form";
    else std::cout << "variant " << dnnplan::to_string(fit.variant);
    std::cout << "), " << fit.quality.samples << " samples\n";
    for (std::size_t j = 0; j < names.size(); ++j)
        std::cout << "  " << names[j] << " = " << x(static_cast<Eigen::Index>(j)) << (fit.is_pinned(names[j]) ? "  (pinned)" : "")
                  << '\n';
    std::cout << "Fit on the training rows: median APE " << percent(fit.quality.median_ape_ratio) << ", p90 APE "
              << percent(fit.quality.p90_ape_ratio) << ", RMSE " << fit.quality.rmse << " s, R^2 ";
    if (fit.quality.r_squared) std::cout << *fit.quality.r_squared;
    else std::cout << "undefined (every step time equal)";
    std::cout << '\n';
}

/// --variant: a sync_variant name, or "auto" (the default; nullopt: chosen by cross-validation).
[[nodiscard]] std::optional<dnnplan::sync_variant> requested_variant(const arguments& args) {
    const std::string* text = args.find("--variant");
    if (text == nullptr) return std::nullopt;
    if (*text == "auto") return std::nullopt;
    if (const auto v = dnnplan::enum_from_string<dnnplan::sync_variant>(*text)) return *v;
    throw command_line_error{"--variant expects pollux, node-term, batch-power, node-term+batch-power or auto"};
}

/// The fit options of the requested variant; for auto, the cross-validated choice on `samples`
/// (written to `selection`).
[[nodiscard]] dnnplan::sync_fit_options fit_options_for(const arguments& args, const std::string& file,
                                                        const std::vector<dnnplan::sync_step_sample>& samples,
                                                        std::optional<dnnplan::sync_variant_selection>& selection) {
    dnnplan::sync_fit_options options;
    if (const auto v = requested_variant(args)) {
        options.variant = *v;
    } else if (samples.size() >= dnnplan::sync_fit_options::auto_variant_min_samples) {
        selection = on_file(file, [&] { return dnnplan::select_sync_variant(samples); });
        options.variant = selection->chosen;
    } else {
        options.variant = dnnplan::sync_variant::pollux;  // too few rows to cross-validate: the library's rule
    }
    return options;
}

void print_selection_text(const dnnplan::sync_variant_selection& s) {
    std::cout << "Variant chosen by " << dnnplan::sync_selection_options{}.folds
              << "-fold cross-validation on the fitted rows: " << dnnplan::to_string(s.chosen) << '\n';
    for (const auto& score : s.scores)
        std::cout << "  " << dnnplan::to_string(score.variant) << ": CV median APE " << percent(score.cv_median_ape_ratio)
                  << ", p90 " << percent(score.cv_p90_ape_ratio) << '\n';
}

int sync_fit(const arguments& args) {
    args.only({"--pollux-placements", "--gpus-per-node", "--variant"});
    const auto rows = read_placements(args);
    const auto samples = samples_of(rows);
    const std::string& file = args.required("--pollux-placements");
    std::optional<dnnplan::sync_variant_selection> selection;
    const auto options = fit_options_for(args, file, samples, selection);
    const auto fit = on_file(file, [&] { return dnnplan::fit_sync_data_parallel(samples, options); });
    if (selection && !args.json) print_selection_text(*selection);
    if (args.json) std::cout << dnnplan::to_json_text(fit) << '\n';
    else print_fit_text(fit);
    return 0;
}

int sync_predict(const arguments& args) {
    args.only({"--pollux-placements", "--gpus-per-node", "--params", "--confidence", "--variant"});
    double confidence = 0.95;
    if (const std::string* text = args.find("--confidence")) {
        confidence = dnnplan_examples::parse_number<double>("--confidence", *text);
        if (!(confidence > 0.0 && confidence < 1.0)) throw command_line_error{"--confidence expects a number in (0, 1)"};
    }
    const auto fit = read_file(args.required("--params"), [](std::istream& in) { return dnnplan::parse_sync_fit_result(in); });
    if (args.find("--variant") != nullptr) {
        const auto v = requested_variant(args);
        if (!v) throw command_line_error{"--variant auto does not apply to predict (the params record the variant)"};
        if (*v != fit.variant) {
            std::string message = "--variant ";
            message += dnnplan::to_string(*v);
            message += " does not match the params (variant ";
            message += dnnplan::to_string(fit.variant);
            message += ")";
            throw command_line_error{message};
        }
    }
    const auto rows = read_placements(args);
    std::vector<dnnplan::interval> predictions;
    predictions.reserve(rows.size());
    for (const auto& r : rows) predictions.push_back(dnnplan::predict_step_time_with_interval(fit, r.sample().shape, confidence));
    if (args.json) {
        std::cout << dnnplan::sync_predictions_json(predictions).dump(2) << '\n';
    } else {
        std::cout << "line  placement  local_bsz  measured_s  predicted_s  interval_s (" << percent(confidence) << ")\n";
        for (std::size_t i = 0; i < rows.size(); ++i) {
            std::string where;
            for (const auto g : rows[i].where.gpus_per_node) where += static_cast<char>('0' + g);
            std::printf("%4lld  %9s  %9g  %10.5f  %11.5f  [%.5f, %.5f]\n", static_cast<long long>(rows[i].line),
                        where.c_str(), rows[i].local_batch, rows[i].step_time_s, predictions[i].value, predictions[i].lower,
                        predictions[i].upper);
        }
    }
    return 0;
}

int sync_fidelity(const arguments& args) {
    args.only({"--pollux-placements", "--gpus-per-node", "--train-fraction", "--seed", "--variant"});
    dnnplan::sync_holdout_options options;
    if (const std::string* text = args.find("--train-fraction")) {
        options.train_fraction = dnnplan_examples::parse_number<double>("--train-fraction", *text);
        if (!(options.train_fraction > 0.0 && options.train_fraction < 1.0))
            throw command_line_error{"--train-fraction expects a number in (0, 1)"};
    }
    if (const std::string* text = args.find("--seed")) options.seed = dnnplan_examples::parse_number<std::uint64_t>("--seed", *text);
    options.variant = requested_variant(args);  // none: chosen on the training rows only
    const std::string& file = args.required("--pollux-placements");
    const auto rows = read_placements(args);
    const auto samples = samples_of(rows);
    const auto result = on_file(file, [&] { return dnnplan::sync_holdout_fidelity(samples, options); });
    const auto& fit = result.fit;
    const auto& held_out = result.held_out;
    if (args.json) {
        std::cout << dnnplan::sync_fidelity_json(result, options).dump(2) << '\n';
    } else {
        if (result.selection) print_selection_text(*result.selection);
        print_fit_text(fit);
        std::cout << "Held out " << result.split.held_out.size() << " of " << rows.size() << " rows (train fraction "
                  << options.train_fraction << ", seed " << options.seed << "): median APE "
                  << percent(held_out.median_ape_ratio) << ", p90 APE " << percent(held_out.p90_ape_ratio) << ", RMSE "
                  << held_out.rmse << " s\n";
    }
    return 0;
}

// ---- ps-async (examples/fit_model_ps_async.hpp) ----------------------------------------------

namespace ps = dnnplan_examples::ps_async_cli;

/// --contention spotdnn|load (default load, the library's).
dnnplan::ps_contention_model ps_contention(const arguments& args) {
    const std::string* text = args.find("--contention");
    if (text == nullptr) return dnnplan::ps_contention_model::load;
    if (const auto m = dnnplan::enum_from_string<dnnplan::ps_contention_model>(*text)) return *m;
    std::string message = "--contention expects spotdnn or load, got ";
    message += *text;
    throw command_line_error{message};
}

int ps_fit(const arguments& args) {
    args.only({"--clusters", "--contention"});
    const auto contention = ps_contention(args);
    const std::string& file = args.required("--clusters");
    const auto clusters = read_file(file, [](std::istream& in) { return ps::read_clusters(in); });
    const auto fit = on_file(file, [&] { return ps::fit(clusters, contention); });
    ps::print_fit(fit, args.json, std::cout);
    return 0;
}

int ps_predict(const arguments& args) {
    args.only({"--clusters", "--params", "--confidence"});
    double confidence = 0.95;
    if (const std::string* text = args.find("--confidence")) {
        confidence = dnnplan_examples::parse_number<double>("--confidence", *text);
        if (!(confidence > 0.0 && confidence < 1.0)) throw command_line_error{"--confidence expects a number in (0, 1)"};
    }
    const auto fit = read_file(args.required("--params"), [](std::istream& in) { return ps::read_params(in); });
    const std::string& file = args.required("--clusters");
    const auto clusters = read_file(file, [](std::istream& in) { return ps::read_clusters(in); });
    on_file(file, [&] { ps::print_predictions(fit, clusters, confidence, args.json, std::cout); });
    return 0;
}

int ps_fidelity(const arguments& args) {
    args.only({"--clusters", "--contention"});
    const auto contention = ps_contention(args);
    const std::string& file = args.required("--clusters");
    const auto clusters = read_file(file, [](std::istream& in) { return ps::read_clusters(in); });
    on_file(file, [&] { ps::print_leave_one_out(clusters, contention, args.json, std::cout); });
    return 0;
}

// ---- dispatch -------------------------------------------------------------------------------

struct model_commands {
    std::string_view name;
    int (*fit)(const arguments&);
    int (*predict)(const arguments&);
    int (*fidelity)(const arguments&);
};

int dispatch(const arguments& args) {
    static const model_commands models[] = {
        {"sync-data-parallel", sync_fit, sync_predict, sync_fidelity},
        {"ps-async", ps_fit, ps_predict, ps_fidelity},
    };
    for (const auto& m : models) {
        if (m.name != args.model) continue;
        if (args.command == "fit") return m.fit(args);
        if (args.command == "predict") return m.predict(args);
        return m.fidelity(args);
    }
    std::string message = "unknown --model ";
    message += args.model;
    message += " (expected sync-data-parallel or ps-async)";
    throw command_line_error{message};
}

int run(int argc, char** argv) { return dispatch(parse_arguments(argc, argv)); }

}  // namespace

int main(int argc, char** argv) { return dnnplan_examples::guarded_main("fit_model", usage, argc, argv, run); }
