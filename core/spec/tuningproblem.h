#pragma once

// A tuning problem: T1 (the FAIR autotuning input format, schema
// kernel_tuner/schema/T1/1.0.0/input-schema.json) plus Tilescope's additions under a
// top-level "Tilescope" object. Read -> write -> read gives an equal problem; fields this
// version does not know are kept and written back.

#include "base/error.h"
#include "expr/expr.h"
#include "model/config.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

/// Where in a problem file a piece of text came from, for error messages.
struct FieldRef {
    std::string file;    ///< the problem file's path as the user gave it ("" when parsed from text)
    std::string pointer; ///< JSON pointer, e.g. "/ConfigurationSpace/Conditions/2/Expression"
};

struct TuningParameter {
    std::string name;
    std::string type;                ///< T1 Type: int, uint, float, bool, string
    std::string valuesText;          ///< T1 Values as written: "[16, 32, 64]" or "range(1, 9)"
    bool valuesAsArray = false;      ///< the file gave Values as a JSON array (valuesText is its JSON)
    std::vector<expr::Value> values; ///< parsed from valuesText; strings point into `strings`
    std::shared_ptr<const std::vector<std::unique_ptr<std::string>>> strings;

    bool operator==(const TuningParameter& o) const;
};

struct Condition {
    std::vector<std::string> parameters; ///< T1 Parameters (as written; the expression is what counts)
    std::string expression;

    bool operator==(const Condition&) const = default;
};

/// One problem shape: named integers (M, N, K, ...) usable in every expression of the problem.
struct Shape {
    std::vector<std::pair<std::string, std::int64_t>> dims; ///< in file order

    std::string label() const; ///< "M=4096 N=4096 K=4096"
    bool operator==(const Shape&) const = default;
};

struct ThreeD {
    std::string x, y, z; ///< expressions; empty = absent (y and z default to 1)
    bool operator==(const ThreeD&) const = default;
};

/// Tilescope addition on a Scalar argument: the argument is a TMA tensor map (CUtensorMap, 128
/// bytes passed by value, for cp.async.bulk.tensor) of another argument's buffer, viewed as a
/// dense row-major tensor, built by the worker per shape.
struct TensorMapSpec {
    std::string tensor;            ///< the Name of the Vector argument it maps
    std::vector<std::string> dims; ///< extents, innermost (contiguous) first: expressions of the shape
    std::vector<std::string> box;  ///< the box one copy moves, innermost first: expressions of the shape
    int swizzle = 0;               ///< 0 (none), 32, 64 or 128 bytes

    bool operator==(const TensorMapSpec&) const = default;
};

struct KernelArgument {
    std::string name;
    std::string type;       ///< T1 Type: float, double, half, int32, ..., custom
    std::string memoryType; ///< Scalar, Vector, Local, Symbol
    std::string accessType; ///< ReadOnly, WriteOnly, ReadWrite, or ""
    std::string size;       ///< an expression ("M*K"); an integer in the file is kept as its digits
    bool sizeIsNumber = false;
    std::string fillType; ///< Constant, Random, Generator, Script, BinaryRaw, BinaryHDF, or ""
    std::optional<double> fillValue;
    std::string dataSource;
    std::optional<std::int64_t> randomSeed;
    std::optional<std::int64_t> typeSize;
    std::string value; ///< Tilescope addition for Scalar arguments: an expression ("M"), "" = use FillValue
    /// Kernel Tuner's "MemType": "Constant": the buffer's contents also go to the module's
    /// __constant__ variable of the argument's name. "" = absent.
    std::string memType;
    /// Kernel Tuner's "Output" flag: when any argument has one, the flagged buffers are the ones
    /// verified. nullopt = absent.
    std::optional<bool> output;
    /// Tilescope's "TensorMap": this Scalar argument is a tensor map of a buffer. nullopt = absent.
    std::optional<TensorMapSpec> tensorMap;

    bool operator==(const KernelArgument&) const = default;
};

struct ReferenceArgument {
    std::string name;
    std::string targetName;
    std::string fillType;
    std::optional<double> fillValue;
    std::string dataSource;
    std::optional<std::int64_t> randomSeed;
    std::string validationMethod; ///< AbsoluteDifference, SideBySideComparison, SideBySideRelativeComparison
    std::optional<double> validationThreshold;

    bool operator==(const ReferenceArgument&) const = default;
};

/// T1 KernelSpecification.Device: which device to tune on (Kernel Tuner uses Name).
struct DeviceSpec {
    std::optional<std::int64_t> platformId;
    std::optional<std::int64_t> deviceId;
    std::string name; ///< "" = absent
    bool operator==(const DeviceSpec&) const = default;
};

struct BudgetEntry {
    std::string type; ///< TuningDuration (seconds), ConfigurationCount, ConfigurationFraction
    double value = 0;
    bool operator==(const BudgetEntry&) const = default;
};

/// What "better" means. Without one, lower time is better. Higher objectives are better.
struct Objective {
    std::string name;  ///< e.g. "TFLOP/s" or "GB/s"
    std::string count; ///< an expression of the shape and parameters: work per launch, e.g. "2*M*N*K"
    double scale = 1;  ///< the objective is count / seconds / scale (1e12 for TFLOP/s)
    /// What the count is divided by (Tilescope.Objective.Per): "second" (throughput, the
    /// default), "joule" (work per joule: count / J per launch / scale, e.g. GFLOP/J) or
    /// "joule-second" (count / (J x s) / scale: the inverse of the energy-delay product). The
    /// last two need the energy of each launch (`--metrics energy`, NVML).
    std::string per = "second";
    bool needsEnergy() const { return per != "second"; }
    bool operator==(const Objective&) const = default;
};

/// Tilescope.Roofline: the work of one launch, for the roofline half of the regime diagnostic
/// (see analysis/regime.h). Each a number expression of the shape and parameters; "" = not given.
struct RooflineSpec {
    std::string bytes;   ///< bytes the kernel must move to and from memory, e.g. "2 * (M*K + N*K + M*N)"
    std::string flops;   ///< floating-point operations, e.g. "2 * M * N * K"
    std::string compute; ///< the arithmetic the peak is of: "float", "tf32", "half", "bfloat16", "float8", "int8"
    bool operator==(const RooflineSpec&) const = default;
};

class TuningProblem {
public:
    /// Reads a problem file. Throws InputError naming the file and the JSON pointer of the bad
    /// field, or the line and column of bad JSON. Every expression is compiled (and so checked)
    /// here. A missing kernel file is an error too.
    static TuningProblem load(const std::filesystem::path& path);
    /// Parses problem text; `fileName` is used in messages, `baseDir` to resolve KernelFile.
    /// An empty `baseDir` skips the kernel-file check (for problems made in memory or in tests).
    static TuningProblem parse(const std::string& text, const std::string& fileName,
                               const std::filesystem::path& baseDir);
    /// Writes T1 JSON (2-space indent, T1 field order, "Tilescope" last).
    std::string toJson() const;
    /// SHA-256 (hex) of what decides a config's result: the problem without its shapes, budget,
    /// search, objective, roofline, metrics, silenced warnings and config list. A tuned config goes stale when
    /// it changes; adding a shape or a metric leaves the configs tuned so far as they were.
    std::string specHash() const;
    /// SHA-256 (hex) of the kernel source file's bytes ("" when it cannot be read): what a
    /// session records and `check` compares.
    std::string sourceHash() const;
    void save(const std::filesystem::path& path) const;

    // T1 sections
    std::map<std::string, std::string> general; ///< General: FormatVersion, TimeUnit, ... (values as JSON text)
    std::vector<TuningParameter> parameters;
    std::vector<Condition> conditions;
    std::string language = "CUDA"; ///< as written; see isCuda() and isTriton()
    std::string kernelName;
    std::string kernelFile; ///< as written (relative to the problem file)
    std::vector<std::string> compilerOptions;
    ThreeD globalSize, localSize;
    std::string globalSizeType; ///< T1 GlobalSizeType: "CUDA" (grid in blocks), "OpenCL" (threads), "" = absent
    std::vector<std::string> gridDivX, gridDivY, gridDivZ; ///< expressions; the grid is ceil(ProblemSize/product)
    std::vector<std::string> problemSize;                  ///< expressions, e.g. ["N", "M"] or ["4096"]
    std::string sharedMemory;                              ///< dynamic shared memory in bytes, an expression ("" = 0)
    std::vector<KernelArgument> arguments;
    std::vector<ReferenceArgument> referenceArguments;
    std::optional<DeviceSpec> device; ///< KernelSpecification.Device (absent = nullopt)
    std::optional<bool> profiling;    ///< KernelSpecification.Profiling
    std::string simulationInput;      ///< KernelSpecification.SimulationInput, as written ("" = absent)
    std::string searchName;           ///< Search.Name ("" = absent)
    struct SearchAttribute {
        std::string name;
        std::string value; ///< the string, or the JSON text of a number or boolean (T1 says string; files vary)
        bool valueIsJson = false;
        bool operator==(const SearchAttribute&) const = default;
    };
    std::vector<SearchAttribute> searchAttributes;
    std::vector<BudgetEntry> budget;

    // Tilescope extension
    std::vector<Shape> shapes; ///< at least one when loaded (an empty shape if none given)
    /// Tilescope.Shapes as written (compact JSON) when an entry generates shapes (a dim given as
    /// a list or a Values-style string: the product of the lists); written back as it was. ""
    /// when every entry is one shape.
    std::string shapesSource;
    std::optional<Objective> objective;
    std::optional<RooflineSpec> roofline;
    std::vector<std::string> metrics; ///< CUPTI metric names or "default"
    /// Tilescope.Objectives: what a multi-objective search trades off, in order ("time",
    /// "energy", "edp"); the first ranks the results (as tune --objective), all of them steer the
    /// nsga2 strategy and the front the session reports. Empty: the one objective.
    std::vector<std::string> objectives;
    /// Tilescope.Silence: launch warnings the author has seen and accepts, by name
    /// ("launch-coverage", "global-size", "launch-limits", "varying-size", "buffer-edge"); see analysis/launchcheck.h.
    std::vector<std::string> silencedWarnings;
    /// Tilescope.Configs: an explicit list of configs (each the index of its value per parameter,
    /// in TuningParameters order, as read from the values written); the space is the listed
    /// configs that also pass the Conditions. nullopt = absent (the space is the Conditions').
    /// Written by `tilescope-cli kt` for restrictions that only Python can evaluate.
    std::optional<std::vector<Config>> configList;
    /// Tilescope.Partial: Vector arguments (by Name) that the kernel writes only in part by design
    /// (a per-block result in a buffer sized for the most blocks). Their unwritten elements are
    /// no error in the reference config; a config must still write every element the reference
    /// config writes. Empty: every output is to be written whole.
    std::vector<std::string> partialOutputs;
    /// Tilescope.VerifyWithin: parameters (by name) whose values change what the kernel computes
    /// (time steps per launch, a partial result per block): each config is compared with the first
    /// config of its own group (the same values of these parameters), not with one config for all.
    /// Empty: one reference for the session.
    std::vector<std::string> verifyWithin;
    /// Tilescope.Compiler: what compiles a CUDA kernel: "nvrtc" (NVRTC in the process, the
    /// default) or "nvcc" (the toolkit's nvcc, for code NVRTC cannot compile, such as CUTLASS
    /// with its host-side templates). "" = absent (NVRTC).
    std::string compiler;
    /// The problem asks for nvcc (Tilescope.Compiler "nvcc").
    bool usesNvcc() const { return compiler == "nvcc"; }

    /// Fields this version does not know, per section, kept verbatim (JSON text) for writing back.
    /// The key is the JSON pointer of the object that held them ("" = the top level,
    /// "/KernelSpecification/Arguments/2", ...); the value is a compact JSON object of those
    /// members in file order. They are written back after that object's known fields.
    /// (General keeps all its members in `general`, known or not.)
    std::map<std::string, std::string> unknownFields;

    /// What stops the kernel from being compiled or launched, found when the problem was read: a
    /// kernel file that is not there, a language other than CUDA and Triton, a Triton kernel that
    /// does not fit the problem (checkTritonKernel), a launch expression (GlobalSize,
    /// LocalSize, GridDiv, SharedMemory, an argument's Size or Value) that does not compile.
    /// Counting, enumerating, sampling and replaying need none of these, so they load anyway.
    std::vector<InputError> launchBlockers;
    /// Throws the first launch blocker, saying what works without a kernel (space, replaying a
    /// recording, the lab). Called before any compile or launch.
    void requireLaunchable() const;
    /// Kernel Tuner's names for the thread block's size, with its defaults (block_size_x 256,
    /// block_size_y 1, block_size_z 1), for each of the three that is not a parameter or a shape
    /// name. Expressions see them as constants, and a kernel that uses one gets it as a define.
    std::vector<std::pair<std::string, std::int64_t>> implicitBlockSizes() const;
    /// The language is CUDA (in any case, as Kernel Tuner compares it).
    bool isCuda() const;
    /// The language is Triton (in any case): KernelFile is a Python file, KernelName a
    /// @triton.jit function of it (spec/tritonscan.h).
    bool isTriton() const;
    /// The thread block's expressions: LocalSize, or where the file gives none Kernel Tuner's
    /// block_size_x, block_size_y, block_size_z (the parameters of those names, or 256, 1, 1);
    /// for a Triton kernel without LocalSize, num_warps * 32 threads (num_warps the tuning
    /// parameter, else Triton's default of 4 warps).
    ThreeD blockExpressions() const;

    // Derived
    std::filesystem::path problemPath;        ///< the file it was loaded from ("" if parsed)
    std::filesystem::path baseDir;            ///< the folder KernelFile is relative to (load: the file's folder)
    std::filesystem::path kernelPath() const; ///< KernelFile resolved against the problem's folder
    std::string fileName;                     ///< as given to load/parse, for messages

    /// The names an expression of this problem can use, with fixed slots: the parameters first
    /// (slot i = parameters[i], each with its value list), then the shape's names, then
    /// ProblemSize (a list). `values` below fills them. implicitBlockSizes() are constants.
    expr::Scope scope() const;
    /// Slot values for shape `shapeIndex`: a vector of scope().slotCount() values whose
    /// parameter slots are 0 (for the caller to set) and whose other slots hold the shape's
    /// names and ProblemSize. `storage` keeps the ProblemSize list alive. Throws InputError if
    /// a ProblemSize expression fails for this shape.
    std::vector<expr::Value> shapeSlots(std::size_t shapeIndex, expr::ValueList& storage) const;
    int parameterIndex(std::string_view name) const; ///< -1 if absent

    bool operator==(const TuningProblem& o) const; ///< compares content, not paths
};

} // namespace tilescope
