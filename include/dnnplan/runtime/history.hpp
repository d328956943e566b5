#pragma once
// What a deadline policy learns from the availability it has observed: the lengths of the spot
// runs (ticks with spot, in a row: in one region, or anywhere) and of the outages (ticks without)
// that have ended, and the age of the period in progress. Kept up to date one tick at a time, as the simulator or a
// scheduler hands the policy its views; built from the whole history (the ticks before the job's
// start included) on the first view or when a view does not follow the last one.

#include <dnnplan/runtime/deadline_problem.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace dnnplan::detail::deadline {

/// Completed period lengths (in ticks) as a sorted histogram: (length, count).
class length_histogram {
public:
    void add(std::int64_t length) {
        auto it = std::lower_bound(bins_.begin(), bins_.end(), std::pair<std::int64_t, std::int64_t>{length, 0},
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
        if (it != bins_.end() && it->first == length) ++it->second;
        else bins_.insert(it, {length, 1});
        ++count_;
        total_ += length;
    }
    void clear() noexcept {
        bins_.clear();
        count_ = 0;
        total_ = 0;
    }
    [[nodiscard]] const std::vector<std::pair<std::int64_t, std::int64_t>>& bins() const noexcept { return bins_; }
    [[nodiscard]] std::int64_t count() const noexcept { return count_; }
    [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
    /// The mean length (ticks); 0 when empty.
    [[nodiscard]] double mean() const noexcept { return count_ > 0 ? static_cast<double>(total_) / static_cast<double>(count_) : 0.0; }

private:
    std::vector<std::pair<std::int64_t, std::int64_t>> bins_;
    std::int64_t count_ = 0;
    std::int64_t total_ = 0;
};

/// The runs and outages of spot in one region, or "somewhere" (in any region where a gang of N
/// fits; region -1, the default).
class availability_history {
public:
    explicit availability_history(std::int32_t region = -1) noexcept : region_(region) {}

    /// Brings the history up to the view's tick: one step when the view follows the last one,
    /// else a rebuild from the trace's first tick.
    void update(const deadline_view& v) {
        const std::size_t now = v.now();
        if (!built_ || now != last_ + 1) rebuild(v);
        else step(up(v, now));
        last_ = now;
    }
    [[nodiscard]] const length_histogram& runs() const noexcept { return runs_; }
    [[nodiscard]] const length_histogram& outages() const noexcept { return outages_; }
    /// Ticks the period in progress has lasted, this one included.
    [[nodiscard]] std::int64_t age() const noexcept { return age_; }

private:
    [[nodiscard]] bool up(const deadline_view& v, std::size_t k) const {
        if (region_ >= 0) return v.available(static_cast<std::size_t>(region_), k) >= v.job().instances;
        for (std::size_t r = 0; r < v.regions(); ++r)
            if (v.available(r, k) >= v.job().instances) return true;
        return false;
    }

    void rebuild(const deadline_view& v) {
        runs_.clear();
        outages_.clear();
        censored_ = true;  // the first period began before the trace: its length is unknown
        built_ = true;
        up_ = up(v, 0);
        age_ = 1;
        for (std::size_t k = 1; k <= v.now(); ++k) step(up(v, k));
    }
    void step(bool up) {
        if (up == up_) {
            ++age_;
            return;
        }
        if (!censored_) (up_ ? runs_ : outages_).add(age_);
        censored_ = false;
        up_ = up;
        age_ = 1;
    }

    std::int32_t region_ = -1;
    length_histogram runs_, outages_;
    bool built_ = false, censored_ = true, up_ = false;
    std::int64_t age_ = 0;
    std::size_t last_ = 0;
};

}  // namespace dnnplan::detail::deadline
