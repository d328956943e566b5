#pragma once
// The event queue of Bamboo's simulation (preemption/detail/bamboo_engine.hpp): CPython's heapq
// on (time, kind), reproduced exactly, because events with equal time and kind come out in
// heapq's array order (neither FIFO nor file order), and that order decides which of two
// simultaneous losses is fatal. docs/models/bamboo.md, "The event queue: CPython's heapq".

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace dnnplan::detail::bamboo {

enum event_kind : std::int32_t { add = 1, remove = 2, generate = 3, ready = 4, global_timeout = 5, local_timeout = 6, step = 7 };

struct event {
    std::int64_t time_ms = 0;
    std::int32_t kind = 0;
    std::int64_t data = 0;     // instance index (add, remove, ready), rendezvous version (step)
    std::uint64_t serial = 0;  // identity for the layout check; never compared
};

[[nodiscard]] inline bool less(const event& a, const event& b) noexcept {
    return a.time_ms < b.time_ms || (a.time_ms == b.time_ms && a.kind < b.kind);
}

/// CPython's heapq (Lib/heapq.py: heappush = _siftdown; heappop = _siftup then _siftdown) on
/// (time, kind), so that equal keys come out in the same order as in Bamboo's simulator.
class python_heap {
public:
    void push(event e) {
        e.serial = next_serial_++;
        track(a_.size());
        a_.push_back(e);
        sift_to_root(0, a_.size() - 1);
    }
    event pop() {
        event last = a_.back();
        track(a_.size() - 1);
        a_.pop_back();
        if (a_.empty()) return last;
        event top = a_[0];
        set(0, last);
        sift_to_leaf(0);
        return top;
    }
    [[nodiscard]] const event& top() const noexcept { return a_.front(); }
    [[nodiscard]] bool empty() const noexcept { return a_.empty(); }

    /// One "push e, then pop the smallest" with e smaller than every queued event; true when the
    /// array is the same afterwards (then every further such cycle leaves it the same too: the
    /// cycle compares queued events only, never e, which rises to the root and leaves).
    bool cycle_is_identity(const event& e) {
        touched_.clear();
        tracking_ = true;
        push(e);
        (void)pop();
        tracking_ = false;
        for (const auto& [pos, serial] : touched_)
            if (pos < a_.size() && a_[pos].serial != serial) return false;
        return true;
    }

private:
    void track(std::size_t pos) {
        if (!tracking_) return;
        for (const auto& t : touched_)
            if (t.first == pos) return;
        touched_.emplace_back(pos, pos < a_.size() ? a_[pos].serial : std::numeric_limits<std::uint64_t>::max());
    }
    void set(std::size_t pos, const event& e) {
        track(pos);
        a_[pos] = e;
    }
    // heapq._siftdown: the item at pos moves toward the root past every larger parent.
    void sift_to_root(std::size_t start, std::size_t pos) {
        const event item = a_[pos];
        while (pos > start) {
            const std::size_t parent = (pos - 1) >> 1;
            if (less(item, a_[parent])) {
                set(pos, a_[parent]);
                pos = parent;
                continue;
            }
            break;
        }
        set(pos, item);
    }
    // heapq._siftup: the hole at pos goes down to a leaf along the smaller children (the right
    // one unless the left is strictly smaller), then the item sifts back toward the root.
    void sift_to_leaf(std::size_t pos) {
        const std::size_t end = a_.size(), start = pos;
        const event item = a_[pos];
        std::size_t child = 2 * pos + 1;
        while (child < end) {
            const std::size_t right = child + 1;
            if (right < end && !less(a_[child], a_[right])) child = right;
            set(pos, a_[child]);
            pos = child;
            child = 2 * pos + 1;
        }
        set(pos, item);
        sift_to_root(start, pos);
    }

    std::vector<event> a_;
    std::uint64_t next_serial_ = 0;
    bool tracking_ = false;
    std::vector<std::pair<std::size_t, std::uint64_t>> touched_;
};

}  // namespace dnnplan::detail::bamboo
