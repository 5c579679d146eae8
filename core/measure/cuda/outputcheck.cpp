#include "measure/cuda/outputcheck.h"

#include "base/textformat.h"
#include "measure/cuda/argumentdata.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace tilescope {

namespace {

std::int64_t valuesIn(const ArgumentSpec& arg, std::size_t bytes) {
    return std::min<std::int64_t>(arg.values(), static_cast<std::int64_t>(bytes / elementSize(arg.element)));
}

bool allBytes(const unsigned char* p, std::size_t size, unsigned char byte) {
    for (std::size_t k = 0; k < size; ++k) {
        if (p[k] != byte)
            return false;
    }
    return true;
}

std::string elementsText(std::int64_t n) {
    return formatCount(static_cast<double>(n)) + (n == 1 ? " element" : " elements");
}

std::string valueText(double v) {
    if (std::isnan(v))
        return "nan";
    return v > 0 ? "inf" : "-inf";
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
    const std::size_t size = elementSize(arg.element);
    const std::int64_t n = valuesIn(arg, output.size());
    ElementMask mask(arg.values());
    const unsigned char* p = output.data();
    for (std::int64_t i = 0; i < n; ++i) {
        if (!allBytes(p + static_cast<std::size_t>(i) * size, size, canary))
            mask.set(i);
    }
    return mask;
}

ElementMask changedFrom(const ArgumentSpec& arg, std::span<const unsigned char> output,
                        std::span<const unsigned char> initial) {
    const std::size_t size = elementSize(arg.element);
    const std::int64_t n = std::min(valuesIn(arg, output.size()), valuesIn(arg, initial.size()));
    ElementMask mask(arg.values());
    const unsigned char* o = output.data();
    const unsigned char* r = initial.data();
    // Whole equal stretches are skipped 4 KiB at a time: an output is mostly changed or mostly not.
    constexpr std::int64_t kStretch = 4096;
    const std::int64_t stretch = std::max<std::int64_t>(1, kStretch / static_cast<std::int64_t>(size));
    for (std::int64_t begin = 0; begin < n; begin += stretch) {
        const std::int64_t end = std::min(n, begin + stretch);
        const std::size_t from = static_cast<std::size_t>(begin) * size;
        const std::size_t bytes = static_cast<std::size_t>(end - begin) * size;
        if (std::memcmp(o + from, r + from, bytes) == 0)
            continue;
        for (std::int64_t i = begin; i < end; ++i) {
            const std::size_t at = static_cast<std::size_t>(i) * size;
            if (std::memcmp(o + at, r + at, size) != 0)
                mask.set(i);
        }
    }
    return mask;
}

ElementMask changedBeyond(const ArgumentSpec& arg, std::span<const unsigned char> output,
                          std::span<const unsigned char> initial, double tolerance) {
    const std::size_t size = elementSize(arg.element);
    const std::int64_t n = std::min(valuesIn(arg, output.size()), valuesIn(arg, initial.size()));
    const bool floating = isFloatingPoint(arg.element);
    const unsigned char* o = output.data();
    const unsigned char* r = initial.data();
    double scale = 0;
    if (floating) {
        for (std::int64_t i = 0; i < n; ++i) {
            const double v = decodeValue(arg.element, o + static_cast<std::size_t>(i) * size);
            if (std::isfinite(v))
                scale = std::max(scale, std::fabs(v));
        }
    }
    if (!(scale > 0))
        scale = 1;
    const double limit = floating ? tolerance * scale : 0;
    ElementMask mask(arg.values());
    for (std::int64_t i = 0; i < n; ++i) {
        const std::size_t at = static_cast<std::size_t>(i) * size;
        if (std::memcmp(o + at, r + at, size) == 0)
            continue;
        const double ov = decodeValue(arg.element, o + at);
        const double iv = decodeValue(arg.element, r + at);
        if (!std::isfinite(ov) || !std::isfinite(iv)) {
            if (!(std::isnan(ov) && std::isnan(iv)) && ov != iv)
                mask.set(i);
            continue;
        }
        if (std::fabs(ov - iv) > limit || (!floating && ov != iv))
            mask.set(i);
    }
    return mask;
}

ElementMask finiteValues(const ArgumentSpec& arg, std::span<const unsigned char> output) {
    const std::int64_t n = valuesIn(arg, output.size());
    ElementMask mask(arg.values());
    const bool floating = isFloatingPoint(arg.element);
    const std::size_t size = elementSize(arg.element);
    for (std::int64_t i = 0; i < n; ++i) {
        if (!floating || std::isfinite(decodeValue(arg.element, output.data() + static_cast<std::size_t>(i) * size)))
            mask.set(i);
    }
    return mask;
}

ElementGap missingFrom(const ElementMask& wanted, const ElementMask& have) {
    ElementGap gap;
    const std::int64_t n = std::min(wanted.size(), have.size());
    for (std::int64_t i = 0; i < n; ++i) {
        if (wanted.test(i) && !have.test(i)) {
            if (gap.first < 0)
                gap.first = i;
            ++gap.count;
        }
    }
    // Elements past the end of a smaller mask cannot have been written.
    for (std::int64_t i = n; i < wanted.size(); ++i) {
        if (wanted.test(i)) {
            if (gap.first < 0)
                gap.first = i;
            ++gap.count;
        }
    }
    return gap;
}

ElementGap unsetIn(const ElementMask& mask) {
    ElementGap gap;
    for (std::int64_t i = 0; i < mask.size(); ++i) {
        if (!mask.test(i)) {
            if (gap.first < 0)
                gap.first = i;
            ++gap.count;
        }
    }
    return gap;
}

NonFinite nonFiniteValues(const ArgumentSpec& arg, std::span<const unsigned char> output, const ElementMask* where) {
    NonFinite found;
    if (!isFloatingPoint(arg.element))
        return found;
    const std::size_t size = elementSize(arg.element);
    const std::int64_t n = valuesIn(arg, output.size());
    for (std::int64_t i = 0; i < n; ++i) {
        if (where && (i >= where->size() || !where->test(i)))
            continue;
        const double v = decodeValue(arg.element, output.data() + static_cast<std::size_t>(i) * size);
        if (std::isfinite(v))
            continue;
        if (found.first < 0) {
            found.first = i;
            found.firstValue = v;
        }
        ++found.count;
    }
    return found;
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
