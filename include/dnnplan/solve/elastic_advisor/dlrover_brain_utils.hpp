#pragma once
// The helpers DLRover's "Brain" algorithms share (dlrover_brain.hpp, dlrover_brain_worker.hpp):
// Go's arithmetic where C++ differs, and the Brain's utils restated
// (intelligent-machine-learning/dlrover, dlrover/go/brain/pkg/utils/job.go and
// pkg/optimizer/implementation/utils/*.go; the file and commit of each are named where it is
// restated).
//
// Go divides floats by zero and gets +-Inf or NaN, and several rules rely on it; C++ leaves that
// undefined, so each such place goes through detail::go_div, which spells out what Go's IEEE
// division returns, and every count goes through detail::go_count (Go's int32 of NaN or Inf is
// platform-dependent; 0 here). Go's map iteration order is random; every map here is scanned by
// ascending node index (sums of more than two values may then differ from a given Go run in the
// last bit).

#include <dnnplan/core/error.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_brain_inputs.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan::dlrover {

namespace detail {

/// a / b as Go's float64 division gives it (IEEE 754). C++ leaves division by zero undefined, so
/// that case is spelled out: +-Inf by the signs, NaN for 0 / 0 and NaN / 0.
[[nodiscard]] inline double go_div(double a, double b) noexcept {
    if (b != 0.0) return a / b;
    if (std::isnan(a) || a == 0.0) return std::numeric_limits<double>::quiet_NaN();
    const bool negative = (a < 0.0) != std::signbit(b);
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
}

/// Go's int32(x) of a count: x truncated when it is in int32's range. Go's conversion of NaN,
/// +-Inf or a value out of range is platform-dependent (amd64 gives -2^31) and C++'s undefined:
/// 0 ("unchanged") here.
[[nodiscard]] inline std::int32_t go_count(double x) noexcept {
    if (!(x > -2147483649.0 && x < 2147483648.0)) return 0;
    return static_cast<std::int32_t>(x);
}

/// DLRover's `err != nil || value == 0` fallback to a default.
[[nodiscard]] inline double zero_reads_as(double value, double fallback) noexcept { return value == 0.0 ? fallback : value; }

/// Go's strconv.Atoi: an optional sign and decimal digits, within int64.
[[nodiscard]] inline std::optional<std::int64_t> go_atoi(std::string_view text) noexcept {
    bool negative = false;
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty()) return std::nullopt;
    std::uint64_t magnitude = 0;
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    for (const char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (magnitude > (limit - digit) / 10) return std::nullopt;
        magnitude = magnitude * 10 + digit;
    }
    if (!negative) return static_cast<std::int64_t>(magnitude);
    return magnitude == (std::uint64_t{1} << 63) ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(magnitude);
}

/// ExtractPodTypeAndIDFromName (brain/pkg/utils/job.go, commit 4eaf4cb9): the text after the last
/// of the left-to-right, non-overlapping occurrences of "-worker-" (or, if there is none, of
/// "-ps-"), read by Atoi. None when there is no separator, no number, or a negative one.
[[nodiscard]] inline std::optional<std::uint64_t> pod_index(std::string_view name) noexcept {
    for (const std::string_view separator : {std::string_view("-worker-"), std::string_view("-ps-")}) {
        std::size_t end = std::string_view::npos;
        for (std::size_t at = name.find(separator); at != std::string_view::npos; at = name.find(separator, at + separator.size()))
            end = at + separator.size();
        if (end == std::string_view::npos) continue;
        const auto id = go_atoi(name.substr(end));
        if (!id || *id < 0) return std::nullopt;
        return static_cast<std::uint64_t>(*id);
    }
    return std::nullopt;
}

/// GetResourceFromJobNode's index (implementation/utils/job.go, commit c7391143): Atoi of the text
/// after the last '-'.
[[nodiscard]] inline std::optional<std::uint64_t> index_after_last_dash(std::string_view name) noexcept {
    const std::size_t dash = name.rfind('-');
    if (dash == std::string_view::npos) return std::nullopt;
    const auto id = go_atoi(name.substr(dash + 1));
    if (!id || *id < 0) return std::nullopt;
    return static_cast<std::uint64_t>(*id);
}

/// The value of node `index`, 0 when it has none (Go's map read of a missing key).
[[nodiscard]] inline double value_or(const node_values& values, std::uint64_t index) {
    const auto it = values.find(index);
    return it == values.end() ? 0.0 : it->second;
}

using record_values = node_values brain_runtime_record::*;

// implementation/utils/math.go (commit 4350fbde) and runtime.go (commit 0baaaea0).

/// GetMaxJobNodeResource: the largest value, at least 0.
[[nodiscard]] inline double max_value(const node_values& values) noexcept {
    double most = 0.0;
    for (const auto& entry : values)
        if (most < entry.second) most = entry.second;
    return most;
}

/// ComputeAverage of a non-empty list (Go's 0 / 0 for an empty one is handled by the callers).
[[nodiscard]] inline double mean(const std::vector<double>& values) noexcept {
    double sum = 0.0;
    for (const double v : values) sum += v;
    return sum / static_cast<double>(values.size());
}

/// GetMaxUtil: the largest used / requested over the nodes in both maps; the first ratio replaces a
/// running 0 whatever it is (Go's `max == 0 || max < util`).
[[nodiscard]] inline double max_util(const node_values& used, const node_values& requested) noexcept {
    double most = 0.0;
    for (const auto& [index, value] : used) {
        const auto it = requested.find(index);
        if (it == requested.end()) continue;
        const double util = go_div(value, it->second);
        if (most == 0.0 || most < util) most = util;
    }
    return most;
}

/// CalculateJobNodeAvgResources: per node, the mean over the last `step` records it appears in
/// (0 when the sum is 0).
[[nodiscard]] inline node_values node_average(const std::vector<brain_runtime_record>& records, std::size_t step,
                                              record_values member) {
    node_values sum, count;
    for (std::size_t i = 0; i < std::min(step, records.size()); ++i)
        for (const auto& [index, value] : records[records.size() - 1 - i].*member) {
            sum[index] += value;
            count[index] += 1.0;
        }
    node_values out;
    for (const auto& [index, total] : sum) out[index] = total > 0.0 ? total / count[index] : 0.0;
    return out;
}

/// CalculateJobNodeMaxResource: per node, the largest value over the last `step` records; a node
/// enters only with a value above 0 (Go reads a missing entry as 0 and never stores it).
[[nodiscard]] inline node_values node_maximum(const std::vector<brain_runtime_record>& records, std::size_t step,
                                              record_values member) {
    node_values out;
    for (std::size_t i = 0; i < std::min(step, records.size()); ++i)
        for (const auto& [index, value] : records[records.size() - 1 - i].*member)
            if (value > value_or(out, index)) out[index] = value;
    return out;
}

[[nodiscard]] inline bool same_nodes(const node_values& a, const node_values& b) noexcept {
    if (a.size() != b.size()) return false;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
        if (i->first != j->first) return false;
    return true;
}

// implementation/utils/optimize_algorithm.go (commit e426cd5e).

/// FilterRuntimeInfosWithLatestPS: the records whose PS set (the keys of ps_cpu_cores) is the
/// latest record's, in order.
[[nodiscard]] inline std::vector<brain_runtime_record> with_latest_ps(const std::vector<brain_runtime_record>& records) {
    std::vector<brain_runtime_record> out;
    for (const brain_runtime_record& r : records)
        if (same_nodes(r.ps_cpu_cores, records.back().ps_cpu_cores)) out.push_back(r);
    return out;
}

/// CheckHotCPUNodes: the PS (ascending) whose mean CPU over the last `step` records over its request
/// is above `threshold`; none when there are fewer records.
[[nodiscard]] inline std::vector<std::uint64_t> hot_cpu_nodes(const std::vector<brain_runtime_record>& records,
                                                              const node_values& requested, double threshold, std::size_t step) {
    std::vector<std::uint64_t> hot;
    if (records.size() < step) return hot;
    for (const auto& [index, cpu] : node_average(records, step, &brain_runtime_record::ps_cpu_cores)) {
        const auto it = requested.find(index);
        if (it != requested.end() && go_div(cpu, it->second) > threshold) hot.push_back(index);
    }
    return hot;
}

/// ComputeAvgSpeed (and the worker file's computePreAvgSpeed, the same): the mean over the last
/// `count` records of the speed per worker; 0 without records. A record without workers gives
/// Go's x / 0: +Inf, or NaN when its speed is 0.
[[nodiscard]] inline double mean_speed_per_worker(const std::vector<brain_runtime_record>& records, std::int64_t count) {
    const std::size_t n = std::min(records.size(), static_cast<std::size_t>(count));
    if (n == 0) return 0.0;
    double total = 0.0;
    for (std::size_t i = records.size(); i-- > records.size() - n;)
        total += go_div(records[i].speed_steps_per_s, static_cast<double>(records[i].worker_cpu_cores.size()));
    return total / static_cast<double>(n);
}

/// The training's step count: DatasetSize / BatchSize (Go's float division: +Inf, or NaN, for a
/// batch size of 0), times Epoch when > 0, at most MaxSteps when > 0. None when either feature did
/// not parse.
[[nodiscard]] inline std::optional<double> training_steps(const brain_job& job) {
    if (!job.hyper_params || !job.dataset_size) return std::nullopt;
    double steps = go_div(static_cast<double>(*job.dataset_size), static_cast<double>(job.hyper_params->batch_size));
    const auto epoch = static_cast<double>(job.hyper_params->epoch);
    const auto max_steps = static_cast<double>(job.hyper_params->max_steps);
    if (epoch > 0.0) steps = epoch * steps;
    if (max_steps > 0.0 && steps > max_steps) steps = max_steps;
    return steps;
}

/// ComputePerStepTime (and computeInitPerStepTime): despite the name, the whole training's time,
/// steps / speed.
[[nodiscard]] inline std::optional<double> training_time_s(const brain_job& job, double speed_steps_per_s) {
    const auto steps = training_steps(job);
    if (!steps) return std::nullopt;
    return go_div(*steps, speed_steps_per_s);
}

/// The PS nodes' requests and names by ExtractPodTypeAndIDFromName's index (a later node with the
/// same index replaces an earlier one, as Go's map assignment).
struct ps_requests {
    node_values cpu_cores, memory_bytes;
    std::map<std::uint64_t, std::string> names;
};

[[nodiscard]] inline ps_requests ps_requests_of(const std::vector<brain_job_node>& nodes) {
    ps_requests out;
    for (const brain_job_node& node : nodes)
        if (const auto index = pod_index(node.name)) {
            out.cpu_cores[*index] = node.resource.cpu_cores;
            out.memory_bytes[*index] = node.resource.memory_bytes;
            out.names[*index] = node.name;
        }
    return out;
}

[[nodiscard]] inline const std::vector<brain_runtime_record>& parsed_runtime(const brain_job& job, std::string_view path = "job") {
    if (!job.runtime)
        throw invalid_input(std::string(path) + ".runtime", "none",
                            "runtime records (DLRover returns an error when JobRuntime does not parse)");
    return *job.runtime;
}

}  // namespace detail

}  // namespace dnnplan::dlrover
