#pragma once
// What the preemption models read and produce: a cluster's spot instances coming and going
// (instance_event, instance_trace: Bamboo's trace CSV, time_ms,add|remove,node), the number of
// instances a cloud offered over time (availability_trace: Bamboo's GCP files) and turned into
// events (to_instance_trace), and the lifetimes of single instances (lifetime_observation, what
// the hazard fit of preemption/hazard.hpp takes). The readers of the files are in
// io/bamboo_trace.hpp; this header has no I/O.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/text_lines.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dnnplan {

enum class instance_event_kind { add, remove };

template <>
struct enum_text<instance_event_kind> {
    static constexpr std::array<enum_name<instance_event_kind>, 2> names{
        {{instance_event_kind::add, "add"}, {instance_event_kind::remove, "remove"}}};
};

/// One instance joining (add) or leaving (remove: a preemption) the cluster at time_ms
/// (milliseconds from the start of the trace).
struct instance_event {
    std::int64_t time_ms = 0;
    instance_event_kind kind = instance_event_kind::add;
    std::string node{};  ///< the instance's name, unique among the live instances

    friend bool operator==(const instance_event&, const instance_event&) = default;
};

namespace detail {

/// The first rule an event list breaks, if any: which event, which of its fields, the value as
/// text and what was expected. instance_trace::validate throws it as invalid_input; the CSV reader
/// (io/bamboo_trace.hpp) as a parse_error naming the event's line.
struct instance_event_problem {
    std::size_t index = 0;
    std::string_view field{};  ///< "time_ms", "kind" or "node"
    std::string value{};
    std::string expected{};
};

using text_lines::quoted_text;

/// `name(k)` names event k in a message ("events[3]", or the reader's "line 7").
template <class Name>
[[nodiscard]] std::optional<instance_event_problem> find_instance_event_problem(const std::vector<instance_event>& events,
                                                                               const Name& name) {
    // live: node -> index of the add that made it live (for the message of a second add).
    std::unordered_map<std::string_view, std::size_t> live;
    std::int64_t previous = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const instance_event& e = events[i];
        if (e.time_ms < 0) return instance_event_problem{i, "time_ms", format_number(e.time_ms), "an integer >= 0"};
        if (e.time_ms < previous)
            return instance_event_problem{i, "time_ms", format_number(e.time_ms),
                                          "an integer >= " + format_number(previous) +
                                              " (the previous event's time: events are sorted by time)"};
        previous = e.time_ms;
        if (e.node.empty()) return instance_event_problem{i, "node", "\"\"", "a non-empty name"};
        if (const auto at = invalid_utf8_offset(e.node))
            return instance_event_problem{i, "node", "a byte that is not UTF-8 at offset " + std::to_string(*at),
                                          "UTF-8 text"};
        if (e.kind == instance_event_kind::add) {
            const auto [it, inserted] = live.emplace(e.node, i);
            if (!inserted)
                return instance_event_problem{i, "node", quoted_text(e.node),
                                              "a node that is not live (it was added by " + name(it->second) +
                                                  " and not removed since)"};
        } else if (e.kind == instance_event_kind::remove) {
            if (live.erase(e.node) == 0)
                return instance_event_problem{i, "node", quoted_text(e.node),
                                              "a live node (added before and not removed since)"};
        } else {
            return instance_event_problem{i, "kind", std::string(to_string(e.kind)), enum_expected<instance_event_kind>()};
        }
    }
    return std::nullopt;
}

}  // namespace detail

/// A cluster's instances over time: events in time order; at equal times the order of the list is
/// the order in which they happen (Bamboo: it decides which loss is fatal).
struct instance_trace {
    std::vector<instance_event> events{};

    /// Throws invalid_input naming "events[i].time_ms" / ".node" / ".kind" under `path`: times are
    /// >= 0 and non-decreasing; node names are non-empty UTF-8; an add names a node that is not
    /// live (a name may be added again after its removal); a remove names a live node.
    void validate(std::string_view path = "") const {
        const auto name = [](std::size_t k) { return "events[" + std::to_string(k) + "]"; };
        if (const auto problem = detail::find_instance_event_problem(events, name)) {
            std::string field = detail::field_prefix(path);
            field += "events[";
            field += std::to_string(problem->index);
            field += "].";
            field += problem->field;
            throw invalid_input(std::move(field), problem->value, problem->expected);
        }
    }

    friend bool operator==(const instance_trace&, const instance_trace&) = default;
};

/// The number of instances of one type a cloud had running at a time (Bamboo's GCP traces).
/// The count holds from time_s until the next sample's time.
struct availability_sample {
    std::int64_t time_s = 0;       ///< seconds since 1970-01-01 00:00:00 UTC (the file's clock read as UTC)
    std::int32_t available = 0;    ///< instances running, >= 0

    friend bool operator==(const availability_sample&, const availability_sample&) = default;
};

/// Samples sorted by time. Two samples at the same time: the later one in the list is the count
/// from that time on (the earlier is superseded at that instant and lasts no time): in Bamboo's
/// v100 file each reading is written three times, at t, t + 60 s and t + 120 s, and a repeat of
/// an older reading can carry the same time as a newer reading written after it.
struct availability_trace {
    std::vector<availability_sample> samples{};

    /// Throws invalid_input naming "samples[i].time_s" / ".available" under `path`: times
    /// non-decreasing and within 9.2e15 s of the first (so that milliseconds from the first fit in
    /// 64 bits); counts >= 0.
    void validate(std::string_view path = "") const {
        const auto field = [&](std::size_t i, std::string_view name) {
            std::string f = detail::field_prefix(path);
            f += "samples[";
            f += std::to_string(i);
            f += "].";
            f += name;
            return f;
        };
        constexpr std::int64_t max_span_s = std::numeric_limits<std::int64_t>::max() / 1000;
        for (std::size_t i = 0; i < samples.size(); ++i) {
            const availability_sample& s = samples[i];
            if (s.available < 0) throw invalid_input(field(i, "available"), std::to_string(s.available), "an integer >= 0");
            if (i == 0) continue;
            const std::int64_t previous = samples[i - 1].time_s;
            if (s.time_s < previous)
                throw invalid_input(field(i, "time_s"), std::to_string(s.time_s),
                                    "an integer >= " + std::to_string(previous) +
                                        " (the previous sample's time: samples are sorted by time)");
            // time_s >= previous >= first here, so the difference does not overflow unless the
            // span is huge: compare without subtracting past the range.
            const std::int64_t first = samples.front().time_s;
            if ((first < 0 && s.time_s > first + max_span_s) || (first >= 0 && s.time_s - first > max_span_s))
                throw invalid_input(field(i, "time_s"), std::to_string(s.time_s),
                                    "at most " + std::to_string(max_span_s) + " s after samples[0].time_s");
        }
    }

    friend bool operator==(const availability_trace&, const availability_trace&) = default;
};

/// The count changes of an availability trace as add/remove events, in milliseconds from the
/// first sample: the first sample's count is that many adds at time 0; each later time at which
/// the count rises adds the difference (new names node_prefix + "1", "2", ... in order of
/// addition, never reused), and each time it falls removes the difference, the oldest live
/// instances first (first in, first out: the counts say how many left, not which, and FIFO is
/// the choice that makes no instance outlive one added before it). Of several samples at one time
/// only the last counts (availability_trace). Validates the trace first.
[[nodiscard]] inline instance_trace to_instance_trace(const availability_trace& trace,
                                                      std::string_view node_prefix = "node") {
    trace.validate();
    detail::require_utf8("node_prefix", node_prefix);
    instance_trace out;
    if (trace.samples.empty()) return out;
    const std::int64_t first_s = trace.samples.front().time_s;
    std::deque<std::string> live;  // oldest first
    std::int64_t next_id = 1;
    for (std::size_t i = 0; i < trace.samples.size(); ++i) {
        const availability_sample& s = trace.samples[i];
        if (i + 1 < trace.samples.size() && trace.samples[i + 1].time_s == s.time_s) continue;  // superseded
        const std::int64_t time_ms = (s.time_s - first_s) * 1000;
        while (static_cast<std::int64_t>(live.size()) < s.available) {
            std::string name(node_prefix);
            name += std::to_string(next_id++);
            out.events.push_back({.time_ms = time_ms, .kind = instance_event_kind::add, .node = name});
            live.push_back(std::move(name));
        }
        while (static_cast<std::int64_t>(live.size()) > s.available) {
            out.events.push_back({.time_ms = time_ms, .kind = instance_event_kind::remove, .node = live.front()});
            live.pop_front();
        }
    }
    return out;
}

/// One instance's life, as the hazard fit (preemption/hazard.hpp) takes it: how long it ran and
/// whether it ended in a preemption (true) or was still running when the observation stopped
/// (false: right-censored, including an instance ended by a cause other than the market, such as
/// GCP's 24 h limit on preemptible VMs).
struct lifetime_observation {
    double duration_h = 0.0;                      ///< >= 0
    bool preempted = true;                        ///< false: right-censored at duration_h
    std::optional<double> start_hour_of_day{};    ///< [0, 24): for the hour-of-day hazard only

    /// Throws invalid_input naming "duration_h" / "start_hour_of_day" under `path`.
    void validate(std::string_view path = "observation") const {
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "duration_h", duration_h);
        if (start_hour_of_day && !(*start_hour_of_day >= 0.0 && *start_hour_of_day < 24.0))
            throw invalid_input(p + "start_hour_of_day", detail::format_number(*start_hour_of_day), "a number in [0, 24)");
    }

    friend bool operator==(const lifetime_observation&, const lifetime_observation&) = default;
};

}  // namespace dnnplan
