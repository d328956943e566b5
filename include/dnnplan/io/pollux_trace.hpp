#pragma once
// Reader of the step-time traces of the Pollux OSDI'21 artifact (petuum/adaptdl, branch
// osdi21-artifact, sched/traces/<model>-placements.csv and <model>-scalability.csv; Apache-2.0):
//   placements:  placement,local_bsz,step_time,sync_time
//   scalability: num_nodes,num_replicas,local_bsz,step_time,sync_time
// A placement is a string of digits, one per node used, each the number of GPUs (replicas) on that
// node ("1124" = 4 nodes, 8 replicas). Times are seconds. The header line is required (exactly
// those column names); blank lines are skipped. Every malformed line is a dnnplan::parse_error
// with where() = "line N" (1-based) and a message naming the field and what was expected.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/text_lines.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/sync_data_parallel.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace dnnplan {

/// One row of a <model>-placements.csv file.
struct pollux_placement_row {
    placement where{};
    double local_batch = 0.0;  ///< local_bsz: samples per replica per step
    double step_time_s = 0.0;
    double sync_time_s = 0.0;
    std::int64_t line = 0;     ///< 1-based line in the file

    /// The row as a fitter sample (no gradient accumulation in the traces).
    [[nodiscard]] sync_step_sample sample() const {
        return {.shape = sync_shape::of(where, local_batch, 0), .step_time_s = step_time_s, .sync_time_s = sync_time_s};
    }
};

/// One row of a <model>-scalability.csv file.
struct pollux_scalability_row {
    std::int64_t nodes = 0;
    std::int64_t replicas = 0;
    double local_batch = 0.0;
    double step_time_s = 0.0;
    double sync_time_s = 0.0;
    std::int64_t line = 0;

    [[nodiscard]] sync_step_sample sample() const {
        return {.shape = {.replicas = replicas, .nodes = nodes, .local_batch = local_batch, .accumulation_steps = 0},
                .step_time_s = step_time_s,
                .sync_time_s = sync_time_s};
    }
};

namespace detail::pollux_csv {

using text_lines::trim;
using text_lines::where;

[[noreturn]] inline void fail(std::int64_t line, std::string_view field, std::string_view expected, std::string_view found) {
    text_lines::fail(line, field, expected, found, 60);
}

/// Splits on commas; exactly Count fields, or a parse_error naming the columns (a short line:
/// "truncated line; missing field ...").
template <std::size_t Count>
[[nodiscard]] std::array<std::string_view, Count> split(std::string_view text, std::int64_t line,
                                                        const std::array<std::string_view, Count>& names) {
    return text_lines::split(text, line, names, "truncated line; missing field ");
}

[[nodiscard]] inline double number(std::string_view text, std::int64_t line, std::string_view field, bool allow_zero) {
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    const std::string_view expected = allow_zero ? "a finite number >= 0 (seconds)" : "a finite number > 0";
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
        fail(line, field, expected, text);
    if (value < 0.0 || (!allow_zero && value == 0.0)) fail(line, field, expected, text);
    return value;
}

[[nodiscard]] inline std::int64_t count(std::string_view text, std::int64_t line, std::string_view field) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < 1)
        fail(line, field, "an integer >= 1", text);
    return value;
}

/// Reads the header (first non-blank line) and calls row(fields, line) for every data line.
template <std::size_t Count, class Row>
void read_csv(std::istream& in, const std::array<std::string_view, Count>& names, Row&& row) {
    std::string text;
    std::int64_t line = 0;
    bool header = false;
    while (std::getline(in, text)) {
        ++line;
        // Fields are echoed in errors and tables: the text must be UTF-8.
        text_lines::require_utf8_line(text, line);
        const std::string_view trimmed = trim(text);
        if (trimmed.empty()) continue;
        if (!header) {
            const auto fields = split(trimmed, line, names);
            for (std::size_t i = 0; i < Count; ++i)
                if (fields[i] != names[i]) {
                    std::string what = "the header column ";
                    what += names[i];
                    fail(line, names[i], what, fields[i]);
                }
            header = true;
            continue;
        }
        row(split(trimmed, line, names), line);
    }
    if (!header) {
        std::string message = "expected the header line ";
        for (std::size_t i = 0; i < Count; ++i) {
            if (i > 0) message += ',';
            message += names[i];
        }
        message += ", found an empty input";
        throw parse_error(where(line + 1), message);
    }
}

}  // namespace detail::pollux_csv

/// Reads a placements trace. `gpus_per_node` (1..9) is the most GPUs one node has: a placement
/// digit above it, or a 0 or non-digit, is a parse_error naming the line and the field placement.
[[nodiscard]] inline std::vector<pollux_placement_row> read_pollux_placements(std::istream& in,
                                                                              std::int32_t gpus_per_node = 9) {
    if (gpus_per_node < 1 || gpus_per_node > 9)
        throw invalid_input("gpus_per_node", std::to_string(gpus_per_node), "an integer in [1, 9] (one digit per node)");
    namespace csv = detail::pollux_csv;
    static constexpr std::array<std::string_view, 4> names{"placement", "local_bsz", "step_time", "sync_time"};
    std::vector<pollux_placement_row> rows;
    csv::read_csv(in, names, [&](const std::array<std::string_view, 4>& f, std::int64_t line) {
        pollux_placement_row r;
        r.line = line;
        std::string expected = "digits 1-";
        expected += std::to_string(gpus_per_node);
        expected += " (GPUs on each node, at most --gpus-per-node)";
        if (f[0].empty()) csv::fail(line, "placement", expected, f[0]);
        for (const char c : f[0]) {
            if (c < '1' || c > '0' + gpus_per_node) csv::fail(line, "placement", expected, f[0]);
            r.where.gpus_per_node.push_back(c - '0');
        }
        r.local_batch = csv::number(f[1], line, "local_bsz", false);
        r.step_time_s = csv::number(f[2], line, "step_time", false);
        r.sync_time_s = csv::number(f[3], line, "sync_time", true);
        rows.push_back(std::move(r));
    });
    return rows;
}

/// Reads a scalability trace (num_replicas >= num_nodes >= 1).
[[nodiscard]] inline std::vector<pollux_scalability_row> read_pollux_scalability(std::istream& in) {
    namespace csv = detail::pollux_csv;
    static constexpr std::array<std::string_view, 5> names{"num_nodes", "num_replicas", "local_bsz", "step_time",
                                                           "sync_time"};
    std::vector<pollux_scalability_row> rows;
    csv::read_csv(in, names, [&](const std::array<std::string_view, 5>& f, std::int64_t line) {
        pollux_scalability_row r;
        r.line = line;
        r.nodes = csv::count(f[0], line, "num_nodes");
        r.replicas = csv::count(f[1], line, "num_replicas");
        if (r.replicas < r.nodes) csv::fail(line, "num_replicas", "an integer >= num_nodes", f[1]);
        r.local_batch = csv::number(f[2], line, "local_bsz", false);
        r.step_time_s = csv::number(f[3], line, "step_time", false);
        r.sync_time_s = csv::number(f[4], line, "sync_time", true);
        rows.push_back(std::move(r));
    });
    return rows;
}

}  // namespace dnnplan
