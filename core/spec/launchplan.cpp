#include "spec/launchplan.h"

#include "base/error.h"
#include "base/textformat.h"
#include "spec/t1common.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tilescope {

namespace {

// The values an integer type holds, as doubles (bool: 0 and 1); false for floating types.
bool integerRange(ElementType type, double& lo, double& hi) {
    switch (type) {
    case ElementType::Bool:
        lo = 0;
        hi = 1;
        return true;
    case ElementType::Int8:
        lo = -128;
        hi = 127;
        return true;
    case ElementType::UInt8:
        lo = 0;
        hi = 255;
        return true;
    case ElementType::Int16:
        lo = -32768;
        hi = 32767;
        return true;
    case ElementType::UInt16:
        lo = 0;
        hi = 65535;
        return true;
    case ElementType::Int32:
        lo = -2147483648.0;
        hi = 2147483647.0;
        return true;
    case ElementType::UInt32:
        lo = 0;
        hi = 4294967295.0;
        return true;
    case ElementType::Int64:
        // [-2^63, 2^63): the upper bound itself is excluded below.
        lo = -9223372036854775808.0;
        hi = 9223372036854775808.0;
        return true;
    case ElementType::UInt64:
        lo = 0;
        hi = 18446744073709551616.0;
        return true;
    default:
        return false;
    }
}

} // namespace

std::uint16_t halfFromFloat(float value) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t a = x & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) {
        // Infinity, or NaN with its payload's top bits and the quiet bit set.
        if (a == 0x7F800000u)
            return static_cast<std::uint16_t>(sign | 0x7C00u);
        return static_cast<std::uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
    }
    if (a >= 0x477FF000u) // 65520 and up round to infinity
        return static_cast<std::uint16_t>(sign | 0x7C00u);
    if (a < 0x38800000u) {
        // Below 2^-14: a subnormal half (units of 2^-24), or zero.
        if (a < 0x33000000u) // below 2^-25: rounds to zero (2^-25 itself ties to even zero)
            return sign;
        const std::uint32_t mantissa = (a & 0x7FFFFFu) | 0x800000u;
        const int shift = 126 - static_cast<int>(a >> 23); // 14 .. 24
        std::uint32_t q = mantissa >> shift;
        const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1);
        if (rest > half || (rest == half && (q & 1u)))
            ++q; // may carry into the smallest normal, whose encoding follows on
        return static_cast<std::uint16_t>(sign | q);
    }
    std::uint32_t h = (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3FFu);
    const std::uint32_t rest = a & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        ++h; // a carry into the exponent is right, up to 65504 (larger values were handled above)
    return static_cast<std::uint16_t>(sign | h);
}

float floatFromHalf(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
    const std::uint32_t mantissa = bits & 0x3FFu;
    if (exponent == 0) {
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24); // exact
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31)
        return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t bfloat16FromFloat(float value) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)
        return static_cast<std::uint16_t>((x >> 16) | 0x0040u); // NaN: keep it a (quiet) NaN
    const std::uint32_t rounded = x + 0x7FFFu + ((x >> 16) & 1u);
    return static_cast<std::uint16_t>(rounded >> 16);
}

float floatFromBfloat16(std::uint16_t bits) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

namespace {

/// One FP8 format, for the conversion from float.
struct Float8Format {
    int mantissaBits;
    int bias;
    std::uint32_t maxFinite; ///< the code of the largest finite value
    std::uint32_t beyond;    ///< float bits of the first power of two past the format's range
};

constexpr Float8Format kE4M3{3, 7, 0x7Eu, 0x44000000u};  // 512
constexpr Float8Format kE5M2{2, 15, 0x7Bu, 0x47800000u}; // 65536

std::uint8_t float8FromFloat(float value, const Float8Format& f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t sign = (x >> 24) & 0x80u;
    const std::uint32_t a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return 0x7Fu; // CUDA makes every NaN the canonical one (S.1111.111 in both), sign dropped
    if (a >= f.beyond)
        return static_cast<std::uint8_t>(sign | f.maxFinite); // infinity included
    const int m = f.mantissaBits;
    const int exponent = static_cast<int>(a >> 23);
    const int minNormal = 128 - f.bias; // float's biased exponent of the format's smallest normal
    std::uint32_t q = 0;
    if (exponent >= minNormal) {
        q = (static_cast<std::uint32_t>(exponent - 127 + f.bias) << m) | ((a >> (23 - m)) & ((1u << m) - 1u));
        const std::uint32_t rest = a & ((1u << (23 - m)) - 1u);
        const std::uint32_t half = 1u << (22 - m);
        if (rest > half || (rest == half && (q & 1u)))
            ++q; // a carry into the exponent is right
    } else {
        // A subnormal (units of 2^(1 - bias - m)), or zero.
        const int shift = minNormal - exponent + 23 - m;
        if (shift > 24) // below half the smallest subnormal (float subnormals included): zero
            return static_cast<std::uint8_t>(sign);
        const std::uint32_t mantissa = (a & 0x7FFFFFu) | 0x800000u;
        q = mantissa >> shift;
        const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1);
        if (rest > half || (rest == half && (q & 1u)))
            ++q; // may carry into the smallest normal, whose encoding follows on
    }
    // Rounding up past the largest finite value (into e4m3's NaN or e5m2's infinity) saturates.
    return static_cast<std::uint8_t>(sign | std::min(q, f.maxFinite));
}

} // namespace

std::uint8_t float8E4M3FromFloat(float value) {
    return float8FromFloat(value, kE4M3);
}

float floatFromFloat8E4M3(std::uint8_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x80u) << 24;
    const std::uint32_t exponent = (bits >> 3) & 0xFu;
    const std::uint32_t mantissa = bits & 0x7u;
    if (exponent == 15 && mantissa == 7)
        return std::bit_cast<float>(sign | 0x7FC00000u); // no infinities: S.1111.111 is NaN
    if (exponent == 0) {
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -9); // exact
        return sign ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | ((exponent + 120u) << 23) | (mantissa << 20));
}

std::uint8_t float8E5M2FromFloat(float value) {
    return float8FromFloat(value, kE5M2);
}

float floatFromFloat8E5M2(std::uint8_t bits) {
    // e5m2 is the upper byte of a binary16 (same exponent, two mantissa bits).
    return floatFromHalf(static_cast<std::uint16_t>(bits << 8));
}

std::string valueFits(ElementType type, double value) {
    const std::string name(elementTypeName(type));
    if (type == ElementType::Float8E4M3 || type == ElementType::Float8E5M2) {
        // The conversion saturates (as CUDA's __NV_SATFINITE does): a larger value would be
        // replaced without a word.
        const double largest = type == ElementType::Float8E4M3 ? 448 : 57344;
        if (std::fabs(value) > largest)
            return "out of the range of " + name + " (whose largest value is " + spec::exactNumber(largest) + ")";
        return {};
    }
    if (isFloatingPoint(type))
        return {};
    if (std::isnan(value))
        return "not a number (" + name + " is an integer type)";
    if (type == ElementType::Bool)
        return value == 0 || value == 1 ? std::string() : "not 0 or 1 (the type is bool)";
    if (std::trunc(value) != value)
        return "not a whole number (" + name + " is an integer type)";
    double lo = 0;
    double hi = 0;
    integerRange(type, lo, hi);
    const bool wide = type == ElementType::Int64 || type == ElementType::UInt64;
    if (value < lo || value > hi || (wide && value >= hi))
        return "out of the range of " + name;
    return {};
}

namespace {

struct TypeInfo {
    const char* name;
    ElementType element;
    int lanes;
};

// T1's argument types the worker can build (every T1 type but "custom"), plus bfloat16 and FP8.
constexpr TypeInfo kTypes[] = {
    {"bool", ElementType::Bool, 1},
    {"int8", ElementType::Int8, 1},
    {"uint8", ElementType::UInt8, 1},
    {"int16", ElementType::Int16, 1},
    {"uint16", ElementType::UInt16, 1},
    {"int32", ElementType::Int32, 1},
    {"uint32", ElementType::UInt32, 1},
    {"int64", ElementType::Int64, 1},
    {"uint64", ElementType::UInt64, 1},
    {"half", ElementType::Half, 1},
    {"half2", ElementType::Half, 2},
    {"half4", ElementType::Half, 4},
    {"half8", ElementType::Half, 8},
    {"half16", ElementType::Half, 16},
    {"bfloat16", ElementType::BFloat16, 1},
    {"float", ElementType::Float, 1},
    {"float2", ElementType::Float, 2},
    {"float4", ElementType::Float, 4},
    {"float8", ElementType::Float, 8},
    {"float16", ElementType::Float, 16},
    {"double", ElementType::Double, 1},
    {"double2", ElementType::Double, 2},
    {"double4", ElementType::Double, 4},
    {"double8", ElementType::Double, 8},
    {"double16", ElementType::Double, 16},
    {"float8_e4m3", ElementType::Float8E4M3, 1},
    {"float8_e5m2", ElementType::Float8E5M2, 1},
};

const TypeInfo* findType(std::string_view name) {
    for (const TypeInfo& t : kTypes) {
        if (name == t.name)
            return &t;
    }
    return nullptr;
}

template <typename T>
void store(std::array<unsigned char, 8>& bytes, T value) {
    static_assert(sizeof(T) <= 8);
    bytes.fill(0);
    std::memcpy(bytes.data(), &value, sizeof(T));
}

// 2^50 bytes is far beyond any device's memory: a buffer past it is a mistake in the file.
constexpr std::int64_t kMaxBufferBytes = std::int64_t{1} << 50;

} // namespace

std::string sizeOutOfRange(double count, std::string_view type) {
    // A whole number as the integer it is (2^60 as 1152921504606846976, not 1.15e+18).
    const std::string shown = std::trunc(count) == count && std::fabs(count) < 9.0e18
                                  ? std::to_string(static_cast<std::int64_t>(count))
                                  : spec::exactNumber(count);
    if (count < 0)
        return "Size must not be negative, got " + shown;
    const TypeInfo* info = findType(type);
    const std::size_t bytes = info ? elementSize(info->element) * static_cast<std::size_t>(info->lanes) : 1;
    const std::int64_t most = kMaxBufferBytes / static_cast<std::int64_t>(bytes);
    if (!(count <= static_cast<double>(most)))
        return "Size must be at most " + formatCount(static_cast<double>(most)) + " elements of " +
               std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes") +
               " (2^50 bytes, more than any device holds), got " + shown;
    return {};
}

std::string_view elementTypeName(ElementType type) {
    switch (type) {
    case ElementType::Bool:
        return "bool";
    case ElementType::Int8:
        return "int8";
    case ElementType::UInt8:
        return "uint8";
    case ElementType::Int16:
        return "int16";
    case ElementType::UInt16:
        return "uint16";
    case ElementType::Int32:
        return "int32";
    case ElementType::UInt32:
        return "uint32";
    case ElementType::Int64:
        return "int64";
    case ElementType::UInt64:
        return "uint64";
    case ElementType::Half:
        return "half";
    case ElementType::BFloat16:
        return "bfloat16";
    case ElementType::Float:
        return "float";
    case ElementType::Double:
        return "double";
    case ElementType::Float8E4M3:
        return "float8_e4m3";
    case ElementType::Float8E5M2:
        return "float8_e5m2";
    }
    return "?";
}

std::size_t elementSize(ElementType type) {
    switch (type) {
    case ElementType::Bool:
    case ElementType::Int8:
    case ElementType::UInt8:
    case ElementType::Float8E4M3:
    case ElementType::Float8E5M2:
        return 1;
    case ElementType::Int16:
    case ElementType::UInt16:
    case ElementType::Half:
    case ElementType::BFloat16:
        return 2;
    case ElementType::Int32:
    case ElementType::UInt32:
    case ElementType::Float:
        return 4;
    case ElementType::Int64:
    case ElementType::UInt64:
    case ElementType::Double:
        return 8;
    }
    return 1;
}

bool isFloatingPoint(ElementType type) {
    return type == ElementType::Half || type == ElementType::BFloat16 || type == ElementType::Float ||
           type == ElementType::Double || type == ElementType::Float8E4M3 || type == ElementType::Float8E5M2;
}

std::string ArgumentSpec::label() const {
    return name.empty() ? "argument " + std::to_string(index) : "argument '" + name + "'";
}

namespace {

/// The builder of the argument list: compiles and evaluates each argument's expressions for the
/// shape, failing with the field's JSON pointer.
class ArgumentReader {
public:
    ArgumentReader(const TuningProblem& problem, const expr::Scope& scope, const std::vector<expr::Value>& slots,
                   std::string shapeLabel)
        : m_problem(problem)
        , m_scope(scope)
        , m_slots(slots)
        , m_shapeLabel(std::move(shapeLabel)) {}

    ArgumentSpec read(std::size_t i) {
        const KernelArgument& a = m_problem.arguments[i];
        const std::string ptr = "/KernelSpecification/Arguments/" + std::to_string(i);
        ArgumentSpec s;
        s.index = i;
        s.name = a.name;
        s.typeName = a.type;
        const std::string who = s.label();

        const TypeInfo* type = findType(a.type);
        if (!type) {
            fail(ptr + "/Type", who + ": Type '" + a.type +
                                    "' is not supported (a custom type has no known layout to fill and compare; "
                                    "use bool, int8 to uint64, half, bfloat16, float8_e4m3, float8_e5m2, float, double "
                                    "or their vector forms)");
        }
        s.element = type->element;
        s.lanes = type->lanes;
        if (a.typeSize && *a.typeSize != static_cast<std::int64_t>(s.elementBytes()))
            fail(ptr + "/TypeSize", who + ": TypeSize " + std::to_string(*a.typeSize) + " does not match Type '" +
                                        a.type + "' (" + std::to_string(s.elementBytes()) + " bytes)");

        if (a.memoryType == "Vector")
            s.memory = MemoryKind::Vector;
        else if (a.memoryType == "Scalar")
            s.memory = MemoryKind::Scalar;
        else
            fail(ptr + "/MemoryType", who + ": MemoryType '" + a.memoryType +
                                          "' is not supported (the worker passes Scalar and Vector arguments)");

        if (a.accessType.empty() || a.accessType == "ReadWrite")
            s.access = Access::ReadWrite;
        else if (a.accessType == "ReadOnly")
            s.access = Access::ReadOnly;
        else if (a.accessType == "WriteOnly")
            s.access = Access::WriteOnly;
        else
            fail(ptr + "/AccessType", who + ": unknown AccessType '" + a.accessType + "'");

        if (a.tensorMap) {
            s.memory = MemoryKind::TensorMap;
            readTensorMap(a, ptr, s);
        } else if (s.isVector()) {
            readVector(a, ptr, s);
        } else {
            readScalar(a, ptr, s);
        }
        return s;
    }

    /// The checks of a tensor map against its buffer (read by then).
    void linkTensorMap(ArgumentSpec& s, const std::vector<ArgumentSpec>& all) const {
        const std::string ptr = "/KernelSpecification/Arguments/" + std::to_string(s.index) + "/TensorMap";
        const std::string who = s.label();
        const std::string& target = m_problem.arguments[s.index].tensorMap->tensor;
        const auto it = std::find_if(all.begin(), all.end(), [&](const ArgumentSpec& a) { return a.name == target; });
        if (it == all.end() || !it->isVector())
            fail(ptr + "/Tensor", who + ": '" + target + "' is not a Vector argument");
        s.tensorArgument = it->index;
        std::int64_t values = 1;
        for (std::int64_t d : s.tensorDims)
            values = values > (std::int64_t{1} << 50) / d ? (std::int64_t{1} << 50) : values * d;
        if (values > it->values())
            fail(ptr + "/Dims", who + ": the extents span " + std::to_string(values) + " values, and '" + target +
                                    "' holds " + std::to_string(it->values()) + atShape());
    }

private:
    [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
        throw InputError(m_problem.fileName, pointer, message);
    }

    std::string atShape() const { return m_shapeLabel.empty() ? std::string() : " (shape " + m_shapeLabel + ")"; }

    /// Compiles `source` and evaluates it for the shape; a parameter outside min()/max() is an error.
    expr::Value evaluate(const std::string& source, const std::string& pointer, const std::string& who,
                         const char* field) const {
        expr::Expression e;
        try {
            e = expr::Expression::compile(source, m_scope);
        } catch (const expr::ExprError& error) {
            fail(pointer, who + ": " + spec::describeExprErrorInline(error));
        }
        const int parameters = static_cast<int>(m_problem.parameters.size());
        for (int slot : e.usedSlots()) {
            if (slot < parameters) {
                const std::string& p = m_scope.nameOf(slot);
                fail(pointer, who + ": " + field + " '" + source + "' depends on the config (parameter '" + p +
                                  "'); it must be fixed for a shape (max(" + p + ") stands for the largest value of " +
                                  p + ")");
            }
        }
        expr::Value v;
        try {
            v = e.evaluate(m_slots.data());
        } catch (const expr::ExprError& error) {
            fail(pointer, who + ": " + field + ": " + spec::describeExprErrorInline(error) + atShape());
        }
        // Strings and lists point into the expression, which dies here: only numbers leave.
        if (!v.isNumber())
            fail(pointer, who + ": " + field + " '" + source + "' is " + expr::repr(v) + ", not a number");
        return v;
    }

    void readVector(const KernelArgument& a, const std::string& ptr, ArgumentSpec& s) const {
        const std::string who = s.label();
        if (a.size.empty())
            fail(ptr, who + ": a Vector argument needs a Size");
        const expr::Value size = evaluate(a.size, ptr + "/Size", who, "Size");
        std::int64_t count = 0;
        if (size.kind == expr::Kind::Int || size.kind == expr::Kind::Bool) {
            count = size.i;
        } else if (size.kind == expr::Kind::Float && std::isfinite(size.f) && std::trunc(size.f) == size.f &&
                   std::fabs(size.f) < 9.0e18) {
            count = static_cast<std::int64_t>(size.f);
        } else {
            fail(ptr + "/Size",
                 who + ": Size '" + a.size + "' is " + expr::repr(size) + ", not a whole number" + atShape());
        }
        if (count <= 0)
            fail(ptr + "/Size", who + ": Size '" + a.size + "' is " + std::to_string(count) +
                                    " (a buffer needs at least one element)" + atShape());
        if (count > kMaxBufferBytes / static_cast<std::int64_t>(s.elementBytes()))
            fail(ptr + "/Size", who + ": Size '" + a.size + "' is " + std::to_string(count) + " elements of " +
                                    std::to_string(s.elementBytes()) + " bytes, more than any device holds" +
                                    atShape());
        s.count = count;

        if (a.fillType.empty() || a.fillType == "Constant") {
            s.fill = FillKind::Constant;
            s.fillValue = a.fillValue.value_or(0.0);
            if (const std::string why = valueFits(s.element, s.fillValue); !why.empty())
                fail(ptr + "/FillValue", who + ": FillValue " + spec::exactNumber(s.fillValue) + " is " + why);
        } else if (a.fillType == "Random") {
            s.fill = FillKind::Random;
            s.randomSeed = a.randomSeed;
        } else if (a.fillType == "BinaryRaw") {
            s.fill = FillKind::BinaryRaw;
            if (a.dataSource.empty())
                fail(ptr, who + ": FillType BinaryRaw needs a DataSource (a file of " + std::to_string(s.bytes()) +
                              " bytes, relative to the problem's folder)");
            s.dataSource = a.dataSource;
        } else {
            fail(ptr + "/FillType",
                 who + ": FillType '" + a.fillType + "' is not supported (use Constant, Random or BinaryRaw)");
        }
    }

    /// A whole positive number from `source`, for a tensor map's extent or box.
    std::int64_t positive(const std::string& source, const std::string& pointer, const std::string& who,
                          const char* field) const {
        const expr::Value v = evaluate(source, pointer, who, field);
        const bool whole = v.kind == expr::Kind::Int ||
                           (v.kind == expr::Kind::Float && std::trunc(v.f) == v.f && std::fabs(v.f) < 9.0e18);
        const std::int64_t n = v.kind == expr::Kind::Float ? static_cast<std::int64_t>(v.f) : v.i;
        if (!whole || n <= 0)
            fail(pointer, who + ": " + field + " '" + source + "' is " + expr::repr(v) +
                              ", not a positive whole number" + atShape());
        return n;
    }

    void readTensorMap(const KernelArgument& a, const std::string& ptr, ArgumentSpec& s) const {
        const std::string who = s.label();
        const TensorMapSpec& t = *a.tensorMap;
        if (s.lanes != 1)
            fail(ptr + "/Type", who + ": a tensor map of vector type '" + a.type +
                                    "' is not supported (map the buffer as its scalar type)");
        if (s.element == ElementType::Bool)
            fail(ptr + "/Type", who + ": a tensor map of bool is not supported");
        const std::int64_t bytes = static_cast<std::int64_t>(s.elementBytes());
        for (std::size_t i = 0; i < t.dims.size(); ++i) {
            const std::string at = ptr + "/TensorMap/Dims/" + std::to_string(i);
            s.tensorDims.push_back(positive(t.dims[i], at, who, "an extent"));
            if (s.tensorDims.back() > (std::int64_t{1} << 32))
                fail(at, who + ": an extent is at most 2^32 values, got " + std::to_string(s.tensorDims.back()) +
                             atShape());
        }
        for (std::size_t i = 0; i < t.box.size(); ++i) {
            const std::string at = ptr + "/TensorMap/Box/" + std::to_string(i);
            s.tensorBox.push_back(positive(t.box[i], at, who, "a box size"));
            if (s.tensorBox.back() > 256)
                fail(at, who + ": a box is at most 256 values a dimension, got " + std::to_string(s.tensorBox.back()));
            if (i < s.tensorDims.size() && s.tensorBox.back() > s.tensorDims[i])
                fail(at, who + ": the box (" + std::to_string(s.tensorBox.back()) + ") is larger than the extent (" +
                             std::to_string(s.tensorDims[i]) + ")" + atShape());
        }
        if (s.tensorDims[0] * bytes % 16 != 0 && s.tensorDims.size() > 1)
            fail(ptr + "/TensorMap/Dims/0", who + ": a row (the innermost extent, " + std::to_string(s.tensorDims[0]) +
                                                " values of " + std::to_string(bytes) +
                                                " bytes) must be a whole number of 16 bytes" + atShape());
        if (s.tensorBox[0] * bytes % 16 != 0)
            fail(ptr + "/TensorMap/Box/0", who + ": the box's row (" + std::to_string(s.tensorBox[0]) + " values of " +
                                               std::to_string(bytes) + " bytes) must be a whole number of 16 bytes");
        s.tensorSwizzle = t.swizzle;
        if (t.swizzle != 0 && s.tensorBox[0] * bytes > t.swizzle)
            fail(ptr + "/TensorMap/Box/0", who + ": the box's row is " + std::to_string(s.tensorBox[0] * bytes) +
                                               " bytes, more than the " + std::to_string(t.swizzle) +
                                               "-byte swizzle span");
    }

    void readScalar(const KernelArgument& a, const std::string& ptr, ArgumentSpec& s) const {
        const std::string who = s.label();
        if (s.lanes != 1)
            fail(ptr + "/Type", who + ": a Scalar argument of vector type '" + a.type + "' is not supported");
        if (!a.value.empty()) {
            const expr::Value v = evaluate(a.value, ptr + "/Value", who, "Value");
            if (v.kind == expr::Kind::Int || v.kind == expr::Kind::Bool) {
                s.scalarValue = static_cast<double>(v.i);
                if (!isFloatingPoint(s.element)) {
                    if (const std::string why = integerFits(s.element, v.i); !why.empty())
                        fail(ptr + "/Value",
                             who + ": Value '" + a.value + "' is " + std::to_string(v.i) + ", " + why + atShape());
                    encodeInteger(s, v.i);
                    return;
                }
            } else {
                s.scalarValue = v.f; // evaluate() lets numbers only through
            }
            if (const std::string why = valueFits(s.element, s.scalarValue); !why.empty())
                fail(ptr + "/Value",
                     who + ": Value '" + a.value + "' is " + spec::exactNumber(s.scalarValue) + ", " + why + atShape());
        } else if (a.fillValue) {
            s.scalarValue = *a.fillValue;
            if (const std::string why = valueFits(s.element, s.scalarValue); !why.empty())
                fail(ptr + "/FillValue", who + ": FillValue " + spec::exactNumber(s.scalarValue) + " is " + why);
        } else {
            fail(ptr, who + ": a Scalar argument needs a value: \"Value\" (an expression such as \"M\") or FillValue");
        }
        encodeNumber(s);
    }

    static std::string integerFits(ElementType type, std::int64_t v) {
        if (type == ElementType::Int64)
            return {};
        if (type == ElementType::UInt64)
            return v < 0 ? "below the range of uint64" : std::string();
        // Every other integer type's values are exact in a double.
        return valueFits(type, static_cast<double>(v));
    }

    static void encodeInteger(ArgumentSpec& s, std::int64_t v) {
        switch (s.element) {
        case ElementType::Bool:
            store(s.scalarBytes, static_cast<std::uint8_t>(v != 0));
            break;
        case ElementType::Int8:
            store(s.scalarBytes, static_cast<std::int8_t>(v));
            break;
        case ElementType::UInt8:
            store(s.scalarBytes, static_cast<std::uint8_t>(v));
            break;
        case ElementType::Int16:
            store(s.scalarBytes, static_cast<std::int16_t>(v));
            break;
        case ElementType::UInt16:
            store(s.scalarBytes, static_cast<std::uint16_t>(v));
            break;
        case ElementType::Int32:
            store(s.scalarBytes, static_cast<std::int32_t>(v));
            break;
        case ElementType::UInt32:
            store(s.scalarBytes, static_cast<std::uint32_t>(v));
            break;
        case ElementType::Int64:
            store(s.scalarBytes, v);
            break;
        case ElementType::UInt64:
            store(s.scalarBytes, static_cast<std::uint64_t>(v));
            break;
        default:
            break;
        }
    }

    static void encodeNumber(ArgumentSpec& s) {
        const double v = s.scalarValue;
        switch (s.element) {
        case ElementType::Half:
            store(s.scalarBytes, halfFromFloat(static_cast<float>(v)));
            break;
        case ElementType::BFloat16:
            store(s.scalarBytes, bfloat16FromFloat(static_cast<float>(v)));
            break;
        case ElementType::Float8E4M3:
            store(s.scalarBytes, float8E4M3FromFloat(static_cast<float>(v)));
            break;
        case ElementType::Float8E5M2:
            store(s.scalarBytes, float8E5M2FromFloat(static_cast<float>(v)));
            break;
        case ElementType::Float:
            store(s.scalarBytes, static_cast<float>(v));
            break;
        case ElementType::Double:
            store(s.scalarBytes, v);
            break;
        case ElementType::UInt64:
            // Beyond 2^63 a double cannot go through int64.
            store(s.scalarBytes, static_cast<std::uint64_t>(v));
            break;
        default:
            encodeInteger(s, static_cast<std::int64_t>(v));
            break;
        }
    }

    const TuningProblem& m_problem;
    const expr::Scope& m_scope;
    const std::vector<expr::Value>& m_slots;
    std::string m_shapeLabel;
};

} // namespace

LaunchPlanner::LaunchPlanner(const TuningProblem& problem, std::size_t shapeIndex)
    : m_problem(problem)
    , m_shapeIndex(shapeIndex)
    , m_geometry(problem, shapeIndex) {
    const expr::Scope scope = problem.scope();
    expr::ValueList storage; // ProblemSize of the shape, which the slots point at
    const std::vector<expr::Value> shapeSlots = problem.shapeSlots(shapeIndex, storage);
    const Shape* shape = shapeIndex < problem.shapes.size() ? &problem.shapes[shapeIndex] : nullptr;
    ArgumentReader reader(problem, scope, shapeSlots, shape ? shape->label() : std::string());
    for (std::size_t i = 0; i < problem.arguments.size(); ++i)
        m_arguments.push_back(reader.read(i));
    for (ArgumentSpec& s : m_arguments) {
        if (s.isTensorMap())
            reader.linkTensorMap(s, m_arguments);
    }
    const bool flagged = std::any_of(problem.arguments.begin(), problem.arguments.end(),
                                     [](const KernelArgument& a) { return a.output.has_value(); });
    for (std::size_t i = 0; i < m_arguments.size(); ++i) {
        ArgumentSpec& s = m_arguments[i];
        s.constantMemory = problem.arguments[i].memType == "Constant";
        s.verify = s.isVector() && (flagged ? problem.arguments[i].output.value_or(false) : s.isOutput());
        s.partial = s.isVector() && std::find(problem.partialOutputs.begin(), problem.partialOutputs.end(),
                                              problem.arguments[i].name) != problem.partialOutputs.end();
    }
}

LaunchPlanner::~LaunchPlanner() = default;

GridRule LaunchPlanner::gridRule() const {
    return m_geometry.gridRule();
}

const std::vector<ArgumentSpec>& LaunchPlanner::arguments() const {
    return m_arguments;
}

std::int64_t LaunchPlanner::bufferBytes() const {
    std::int64_t total = 0;
    for (const ArgumentSpec& a : m_arguments) {
        if (a.isVector())
            total += a.bytes();
    }
    return total;
}

} // namespace tilescope
