#pragma once
// PipeDream's cost of one pipeline stage (Narayanan et al., SOSP 2019; its optimizer's
// optimizer_graph_hierarchical.py, as the reference note describes it, section 3) as a stage-cost
// model of model/concepts.hpp (stage_cost_model), over the states of partition/antichain.hpp: one
// level of PipeDream's optimizer, with its bandwidth, activation compression and memory limit.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/partition/antichain.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dnnplan {

/// One level of PipeDream's optimizer as a stage-cost model: its bandwidth, its activation
/// compression ratio (absent: transfers ignored), its memory limit (absent: no constraint), and
/// G, the machines in each machine of this level (1 at the lowest level).
struct pipedream_level_options {
    double bandwidth_bytes_per_s = 1e9;
    std::optional<double> activation_compression_ratio{};
    std::optional<double> memory_bytes{};
    double machines_within = 1.0;
};

/// PipeDream's time of one stage (reference note, section 3), as a stage_cost_model. The stage
/// holds states [first_state, end_state); its figures are PipeDream's "range" figures, the
/// differences of the prefix figures of states end_state - 1 and first_state - 1 (compute may
/// instead come from the previous level of a hierarchical run: `compute_table`, PipeDream's
/// (S + 1) x S compute_times, row first_state, column end_state - 1, +inf for None).
///
/// The first stage (devices_before == 0) is PipeDream's initialisation,
///     (C + 4 (r - 1) W / (B r) / G) / r,
/// allowed when ceil((M - r) / r) (Act + W) <= memory; every later stage is the recurrence's last
/// stage,
///     max((C + 4 (r - 1) W / (B r)) / r, 2 out(first - 1) / (B r) / R, 2 out(end - 1) / (B r) / R),
/// (transfer terms only with a ratio R; the output term not for the last stage), allowed when
/// (Act + W) ceil((M - devices_before - r) / r) <= memory. A stage that is not allowed costs +inf.
class pipedream_stage_cost {
public:
    static constexpr bool needs_stage_count = false;

    pipedream_stage_cost(const antichain_states& states, pipedream_level_options level, std::vector<double> compute_table = {})
        : level_(std::move(level)), compute_table_(std::move(compute_table)) {
        const std::size_t s = states.states.size();
        if (!compute_table_.empty() && compute_table_.size() != (s + 1) * s)
            throw invalid_input("compute_table", std::to_string(compute_table_.size()) + " values",
                                "(S + 1) x S = " + std::to_string((s + 1) * s) + " values, or none");
        detail::require_positive("bandwidth_bytes_per_s", level_.bandwidth_bytes_per_s);
        if (level_.activation_compression_ratio)
            detail::require_positive("activation_compression_ratio", *level_.activation_compression_ratio);
        if (level_.memory_bytes) detail::require_positive("memory_bytes", *level_.memory_bytes);
        detail::require_positive("machines_within", level_.machines_within);
        compute_.reserve(s);
        activation_.reserve(s);
        parameter_.reserve(s);
        output_.reserve(s);
        for (const auto& st : states.states) {
            compute_.push_back(st.compute_s);
            activation_.push_back(st.activation_bytes);
            parameter_.push_back(st.parameter_bytes);
            output_.push_back(st.output_activation_bytes);
        }
    }

    [[nodiscard]] std::size_t num_states() const noexcept { return compute_.size(); }
    [[nodiscard]] const pipedream_level_options& level() const noexcept { return level_; }

    /// PipeDream's range figures of states [first, end), end > first (row `first`, column end - 1).
    [[nodiscard]] double compute_s(std::size_t first, std::size_t end) const noexcept {
        if (!compute_table_.empty()) return compute_table_[first * compute_.size() + (end - 1)];
        return range(compute_, first, end);
    }
    [[nodiscard]] double parameter_bytes(std::size_t first, std::size_t end) const noexcept { return range(parameter_, first, end); }
    [[nodiscard]] double activation_bytes(std::size_t first, std::size_t end) const noexcept { return range(activation_, first, end); }
    [[nodiscard]] double output_activation_bytes(std::size_t state) const noexcept { return output_[state]; }

    [[nodiscard]] double stage_time_s(const stage_candidate& s) const noexcept {
        const double c = compute_s(s.first_state, s.end_state);
        if (std::isinf(c)) return c;
        const double w = parameter_bytes(s.first_state, s.end_state);
        const double stashed = activation_bytes(s.first_state, s.end_state) + w;
        const double r = s.replicas;
        const double bw = level_.bandwidth_bytes_per_s;
        if (s.devices_before == 0) {
            if (!fits(stashed, s.devices_total - s.replicas, s.replicas)) return inf;
            return (c + 4.0 * (r - 1.0) * w / (bw * r) / level_.machines_within) / r;
        }
        if (!fits(stashed, s.devices_total - s.devices_before - s.replicas, s.replicas)) return inf;
        return transfers_bound((c + (4.0 * (r - 1.0) * w) / (bw * r)) / r, s.first_state - 1, s.end_state - 1, s.replicas);
    }

    [[nodiscard]] double pipeline_time_s(double slowest_s, std::int32_t /*stages*/) const noexcept { return slowest_s; }

    /// The transfer terms' numerator for the stage of states [k + 1, j + 1): the larger of
    /// 2 out(k) / (B R) and (unless j is the last state) 2 out(j) / (B R); 0 without a ratio. A
    /// stage on r replicas waits for its transfers this value / r.
    [[nodiscard]] double transfer_bytes_per_s(std::size_t k, std::size_t j) const noexcept {
        return transfers_bound(0.0, k, j, 1);
    }
    /// 2 out(k) / (B R) (0 without a ratio): what a stage next to state k waits for its
    /// transfer at k, on one replica.
    [[nodiscard]] double output_transfer_s(std::size_t k) const noexcept {
        if (!level_.activation_compression_ratio) return 0.0;
        return (2.0 * output_[k]) / level_.bandwidth_bytes_per_s / *level_.activation_compression_ratio;
    }

    /// PipeDream's memory check: `stashed` bytes, ceil(after / replicas) times, within memory.
    [[nodiscard]] bool fits(double stashed, std::int32_t after, std::int32_t replicas) const noexcept {
        if (!level_.memory_bytes) return true;
        return stashed * std::ceil(static_cast<double>(after) / static_cast<double>(replicas)) <= *level_.memory_bytes;
    }

private:
    static constexpr double inf = std::numeric_limits<double>::infinity();

    static double range(const std::vector<double>& prefix, std::size_t first, std::size_t end) noexcept {
        return first == 0 ? prefix[end - 1] : prefix[end - 1] - prefix[first - 1];
    }

    // The activation transfers into and out of the stage (states k + 1 .. j), with a ratio only.
    double transfers_bound(double t, std::size_t k, std::size_t j, std::int32_t r) const noexcept {
        if (!level_.activation_compression_ratio) return t;
        const double ratio = *level_.activation_compression_ratio;
        const double per = level_.bandwidth_bytes_per_s * static_cast<double>(r);
        t = std::max(t, (2.0 * output_[k]) / per / ratio);
        if (j + 1 < output_.size()) t = std::max(t, (2.0 * output_[j]) / per / ratio);
        return t;
    }

    pipedream_level_options level_;
    std::vector<double> compute_table_;
    std::vector<double> compute_, activation_, parameter_, output_;
};

static_assert(stage_cost_model<pipedream_stage_cost>);

}  // namespace dnnplan
