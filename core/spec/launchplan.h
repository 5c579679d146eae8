#pragma once

// How a tuning problem's kernel is launched for one shape: its argument list (what each buffer
// holds and how big it is, each scalar's value) and, per config, the geometry (GeometryPlanner,
// spec/launchgeometry.h), all from the T1 expressions. No CUDA here: the worker uses it to build
// buffers and launches, and it is tested without a GPU.

#include "model/config.h"
#include "spec/launchgeometry.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

class TuningProblem;

/// The type of one value in a buffer (for T1's vector types such as float4, of one lane).
enum class ElementType : std::uint8_t {
    Bool,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Half,
    BFloat16,
    Float,
    Double,
    Float8E4M3, ///< OCP FP8 as CUDA's __nv_fp8_e4m3: bias 7, no infinities, NaN S.1111.111, max 448
    Float8E5M2, ///< OCP FP8 as CUDA's __nv_fp8_e5m2: bias 15, IEEE-like (inf, NaN), max 57344
};

/// T1's name of the type: "float", "int32", "bfloat16", ...
std::string_view elementTypeName(ElementType type);
/// Bytes of one value (bool: 1).
std::size_t elementSize(ElementType type);
/// Half, BFloat16, Float, Double and the two FP8 types.
bool isFloatingPoint(ElementType type);
// IEEE binary16 ("half") and bfloat16 from and to float, bit-exact: rounding to nearest, ties to
// even, overflow to infinity, subnormals kept; NaN stays a (quiet) NaN.
std::uint16_t halfFromFloat(float value);
float floatFromHalf(std::uint16_t bits);
std::uint16_t bfloat16FromFloat(float value);
float floatFromBfloat16(std::uint16_t bits);
// FP8 from and to float, bit-exact with CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...) and
// its fp8 -> float conversions: rounding to nearest, ties to even, subnormals kept; a value that
// would round past the largest finite one (infinity included) saturates to it (e4m3: 448, e5m2:
// 57344, sign kept); NaN becomes the canonical NaN 0x7F. Decoding is exact (every FP8 value is a
// float); e5m2's infinities stay infinities.
std::uint8_t float8E4M3FromFloat(float value);
float floatFromFloat8E4M3(std::uint8_t bits);
std::uint8_t float8E5M2FromFloat(float value);
float floatFromFloat8E5M2(std::uint8_t bits);

/// "" when `value` can be stored in `type` (any finite or infinite number in a floating type but
/// FP8, whose conversion saturates: there a magnitude up to the largest finite value, or NaN; a
/// whole number in range in an integer type; 0 or 1 in bool); otherwise why not, as a phrase
/// ("out of the range of int8", "not a whole number (int32 is an integer type)").
std::string valueFits(ElementType type, double value);

/// The range of an argument's Size, one rule for a number in the file and an expression's value:
/// "" when `count` elements of T1 type `type` can be a buffer, else why not ("Size must not be
/// negative, got -1"; past 2^50 bytes, far beyond any device's memory, a mistake in the file).
/// A type the worker cannot build counts one byte an element.
std::string sizeOutOfRange(double count, std::string_view type);

/// Scalar: a value; Vector: a buffer; TensorMap: a TMA tensor map of a Vector argument's buffer
/// (a Tilescope addition: a Scalar with "TensorMap"), 128 bytes the worker builds.
enum class MemoryKind : std::uint8_t { Scalar, Vector, TensorMap };
enum class Access : std::uint8_t { ReadOnly, WriteOnly, ReadWrite };
/// How a buffer starts: every value FillValue; uniform random values (see argumentdata.h); the
/// bytes of a raw binary file.
enum class FillKind : std::uint8_t { Constant, Random, BinaryRaw };

/// One kernel argument, in the problem's order.
struct ArgumentSpec {
    std::size_t index = 0; ///< in the problem's Arguments
    std::string name;      ///< may be empty (T1 Name is optional)
    std::string typeName;  ///< T1 Type as written: "float", "half2", ...
    ElementType element = ElementType::Float;
    int lanes = 1; ///< values per T1 element: 4 for float4, else 1
    MemoryKind memory = MemoryKind::Vector;
    Access access = Access::ReadWrite; ///< absent in the file = ReadWrite

    // Vector arguments
    std::int64_t count = 0; ///< T1 elements (the Size expression's value for the shape)
    FillKind fill = FillKind::Constant;
    double fillValue = 0;                   ///< Constant (absent FillValue = 0)
    std::optional<std::int64_t> randomSeed; ///< Random: the file's RandomSeed (absent: derived from the run's seed)
    std::string dataSource;                 ///< BinaryRaw: as written, relative to the problem's folder
    /// Kernel Tuner's MemType Constant: the contents also fill the module's __constant__
    /// variable named like the argument (the buffer is still passed).
    bool constantMemory = false;
    /// Compared with the reference: the buffers the file flags as Output where it flags any,
    /// else every buffer the kernel may write.
    bool verify = false;
    /// Written only in part by design (Tilescope.Partial): elements the reference config leaves
    /// unwritten are no error.
    bool partial = false;

    // Scalar arguments
    double scalarValue = 0; ///< the value (Tilescope "Value" expression, else FillValue), for messages
    /// The value as the kernel receives it: elementSize(element) bytes in host byte order, the
    /// rest zero. Eight-byte aligned so that its address can go straight into a launch.
    alignas(8) std::array<unsigned char, 8> scalarBytes{};

    // TensorMap arguments: the buffer argument mapped, its extents and the box, innermost first.
    std::size_t tensorArgument = 0;
    std::vector<std::int64_t> tensorDims;
    std::vector<std::int64_t> tensorBox;
    int tensorSwizzle = 0; ///< bytes: 0, 32, 64 or 128

    std::size_t elementBytes() const { return elementSize(element) * static_cast<std::size_t>(lanes); }
    std::int64_t values() const { return count * lanes; } ///< values of `element` in the buffer
    std::int64_t bytes() const { return count * static_cast<std::int64_t>(elementBytes()); }
    bool isVector() const { return memory == MemoryKind::Vector; }
    bool isTensorMap() const { return memory == MemoryKind::TensorMap; }
    /// A buffer the kernel writes (WriteOnly or ReadWrite).
    bool isOutput() const { return isVector() && access != Access::ReadOnly; }
    /// "argument 'C'", or "argument 3" when it has no name: for messages.
    std::string label() const;
};

class LaunchPlanner {
public:
    /// Compiles the problem's geometry expressions and builds the argument list for shape
    /// `shapeIndex`; `problem` must outlive the planner. Throws InputError (naming the field by
    /// its JSON pointer) for a shape index out of range, an expression that does not compile or
    /// fails for the shape, and arguments the worker cannot build: a MemoryType other than
    /// Scalar and Vector, a custom type, a FillType other than Constant, Random and BinaryRaw, a
    /// Size or Value that depends on the config (min(P)/max(P) of a parameter P are fine: they
    /// stand for its value list), a value that does not fit the argument's type, a tensor map
    /// that the driver would refuse (its rules, checked here: a box of 1 to 256 values a
    /// dimension, rows of whole 16 bytes, a swizzle span that holds the box's row, extents that
    /// fit the buffer).
    LaunchPlanner(const TuningProblem& problem, std::size_t shapeIndex);
    ~LaunchPlanner();
    LaunchPlanner(const LaunchPlanner&) = delete;
    LaunchPlanner& operator=(const LaunchPlanner&) = delete;

    const TuningProblem& problem() const { return m_problem; }
    std::size_t shapeIndex() const { return m_shapeIndex; }
    GridRule gridRule() const;

    /// The kernel's arguments for the shape, in order.
    const std::vector<ArgumentSpec>& arguments() const;
    /// Bytes of all Vector arguments together.
    std::int64_t bufferBytes() const;

    /// The launch of `config`: GeometryPlanner::plan.
    LaunchGeometry plan(const Config& config) const { return m_geometry.plan(config); }

private:
    const TuningProblem& m_problem;
    std::size_t m_shapeIndex;
    GeometryPlanner m_geometry;
    std::vector<ArgumentSpec> m_arguments;
};

} // namespace tilescope
