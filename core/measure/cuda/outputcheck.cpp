#include "measure/cuda/outputcheck.h"

#include "base/textformat.h"
#include "measure/cuda/argumentdata.h"
#include "measure/cuda/chunks.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace tilescope {

namespace {

// An output is checked on every config, so these run at the speed of memory: whole 64-bit words
// of a mask at a time, elements read as unsigned integers of their size, chunks on several
// threads (chunks::forEach; a chunk's bits are whole words, so threads never share one).

std::int64_t valuesIn(const ArgumentSpec& arg, std::size_t bytes) {
    return std::min<std::int64_t>(arg.values(), static_cast<std::int64_t>(bytes / elementSize(arg.element)));
}

template <typename U>
U loadAt(const unsigned char* p, std::int64_t i) {
    U v;
    std::memcpy(&v, p + static_cast<std::size_t>(i) * sizeof(U), sizeof(U));
    return v;
}

// Sets bit i of `words` for each i in [begin, end) where has(i); begin is a multiple of 64.
template <typename Has>
void fillBits(std::uint64_t* words, std::int64_t begin, std::int64_t end, const Has& has) {
    std::int64_t base = begin;
    // Whole words with a fixed trip count, which the compiler unrolls and vectorises.
    for (; base + 64 <= end; base += 64) {
        std::uint64_t bits = 0;
        for (int j = 0; j < 64; ++j)
            bits |= static_cast<std::uint64_t>(has(base + j)) << j;
        words[base >> 6] = bits;
    }
    if (base < end) {
        std::uint64_t bits = 0;
        for (std::int64_t i = base; i < end; ++i)
            bits |= static_cast<std::uint64_t>(has(i)) << (i - base);
        words[base >> 6] = bits;
    }
}

// fillBits over [0, n) for an element of `size` bytes read as an unsigned integer U of that size.
template <typename Visit>
void byElementSize(std::size_t size, const Visit& visit) {
    switch (size) {
    case 1:
        visit(std::uint8_t{});
        return;
    case 2:
        visit(std::uint16_t{});
        return;
    case 4:
        visit(std::uint32_t{});
        return;
    default:
        visit(std::uint64_t{});
        return;
    }
}

// Calls visit(finite) with `finite(bits)`, whether the bits of a value of `type` are finite: the
// exponent not all ones (for float8_e4m3, which has no infinity, not the NaN pattern); integers
// always. Chosen once per output, so the test inlines into the loops.
template <typename Visit>
void byFiniteTest(ElementType type, const Visit& visit) {
    switch (type) {
    case ElementType::Float:
        return visit([](std::uint64_t b) { return (b & 0x7F800000u) != 0x7F800000u; });
    case ElementType::Double:
        return visit([](std::uint64_t b) { return (b & 0x7FF0000000000000ull) != 0x7FF0000000000000ull; });
    case ElementType::Half:
        return visit([](std::uint64_t b) { return (b & 0x7C00u) != 0x7C00u; });
    case ElementType::BFloat16:
        return visit([](std::uint64_t b) { return (b & 0x7F80u) != 0x7F80u; });
    case ElementType::Float8E4M3:
        return visit([](std::uint64_t b) { return (b & 0x7Fu) != 0x7Fu; });
    case ElementType::Float8E5M2:
        return visit([](std::uint64_t b) { return (b & 0x7Cu) != 0x7Cu; });
    default:
        return visit([](std::uint64_t) { return true; });
    }
}

std::string elementsText(std::int64_t n) {
    return formatCount(static_cast<double>(n)) + (n == 1 ? " element" : " elements");
}

std::string valueText(double v) {
    if (std::isnan(v))
        return "nan";
    return v > 0 ? "inf" : "-inf";
}

// The lowest set bit of the words' and-not over [0, words), and how many: wanted & ~have.
ElementGap gapOf(const std::uint64_t* wanted, const std::uint64_t* have, std::size_t words) {
    ElementGap gap;
    for (std::size_t k = 0; k < words; ++k) {
        const std::uint64_t x = wanted[k] & ~(have ? have[k] : 0);
        if (x == 0)
            continue;
        gap.count += std::popcount(x);
        if (gap.first < 0)
            gap.first = static_cast<std::int64_t>(k) * 64 + std::countr_zero(x);
    }
    return gap;
}

// A mask of `values` elements, every one set.
ElementMask fullMask(std::int64_t values) {
    ElementMask all(values);
    for (std::size_t k = 0; k < all.wordCount(); ++k)
        all.words()[k] = ~std::uint64_t{0};
    if (const std::int64_t tail = values % 64; tail != 0 && all.wordCount() > 0)
        all.words()[all.wordCount() - 1] = (std::uint64_t{1} << tail) - 1;
    return all;
}

} // namespace

ElementMask::ElementMask(std::int64_t values)
    : m_bits(static_cast<std::size_t>((std::max<std::int64_t>(0, values) + 63) / 64), 0)
    , m_values(std::max<std::int64_t>(0, values)) {}

std::int64_t ElementMask::count() const {
    std::int64_t n = 0;
    for (const std::uint64_t word : m_bits)
        n += std::popcount(word);
    return n;
}

void ElementMask::unite(const ElementMask& other) {
    const std::size_t n = std::min(m_bits.size(), other.m_bits.size());
    for (std::size_t k = 0; k < n; ++k)
        m_bits[k] |= other.m_bits[k];
}

void ElementMask::intersect(const ElementMask& other) {
    for (std::size_t k = 0; k < m_bits.size(); ++k)
        m_bits[k] &= k < other.m_bits.size() ? other.m_bits[k] : 0;
}

ElementMask writtenOver(const ArgumentSpec& arg, std::span<const unsigned char> output, unsigned char canary) {
    const std::int64_t n = valuesIn(arg, output.size());
    ElementMask mask(arg.values());
    byElementSize(elementSize(arg.element), [&](auto word) {
        using U = decltype(word);
        U pattern;
        std::memset(&pattern, canary, sizeof pattern);
        chunks::forEach(n, [&](std::size_t, std::int64_t begin, std::int64_t end) {
            fillBits(mask.words(), begin, end, [&](std::int64_t i) { return loadAt<U>(output.data(), i) != pattern; });
        });
    });
    return mask;
}

ElementMask changedFrom(const ArgumentSpec& arg, std::span<const unsigned char> output,
                        std::span<const unsigned char> initial) {
    const std::size_t size = elementSize(arg.element);
    const std::int64_t n = std::min(valuesIn(arg, output.size()), valuesIn(arg, initial.size()));
    ElementMask mask(arg.values());
    byElementSize(size, [&](auto word) {
        using U = decltype(word);
        chunks::forEach(n, [&](std::size_t, std::int64_t begin, std::int64_t end) {
            // Most of an output is changed or most is not: an unchanged stretch costs one memcmp.
            constexpr std::int64_t kStretch = 1024;
            for (std::int64_t from = begin; from < end; from += kStretch) {
                const std::int64_t to = std::min(end, from + kStretch);
                const std::size_t at = static_cast<std::size_t>(from) * size;
                if (std::memcmp(output.data() + at, initial.data() + at, static_cast<std::size_t>(to - from) * size) ==
                    0)
                    continue;
                fillBits(mask.words(), from, to,
                         [&](std::int64_t i) { return loadAt<U>(output.data(), i) != loadAt<U>(initial.data(), i); });
            }
        });
    });
    return mask;
}

ElementMask changedBeyond(const ArgumentSpec& arg, std::span<const unsigned char> output,
                          std::span<const unsigned char> initial, double tolerance) {
    const std::size_t size = elementSize(arg.element);
    const std::int64_t n = std::min(valuesIn(arg, output.size()), valuesIn(arg, initial.size()));
    const bool floating = isFloatingPoint(arg.element);
    const unsigned char* o = output.data();
    const unsigned char* r = initial.data();
    auto at = [&](const unsigned char* p, std::int64_t i) {
        return decodeValue(arg.element, p + static_cast<std::size_t>(i) * size);
    };
    std::vector<double> scales(chunks::count(n), 0.0);
    if (floating) {
        chunks::forEach(n, [&](std::size_t c, std::int64_t begin, std::int64_t end) {
            for (std::int64_t i = begin; i < end; ++i)
                if (const double v = at(o, i); std::isfinite(v))
                    scales[c] = std::max(scales[c], std::fabs(v));
        });
    }
    double scale = 0;
    for (const double m : scales)
        scale = std::max(scale, m);
    if (!(scale > 0))
        scale = 1;
    const double limit = floating ? tolerance * scale : 0;
    ElementMask mask(arg.values());
    chunks::forEach(n, [&](std::size_t, std::int64_t begin, std::int64_t end) {
        fillBits(mask.words(), begin, end, [&](std::int64_t i) {
            const std::size_t byte = static_cast<std::size_t>(i) * size;
            if (std::memcmp(o + byte, r + byte, size) == 0)
                return false;
            const double ov = at(o, i);
            const double iv = at(r, i);
            if (!std::isfinite(ov) || !std::isfinite(iv))
                return !(std::isnan(ov) && std::isnan(iv)) && ov != iv;
            return !floating || std::fabs(ov - iv) > limit;
        });
    });
    return mask;
}

ElementMask finiteValues(const ArgumentSpec& arg, std::span<const unsigned char> output) {
    const std::int64_t n = valuesIn(arg, output.size());
    ElementMask mask(arg.values());
    byElementSize(elementSize(arg.element), [&](auto word) {
        using U = decltype(word);
        byFiniteTest(arg.element, [&](const auto& finite) {
            chunks::forEach(n, [&](std::size_t, std::int64_t begin, std::int64_t end) {
                fillBits(mask.words(), begin, end, [&](std::int64_t i) { return finite(loadAt<U>(output.data(), i)); });
            });
        });
    });
    return mask;
}

ElementGap missingFrom(const ElementMask& wanted, const ElementMask& have) {
    const std::size_t common = std::min(wanted.wordCount(), have.wordCount());
    ElementGap gap = gapOf(wanted.words(), have.words(), common);
    // Elements past the end of a smaller mask cannot have been written.
    if (wanted.wordCount() > common) {
        const ElementGap rest = gapOf(wanted.words() + common, nullptr, wanted.wordCount() - common);
        if (gap.first < 0 && rest.first >= 0)
            gap.first = rest.first + static_cast<std::int64_t>(common) * 64;
        gap.count += rest.count;
    }
    return gap;
}

ElementGap unsetIn(const ElementMask& mask) {
    return missingFrom(fullMask(mask.size()), mask);
}

std::int64_t lastSetIn(const ElementMask& mask) {
    for (std::size_t k = mask.wordCount(); k-- > 0;) {
        if (const std::uint64_t w = mask.words()[k]; w != 0)
            return static_cast<std::int64_t>(k) * 64 + 63 - std::countl_zero(w);
    }
    return -1;
}

NonFinite nonFiniteValues(const ArgumentSpec& arg, std::span<const unsigned char> output, const ElementMask* where) {
    NonFinite found;
    if (!isFloatingPoint(arg.element))
        return found;
    // Where the mask is set and the value is not finite: two passes over whole words.
    const ElementMask finite = finiteValues(arg, output);
    const std::size_t words = where ? std::min(where->wordCount(), finite.wordCount()) : finite.wordCount();
    const ElementMask all = where ? ElementMask() : fullMask(finite.size());
    if (!where)
        where = &all;
    const ElementGap bad = gapOf(where->words(), finite.words(), words);
    found.count = bad.count;
    found.first = bad.first;
    if (bad.first >= 0)
        found.firstValue =
            decodeValue(arg.element, output.data() + static_cast<std::size_t>(bad.first) * elementSize(arg.element));
    return found;
}

OutputScan scanOutput(const ArgumentSpec& arg, std::span<const unsigned char> output, unsigned char canary,
                      std::span<const unsigned char> initial, const ElementMask& refWritten,
                      const ElementMask& refFinite) {
    const std::size_t size = elementSize(arg.element);
    std::int64_t n = valuesIn(arg, output.size());
    if (!initial.empty())
        n = std::min(n, valuesIn(arg, initial.size()));
    n = std::min({n, refWritten.size(), refFinite.size()});
    struct Part {
        ElementGap unwritten;
        std::int64_t extra = 0;
        ElementGap nonFinite;
        std::int64_t lastWritten = -1;
    };
    std::vector<Part> parts(chunks::count(n));
    byElementSize(size, [&](auto word) {
        using U = decltype(word);
        U pattern;
        std::memset(&pattern, canary, sizeof pattern);
        byFiniteTest(arg.element, [&](const auto& finite) {
            chunks::forEach(n, [&](std::size_t c, std::int64_t begin, std::int64_t end) {
                Part& part = parts[c];
                const unsigned char* out = output.data();
                const unsigned char* init = initial.data();
                for (std::int64_t base = begin; base < end; base += 64) {
                    const std::int64_t stop = std::min(end, base + 64);
                    std::uint64_t written = 0;
                    std::uint64_t finiteBits = 0;
                    for (std::int64_t i = base; i < stop; ++i) {
                        const U v = loadAt<U>(out, i);
                        const bool w = init ? v != loadAt<U>(init, i) : v != pattern;
                        written |= static_cast<std::uint64_t>(w) << (i - base);
                        finiteBits |= static_cast<std::uint64_t>(finite(v)) << (i - base);
                    }
                    const std::size_t k = static_cast<std::size_t>(base >> 6);
                    const std::uint64_t want = refWritten.words()[k];
                    if (const std::uint64_t miss = want & ~written; miss != 0) {
                        if (part.unwritten.first < 0)
                            part.unwritten.first = base + std::countr_zero(miss);
                        part.unwritten.count += std::popcount(miss);
                    }
                    part.extra += std::popcount(written & ~want);
                    if (written != 0)
                        part.lastWritten = base + 63 - std::countl_zero(written);
                    if (const std::uint64_t bad = refFinite.words()[k] & written & ~finiteBits; bad != 0) {
                        if (part.nonFinite.first < 0)
                            part.nonFinite.first = base + std::countr_zero(bad);
                        part.nonFinite.count += std::popcount(bad);
                    }
                }
            });
        });
    });
    OutputScan scan;
    for (const Part& part : parts) {
        if (scan.unwritten.first < 0)
            scan.unwritten.first = part.unwritten.first;
        scan.unwritten.count += part.unwritten.count;
        scan.extra += part.extra;
        if (scan.nonFinite.first < 0)
            scan.nonFinite.first = part.nonFinite.first;
        scan.nonFinite.count += part.nonFinite.count;
        scan.lastWritten = std::max(scan.lastWritten, part.lastWritten);
    }
    // What the reference wrote past the end of a shorter output was never written.
    if (n < refWritten.size()) {
        for (std::int64_t i = n; i < refWritten.size(); ++i) {
            if (!refWritten.test(i))
                continue;
            if (scan.unwritten.first < 0)
                scan.unwritten.first = i;
            ++scan.unwritten.count;
        }
    }
    if (scan.nonFinite.first >= 0)
        scan.nonFinite.firstValue =
            decodeValue(arg.element, output.data() + static_cast<std::size_t>(scan.nonFinite.first) * size);
    return scan;
}

std::string unwrittenMessage(const ArgumentSpec& arg, const ElementGap& gap, bool canaried) {
    const std::string of = formatCount(static_cast<double>(gap.count)) + " of " + elementsText(arg.values());
    const std::string first = ", the first at " + formatCount(static_cast<double>(gap.first));
    if (canaried)
        return arg.label() + ": " + of + " never written" + first;
    return arg.label() + ": " + of + " keep their initial contents where the reference config changed them" + first +
           " (never written?)";
}

std::string nonFiniteMessage(const ArgumentSpec& arg, const NonFinite& found, bool againstReference) {
    return arg.label() + ": " + elementsText(found.count) + (found.count == 1 ? " is" : " are") + " NaN or Inf" +
           (againstReference ? " where the reference config's are finite" : "") + ", the first at " +
           formatCount(static_cast<double>(found.first)) + " (" + valueText(found.firstValue) + ")";
}

} // namespace tilescope
