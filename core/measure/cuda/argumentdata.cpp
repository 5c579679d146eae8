#include "measure/cuda/argumentdata.h"

#include "base/error.h"
#include "base/textformat.h"
#include "measure/cuda/chunks.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <thread>

namespace tilescope {

namespace {

constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ull;

// splitmix64's output function: the i-th value of the stream seeded with s is mix(s + (i + 1) * gamma).
std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

std::uint64_t randomAt(std::uint64_t seed, std::uint64_t i) {
    return mix(seed + (i + 1) * kGamma);
}

template <typename T>
void put(unsigned char* data, std::int64_t i, T value) {
    std::memcpy(data + static_cast<std::size_t>(i) * sizeof(T), &value, sizeof(T));
}

/// One value of `type` as bytes (value must fit).
void encode(ElementType type, double value, unsigned char* out) {
    switch (type) {
    case ElementType::Bool:
        out[0] = value != 0 ? 1 : 0;
        return;
    case ElementType::Int8:
        put(out, 0, static_cast<std::int8_t>(value));
        return;
    case ElementType::UInt8:
        put(out, 0, static_cast<std::uint8_t>(value));
        return;
    case ElementType::Int16:
        put(out, 0, static_cast<std::int16_t>(value));
        return;
    case ElementType::UInt16:
        put(out, 0, static_cast<std::uint16_t>(value));
        return;
    case ElementType::Int32:
        put(out, 0, static_cast<std::int32_t>(value));
        return;
    case ElementType::UInt32:
        put(out, 0, static_cast<std::uint32_t>(value));
        return;
    case ElementType::Int64:
        put(out, 0, static_cast<std::int64_t>(value));
        return;
    case ElementType::UInt64:
        put(out, 0, static_cast<std::uint64_t>(value));
        return;
    case ElementType::Half:
        put(out, 0, halfFromFloat(static_cast<float>(value)));
        return;
    case ElementType::BFloat16:
        put(out, 0, bfloat16FromFloat(static_cast<float>(value)));
        return;
    case ElementType::Float:
        put(out, 0, static_cast<float>(value));
        return;
    case ElementType::Double:
        put(out, 0, value);
        return;
    case ElementType::Float8E4M3:
        put(out, 0, float8E4M3FromFloat(static_cast<float>(value)));
        return;
    case ElementType::Float8E5M2:
        put(out, 0, float8E5M2FromFloat(static_cast<float>(value)));
        return;
    }
}

/// Uniform random values for a Random fill (see initialContents).
void fillRandom(ElementType type, std::uint64_t seed, std::int64_t n, unsigned char* data) {
    const auto count = static_cast<std::uint64_t>(n);
    switch (type) {
    case ElementType::Bool:
        for (std::uint64_t i = 0; i < count; ++i)
            data[i] = static_cast<unsigned char>(randomAt(seed, i) >> 63);
        return;
    case ElementType::Int8:
        for (std::uint64_t i = 0; i < count; ++i)
            put(data, static_cast<std::int64_t>(i),
                static_cast<std::int8_t>(static_cast<int>(randomAt(seed, i) >> 60) - 8));
        return;
    case ElementType::UInt8:
        for (std::uint64_t i = 0; i < count; ++i)
            put(data, static_cast<std::int64_t>(i), static_cast<std::uint8_t>(randomAt(seed, i) >> 61));
        return;
    case ElementType::Int16:
        for (std::uint64_t i = 0; i < count; ++i)
            put(data, static_cast<std::int64_t>(i),
                static_cast<std::int16_t>(static_cast<int>(randomAt(seed, i) >> 60) - 8));
        return;
    case ElementType::UInt16:
        for (std::uint64_t i = 0; i < count; ++i)
            put(data, static_cast<std::int64_t>(i), static_cast<std::uint16_t>(randomAt(seed, i) >> 61));
        return;
    case ElementType::Int32:
        for (std::uint64_t i = 0; i < count; ++i)
            put(data, static_cast<std::int64_t>(i), static_cast<std::int32_t>(randomAt(seed, i) >> 60) - 8);
        return;
    case ElementType::UInt32:
        for (std::uint64_t i = 0; i < count; ++i)
            put(data, static_cast<std::int64_t>(i), static_cast<std::uint32_t>(randomAt(seed, i) >> 61));
        return;
    case ElementType::Int64:
        for (std::uint64_t i = 0; i < count; ++i)
            put(data, static_cast<std::int64_t>(i), static_cast<std::int64_t>(randomAt(seed, i) >> 60) - 8);
        return;
    case ElementType::UInt64:
        for (std::uint64_t i = 0; i < count; ++i)
            put(data, static_cast<std::int64_t>(i), randomAt(seed, i) >> 61);
        return;
    case ElementType::Half:
        // 11 bits: k * 2^-10 - 1, exact in binary16.
        for (std::uint64_t i = 0; i < count; ++i) {
            const double v = static_cast<double>(randomAt(seed, i) >> 53) * 0x1p-10 - 1.0;
            put(data, static_cast<std::int64_t>(i), halfFromFloat(static_cast<float>(v)));
        }
        return;
    case ElementType::BFloat16:
        // 8 bits: k * 2^-7 - 1, exact in bfloat16.
        for (std::uint64_t i = 0; i < count; ++i) {
            const double v = static_cast<double>(randomAt(seed, i) >> 56) * 0x1p-7 - 1.0;
            put(data, static_cast<std::int64_t>(i), bfloat16FromFloat(static_cast<float>(v)));
        }
        return;
    case ElementType::Float:
        // 24 bits: k * 2^-23 - 1, exact in float (and never rounded up to 1).
        for (std::uint64_t i = 0; i < count; ++i) {
            const double v = static_cast<double>(randomAt(seed, i) >> 40) * 0x1p-23 - 1.0;
            put(data, static_cast<std::int64_t>(i), static_cast<float>(v));
        }
        return;
    case ElementType::Double:
        for (std::uint64_t i = 0; i < count; ++i) {
            const double v = static_cast<double>(randomAt(seed, i) >> 11) * 0x1p-52 - 1.0;
            put(data, static_cast<std::int64_t>(i), v);
        }
        return;
    case ElementType::Float8E4M3:
        // 4 bits: k * 2^-3 - 1, exact in e4m3.
        for (std::uint64_t i = 0; i < count; ++i) {
            const double v = static_cast<double>(randomAt(seed, i) >> 60) * 0x1p-3 - 1.0;
            put(data, static_cast<std::int64_t>(i), float8E4M3FromFloat(static_cast<float>(v)));
        }
        return;
    case ElementType::Float8E5M2:
        // 3 bits: k * 2^-2 - 1, exact in e5m2.
        for (std::uint64_t i = 0; i < count; ++i) {
            const double v = static_cast<double>(randomAt(seed, i) >> 61) * 0x1p-2 - 1.0;
            put(data, static_cast<std::int64_t>(i), float8E5M2FromFloat(static_cast<float>(v)));
        }
        return;
    }
}

std::string formatNumber(double v, bool precise) {
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char text[64];
    std::snprintf(text, sizeof text, precise ? "%.17g" : "%.9g", v);
    return text;
}

std::string formatShort(double v) {
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", v);
    return text;
}

template <typename T>
double decodeNative(const unsigned char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
}

double decodeBool(const unsigned char* p) {
    return *p != 0 ? 1.0 : 0.0;
}

double decodeHalf(const unsigned char* p) {
    std::uint16_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return floatFromHalf(bits);
}

double decodeBfloat16(const unsigned char* p) {
    std::uint16_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return floatFromBfloat16(bits);
}

double decodeFloat8E4M3(const unsigned char* p) {
    return floatFromFloat8E4M3(*p);
}

double decodeFloat8E5M2(const unsigned char* p) {
    return floatFromFloat8E5M2(*p);
}

bool allBytesAre(const unsigned char* p, std::size_t size, unsigned char byte) {
    for (std::size_t k = 0; k < size; ++k) {
        if (p[k] != byte)
            return false;
    }
    return true;
}

bool allOnes(const unsigned char* p, std::size_t size) {
    for (std::size_t k = 0; k < size; ++k) {
        if (p[k] != 0xFF)
            return false;
    }
    return true;
}

std::string describeElement(const ArgumentSpec& arg, std::int64_t i) {
    std::string text = "element " + std::to_string(i);
    if (arg.lanes > 1)
        text += " (component " + std::to_string(i % arg.lanes) + " of " + arg.typeName + " " +
                std::to_string(i / arg.lanes) + ")";
    return text;
}

using chunks::forEach;

std::size_t chunksOf(std::int64_t n) {
    return chunks::count(n);
}

template <std::size_t Size, double (*Decode)(const unsigned char*)>
Verdict compareTyped(const ArgumentSpec& arg, const unsigned char* out, const unsigned char* ref, std::int64_t n,
                     Validation method, double tolerance, const WriteCheck* check) {
    const bool floating = isFloatingPoint(arg.element);
    const bool precise = arg.element == ElementType::Double || !floating;
    auto value = [&](const unsigned char* p) { return formatNumber(Decode(p), precise); };

    // The output's scale: its largest finite magnitude (1 for an all-zero reference). Not
    // max(1, ...): outputs far below 1 (a softmax row of 32768 values is ~3e-5 each) would then
    // pass even when every value is wrong by a factor of two.
    // Large outputs (a softmax of 8192 x 8192) are compared in chunks on several threads.
    std::vector<double> scales(chunksOf(n), 0.0);
    if (method == Validation::Normalized) {
        forEach(n, [&](std::size_t c, std::int64_t begin, std::int64_t end) {
            double m = 0;
            for (std::int64_t i = begin; i < end; ++i) {
                const double r = Decode(ref + static_cast<std::size_t>(i) * Size);
                if (std::isfinite(r))
                    m = std::max(m, std::fabs(r));
            }
            scales[c] = m;
        });
    }
    double scale = 0;
    for (const double m : scales)
        scale = std::max(scale, m);
    if (!(scale > 0))
        scale = 1;

    struct Chunk {
        std::int64_t nonFiniteAt = -1; ///< the first element where one side is not finite and they differ
        double worst = 0;
        std::int64_t worstAt = -1; ///< the first element of the chunk with its worst error
        double sum = 0;
        std::int64_t mismatched = 0;
        ElementGap unwritten;
        std::int64_t extra = 0;
        ElementGap nonFinite;
    };
    // With a write check, an element the reference changed beyond rounding (from the initial
    // contents of a ReadWrite output): one this config left as it was counts as never written.
    const unsigned char* initial =
        check && !check->canaried && !check->initial.empty() ? check->initial.data() : nullptr;
    const double changeLimit = isFloatingPoint(arg.element) ? tolerance * scale : 0;
    auto note = [](ElementGap& gap, std::int64_t i) {
        if (gap.first < 0)
            gap.first = i;
        ++gap.count;
    };
    std::vector<Chunk> chunks(chunksOf(n));
    forEach(n, [&](std::size_t c, std::int64_t begin, std::int64_t end) {
        Chunk& k = chunks[c];
        for (std::int64_t i = begin; i < end; ++i) {
            const unsigned char* o = out + static_cast<std::size_t>(i) * Size;
            const unsigned char* r = ref + static_cast<std::size_t>(i) * Size;
            if (std::memcmp(o, r, Size) == 0)
                continue;
            if (check && check->canaried) {
                // Over the canary: an element still holding it was never written; one the reference
                // left holding it (a Partial output) has nothing to be compared with.
                if (allBytesAre(o, Size, check->canary)) {
                    note(k.unwritten, i);
                    continue;
                }
                if (allBytesAre(r, Size, check->canary)) {
                    ++k.extra;
                    continue;
                }
            }
            const double ov = Decode(o);
            const double rv = Decode(r);
            if (initial) {
                const unsigned char* b = initial + static_cast<std::size_t>(i) * Size;
                if (std::memcmp(o, b, Size) == 0) {
                    const double bv = Decode(b);
                    const bool changed = !std::isfinite(rv) || !std::isfinite(bv)
                                             ? !(std::isnan(rv) && std::isnan(bv)) && rv != bv
                                             : std::fabs(rv - bv) > changeLimit || (changeLimit == 0 && rv != bv);
                    if (changed) {
                        note(k.unwritten, i);
                        continue;
                    }
                }
            }
            if (!std::isfinite(ov) || !std::isfinite(rv)) {
                if ((std::isnan(ov) && std::isnan(rv)) || ov == rv)
                    continue;
                if (!std::isfinite(ov) && std::isfinite(rv))
                    note(k.nonFinite, i);
                if (k.nonFiniteAt < 0)
                    k.nonFiniteAt = i;
                ++k.mismatched;
                continue;
            }
            double diff = std::fabs(ov - rv);
            // Integers whose bits differ differ by 1 or more (a double may round a 64-bit difference away).
            if (!floating)
                diff = std::max(diff, 1.0);
            double e = diff;
            switch (method) {
            case Validation::Normalized:
                e = diff / scale;
                break;
            case Validation::SideBySideRelative:
                e = rv != 0 ? diff / std::fabs(rv) : diff;
                break;
            case Validation::AbsoluteDifference:
                k.sum += diff;
                break;
            case Validation::SideBySide:
                break;
            }
            if (method == Validation::AbsoluteDifference ? diff > 0 : e > tolerance)
                ++k.mismatched;
            if (e > k.worst) {
                k.worst = e;
                k.worstAt = i;
            }
        }
    });

    Verdict v;
    double worst = 0;
    std::int64_t worstAt = -1;
    double sum = 0;
    for (const Chunk& k : chunks) {
        v.mismatched += k.mismatched;
        v.extra += k.extra;
        for (auto [into, from] : {std::pair{&v.unwritten, &k.unwritten}, std::pair{&v.nonFinite, &k.nonFinite}}) {
            if (into->first < 0)
                into->first = from->first;
            into->count += from->count;
        }
    }
    const std::string share =
        " (" + formatCount(static_cast<double>(v.mismatched)) + " of " + formatCount(static_cast<double>(n)) +
        (method == Validation::AbsoluteDifference ? " values differ)" : " values beyond the tolerance)");
    for (const Chunk& k : chunks) {
        if (k.nonFiniteAt >= 0) {
            const std::int64_t i = k.nonFiniteAt;
            const unsigned char* o = out + static_cast<std::size_t>(i) * Size;
            const unsigned char* r = ref + static_cast<std::size_t>(i) * Size;
            v.ok = false;
            v.error = std::numeric_limits<double>::infinity();
            if (floating && allOnes(o, Size))
                v.message = arg.label() + ": " + describeElement(arg, i) +
                            " was never written (still the NaN poison), expected " + value(r);
            else
                v.message = arg.label() + ": " + describeElement(arg, i) + " is " + value(o) + ", expected " + value(r);
            v.message += share;
            return v;
        }
        sum += k.sum;
        if (k.worst > worst) {
            worst = k.worst;
            worstAt = k.worstAt;
        }
    }
    v.error = method == Validation::AbsoluteDifference ? sum : worst;
    v.ok = v.error <= tolerance;
    if (v.ok || worstAt < 0)
        return v;

    const unsigned char* o = out + static_cast<std::size_t>(worstAt) * Size;
    const unsigned char* r = ref + static_cast<std::size_t>(worstAt) * Size;
    const std::string at = describeElement(arg, worstAt) + " is " + value(o) + ", expected " + value(r);
    std::string poison;
    if (!floating && allOnes(o, Size))
        poison = "; all its bits are set, as the worker's poison before the launch: never written?";
    switch (method) {
    case Validation::Normalized:
        v.message = arg.label() + ": " + at + " (error " + formatShort(worst) + " of the output's scale " +
                    formatShort(scale) + ", tolerance " + formatShort(tolerance) + " for " + arg.typeName + poison +
                    ")";
        break;
    case Validation::SideBySide:
        v.message = arg.label() + ": " + at + " (difference " + formatShort(worst) + ", threshold " +
                    formatShort(tolerance) + poison + ")";
        break;
    case Validation::SideBySideRelative:
        v.message = arg.label() + ": " + at + " (relative difference " + formatShort(worst) + ", threshold " +
                    formatShort(tolerance) + poison + ")";
        break;
    case Validation::AbsoluteDifference:
        v.message = arg.label() + ": the absolute differences add up to " + formatShort(sum) + ", over the threshold " +
                    formatShort(tolerance) + " (the largest: " + at + poison + ")";
        break;
    }
    v.message += share;
    return v;
}

} // namespace

std::uint64_t fillSeed(const ArgumentSpec& arg, std::uint64_t runSeed) {
    if (arg.randomSeed)
        return static_cast<std::uint64_t>(*arg.randomSeed);
    return mix(mix(runSeed) + (static_cast<std::uint64_t>(arg.index) + 1) * kGamma);
}

std::vector<unsigned char> constantContents(const ArgumentSpec& arg, double value) {
    const auto bytes = static_cast<std::size_t>(arg.bytes());
    std::vector<unsigned char> data(bytes, 0);
    const std::size_t size = elementSize(arg.element);
    if (bytes == 0)
        return data;
    encode(arg.element, value, data.data());
    if (std::all_of(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(size),
                    [](unsigned char b) { return b == 0; }))
        return data; // already all zero
    // Doubling copies: the first value, then the first 1, 2, 4, ... values after themselves.
    std::size_t filled = size;
    while (filled < bytes) {
        const std::size_t chunk = std::min(filled, bytes - filled);
        std::memcpy(data.data() + filled, data.data(), chunk);
        filled += chunk;
    }
    return data;
}

std::vector<unsigned char> readRawFile(const std::filesystem::path& file, std::int64_t bytes,
                                       const std::string& problemFile, const std::string& pointer,
                                       const std::string& what) {
    std::error_code ec;
    const std::filesystem::path shown = std::filesystem::absolute(file, ec).lexically_normal();
    const std::string name = (ec ? file : shown).string();
    const auto size = std::filesystem::file_size(file, ec);
    if (ec)
        throw InputError(problemFile, pointer, what + ": cannot read data file '" + name + "': " + ec.message());
    if (static_cast<std::int64_t>(size) != bytes)
        throw InputError(problemFile, pointer,
                         what + ": data file '" + name + "' holds " + std::to_string(size) + " bytes, expected " +
                             std::to_string(bytes));
    std::vector<unsigned char> data(static_cast<std::size_t>(bytes));
    std::ifstream in(file, std::ios::binary);
    if (!in || !in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes)))
        throw InputError(problemFile, pointer, what + ": cannot read data file '" + name + "'");
    return data;
}

std::vector<unsigned char> initialContents(const ArgumentSpec& arg, std::uint64_t runSeed,
                                           const std::filesystem::path& baseDir, const std::string& problemFile) {
    switch (arg.fill) {
    case FillKind::Constant:
        return constantContents(arg, arg.fillValue);
    case FillKind::Random: {
        std::vector<unsigned char> data(static_cast<std::size_t>(arg.bytes()));
        fillRandom(arg.element, fillSeed(arg, runSeed), arg.values(), data.data());
        return data;
    }
    case FillKind::BinaryRaw: {
        const std::filesystem::path source(arg.dataSource);
        const std::filesystem::path file = source.is_absolute() || baseDir.empty() ? source : baseDir / source;
        return readRawFile(file, arg.bytes(), problemFile,
                           "/KernelSpecification/Arguments/" + std::to_string(arg.index) + "/DataSource", arg.label());
    }
    }
    return {};
}

std::optional<Validation> parseValidation(std::string_view t1Name) {
    if (t1Name.empty())
        return Validation::Normalized;
    if (t1Name == "AbsoluteDifference")
        return Validation::AbsoluteDifference;
    if (t1Name == "SideBySideComparison")
        return Validation::SideBySide;
    if (t1Name == "SideBySideRelativeComparison")
        return Validation::SideBySideRelative;
    return std::nullopt;
}

double defaultTolerance(ElementType type) {
    switch (type) {
    case ElementType::Double:
        return 1e-9;
    case ElementType::Float:
        return 1e-4;
    case ElementType::Half:
        return 1e-2;
    case ElementType::BFloat16:
        return 5e-2;
    case ElementType::Float8E4M3:
        return 0x1p-3;
    case ElementType::Float8E5M2:
        return 0x1p-2;
    default:
        return 0;
    }
}

Verdict compareValues(const ArgumentSpec& arg, std::span<const unsigned char> output,
                      std::span<const unsigned char> reference, Validation method, double tolerance,
                      const WriteCheck* check) {
    const auto bytes = static_cast<std::size_t>(arg.bytes());
    if (output.size() < bytes || reference.size() < bytes) {
        Verdict v;
        v.ok = false;
        v.error = std::numeric_limits<double>::infinity();
        v.message = arg.label() + ": " + std::to_string(std::min(output.size(), reference.size())) +
                    " bytes to compare, expected " + std::to_string(bytes);
        return v;
    }
    if (std::memcmp(output.data(), reference.data(), bytes) == 0)
        return {};
    const unsigned char* o = output.data();
    const unsigned char* r = reference.data();
    const std::int64_t n = arg.values();
    switch (arg.element) {
    case ElementType::Bool:
        return compareTyped<1, decodeBool>(arg, o, r, n, method, tolerance, check);
    case ElementType::Int8:
        return compareTyped<1, decodeNative<std::int8_t>>(arg, o, r, n, method, tolerance, check);
    case ElementType::UInt8:
        return compareTyped<1, decodeNative<std::uint8_t>>(arg, o, r, n, method, tolerance, check);
    case ElementType::Int16:
        return compareTyped<2, decodeNative<std::int16_t>>(arg, o, r, n, method, tolerance, check);
    case ElementType::UInt16:
        return compareTyped<2, decodeNative<std::uint16_t>>(arg, o, r, n, method, tolerance, check);
    case ElementType::Int32:
        return compareTyped<4, decodeNative<std::int32_t>>(arg, o, r, n, method, tolerance, check);
    case ElementType::UInt32:
        return compareTyped<4, decodeNative<std::uint32_t>>(arg, o, r, n, method, tolerance, check);
    case ElementType::Int64:
        return compareTyped<8, decodeNative<std::int64_t>>(arg, o, r, n, method, tolerance, check);
    case ElementType::UInt64:
        return compareTyped<8, decodeNative<std::uint64_t>>(arg, o, r, n, method, tolerance, check);
    case ElementType::Half:
        return compareTyped<2, decodeHalf>(arg, o, r, n, method, tolerance, check);
    case ElementType::BFloat16:
        return compareTyped<2, decodeBfloat16>(arg, o, r, n, method, tolerance, check);
    case ElementType::Float:
        return compareTyped<4, decodeNative<float>>(arg, o, r, n, method, tolerance, check);
    case ElementType::Double:
        return compareTyped<8, decodeNative<double>>(arg, o, r, n, method, tolerance, check);
    case ElementType::Float8E4M3:
        return compareTyped<1, decodeFloat8E4M3>(arg, o, r, n, method, tolerance, check);
    case ElementType::Float8E5M2:
        return compareTyped<1, decodeFloat8E5M2>(arg, o, r, n, method, tolerance, check);
    }
    return {};
}

double decodeValue(ElementType type, const unsigned char* p) {
    switch (type) {
    case ElementType::Bool:
        return decodeBool(p);
    case ElementType::Int8:
        return decodeNative<std::int8_t>(p);
    case ElementType::UInt8:
        return decodeNative<std::uint8_t>(p);
    case ElementType::Int16:
        return decodeNative<std::int16_t>(p);
    case ElementType::UInt16:
        return decodeNative<std::uint16_t>(p);
    case ElementType::Int32:
        return decodeNative<std::int32_t>(p);
    case ElementType::UInt32:
        return decodeNative<std::uint32_t>(p);
    case ElementType::Int64:
        return decodeNative<std::int64_t>(p);
    case ElementType::UInt64:
        return decodeNative<std::uint64_t>(p);
    case ElementType::Half:
        return decodeHalf(p);
    case ElementType::BFloat16:
        return decodeBfloat16(p);
    case ElementType::Float:
        return decodeNative<float>(p);
    case ElementType::Double:
        return decodeNative<double>(p);
    case ElementType::Float8E4M3:
        return decodeFloat8E4M3(p);
    case ElementType::Float8E5M2:
        return decodeFloat8E5M2(p);
    }
    return 0;
}

std::int64_t firstPoisoned(const ArgumentSpec& arg, std::span<const unsigned char> data) {
    if (!isFloatingPoint(arg.element))
        return -1;
    const std::size_t size = elementSize(arg.element);
    const std::int64_t n = std::min<std::int64_t>(arg.values(), static_cast<std::int64_t>(data.size() / size));
    for (std::int64_t i = 0; i < n; ++i) {
        if (allOnes(data.data() + static_cast<std::size_t>(i) * size, size))
            return i;
    }
    return -1;
}

} // namespace tilescope
