#pragma once

// Work over the values of a large output in fixed chunks on several threads: the comparison with
// the reference (argumentdata.cpp) and the check of which elements were written (outputcheck.cpp).
// Private to measure/cuda/.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace tilescope::chunks {

/// Values per chunk: a multiple of 64, so that a chunk's bits of an ElementMask are whole words.
inline constexpr std::int64_t kValues = std::int64_t{1} << 20;

inline std::size_t count(std::int64_t n) {
    return static_cast<std::size_t>((n + kValues - 1) / kValues);
}

/// Runs fn(chunk, begin, end) over [0, n) in chunks of kValues values, on up to 16 threads when
/// there are several chunks. The chunks are fixed by n alone, so results merged in chunk order do
/// not depend on the number of threads.
template <typename Fn>
void forEach(std::int64_t n, const Fn& fn) {
    const std::size_t chunks = count(n);
    auto run = [&](std::size_t c) {
        const std::int64_t begin = static_cast<std::int64_t>(c) * kValues;
        fn(c, begin, std::min(n, begin + kValues));
    };
    const std::size_t threads = std::min<std::size_t>({chunks, 16, std::max(1u, std::thread::hardware_concurrency())});
    if (threads <= 1) {
        for (std::size_t c = 0; c < chunks; ++c)
            run(c);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t)
        pool.emplace_back([&]() {
            for (std::size_t c = next++; c < chunks; c = next++)
                run(c);
        });
    for (std::thread& t : pool)
        t.join();
}

} // namespace tilescope::chunks
