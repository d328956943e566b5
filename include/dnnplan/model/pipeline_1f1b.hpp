#pragma once
// Our pipeline stage-cost model: synchronous 1F1B pipelining with M micro-batches per minibatch
// and data-parallel replicas within each stage, over the cut points of a layer_chain. It
// satisfies stage_cost_model (model/concepts.hpp); docs/models/pipeline-1f1b.md has the
// formulas, their sources and the choices made.
//
// Per stage [first, end) on r replicas, u = stage_count - stage_index stages from it to the end
// (itself included), micro-batch of b samples, M micro-batches:
//   b_r       = ceil(b / r)  samples per replica per micro-batch (the replicas split each micro-batch)
//   compute   = sum over the stage's layers of (forward.at(b_r) + backward.at(b_r)) / speed_ratio
//   transfer  = 2 (cut_in + cut_out) b_r / bandwidth   (activations forward, their gradients
//               backward, on the stage's input and output cuts; PipeDream's 2 * act / B)
//   allreduce = 2 (r - 1) / r * P / bandwidth          (ring all-reduce of the stage's P parameter
//               bytes; Patarasuk and Yuan, J. Parallel Distrib. Comput. 69(2), 2009)
//   exposed   = (1 - sync_overlap_ratio) * allreduce    (the rest hides behind backward compute)
//   per micro-batch: t = max(compute, transfer) + exposed / M
//   memory    = P + O + min(u, M) * A * b_r  <= device memory, else t = +inf
//               (1F1B keeps at most u micro-batches in flight on a stage u from the end;
//               Narayanan et al., the Megatron-LM pipeline schedules paper, SC 2021,
//               section 2.2.1)
// and the time per minibatch of S stages is (M + S - 1) * max over stages of t (the same paper and
// GPipe, Huang et al., NeurIPS 2019: M + S - 1 micro-batch slots, S - 1 of them the bubble).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/workload/layer_chain.hpp>
#include <dnnplan/model/concepts.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

class pipeline_1f1b_model {
public:
    /// stage_time_s reads the stage count (for the micro-batches in flight)...
    static constexpr bool needs_stage_count = true;
    /// ...but only through stage_count - stage_index, and never devices_before or devices_total,
    /// which lets pipeline_dp_partition use its suffix recurrence (partition/pipeline_dp.hpp).
    static constexpr bool depends_only_on_remaining_stages = true;

    /// Throws invalid_input: bad options ("options....") or an empty chain ("chain").
    pipeline_1f1b_model(const layer_chain& chain, const pipeline_config& options) : options_(options) {
        options.validate();
        if (chain.size() == 0) throw invalid_input("chain", "0 layers", "at least one layer");
        if (chain.cut_bytes_per_sample.size() != chain.size())
            throw invalid_input("chain.cut_bytes_per_sample", std::to_string(chain.cut_bytes_per_sample.size()) + " values",
                                "one per layer (" + std::to_string(chain.size()) + ")");
        const std::size_t n = chain.size();
        for (auto* v : {&forward_fixed_, &forward_per_sample_, &backward_fixed_, &backward_per_sample_, &activation_,
                        &parameters_, &optimizer_state_})
            v->assign(n + 1, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            const chain_layer& l = chain.layers[i];
            const std::string at = "chain.layers[" + std::to_string(i) + "]";
            l.forward.validate(at + ".forward");
            l.backward.validate(at + ".backward");
            detail::require_non_negative(at + ".activation_bytes_per_sample", l.activation_bytes_per_sample);
            detail::require_non_negative(at + ".parameter_bytes", l.parameter_bytes);
            detail::require_non_negative(at + ".optimizer_state_bytes", l.optimizer_state_bytes);
            detail::require_non_negative("chain.cut_bytes_per_sample[" + std::to_string(i) + "]", chain.cut_bytes_per_sample[i]);
            forward_fixed_[i + 1] = forward_fixed_[i] + l.forward.fixed_s;
            forward_per_sample_[i + 1] = forward_per_sample_[i] + l.forward.per_sample_s;
            backward_fixed_[i + 1] = backward_fixed_[i] + l.backward.fixed_s;
            backward_per_sample_[i + 1] = backward_per_sample_[i] + l.backward.per_sample_s;
            activation_[i + 1] = activation_[i] + l.activation_bytes_per_sample;
            parameters_[i + 1] = parameters_[i] + l.parameter_bytes;
            optimizer_state_[i + 1] = optimizer_state_[i] + l.optimizer_state_bytes;
        }
        cut_ = chain.cut_bytes_per_sample;
    }

    [[nodiscard]] std::size_t num_states() const noexcept { return cut_.size(); }
    [[nodiscard]] const pipeline_config& options() const noexcept { return options_; }
    /// Samples per minibatch: micro_batch_size * micro_batches.
    [[nodiscard]] double minibatch_samples() const noexcept {
        return static_cast<double>(options_.micro_batch_size) * static_cast<double>(options_.micro_batches);
    }

    /// The stage's figures. stage_count 0 (not known) counts M micro-batches in flight, the most
    /// 1F1B ever holds. A candidate outside the space (first >= end, end > num_states(),
    /// replicas < 1) does not fit.
    [[nodiscard]] stage_breakdown breakdown(const stage_candidate& c) const noexcept {
        stage_breakdown out;
        const std::size_t first = c.first_state, end = c.end_state;
        if (first >= end || end > num_states() || c.replicas < 1) {
            out.fits = false;
            out.stage_time_s = std::numeric_limits<double>::infinity();
            return out;
        }
        const std::int32_t b = options_.micro_batch_size, m = options_.micro_batches, r = c.replicas;
        out.samples_per_replica = (b + r - 1) / r;
        const std::int32_t remaining = c.stage_count > 0 ? c.stage_count - c.stage_index : m;
        out.in_flight = std::clamp(remaining, std::int32_t{1}, m);
        const double br = out.samples_per_replica;
        const auto range = [&](const std::vector<double>& prefix) { return prefix[end] - prefix[first]; };
        out.forward_s = (range(forward_fixed_) + range(forward_per_sample_) * br) / options_.speed_ratio;
        out.backward_s = (range(backward_fixed_) + range(backward_per_sample_) * br) / options_.speed_ratio;
        out.compute_s = out.forward_s + out.backward_s;
        const double cut_in = first > 0 ? cut_[first - 1] : 0.0;
        const double cut_out = cut_[end - 1];
        out.transfer_s = 2.0 * (cut_in + cut_out) * br / options_.bandwidth_bytes_per_s;
        const double rd = r;
        const double params = range(parameters_);
        out.allreduce_s = 2.0 * (rd - 1.0) / rd * params / options_.bandwidth_bytes_per_s;
        out.exposed_sync_s = (1.0 - options_.sync_overlap_ratio) * out.allreduce_s;
        out.memory_bytes = params + range(optimizer_state_) + static_cast<double>(out.in_flight) * range(activation_) * br;
        out.fits = out.memory_bytes <= options_.device_memory_bytes;
        out.stage_time_s = out.fits ? std::max(out.compute_s, out.transfer_s) + out.exposed_sync_s / static_cast<double>(m)
                                    : std::numeric_limits<double>::infinity();
        return out;
    }

    /// Seconds per micro-batch of the stage; +inf when it does not fit in device memory.
    [[nodiscard]] double stage_time_s(const stage_candidate& c) const noexcept { return breakdown(c).stage_time_s; }

    /// Seconds per minibatch of S stages whose slowest takes `slowest_s` per micro-batch:
    /// (M + S - 1) * slowest_s.
    [[nodiscard]] double pipeline_time_s(double slowest_s, std::int32_t stages) const noexcept {
        return static_cast<double>(options_.micro_batches + stages - 1) * slowest_s;
    }

private:
    pipeline_config options_;
    // Prefix sums over the chain ([i] = layers 0..i-1), so a stage costs O(1).
    std::vector<double> forward_fixed_, forward_per_sample_, backward_fixed_, backward_per_sample_;
    std::vector<double> activation_, parameters_, optimizer_state_;
    std::vector<double> cut_;
};

static_assert(stage_cost_model<pipeline_1f1b_model>);

}  // namespace dnnplan
