#pragma once
// CPython's `random.Random(seed)` stream, draw for draw: the Mersenne Twister MT19937
// (Matsumoto & Nishimura, ACM TOMACS 8(1), 1998) seeded as CPython's Modules/_randommodule.c
// seeds it (init_by_array over the 32-bit words of |seed|), `random()` (genrand_res53: 53 bits
// from two outputs) and `randrange(n)` (`_randbelow_with_getrandbits`: getrandbits(bit_length(n))
// until the draw is below n). Bamboo's random mode draws from this stream
// (preemption/bamboo_simulator.hpp: simulate_bamboo in random mode, bamboo_random_process), so a seed here gives the events a seed gives Bamboo's simulator.
// A value type: no global state.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dnnplan {

class python_random {
public:
    /// random.Random(seed) for a non-negative integer seed (CPython: the key is |seed|'s 32-bit
    /// words, least significant first; 0 is the key [0]).
    explicit python_random(std::uint64_t seed) {
        std::vector<std::uint32_t> key;
        do {
            key.push_back(static_cast<std::uint32_t>(seed & 0xffffffffu));
            seed >>= 32;
        } while (seed != 0);
        init_by_array(key);
    }

    /// The next 32-bit output (genrand_uint32).
    [[nodiscard]] std::uint32_t next_uint32() noexcept {
        if (index_ >= n) twist();
        std::uint32_t y = state_[index_++];
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c5680u;
        y ^= (y << 15) & 0xefc60000u;
        y ^= y >> 18;
        return y;
    }

    /// random(): a double uniform on [0, 1) with 53 random bits (genrand_res53).
    [[nodiscard]] double random() noexcept {
        const std::uint32_t a = next_uint32() >> 5, b = next_uint32() >> 6;
        return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) * (1.0 / 9007199254740992.0);
    }

    /// getrandbits(k) for 1 <= k <= 32.
    [[nodiscard]] std::uint32_t getrandbits(int k) noexcept { return next_uint32() >> (32 - k); }

    /// randrange(stop) = randrange(0, stop) for 1 <= stop < 2^32: uniform on {0, ..., stop - 1} by rejection.
    [[nodiscard]] std::uint32_t randrange(std::uint32_t stop) noexcept {
        const auto k = static_cast<int>(std::bit_width(stop));
        std::uint32_t r = getrandbits(k);
        while (r >= stop) r = getrandbits(k);
        return r;
    }

private:
    static constexpr std::size_t n = 624, m = 397;

    void init_genrand(std::uint32_t s) noexcept {
        state_[0] = s;
        for (std::size_t i = 1; i < n; ++i)
            state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
        index_ = n;
    }

    void init_by_array(const std::vector<std::uint32_t>& key) noexcept {
        init_genrand(19650218u);
        std::size_t i = 1, j = 0;
        for (std::size_t k = std::max(n, key.size()); k > 0; --k) {
            state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1664525u)) + key[j] + static_cast<std::uint32_t>(j);
            ++i;
            ++j;
            if (i >= n) {
                state_[0] = state_[n - 1];
                i = 1;
            }
            if (j >= key.size()) j = 0;
        }
        for (std::size_t k = n - 1; k > 0; --k) {
            state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1566083941u)) - static_cast<std::uint32_t>(i);
            ++i;
            if (i >= n) {
                state_[0] = state_[n - 1];
                i = 1;
            }
        }
        state_[0] = 0x80000000u;  // MSB is 1: a non-zero initial array
        index_ = n;
    }

    void twist() noexcept {
        constexpr std::uint32_t upper = 0x80000000u, lower = 0x7fffffffu, matrix = 0x9908b0dfu;
        for (std::size_t k = 0; k < n; ++k) {
            const std::uint32_t y = (state_[k] & upper) | (state_[(k + 1) % n] & lower);
            state_[k] = state_[(k + m) % n] ^ (y >> 1) ^ ((y & 1u) ? matrix : 0u);
        }
        index_ = 0;
    }

    std::array<std::uint32_t, n> state_{};
    std::size_t index_ = n;
};

}  // namespace dnnplan
