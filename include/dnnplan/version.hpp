#pragma once

#define DNNPLAN_VERSION_MAJOR 0
#define DNNPLAN_VERSION_MINOR 1
#define DNNPLAN_VERSION_PATCH 0

namespace dnnplan {
inline constexpr int version_major = DNNPLAN_VERSION_MAJOR;
inline constexpr int version_minor = DNNPLAN_VERSION_MINOR;
inline constexpr int version_patch = DNNPLAN_VERSION_PATCH;
}  // namespace dnnplan
