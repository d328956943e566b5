#pragma once
// JSON of the runtime deadline policy (solve/deadline_policy/) and of the traces it runs on. The
// rules of every JSON header are in io/detail/json_core.hpp; "?": optional (absent: the struct's
// default).
//
// Public trace files, read into spot_market_trace (preemption/spot_market.hpp) with a name the
// caller gives and an explicit availability_polarity (io/spot_market_csv.hpp: never guessed):
//   Can't Be Late's trace (skypilot-org/spot-traces; Wu et al., NSDI '24), also SkyNomad's converted
//   traces: {"metadata": {"gap_seconds", "on_demand_usd_per_h"? (null: none), ...}, "data": [count],
//   "prices"?: [spot USD/h per tick]}. Unknown keys are rejected, except inside "metadata": Can't
//   Be Late's files hold only "gap_seconds" there, SkyNomad's (andylizf/skynomad-artifact, data/README.md)
//   also "start_time", "zone", "price_info" ({"price", "on_demand_price", ...}: not read, give
//   on_demand_usd_per_h), "source_file", "note" and "gang_threshold"; every other key of
//   "metadata" is ignored. `preempted` is SkyNomad's convention for its converted "data"
//   (1 = unavailable); Can't Be Late's availability files count available instances.
//   A price side file (SkyNomad's data/v100_spot_prices.json): {"<name>": [USD/h per row], ...}.
//
// The deadline policy's types:
//   spot_market_trace:  {"name", "gap_s", "available": [count], "spot_usd_per_h"?: [USD/h],
//                        "on_demand_usd_per_h"? (null: none)}                                 then validate
//   deadline_market:    {"regions": [spot_market_trace]}                                       then validate
//   deadline_job:       {"work_s", "deadline_s", "changeover_s"?, "instances"?, "egress_usd"?}  then validate
//   deadline_state:     {"mode" ("wait" | "spot" | "on_demand"), "region" (null: no run yet),
//                        "changeover_left_s"?, "work_left_s"}
//   deadline_decision:  {"action", "region", "reason"}                                 written only
//   deadline_outcome:   {"start_tick", "cost_usd", "finish_h", "met", "spot_h", "on_demand_h",
//                        "changeovers", "region_moves"} and, only when the trace ended before the
//                        work did, "finished": false and "work_left_h"            written only (hours)
//   deadline_result:    the result shape (io/core_json.hpp), plan and best_effort deadline_decision;
//                        details {"on_demand_finish_s", "on_demand_cost_usd"}              written only
//   deadline_policy_kind: "default" | "on_demand" | "greedy" | "uniform_progress" | "optimal"
//   deadline_policy_summary: {"policy", "mean_cost_usd", "mean_ratio", "p90_ratio", "missed",
//                        "mean_spot_h", "ratios": [number]}
//   deadline_comparison: {"policies": [deadline_policy_summary], "windows", "infeasible_windows"}
//   deadline_observation (the `decide` input; read only):
//     {"job": deadline_job, "regions": [spot_market_trace, each with its prices], "elapsed_s",
//      "work_done_s", "state": {"mode", "region" (null: no run yet), "changeover_left_s"?},
//      "policy"? (default "default"; not "optimal")}                                         then validate
//     Every region's trace ends at now; the job started elapsed_s / gap ticks before that tick
//     (elapsed_s: a whole number of ticks within what was observed); work_done_s in [0, work_s].
//   deadline_simulation (the input of `simulate` and `compare` as one document; read only):
//     {"job": deadline_job, "regions": [spot_market_trace, each with its prices], "start_ticks":
//      [tick], "policy"? (default "default"), "threads"? (default 1)}                      then validate
// The documents the command line prints, for every caller that prints the same (the Python
// module): simulation_json (`simulate --json`: {"policy", "windows": [deadline_outcome]}) and
// decision_json (`decide`: {"status", "action", "region" (the region's name), "reason"}).

#include <dnnplan/io/core_json.hpp>
#include <dnnplan/io/detail/json_core.hpp>
#include <dnnplan/io/spot_market_csv.hpp>
#include <dnnplan/preemption/spot_market.hpp>
#include <dnnplan/solve/deadline_policy/observation.hpp>
#include <dnnplan/runtime/deadline_problem.hpp>
#include <dnnplan/runtime/simulate.hpp>
#include <dnnplan/solve/deadline_policy/solve.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace dnnplan::detail::json_io {

template <>
struct json_fields<spot_market_trace> {
    static constexpr auto fields = std::tuple{
        required("name", &spot_market_trace::name),
        required("gap_s", &spot_market_trace::gap_s),
        required("available", &spot_market_trace::available),
        optional("spot_usd_per_h", &spot_market_trace::spot_usd_per_h),
        optional("on_demand_usd_per_h", &spot_market_trace::on_demand_usd_per_h),
    };
};

template <>
struct json_fields<deadline_market> {
    static constexpr auto fields = std::tuple{required("regions", &deadline_market::regions)};
};

template <>
struct json_fields<deadline_job> {
    static constexpr auto fields = std::tuple{
        required("work_s", &deadline_job::work_s),
        required("deadline_s", &deadline_job::deadline_s),
        optional("changeover_s", &deadline_job::changeover_s),
        optional("instances", &deadline_job::instances),
        optional("egress_usd", &deadline_job::egress_usd),
    };
};

template <>
struct json_fields<deadline_decision_details> {
    static constexpr auto fields = std::tuple{
        required("on_demand_finish_s", &deadline_decision_details::on_demand_finish_s),
        required("on_demand_cost_usd", &deadline_decision_details::on_demand_cost_usd),
    };
};

template <>
struct json_fields<deadline_policy_summary> {
    static constexpr auto fields = std::tuple{
        required("policy", &deadline_policy_summary::policy),
        required("mean_cost_usd", &deadline_policy_summary::mean_cost_usd),
        required("mean_ratio", &deadline_policy_summary::mean_ratio),
        required("p90_ratio", &deadline_policy_summary::p90_ratio),
        required("missed", &deadline_policy_summary::missed),
        required("mean_spot_h", &deadline_policy_summary::mean_spot_h),
        required("ratios", &deadline_policy_summary::ratios),
    };
};

template <>
struct json_fields<deadline_comparison> {
    static constexpr auto fields = std::tuple{
        required("policies", &deadline_comparison::policies),
        required("windows", &deadline_comparison::windows),
        required("infeasible_windows", &deadline_comparison::infeasible_windows),
    };
};

/// "mode", "region" (null: -1) and "changeover_left_s"? of a state object, the keys a state has in
/// both layouts (deadline_state's own, and the decide document's "state").
template <document Json>
void read_state_keys(const object_reader<Json>& in, deadline_state& out) {
    in.required("mode", out.mode);
    std::optional<std::int32_t> region;
    in.required("region", region);
    out.region = region ? *region : -1;
    in.optional("changeover_left_s", out.changeover_left_s);
}

template <>
struct json_value_io<deadline_state> {
    template <class Json>
    static void read(const Json& j, const std::string& path, deadline_state& out) {
        const object_reader<Json> in(j, path, {"mode", "region", "changeover_left_s", "work_left_s"});
        read_state_keys(in, out);
        in.required("work_left_s", out.work_left_s);
    }

    template <class Json>
    static Json write(const deadline_state& s, std::string_view path) {
        Json out = Json::object();
        out["mode"] = std::string(to_string(s.mode));
        out["region"] = s.region < 0 ? Json(nullptr) : Json(s.region);
        out["changeover_left_s"] = write_value<Json>(s.changeover_left_s, member_path(path, "changeover_left_s"));
        out["work_left_s"] = write_value<Json>(s.work_left_s, member_path(path, "work_left_s"));
        return out;
    }
};

/// `value` read as a price: a finite number > 0 (not subnormal: prices are divided by).
template <document Json>
[[nodiscard]] double read_price(const Json& value, const std::string& path) {
    double price = 0.0;
    read_value(tag{}, value, path, price);
    require_positive(path, price);
    return price;
}

/// An array of prices, one per tick; each named `path[i]`.
template <document Json>
[[nodiscard]] std::vector<double> read_prices(const Json& j, const std::string& path) {
    if (!j.is_array()) fail(path, value_text(j), "an array of prices (USD per hour, each > 0)");
    std::vector<double> out;
    out.reserve(j.size());
    for (const auto& element : j) out.push_back(read_price(element, element_path(path, out.size())));
    return out;
}

/// Can't Be Late's "data": counts, each an integer >= 0 (`preempted`: 0 or 1, read as 1 - value).
template <document Json>
[[nodiscard]] std::vector<std::int32_t> read_counts(const Json& j, availability_polarity polarity) {
    if (!j.is_array()) fail("data", value_text(j), "an array of counts, one per tick");
    if (j.empty()) fail("data", "[]", "at least one tick");
    std::vector<std::int32_t> out;
    out.reserve(j.size());
    for (const auto& element : j) {
        const std::string path = element_path("data", out.size());
        std::int32_t count = 0;
        read_value(tag{}, element, path, count);
        if (polarity == availability_polarity::preempted) {
            if (count < 0 || count > 1) fail(path, value_text(element), "0 or 1 (a preempted-probe flag: 1 = unavailable)");
            count = 1 - count;
        }
        out.push_back(count);
    }
    return out;
}

/// A Can't Be Late trace document (the layout at the top of this header).
template <document Json>
[[nodiscard]] spot_market_trace read_cbl_trace(const Json& j, std::string name, availability_polarity polarity) {
    require_utf8("name", name);
    const object_reader<Json> in(j, "", {"metadata", "data", "prices"});
    const Json& metadata = in.at("metadata", "an object with gap_seconds");
    if (!metadata.is_object()) fail("metadata", value_text(metadata), "an object with gap_seconds");
    spot_market_trace t;
    t.name = std::move(name);
    const auto gap = metadata.find("gap_seconds");
    if (gap == metadata.end()) fail("metadata.gap_seconds", "missing", "a number > 0 (seconds between ticks)");
    read_value(tag{}, *gap, "metadata.gap_seconds", t.gap_s);
    require_positive("metadata.gap_seconds", t.gap_s);
    if (const auto on_demand = metadata.find("on_demand_usd_per_h"); on_demand != metadata.end() && !on_demand->is_null())
        t.on_demand_usd_per_h = read_price(*on_demand, "metadata.on_demand_usd_per_h");
    t.available = read_counts(in.at("data", "an array of counts, one per tick"), polarity);
    if (const Json* prices = in.find("prices")) {
        t.spot_usd_per_h = read_prices(*prices, "prices");
        if (t.spot_usd_per_h.size() != t.available.size())
            fail("prices", std::to_string(t.spot_usd_per_h.size()) + " prices",
                 "one price per tick of data (" + std::to_string(t.available.size()) + ")");
    }
    return t;
}

/// {"<name>": [USD/h per row], ...}: each series non-empty, each price finite and > 0.
template <document Json>
[[nodiscard]] std::map<std::string, std::vector<double>> read_price_table(const Json& j) {
    if (!j.is_object()) fail("", value_text(j), "an object of price series by name ({\"<name>\": [USD/h per row]})");
    std::map<std::string, std::vector<double>> out;
    for (auto it = j.begin(); it != j.end(); ++it) {
        std::vector<double> prices = read_prices(it.value(), it.key());
        if (prices.empty()) fail(it.key(), "[]", "at least one price");
        out.emplace(it.key(), std::move(prices));
    }
    return out;
}

/// The start tick of a job that has run `elapsed_s` up to the last tick of `market` (valid).
[[nodiscard]] inline std::size_t start_tick_of(double elapsed_s, const deadline_market& market, const std::string& path) {
    const double g = market.gap_s();
    const std::size_t last = market.ticks() - 1;
    const std::string expected = "a whole number of ticks (gap_s = " + format_number(g) + " s) within what was observed (at most " +
                                 std::to_string(last) + " ticks, " + format_number(static_cast<double>(last) * g) + " s)";
    if (!(elapsed_s >= 0.0)) fail(path, format_number(elapsed_s), expected);
    const double ticks = elapsed_s / g;
    const double whole = std::round(ticks);
    // elapsed_s = i g to within rounding: g (a gap such as 0.1) need not be a binary fraction.
    if (std::abs(ticks - whole) > 1e-9 * std::max(1.0, whole) || whole > static_cast<double>(last))
        fail(path, format_number(elapsed_s), expected);
    return last - static_cast<std::size_t>(whole);
}

/// The decide document (the layout at the top of this header); the rules between its fields that
/// need the job and the market (elapsed_s, work_done_s) are checked here, the others by validate().
template <document Json>
void read_value(tag, const Json& j, const std::string& path, deadline_observation& out) {
    const object_reader<Json> in(j, path, {"job", "regions", "elapsed_s", "work_done_s", "state", "policy"});
    in.required("job", out.job);
    in.required("regions", out.market.regions);
    double elapsed_s = 0.0;
    double work_done_s = 0.0;
    in.required("elapsed_s", elapsed_s);
    in.required("work_done_s", work_done_s);
    const std::string state_path = in.path_of("state");
    read_state_keys(object_reader<Json>(in.at("state", "an object"), state_path, {"mode", "region", "changeover_left_s"}),
                    out.state);
    in.optional("policy", out.policy);
    out.job.validate(in.path_of("job"));
    out.market.validate(path);
    out.start_tick = start_tick_of(elapsed_s, out.market, in.path_of("elapsed_s"));
    if (!(work_done_s >= 0.0 && work_done_s <= out.job.work_s))
        fail(in.path_of("work_done_s"), format_number(work_done_s), "a number in [0, job.work_s = " + format_number(out.job.work_s) + "]");
    out.state.work_left_s = out.job.work_s - work_done_s;
}

/// The simulate/compare document (the layout at the top of this header).
template <document Json>
void read_value(tag, const Json& j, const std::string& path, deadline_simulation& out) {
    const object_reader<Json> in(j, path, {"job", "regions", "start_ticks", "policy", "threads"});
    in.required("job", out.job);
    in.required("regions", out.market.regions);
    in.required("start_ticks", out.start_ticks);
    in.optional("policy", out.policy);
    in.optional("threads", out.threads);
    out.job.validate(in.path_of("job"));
    out.market.validate(path);
    require_at_least(in.path_of("threads"), out.threads, 1);
    if (out.start_ticks.empty()) fail(in.path_of("start_ticks"), "[]", "at least one start tick");
    for (std::size_t k = 0; k < out.start_ticks.size(); ++k)
        (void)window_ticks(out.market, out.job, out.start_ticks[k], in.path_of("start_ticks") + "[" + std::to_string(k) + "]");
}

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

template <detail::json_io::document Json>
void to_json(Json& j, const deadline_state& s) {
    j = detail::json_io::write_value<Json>(s, "");
}

template <detail::json_io::document Json>
void from_json(const Json& j, deadline_state& out) {
    detail::json_io::read_root(j, out);
}

/// Written only: `why` is a static text of the policy, which a reader could not keep.
template <detail::json_io::document Json>
void to_json(Json& j, const deadline_decision& d) {
    Json out = Json::object();
    out["action"] = std::string(to_string(d.action));
    out["region"] = d.region;
    out["reason"] = std::string(d.why);
    j = std::move(out);
}

/// Written only, as the command line prints it: hours (seconds / 3600) do not read back exactly.
/// Built in a local and assigned once (see core_json.hpp's solve_result writer).
template <detail::json_io::document Json>
void to_json(Json& j, const deadline_outcome& o) {
    using detail::json_io::write_value;
    Json out = Json::object();
    out["start_tick"] = o.start_tick;
    out["cost_usd"] = write_value<Json>(o.cost_usd, "cost_usd");
    out["finish_h"] = write_value<Json>(o.finish_s / 3600.0, "finish_h");
    out["met"] = o.met;
    out["spot_h"] = write_value<Json>(o.spot_s / 3600.0, "spot_h");
    out["on_demand_h"] = write_value<Json>(o.on_demand_s / 3600.0, "on_demand_h");
    out["changeovers"] = o.changeovers;
    out["region_moves"] = o.region_moves;
    if (!o.finished) {
        out["finished"] = false;
        out["work_left_h"] = write_value<Json>(o.work_left_s / 3600.0, "work_left_h");
    }
    j = std::move(out);
}

/// Read only: the document says elapsed_s and work_done_s, the struct the start tick and the work
/// left. validate() runs after the structure, at the document root.
template <detail::json_io::document Json>
void from_json(const Json& j, deadline_observation& out) {
    detail::json_io::read_root(j, out);
}

/// Read only, validated at the document root.
template <detail::json_io::document Json>
void from_json(const Json& j, deadline_simulation& out) {
    detail::json_io::read_root(j, out);
}

/// A Can't Be Late trace (the layout at the top of this header) as the trace `name`. Malformed
/// JSON: parse_error("byte N"); anything else wrong: invalid_input naming the field
/// ("metadata.gap_seconds", "data[17]", "prices[3]", "prices" for a length other than data's).
[[nodiscard]] inline spot_market_trace parse_spot_market_json(std::istream& in, std::string name,
                                                              availability_polarity polarity = availability_polarity::available) {
    return detail::json_io::read_cbl_trace(detail::json_io::parse_document(in), std::move(name), polarity);
}

[[nodiscard]] inline spot_market_trace parse_spot_market_json(std::string_view text, std::string name,
                                                              availability_polarity polarity = availability_polarity::available) {
    return detail::json_io::read_cbl_trace(detail::json_io::parse_text(text), std::move(name), polarity);
}

/// A price side file {"<name>": [USD/h per row], ...}; a bad price is named "<name>[i]".
[[nodiscard]] inline std::map<std::string, std::vector<double>> parse_spot_price_table(std::istream& in) {
    return detail::json_io::read_price_table(detail::json_io::parse_document(in));
}

[[nodiscard]] inline std::map<std::string, std::vector<double>> parse_spot_price_table(std::string_view text) {
    return detail::json_io::read_price_table(detail::json_io::parse_text(text));
}

/// The `simulate` / `compare` input (the layout at the top of this header).
[[nodiscard]] inline deadline_simulation parse_deadline_simulation(std::string_view text) { return parse_json<deadline_simulation>(text); }

/// `simulate --json`'s document: the policy and one outcome per start tick, in their order.
[[nodiscard]] inline nlohmann::ordered_json simulation_json(const deadline_simulation& s, const std::vector<deadline_outcome>& windows) {
    nlohmann::ordered_json j;
    j["policy"] = std::string(to_string(s.policy));
    j["windows"] = windows;
    return j;
}

/// `decide`'s document: the status, the action, the region's name and the policy's reason (or the
/// result's, when it is not feasible).
[[nodiscard]] inline nlohmann::ordered_json decision_json(const deadline_observation& o, const deadline_result& r) {
    const deadline_decision& d = *r.plan_to_run();
    nlohmann::ordered_json j;
    j["status"] = std::string(to_string(r.status));
    j["action"] = std::string(to_string(d.action));
    j["region"] = o.market.regions[static_cast<std::size_t>(d.region)].name;
    j["reason"] = r.status == solve_status::feasible ? std::string(d.why) : r.reason;
    return j;
}

/// The `decide` input (the layout at the top of this header) as a deadline_observation.
[[nodiscard]] inline deadline_observation parse_deadline_observation(std::istream& in) {
    return parse_json<deadline_observation>(in);
}

[[nodiscard]] inline deadline_observation parse_deadline_observation(std::string_view text) {
    return parse_json<deadline_observation>(text);
}

}  // namespace dnnplan
