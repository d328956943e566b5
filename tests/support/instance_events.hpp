#pragma once
// Instance events written as add(t, node) / remove(t, node), for the tests of preemption traces.

#include <dnnplan/preemption/events.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace dnnplan_test {

inline dnnplan::instance_event add(std::int64_t t, std::string node) {
    return {t, dnnplan::instance_event_kind::add, std::move(node)};
}
inline dnnplan::instance_event remove(std::int64_t t, std::string node) {
    return {t, dnnplan::instance_event_kind::remove, std::move(node)};
}

}  // namespace dnnplan_test
