// SkyNomad's availability CSV reader (io/spot_market_csv.hpp): the trace and the probing it
// measured (median, smallest and largest row difference), both polarities, the fixture slice of
// the public data (195 s), and every parse error naming its line and its field.

#include <dnnplan/io/spot_market_csv.hpp>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace dnnplan;
using dnnplan_test::contains;

namespace {

const std::string csv_header = "date,availability\n";

/// The parse_error reading `text` throws: "where: what", or "(accepted)".
std::string failure(const std::string& text, availability_polarity polarity = availability_polarity::available) {
    try {
        (void)parse_spot_market_csv(std::string_view(text), "z", polarity);
    } catch (const parse_error& e) {
        return e.where() + " | " + e.what();
    }
    return "(accepted)";
}

}  // namespace

TEST_CASE("rows are read with the gap they measure", "[io][spot_market_csv]") {
    const std::string text = csv_header +
                             "2023-02-15 22:08:16,1\n"
                             "2023-02-15 22:11:31,0\n"   // +195
                             "2023-02-15 22:14:46,3\n"   // +195
                             "2023-02-15 22:18:02,1\n";  // +196
    const spot_market_csv r = parse_spot_market_csv(std::string_view(text), "us-west-2a");
    CHECK(r.trace.name == "us-west-2a");
    CHECK(r.trace.available == std::vector<std::int32_t>{1, 0, 3, 1});
    CHECK(r.trace.gap_s == 195.0);
    CHECK(r.median_gap_s == 195.0);
    CHECK(r.min_gap_s == 195);
    CHECK(r.max_gap_s == 196);
    CHECK(r.first_time_s == 1676498896);  // 2023-02-15 22:08:16 UTC
    CHECK(r.last_time_s == 1676498896 + 586);
    CHECK(r.trace.spot_usd_per_h.empty());
    CHECK_FALSE(r.trace.on_demand_usd_per_h);
    CHECK_NOTHROW(r.trace.validate());

    std::istringstream in(text);
    const spot_market_csv from_stream = parse_spot_market_csv(in, "us-west-2a");
    CHECK(from_stream.trace.available == r.trace.available);
    CHECK(from_stream.median_gap_s == r.median_gap_s);
}

TEST_CASE("an even number of differences has the mean of the middle two as its median", "[io][spot_market_csv]") {
    // Differences 10, 30 (sorted 10, 30): 20; with 100 and 10 more: 10, 10, 30, 100 -> 20.
    const auto r = parse_spot_market_csv(csv_header + "2023-01-01 00:00:00,1\n2023-01-01 00:00:10,1\n2023-01-01 00:00:40,1\n", "z");
    CHECK(r.median_gap_s == 20.0);
    CHECK(r.min_gap_s == 10);
    CHECK(r.max_gap_s == 30);
    const auto s = parse_spot_market_csv(
        csv_header + "2023-01-01 00:00:00,1\n2023-01-01 00:00:10,1\n2023-01-01 00:00:40,1\n2023-01-01 00:02:20,1\n2023-01-01 00:02:30,1\n",
        "z");
    CHECK(s.median_gap_s == 20.0);
    CHECK(s.max_gap_s == 100);
}

TEST_CASE("CRLF line ends, blank lines and blanks around fields are accepted; dates cross months and leap days",
          "[io][spot_market_csv]") {
    const auto r = parse_spot_market_csv(csv_header.substr(0, csv_header.size() - 1) + "\r\n\r\n 2024-02-28 23:59:30 , 2 \r\n2024-02-29 00:00:00,0\r\n"
                                         "2024-03-01 00:00:00,1\r\n",
                                         "z");
    CHECK(r.trace.available == std::vector<std::int32_t>{2, 0, 1});
    CHECK(r.min_gap_s == 30);
    CHECK(r.max_gap_s == 86400);
}

TEST_CASE("the polarity is the caller's: preempted files are read as 1 - value, and only 0 or 1", "[io][spot_market_csv]") {
    const std::string text = csv_header + "2023-01-01 00:00:00,1\n2023-01-01 00:10:00,0\n2023-01-01 00:20:00,1\n";
    CHECK(parse_spot_market_csv(text, "z", availability_polarity::available).trace.available == std::vector<std::int32_t>{1, 0, 1});
    CHECK(parse_spot_market_csv(text, "z", availability_polarity::preempted).trace.available == std::vector<std::int32_t>{0, 1, 0});
    const std::string counts = csv_header + "2023-01-01 00:00:00,16\n2023-01-01 00:10:00,2\n";
    CHECK(parse_spot_market_csv(counts, "z").trace.available == std::vector<std::int32_t>{16, 2});
    const std::string e = failure(counts, availability_polarity::preempted);
    CHECK(e.starts_with("line 2 | "));
    CHECK(contains(e, "field availability"));
    CHECK(contains(e, "0 or 1"));
    CHECK(contains(e, "\"16\""));
    CHECK(to_string(availability_polarity::preempted) == "preempted");
    CHECK(enum_from_string<availability_polarity>("available") == availability_polarity::available);
}

TEST_CASE("the fixture slice of SkyNomad's us-west-2a file is probed every 195 s", "[io][spot_market_csv]") {
    std::ifstream in(DNNPLAN_TEST_FIXTURES_DIR "/spot_availability/us-west-2a_v100_1.csv");
    REQUIRE(in);
    const spot_market_csv r = parse_spot_market_csv(in, "us-west-2a");
    CHECK(r.trace.size() == 300);
    CHECK(r.trace.gap_s == 195.0);
    CHECK(r.min_gap_s == 194);
    CHECK(r.max_gap_s == 196);
    CHECK(r.first_time_s == 1676498896);  // 2023-02-15 22:08:16
    CHECK(r.last_time_s == 1676557239);   // 2023-02-16 14:20:39
    std::int64_t available = 0;
    for (const auto a : r.trace.available) available += a;
    CHECK(available == 100);
    CHECK(r.trace.available[51] == 1);
    CHECK(r.trace.available[52] == 0);  // the first outage: rows 53 to 58 of the slice
}

TEST_CASE("every malformed input is a parse error naming its line and its field", "[io][spot_market_csv]") {
    const std::string row1 = "2023-01-01 00:00:00,1\n";
    // not UTF-8
    CHECK(failure(csv_header + "2023-01-01 00:00:00,\xff\n").starts_with("line 2 | "));
    CHECK(contains(failure(csv_header + "2023-01-01 00:00:00,\xff\n"), "UTF-8"));
    // the header, exactly
    for (const std::string bad : {"Date,availability\n", "date, availability\n", "date,availability,price\n", "time,count\n"}) {
        INFO(bad);
        const std::string e = failure(bad + row1 + "2023-01-01 00:10:00,1\n");
        CHECK(e.starts_with("line 1 | "));
        CHECK(contains(e, "field header"));
    }
    CHECK(failure(row1 + row1).starts_with("line 1 | "));  // no header at all
    CHECK(contains(failure(""), "found an empty input"));
    CHECK(failure("\n\n").starts_with("line 3 | "));
    // timestamps
    for (const std::string bad : {"2023-02-30 00:00:00", "2023-2-15 22:08:16", "2023-02-15T22:08:16", "2023-02-15 24:00:00",
                                  "2023-02-15 22:08", "2023-02-15  22:08:16", "2023-02-15 22:08:16Z", "1676498896", ""}) {
        INFO(bad);
        const std::string e = failure(csv_header + row1 + bad + ",1\n");
        CHECK(e.starts_with("line 3 | "));
        CHECK(contains(e, "field date"));
        CHECK(contains(e, '"' + bad + '"'));
    }
    // counts: negative, fractional, signed, empty, too large
    for (const std::string bad : {"-1", "1.5", "1.0", "+1", "", "one", "2147483648", "99999999999"}) {
        INFO(bad);
        const std::string e = failure(csv_header + row1 + "2023-01-01 00:10:00," + bad + "\n");
        CHECK(e.starts_with("line 3 | "));
        CHECK(contains(e, "field availability"));
        CHECK(contains(e, '"' + bad + '"'));
    }
    // not two fields
    CHECK(contains(failure(csv_header + row1 + "2023-01-01 00:10:00,1,0.9\n"), "expected 2 comma-separated fields"));
    CHECK(failure(csv_header + row1 + "2023-01-01 00:10:00\n").starts_with("line 3 | "));
}

TEST_CASE("rows must strictly increase: an equal or earlier time is named with the line before it", "[io][spot_market_csv]") {
    const std::string equal = failure(csv_header + "2023-01-01 00:00:00,1\n2023-01-01 00:10:00,1\n\n2023-01-01 00:10:00,0\n");
    CHECK(equal.starts_with("line 5 | "));
    CHECK(contains(equal, "field date"));
    CHECK(contains(equal, "after line 3's 2023-01-01 00:10:00"));
    CHECK(contains(equal, "\"2023-01-01 00:10:00\""));
    const std::string earlier = failure(csv_header + "2023-01-02 00:00:00,1\n2023-01-01 23:59:59,1\n");
    CHECK(earlier.starts_with("line 3 | "));
    CHECK(contains(earlier, "field date"));
}

TEST_CASE("fewer than two rows give no gap: an error at the end of the input", "[io][spot_market_csv]") {
    const std::string none = failure(csv_header);
    CHECK(none.starts_with("line 2 | "));
    CHECK(contains(none, "at least two rows"));
    CHECK(contains(none, "found 0"));
    const std::string one = failure(csv_header + "2023-01-01 00:00:00,1\n\n");
    CHECK(one.starts_with("line 4 | "));  // std::getline's lines: the header, the row, the blank one
    CHECK(contains(one, "found 1"));
}

TEST_CASE("the trace's name must be UTF-8", "[io][spot_market_csv]") {
    const std::string text = csv_header + "2023-01-01 00:00:00,1\n2023-01-01 00:10:00,1\n";
    CHECK(dnnplan_test::field_of([&] { (void)parse_spot_market_csv(text, "\xc3("); }) == "name");
}
