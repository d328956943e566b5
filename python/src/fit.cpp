// fit_model and elastic_advisor: the documents `fit_model fit|predict|fidelity --json` and
// `elastic_advisor replay --json` / `advise` print (io/fit_report_json.hpp,
// io/elastic_advisor_json.hpp), from the same inputs as text (module.hpp).

#include "module.hpp"

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/fit/fidelity.hpp>
#include <dnnplan/io/elastic_advisor_json.hpp>
#include <dnnplan/io/fit_json.hpp>
#include <dnnplan/io/fit_report_json.hpp>
#include <dnnplan/io/pollux_trace.hpp>
#include <dnnplan/solve/elastic_advisor/policies.hpp>

#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace py = pybind11;

namespace dnnplan_python {

namespace {

/// The options of fit_model that are not its data (None: the command line's default).
struct fit_flags {
    std::int32_t gpus_per_node = 9;
    std::optional<std::string> variant;
    double confidence = 0.95;
    dnnplan::sync_holdout_options holdout{};
    dnnplan::ps_contention_model contention = dnnplan::ps_contention_model::load;
};

void require_open_unit(const char* field, double value) {
    if (!(value > 0.0 && value < 1.0)) throw dnnplan::invalid_input(field, dnnplan::detail::format_number(value), "a number in (0, 1)");
}

/// --variant as a form, or none for "auto" (and when absent).
std::optional<dnnplan::sync_variant> variant_of(const std::optional<std::string>& text) {
    if (!text || *text == "auto") return std::nullopt;
    return dnnplan::parse_enum<dnnplan::sync_variant>(*text, "variant");
}

std::vector<dnnplan::sync_step_sample> placements(const std::string& csv, std::int32_t gpus_per_node) {
    if (gpus_per_node < 1 || gpus_per_node > 9)
        throw dnnplan::invalid_input("gpus_per_node", std::to_string(gpus_per_node), "an integer in [1, 9]");
    std::istringstream in(csv);
    std::vector<dnnplan::sync_step_sample> out;
    for (const auto& row : dnnplan::read_pollux_placements(in, gpus_per_node)) out.push_back(row.sample());
    return out;
}

/// `fit_model COMMAND --model sync-data-parallel ... --json` on the placements' CSV text.
std::string sync_command(const std::string& command, const std::string& csv, const std::string& params, const fit_flags& f) {
    const auto samples = placements(csv, f.gpus_per_node);
    if (command == "fit") {
        dnnplan::sync_fit_options options;
        options.variant = variant_of(f.variant);
        return dnnplan::to_json_text(dnnplan::fit_sync_data_parallel(samples, options));
    }
    if (command == "predict") {
        require_open_unit("confidence", f.confidence);
        const dnnplan::sync_fit_result fit = dnnplan::parse_sync_fit_result(params);
        if (f.variant && (*f.variant == "auto" || variant_of(f.variant) != fit.variant))
            throw dnnplan::invalid_input("variant", *f.variant, std::string("the params' variant, ") + std::string(to_string(fit.variant)));
        std::vector<dnnplan::interval> predictions;
        for (const auto& s : samples) predictions.push_back(dnnplan::predict_step_time_with_interval(fit, s.shape, f.confidence));
        return dnnplan::sync_predictions_json(predictions).dump(2);
    }
    dnnplan::sync_holdout_options options = f.holdout;
    require_open_unit("train_fraction", options.train_fraction);
    options.variant = variant_of(f.variant);
    return dnnplan::sync_fidelity_json(dnnplan::sync_holdout_fidelity(samples, options), options).dump(2);
}

/// `fit_model COMMAND --model ps-async ... --json` on the clusters' JSON text.
std::string ps_command(const std::string& command, const std::string& clusters_text, const std::string& params, const fit_flags& f) {
    const dnnplan::ps_cluster_set clusters = dnnplan::parse_ps_cluster_set(clusters_text);
    if (command == "fit") return dnnplan::to_json_text(dnnplan::fit_ps_async(clusters, {.contention_model = f.contention}));
    if (command == "predict") {
        require_open_unit("confidence", f.confidence);
        const dnnplan::ps_async_fit_result fit = dnnplan::parse_ps_async_fit_result(params);
        return dnnplan::ps_predictions_json(clusters, dnnplan::ps_predictions(fit, clusters, f.confidence)).dump(2);
    }
    return dnnplan::ps_leave_one_out_json(dnnplan::ps_leave_one_out(clusters, {.contention_model = f.contention}), f.contention).dump(2);
}

std::string fit_model(const std::string& command, const std::string& model, const std::string& data, const std::string& params,
                      const fit_flags& f) {
    if (command != "fit" && command != "predict" && command != "fidelity")
        throw dnnplan::invalid_input("command", command, "fit, predict or fidelity");
    if (model == "sync-data-parallel") return sync_command(command, data, params, f);
    if (model == "ps-async") return ps_command(command, data, params, f);
    throw dnnplan::invalid_input("model", model, "sync-data-parallel or ps-async");
}

dnnplan::advise_setup advise_setup_of(double work_steps, std::optional<double> deadline_s, std::int32_t max_ps, std::int32_t max_workers,
                                      double worker_usd_per_h, double ps_usd_per_h, double trial_s) {
    dnnplan::advise_setup setup{.job = {.gpu = "worker", .remaining_steps = work_steps, .deadline_s = deadline_s,
                                        .worker_usd_per_h = worker_usd_per_h, .ps_usd_per_h = ps_usd_per_h,
                                        .configurations = dnnplan::configuration_grid(max_ps, max_workers)}};
    setup.options.trial_s = trial_s;
    if (deadline_s && !(*deadline_s > 0.0))
        throw dnnplan::invalid_input("deadline_s", dnnplan::detail::format_number(*deadline_s), "> 0 (from the job's start)");
    setup.job.validate("job");
    setup.options.validate("options");
    return setup;
}

/// `elastic_advisor advise`: one plan per record, after it (the JSON text of each line).
std::vector<std::string> advise(const std::vector<std::string>& records_text, const std::string& policy, const dnnplan::advise_setup& setup,
                                std::int32_t max_ps, std::int32_t max_workers) {
    if (policy != "model" && policy != "dlrover") throw dnnplan::invalid_input("policy", policy, "model or dlrover");
    std::vector<dnnplan::elastic_record> records;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < records_text.size(); ++i) {
        try {
            records.push_back(dnnplan::parse_elastic_record(records_text[i]));
        } catch (const dnnplan::invalid_input& e) {
            throw dnnplan::invalid_input("records[" + std::to_string(i) + "]." + e.field(), e.value(), e.expected());
        } catch (const dnnplan::parse_error& e) {
            const std::string message = std::string(e.what()).substr(("parse error at " + e.where() + ": ").size());
            throw dnnplan::parse_error("records[" + std::to_string(i) + "] " + e.where(), message);
        }
        out.push_back(policy == "model" ? dnnplan::advice_json(dnnplan::advise(records, setup)).dump()
                                        : dnnplan::dlrover_plan_json(dnnplan::dlrover_advise(records, dnnplan::dlrover_limits(records, max_ps, max_workers))).dump());
    }
    return out;
}

}  // namespace

void bind_fit_and_elastic(py::module_& m) {
    m.def(
        "fit_model",
        [](const std::string& command, const std::string& model, const std::string& data, const std::string& params,
           std::int32_t gpus_per_node, std::optional<std::string> variant, double confidence, double train_fraction, std::uint64_t seed,
           const std::string& contention) {
            fit_flags f{.gpus_per_node = gpus_per_node, .variant = std::move(variant), .confidence = confidence};
            f.holdout.train_fraction = train_fraction;
            f.holdout.seed = seed;
            f.contention = dnnplan::parse_enum<dnnplan::ps_contention_model>(contention, "contention");
            return fit_model(command, model, data, params, f);
        },
        py::arg("command"), py::arg("model"), py::arg("data"), py::arg("params"), py::arg("gpus_per_node"), py::arg("variant"),
        py::arg("confidence"), py::arg("train_fraction"), py::arg("seed"), py::arg("contention"), py::call_guard<py::gil_scoped_release>(),
        "fit_model COMMAND --model MODEL ... --json on the data's text (placements CSV or clusters JSON): the document's JSON text");
    m.def(
        "elastic_replay",
        [](const std::string& table, double work_steps, std::optional<double> deadline_s, double trial_s, const std::string& policy) {
            const dnnplan::measurement_table t = dnnplan::parse_measurement_table(table);
            const dnnplan::replay_options options{.work_steps = work_steps, .deadline_s = deadline_s, .trial_s = trial_s};
            options.validate("options");
            if (policy == "model") return dnnplan::to_json_text(dnnplan::replay(t, options, dnnplan::model_policy{}));
            if (policy == "dlrover") return dnnplan::to_json_text(dnnplan::replay(t, options, dnnplan::dlrover_policy{}));
            throw dnnplan::invalid_input("policy", policy, "model or dlrover");
        },
        py::arg("table"), py::arg("work_steps"), py::arg("deadline_s"), py::arg("trial_s"), py::arg("policy"),
        py::call_guard<py::gil_scoped_release>(), "elastic_advisor replay --json on a measurement table's JSON text");
    m.def(
        "elastic_advise",
        [](const std::vector<std::string>& records, double work_steps, std::optional<double> deadline_s, std::int32_t max_ps,
           std::int32_t max_workers, double worker_usd_per_h, double ps_usd_per_h, double trial_s, const std::string& policy) {
            const auto setup = advise_setup_of(work_steps, deadline_s, max_ps, max_workers, worker_usd_per_h, ps_usd_per_h, trial_s);
            return advise(records, policy, setup, max_ps, max_workers);
        },
        py::arg("records"), py::arg("work_steps"), py::arg("deadline_s"), py::arg("max_ps"), py::arg("max_workers"),
        py::arg("worker_usd_per_h"), py::arg("ps_usd_per_h"), py::arg("trial_s"), py::arg("policy"), py::call_guard<py::gil_scoped_release>(),
        "elastic_advisor advise: the JSON text of the plan printed after each record (records as JSON texts)");
}

}  // namespace dnnplan_python
