// Fuzzes the deadline policy's input readers (io/spot_market_csv.hpp, io/deadline_policy_json.hpp)
// and the decision on what they accept; the first byte picks (selector % 4) and, for the traces,
// the polarity (selector / 4 % 2: preempted); fuzz_support.hpp's properties throughout:
//   0: SkyNomad's CSV. Accepted: a valid trace of >= 2 ticks whose gap is the median difference,
//      between the smallest and the largest; it round-trips as JSON.
//   1: Can't Be Late's JSON trace. Accepted: a valid trace, whose prices (if any) are one per tick;
//      it round-trips.
//   2: a price side file. Accepted: every series non-empty, every price finite and > 0.
//   3: the decide input. Accepted: a valid observation; solve(observation) decides or throws the
//      library's error, and its result keeps the one result shape (core/result.hpp), is written
//      with finite numbers, and a plan it gives is one the market can carry out.
#include <dnnplan/io/deadline_policy_json.hpp>
#include <dnnplan/io/spot_market_csv.hpp>
#include <dnnplan/solve/deadline_policy/solve.hpp>

#include "fuzz_support.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace {

void check_trace(const dnnplan::spot_market_trace& t, const char* reader) {
    if (!dnnplan_fuzz::accepted([&] { t.validate(); })) dnnplan_fuzz::violated("an accepted trace is valid", reader);
    if (!t.spot_usd_per_h.empty() && t.spot_usd_per_h.size() != t.size())
        dnnplan_fuzz::violated("an accepted trace has one price per tick", reader);
    dnnplan_fuzz::check_round_trip(t);
}

void csv_case(std::string_view text, dnnplan::availability_polarity polarity) {
    dnnplan::spot_market_csv r;
    if (!dnnplan_fuzz::accepted([&] { r = dnnplan::parse_spot_market_csv(text, "fuzz", polarity); })) return;
    check_trace(r.trace, "csv");
    if (r.trace.size() < 2) dnnplan_fuzz::violated("an accepted CSV has two rows or more", std::to_string(r.trace.size()));
    if (!(r.trace.gap_s == r.median_gap_s && r.min_gap_s >= 1 && static_cast<double>(r.min_gap_s) <= r.median_gap_s &&
          r.median_gap_s <= static_cast<double>(r.max_gap_s)))
        dnnplan_fuzz::violated("the gap is the median difference, between the smallest and the largest",
                               std::to_string(r.min_gap_s) + " " + std::to_string(r.median_gap_s) + " " + std::to_string(r.max_gap_s));
    if (r.last_time_s - r.first_time_s < r.max_gap_s) dnnplan_fuzz::violated("the rows span every difference", "");
}

void json_trace_case(std::string_view text, dnnplan::availability_polarity polarity) {
    dnnplan::spot_market_trace t;
    if (!dnnplan_fuzz::accepted([&] { t = dnnplan::parse_spot_market_json(text, "fuzz", polarity); })) return;
    check_trace(t, "json");
}

void price_table_case(std::string_view text) {
    std::map<std::string, std::vector<double>> table;
    if (!dnnplan_fuzz::accepted([&] { table = dnnplan::parse_spot_price_table(text); })) return;
    for (const auto& [name, prices] : table) {
        if (prices.empty()) dnnplan_fuzz::violated("an accepted price series is not empty", name);
        for (const double p : prices)
            if (!(std::isfinite(p) && p > 0.0)) dnnplan_fuzz::violated("an accepted price is finite and > 0", name);
    }
}

void observation_case(std::string_view text) {
    dnnplan::deadline_observation o;
    if (!dnnplan_fuzz::accepted([&] { o = dnnplan::parse_deadline_observation(text); })) return;
    if (!dnnplan_fuzz::accepted([&] { o.validate(); })) dnnplan_fuzz::violated("an accepted observation is valid", "");
    dnnplan::deadline_result r;
    if (!dnnplan_fuzz::accepted([&] { r = dnnplan::solve(o); })) return;
    if (const dnnplan::result_violation broken = dnnplan::result_shape_violation(r))
        dnnplan_fuzz::violated("the one result shape (core/result.hpp)", broken.field + ": " + broken.rule + "; " + r.reason);
    try {
        (void)dnnplan::to_json_text(r, -1);
    } catch (const std::exception& e) {
        dnnplan_fuzz::violated("a decision writes to JSON (finite numbers)", e.what());
    }
    if (!r.plan) return;
    const auto region = r.plan->region;
    const bool exists = region >= 0 && static_cast<std::size_t>(region) < o.market.regions.size();
    if (r.plan->action != dnnplan::deadline_action::wait && !exists)
        dnnplan_fuzz::violated("a decision runs in a region that exists", std::to_string(region));
    if (r.plan->action == dnnplan::deadline_action::spot &&
        o.market.regions[static_cast<std::size_t>(region)].available.back() < o.job.instances)
        dnnplan_fuzz::violated("spot is chosen only where the gang can have it now", std::to_string(region));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text = dnnplan_fuzz::text_of(data + 1, size - 1);
    const auto polarity = data[0] / 4 % 2 == 0 ? dnnplan::availability_polarity::available : dnnplan::availability_polarity::preempted;
    switch (data[0] % 4) {
        case 0: csv_case(text, polarity); break;
        case 1: json_trace_case(text, polarity); break;
        case 2: price_table_case(text); break;
        default: observation_case(text); break;
    }
    return 0;
}
