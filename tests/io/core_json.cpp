// JSON of the shared vocabulary (io/core_json.hpp) and the rules every JSON header follows
// (io/detail/json_core.hpp): the instance catalog, search budgets and counters, affine times,
// enum text, and the one result shape; unknown and duplicate keys, missing keys, wrong types,
// integers that must fit, finite numbers, null as "none", deprecated spellings, parse errors
// with their byte position, and that writing a number JSON cannot hold throws.

#include <dnnplan/io/core_json.hpp>

#include <catch2/catch.hpp>

#include "../support/core_equality.hpp"
#include "../support/json_checks.hpp"

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// A plan and details of a planner of the test's own: the result shape is generic over them.
namespace core_json_test {

struct toy_plan {
    std::vector<std::int32_t> counts{};
    double cost_usd = 0.0;
    std::optional<double> deadline_s{};
    friend bool operator==(const toy_plan&, const toy_plan&) = default;
};

struct toy_details {
    std::optional<double> fastest_s{};
    friend bool operator==(const toy_details&, const toy_details&) = default;
};

}  // namespace core_json_test

namespace dnnplan::detail::json_io {

template <>
struct json_fields<core_json_test::toy_plan> {
    static constexpr auto fields = std::tuple{
        required("counts", &core_json_test::toy_plan::counts),
        required("cost_usd", &core_json_test::toy_plan::cost_usd),
        optional("deadline_s", &core_json_test::toy_plan::deadline_s),
    };
};

template <>
struct json_fields<core_json_test::toy_details> {
    static constexpr auto fields = std::tuple{required("fastest_s", &core_json_test::toy_details::fastest_s)};
};

}  // namespace dnnplan::detail::json_io

namespace {

using dnnplan_test::same;
using nlohmann::ordered_json;
using dnnplan_test::check_rejected;
using dnnplan_test::check_round_trip;
using dnnplan_test::parse_error_where;
using dnnplan_test::rejection_of;
using toy_result = dnnplan::solve_result<core_json_test::toy_plan>;
using toy_result_with_details = dnnplan::solve_result<core_json_test::toy_plan, core_json_test::toy_details>;

// The catalog of the problem-file format description.
constexpr std::string_view catalog_text = R"({"instances": [{"name": "p3.2xlarge", "gpus": 1, "quota": 10,
                              "spot_usd_per_h": 1.25, "on_demand_usd_per_h": 3.06}]})";

ordered_json catalog_document() { return ordered_json::parse(catalog_text); }

// Two instance types whose names are not in alphabetical order, every field given.
dnnplan::instance_catalog rich_catalog() {
    auto catalog = dnnplan::parse_json<dnnplan::instance_catalog>(catalog_text);
    catalog.instances[0].gpu_memory_bytes = 16e9;
    catalog.instances.push_back({.name = "g4dn.4xlarge",
                                 .gpus = 2,
                                 .quota = 5,
                                 .spot_usd_per_h = 0.3612,
                                 .on_demand_usd_per_h = 1.204,
                                 .gpu_memory_bytes = std::nullopt});
    catalog.parameter_server_usd_per_h = 0.1 + 0.2;  // not a short decimal: the round trip is exact
    return catalog;
}

toy_result toy_with_plan() {
    toy_result r;
    r.status = dnnplan::solve_status::optimal;
    r.plan = core_json_test::toy_plan{.counts = {3, 0, 7}, .cost_usd = 8.0416, .deadline_s = std::nullopt};
    r.objective_value = 8.0416;
    r.bound = 8.0416;
    r.counters = {.nodes = 123, .evaluations = 45, .pruned_by_bound = 6, .pruned_by_constraint = 7, .elapsed_s = 0.25};
    return r;
}

toy_result toy_without_plan() {
    toy_result r;
    r.status = dnnplan::solve_status::infeasible;
    r.reason = "no plan meets the deadline";
    r.counters = {.nodes = 9, .evaluations = 0, .pruned_by_bound = 0, .pruned_by_constraint = 9, .elapsed_s = 0};
    return r;
}

// An enum read from a document.
template <class Enum>
Enum enum_of(const ordered_json& j) {
    return j.get<Enum>();
}

// The message of the dnnplan::error that writing `value` throws, or "(written)".
template <class T>
std::string write_error_of(const T& value) {
    try {
        static_cast<void>(dnnplan::to_json_text(value));
    } catch (const dnnplan::invalid_input& e) {
        return std::string("(invalid_input, not a library error: ") + e.what() + ")";
    } catch (const dnnplan::error& e) {
        return e.what();
    }
    return "(written)";
}

}  // namespace

// ---- the instance catalog -----------------------------------------------------------------------

TEST_CASE("the documented catalog is read with the right values, from text and from a stream", "[io][json][core]") {
    const auto catalog = dnnplan::parse_json<dnnplan::instance_catalog>(catalog_text);
    REQUIRE(catalog.instances.size() == 1);
    const auto& t = catalog.instances[0];
    CHECK(t.name == "p3.2xlarge");
    CHECK(t.gpus == 1);
    CHECK(t.quota == 10);
    CHECK(t.spot_usd_per_h == 1.25);
    CHECK(t.on_demand_usd_per_h == 3.06);
    CHECK_FALSE(t.gpu_memory_bytes.has_value());
    CHECK(catalog.parameter_server_usd_per_h == 0.0);  // absent: the default

    std::istringstream stream{std::string(catalog_text)};
    CHECK(same(dnnplan::parse_json<dnnplan::instance_catalog>(stream), catalog));

    // Optional numbers given as null (= absent) or as a number.
    auto doc = catalog_document();
    doc["instances"][0]["gpu_memory_bytes"] = nullptr;
    doc["parameter_server_usd_per_h"] = 0.25;
    const auto full = doc.get<dnnplan::instance_catalog>();
    CHECK_FALSE(full.instances[0].gpu_memory_bytes.has_value());
    CHECK(full.parameter_server_usd_per_h == 0.25);
    doc["instances"][0]["gpu_memory_bytes"] = 16e9;
    CHECK(doc.get<dnnplan::instance_catalog>().instances[0].gpu_memory_bytes == 16e9);

    // Integral fields accept an integral float (10.0) and the extremes of their type.
    doc["instances"][0]["quota"] = 10.0;
    CHECK(doc.get<dnnplan::instance_catalog>().instances[0].quota == 10);
    doc["instances"][0]["quota"] = 2147483647;
    CHECK(dnnplan::parse_json<dnnplan::instance_catalog>(doc.dump()).instances[0].quota == 2147483647);
}

TEST_CASE("the catalog round-trips field by field; every optional field is written, null when absent",
          "[io][json][core][round_trip]") {
    const auto catalog = rich_catalog();
    REQUIRE_NOTHROW(catalog.validate());
    check_round_trip(catalog);
    for (const auto& t : catalog.instances) check_round_trip(t);
    const nlohmann::json sorted = catalog;
    CHECK(same(sorted.get<dnnplan::instance_catalog>(), catalog));
    CHECK(same(nlohmann::json::parse(sorted.dump()).get<dnnplan::instance_catalog>(), catalog));
    const ordered_json ordered = catalog;
    CHECK(same(ordered.get<dnnplan::instance_catalog>(), catalog));
    CHECK(same(dnnplan::parse_json<dnnplan::instance_catalog>(dnnplan::to_json_text(catalog)), catalog));
    CHECK(same(dnnplan::parse_json<dnnplan::instance_catalog>(dnnplan::to_json_text(catalog, -1)), catalog));

    // An absent optional is written as null (the layout is the same for every value).
    CHECK(ordered["instances"][1].contains("gpu_memory_bytes"));
    CHECK(ordered["instances"][1]["gpu_memory_bytes"].is_null());
    CHECK(ordered["instances"][0]["gpu_memory_bytes"] == 16e9);
    const ordered_json plain = dnnplan::parse_json<dnnplan::instance_catalog>(catalog_text);
    CHECK(plain.dump() ==
          R"({"instances":[{"name":"p3.2xlarge","gpus":1,"quota":10,"spot_usd_per_h":1.25,"on_demand_usd_per_h":3.06,)"
          R"("gpu_memory_bytes":null}],"parameter_server_usd_per_h":0.0})");

    // The text keeps the documented order: instances, then parameter_server_usd_per_h; in each
    // instance name, gpus, quota, the prices, gpu_memory_bytes.
    const std::string text = dnnplan::to_json_text(catalog);
    CHECK(text.find("\"instances\"") < text.find("\"parameter_server_usd_per_h\""));
    CHECK(text.find("\"name\"") < text.find("\"gpus\""));
    CHECK(text.find("\"quota\"") < text.find("\"spot_usd_per_h\""));
    CHECK(text.find("\"on_demand_usd_per_h\"") < text.find("\"gpu_memory_bytes\""));
    CHECK(text.find("\"p3.2xlarge\"") < text.find("\"g4dn.4xlarge\""));  // catalog order, not sorted
}

// ---- the rules of every reader (io/detail/json_core.hpp) ----------------------------------------

TEST_CASE("unknown keys are rejected at every level, naming the key and the allowed keys", "[io][json][core]") {
    auto top = catalog_document();
    top["colour"] = "blue";
    auto e = check_rejected<dnnplan::instance_catalog>(top, "colour");
    CHECK(e.value() == "\"blue\"");
    CHECK(e.expected() == "one of the keys instances, parameter_server_usd_per_h");

    auto nested = catalog_document();
    nested["instances"][0]["colour"] = {{"r", 1}};
    e = check_rejected<dnnplan::instance_catalog>(nested, "instances[0].colour");
    CHECK(e.value() == "{...}");
    CHECK(e.expected() == "one of the keys name, gpus, quota, spot_usd_per_h, on_demand_usd_per_h, gpu_memory_bytes");
    nested["instances"][0]["colour"] = ordered_json::array({1, 2});
    CHECK(check_rejected<dnnplan::instance_catalog>(nested, "instances[0].colour").value() == "[...]");
    nested["instances"][0]["colour"] = ordered_json::array();
    CHECK(check_rejected<dnnplan::instance_catalog>(nested, "instances[0].colour").value() == "[]");

    // A long string is shortened in the message.
    nested["instances"][0]["colour"] = std::string(200, 'x');
    e = check_rejected<dnnplan::instance_catalog>(nested, "instances[0].colour");
    CHECK(e.value().size() < 80);
    CHECK(e.value().ends_with("..."));

    check_rejected<dnnplan::search_budget>(ordered_json{{"node_budget", 1}}, "node_budget",
                                           "one of the keys max_nodes, max_evaluations, max_time_s");
    check_rejected<dnnplan::search_counters>(
        ordered_json{{"nodes", 1}, {"evaluations", 1}, {"pruned_by_bound", 1}, {"pruned_by_constraint", 1},
                     {"elapsed_s", 0}, {"clusters_evaluated", 1}},
        "clusters_evaluated");
    // A deprecated spelling is read but not listed as allowed.
    e = check_rejected<dnnplan::affine_time>(ordered_json{{"fixed_s", 1}, {"per_sample_s", 1}, {"gamma", 1}}, "gamma");
    CHECK(e.expected() == "one of the keys fixed_s, per_sample_s");
}

TEST_CASE("missing required keys are named, with the value \"missing\"", "[io][json][core]") {
    const std::vector<std::pair<std::string, std::string>> required = {
        {"/instances", "instances"},
        {"/instances/0/name", "instances[0].name"},
        {"/instances/0/gpus", "instances[0].gpus"},
        {"/instances/0/quota", "instances[0].quota"},
        {"/instances/0/spot_usd_per_h", "instances[0].spot_usd_per_h"},
        {"/instances/0/on_demand_usd_per_h", "instances[0].on_demand_usd_per_h"},
    };
    for (const auto& [pointer, field] : required) {
        const ordered_json::json_pointer at(pointer);
        auto d = catalog_document();
        d[at.parent_pointer()].erase(at.back());
        CHECK(check_rejected<dnnplan::instance_catalog>(d, field).value() == "missing");
    }
    auto d = catalog_document();
    d["instances"][0].erase("spot_usd_per_h");
    const auto e = check_rejected<dnnplan::instance_catalog>(d, "instances[0].spot_usd_per_h");
    CHECK(e.expected() == "a number");
    CHECK(check_rejected<dnnplan::instance_catalog>(ordered_json::object(), "instances").expected() == "an array");

    // Counters and affine times have only required keys.
    for (const char* key : {"nodes", "evaluations", "pruned_by_bound", "pruned_by_constraint", "elapsed_s"}) {
        ordered_json counters = dnnplan::search_counters{};
        counters.erase(key);
        CHECK(check_rejected<dnnplan::search_counters>(counters, key).value() == "missing");
    }
    check_rejected<dnnplan::affine_time>(ordered_json{{"fixed_s", 1}}, "per_sample_s", "= missing");
    // search_budget has no required key: {} is the defaults.
    CHECK(same(ordered_json::object().get<dnnplan::search_budget>(), dnnplan::search_budget{}));
}

TEST_CASE("wrong JSON types name the field and the expected type", "[io][json][core]") {
    struct wrong {
        std::string pointer;
        ordered_json value;
        std::string field;
        std::string expected;
    };
    const std::vector<wrong> cases = {
        {"/instances", ordered_json::object(), "instances", "an array"},
        {"/instances/0", "p3.2xlarge", "instances[0]", "an object"},
        {"/instances/0/name", 3, "instances[0].name", "a string"},
        {"/instances/0/name", nullptr, "instances[0].name", "a string"},
        {"/instances/0/spot_usd_per_h", "1.25", "instances[0].spot_usd_per_h", "a number"},
        {"/instances/0/spot_usd_per_h", true, "instances[0].spot_usd_per_h", "a number"},
        {"/instances/0/gpu_memory_bytes", true, "instances[0].gpu_memory_bytes", "a number or null"},
        {"/instances/0/gpu_memory_bytes", "16e9", "instances[0].gpu_memory_bytes", "a number or null"},
        {"/instances/0/gpus", "1", "instances[0].gpus", "an integer in [0, 2147483647]"},
        {"/parameter_server_usd_per_h", nullptr, "parameter_server_usd_per_h", "a number"},  // optional, not nullable
    };
    for (const auto& c : cases) {
        auto doc = catalog_document();
        doc[ordered_json::json_pointer(c.pointer)] = c.value;
        CHECK(check_rejected<dnnplan::instance_catalog>(doc, c.field).expected() == c.expected);
    }
    // A document that is not an object at all.
    for (const ordered_json& root : {ordered_json::array({1, 2}), ordered_json(42), ordered_json("x"), ordered_json()}) {
        const auto e = check_rejected<dnnplan::instance_catalog>(root, "(root)");
        CHECK(e.expected() == "an object");
    }
    CHECK(check_rejected<dnnplan::instance_catalog>(ordered_json(42), "(root)").value() == "42");
    check_rejected<dnnplan::search_budget>(ordered_json{{"max_time_s", "1"}}, "max_time_s", "a number");
    check_rejected<dnnplan::price_kind>(ordered_json(1), "(root)", R"(one of "spot", "on_demand")");
}

TEST_CASE("integral fields take non-negative integers that fit their type", "[io][json][core]") {
    const std::string quota = "instances[0].quota";
    for (const ordered_json& bad : {ordered_json(2.5), ordered_json(-1), ordered_json(1e20), ordered_json(2147483648LL),
                                    ordered_json(-0.5), ordered_json("10"), ordered_json(true)}) {
        auto doc = catalog_document();
        doc["instances"][0]["quota"] = bad;
        const auto e = check_rejected<dnnplan::instance_catalog>(doc, quota);
        CHECK(e.expected() == "an integer in [0, 2147483647]");
        CHECK(e.value() == bad.dump());
    }
    for (const ordered_json& bad : {ordered_json(-1), ordered_json(1.5), ordered_json(4294967296LL)}) {
        auto doc = catalog_document();
        doc["instances"][0]["gpus"] = bad;
        check_rejected<dnnplan::instance_catalog>(doc, "instances[0].gpus");
    }
    // int64 budgets and counters: up to 2^63 - 1.
    for (const ordered_json& bad : {ordered_json(9223372036854775808ULL), ordered_json(18446744073709551615ULL),
                                    ordered_json(1e19), ordered_json(-1), ordered_json(0.5)}) {
        CHECK(check_rejected<dnnplan::search_budget>(ordered_json{{"max_nodes", bad}}, "max_nodes").expected() ==
              "an integer in [0, 9223372036854775807]");
        ordered_json counters = dnnplan::search_counters{};
        counters["pruned_by_bound"] = bad;
        check_rejected<dnnplan::search_counters>(counters, "pruned_by_bound");
    }
    constexpr auto int64_max = std::numeric_limits<std::int64_t>::max();
    const auto most = ordered_json{{"max_nodes", int64_max}, {"max_evaluations", 9.0}}.get<dnnplan::search_budget>();
    CHECK(most.max_nodes == int64_max);
    CHECK(most.max_evaluations == 9);
    // From text too, where 1e20 and 2.5 are floats and -1 a signed integer.
    for (const std::string_view bad : {"2.5", "-1", "1e20", "18446744073709551616", "-0", "1E2.0"}) {
        std::string text(catalog_text);
        text.replace(text.find("\"quota\": 10"), std::string_view("\"quota\": 10").size(), "\"quota\": " + std::string(bad));
        INFO(bad);
        try {
            const auto catalog = dnnplan::parse_json<dnnplan::instance_catalog>(text);
            CHECK(bad == "-0");  // -0 is the integer 0
            CHECK(catalog.instances[0].quota == 0);
        } catch (const dnnplan::invalid_input& e) {
            CHECK(e.field() == quota);
        } catch (const dnnplan::parse_error&) {
            CHECK(bad == "1E2.0");  // not a JSON number
        }
    }
    CHECK(dnnplan::parse_json<dnnplan::search_budget>(R"({"max_nodes": 1e3})").max_nodes == 1000);
}

TEST_CASE("numbers must be finite numbers: strings such as \"nan\" are not numbers", "[io][json][core]") {
    for (const char* text : {"nan", "NaN", "inf", "Infinity", "1e3"}) {
        auto doc = catalog_document();
        doc["instances"][0]["spot_usd_per_h"] = text;
        CHECK(check_rejected<dnnplan::instance_catalog>(doc, "instances[0].spot_usd_per_h").expected() == "a number");
    }
    // A nlohmann value built in code can hold NaN and infinity; the reader rejects them too.
    nlohmann::json doc = nlohmann::json::parse(catalog_text);
    doc["instances"][0]["spot_usd_per_h"] = std::numeric_limits<double>::quiet_NaN();
    auto e = rejection_of<dnnplan::instance_catalog>(doc);
    REQUIRE(e.has_value());
    CHECK(e->field() == "instances[0].spot_usd_per_h");
    CHECK(e->value() == "nan");
    CHECK(e->expected() == "a finite number");
    doc["instances"][0]["spot_usd_per_h"] = 1.25;
    doc["instances"][0]["gpu_memory_bytes"] = -std::numeric_limits<double>::infinity();
    e = rejection_of<dnnplan::instance_catalog>(doc);
    REQUIRE(e.has_value());
    CHECK(e->field() == "instances[0].gpu_memory_bytes");
    CHECK(e->value() == "-inf");
    CHECK(e->expected() == "a finite number or null");
    doc["instances"][0].erase("gpu_memory_bytes");
    doc["instances"][0]["quota"] = std::numeric_limits<double>::quiet_NaN();
    e = rejection_of<dnnplan::instance_catalog>(doc);
    REQUIRE(e.has_value());
    CHECK(e->field() == "instances[0].quota");
    CHECK(e->value() == "nan");
    e = rejection_of<dnnplan::search_budget>(nlohmann::json{{"max_time_s", std::numeric_limits<double>::infinity()}});
    REQUIRE(e.has_value());
    CHECK(e->field() == "max_time_s");
    CHECK(e->value() == "inf");
    // A number too large for a double is malformed text.
    std::string text(catalog_text);
    text.replace(text.find("3.06"), 4, "1e400");
    CHECK(parse_error_where<dnnplan::instance_catalog>(text).starts_with("byte "));
}

TEST_CASE("null is none: an optional value that is absent, never a number", "[io][json][core]") {
    // An optional field: null reads as none and none is written as null.
    auto doc = catalog_document();
    doc["instances"][0]["gpu_memory_bytes"] = nullptr;
    const auto catalog = doc.get<dnnplan::instance_catalog>();
    CHECK_FALSE(catalog.instances[0].gpu_memory_bytes.has_value());
    const ordered_json written = catalog;
    CHECK(written["instances"][0].contains("gpu_memory_bytes"));
    CHECK(written["instances"][0]["gpu_memory_bytes"].is_null());
    // A required number is not nullable.
    doc = catalog_document();
    doc["instances"][0]["on_demand_usd_per_h"] = nullptr;
    check_rejected<dnnplan::instance_catalog>(doc, "instances[0].on_demand_usd_per_h", "a number");
    // In results, null means no plan, no objective value, no proven bound.
    const ordered_json none = toy_without_plan();
    CHECK(none["plan"].is_null());
    CHECK(none["objective_value"].is_null());
    CHECK(none["bound"].is_null());
    const auto back = none.get<toy_result>();
    CHECK_FALSE(back.plan.has_value());
    CHECK_FALSE(back.objective_value.has_value());
    CHECK_FALSE(back.bound.has_value());
}

TEST_CASE("semantic rules run after the structure, with field paths from the document's root", "[io][json][core]") {
    auto duplicate = catalog_document();
    duplicate["instances"].push_back(duplicate["instances"][0]);
    const auto d = check_rejected<dnnplan::instance_catalog>(duplicate, "instances[1].name");
    CHECK(d.value() == "\"p3.2xlarge\"");
    CHECK(d.expected() == "a name not used by another instance type");

    struct bad {
        std::string pointer;
        ordered_json value;
        std::string field;
    };
    const std::vector<bad> cases = {
        {"/instances", ordered_json::array(), "instances"},
        {"/instances/0/name", "", "instances[0].name"},
        {"/instances/0/gpus", 0, "instances[0].gpus"},
        {"/instances/0/spot_usd_per_h", 0, "instances[0].spot_usd_per_h"},
        {"/instances/0/spot_usd_per_h", 1e-310, "instances[0].spot_usd_per_h"},  // subnormal
        {"/instances/0/on_demand_usd_per_h", -3.06, "instances[0].on_demand_usd_per_h"},
        {"/instances/0/gpu_memory_bytes", 0, "instances[0].gpu_memory_bytes"},
        {"/parameter_server_usd_per_h", -1, "parameter_server_usd_per_h"},
    };
    for (const auto& c : cases) {
        auto doc = catalog_document();
        doc[ordered_json::json_pointer(c.pointer)] = c.value;
        check_rejected<dnnplan::instance_catalog>(doc, c.field);
    }
    auto zero = catalog_document();
    zero["instances"][0]["gpus"] = 0;
    const auto e = check_rejected<dnnplan::instance_catalog>(zero, "instances[0].gpus");
    CHECK(e.value() == "0");
    CHECK(e.expected() == "an integer >= 1");

    // A budget's and an affine time's validate().
    check_rejected<dnnplan::search_budget>(ordered_json{{"max_time_s", -1}}, "max_time_s", "a finite number >= 0");
    check_rejected<dnnplan::affine_time>(ordered_json{{"fixed_s", -1}, {"per_sample_s", 0}}, "fixed_s", "a finite number >= 0");

    // On failure the target is left as it was.
    dnnplan::instance_catalog kept;
    kept.parameter_server_usd_per_h = 7;
    CHECK_THROWS_AS(dnnplan::from_json(zero, kept), dnnplan::invalid_input);
    CHECK(kept.instances.empty());
    CHECK(kept.parameter_server_usd_per_h == 7);
}

TEST_CASE("a key given twice in one object is rejected with its path", "[io][json][core][errors]") {
    using dnnplan::instance_catalog;
    const auto field_of = [](std::string_view text) -> std::string {
        const auto e = dnnplan_test::text_rejection_of<instance_catalog>(text);
        return e ? e->field() : "(accepted)";
    };
    CHECK(field_of(R"({"instances": [{"name": "a"}, {"name": "b", "gpus": 1, "gpus": 2}]})") == "instances[1].gpus");
    CHECK(field_of(R"({"instances": [], "instances": []})") == "instances");
    // Found while parsing, before the structure is read (an unknown key still has its path).
    CHECK(field_of(R"({"colour": {"r": 1, "r": 2}})") == "colour.r");
    CHECK(field_of(R"({"colour": [{}, [{"a": 1, "a": 1}]]})") == "colour[1][0].a");
    const auto e = dnnplan_test::text_rejection_of<instance_catalog>(R"({"instances": [], "instances": []})");
    REQUIRE(e.has_value());
    CHECK(e->value() == "given twice");
    CHECK(e->expected() == "each key once in its object");
    CHECK(dnnplan_test::text_rejection_of<dnnplan::affine_time>(R"({"fixed_s": 1, "fixed_s": 1, "per_sample_s": 0})")->field() ==
          "fixed_s");
}

TEST_CASE("malformed JSON is a parse_error with the byte position", "[io][json][core][errors]") {
    using dnnplan::instance_catalog;
    CHECK(parse_error_where<instance_catalog>(R"({"instances": })") == "byte 15");  // the '}' is the 15th byte read
    CHECK(parse_error_where<instance_catalog>("") == "byte 1");  // nlohmann counts the end of input as read
    CHECK(parse_error_where<instance_catalog>("{} x") == "byte 4");
    CHECK(parse_error_where<instance_catalog>(R"({"a": 1,})") == "byte 9");
    CHECK(parse_error_where<instance_catalog>("{\"a\": 1} // comment") == "byte 10");
    CHECK(parse_error_where<instance_catalog>("{\"a\": \"\xFF\"}").starts_with("byte "));  // not UTF-8

    try {
        static_cast<void>(dnnplan::parse_json<instance_catalog>(R"({"instances": })"));
        FAIL("accepted");
    } catch (const dnnplan::parse_error& e) {
        const std::string what = e.what();
        CHECK(what.starts_with("parse error at byte 15: line 1, column 15: syntax error"));
        CHECK(what.find("json.exception") == std::string::npos);
    }

    std::istringstream stream(R"({"instances": [1, 2})");
    CHECK_THROWS_AS(dnnplan::parse_json<instance_catalog>(stream), dnnplan::parse_error);

    // Deep nesting is read without recursion: an error, not a stack overflow.
    const std::size_t depth = 100000;
    const std::string deep = "{\"colour\": " + std::string(depth, '[') + std::string(depth, ']') + "}";
    const auto e = dnnplan_test::text_rejection_of<instance_catalog>(deep);
    REQUIRE(e.has_value());
    CHECK(e->field() == "colour");
    CHECK(e->value() == "[...]");
    CHECK_THROWS_AS(dnnplan::parse_json<instance_catalog>("{\"instances\": " + std::string(depth, '[')), dnnplan::parse_error);

    // Every proper prefix of a valid document is malformed, never an invalid_input or worse.
    for (std::size_t n = 0; n < catalog_text.size(); ++n) {
        INFO("prefix of " << n << " bytes");
        CHECK(parse_error_where<instance_catalog>(catalog_text.substr(0, n)).starts_with("byte "));
    }
}

TEST_CASE("no edit of a catalog lets anything but dnnplan::error escape", "[io][json][core][property]") {
    // Every value of the example replaced by values of every JSON type, and every key removed.
    const ordered_json flat = catalog_document().flatten();
    const std::vector<ordered_json> replacements = {
        nullptr, true, 0, -1, 2.5, 1e300, 4294967296LL, 18446744073709551615ULL, "", "x", ordered_json::array(),
        ordered_json::array({1, "a"}), ordered_json::object(), ordered_json{{"k", nullptr}}};
    std::size_t accepted = 0;
    std::size_t rejected = 0;
    const auto attempt = [&](const ordered_json& doc) {
        try {
            static_cast<void>(dnnplan::parse_json<dnnplan::instance_catalog>(doc.dump()));
            static_cast<void>(doc.get<dnnplan::instance_catalog>());
            static_cast<void>(nlohmann::json(doc).get<dnnplan::instance_catalog>());
            ++accepted;
        } catch (const dnnplan::invalid_input& e) {
            CHECK_FALSE(e.field().empty());
            ++rejected;
        } catch (const std::exception& e) {
            FAIL("escaped: " << e.what() << " for " << doc.dump());
        }
    };
    for (auto it = flat.begin(); it != flat.end(); ++it) {
        const ordered_json::json_pointer at(it.key());
        for (const auto& value : replacements) {
            auto doc = catalog_document();
            doc[at] = value;
            attempt(doc);
            auto up = catalog_document();  // the same value one level up (replacing the containing object)
            up[at.parent_pointer()] = value;
            attempt(up);
        }
        auto removed = catalog_document();
        removed[at.parent_pointer()].erase(at.back());
        attempt(removed);
    }
    CHECK(accepted > 0);
    CHECK(rejected > accepted);
}

// ---- enums ----------------------------------------------------------------------------------------

TEST_CASE("enums are written by name and read by name; expected texts list the current names", "[io][json][core]") {
    using dnnplan::solve_status;
    for (const auto status : {solve_status::optimal, solve_status::feasible, solve_status::infeasible, solve_status::no_plan_found}) {
        CHECK(dnnplan::to_json_text(status) == '"' + std::string(to_string(status)) + '"');
        CHECK(enum_of<solve_status>(ordered_json(std::string(to_string(status)))) == status);
        check_round_trip(status);
    }
    CHECK(dnnplan::to_json_text(solve_status::no_plan_found) == "\"no_plan_found\"");
    using dnnplan::search_limit;
    for (const auto l : {search_limit::none, search_limit::time, search_limit::nodes, search_limit::evaluations, search_limit::samples})
        check_round_trip(l);
    CHECK(dnnplan::to_json_text(search_limit::evaluations) == "\"evaluations\"");
    check_round_trip(dnnplan::figure_kind::exact);
    CHECK(dnnplan::to_json_text(dnnplan::figure_kind::estimated) == "\"estimated\"");
    for (const auto p : {dnnplan::price_kind::spot, dnnplan::price_kind::on_demand}) check_round_trip(p);
    CHECK(dnnplan::to_json_text(dnnplan::price_kind::on_demand) == "\"on_demand\"");
    using dnnplan::objective_kind;
    for (const auto o : {objective_kind::min_cost, objective_kind::min_time, objective_kind::max_throughput,
                         objective_kind::max_samples_per_usd})
        check_round_trip(o);
    CHECK(dnnplan::to_json_text(objective_kind::min_cost) == "\"min_cost\"");
    CHECK(dnnplan::to_json_text(objective_kind::min_time) == "\"min_time\"");
    CHECK(dnnplan::to_json_text(objective_kind::max_throughput) == "\"max_throughput\"");
    CHECK(dnnplan::to_json_text(objective_kind::max_samples_per_usd) == "\"max_samples_per_usd\"");
    using dnnplan::search_method;
    CHECK(dnnplan::to_json_text(search_method::exact) == "\"exact\"");
    CHECK(dnnplan::to_json_text(search_method::exhaustive) == "\"exhaustive\"");
    CHECK(dnnplan::to_json_text(search_method::sliding_window) == "\"sliding_window\"");
    for (const auto m : {search_method::exact, search_method::exhaustive, search_method::sliding_window}) check_round_trip(m);
    // Inside a record an enum is its name too (and a value outside the enumerators is "unknown").
    CHECK(ordered_json(toy_with_plan())["status"] == "optimal");
    CHECK(to_string(static_cast<solve_status>(99)) == "unknown");

    // Unknown names: the expected text lists the current names (deprecated ones left out).
    auto e = check_rejected<objective_kind>(ordered_json("fastest"), "(root)");
    CHECK(e.value() == "\"fastest\"");
    CHECK(e.expected() == R"(one of "min_cost", "min_time", "max_throughput", "max_samples_per_usd")");
    e = check_rejected<search_method>(ordered_json("greedy"), "(root)");
    CHECK(e.expected() == R"(one of "exact", "exhaustive", "sliding_window")");
    check_rejected<dnnplan::price_kind>(ordered_json("reserved"), "(root)", R"(one of "spot", "on_demand")");
    check_rejected<solve_status>(ordered_json("done"), "(root)");
    check_rejected<solve_status>(ordered_json("Optimal"), "(root)");  // names are case-sensitive
    check_rejected<dnnplan::price_kind>(ordered_json(1), "(root)", R"(one of "spot", "on_demand")");
    CHECK(enum_of<dnnplan::price_kind>(ordered_json("on_demand")) == dnnplan::price_kind::on_demand);
    CHECK(dnnplan::parse_json<dnnplan::price_kind>("\"on_demand\"") == dnnplan::price_kind::on_demand);

    // The C++ side of the same table.
    CHECK(dnnplan::parse_enum<objective_kind>("min_time", "objective") == objective_kind::min_time);
    try {
        static_cast<void>(dnnplan::parse_enum<objective_kind>("cheapest", "options.objective"));
        FAIL("accepted");
    } catch (const dnnplan::invalid_input& error) {
        CHECK(error.field() == "options.objective");
        CHECK(error.value() == "\"cheapest\"");
        CHECK(error.expected() == dnnplan::enum_expected<objective_kind>());
    }
    CHECK_FALSE(dnnplan::enum_from_string<search_method>("Exact").has_value());
}

// An enum at a document root converts through nlohmann's API as every other type does
// (`nlohmann::json j = status;`, `j.get<price_kind>()`), as dnnplan 0.1's did: by name, not by
// nlohmann's default integer (io/detail/json_core.hpp specialises its serializer).
TEST_CASE("enums convert through nlohmann's API, as every other type does", "[io][json][core]") {
    CHECK(std::is_constructible_v<nlohmann::json, dnnplan::solve_status>);
    CHECK(std::is_constructible_v<nlohmann::ordered_json, dnnplan::price_kind>);
    const nlohmann::json status = dnnplan::solve_status::no_plan_found;
    CHECK(status == "no_plan_found");
    CHECK(nlohmann::json("on_demand").get<dnnplan::price_kind>() == dnnplan::price_kind::on_demand);
    CHECK(nlohmann::json("minimize_time").get<dnnplan::objective_kind>() == dnnplan::objective_kind::min_time);
    CHECK_THROWS_AS(nlohmann::json(3).get<dnnplan::objective_kind>(), dnnplan::invalid_input);
}

TEST_CASE("deprecated enum spellings are still read and written with the current name", "[io][json][core][deprecated]") {
    using dnnplan::objective_kind;
    using dnnplan::search_method;
    const std::vector<std::pair<std::string, objective_kind>> objectives = {
        {"minimize_cost", objective_kind::min_cost},
        {"minimize_time", objective_kind::min_time},
        {"max_samples_per_s", objective_kind::max_throughput},
        {"min_usd_per_h", objective_kind::min_cost},
    };
    for (const auto& [old, value] : objectives) {
        INFO(old);
        CHECK(dnnplan::is_deprecated_spelling<objective_kind>(old));
        CHECK(enum_of<objective_kind>(ordered_json(old)) == value);
        CHECK(dnnplan::parse_json<objective_kind>('"' + old + '"') == value);
        CHECK(dnnplan::parse_enum<objective_kind>(old, "objective") == value);
        CHECK(dnnplan::to_json_text(enum_of<objective_kind>(ordered_json(old))) != '"' + old + '"');  // written anew
        CHECK(dnnplan::enum_expected<objective_kind>().find(old) == std::string::npos);
    }
    CHECK(dnnplan::to_json_text(dnnplan::parse_json<objective_kind>("\"minimize_cost\"")) == "\"min_cost\"");
    CHECK(enum_of<search_method>(ordered_json("branch_and_bound")) == search_method::exact);
    CHECK(dnnplan::is_deprecated_spelling<search_method>("branch_and_bound"));
    CHECK_FALSE(dnnplan::is_deprecated_spelling<search_method>("exact"));
    CHECK(dnnplan::to_json_text(dnnplan::parse_json<search_method>("\"branch_and_bound\"")) == "\"exact\"");
}

// ---- budgets, counters, affine times --------------------------------------------------------------

TEST_CASE("search budgets and counters round-trip; 0 is no limit", "[io][json][core][round_trip]") {
    const dnnplan::search_budget defaults;
    check_round_trip(defaults);
    CHECK(ordered_json(defaults).dump() == R"({"max_nodes":10000000,"max_evaluations":10000000,"max_time_s":0.0})");
    const dnnplan::search_budget unlimited{.max_nodes = 0, .max_evaluations = 0, .max_time_s = 0};
    check_round_trip(unlimited);
    const dnnplan::search_budget every{.max_nodes = std::numeric_limits<std::int64_t>::max(), .max_evaluations = 3,
                                       .max_time_s = 2.5};
    check_round_trip(every);
    CHECK(same(ordered_json(every).get<dnnplan::search_budget>(), every));
    CHECK(same(dnnplan::parse_json<dnnplan::search_budget>(dnnplan::to_json_text(every)), every));
    // Absent keys keep the defaults.
    const auto partial = ordered_json{{"max_time_s", 1.5}}.get<dnnplan::search_budget>();
    CHECK(partial.max_nodes == defaults.max_nodes);
    CHECK(partial.max_evaluations == defaults.max_evaluations);
    CHECK(partial.max_time_s == 1.5);

    const dnnplan::search_counters counters{.nodes = 123, .evaluations = 45, .pruned_by_bound = 6, .pruned_by_constraint = 7,
                                            .elapsed_s = 1.0 / 3.0};
    check_round_trip(counters);
    check_round_trip(dnnplan::search_counters{});
    CHECK(ordered_json(counters) == ordered_json{{"nodes", 123}, {"evaluations", 45}, {"pruned_by_bound", 6},
                                                 {"pruned_by_constraint", 7}, {"elapsed_s", 1.0 / 3.0}});
    check_rejected<dnnplan::search_counters>(ordered_json{{"nodes", 1.5}, {"evaluations", 0}, {"pruned_by_bound", 0},
                                                          {"pruned_by_constraint", 0}, {"elapsed_s", 0}},
                                             "nodes", "an integer in [0, 9223372036854775807]");
}

TEST_CASE("affine times round-trip; the 0.1 spellings alpha_c_s and beta_c_s are still read", "[io][json][core][deprecated]") {
    const dnnplan::affine_time t{.fixed_s = 0.05069, .per_sample_s = 0.00449};
    check_round_trip(t);
    CHECK(ordered_json(t).dump() == R"({"fixed_s":0.05069,"per_sample_s":0.00449})");
    check_round_trip(dnnplan::affine_time{.fixed_s = 0.5, .per_sample_s = 0.25});

    // The old spellings, alone or mixed with a current one; never written.
    CHECK(ordered_json{{"alpha_c_s", 0.05069}, {"beta_c_s", 0.00449}}.get<dnnplan::affine_time>() == t);
    CHECK(dnnplan::parse_json<dnnplan::affine_time>(R"({"alpha_c_s": 0.05069, "beta_c_s": 0.00449})") == t);
    CHECK(ordered_json{{"alpha_c_s", 0.05069}, {"per_sample_s", 0.00449}}.get<dnnplan::affine_time>() == t);
    CHECK(ordered_json{{"fixed_s", 0.05069}, {"beta_c_s", 0.00449}}.get<dnnplan::affine_time>() == t);
    CHECK(ordered_json(ordered_json{{"alpha_c_s", 0.05069}, {"beta_c_s", 0.00449}}.get<dnnplan::affine_time>()) ==
          ordered_json(t));

    // An old key with its replacement: rejected naming the old key.
    auto e = check_rejected<dnnplan::affine_time>(ordered_json{{"fixed_s", 1}, {"alpha_c_s", 1}, {"per_sample_s", 0}},
                                                  "alpha_c_s");
    CHECK(e.expected() == "no value here when fixed_s is given (alpha_c_s is its deprecated spelling)");
    check_rejected<dnnplan::affine_time>(ordered_json{{"fixed_s", 1}, {"per_sample_s", 0}, {"beta_c_s", 0}}, "beta_c_s",
                                         "per_sample_s is given");
    // An old key holding a wrong value is named as written.
    check_rejected<dnnplan::affine_time>(ordered_json{{"alpha_c_s", "x"}, {"per_sample_s", 0}}, "alpha_c_s", "a number");
    // Missing under both spellings: the current name.
    check_rejected<dnnplan::affine_time>(ordered_json{{"per_sample_s", 0}}, "fixed_s", "= missing");
}

// A value under a deprecated key that breaks a semantic rule (validate()) is named as written in
// the document, as every other rejection is, and the message says which field it is read as.
TEST_CASE("a semantic fault under a deprecated key names the key as written", "[io][json][core][deprecated]") {
    const auto e = check_rejected<dnnplan::affine_time>(ordered_json{{"alpha_c_s", -1}, {"beta_c_s", 0}}, "alpha_c_s");
    CHECK(e.expected() == "a finite number >= 0 (alpha_c_s is read as fixed_s)");
    // Nested: a 0.1 VM file's GPU compute time, under a name with a dot.
    const auto nested = check_rejected<dnnplan::affine_time>(ordered_json{{"fixed_s", 1}, {"beta_c_s", -2}}, "beta_c_s");
    CHECK(nested.expected() == "a finite number >= 0 (beta_c_s is read as per_sample_s)");
}

// ---- the one result shape -------------------------------------------------------------------------

TEST_CASE("a result round-trips with and without a plan, with its documented layout", "[io][json][core][round_trip]") {
    const auto with_plan = toy_with_plan();
    const auto without_plan = toy_without_plan();
    check_round_trip(with_plan);
    check_round_trip(without_plan);
    check_round_trip(toy_result{});
    for (const auto& r : {with_plan, without_plan}) {
        const auto back = dnnplan::parse_json<toy_result>(dnnplan::to_json_text(r));
        CHECK(back.status == r.status);
        CHECK(back.reason == r.reason);
        CHECK(back.plan == r.plan);
        CHECK(back.objective_value == r.objective_value);
        CHECK(back.bound == r.bound);
        CHECK(back.counters == r.counters);
        std::istringstream stream(dnnplan::to_json_text(r, 4));
        CHECK(dnnplan::parse_json<toy_result>(stream).plan == r.plan);
    }

    // The layout: status, limit, figures, estimate, reason, plan, objective_value, bound,
    // best_effort, counters (and details only for a planner that has any).
    const ordered_json a = with_plan;
    std::vector<std::string> keys;
    for (auto it = a.begin(); it != a.end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"status", "limit", "figures", "estimate", "reason", "plan", "objective_value",
                                           "bound", "best_effort", "counters"});
    CHECK(a["status"] == "optimal");
    CHECK(a["limit"] == "none");
    CHECK(a["figures"] == "exact");
    CHECK(a["estimate"].is_null());
    CHECK(a["reason"] == "");
    CHECK(a["plan"] == ordered_json{{"counts", {3, 0, 7}}, {"cost_usd", 8.0416}, {"deadline_s", nullptr}});
    CHECK(a["objective_value"] == 8.0416);
    CHECK(a["bound"] == 8.0416);
    CHECK(a["best_effort"].is_null());
    CHECK(a["counters"] == ordered_json{{"nodes", 123}, {"evaluations", 45}, {"pruned_by_bound", 6},
                                        {"pruned_by_constraint", 7}, {"elapsed_s", 0.25}});
    const ordered_json b = without_plan;
    CHECK(b["status"] == "infeasible");
    CHECK(b["reason"] == "no plan meets the deadline");
    CHECK(b["plan"].is_null());
    CHECK(b["objective_value"].is_null());
    CHECK(b["bound"].is_null());

    // A heuristic's result: a plan, no proven bound; a reason with characters JSON escapes.
    auto heuristic = with_plan;
    heuristic.status = dnnplan::solve_status::feasible;
    heuristic.reason = "sliding window: \"optimality\" not proven\n\t\xC3\xA9";
    heuristic.bound.reset();
    check_round_trip(heuristic);
    CHECK(dnnplan::parse_json<toy_result>(dnnplan::to_json_text(heuristic)).reason == heuristic.reason);
    CHECK(ordered_json(heuristic)["bound"].is_null());

    // Estimated figures with their estimate, a limit, and a best_effort plan beside no plan.
    auto estimated = heuristic;
    estimated.limit = dnnplan::search_limit::samples;
    estimated.figures = dnnplan::figure_kind::estimated;
    estimated.estimate = dnnplan::figure_estimate{.lower = 7.9, .upper = 8.2, .confidence_prob = 0.95, .samples = 1000};
    check_round_trip(estimated);
    CHECK(ordered_json(estimated)["estimate"] ==
          ordered_json{{"lower", 7.9}, {"upper", 8.2}, {"confidence_prob", 0.95}, {"samples", 1000}});
    auto best_effort = without_plan;
    best_effort.best_effort = with_plan.plan;
    check_round_trip(best_effort);
    CHECK(ordered_json(best_effort)["best_effort"] == a["plan"]);

    // With details: written last, and required.
    toy_result_with_details detailed;
    detailed.details.fastest_s = 3000.5;
    check_round_trip(detailed);
    const ordered_json d = detailed;
    CHECK(std::prev(d.end()).key() == "details");
    CHECK(d["details"] == ordered_json{{"fastest_s", 3000.5}});
    auto no_details = d;
    no_details.erase("details");
    check_rejected<toy_result_with_details>(no_details, "details", "= missing");
    // Without details the key is unknown.
    auto extra = ordered_json(with_plan);
    extra["details"] = ordered_json::object();
    check_rejected<toy_result>(extra, "details",
                               "one of the keys status, limit, figures, estimate, reason, plan, objective_value, bound, "
                               "best_effort, counters");
}

TEST_CASE("malformed results are rejected naming the field", "[io][json][core][errors]") {
    const ordered_json good = toy_with_plan();
    struct bad {
        std::string pointer;
        ordered_json value;
        std::string field;
    };
    const std::vector<bad> cases = {
        {"/status", "great", "status"},
        {"/status", nullptr, "status"},
        {"/reason", nullptr, "reason"},
        {"/plan", 5, "plan"},
        {"/plan/counts", ordered_json::object(), "plan.counts"},
        {"/plan/counts/2", -7, "plan.counts[2]"},
        {"/plan/counts/2", 2.5, "plan.counts[2]"},
        {"/plan/cost_usd", nullptr, "plan.cost_usd"},
        {"/plan/extra", 1, "plan.extra"},
        {"/objective_value", nullptr, "objective_value"},  // a plan without its value
        {"/objective_value", "inf", "objective_value"},
        {"/bound", "inf", "bound"},
        {"/bound", 8.0, "bound"},  // optimal: the bound is the value
        {"/limit", "budget", "limit"},
        {"/limit", "nodes", "limit"},  // optimal: no limit stopped it
        {"/figures", "estimated", "figures"},  // optimal: the figures are exact
        {"/estimate", ordered_json{{"lower", 1}, {"upper", 2}, {"confidence_prob", 0.95}, {"samples", 10}}, "estimate"},
        {"/reason", "because", "reason"},  // optimal: no reason
        {"/best_effort", ordered_json{{"counts", {1}}, {"cost_usd", 1.0}, {"deadline_s", nullptr}}, "best_effort"},
        {"/counters/nodes", 1.5, "counters.nodes"},
        {"/counters/nodes", -1, "counters.nodes"},
        {"/counters/extra", 0, "counters.extra"},
        {"/extra", 1, "extra"},
    };
    for (const auto& c : cases) {
        auto doc = good;
        doc[ordered_json::json_pointer(c.pointer)] = c.value;
        check_rejected<toy_result>(doc, c.field);
    }
    auto value_without_plan = ordered_json(toy_result{});
    value_without_plan["objective_value"] = 3.5;
    auto e = check_rejected<toy_result>(value_without_plan, "objective_value");
    CHECK(e.expected() == "no plan, so no objective_value (the one result shape)");
    auto plan_without_value = good;
    plan_without_value["objective_value"] = nullptr;
    e = check_rejected<toy_result>(plan_without_value, "objective_value");
    CHECK(e.value() == "null");
    CHECK(e.expected() == "a plan needs its objective_value (the one result shape)");
    auto infeasible_with_plan = good;
    infeasible_with_plan["status"] = "infeasible";
    CHECK(check_rejected<toy_result>(infeasible_with_plan, "plan").expected() == "status infeasible has no plan (the one result shape)");
    for (const char* key : {"status", "limit", "figures", "estimate", "reason", "plan", "objective_value", "bound", "best_effort",
                            "counters"}) {
        auto doc = good;
        doc.erase(key);
        CHECK(check_rejected<toy_result>(doc, key).value() == "missing");
    }
    auto missing = good;
    missing["plan"].erase("cost_usd");
    CHECK(check_rejected<toy_result>(missing, "plan.cost_usd").value() == "missing");
    check_rejected<toy_result>(ordered_json::array(), "(root)", "an object");
    CHECK(parse_error_where<toy_result>("{\"status\": ").starts_with("byte "));
}

TEST_CASE("writing a number JSON cannot hold throws dnnplan::error naming the field", "[io][json][core][errors]") {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto r = toy_with_plan();
    r.plan->cost_usd = inf;
    auto what = write_error_of(r);
    CHECK_THAT(what, Catch::Matchers::Contains("plan.cost_usd = inf"));
    CHECK_THROWS_AS(nlohmann::json(r), dnnplan::error);
    CHECK_THROWS_AS(ordered_json(r), dnnplan::error);
    r = toy_with_plan();
    r.plan->deadline_s = nan;
    CHECK_THAT(write_error_of(r), Catch::Matchers::Contains("plan.deadline_s = nan"));
    r = toy_with_plan();
    r.objective_value = -inf;
    CHECK_THAT(write_error_of(r), Catch::Matchers::Contains("objective_value = -inf"));
    r = toy_with_plan();
    r.bound = inf;  // none is said with an empty optional, never +inf
    CHECK_THAT(write_error_of(r), Catch::Matchers::Contains("bound = inf"));
    r = toy_with_plan();
    r.counters.elapsed_s = nan;
    CHECK_THAT(write_error_of(r), Catch::Matchers::Contains("counters.elapsed_s = nan"));
    toy_result_with_details detailed;
    detailed.details.fastest_s = inf;
    CHECK_THAT(write_error_of(detailed), Catch::Matchers::Contains("details.fastest_s = inf"));

    // Inputs too: a catalog or a budget holding infinity is not written as null.
    auto catalog = rich_catalog();
    catalog.instances[1].spot_usd_per_h = inf;
    CHECK_THAT(write_error_of(catalog), Catch::Matchers::Contains("instances[1].spot_usd_per_h = inf"));
    CHECK_THAT(write_error_of(dnnplan::search_budget{.max_time_s = inf}), Catch::Matchers::Contains("max_time_s = inf"));
    CHECK_THAT(write_error_of(dnnplan::affine_time{.fixed_s = nan, .per_sample_s = 0}), Catch::Matchers::Contains("fixed_s = nan"));
}
