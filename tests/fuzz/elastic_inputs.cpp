// Fuzzes the elastic advisor's two readers (io/elastic_advisor_json.hpp) and what runs on what they accept
// (the first byte picks; fuzz_support.hpp's properties throughout):
//   even: a measurement table (elastic_advisor --measurements). Accepted, it round-trips; the PS
//         CPU proxy is finite and throws nothing; a policy (bit 4: DLRover, else the model)
//         replays on it with a finite time and cost, without a deadline (bit 2: a deadline)
//         always "met"; the model policy stays within its trials and, without a deadline, pays
//         no less than the hindsight choice.
//   odd:  runtime records as JSON lines (elastic_advisor advise), read up to the first line
//         rejected. Accepted ones round-trip; both advisors run on them with a fixed job (1-2 PS x
//         1-8 workers): a rejection is the library's error, a model result keeps the one result
//         shape (core/result.hpp: e.g. infeasible has no plan) and round-trips.
#include <dnnplan/io/elastic_advisor_json.hpp>
#include <dnnplan/solve/elastic_advisor/policies.hpp>

#include "fuzz_support.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

void check_report(const dnnplan::replay_report& r, const dnnplan::replay_options& o, const char* policy) {
    const std::string who = std::string(policy) + " policy: ";
    if (!std::isfinite(r.time_s) || !std::isfinite(r.cost_usd) || r.time_s < 0.0 || r.cost_usd < 0.0)
        dnnplan_fuzz::violated("a replay's time and cost are finite", who + std::to_string(r.time_s) + " s, " +
                                                                           std::to_string(r.cost_usd) + " USD");
    if (r.segments.empty()) dnnplan_fuzz::violated("a replay runs something", who);
    if (!o.deadline_s && !r.met_deadline) dnnplan_fuzz::violated("no deadline is always met", who);
}

void table_case(std::string_view text, std::uint8_t selector) {
    dnnplan::measurement_table table;
    if (!dnnplan_fuzz::accepted([&] { table = dnnplan::parse_measurement_table(text); })) return;
    dnnplan_fuzz::check_round_trip(table);
    // The load model's cost grows with the worker count: keep an input's replays well under the timeout.
    if (table.measured.size() > 24) return;
    double fastest = 0.0;
    for (const auto& m : table.measured) {
        if (m.ps > 16 || m.workers > 64) return;
        fastest = std::max(fastest, m.steps_per_s);
    }
    try {
        for (const auto& [c, u] : dnnplan::ps_cpu_proxy(table))
            if (!std::isfinite(u) || u < 0.0) dnnplan_fuzz::violated("the PS CPU proxy is finite", dnnplan::to_string(c));
    } catch (const std::exception& e) {
        dnnplan_fuzz::violated("the PS CPU proxy of a valid table throws nothing", e.what());
    }
    // Work for 600 s of the fastest configuration; the selector's bits pick a deadline of 2x that or none.
    dnnplan::replay_options o{.work_steps = fastest * 600.0, .max_decisions = 50};
    if (!(o.work_steps > 0.0) || !std::isfinite(o.work_steps)) return;
    if (selector & 2) o.deadline_s = 1200.0;
    // One policy per input (each replay fits the table once for the proxy): the selector's bit 4.
    try {
        if (selector & 4) {
            check_report(dnnplan::replay(table, o, dnnplan::dlrover_policy{}), o, "DLRover");
            return;
        }
        const dnnplan::replay_report model = dnnplan::replay(table, o, dnnplan::model_policy{});
        check_report(model, o, "model");
        if (model.trials.size() > 5) dnnplan_fuzz::violated("the model policy tries at most max_trials", std::to_string(model.trials.size()));
        // Without a deadline no mix of configurations costs less per step than the cheapest one (with
        // one, a cheap slow trial and a fast finish may beat every single configuration that meets it).
        if (o.deadline_s) return;
        if (const auto best = dnnplan::best_with_hindsight(table, o); best && best->cost_usd > model.cost_usd * (1.0 + 1e-9))
            dnnplan_fuzz::violated("hindsight is no dearer than a policy", std::to_string(best->cost_usd) + " > " +
                                                                              std::to_string(model.cost_usd));
    } catch (const std::exception& e) {
        dnnplan_fuzz::violated("a replay on a valid table throws nothing", e.what());
    }
}

void records_case(std::string_view text, std::uint8_t selector) {
    std::vector<dnnplan::elastic_record> records;
    while (!text.empty() && records.size() < 64) {
        const std::size_t end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        if (line.empty()) continue;
        dnnplan::elastic_record r;
        if (!dnnplan_fuzz::accepted([&] { r = dnnplan::parse_elastic_record(line); })) break;
        dnnplan_fuzz::check_round_trip(r);
        records.push_back(r);
    }
    dnnplan::advise_setup setup{.job = {.gpu = "V100", .remaining_steps = 64'000.0, .worker_usd_per_h = 0.861,
                                        .ps_usd_per_h = 0.1429}};
    if (selector & 2) setup.job.deadline_s = 1600.0;
    for (std::int32_t ps = 1; ps <= 2; ++ps)
        for (std::int32_t workers = 1; workers <= 8; ++workers) setup.job.configurations.push_back({ps, workers});
    dnnplan::elastic_result plan;
    if (dnnplan_fuzz::accepted([&] { plan = dnnplan::advise(records, setup); }))
        dnnplan_fuzz::check_result(plan, dnnplan::search_budget{});
    (void)dnnplan_fuzz::accepted([&] { (void)dnnplan::dlrover_advise(records, {.cpu = 64.0, .memory_mb = 1.0e6}); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text = dnnplan_fuzz::text_of(data + 1, size - 1);
    if (data[0] % 2 == 0) table_case(text, data[0]);
    else records_case(text, data[0]);
    return 0;
}
